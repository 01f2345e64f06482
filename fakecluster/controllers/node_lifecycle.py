"""The node lifecycle controller (``pkg/controller/nodelifecycle/node_lifecycle_controller.go``) and the
``fail_node`` / ``recover_node`` actions that give it something to do.

``fail_node(name)`` at time F stops the node's kubelet
(:meth:`~fakecluster.kubelet.kubelet.Kubelet.stop_node`):
its pods freeze, and its last heartbeat (Lease renewal) is taken to be F. Then, with ``grace`` =
``--node-monitor-grace-period`` (50 s, the default from 1.32, kubernetes#126287; 40 s up to 1.31) and
``period`` = ``--node-monitor-period`` (5 s):

- **F + grace** — ``monitorNodeHealth`` / ``tryUpdateNodeHealth`` finds no heartbeat for ``grace``: the
  node's ``Ready`` condition (and ``MemoryPressure``, ``DiskPressure``, ``PIDPressure``) become ``Unknown``,
  reason ``NodeStatusUnknown``, message ``Kubelet stopped posting node status.`` (a condition the node never
  had is added as ``NodeStatusNeverUpdated`` / ``Kubelet never posted node status.``);
  ``MarkPodsNotReady`` sets every pod's ``Ready`` condition to ``False`` (reason and message kept); the
  node-update worker (``doNoScheduleTaintingPass``) adds ``node.kubernetes.io/unreachable:NoSchedule``.
- **F + grace + period** — the next pass. ``processTaintBaseEviction`` works on the condition observed
  *before* a pass's own update, so only now does the node enter its zone's rate-limited tainter, which adds
  ``node.kubernetes.io/unreachable:NoExecute`` (``SwapNodeControllerTaint`` stamps ``timeAdded`` on every
  taint it adds, the NoSchedule one included). The taint-eviction controller
  (:mod:`fakecluster.controllers.taint_eviction`) then deletes the pods after their ``tolerationSeconds``.

Zones (``handleDisruption``, per ``topology.kubernetes.io/region``+``zone``): a zone is *fully disrupted*
when none of its nodes is Ready and *partially* when more than 2 and at least 55 % are not. Each zone's
tainter takes nodes at ``--node-eviction-rate`` 0.1/s (burst 1: the first at once, then one per 10 s), 0.01/s
in a partially disrupted zone of more than 50 nodes and not at all in a smaller one. When every zone is
fully disrupted (e.g. the only node failed) the controller enters "master disruption mode": it removes the
NoExecute taints of every node and taints none, so nothing is evicted until some node is Ready again.

Simplifications, all deterministic: passes are event-driven (a pass runs when a node needs one, not every
5 s forever, so an idle cluster stays quiescent); the first unhealthy pass is exactly F + grace; the next
one is exactly ``period`` after the event that calls for it; the tainter fires exactly when a token is
available (upstream polls every 100 ms). A node without a ``Ready`` condition counts as Ready (the fake
kubelet is taken to post it). Node and pod events (``NodeNotReady``...) are not recorded.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field
from typing import Protocol

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, get_condition, update_pod_condition
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock, Timer
from fakecluster.controllers.taint_eviction import PodNodeIndex, TaintEvictionController
from fakecluster.runtime import Controller

COMPONENT = "node-controller"
NODE_MONITOR_GRACE_PERIOD = 50.0
NODE_MONITOR_PERIOD = 5.0
NODE_EVICTION_RATE = 0.1
SECONDARY_NODE_EVICTION_RATE = 0.01
LARGE_CLUSTER_SIZE_THRESHOLD = 50
UNHEALTHY_ZONE_THRESHOLD = 0.55

UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
CONDITION_TAINTS: dict[str, dict[str, str]] = {
    "Ready": {"False": NOT_READY, "Unknown": UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
"""``nodeConditionToTaintKeyStatusMap``: the NoSchedule taint each condition status calls for."""
_CONDITION_TAINT_KEYS = frozenset(k for by_status in CONDITION_TAINTS.values() for k in by_status.values())
KUBELET_CONDITIONS: tuple[tuple[str, str, str, str], ...] = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
"""What a (returning) kubelet posts: type, status, reason, message (``pkg/kubelet/nodestatus/setters.go``)."""
NORMAL, PARTIAL, FULL, INITIAL = "Normal", "PartialDisruption", "FullDisruption", "Initial"


def ready_status(node: Obj) -> str:
    cond = get_condition(node, "Ready")
    return "True" if cond is None else cond.get("status") or "Unknown"


def zone_key(node: Obj) -> str:
    """``nodetopology.GetZoneKey``."""
    labels = node["metadata"].get("labels") or {}
    zone = labels.get("topology.kubernetes.io/zone", labels.get("failure-domain.beta.kubernetes.io/zone", ""))
    region = labels.get("topology.kubernetes.io/region",
                        labels.get("failure-domain.beta.kubernetes.io/region", ""))
    return "" if not region and not zone else f"{region}:\x00:{zone}"


@dataclass(slots=True)
class _Tainter:
    """One zone's ``RateLimitedTimedQueue`` with its token-bucket limiter (burst 1)."""

    qps: float
    next_token: float = -math.inf
    queue: dict[str, None] = field(default_factory=dict)
    added: dict[str, None] = field(default_factory=dict)
    """The ``UniqueQueue`` set: a node is tainted once per unhealthy spell, until ``Remove``."""
    timer: Timer | None = None

    def swap_limiter(self, qps: float, now: float) -> None:
        """``SwapLimiter``: a fresh bucket, drained if the old one had no token left."""
        if qps == self.qps:
            return
        drained = self.qps <= 0 or self.next_token > now
        self.qps = qps
        self.next_token = now + 1 / qps if qps > 0 and drained else -math.inf


