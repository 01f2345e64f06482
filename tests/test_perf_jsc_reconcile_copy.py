"""The reconcile's JobSet copy (jobset/controller/jobset_controller.py, ``reconcile_copy``) copies the status
only as deep as the reconcile writes: every status write the reconcile makes leaves the stored JobSet as it
was and gives the same status as on a deep copy, whatever the status holds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jobset_harness import make_jobset, rjob

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import update_replicated_jobs_statuses
from jobset.controller.conditions import (
    ConditionOpts,
    EventParams,
    StatusUpdate,
    set_condition,
    set_jobset_completed_condition,
)
from jobset.controller.failure_policy import _set_status_list, failure_policy_recreate_all
from jobset.controller.jobset_controller import reconcile_copy, wire_status
from jobset.controller.startup_policy import set_in_order_startup_policy_completed_condition

TYPES = [api.JOBSET_RESTARTING, api.JOBSET_STARTUP_POLICY_IN_PROGRESS, api.JOBSET_STARTUP_POLICY_COMPLETED,
         api.JOBSET_SUSPENDED, api.JOBSET_COMPLETED]

CONDITION = st.fixed_dictionaries({
    "type": st.sampled_from(TYPES), "status": st.sampled_from(["True", "False"]),
    "reason": st.sampled_from(["r1", "r2"]), "message": st.just("m"), "lastTransitionTime": st.just("t0"),
})

ENTRY = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"])},
    optional={"ready": st.integers(0, 2), "jobRestarts": st.lists(st.integers(0, 2), max_size=2),
              "jobRestartsCountTowardsMax": st.lists(st.integers(0, 2), max_size=2)},
)

STATUS = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={
        "conditions": st.one_of(st.none(), st.lists(CONDITION, max_size=4)),
        "replicatedJobsStatus": st.one_of(st.none(), st.lists(ENTRY, max_size=3)),
        "restarts": st.integers(0, 2),
        "terminalState": st.just(api.JOBSET_FAILED),
    }),
)

WRITE = st.sampled_from(["condition", "statuses", "restart-list", "recreate", "completed", "startup", "wire"])


def full_copy(js: Obj) -> Obj:
    """The general path: top level, metadata and status deep-copied."""
    copy = dict(js)
    for key in ("metadata", "status"):
        if key in copy:
            copy[key] = clone(copy[key])
    return copy


def apply(js: Obj, writes: list[tuple[str, Any]]) -> Obj:
    """The reconcile's status writes, in the given order."""
    opts = StatusUpdate(now="t1")
    for what, arg in writes:
        if what == "condition":
            set_condition(js, ConditionOpts("Normal", arg["type"], arg["status"], arg["reason"], "m"), opts)
        elif what == "statuses":
            update_replicated_jobs_statuses(js, [dict(entry) for entry in arg], opts)
        elif what == "restart-list":
            _set_status_list(js, arg["name"], "jobRestarts", [9])
        elif what == "recreate":
            event = EventParams("Warning", "r", "m")
            failure_policy_recreate_all(js, True, opts, event, reason="r", message="m")
        elif what == "completed":
            set_jobset_completed_condition(js, opts)
        elif what == "startup":
            set_in_order_startup_policy_completed_condition(js, opts)
        else:
            js["status"] = wire_status(js.get("status") or {})
    return js


@settings(max_examples=300, deadline=None)
@given(status=STATUS, writes=st.lists(
    st.tuples(WRITE, st.one_of(CONDITION, st.lists(ENTRY, max_size=3), ENTRY)), max_size=6))
def test_the_writes_leave_the_stored_jobset_alone(status: Obj | None, writes: list[tuple[str, Any]]) -> None:
    stored = make_jobset(rjob("a", 2), rjob("b", 1))
    if status is not None:
        stored["status"] = status
    pristine = clone(stored)
    usable = [
        (what, arg) for what, arg in writes
        if (what == "condition" and "type" in arg) or (what == "statuses" and isinstance(arg, list))
        or (what == "restart-list" and "name" in arg) or what in ("recreate", "completed", "startup", "wire")
    ]
    fast = apply(reconcile_copy(stored), usable)
    assert stored == pristine
    general = apply(full_copy(stored), usable)
    assert fast == general
