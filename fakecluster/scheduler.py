"""The default scheduler, reduced to what decides *where* and *when* a JobSet pod lands.

Reproduces kube-scheduler's observable behaviour (reference: shared/reference/kubernetes.md §3):

- Input: pods without ``spec.nodeName``, for ``default-scheduler``, without ``deletionTimestamp`` and
  without ``schedulingGates``. Each is tried ``PodTimings.schedule`` (+ seeded jitter) after it appears,
  plus ``ClusterConfig.scheduler_latency``.
- Filters, in the default plugin order (``pkg/scheduler/apis/config/v1/default_plugins.go``):
  NodeUnschedulable, TaintToleration, NodeAffinity (``nodeSelector`` and required node affinity),
  NodeResourcesFit. As in the framework's ``RunFilterPlugins``, a node reports the reasons of its first
  failing plugin only; NodeResourcesFit reports every insufficient resource
  (``pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest``).
- Score: LeastAllocated over cpu and memory with the scheduler's non-zero defaults for pods that request
  nothing (100m cpu, 200Mi memory: ``pkg/scheduler/util/pod_resources.go``), so request-less pods spread
  instead of piling onto one node. Ties go to the node name (upstream picks at random among the best).
- Binding goes through the API server's ``pods/binding`` subresource (:meth:`ApiServer.bind`).
- A pod that fits nowhere gets ``PodScheduled=False``, reason ``Unschedulable``, with the upstream
  ``FitError`` message (``pkg/scheduler/framework/types.go``) and the DefaultPreemption post-filter
  message; it is parked and retried only when a cluster event could make it fit (a pod on some node
  finished or went away, a node was added or changed), after the scheduling-queue back-off
  (1 s doubling to 10 s since its last attempt: ``DefaultPodInitialBackoffDuration`` /
  ``DefaultPodMaxBackoffDuration``). There is no polling.

Allocation is a per-node running tally, updated O(1) per pod event: pods count from the moment they are
bound until they are ``Succeeded``/``Failed`` or gone; terminating pods still count (as upstream).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from fakecluster.api.quantity import parse_quantity
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.server import WatchEvent
from fakecluster.objects import Obj
from fakecluster.runtime import Controller

if TYPE_CHECKING:
    from fakecluster.cluster import Cluster

DEFAULT_SCHEDULER = "default-scheduler"
TERMINAL_PHASES = ("Succeeded", "Failed")
DEFAULT_MILLI_CPU_REQUEST = 100
"""``schedutil.DefaultMilliCPURequest``: what scoring assumes for a container without a cpu request."""
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
"""``schedutil.DefaultMemoryRequest``."""
INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0

REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
"""What a pod must tolerate to land on a cordoned node (NodeUnschedulable plugin)."""
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_TOO_MANY_PODS = "Too many pods"
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_PREEMPTION_VICTIMS = "No preemption victims found for incoming pod"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@lru_cache(maxsize=4096)
def _amount(resource: str, value: str) -> int:
    """A quantity as the scheduler's integer: cpu in millicores, everything else in units, rounded up
    (``Quantity.MilliValue`` / ``Quantity.Value`` round away from zero)."""
    quantity = parse_quantity(value)
    return math.ceil(quantity * 1000) if resource == "cpu" else math.ceil(quantity)


def _container_requests(container: Obj) -> dict[str, int]:
    """Requests of one container; limits stand in for missing requests (``SetDefaults_Pod``)."""
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    out: dict[str, int] = {}
    for name in (*requests, *(k for k in limits if k not in requests)):
        value = requests.get(name, limits.get(name))
        if value is not None:
            out[name] = _amount(name, str(value))
    return out


@dataclass(frozen=True, slots=True)
class PodRequest:
    """What a pod asks of a node: effective requests and the non-zero cpu/memory used for scoring."""

    resources: dict[str, int]
    nonzero_cpu: int
    nonzero_memory: int


def pod_request(spec: Obj) -> PodRequest:
    """``resourcehelper.PodRequests``: the sum over containers and native sidecars, raised to the largest
    regular init container (each runs alone, next to the sidecars started before it), plus overhead."""
    total: dict[str, int] = {}
    nonzero_cpu = nonzero_memory = 0
    for container in spec.get("containers") or ():
        requests = _container_requests(container)
        for name, value in requests.items():
            total[name] = total.get(name, 0) + value
        nonzero_cpu += requests.get("cpu") or DEFAULT_MILLI_CPU_REQUEST
        nonzero_memory += requests.get("memory") or DEFAULT_MEMORY_REQUEST
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in spec.get("initContainers") or ():
        requests = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            for name, value in requests.items():
                sidecars[name] = sidecars.get(name, 0) + value
                total[name] = total.get(name, 0) + value
            continue
        for name, value in requests.items():
            init_peak[name] = max(init_peak.get(name, 0), value + sidecars.get(name, 0))
    for name, value in init_peak.items():
        total[name] = max(total.get(name, 0), value)
    for name, value in (spec.get("overhead") or {}).items():
        total[name] = total.get(name, 0) + _amount(name, str(value))
    return PodRequest(total, nonzero_cpu, nonzero_memory)


@dataclass(slots=True)
class NodeInfo:
    """The scheduler cache's view of one node (``framework.NodeInfo``)."""

    name: str
    labels: dict[str, str]
    taints: list[Obj]
    """NoSchedule/NoExecute taints, including the not-ready/unreachable taint the node lifecycle
    controller would add for a node whose Ready condition is not True."""
    unschedulable: bool
    allocatable: dict[str, int]
    allowed_pods: int
    allocatable_cpu: int = 0
    allocatable_memory: int = 0
    requested: dict[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    pod_count: int = 0

    @classmethod
    def from_node(cls, node: Obj) -> NodeInfo:
        status = node.get("status") or {}
        spec = node.get("spec") or {}
        allocatable = {name: _amount(name, str(value))
                       for name, value in (status.get("allocatable") or status.get("capacity") or {}).items()}
        allowed_pods = allocatable.pop("pods", 110)
        taints = [t for t in spec.get("taints") or () if t.get("effect") in ("NoSchedule", "NoExecute")]
        conditions = status.get("conditions") or ()
        ready = next((c.get("status") for c in conditions if c.get("type") == "Ready"), "True")
        if ready != "True":
            key = "node.kubernetes.io/not-ready" if ready == "False" else "node.kubernetes.io/unreachable"
            if not any(t.get("key") == key and t.get("effect") == "NoSchedule" for t in taints):
                taints.append({"key": key, "effect": "NoSchedule"})
        return cls(node["metadata"]["name"], dict(node["metadata"].get("labels") or {}), taints,
                   bool(spec.get("unschedulable")), allocatable, allowed_pods,
                   allocatable.get("cpu", 0), allocatable.get("memory", 0))

    def add(self, request: PodRequest, sign: int) -> None:
        for name, value in request.resources.items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        self.nonzero_cpu += sign * request.nonzero_cpu
        self.nonzero_memory += sign * request.nonzero_memory
        self.pod_count += sign


def _tolerates(toleration: Obj, taint: Obj) -> bool:
    """``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go)."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def _expression_matches(expr: Obj, labels: dict[str, str]) -> bool:
    """``nodeaffinity`` requirement: In/NotIn/Exists/DoesNotExist/Gt/Lt against node labels."""
    key, operator, values = expr.get("key", ""), expr.get("operator"), expr.get("values") or ()
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _term_matches(term: Obj, node: NodeInfo) -> bool:
    """A NodeSelectorTerm: its expressions and fields are ANDed; an empty term matches nothing."""
    expressions = term.get("matchExpressions") or ()
    fields = term.get("matchFields") or ()
    if not expressions and not fields:
        return False
    fields_view = {"metadata.name": node.name}
    return (all(_expression_matches(e, node.labels) for e in expressions)
            and all(_expression_matches(f, fields_view) for f in fields))


def node_affinity_matches(spec: Obj, node: NodeInfo) -> bool:
    """NodeAffinity filter: ``nodeSelector`` AND any of the required ``nodeSelectorTerms``."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != value:
            return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if required is None:
        return True
    return any(_term_matches(term, node) for term in required.get("nodeSelectorTerms") or ())


def filter_node(spec: Obj, request: PodRequest, node: NodeInfo) -> tuple[list[str], bool]:
    """Run the filter plugins on one node: ([] if it fits, else the first failing plugin's reasons;
    whether preemption could not help on this node, i.e. ``UnschedulableAndUnresolvable``)."""
    if node.unschedulable or node.taints:
        tolerations = spec.get("tolerations") or ()
        if node.unschedulable and not any(_tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations):
            return [REASON_UNSCHEDULABLE], True
        for taint in node.taints:
            if not any(_tolerates(t, taint) for t in tolerations):
                key, value = taint.get("key", ""), taint.get("value") or ""
                return [f"node(s) had untolerated taint {{{key}: {value}}}"], True
    if ("nodeSelector" in spec or "affinity" in spec) and not node_affinity_matches(spec, node):
        return [REASON_NODE_AFFINITY], True
    reasons: list[str] = []
    unresolvable = False
    if node.pod_count + 1 > node.allowed_pods:
        reasons.append(REASON_TOO_MANY_PODS)
    for name, value in request.resources.items():
        if value <= 0:
            continue
        allocatable = node.allocatable.get(name)
        if allocatable is None and name == "ephemeral-storage":
            continue  # our Node objects rarely advertise it; real nodes always do and have plenty
        allocatable = allocatable or 0
        if value > allocatable - node.requested.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or value > allocatable
    return reasons, unresolvable


def _histogram(counts: dict[str, int]) -> str:
    """``FitError.Error``'s reason histogram: "<count> <reason>" strings, sorted as strings."""
    return ", ".join(sorted(f"{count} {reason}" for reason, count in counts.items()))


def fit_error_message(total_nodes: int, failures: list[tuple[list[str], bool]]) -> str:
    """``0/N nodes are available: <histogram>. preemption: 0/N nodes are available: <histogram>.``"""
    if total_nodes == 0:
        return NO_NODES_AVAILABLE
    reasons: dict[str, int] = {}
    preemption: dict[str, int] = {}
    for node_reasons, unresolvable in failures:
        for reason in node_reasons:
            reasons[reason] = reasons.get(reason, 0) + 1
        outcome = PREEMPTION_NOT_HELPFUL if unresolvable else NO_PREEMPTION_VICTIMS
        preemption[outcome] = preemption.get(outcome, 0) + 1
    return (f"0/{total_nodes} nodes are available: {_histogram(reasons)}. "
            f"preemption: 0/{total_nodes} nodes are available: {_histogram(preemption)}.")


def scheduling_signature(spec: Obj, request: PodRequest) -> str:
    """Everything :func:`filter_node` reads from a pod. Pods of one template share it, so when one of
    them does not fit a node, none of the others does either."""
    affinity = (spec.get("affinity") or {}).get("nodeAffinity")
    resources = sorted(request.resources.items())
    return repr((resources, spec.get("nodeSelector"), spec.get("tolerations"), affinity))


@dataclass(slots=True)
class _QueuedPod:
    uid: str
    spec: Obj
    """The pod's spec from the store's snapshot (immutable: the store is copy-on-write)."""
    request: PodRequest
    signature: str
    attempts: int = 0
    last_attempt: float = 0.0
    reserved_on: str | None = None
    """Node on which the last retry pass counted this pod in, to let the right number of pods retry."""


@dataclass(slots=True)
class _Assigned:
    node: str
    request: PodRequest
    released: bool = False


class Scheduler:
    """kube-scheduler for the fake cluster. Constructed by :class:`~fakecluster.cluster.Cluster`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.client = cluster.client("system:kube-scheduler")
        self.clock = cluster.clock
        self._rng = cluster.rng("scheduler")
        self._nodes: dict[str, NodeInfo] = {}
        self._queued: dict[tuple[str, str], _QueuedPod] = {}
        """Pods waiting for a scheduling attempt or parked as unschedulable, by (namespace, name)."""
        self._parked: dict[str, dict[tuple[str, str], None]] = {}
        """Unschedulable pods by scheduling signature, each group in the order its pods failed."""
        self._assigned: dict[str, _Assigned] = {}
        """Bound pods by uid and the node whose tally they are in."""
        self._changed_nodes: dict[str, None] = {}
        self._flush_pending = False
        self.controller = Controller(self.clock, "scheduler", self._schedule_one,
                                     latency=cluster.config.scheduler_latency)
        for node in self.client.list("Node", readonly=True):
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
        meta = pod["metadata"]
        uid = meta["uid"]
        key = (meta.get("namespace", ""), meta["name"])
        if event.type == "DELETED":
            self._release(uid, forget=True)
            self._drop(key, uid)
            return
        spec = pod["spec"]
        node = spec.get("nodeName")
        if node:
            if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
                self._release(uid)
            elif uid not in self._assigned:
                queued = self._queued.get(key)
                request = queued.request if queued is not None and queued.uid == uid else pod_request(spec)
                self._assume(uid, node, request)
            self._drop(key, uid)
            return
        if meta.get("deletionTimestamp") is not None or not self._wants(spec):
            self._drop(key, uid)
            return
        queued = self._queued.get(key)
        if queued is not None and queued.uid == uid:
            if spec is not queued.spec and spec != queued.spec:  # e.g. tolerations added: retry now
                self._unpark(key, queued)
                queued.spec, queued.request = spec, pod_request(spec)
                queued.signature = scheduling_signature(spec, queued.request)
                self.controller.enqueue(key)
            return
        request = pod_request(spec)
        self._queued[key] = _QueuedPod(uid, spec, request, scheduling_signature(spec, request))
        timings = self.cluster.config.behaviour(pod)
        delay = timings.schedule
        if timings.jitter > 0:
            delay += self._rng.uniform(0.0, timings.jitter)
        if delay != math.inf:
            self.controller.enqueue(key, after=delay)

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
        group = self._parked.get(queued.signature)
        if group is not None and key in group:
            del group[key]
            if not group:
                del self._parked[queued.signature]

    # ------------------------------------------------------------------ allocation tally
    def _assume(self, uid: str, node_name: str, request: PodRequest) -> None:
        if uid in self._assigned:
            return
        self._assigned[uid] = _Assigned(node_name, request)
        node = self._nodes.get(node_name)
        if node is not None:
            node.add(request, +1)

    def _release(self, uid: str, *, forget: bool = False) -> None:
        """A bound pod finished or went away: its node's resources are free again."""
        assigned = self._assigned.pop(uid, None) if forget else self._assigned.get(uid)
        if assigned is None or assigned.released:
            return
        assigned.released = True
        node = self._nodes.get(assigned.node)
        if node is not None:
            node.add(assigned.request, -1)
            self._capacity_changed(assigned.node)

    def _capacity_changed(self, node_name: str) -> None:
        """Queue a single retry pass over parked pods for this instant (``MoveAllToActiveOrBackoffQueue``
        on an assigned-pod-delete / node-add / node-update event)."""
        if not self._parked:
            return
        self._changed_nodes[node_name] = None
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
                backoff = min(INITIAL_BACKOFF * 2 ** (queued.attempts - 1), MAX_BACKOFF)
                self.controller.enqueue(key, after=max(queued.last_attempt + backoff - self.clock.now, 0.0))
            if not group:
                del self._parked[signature]
        for node, request in reservations:
            node.add(request, -1)

    # ------------------------------------------------------------------ scheduling cycle
    def _schedule_one(self, key: Hashable) -> None:
        """One scheduling cycle (``ScheduleOne``): filter, score, bind or record the failure."""
        namespace, name = key  # type: ignore[misc]
        queued = self._queued.get(key)  # type: ignore[call-overload]
        if queued is None:
            return
        try:
            pod = self.client.get("Pod", namespace, name, readonly=True)
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
        for node in self._nodes.values():
            reasons, unresolvable = filter_node(spec, queued.request, node)
            if reasons:
                failures.append((reasons, unresolvable))
                continue
            score = _least_allocated(node, queued.request)
            if score > best_score or (score == best_score and best is not None and node.name < best.name):
                best, best_score = node, score
        if reserved_on is not None and (best is None or best.name != reserved_on):
            self._capacity_changed(reserved_on)  # the room counted for this pod is free for another
        if best is None:
            self._parked.setdefault(queued.signature, {})[key] = None  # type: ignore[index]
            self._record_failure(pod, fit_error_message(len(self._nodes), failures))
            return
        self.client.bind(namespace, name, best.name)
        self._assume(queued.uid, best.name, queued.request)
        self._drop(key, queued.uid)  # type: ignore[arg-type]

    def _record_failure(self, pod: Obj, message: str) -> None:
        """``PodScheduled=False/Unschedulable`` via the status subresource (``updatePod`` in
        ``schedule_one.go handleSchedulingFailure``); the transition time moves only on a status change."""
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
        self.client.update_status(update, readonly=True)


def _least_allocated(node: NodeInfo, request: PodRequest) -> float:
    """``noderesources.leastResourceScorer`` with cpu and memory weighted equally, unfloored."""
    score = 0.0
    capacity = node.allocatable_cpu
    used = node.nonzero_cpu + request.nonzero_cpu
    if capacity > 0 and used <= capacity:
        score += (capacity - used) / capacity
    capacity = node.allocatable_memory
    used = node.nonzero_memory + request.nonzero_memory
    if capacity > 0 and used <= capacity:
        score += (capacity - used) / capacity
    return score / 2