class NodeAgents(Protocol):
    """What the node lifecycle controller's fault injection needs of the nodes' kubelets."""

    def stop_node(self, name: str) -> None: ...

    def start_node(self, name: str) -> None: ...


class NodeLifecycleController:
    """Runs the taint-eviction controller too (with its own client, ``taint_eviction_client``, sharing
    this controller's pod-to-node index). ``kubelets``: what stops and restarts a node's kubelet for
    :meth:`fail_node` and :meth:`recover_node` (the cluster's :class:`~fakecluster.kubelet.kubelet.
    Kubelet`)."""

    def __init__(self, client: Client, clock: Clock, kubelets: NodeAgents, *, taint_eviction_client: Client,
                 node_monitor_grace_period: float = NODE_MONITOR_GRACE_PERIOD,
                 node_monitor_period: float = NODE_MONITOR_PERIOD, eviction_rate: float = NODE_EVICTION_RATE,
                 secondary_eviction_rate: float = SECONDARY_NODE_EVICTION_RATE,
                 large_cluster_threshold: int = LARGE_CLUSTER_SIZE_THRESHOLD,
                 unhealthy_zone_threshold: float = UNHEALTHY_ZONE_THRESHOLD) -> None:
        self._kubelets = kubelets
        self._clock = clock
        self._client = client
        self.grace = node_monitor_grace_period
        self.period = node_monitor_period
        self._rates = (eviction_rate, secondary_eviction_rate, large_cluster_threshold,
                       unhealthy_zone_threshold)
        self._nodes: dict[str, Obj] = {}
        self._failed: dict[str, float] = {}
        """Nodes whose kubelet is down, with its last heartbeat (the probe timestamp)."""
        self._detect: dict[str, Timer] = {}
        self._tainters: dict[str, _Tainter] = {}
        self._zone_states: dict[str, str] = {}
        self._pods = PodNodeIndex(self._client)
        self.taint_eviction = TaintEvictionController(taint_eviction_client, clock, self._pods)
        self.monitor = Controller(self._clock, COMPONENT, self._monitor_node)
        self.no_schedule = Controller(self._clock, f"{COMPONENT}/no-schedule", self._no_schedule_pass)
        for node in self._client.list("Node"):
            self._on_node(WatchEvent("ADDED", "Node", node, None))
        self._client.watch("Node", self._on_node)

    # ------------------------------------------------------------------ public
    def fail_node(self, name: str) -> None:
        """The node's kubelet stops now (NotFound if there is no such node); see the module docstring."""
        self._client.get("Node", "", name)
        if name in self._failed:
            return
        self._kubelets.stop_node(name)
        self._failed[name] = self._clock.now
        self._arm_detection(name)

    def recover_node(self, name: str) -> None:
        """The kubelet comes back: it resumes its pods and posts ``Ready=True``; the NoSchedule taint goes at
        once, the NoExecute one at the next monitor pass (``markNodeAsReachable``), which also cancels the
        pods' pending taint evictions."""
        node = self._client.get("Node", "", name)
        if self._failed.pop(name, None) is None:
            return
        timer = self._detect.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._kubelets.start_node(name)
        status = dict(node.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or ()]
        now, changed = self._clock.timestamp(), False
        for cond_type, cond_status, reason, message in KUBELET_CONDITIONS:
            cond = next((c for c in conditions if c.get("type") == cond_type), None)
            if cond is None or cond.get("status") == cond_status:
                continue
            cond.update(status=cond_status, reason=reason, message=message, lastHeartbeatTime=now,
                        lastTransitionTime=now)
            changed = True
        if changed:
            status["conditions"] = conditions
            self._client.update_status({**node, "status": status})

    # ------------------------------------------------------------------ watch
    def _on_node(self, event: WatchEvent) -> None:
        node = event.object
        name = node["metadata"]["name"]
        if event.type == "DELETED":
            self._nodes.pop(name, None)
            return
        self._nodes[name] = node
        self.no_schedule.enqueue(name)
        ready_changed = event.old is not None and ready_status(event.old) != ready_status(node)
        if ready_changed or self._needs_pass(node):
            self.monitor.enqueue(name, after=self.period)

    def _needs_pass(self, node: Obj) -> bool:
        """Whether the next monitor pass would change something for this node's taints."""
        name = node["metadata"]["name"]
        ready = ready_status(node)
        queued = name in self._tainter(zone_key(node)).added
        if ready == "True":
            return queued or _has_controller_no_execute_taint(node)
        wanted = NOT_READY if ready == "False" else UNREACHABLE
        return not queued and not _has_taint(node, wanted, "NoExecute")

    def _arm_detection(self, name: str) -> None:
        timer = self._detect.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._detect[name] = self._clock.call_at(self._failed[name] + self.grace, self.monitor.enqueue, name)

    # ------------------------------------------------------------------ monitorNodeHealth, one node
    def _monitor_node(self, name: str) -> None:
        node = self._nodes.get(name)
        if node is None:
            return
        observed = ready_status(node)
        current = observed
        last_heartbeat = self._failed.get(name)
        if last_heartbeat is not None and self._clock.now >= last_heartbeat + self.grace \
                and observed != "Unknown":
            node = self._post_unknown(node)
            current = "Unknown"
        self._process_taint_based_eviction(node, observed)
        if current != "True" and observed == "True":
            self._mark_pods_not_ready(name)
        self._handle_disruption()

    def _post_unknown(self, node: Obj) -> Obj:
        """``tryUpdateNodeHealth`` after the grace period: the conditions the kubelet owns go Unknown."""
        status = dict(node.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or ()]
        now = self._clock.timestamp()
        for cond_type in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
            cond = next((c for c in conditions if c.get("type") == cond_type), None)
            if cond is None:
                conditions.append({"type": cond_type, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                                   "message": "Kubelet never posted node status.",
                                   "lastHeartbeatTime": node["metadata"].get("creationTimestamp"),
                                   "lastTransitionTime": now})
            elif cond.get("status") != "Unknown":
                cond.update(status="Unknown", reason="NodeStatusUnknown",
                            message="Kubelet stopped posting node status.", lastTransitionTime=now)
        status["conditions"] = conditions
        return self._client.update_status({**node, "status": status})

    def _mark_pods_not_ready(self, node_name: str) -> None:
        """``MarkPodsNotReady`` (``pkg/controller/util/node/controller_utils.go``): each pod's ``Ready``
        condition, where it has one, becomes ``False`` with its reason and message kept."""
        now = self._clock.timestamp()
        for namespace, name in self._pods.pods_on(node_name):
            try:
                pod = self._client.get("Pod", namespace, name)
            except ApiError:
                continue
            ready = get_condition(pod, "Ready")
            if pod["spec"].get("nodeName") != node_name or ready is None:
                continue
            status = dict(pod.get("status") or {})
            if update_pod_condition(status, {**ready, "status": "False"}, now):
                with contextlib.suppress(NotFound):
                    self._client.update_status({**pod, "status": status})

    def _process_taint_based_eviction(self, node: Obj, observed: str) -> None:
        """``processTaintBaseEviction``: queue an unhealthy node for its NoExecute taint (or swap the
        not-ready/unreachable one at once); untaint a Ready one."""
        if observed == "True":
            self._mark_node_as_reachable(node)
            return
        wanted, opposite = (NOT_READY, UNREACHABLE) if observed == "False" else (UNREACHABLE, NOT_READY)
        if _has_taint(node, opposite, "NoExecute"):
            self._swap_taints(node["metadata"]["name"], [(wanted, "NoExecute")], [(opposite, "NoExecute")])
            return
        name = node["metadata"]["name"]
        zone = zone_key(node)
        tainter = self._tainter(zone)
        if name not in tainter.added:
            tainter.added[name] = None
            tainter.queue[name] = None
            self._try_taint(zone)

    def _mark_node_as_reachable(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        if _has_controller_no_execute_taint(node):
            self._swap_taints(name, [], [(UNREACHABLE, "NoExecute"), (NOT_READY, "NoExecute")])
        tainter = self._tainter(zone_key(node))
        tainter.added.pop(name, None)
        tainter.queue.pop(name, None)

    # ------------------------------------------------------------------ the zone tainters
    def _tainter(self, zone: str) -> _Tainter:
        tainter = self._tainters.get(zone)
        if tainter is None:
            tainter = self._tainters[zone] = _Tainter(self._rates[0])
        return tainter

    def _try_taint(self, zone: str) -> None:
        """``doNoExecuteTaintingPass`` for one zone: taint queued nodes as tokens allow."""
        tainter = self._tainters[zone]
        now = self._clock.now
        while tainter.queue and tainter.qps > 0:
            if now < tainter.next_token:
                if tainter.timer is None:
                    tainter.timer = self._clock.call_at(tainter.next_token, self._on_token, zone)
                return
            tainter.next_token = now + 1 / tainter.qps
            name = next(iter(tainter.queue))
            del tainter.queue[name]
            node = self._nodes.get(name)
            ready = ready_status(node) if node is not None else "True"
            if ready != "True":
                wanted, opposite = (NOT_READY, UNREACHABLE) if ready == "False" else (UNREACHABLE, NOT_READY)
                self._swap_taints(name, [(wanted, "NoExecute")], [(opposite, "NoExecute")])

    def _on_token(self, zone: str) -> None:
        self._tainters[zone].timer = None
        self._try_taint(zone)

    def _handle_disruption(self) -> None:
        """``handleDisruption``: zone states and the tainters' rates; master disruption mode."""
        conditions: dict[str, list[str]] = {}
        for name in sorted(self._nodes):
            node = self._nodes[name]
            if "node.kubernetes.io/exclude-disruption" not in (node["metadata"].get("labels") or {}):
                conditions.setdefault(zone_key(node), []).append(ready_status(node))
        new_states = {zone: self._zone_state(statuses) for zone, statuses in conditions.items()}
        all_are_full = all(state == FULL for state in new_states.values())
        for zone in new_states:
            self._zone_states.setdefault(zone, INITIAL)
        for zone in [z for z in self._zone_states if z not in new_states]:
            del self._zone_states[zone]
        all_were_full = all(state == FULL for state in self._zone_states.values())
        if all_are_full and all_were_full:
            return
        now = self._clock.now
        if all_are_full:  # entering master disruption mode: stop all evictions
            for name in sorted(self._nodes):
                self._mark_node_as_reachable(self._nodes[name])
            for zone in self._zone_states:
                self._tainter(zone).swap_limiter(0.0, now)
                self._zone_states[zone] = FULL
            return
        if all_were_full:  # leaving it: every node gets a fresh probe timestamp
            for name in [n for n in sorted(self._failed) if n in self._nodes]:
                if ready_status(self._nodes[name]) == "True":
                    self._failed[name] = now
                    self._arm_detection(name)
        for zone, state in new_states.items():
            if all_were_full or self._zone_states[zone] != state:
                self._set_limiter(zone, len(conditions[zone]), state)
                self._zone_states[zone] = state

    def _zone_state(self, statuses: list[str]) -> str:
        """``ComputeZoneState``."""
        not_ready = sum(1 for s in statuses if s != "True")
        if not_ready == len(statuses):
            return FULL
        if not_ready > 2 and not_ready / len(statuses) >= self._rates[3]:
            return PARTIAL
        return NORMAL

    def _set_limiter(self, zone: str, size: int, state: str) -> None:
        """``setLimiterInZone`` with ``ReducedQPSFunc`` for partial and ``HealthyQPSFunc`` for full."""
        rate, secondary, large, _ = self._rates
        qps = (secondary if size > large else 0.0) if state == PARTIAL else rate
        self._tainter(zone).swap_limiter(qps, self._clock.now)
        self._try_taint(zone)

    # ------------------------------------------------------------------ taint writes
    def _no_schedule_pass(self, name: str) -> None:
        """``doNoScheduleTaintingPass``: NoSchedule taints follow the node's conditions and
        ``spec.unschedulable``."""
        try:
            node = self._client.get("Node", "", name)
        except ApiError:
            return
        wanted = []
        for cond in (node.get("status") or {}).get("conditions") or ():
            taint_key = CONDITION_TAINTS.get(cond.get("type", ""), {}).get(cond.get("status", ""))
            if taint_key is not None:
                wanted.append((taint_key, "NoSchedule"))
        if (node.get("spec") or {}).get("unschedulable"):
            wanted.append((UNSCHEDULABLE, "NoSchedule"))
        have = [(t.get("key"), t.get("effect")) for t in (node.get("spec") or {}).get("taints") or ()
                if t.get("effect") == "NoSchedule" and (t.get("key") in _CONDITION_TAINT_KEYS
                                                        or t.get("key") == UNSCHEDULABLE)]
        add = [t for t in wanted if t not in have]
        remove = [t for t in have if t not in wanted]
        if add or remove:
            self._swap_taints(name, add, remove)

    def _swap_taints(self, name: str, add: list[tuple[str, str]], remove: list[tuple[str, str]]) -> None:
        """``SwapNodeControllerTaint``: add (replacing a taint of the same key and effect, stamped with
        ``timeAdded``) and remove taints, in one update of the node."""
        try:
            node = self._client.get("Node", "", name)
        except ApiError:
            return
        spec = dict(node.get("spec") or {})
        taints = [t for t in spec.get("taints") or () if (t.get("key"), t.get("effect")) not in remove]
        now = self._clock.timestamp()
        for key, effect in add:
            fresh = {"key": key, "effect": effect, "timeAdded": now}
            at = next((i for i, t in enumerate(taints) if (t.get("key"), t.get("effect")) == (key, effect)),
                      None)
            if at is None:
                taints.append(fresh)
            else:
                taints[at] = fresh
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        if spec != node.get("spec"):
            self._client.update({**node, "spec": spec})


def _has_controller_no_execute_taint(node: Obj) -> bool:
    return _has_taint(node, UNREACHABLE, "NoExecute") or _has_taint(node, NOT_READY, "NoExecute")


def _has_taint(node: Obj, key: str, effect: str) -> bool:
    return any(t.get("key") == key and t.get("effect") == effect
               for t in (node.get("spec") or {}).get("taints") or ())
