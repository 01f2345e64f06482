"""The pod garbage collector (``pkg/controller/podgc/gc_controller.go``), for what a lost node leaves behind.

With the kubelet gone a deleted pod stays ``Terminating`` (phase still ``Running``) for good: only the
kubelet completes a graceful deletion (``pkg/kubelet/status/status_manager.go``). PodGC is what finishes
such pods, in the passes upstream runs every ``gcCheckPeriod`` (20 s):

- ``gcTerminating``: a terminating pod on a node that is not Ready *and* has the
  ``node.kubernetes.io/out-of-service`` taint (any effect; NodeOutOfServiceVolumeDetach, GA 1.28) is marked
  ``Failed`` and force-deleted (grace 0);
- ``gcOrphaned``: pods bound to a node that no longer exists. A missing node is first quarantined for 40 s
  (``quarantineTime``) and checked against the API server again; then each of its pods is marked
  ``Failed`` with ``DisruptionTarget=True``, reason ``DeletionByPodGC``, message
  ``PodGC: node no longer exists`` (verbatim from ``gcOrphaned``), and force-deleted;
- ``gcUnscheduledTerminating``: terminating pods that were never bound are marked ``Failed`` and
  force-deleted.

"Marked Failed" is ``markFailedAndDeletePodWithCondition``: a status write (``phase: Failed``, plus the
condition if any) for a pod not already terminal, then ``DELETE`` with grace 0. A pod with finalizers (Job
pods' tracking finalizer) then waits for them: the Job controller counts it as failed first, and a
podFailurePolicy sees the ``DisruptionTarget`` condition the taint manager (or PodGC) left on it.

Passes fall on the multiples of 20 s of virtual time (the controller started with the cluster), but only
while there is something to collect, so an idle cluster stays quiescent; candidates are tracked from watch
events (O(1) per pod event), never by scanning every pod. ``gcTerminated`` (more than 12500 terminated
pods) is not emulated.
"""

from __future__ import annotations

import math

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, disruption_target, update_pod_condition
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock, Timer
from fakecluster.controllers.node_pods import NodePods, discard

COMPONENT = "pod-garbage-collector"
GC_CHECK_PERIOD = 20.0
QUARANTINE_TIME = 40.0
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"
PODGC_REASON = "DeletionByPodGC"
PODGC_MESSAGE = "PodGC: node no longer exists"
PodKey = tuple[str, str]
"""``(namespace, name)`` of a pod."""
PodIndex = NodePods[str]
"""Pods by node, then namespace, then name, with their uid (:mod:`~fakecluster.controllers.node_pods`):
no ``(namespace, name)`` key of this controller's own per bound pod, some 56 bytes each all run long;
every reader sorts the pods by ``(namespace, name)`` (:func:`_sorted`), which a sort by namespace and
then by name within each is."""


