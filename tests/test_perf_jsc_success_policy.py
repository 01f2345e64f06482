"""``numJobsMatchingSuccessPolicy`` read from the cached view's counts (jobset/controller/success_policy.py)
answers exactly what the walk over the successful Jobs does: Jobs without the ReplicatedJob label, labels
naming no ReplicatedJob of the spec, an empty label, targets named twice, finished, failed, previous-run
and foreign Jobs, on a freshly built view and on a patched one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jobset_harness import NS, make_jobset, rjob

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs_cache import ChildJobsCache
from jobset.controller.conditions import StatusUpdate
from jobset.controller.job_facts import JobFactsCache
from jobset.controller.success_policy import execute_success_policy, num_jobs_matching_success_policy

LABEL = st.sampled_from(["a", "b", "", "zz", None])
"""A Job's ``replicatedjob-name`` label: the spec's, empty, naming no ReplicatedJob, or absent (None)."""

STATE = st.sampled_from(["active", "Complete", "Failed", "previous", "foreign"])

TARGETS = st.lists(st.sampled_from(["a", "b", "", "zz"]), max_size=4)


def job(index: int, label: str | None, state: str) -> Obj:
    labels = {api.RESTARTS_KEY: "0" if state == "previous" else "1"}
    if label is not None:
        labels[api.REPLICATED_JOB_NAME_KEY] = label
    conditions = [{"type": state, "status": "True"}] if state in ("Complete", "Failed") else []
    return {
        "metadata": {
            "name": f"js-{index:03d}",
            "namespace": NS,
            "labels": labels,
            "ownerReferences": [{
                "uid": "other" if state == "foreign" else "uid-1", "kind": api.KIND,
                "apiVersion": api.API_VERSION, "controller": True, "name": "js",
            }],
        },
        "spec": {"parallelism": 1, "completions": 1, "suspend": False},
        "status": {"conditions": conditions},
    }


def jobset(targets: list[Any]) -> Obj:
    js = make_jobset(rjob("a", 2), rjob("b", 2), successPolicy={"operator": "All",
                                                                "targetReplicatedJobs": targets})
    js["status"] = {"restarts": 1}
    return js


def fast_and_general(cache: ChildJobsCache, js: Obj, jobs: list[Obj]) -> tuple[int, int]:
    owned = cache.child_jobs(js, jobs)
    assert owned.summary is not None
    fast = num_jobs_matching_success_policy(js, owned.successful, counts=owned.summary.counts)
    return fast, num_jobs_matching_success_policy(js, owned.successful)


@settings(max_examples=400, deadline=None)
@given(
    targets=TARGETS,
    before=st.lists(st.tuples(LABEL, STATE), max_size=10),
    changes=st.lists(st.tuples(st.integers(0, 9), STATE), max_size=6),
)
def test_the_counts_answer_as_the_walk(
    targets: list[str], before: list[tuple[str | None, str]], changes: list[tuple[int, str]]
) -> None:
    js = jobset(targets)
    jobs = [job(i, label, state) for i, (label, state) in enumerate(before)]
    cache = ChildJobsCache(JobFactsCache())
    fast, general = fast_and_general(cache, js, jobs)
    assert fast == general
    for index, state in changes:  # status changes the view patches (or rebuilds, if one re-owns a Job)
        if index < len(jobs):
            changed = clone(jobs[index])
            changed["status"]["conditions"] = (
                [{"type": state, "status": "True"}] if state in ("Complete", "Failed") else []
            )
            jobs = [*jobs[:index], changed, *jobs[index + 1:]]
            fast, general = fast_and_general(cache, js, jobs)
            assert fast == general


def test_a_non_string_target_takes_the_walk() -> None:
    """Targets are strings once the API server validated the JobSet; anything else is matched by ``in``,
    as the walk does (an unhashable target would not even fit a dict key)."""
    js = jobset([["a"], "b"])
    jobs = [job(0, "a", "Complete"), job(1, "b", "Complete")]
    cache = ChildJobsCache(JobFactsCache())
    assert fast_and_general(cache, js, jobs) == (1, 1)


def test_execute_success_policy_passes_the_counts_on() -> None:
    js = jobset(["a"])
    jobs = [job(0, "a", "Complete"), job(1, "a", "Complete"), job(2, "b", "Complete")]
    owned = ChildJobsCache(JobFactsCache()).child_jobs(js, jobs)
    assert owned.summary is not None
    opts = StatusUpdate(now="t")
    assert execute_success_policy(js, owned.successful, opts, counts=owned.summary.counts)
    assert opts.should_update
    # Counts that disagree with the list decide: the list is not walked.
    assert not execute_success_policy(js, owned.successful, StatusUpdate(now="t"), counts={"a": (0, 1)})
