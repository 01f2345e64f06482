"""The ``dependsOn`` gate: port of upstream ``pkg/controllers/depends_on.go``.

A ReplicatedJob with ``dependsOn`` entries is created (and resumed) only when *every* entry is met; the
API doc says "only a single item is supported" but the controller ANDs all of them.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.spec import count, find_replicated_job_status


def dependency_reached_status(rjob: Obj, rjob_replicas: dict[str, int], statuses: list[Obj] | None) -> bool:
    """``dependencyReachedStatus``.

    ``rjob_replicas`` holds only the ReplicatedJobs visited so far in spec order (the callers fill it as
    they go), so a dependency that is not an earlier ReplicatedJob reads as 0 replicas. A dependency
    without a status entry is unmet.

    - ``Complete``: ``replicas == succeeded``;
    - ``Ready``: ``replicas == failed + ready + succeeded``.
    """
    for dep in rjob.get("dependsOn") or ():
        actual = find_replicated_job_status(statuses, dep.get("name", ""))
        if actual is None:
            return False
        wanted = rjob_replicas.get(dep.get("name", ""), 0)
        if dep.get("status") == api.DEPENDENCY_COMPLETE and wanted != count(actual, "succeeded"):
            return False
        started = count(actual, "failed") + count(actual, "ready") + count(actual, "succeeded")
        if dep.get("status") == api.DEPENDENCY_READY and wanted != started:
            return False
    return True
