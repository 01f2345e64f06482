"""The default scheduler, reduced to what decides *where* and *when* a JobSet pod lands.

Reproduces kube-scheduler's observable behaviour (``pkg/scheduler/schedule_one.go``,
``pkg/scheduler/internal/queue/scheduling_queue.go``):

- Input: pods without ``spec.nodeName``, for ``default-scheduler``, without ``deletionTimestamp`` and
  without ``schedulingGates``. Each is tried ``PodTimings.schedule`` (+ seeded jitter) after it appears,
  plus ``ClusterConfig.scheduler_latency``.
- Filters, in the default plugin order (``pkg/scheduler/apis/config/v1/default_plugins.go``):
  NodeUnschedulable, TaintToleration, NodeAffinity (``nodeSelector`` and required node affinity),
  NodeResourcesFit, PodTopologySpread and InterPodAffinity (:mod:`.interpod`: counts over the bound
  pods, computed once per cycle and only when the pod has required pod (anti-)affinity or
  ``DoNotSchedule`` spread constraints, or some bound pod has required anti-affinity). As in the
  framework's ``RunFilterPlugins``, a node reports the reasons of its first
  failing plugin only; NodeResourcesFit reports every insufficient resource
  (``pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest``).
- Score: LeastAllocated over cpu and memory with the scheduler's non-zero defaults for pods that request
  nothing (100m cpu, 200Mi memory: ``pkg/scheduler/util/pod_resources.go``), so request-less pods spread
  instead of piling onto one node. Ties go to the node name (upstream picks at random among the best).
- Binding goes through the API server's ``pods/binding`` subresource (:meth:`ApiServer.bind`).
- A pod that fits nowhere gets ``PodScheduled=False``, reason ``Unschedulable``, with the upstream
  ``FitError`` message (``pkg/scheduler/framework/types.go``) and the DefaultPreemption post-filter
  message; it is parked and retried only when a cluster event could make it fit (a pod on some node
  finished or went away, a node was added or changed; for a pod that failed an inter-pod filter, also
  a pod was bound: the queueing hints of InterPodAffinity/PodTopologySpread), after the scheduling-queue
  back-off
  (1 s doubling to 10 s since its last attempt: ``DefaultPodInitialBackoffDuration`` /
  ``DefaultPodMaxBackoffDuration``). There is no polling.

Allocation is a per-node running tally, updated O(1) per pod event: pods count from the moment they are
bound until they are ``Succeeded``/``Failed`` or gone; terminating pods still count (as upstream).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.client.events import EventRecorder
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock
from fakecluster.kubelet.pod_timings import BehaviourResolver
from fakecluster.runtime import Controller, NamespacedName, capped_backoff
from fakecluster.scheduler.filters import (
    DEFAULT_SCHEDULER,
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    TERMINAL_PHASES,
    NodeInfo,
    PodRequest,
    filter_node,
    fit_error_message,
    least_allocated,
    pod_request,
    scheduling_signature,
)
from fakecluster.scheduler.interpod import (
    InterPodState,
    PlacedPod,
    PodConstraints,
    prefilter,
    required_terms,
)


@dataclass(slots=True)
class _QueuedPod:
    uid: str
    spec: Obj
    """The pod's spec from the store's snapshot (immutable: the store is copy-on-write)."""
    request: PodRequest
    signature: str | None = None
    """:func:`scheduling_signature` of ``spec``: computed when the pod is first parked, since most pods
    fit at once and never need it."""
    attempts: int = 0
    last_attempt: float = 0.0
    reserved_on: str | None = None
    """Node on which the last retry pass counted this pod in, to let the right number of pods retry."""
    interpod: bool = False
    """Parked in ``Scheduler._interpod_parked`` (an inter-pod filter failed) rather than by signature."""


@dataclass(slots=True)
class _Assigned(PlacedPod):
    """A bound pod in its node's tally: its placement, which the inter-pod filters read (the record is
    it: one object per running pod, not a record and a placement, some 70 bytes less), and its request.
    Never changed: a released pod's record is replaced (:meth:`Scheduler._released`)."""

    request: PodRequest
    released: bool = False


