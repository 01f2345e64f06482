"""Filters, requests and messages of the scheduler: the pure functions behind ``scheduler.py``.

``filter_node`` answers "does this pod fit this node, and if not, why" the way kube-scheduler's default
filter plugins do (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit), and
``fit_error_message`` composes the upstream ``FitError`` text from the per-node reasons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from fakecluster.api.objects import Obj
from fakecluster.api.quantity import parse_quantity
from fakecluster.api.toleration import tolerations_tolerate_taint

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


def _expression_matches(expr: Obj, labels: dict[str, str]) -> bool:
    """``nodeaffinity`` requirement: In/NotIn/Exists/DoesNotExist/Gt/Lt against node labels."""
    key: str = expr.get("key", "")
    operator = expr.get("operator")
    values: list[str] = expr.get("values") or []
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
        if node.unschedulable and not tolerations_tolerate_taint(tolerations, UNSCHEDULABLE_TAINT):
            return [REASON_UNSCHEDULABLE], True
        for taint in node.taints:
            if not tolerations_tolerate_taint(tolerations, taint):
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


def least_allocated(node: NodeInfo, request: PodRequest) -> float:
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
