"""The patched view of a JobSet's child Jobs (jobset/controller/child_jobs_cache.py) says exactly what the
plain ``getChildJobs`` / ``calculateReplicatedJobStatuses`` / names of ``jobset_controller.go`` say of the
same List, after every kind of change between two Lists: status changes, Jobs finishing, created,
deleted, re-owned, relabelled, unparsable labels, a restart, the JobSet recreated under its name."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from jobset_harness import NS, child, make_jobset, rjob

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ChildJobs,
    calculate_replicated_job_statuses,
    construct_jobs_from_template,
    get_child_jobs,
)
from jobset.controller.child_jobs_cache import ChildJobsCache
from jobset.controller.errors import ReconcileError
from jobset.controller.job_facts import JobFactsCache, derive


def owned_job(name: str, rjob_name: str, uid: str = "uid-1", **status: object) -> Obj:
    job = child(name, rjob_name, **status)
    job["metadata"]["namespace"] = NS
    job["metadata"]["ownerReferences"] = [
        {"uid": uid, "kind": api.KIND, "apiVersion": api.API_VERSION, "controller": True, "name": "js"}
    ]
    return job


def plain(js: Obj, listed: list[Obj]) -> ChildJobs:
    """The uncached path: the owner filter of the List, then ``getChildJobs``."""
    owner = (js["metadata"]["uid"], api.KIND, api.API_VERSION)
    return get_child_jobs(js, [job for job in listed if derive(job).controller == owner])


def outcome(js: Obj, listed: list[Obj], classify: Callable[[Obj, list[Obj]], ChildJobs]) -> object:
    """Everything the reconcile reads of a classification of the List, or the error it raises."""
    try:
        owned = classify(js, listed)
    except ReconcileError as err:
        return ("error", err.message)
    return (
        [[id(job) for job in group] for group in owned.buckets()],
        sorted(owned.names()),
        calculate_replicated_job_statuses(js, owned),
        [id(job) for job in owned.suspended_active()],
        [job["metadata"]["name"] for r in js["spec"]["replicatedJobs"]
         for job in construct_jobs_from_template(js, r, owned)],
    )


def mutate(rng: random.Random, js: Obj, jobs: list[Obj]) -> tuple[Obj, list[Obj]]:
    """One random change to the stored objects, copy-on-write as the API server makes it."""
    jobs = list(jobs)
    choice = rng.randrange(12)
    index = rng.randrange(len(jobs)) if jobs else 0
    if choice <= 4 and jobs:  # a status change
        job = clone(jobs[index])
        job["status"]["ready"] = rng.randrange(3)
        job["status"]["active"] = rng.randrange(2)
        jobs[index] = job
    elif choice == 5 and jobs:  # finished
        job = clone(jobs[index])
        kind = rng.choice(["Complete", "Failed"])
        job["status"]["conditions"] = [{"type": kind, "status": "True"}]
        jobs[index] = job
    elif choice == 6 and jobs:  # suspended or resumed, or relabelled to another ReplicatedJob
        job = clone(jobs[index])
        if rng.random() < 0.5:
            job["spec"]["suspend"] = not job["spec"]["suspend"]
        else:
            job["metadata"]["labels"][api.REPLICATED_JOB_NAME_KEY] = rng.choice(["a", "b", "zz", ""])
        jobs[index] = job
    elif choice == 7 and jobs:  # deleted
        del jobs[index]
    elif choice == 8:  # created
        rjob_name = rng.choice(["a", "b"])
        name = f"js-{rjob_name}-{rng.randrange(4)}"
        if all(job["metadata"]["name"] != name for job in jobs):
            jobs.append(owned_job(name, rjob_name, js["metadata"]["uid"]))
            jobs.sort(key=lambda job: job["metadata"]["name"])
    elif choice == 9 and jobs:  # re-owned, or an unparsable or older restart-attempt label
        job = clone(jobs[index])
        what = rng.randrange(3)
        if what == 0:
            job["metadata"]["ownerReferences"][0]["uid"] = rng.choice(["uid-1", "uid-2", "other"])
        else:
            job["metadata"]["labels"][api.RESTARTS_KEY] = rng.choice(["x", "0", "1", "2"])
        jobs[index] = job
    elif choice == 10:  # a restart
        js = clone(js)
        js.setdefault("status", {})["restarts"] = rng.randrange(3)
    else:  # the JobSet deleted and recreated under its name
        js = clone(js)
        js["metadata"]["uid"] = "uid-2" if js["metadata"]["uid"] == "uid-1" else "uid-1"
    return js, jobs


@pytest.mark.parametrize("seed", range(30))
def test_the_patched_view_matches_the_plain_functions_after_every_change(seed: int) -> None:
    rng = random.Random(seed)
    js = make_jobset(rjob("a", 3), rjob("b", 2))
    jobs = [owned_job(f"js-a-{i}", "a") for i in range(3)] + [owned_job(f"js-b-{i}", "b") for i in range(2)]
    cache = ChildJobsCache(JobFactsCache())
    for _ in range(200):
        for _ in range(rng.choice([1, 1, 1, 2, 3])):  # sometimes several changes between two Lists
            js, jobs = mutate(rng, js, jobs)
        listed = list(jobs)
        assert outcome(js, listed, cache.child_jobs) == outcome(js, listed, plain)


def test_the_view_hands_out_copies() -> None:
    js = make_jobset(rjob("a", 2))
    jobs = [owned_job("js-a-0", "a"), owned_job("js-a-1", "a")]
    cache = ChildJobsCache(JobFactsCache())
    first = cache.child_jobs(js, jobs)
    first.active.clear()
    assert first.summary is not None
    first.summary.counts.clear()
    again = cache.child_jobs(js, list(jobs))
    assert again.active == jobs
    assert again.counts()["a"] == (0, 0, 0, 0, 0)


def test_forget_and_clear_drop_views() -> None:
    js = make_jobset(rjob("a", 1))
    cache = ChildJobsCache(JobFactsCache())
    cache.child_jobs(js, [owned_job("js-a-0", "a")])
    cache.forget(NS, "js")
    assert not cache._views
    cache.child_jobs(js, [])
    cache.clear()
    assert not cache._views
