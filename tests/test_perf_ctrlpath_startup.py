"""``all_replicas_started`` (jobset/controller/startup_policy.py) and ``all_jobs_ready``
(jobset/controller/jobset_controller.py) write out :func:`jobset.controller.spec.count` and sum in loops:
each must answer as the plain form over the same status dicts, whatever the counters hold (absent,
None, 0, ints, and the values ``int()`` takes)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jobset.controller.jobset_controller import all_jobs_ready
from jobset.controller.spec import count, replicas, replicated_jobs
from jobset.controller.startup_policy import all_replicas_started

FIELDS = ("failed", "ready", "succeeded", "active", "suspended")
counter = st.one_of(st.none(), st.integers(-3, 6), st.booleans(), st.sampled_from(["2", "0", 1.0]))
statuses = st.one_of(st.none(), st.dictionaries(st.sampled_from(FIELDS), counter, max_size=5))


def plain_all_replicas_started(replicas: int, status: Any) -> bool:
    return replicas == count(status, "failed") + count(status, "ready") + count(status, "succeeded")


def plain_all_jobs_ready(js: Any, statuses: list[Any]) -> bool:
    total = sum(replicas(rjob) for rjob in replicated_jobs(js))
    return total == sum(count(s, "ready") + count(s, "succeeded") for s in statuses)


@given(st.integers(-1, 8), statuses)
def test_all_replicas_started_answers_as_the_plain_sum(replicas: int, status: Any) -> None:
    assert all_replicas_started(replicas, status) is plain_all_replicas_started(replicas, status)


@given(st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=4), st.lists(statuses, max_size=4))
def test_all_jobs_ready_answers_as_the_plain_sums(counts: list[int | None], status_list: list[Any]) -> None:
    js = {"spec": {"replicatedJobs": [{"name": f"r{i}", **({} if n is None else {"replicas": n})}
                                      for i, n in enumerate(counts)]}}
    assert all_jobs_ready(js, status_list) is plain_all_jobs_ready(js, status_list)
