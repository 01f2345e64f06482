"""What the JobSet reconcile reads of each child Job, derived once per Job version
(jobset/controller/job_facts.py)."""

from __future__ import annotations

import pytest

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.errors import ReconcileError
from jobset.controller.job_facts import JobFactsCache, derive


def job(name: str = "js-w-0", *, attempt: str = "0", ready: int = 0, suspend: bool = False) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns",
                     "labels": {api.RESTARTS_KEY: attempt, api.REPLICATED_JOB_NAME_KEY: "w"},
                     "ownerReferences": [{"uid": "u1", "kind": api.KIND, "apiVersion": api.API_VERSION,
                                          "controller": True, "name": "js"}]},
        "spec": {"parallelism": 2, "completions": 2, "suspend": suspend},
        "status": {"ready": ready, "active": 2},
    }


def test_facts_follow_the_job_version() -> None:
    cache = JobFactsCache()
    first = job()
    facts = cache(first)
    assert cache(first) is facts  # same object: not derived again
    assert (facts.replicated_job, facts.ready, facts.active, facts.suspended) == ("w", False, True, False)
    assert facts.controller == ("u1", api.KIND, api.API_VERSION)
    newer = clone(first)
    newer["status"]["ready"] = 2
    assert cache(newer).ready is True  # a new version (a new object) is derived afresh
    assert cache(first).ready is False  # an older object read again: derived again, never stale


def test_one_entry_per_job_name() -> None:
    cache = JobFactsCache()
    versions = [job(ready=i % 3) for i in range(50)]
    for version in versions:
        cache(version)
    assert len(cache._by_id) == 1 and len(cache._by_name) == 1


def test_a_bad_restart_attempt_label_raises_when_read_as_upstream_atoi_does() -> None:
    facts = derive(job(attempt="x"))
    with pytest.raises(ReconcileError, match=r'strconv\.Atoi: parsing "x": invalid syntax'):
        facts.restart_attempt_value()
    assert derive(job(attempt="3")).restart_attempt_value() == 3