class Scheduler:
    """kube-scheduler for the fake cluster.

    ``client``: its API access (user ``system:kube-scheduler``); ``rng``: its own seeded stream (the
    per-pod scheduling jitter); ``behaviour``: each pod's timings (its ``schedule`` delay and jitter);
    ``latency``: the watch-to-attempt delay of its queue."""

    def __init__(self, client: Client, clock: Clock, rng: random.Random, *,
                 behaviour: BehaviourResolver, latency: float = 0.0) -> None:
        self.client = client
        self.clock = clock
        self._rng = rng
        self._behaviour = behaviour
        self._nodes: dict[str, NodeInfo] = {}
        self._queued: dict[tuple[str, str], _QueuedPod] = {}
        """Pods waiting for a scheduling attempt or parked as unschedulable, by (namespace, name)."""
        self._parked: dict[str, dict[tuple[str, str], None]] = {}
        """Unschedulable pods by scheduling signature, each group in the order its pods failed."""
        self._assigned: dict[str, _Assigned] = {}
        """Bound pods by uid and the node whose tally they are in; a released one (finished, its node's
        resources free again) as a record shared with the others of its request (:meth:`_released`)."""
        self._last_released: _Assigned | None = None
        """The last record :meth:`_released` made."""
        self._changed_nodes: dict[str, None] = {}
        self._flush_pending = False
        self._with_anti: dict[str, None] = {}
        """Bound, unreleased pods with required pod anti-affinity (``PodsWithRequiredAntiAffinity``)."""
        self._interpod_parked: dict[tuple[str, str], None] = {}
        """Unschedulable pods that failed an inter-pod filter: a bound pod coming or going may let them in."""
        self._interpod_wake = False
        self._last_request: tuple[object, object, object, PodRequest] | None = None
        """:meth:`_request`'s memo: the containers, init containers and overhead it was computed from."""
        self.events: EventRecorder | None = None
        """``Scheduled`` / ``FailedScheduling`` Events, when the cluster records pod Events (opt-in, as the
        kubelet's: :mod:`fakecluster.kubelet.events`); written through events.k8s.io/v1 with series."""
        self.controller = Controller(self.clock, "scheduler", self._schedule_one,
                                     latency=latency)
        for node in self.client.list("Node"):
            self._nodes[node["metadata"]["name"]] = NodeInfo.from_node(node)
        self.client.watch("Node", self._on_node)
        self.client.watch("Pod", self._on_pod)

    # ------------------------------------------------------------------ events
    def _on_node(self, event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        if event.type == "DELETED":
            self._nodes.pop(name, None)
            return
        fresh = NodeInfo.from_node(event.object)
        old = self._nodes.get(name)
        if old is not None:
            fresh.requested, fresh.pod_count = old.requested, old.pod_count
            fresh.nonzero_cpu, fresh.nonzero_memory = old.nonzero_cpu, old.nonzero_memory
        self._nodes[name] = fresh
        self._capacity_changed(name)

    def _on_pod(self, event: WatchEvent) -> None:
        pod = event.object
        spec = pod["spec"]
        node = spec.get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        old = event.old
        if event.type == "MODIFIED" and node and old is not None and old["spec"] is spec \
                and (old.get("status") or {}).get("phase") == phase:
            # Most pod writes are kubelet status updates of a bound pod that leave its phase alone:
            # the previous event already assumed or released it and dropped it from the queue.
            return
        meta = pod["metadata"]
        uid = meta["uid"]
        key = (meta.get("namespace", ""), meta["name"])
        if event.type == "DELETED":
            self._release(uid, forget=True)
            self._drop(key, uid)
            return
        if node:
            if phase in TERMINAL_PHASES:
                self._release(uid)
            elif uid not in self._assigned:
                queued = self._queued.get(key)
                request = queued.request if queued is not None and queued.uid == uid else self._request(spec)
                self._assume(uid, node, request, pod)
            if key in self._queued:  # a bound pod is queued only until its binding's event: no call then
                self._drop(key, uid)
            return
        if meta.get("deletionTimestamp") is not None or not self._wants(spec):
            self._drop(key, uid)
            return
        queued = self._queued.get(key)
        if queued is not None and queued.uid == uid:
            if spec is not queued.spec and spec != queued.spec:  # e.g. tolerations added: retry now
                self._unpark(key, queued)
                queued.spec, queued.request, queued.signature = spec, self._request(spec), None
                self.controller.enqueue(key)
            return
        request = self._request(spec)
        self._queued[key] = _QueuedPod(uid, spec, request)
        timings = self._behaviour(pod)
        delay = timings.schedule
        if timings.jitter_by_phase:
            amount = timings.jitter_of("schedule")
            if amount > 0:
                delay += round(self._rng.uniform(0.0, amount), 6)
        elif timings.jitter > 0:
            delay += self._rng.uniform(0.0, timings.jitter)
        if delay != math.inf:
            self.controller.enqueue(key, after=delay)

    def _request(self, spec: Obj) -> PodRequest:
        """:func:`pod_request`, the previous result again if the spec holds the very container lists and
        overhead it was computed from: a Job's pods share their template's container list, and come one
        after another, so they share one request (and its resources dict) instead of one each, all run
        long (the tally of a bound pod keeps it). Safe: a stored object is never changed, nor is a
        request (nobody writes to its ``resources``); the memo holds the lists, so an identity it compares
        with is never another list's."""
        containers, init, overhead = spec.get("containers"), spec.get("initContainers"), spec.get("overhead")
        last = self._last_request
        if last is not None and last[0] is containers and last[1] is init and last[2] is overhead:
            return last[3]
        request = pod_request(spec)
        self._last_request = (containers, init, overhead, request)
        return request

    @staticmethod
    def _wants(spec: Obj) -> bool:
        scheduler = spec.get("schedulerName") or DEFAULT_SCHEDULER
        return scheduler == DEFAULT_SCHEDULER and not spec.get("schedulingGates")

    def _drop(self, key: tuple[str, str], uid: str) -> None:
        queued = self._queued.get(key)
        if queued is not None and queued.uid == uid:
            del self._queued[key]
            self._unpark(key, queued)

    def _unpark(self, key: tuple[str, str], queued: _QueuedPod) -> None:
        if queued.interpod:
            queued.interpod = False
            self._interpod_parked.pop(key, None)
            return
        if queued.signature is None:
            return  # never parked
        group = self._parked.get(queued.signature)
        if group is not None and key in group:
            del group[key]
            if not group:
                del self._parked[queued.signature]

    # ------------------------------------------------------------------ allocation tally
    def _assume(self, uid: str, node_name: str, request: PodRequest, pod: Obj) -> None:
        if uid in self._assigned:
            return
        meta = pod["metadata"]
        namespace = meta.get("namespace", "")
        anti = required_terms(namespace, pod["spec"], "podAntiAffinity")
        self._assigned[uid] = _Assigned(namespace, meta.get("labels") or {}, node_name, anti, request)
        if anti:
            self._with_anti[uid] = None
        node = self._nodes.get(node_name)
        if node is not None:
            node.add(request, +1)
        if self._interpod_parked:
            self._wake_interpod()

    def _release(self, uid: str, *, forget: bool = False) -> None:
        """A bound pod finished or went away: its node's resources are free again."""
        assigned = self._assigned.pop(uid, None) if forget else self._assigned.get(uid)
        if assigned is None or assigned.released:
            return
        if not forget:
            self._assigned[uid] = self._released(assigned.request)  # (forgotten: it is gone already)
        self._with_anti.pop(uid, None)
        node = self._nodes.get(assigned.node)
        if node is not None:
            node.add(assigned.request, -1)
            self._capacity_changed(assigned.node)

    def _released(self, request: PodRequest) -> _Assigned:
        """The record a released pod keeps until it is deleted: that it was assigned (so a later event
        of it never assumes it again) and released, and its request. All a released record is ever
        asked is :attr:`_Assigned.released` (and tests its request), so the pods of equal requests (a
        Job's, one after another) share one instead of each keeping its own, its placement and its
        request, some 250 bytes a finished pod, all run long."""
        last = self._last_released
        if last is None or (last.request is not request and last.request != request):
            last = self._last_released = _Assigned("", {}, "", (), request, True)
        return last

    def _capacity_changed(self, node_name: str) -> None:
        """Queue a single retry pass over parked pods for this instant (``MoveAllToActiveOrBackoffQueue``
        on an assigned-pod-delete / node-add / node-update event)."""
        if self._interpod_parked:
            self._wake_interpod()
        if not self._parked:
            return
        self._changed_nodes[node_name] = None
        if not self._flush_pending:
            self._flush_pending = True
            self.clock.call_soon(self._flush_unschedulable)

    def _wake_interpod(self) -> None:
        self._interpod_wake = True
        if not self._flush_pending:
            self._flush_pending = True
            self.clock.call_soon(self._flush_unschedulable)

    def _flush_unschedulable(self) -> None:
        """Move parked pods that now fit one of the changed nodes back to the queue, after their back-off
        (upstream's queueing hints for NodeResourcesFit/NodeAffinity/TaintToleration).

        Each moved pod is counted in on the node it fits until this pass ends, so a node that freed room
        for one pod releases one pod, not every parked pod (upstream moves them all and lets all but one
        fail again). Parked pods are grouped by signature: the first of a group that does not fit ends
        the group's scan, so a pass costs O(groups + moved pods), not O(parked pods).
        """
        self._flush_pending = False
        if self._interpod_wake:
            self._interpod_wake = False
            for key in list(self._interpod_parked):
                self._requeue_after_backoff(key, self._queued[key])
        changed = [self._nodes[n] for n in self._changed_nodes if n in self._nodes]
        self._changed_nodes.clear()
        reservations: list[tuple[NodeInfo, PodRequest]] = []
        for signature, group in list(self._parked.items()):
            for key in list(group):
                queued = self._queued[key]
                node = next((n for n in changed if not filter_node(queued.spec, queued.request, n)[0]), None)
                if node is None:
                    break
                node.add(queued.request, +1)
                reservations.append((node, queued.request))
                queued.reserved_on = node.name
                del group[key]
                self._requeue_after_backoff(key, queued)
            if not group:
                del self._parked[signature]
        for node, request in reservations:
            node.add(request, -1)

    def _requeue_after_backoff(self, key: tuple[str, str], queued: _QueuedPod) -> None:
        if queued.interpod:
            queued.interpod = False
            del self._interpod_parked[key]
        backoff = capped_backoff(INITIAL_BACKOFF, queued.attempts - 1, MAX_BACKOFF)
        self.controller.enqueue(key, after=max(queued.last_attempt + backoff - self.clock.now, 0.0))

    # ------------------------------------------------------------------ scheduling cycle
    def _schedule_one(self, key: NamespacedName) -> None:
        """One scheduling cycle (``ScheduleOne``): filter, score, bind or record the failure."""
        namespace, name = key
        queued = self._queued.get(key)
        if queued is None:
            return
        try:
            pod = self.client.get("Pod", namespace, name)
        except ApiError:
            return
        spec = pod["spec"]
        meta = pod["metadata"]
        if meta["uid"] != queued.uid or spec.get("nodeName") or meta.get("deletionTimestamp") is not None:
            return
        queued.attempts += 1
        queued.last_attempt = self.clock.now
        reserved_on, queued.reserved_on = queued.reserved_on, None
        best: NodeInfo | None = None
        best_score = -math.inf
        failures: list[tuple[list[str], bool]] = []
        constraints = PodConstraints.of(pod) if _has_interpod_constraints(spec) else None
        if constraints is not None and not constraints.any:
            constraints = None  # only preferred terms or ScheduleAnyway constraints: no filter
        state: InterPodState | None = None
        interpod_failed = constraints is not None
        for node in self._nodes.values():
            reasons, unresolvable = filter_node(spec, queued.request, node)
            if not reasons and (constraints is not None or self._with_anti):
                if state is None:
                    state = self._prefilter(pod, constraints)
                reasons, unresolvable = state.filter(node)
                interpod_failed = interpod_failed or bool(reasons)
            if reasons:
                failures.append((reasons, unresolvable))
                continue
            score = least_allocated(node, queued.request)
            if score > best_score or (score == best_score and best is not None and node.name < best.name):
                best, best_score = node, score
        if reserved_on is not None and (best is None or best.name != reserved_on):
            self._capacity_changed(reserved_on)  # the room counted for this pod is free for another
        if best is None:
            if interpod_failed:
                queued.interpod = True
                self._interpod_parked[key] = None
            else:
                if queued.signature is None:
                    queued.signature = scheduling_signature(queued.spec, queued.request)
                self._parked.setdefault(queued.signature, {})[key] = None
            self._record_failure(pod, fit_error_message(len(self._nodes), failures))
            return
        self.client.bind(namespace, name, best.name)
        if self.events is not None:
            self.events.eventf(pod, None, "Normal", "Scheduled", "Binding",
                               f"Successfully assigned {namespace}/{name} to {best.name}")
        self._assume(queued.uid, best.name, queued.request, pod)
        self._drop(key, queued.uid)

    def _prefilter(self, pod: Obj, constraints: PodConstraints | None) -> InterPodState:
        constraints = constraints or PodConstraints.of(pod)
        placed = (a for a in self._assigned.values() if not a.released) if constraints.any else ()
        with_anti = (self._assigned[uid] for uid in self._with_anti)
        return prefilter(constraints, pod["spec"], placed, with_anti, self._nodes)

    def _record_failure(self, pod: Obj, message: str) -> None:
        """``PodScheduled=False/Unschedulable`` via the status subresource (``updatePod`` in
        ``schedule_one.go handleSchedulingFailure``); the transition time moves only on a status change.
        Every failed attempt is a ``FailedScheduling`` event (with pod Events on), folded into a series."""
        if self.events is not None:
            self.events.eventf(pod, None, "Warning", "FailedScheduling", "Scheduling", message)
        status = pod.get("status") or {}
        conditions = status.get("conditions") or []
        old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if old is not None and old.get("status") == "False" and old.get("reason") == "Unschedulable" \
                and old.get("message") == message:
            return
        since = old["lastTransitionTime"] if old is not None and old.get("status") == "False" \
            else self.clock.timestamp()
        condition = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                     "lastTransitionTime": since, "reason": "Unschedulable", "message": message}
        new_status = dict(status)
        new_status["conditions"] = [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]
        update = dict(pod)
        update["status"] = new_status
        self.client.update_status(update)


def _has_interpod_constraints(spec: Obj) -> bool:
    """Whether a pod spec may have required pod (anti-)affinity or spread constraints (cheap test)."""
    if spec.get("topologySpreadConstraints"):
        return True
    affinity = spec.get("affinity") or {}
    return bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
