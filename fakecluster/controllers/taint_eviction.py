"""The taint-eviction controller (``pkg/controller/tainteviction/taint_eviction.go``, GA 1.34 as a separate
controller; before that the same code ran inside the node lifecycle controller).

It deletes pods from nodes with ``NoExecute`` taints they do not tolerate:

- On a change of a node's ``NoExecute`` taints (``handleNodeUpdate``) every pod bound to the node is
  looked at; on a pod's binding or toleration change (``handlePodUpdate``) that pod is.
- ``processPodOnNode``: a pod that does not tolerate every ``NoExecute`` taint is deleted at once; one that
  tolerates them all is deleted after the smallest ``tolerationSeconds`` of the tolerations used (the first
  matching toleration per taint, ``GetMatchingTolerations``), counted from *when the controller saw the
  taint* (not the taint's ``timeAdded``); tolerations without seconds tolerate forever. An eviction already
  scheduled earlier stays. Removing the taints (the node is Ready again) cancels scheduled evictions.
- The deletion (``addConditionAndDeletePod``): ``DisruptionTarget=True``, reason ``DeletionByTaintManager``,
  message ``Taint manager: deleting due to NoExecute taint`` (verbatim) written to the pod's status, then a
  plain DELETE, so the pod's own grace period applies. On a dead node nobody completes that graceful
  deletion: the pod stays ``Terminating`` (and, with a podFailurePolicy, uncounted) until PodGC or the
  returning kubelet finishes it.

Terminal pods on the node are treated like any other, as upstream does. Work per event is O(pods on the
node). Events (``TaintManagerEviction``) are not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, disruption_target, update_pod_condition
from fakecluster.api.toleration import matching_tolerations
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock, Timer
from fakecluster.controllers.node_pods import NodePods, discard
from fakecluster.runtime import Controller

COMPONENT = "taint-eviction-controller"
TAINT_MANAGER_REASON = "DeletionByTaintManager"
TAINT_MANAGER_MESSAGE = "Taint manager: deleting due to NoExecute taint"
PodKey = tuple[str, str]
"""``(namespace, name)`` of a pod."""


class PodNodeIndex:
    """Pods by ``spec.nodeName``: the ``spec.nodeName`` indexer upstream controllers add to the shared pod
    informer (``getPodsAssignedToNode``). Fed by one watch; O(1) per pod event."""

    def __init__(self, client: Client) -> None:
        self._by_node: NodePods[None] = {}
        """Pod names by node and namespace. Not by node and a ``(namespace, name)`` key: a pod stays
        indexed until it is deleted, so that key would be a tuple of some 56 bytes of the index's own per
        pod, all run long; :meth:`pods_on` sorts by namespace, then by name within each, which is the
        ``(namespace, name)`` order."""
        for pod in client.list("Pod"):
            self._on_pod(WatchEvent("ADDED", "Pod", pod, None))
        client.watch("Pod", self._on_pod)

    def _on_pod(self, event: WatchEvent) -> None:
        spec = event.object["spec"]
        old = event.old
        if old is not None and old["spec"] is spec and event.type == "MODIFIED":
            return  # the very spec: indexed already (a pod's nodeName never changes); most writes
        node = spec.get("nodeName")
        if not node:
            return  # unbound
        meta = event.object["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        if event.type == "DELETED":
            discard(self._by_node, node, namespace, name)
        else:
            self._by_node.setdefault(node, {}).setdefault(namespace, {})[name] = None

    def pods_on(self, node: str) -> list[PodKey]:
        """Keys of the pods bound to ``node``, in (namespace, name) order."""
        namespaces = self._by_node.get(node, {})
        return [(namespace, name) for namespace in sorted(namespaces)
                for name in sorted(namespaces[namespace])]


def no_execute_taints(node: Obj | None) -> list[Obj]:
    """``getNoExecuteTaints``."""
    if node is None:
        return []
    return [t for t in (node.get("spec") or {}).get("taints") or () if t.get("effect") == "NoExecute"]


def min_toleration_seconds(tolerations: list[Obj]) -> float:
    """``getMinTolerationTime``: 0 without tolerations or with one of <= 0 s, -1 when none has seconds
    (tolerated forever), else the smallest ``tolerationSeconds``."""
    if not tolerations:
        return 0.0
    seconds = [t["tolerationSeconds"] for t in tolerations if t.get("tolerationSeconds") is not None]
    if not seconds:
        return -1.0
    return float(max(min(seconds), 0))


@dataclass(slots=True)
class _Work:
    """One pod's scheduled eviction (``TimedWorker``); ``timer`` is None once it has fired."""

    created_at: float
    fire_at: float
    timer: Timer | None


