"""The child-Jobs view patched where the watch hints say (jobset/controller/child_jobs_cache.py,
``_hinted_changes``) says exactly what the plain ``getChildJobs`` / ``calculateReplicatedJobStatuses`` say
of the same List, with the List's very objects, whatever the hints: the Jobs that changed, some of them,
none, names that are not listed, and Jobs replaced by equal copies that no hint names."""

from __future__ import annotations

import random

import pytest
from jobset_harness import make_jobset, rjob
from test_child_jobs_cache import mutate, outcome, owned_job, plain

from fakecluster.api.objects import Obj, clone
from jobset.controller import child_jobs_cache
from jobset.controller.child_jobs import ChildJobs
from jobset.controller.child_jobs_cache import ChildJobsCache
from jobset.controller.errors import ReconcileError
from jobset.controller.job_facts import JobFactsCache


def hints_for(rng: random.Random, before: list[Obj], after: list[Obj]) -> list[str]:
    """Names a watch might have reported between two Lists: those of the changed Jobs (all, some or
    none), and now and then one of an unchanged Job or of no Job at all."""
    previous = {job["metadata"]["name"]: job for job in before}
    changed = [job["metadata"]["name"] for job in after if previous.get(job["metadata"]["name"]) is not job]
    how = rng.randrange(5)
    if how == 0:
        names = []
    elif how == 1:
        names = [name for name in changed if rng.random() < 0.5]
    else:
        names = list(changed)
    if after and rng.random() < 0.3:
        names.append(rng.choice(after)["metadata"]["name"])
    if rng.random() < 0.1:
        names.append("js-nowhere-9")
    rng.shuffle(names)
    return names


def copy_some(rng: random.Random, jobs: list[Obj]) -> list[Obj]:
    """Replace a Job or two by an equal copy (a new object, same contents), which no change would name."""
    jobs = list(jobs)
    for _ in range(rng.randrange(3)):
        if jobs:
            index = rng.randrange(len(jobs))
            jobs[index] = clone(jobs[index])
    return jobs


@pytest.mark.parametrize("seed", range(40))
def test_the_hinted_patch_matches_the_plain_functions(seed: int) -> None:
    rng = random.Random(seed)
    js = make_jobset(rjob("a", 3), rjob("b", 2))
    jobs = [owned_job(f"js-a-{i}", "a") for i in range(3)] + [owned_job(f"js-b-{i}", "b") for i in range(2)]
    cache = ChildJobsCache(JobFactsCache())
    listed = list(jobs)
    held: tuple[ChildJobs, list[list[int]]] | None = None
    for _ in range(200):
        before = listed
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            js, jobs = mutate(rng, js, jobs)
        if rng.random() < 0.3:
            jobs = copy_some(rng, jobs)
        listed = list(jobs)
        for name in hints_for(rng, before, listed):
            cache.touched(js["metadata"]["namespace"], js["metadata"]["name"], name)
        assert outcome(js, listed, cache.child_jobs) == outcome(js, listed, plain)
        if held is not None:  # read only now, after the view was patched again: still the old List's
            assert [[id(job) for job in group] for group in held[0].buckets()] == held[1]
        try:
            expected = [[id(job) for job in group] for group in plain(js, listed).buckets()]
            held = (cache.child_jobs(js, list(listed)), expected)
        except ReconcileError:
            held = None


def test_an_equal_copy_nobody_named_is_handed_out_as_listed() -> None:
    """The ``==`` check passes an equal copy without re-deriving it; the view still hands out the List's
    own object (what the plain path hands out), not the one it replaced."""
    js = make_jobset(rjob("a", 3))
    jobs = [owned_job(f"js-a-{i}", "a") for i in range(3)]
    cache = ChildJobsCache(JobFactsCache())
    cache.child_jobs(js, jobs)
    copied = [jobs[0], clone(jobs[1]), jobs[2]]
    changed = clone(jobs[2])
    changed["status"]["ready"] = 1
    copied[2] = changed
    cache.touched(js["metadata"]["namespace"], "js", "js-a-2")
    assert outcome(js, copied, cache.child_jobs) == outcome(js, copied, plain)
    owned = cache.child_jobs(js, list(copied))
    assert all(mine is theirs for mine, theirs in zip(owned.active, copied, strict=True))


def test_hints_take_the_equality_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """With hints naming the changed Job, no identity scan runs (the fast path is the one tested above)."""
    def no_scan(*args: object) -> tuple[int, int]:
        raise AssertionError("scanned")

    js = make_jobset(rjob("a", 3))
    jobs = [owned_job(f"js-a-{i}", "a") for i in range(3)]
    cache = ChildJobsCache(JobFactsCache())
    cache.child_jobs(js, jobs)
    monkeypatch.setattr(child_jobs_cache, "shared_ends", no_scan)
    changed = clone(jobs[1])
    changed["status"]["ready"] = 1
    cache.touched(js["metadata"]["namespace"], "js", "js-a-1")
    listed = [jobs[0], changed, jobs[2]]
    assert outcome(js, listed, cache.child_jobs) == outcome(js, listed, plain)
