"""The condition setters pass conditions built once (jobset/controller/conditions.py, startup_policy.py): each
sets exactly what ``set_condition`` of a freshly built ``ConditionOpts`` (the form before, spelled out here)
sets, on any conditions, with the same events."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import (
    EVENT_TYPE_NORMAL,
    ConditionOpts,
    StatusUpdate,
    make_completed_condition_opts,
    make_resumed_condition_opts,
    make_suspended_condition_opts,
    set_condition,
    set_jobset_resumed_condition,
    set_restarting_condition_false,
)
from jobset.controller.startup_policy import (
    set_in_order_startup_policy_completed_condition,
    set_in_order_startup_policy_in_progress_condition,
)

Setter = Callable[[Obj, StatusUpdate], None]

CASES: list[tuple[str, Setter, ConditionOpts]] = [
    ("in-progress", set_in_order_startup_policy_in_progress_condition, ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_STARTUP_POLICY_IN_PROGRESS, "True",
        api.IN_ORDER_STARTUP_POLICY_IN_PROGRESS_REASON, api.IN_ORDER_STARTUP_POLICY_IN_PROGRESS_MESSAGE)),
    ("startup-completed", set_in_order_startup_policy_completed_condition, ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_STARTUP_POLICY_COMPLETED, "True",
        api.IN_ORDER_STARTUP_POLICY_COMPLETED_REASON, api.IN_ORDER_STARTUP_POLICY_COMPLETED_MESSAGE)),
    ("resumed", set_jobset_resumed_condition, ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_SUSPENDED, "False", api.JOBSET_RESUMED_REASON,
        api.JOBSET_RESUMED_MESSAGE)),
    ("completed", lambda js, opts: set_condition(js, make_completed_condition_opts(), opts), ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_COMPLETED, "True", api.ALL_JOBS_COMPLETED_REASON,
        api.ALL_JOBS_COMPLETED_MESSAGE)),
    ("suspended", lambda js, opts: set_condition(js, make_suspended_condition_opts(), opts), ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_SUSPENDED, "True", api.JOBSET_SUSPENDED_REASON,
        api.JOBSET_SUSPENDED_MESSAGE)),
    ("resumed-opts", lambda js, opts: set_condition(js, make_resumed_condition_opts(), opts), ConditionOpts(
        EVENT_TYPE_NORMAL, api.JOBSET_SUSPENDED, "False", api.JOBSET_RESUMED_REASON,
        api.JOBSET_RESUMED_MESSAGE)),
    ("restarting-ready", lambda js, opts: set_restarting_condition_false(
        js, api.RESTARTING_JOBSET_REASON_JOBS_READY, api.RESTARTING_JOBSET_REASON_JOBS_READY_MESSAGE, opts),
     ConditionOpts(EVENT_TYPE_NORMAL, api.JOBSET_RESTARTING, "False", api.RESTARTING_JOBSET_REASON_JOBS_READY,
                   api.RESTARTING_JOBSET_REASON_JOBS_READY_MESSAGE)),
    ("restarting-other", lambda js, opts: set_restarting_condition_false(js, "Why", "because", opts),
     ConditionOpts(EVENT_TYPE_NORMAL, api.JOBSET_RESTARTING, "False", "Why", "because")),
]

TYPES = [api.JOBSET_RESTARTING, api.JOBSET_STARTUP_POLICY_IN_PROGRESS, api.JOBSET_STARTUP_POLICY_COMPLETED,
         api.JOBSET_SUSPENDED, api.JOBSET_COMPLETED]
REASONS = [api.JOBSET_RESUMED_REASON, api.JOBSET_SUSPENDED_REASON, api.RESTARTING_JOBSET_REASON_JOBS_READY,
           api.IN_ORDER_STARTUP_POLICY_IN_PROGRESS_REASON, "Why"]
CONDITION = st.fixed_dictionaries({
    "type": st.sampled_from(TYPES), "status": st.sampled_from(["True", "False"]),
    "reason": st.sampled_from(REASONS), "message": st.sampled_from(["m", "because"]),
    "lastTransitionTime": st.just("t0"),
})


@pytest.mark.parametrize(("name", "setter", "fresh"), CASES, ids=[case[0] for case in CASES])
@settings(max_examples=60, deadline=None)
@given(conditions=st.lists(CONDITION, max_size=4))
def test_each_setter_sets_what_a_fresh_condition_sets(
    name: str, setter: Setter, fresh: ConditionOpts, conditions: list[Obj]
) -> None:
    js: Obj = {"metadata": {"name": "js"}, "status": {"conditions": conditions}}
    other = clone(js)
    opts, expected = StatusUpdate(now="t1"), StatusUpdate(now="t1")
    setter(js, opts)
    set_condition(other, fresh, expected)
    assert js == other
    assert opts == expected
