"""Shared builders and the controller-on-an-API-server harness of the JobSet controller tests
(``test_jobset_controller.py``, ``test_child_jobs.py``, ``test_conditions.py``,
``test_volume_claim_policy.py``, ``test_jobset_events.py``)."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock, rfc3339
from fakecluster.controllers.garbage_collector import GarbageCollector
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller import JobSetController
from jobset.features import FeatureGates

NS = "default"
T0 = rfc3339(0)


def pod_template(**spec: Any) -> Obj:
    return {
        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1"}], **spec}
    }


def rjob(
    name: str,
    replicas: int = 1,
    *,
    group: str = "default",
    depends_on: list[tuple[str, str]] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    pod: Obj | None = None,
) -> Obj:
    template: Obj = {
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "completionMode": "Indexed",
            "template": pod or pod_template(),
        }
    }
    if labels or annotations:
        template["metadata"] = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    out: Obj = {"name": name, "replicas": replicas, "groupName": group, "template": template}
    if depends_on:
        out["dependsOn"] = [{"name": n, "status": s} for n, s in depends_on]
    return out


def make_jobset(*rjobs: Obj, name: str = "js", uid: str = "uid-1", **spec: Any) -> Obj:
    return {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": {"replicatedJobs": list(rjobs), "successPolicy": {"operator": "All"}, **spec},
    }


def jobset_keys(
    rjob_name: str,
    idx: int,
    replicas: int,
    *,
    total: int,
    global_idx: int,
    group: str = "default",
    group_total: int | None = None,
    group_idx: int | None = None,
    restarts: int = 0,
) -> dict[str, str]:
    job_name = f"js-{rjob_name}-{idx}"
    return {
        api.JOBSET_NAME_KEY: "js",
        api.JOBSET_UID_KEY: "uid-1",
        api.REPLICATED_JOB_NAME_KEY: rjob_name,
        api.RESTARTS_KEY: str(restarts),
        api.REPLICATED_JOB_REPLICAS: str(replicas),
        api.GLOBAL_REPLICAS_KEY: str(total),
        api.JOB_INDEX_KEY: str(idx),
        api.JOB_KEY: hashlib.sha1(f"{NS}/{job_name}".encode()).hexdigest(),
        api.JOB_GLOBAL_INDEX_KEY: str(global_idx),
        api.GROUP_NAME_KEY: group,
        api.GROUP_REPLICAS_KEY: str(total if group_total is None else group_total),
        api.JOB_GROUP_INDEX_KEY: str(global_idx if group_idx is None else group_idx),
    }


def child(name: str, rjob_name: str = "a", *, restarts: int = 0, **status: Any) -> Obj:
    """A child Job as the API server returns it."""
    conditions = status.pop("conditions", None)
    job: Obj = {
        "metadata": {
            "name": name,
            "labels": {api.REPLICATED_JOB_NAME_KEY: rjob_name, api.RESTARTS_KEY: str(restarts)},
        },
        "spec": {
            "parallelism": status.pop("parallelism", 1),
            "completions": status.pop("completions", 1),
            "suspend": status.pop("suspend", False),
        },
        "status": status,
    }
    if conditions:
        job["status"]["conditions"] = conditions
    return job



def counts(statuses: list[Obj]) -> dict[str, tuple[int, ...]]:
    return {
        s["name"]: (s["ready"], s["succeeded"], s["failed"], s["active"], s["suspended"]) for s in statuses
    }


class Env:
    """An API server (with the JobSet kind registered as a bare custom resource), the garbage collector,
    and the controller under test. Job statuses are written by hand, as the Job controller would."""

    def __init__(self, *, gc: bool = True, gates: FeatureGates | None = None) -> None:
        self.clock = Clock()
        self.server = ApiServer(self.clock, random.Random(0))
        register_builtin(self.server)
        self.server.register(
            ResourceType(
                "JobSet", api.API_VERSION, "jobsets", generation="custom", unconditional_update=False
            )
        )
        if gc:
            GarbageCollector(self.clock, self.server)
        self.client = LocalClient(self.server)
        self.controller = JobSetController(self.client, self.clock, gates=gates)
        self.job_log: list[tuple[str, str, str, tuple[str, ...]]] = []
        self.server.watch("Job", self._log_job)

    def _log_job(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        deleting = "deleting" if meta.get("deletionTimestamp") else ""
        self.job_log.append((event.type, meta["name"], deleting, tuple(meta.get("finalizers") or ())))

    def settle(self, seconds: float = 1.0) -> None:
        """Run everything due in the next ``seconds`` and end at that time."""
        until = self.clock.now + seconds
        self.clock.run(until)
        self.clock.advance_to(until)

    def create(self, js: Obj) -> None:
        del js["metadata"]["uid"]
        self.client.create(js)
        self.settle()

    def js(self) -> Obj:
        return clone(self.client.get("JobSet", NS, "js"))

    def update_spec(self, **changes: Any) -> None:
        js = self.js()
        js["spec"].update(changes)
        self.client.update(js)
        self.settle()

    def job_names(self) -> list[str]:
        return [j["metadata"]["name"] for j in self.client.list("Job", NS)]

    def job(self, name: str) -> Obj:
        return clone(self.client.get("Job", NS, name))

    def set_status(self, *names: str, settle: bool = True, **status: Any) -> None:
        for name in names:
            job = self.job(name)
            job["status"] = {**job.get("status", {}), **status}
            self.client.update_status(job)
        if settle:
            self.settle()

    def ready(self, *names: str) -> None:
        self.set_status(*names, active=1, ready=1)

    def finish(
        self,
        name: str,
        cond: str,
        *,
        reason: str = "",
        message: str = "",
        at: float | None = None,
        settle: bool = True,
    ) -> None:
        when = rfc3339(self.clock.now if at is None else at)
        condition = {
            "type": cond,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": when,
            "lastProbeTime": when,
        }
        self.set_status(
            name,
            settle=settle,
            active=0,
            ready=0,
            conditions=[condition],
            **({"succeeded": 1} if cond == "Complete" else {"failed": 1}),
        )

    def conditions(self) -> list[tuple[str, str, str, str]]:
        return [
            (c["type"], c["status"], c["reason"], c["message"])
            for c in self.js()["status"].get("conditions", ())
        ]

    def events(self) -> list[tuple[str, str, str]]:
        events = clone(self.client.list("Event", NS))  # names end in the creation time's hex nanoseconds
        return [(e["type"], e["reason"], e["note"]) for e in events]

    def counts(self) -> dict[str, tuple[int, ...]]:
        return counts(self.js()["status"]["replicatedJobsStatus"])


IN_PROGRESS = (
    "StartupPolicyInProgress",
    "True",
    "InOrderStartupPolicyInProgress",
    "in order startup policy is in progress",
)
IN_PROGRESS_DONE = ("StartupPolicyInProgress", "False", *IN_PROGRESS[2:])
COMPLETED_STARTUP = (
    "StartupPolicyCompleted",
    "True",
    "InOrderStartupPolicyCompleted",
    "in order startup policy has completed",
)
