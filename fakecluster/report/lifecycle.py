"""Report-only pod lifecycle edges the digested trace does not carry: kubelet admission and termination.

The trace records the edges expectations reason about (Created, Scheduled, Running, Ready, Succeeded,
Failed, Deleted). A picture of a startup also needs to split *Pending* into waiting for the scheduler and
``ContainerCreating`` (image pull and container start: the kubelet sets ``status.startTime`` when it admits
the pod, ``pkg/kubelet/kubelet_pods.go`` generateAPIPodStatus), and to show the graceful-termination
window that opens with ``metadata.deletionTimestamp``. This observer watches Pods like the recorder does
but keeps its records apart, so golden digests do not change and a run without ``--report`` pays nothing.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import WorkloadPlugin

__all__ = ["ADMITTED", "CONTAINER_RESTARTED", "TERMINATING", "LifecycleObserver"]

ADMITTED = "Admitted"
"""``status.startTime`` first set: the kubelet took the pod; containers wait in ContainerCreating."""
TERMINATING = "Terminating"
"""``metadata.deletionTimestamp`` first set: graceful termination has begun."""
CONTAINER_RESTARTED = "ContainerRestarted"
"""A container's ``restartCount`` went up (restartPolicy OnFailure/Always, or a sidecar)."""


def _restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or ()
    return sum(s.get("restartCount") or 0 for s in statuses)


class LifecycleObserver:
    """Collects :data:`ADMITTED`, :data:`TERMINATING` and :data:`CONTAINER_RESTARTED` events per pod."""

    def __init__(self, cluster: Cluster, plugin: WorkloadPlugin) -> None:
        self.cluster = cluster
        self.plugin = plugin
        self.events: list[TraceEvent] = []
        cluster.server.watch("Pod", self._on_pod)

    def _emit(self, pod: Obj, event: str, detail: str = "") -> None:
        meta = pod["metadata"]
        slot = self.plugin.slot_of(pod)
        self.events.append(TraceEvent(
            self.cluster.clock.now, len(self.events), "Pod", meta.get("namespace", ""), meta["name"], event,
            slot.owner if slot else None, slot.group if slot else None, slot.job_index if slot else None,
            slot.pod_index if slot else None, slot.attempt if slot else None, detail,
        ))

    def _on_pod(self, event: WatchEvent) -> None:
        if event.type != "MODIFIED" or event.old is None:
            return
        pod, old = event.object, event.old
        if pod["metadata"].get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp"):
            self._emit(pod, TERMINATING)
        status, old_status = pod.get("status") or {}, old.get("status") or {}
        if status is old_status:
            return
        if status.get("startTime") and not old_status.get("startTime"):
            self._emit(pod, ADMITTED, str(pod["spec"].get("nodeName") or ""))
        restarts = _restarts(pod)
        if restarts > _restarts(old):
            self._emit(pod, CONTAINER_RESTARTED, str(restarts))