def _node_ready(node: Obj) -> bool:
    """``nodeutil.IsNodeReady``."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


def _out_of_service(node: Obj) -> bool:
    return any(t.get("key") == OUT_OF_SERVICE_TAINT for t in (node.get("spec") or {}).get("taints") or ())


class PodGC:
    """Constructed by :class:`~fakecluster.cluster.Cluster`."""

    def __init__(self, client: Client, clock: Clock, *, gc_check_period: float = GC_CHECK_PERIOD,
                 quarantine_time: float = QUARANTINE_TIME) -> None:
        self._clock = clock
        self._client = client
        self.gc_check_period = gc_check_period
        self.quarantine_time = quarantine_time
        self._nodes: dict[str, Obj] = {}
        self._bound: PodIndex = {}
        """Pods by node, with their uid: the candidates of ``gcOrphaned``."""
        self._terminating: PodIndex = {}
        """Terminating pods by node ("" for unbound): ``gcTerminating`` and ``gcUnscheduledTerminating``."""
        self._quarantine: dict[str, float] = {}
        """Missing nodes and when their quarantine ends (the ``nodeQueue`` with ``AddAfter``)."""
        self._handled: dict[str, None] = {}
        """Uids of pods this controller already failed and force-deleted (they may linger on finalizers)."""
        self._timer: Timer | None = None
        self.passes = 0
        self.errors: list[str] = []
        for node in self._client.list("Node"):
            self._nodes[node["metadata"]["name"]] = node
        for pod in self._client.list("Pod"):
            self._on_pod(WatchEvent("ADDED", "Pod", pod, None))
        self._client.watch("Node", self._on_node)
        self._client.watch("Pod", self._on_pod)

    # ------------------------------------------------------------------ watch: keep the candidates
    def _on_node(self, event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        if event.type == "DELETED":
            self._nodes.pop(name, None)
            if self._bound.get(name):
                self._schedule()
            return
        self._nodes[name] = event.object
        if self._terminating.get(name) and self._collectable(name):
            self._schedule()

    def _on_pod(self, event: WatchEvent) -> None:
        pod = event.object
        meta = pod["metadata"]
        spec = pod["spec"]
        node = spec.get("nodeName") or ""
        old = event.old
        if event.type == "MODIFIED" and old is not None and old["spec"] is spec \
                and old["metadata"].get("deletionTimestamp") == meta.get("deletionTimestamp"):
            # Same node, same deletion state (most writes are status updates): indexed already.
            if node and node not in self._nodes:
                self._schedule()
            return
        namespace, name = meta.get("namespace", ""), meta["name"]
        uid = meta["uid"]
        if event.type == "DELETED":
            discard(self._bound, node, namespace, name)
            discard(self._terminating, node, namespace, name)
            self._handled.pop(uid, None)
            return
        if node:
            self._bound.setdefault(node, {}).setdefault(namespace, {})[name] = uid
            if node not in self._nodes:
                self._schedule()
        if meta.get("deletionTimestamp") is not None \
                and name not in self._terminating.get(node, {}).get(namespace, ()):
            self._terminating.setdefault(node, {}).setdefault(namespace, {})[name] = uid
            if not node or self._collectable(node):
                self._schedule()

    def _collectable(self, node_name: str) -> bool:
        """Whether ``gcTerminating`` takes the terminating pods of this node."""
        node = self._nodes.get(node_name)
        return node is not None and not _node_ready(node) and _out_of_service(node)

    def _schedule(self) -> None:
        """Make sure the next pass (the next multiple of the check period) is due."""
        if self._timer is None:
            when = (math.floor(self._clock.now / self.gc_check_period) + 1) * self.gc_check_period
            self._timer = self._clock.call_at(when, self._gc)

    # ------------------------------------------------------------------ the pass
    def _gc(self) -> None:
        """``gc``: gcTerminating, gcOrphaned, gcUnscheduledTerminating, on the pods as they were at the
        start of the pass."""
        self._timer = None
        self.passes += 1
        now = self._clock.now
        terminating = [(node, _sorted(pods)) for node, pods in sorted(self._terminating.items())]
        bound = {node: _sorted(pods) for node, pods in self._bound.items() if pods}
        for node, pods in terminating:
            if node and self._collectable(node):
                for key, uid in pods:
                    self._mark_failed_and_delete(key, uid, None)
        for node in sorted(bound):
            if node not in self._nodes and node not in self._quarantine \
                    and any(uid not in self._handled for _, uid in bound[node]):
                self._quarantine[node] = now + self.quarantine_time
        for node in sorted(n for n, until in self._quarantine.items() if until <= now):
            del self._quarantine[node]
            if node in self._nodes or self._node_exists(node):
                continue
            for key, uid in bound.get(node, ()):
                self._mark_failed_and_delete(key, uid, disruption_target(PODGC_REASON, PODGC_MESSAGE))
        for node, pods in terminating:
            if not node:
                for key, uid in pods:
                    self._mark_failed_and_delete(key, uid, None)
        if self._quarantine:
            self._schedule()

    def _node_exists(self, name: str) -> bool:
        """``checkIfNodeExists``: ask the API server, not the cache."""
        try:
            self._client.get("Node", "", name)
        except ApiError:
            return False
        return True

    def _mark_failed_and_delete(self, key: PodKey, uid: str, condition: Obj | None) -> None:
        """``markFailedAndDeletePodWithCondition``."""
        namespace, name = key
        try:
            pod = self._client.get("Pod", namespace, name)
            if pod["metadata"]["uid"] != uid:
                return
            status = pod.get("status") or {}
            if status.get("phase") not in ("Succeeded", "Failed"):
                status = dict(status, phase="Failed")
                if condition is not None:
                    update_pod_condition(status, condition, self._clock.timestamp())
                self._client.update_status({**pod, "status": status})
            self._handled[uid] = None  # before the delete: its DELETED event forgets the uid
            self._client.delete("Pod", namespace, name, grace_period_seconds=0, preconditions={"uid": uid})
        except NotFound:
            pass
        except ApiError as err:
            if len(self.errors) < 20:
                self.errors.append(f"{self._clock.now:.3f}s {namespace}/{name}: {err.message}")


def _sorted(namespaces: dict[str, dict[str, str]]) -> list[tuple[PodKey, str]]:
    """One node's pods of a :data:`PodIndex`, ``((namespace, name), uid)``, in (namespace, name) order."""
    return [((namespace, name), uid) for namespace in sorted(namespaces)
            for name, uid in sorted(namespaces[namespace].items())]
