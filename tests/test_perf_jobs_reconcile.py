"""Fast paths of the JobSet reconcile (jobset/controller/): each answers exactly what the general code it
short-cuts does."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ChildJobs,
    ChildJobsSummary,
    _normalized,
    job_names,
    replicated_job_statuses_equal,
)
from jobset.controller.child_jobs_cache import ChildJobsCache
from jobset.controller.job_facts import JobFactsCache

COUNTER = st.one_of(st.none(), st.integers(0, 2), st.just(1.0), st.just(True))
"""Counter values as a status may hold them: absent or null (0), ints, and values equal to an int."""

STATUS = st.fixed_dictionaries(
    {"name": st.sampled_from(["driver", "workers"])},
    optional={
        "ready": COUNTER, "succeeded": COUNTER, "failed": COUNTER, "active": COUNTER, "suspended": COUNTER,
        "jobRestarts": st.lists(st.integers(0, 2), max_size=2),
    },
)


def general(old: list[Any], new: list[Any]) -> tuple[bool, list[Any], list[Any]]:
    """``replicatedJobStatusesEqual`` without the fast path: sort both, compare the normalized forms."""
    old = sorted(old, key=lambda s: s.get("name", ""), reverse=True)
    new = sorted(new, key=lambda s: s.get("name", ""), reverse=True)
    return [_normalized(s) for s in old] == [_normalized(s) for s in new], old, new


@settings(max_examples=400, deadline=None)
@given(st.lists(STATUS, max_size=2), st.lists(STATUS, max_size=2), st.booleans())
def test_statuses_equal_matches_the_normalized_comparison(old: list[Any], new: list[Any], same: bool) -> None:
    if same:  # the common case: a recalculation equal to what is stored
        new = [dict(s) for s in old]
    expected, old_sorted, new_sorted = general(old, new)
    assert replicated_job_statuses_equal(old, new) is expected
    assert old == old_sorted and new == new_sorted  # sorted in place, as upstream


NAMES = [f"js-w-{i}" for i in range(6)]


@settings(max_examples=300, deadline=None)
@given(st.frozensets(st.sampled_from(NAMES)),
       st.lists(st.lists(st.sampled_from(NAMES), max_size=4), max_size=6),
       st.lists(st.integers(0, 5), max_size=12))
def test_has_all_matches_issuperset(owned_names: frozenset[str], tuples: list[list[str]],
                                    order: list[int]) -> None:
    """``ChildJobs.has_all`` with a summary (answers kept per names tuple, across the summaries of one
    view, as the cache hands them out) says what ``issuperset`` says, for tuples asked for repeatedly."""
    shared: dict[int, tuple[tuple[str, ...], bool]] = {}
    candidates = [tuple(names) for names in tuples]
    for pick in order:
        if not candidates:
            break
        names = candidates[pick % len(candidates)]
        summary = ChildJobsSummary(names=owned_names, counts={}, covered=shared)
        assert ChildJobs(summary=summary).has_all(names) is owned_names.issuperset(names)
        assert ChildJobs().has_all(names) is (not names)  # no summary, no Jobs


def test_has_all_in_reconcile_cache() -> None:
    """Through the cache: a view's summaries share the answers, a rebuilt view starts afresh."""
    facts = JobFactsCache()
    cache = ChildJobsCache(facts)
    js = {"metadata": {"name": "js", "namespace": "default", "uid": "u"}, "status": {}}
    owner = [{"apiVersion": api.API_VERSION, "kind": api.KIND, "name": "js", "uid": "u", "controller": True}]

    def job(name: str) -> Obj:
        return {"metadata": {"name": name, "namespace": "default", "ownerReferences": owner,
                             "labels": {api.RESTARTS_KEY: "0", api.REPLICATED_JOB_NAME_KEY: "w"}}}

    names = job_names("js", "w", 2)
    jobs = [job("js-w-0")]
    assert not cache.child_jobs(js, jobs).has_all(names)
    assert not cache.child_jobs(js, jobs).has_all(names)
    jobs = [job("js-w-0"), job("js-w-1")]  # a Job created: the view is rebuilt
    assert cache.child_jobs(js, jobs).has_all(names)
    assert cache.child_jobs(js, [job("js-w-0"), jobs[1]]).has_all(names)  # patched