class TaintEvictionController:
    """Constructed by :class:`~fakecluster.controllers.node_lifecycle.NodeLifecycleController` (one pod
    index shared)."""

    def __init__(self, client: Client, clock: Clock, pods: PodNodeIndex | None = None) -> None:
        self._clock = clock
        self._client = client
        self._pods = pods if pods is not None else PodNodeIndex(self._client)
        self._tainted: dict[str, list[Obj]] = {}
        """``taintedNodes``: the NoExecute taints of every node that has some."""
        self._work: dict[PodKey, _Work] = {}
        self.errors: list[str] = []
        self.controller = Controller(self._clock, COMPONENT, self._handle)
        for node in self._client.list("Node"):
            if no_execute_taints(node):
                self.controller.enqueue(("Node", node["metadata"]["name"]))
        self._client.watch("Node", self._on_node)
        self._client.watch("Pod", self._on_pod)

    def scheduled_eviction(self, namespace: str, name: str) -> float | None:
        """When the pending eviction of that pod fires, if one is scheduled (for tests and reports)."""
        work = self._work.get((namespace, name))
        return None if work is None or work.timer is None else work.fire_at

    # ------------------------------------------------------------------ watch (NodeUpdated / PodUpdated)
    def _on_node(self, event: WatchEvent) -> None:
        if event.type == "MODIFIED" and no_execute_taints(event.old) == no_execute_taints(event.object):
            return
        self.controller.enqueue(("Node", event.object["metadata"]["name"]))

    def _on_pod(self, event: WatchEvent) -> None:
        pod, old = event.object, event.old
        if event.type == "MODIFIED" and old is not None and (old["spec"] is pod["spec"] or (
                old["spec"].get("nodeName") == pod["spec"].get("nodeName")
                and old["spec"].get("tolerations") == pod["spec"].get("tolerations"))):
            return
        node = pod["spec"].get("nodeName") or ""
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if event.type == "DELETED":
            if key not in self._work:
                return  # nothing to cancel
        elif node not in self._tainted:
            return  # handlePodUpdate would find no taints; a later taint is handled per node, index-wide
        self.controller.enqueue(("Pod", *key, node))

    # ------------------------------------------------------------------ workers
    def _handle(self, key: tuple[str, ...]) -> None:
        """Keys: ``("Node", name)`` or ``("Pod", namespace, name, node)``."""
        if key[0] == "Node":
            self._handle_node(key[1])
        else:
            _, namespace, name, node = key
            self._handle_pod(namespace, name, node)

    def _handle_node(self, name: str) -> None:
        """``handleNodeUpdate``."""
        try:
            node = self._client.get("Node", "", name)
        except NotFound:
            self._tainted.pop(name, None)  # scheduled evictions of its pods stay, as upstream
            return
        taints = no_execute_taints(node)
        if taints:
            self._tainted[name] = taints
        else:
            self._tainted.pop(name, None)
        pods = self._pods.pods_on(name)
        if not taints:
            for key in pods:
                self._cancel(key)
            return
        now = self._clock.now
        for key in pods:
            try:
                pod = self._client.get("Pod", key[0], key[1])
            except ApiError:
                continue
            self._process_pod_on_node(key, pod["spec"].get("tolerations") or [], taints, now)

    def _handle_pod(self, namespace: str, name: str, node: str) -> None:
        """``handlePodUpdate``."""
        key = (namespace, name)
        try:
            pod = self._client.get("Pod", namespace, name)
        except NotFound:
            self._cancel(key)
            return
        if not node or pod["spec"].get("nodeName") != node:
            return
        taints = self._tainted.get(node)
        if taints:
            self._process_pod_on_node(key, pod["spec"].get("tolerations") or [], taints, self._clock.now)

    def _process_pod_on_node(self, key: PodKey, tolerations: list[Obj], taints: list[Obj],
                             now: float) -> None:
        """``processPodOnNode``."""
        all_tolerated, used = matching_tolerations(taints, tolerations)
        if not all_tolerated:
            self._cancel(key)
            self._add_work(key, now, now)
            return
        seconds = min_toleration_seconds(used)
        if seconds < 0:
            self._cancel(key)
            return
        created_at, fire_at = now, now + seconds
        scheduled = self._work.get(key)
        if scheduled is not None:
            created_at = scheduled.created_at
            if created_at + seconds < fire_at:
                return
            self._cancel(key)
        self._add_work(key, created_at, fire_at)

    def _add_work(self, key: PodKey, created_at: float, fire_at: float) -> None:
        """``TimedWorkerQueue.AddWork``: skipped while a worker for the pod exists (also a finished one)."""
        if key in self._work:
            return
        timer = self._clock.call_at(fire_at, self._evict, key)
        self._work[key] = _Work(created_at, fire_at, timer)

    def _cancel(self, key: PodKey) -> None:
        """``CancelWork``."""
        work = self._work.pop(key, None)
        if work is not None and work.timer is not None:
            work.timer.cancel()

    def _evict(self, key: PodKey) -> None:
        """``deletePodHandler`` → ``addConditionAndDeletePod``."""
        work = self._work.get(key)
        if work is not None:
            work.timer = None
        namespace, name = key
        try:
            pod = self._client.get("Pod", namespace, name)
            status = dict(pod.get("status") or {})
            condition = disruption_target(TAINT_MANAGER_REASON, TAINT_MANAGER_MESSAGE)
            if update_pod_condition(status, condition, self._clock.timestamp()):
                update = dict(pod)
                update["status"] = status
                self._client.update_status(update)
            self._client.delete("Pod", namespace, name)
        except NotFound:
            pass
        except ApiError as err:
            if len(self.errors) < 20:
                self.errors.append(f"{self._clock.now:.3f}s {namespace}/{name}: {err.message}")
