"""What a JobSet's not-yet-created replicated jobs wait for: the workload half of the stuck diagnosis.

The scenario runner's diagnosis (``fakecluster.scenario.diagnosis``) knows Jobs and pods but not why a
JobSet has not created a replicated job's Jobs; that is JobSet policy, so it asks the plugin. The gates
are the controller's own predicates, so the diagnosis cannot disagree with what the controller does:

- ``InOrder`` (upstream ``pkg/controllers/startup_policy.go``, ``allReplicasStarted``): replicated job
  k+1 waits until every Job of each earlier replicated job has started (ready, succeeded or failed);
- ``dependsOn`` (upstream ``pkg/controllers/depends_on.go``, ``dependencyReachedStatus``): every entry must
  reach ``Ready`` (failed + ready + succeeded == replicas) or ``Complete`` (succeeded == replicas);
- ``spec.suspend``: a suspended JobSet's Jobs are suspended (``pkg/controllers/jobset_controller.go``).
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.workload_plugin import GroupWait
from jobset.controller.depends_on import dependency_reached_status
from jobset.controller.startup_policy import all_replicas_started, in_order_startup_policy

__all__ = ["creation_waits"]


def creation_waits(jobset: Obj) -> dict[str, list[GroupWait]]:
    """Replicated job name -> the unmet gates its Jobs' creation waits on (spec order)."""
    spec = jobset.get("spec") or {}
    rjobs = [r for r in spec.get("replicatedJobs") or () if isinstance(r, dict)]
    statuses = (jobset.get("status") or {}).get("replicatedJobsStatus") or []
    by_name = {s.get("name"): s for s in statuses}
    replicas: dict[str, int] = {}
    waits: dict[str, list[GroupWait]] = {}
    in_order = in_order_startup_policy(spec.get("startupPolicy"))
    for k, rjob in enumerate(rjobs):
        name = str(rjob.get("name", ""))
        replicas[name] = int(rjob.get("replicas", 1))
        if spec.get("suspend"):
            waits.setdefault(name, []).append(GroupWait("suspend", "", ""))
        if in_order:
            for earlier in rjobs[:k]:
                prev = str(earlier.get("name", ""))
                if not all_replicas_started(replicas[prev], by_name.get(prev)):
                    waits.setdefault(name, []).append(GroupWait("InOrder", prev, "Ready"))
                    break
        for dep in rjob.get("dependsOn") or ():
            single = {"dependsOn": [dep]}
            if not dependency_reached_status(single, replicas, statuses):
                waits.setdefault(name, []).append(
                    GroupWait("dependsOn", str(dep.get("name", "")), str(dep.get("status", "")))
                )
    return waits
