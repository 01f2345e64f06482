"""JobSet as a fakecluster workload plugin (entry point ``fakecluster.workloads: jobset``).

Installs the JobSet kind with its CRD strategy and webhooks into a cluster's API server, starts the
controller against a client (never the store), and tells the scenario layer how JobSet pods and Jobs map
to replicated jobs and slots through the labels the controller and the Job controller put on them.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.batch_labels import JOB_COMPLETION_INDEX_ANNOTATION
from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster
from fakecluster.invariants import Invariant
from fakecluster.workload_plugin import GroupShape, GroupWait, Slot
from jobset import controller as jobset_controller
from jobset.api.v1alpha2.jobset_types import (
    JOB_INDEX_KEY,
    JOBSET_NAME_KEY,
    KIND,
    REPLICATED_JOB_NAME_KEY,
    RESTARTS_KEY,
)
from jobset.controller import pod_controller
from jobset.features import FeatureGates
from jobset.invariants import jobset_invariants
from jobset.webhooks import register


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class JobSetWorkload:
    kind = KIND

    def install(self, cluster: Cluster, feature_gates: dict[str, bool], *, latency: float = 0.0) -> Any:
        gates = FeatureGates.from_dict(feature_gates)
        register(cluster.server, gates, cluster.rng("jobset-webhook"))
        return self._start(cluster, gates, latency)

    def _start(self, cluster: Cluster, gates: Any, latency: float) -> Any:
        client = cluster.client("jobset-controller")
        # Looked up at each start, not bound at import: a test (the explore mutants) swaps the class in.
        controller: Any = jobset_controller.JobSetController(client, cluster.clock, gates=gates,
                                                             latency=latency)
        # The pod controller runs in the same manager process, on the same client and cache.
        controller.pod_controller = pod_controller.PodController(client, cluster.clock, latency=latency)
        return controller

    def restart_controller(self, cluster: Cluster, controller: Any) -> Any:
        """A crashed process keeps nothing: a new controller with the same gates and latency."""
        controller.pod_controller.stop()
        controller.stop()
        return self._start(cluster, controller.gates, controller.controller.latency)

    def shapes(self, manifest: Obj) -> tuple[str, dict[str, GroupShape]]:
        meta = manifest.get("metadata") or {}
        name = meta.get("name") or meta.get("generateName") or ""
        groups: dict[str, GroupShape] = {}
        for rjob in (manifest.get("spec") or {}).get("replicatedJobs") or ():
            if not isinstance(rjob, dict):
                continue
            job_spec = (rjob.get("template") or {}).get("spec") or {}
            completions = job_spec.get("completions")
            parallelism = job_spec.get("parallelism")
            pods = completions if completions is not None else parallelism if parallelism is not None else 1
            groups[str(rjob.get("name", ""))] = GroupShape(
                replicas=int(rjob.get("replicas", 1)), pods_per_job=int(pods),
                # the JobSet webhook defaults an unset completionMode to Indexed
                indexed=job_spec.get("completionMode") != "NonIndexed",
            )
        return name, groups

    def slot_of(self, obj: Obj) -> Slot | None:
        labels = obj["metadata"].get("labels") or {}
        owner = labels.get(JOBSET_NAME_KEY)
        if owner is None:
            return None
        return Slot(
            owner=owner,
            group=labels.get(REPLICATED_JOB_NAME_KEY, ""),
            job_index=_int_or_none(labels.get(JOB_INDEX_KEY)),
            # PodIndexLabel (GA 1.32): the completion index annotation is a pod label too.
            pod_index=(_int_or_none(labels.get(JOB_COMPLETION_INDEX_ANNOTATION)) if obj.get("kind") == "Pod"
                       else None),
            attempt=_int_or_none(labels.get(RESTARTS_KEY)),
        )

    def slot_labels(
        self, owner: str, group: str, job_index: int | None, pod_index: int | None
    ) -> dict[str, str]:
        """The labels by which a real cluster's pods of that slot are selected (the controller's
        ``jobset.sigs.k8s.io/*`` labels, ``pkg/controllers/jobset_controller.go`` labelAndAnnotateObject,
        and the Job controller's completion index): what KWOK stage selectors match on."""
        labels = {JOBSET_NAME_KEY: owner, REPLICATED_JOB_NAME_KEY: group}
        if job_index is not None:
            labels[JOB_INDEX_KEY] = str(job_index)
        if pod_index is not None:
            labels[JOB_COMPLETION_INDEX_ANNOTATION] = str(pod_index)
        return labels

    def pod_templates(self, manifest: Obj) -> dict[str, Obj]:
        """Each replicated job's pod template (``spec.replicatedJobs[].template.spec.template``)."""
        templates: dict[str, Obj] = {}
        for rjob in (manifest.get("spec") or {}).get("replicatedJobs") or ():
            if isinstance(rjob, dict):
                job_spec = (rjob.get("template") or {}).get("spec") or {}
                templates[str(rjob.get("name", ""))] = job_spec.get("template") or {}
        return templates

    def current_attempt(self, workload_obj: Obj) -> int:
        return int((workload_obj.get("status") or {}).get("restarts") or 0)

    def scenario_strategy(self) -> Any:
        """Hypothesis strategy of whole scenario files for ``fakecluster explore`` (:mod:`jobset.explore`)."""
        from jobset.explore import scenarios

        return scenarios()

    def invariants(self) -> list[Invariant]:
        return jobset_invariants()
    def creation_waits(self, workload_obj: Obj) -> dict[str, list[GroupWait]]:
        from jobset.diagnosis import creation_waits

        return creation_waits(workload_obj)

    def finished(self, workload_obj: Obj) -> bool:
        """``jobSetFinished`` (upstream ``pkg/controllers/jobset_controller.go``): Completed or Failed."""
        return any(
            c.get("type") in ("Completed", "Failed") and c.get("status") == "True"
            for c in (workload_obj.get("status") or {}).get("conditions") or ()
        )


plugin = JobSetWorkload()
