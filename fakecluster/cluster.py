"""Assembly of one fake cluster: clock, API server, garbage collector, scheduler, kubelet and the
built-in controllers, all on one virtual clock and seeded from one seed.

Every component gets its own ``random.Random`` derived from the seed and the component's name (string
seeds are hashed with SHA-512 by :mod:`random`, independent of ``PYTHONHASHSEED``), so adding a random draw
in one component never shifts the draws of another.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field
from typing import Any

from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.conflicts import CONTROLLER_USERS, ConflictInjectingClient, FaultStats
from fakecluster.client.events import EventRecorder
from fakecluster.client.informer import Informer, InformerClient
from fakecluster.client.internal import InternalClient
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock, TieShufflingClock
from fakecluster.controllers import endpointslice, node_lifecycle, podgc, taint_eviction, ttl_after_finished
from fakecluster.controllers.endpointslice import EndpointSliceController
from fakecluster.controllers.garbage_collector import GarbageCollector
from fakecluster.controllers.job import job_controller
from fakecluster.controllers.job.events import POD_CONTROL_REASONS
from fakecluster.controllers.job.job_controller import JobController
from fakecluster.controllers.node_lifecycle import NodeLifecycleController
from fakecluster.controllers.podgc import PodGC
from fakecluster.controllers.ttl_after_finished import TTLAfterFinishedController
from fakecluster.kubelet.events import KubeletEvents
from fakecluster.kubelet.kubelet import Kubelet
from fakecluster.kubelet.pod_timings import BehaviourResolver, default_behaviour
from fakecluster.network import DnsConfig, Network, NetworkConfig
from fakecluster.scheduler.scheduler import Scheduler

UNLIMITED_CAPACITY: dict[str, Any] = {
    "cpu": "100k",
    "memory": "1Pi",
    "pods": 1_000_000,
    "ephemeral-storage": "1Pi",
    "nvidia.com/gpu": 1_000_000,
    "amd.com/gpu": 1_000_000,
    "google.com/tpu": 1_000_000,
}
"""Capacity of the default node: it fits every pod, including ones asking for common accelerators."""


@dataclass(slots=True)
class NodePool:
    """``count`` identical nodes; with count > 1 they are named ``<name>-0``, ``<name>-1``, ..."""

    name: str
    count: int = 1
    capacity: dict[str, Any] = field(default_factory=lambda: dict(UNLIMITED_CAPACITY))
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ClusterConfig:
    nodes: list[NodePool] = field(default_factory=lambda: [NodePool("node")])
    """Default: one node that fits every pod."""
    behaviour: BehaviourResolver = default_behaviour
    job_controller_latency: float = 0.0
    """Watch-to-sync delay of the Job controller on top of its upstream 1 s pod-event batching."""
    gc_latency: float = 0.0
    scheduler_latency: float = 0.0
    feature_gates: dict[str, bool] = field(default_factory=dict)
    conflict_rate: float = 0.0
    """Fraction of the controllers' update/update_status/patch calls failed with 409 Conflict
    (:mod:`fakecluster.client.conflicts`); 0 wraps nothing."""
    informer_lag: float = 0.0
    """Seconds by which the controllers' reads and watch events trail the API server
    (:mod:`fakecluster.client.informer`); 0 reads the store directly."""
    endpoint_slice_latency: float = 0.0
    """``cluster.latency.endpointSlice``: pod/Service change -> EndpointSlice written (the batch period)."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    dns: DnsConfig = field(default_factory=DnsConfig)
    shuffle_ties: int | None = None
    """``cluster.shuffleTies``: the seed of a :class:`~fakecluster.clock.TieShufflingClock` (same-instant
    events in a seeded random order), combined with the cluster's seed; None keeps the plain clock."""
    pod_events: bool = False
    """Record the kubelet's and the scheduler's Events about pods (:mod:`fakecluster.kubelet.events`);
    off by default: they would be most of a large run's writes."""


class Cluster:
    """A running fake cluster. Workload plugins add their kinds and controllers after construction.

    The cluster only assembles: each component gets what it uses (its client, the clock, its own
    ``random.Random``, its settings) and nothing gives a component the cluster itself."""

    def __init__(self, seed: int = 0, config: ClusterConfig | None = None) -> None:
        self.seed = seed
        self.config = config or ClusterConfig()
        self.clock = Clock() if self.config.shuffle_ties is None else TieShufflingClock(
            self.rng(f"clock/shuffle-ties/{self.config.shuffle_ties}"))
        self.server = ApiServer(self.clock, self.rng("apiserver"))
        self.fault_stats = FaultStats()
        self._fault_rngs: dict[str, random.Random] = {}
        register_builtin(self.server)
        self.server.resource("EndpointSlice").rng = self.rng("apiserver/endpointslices")
        pod_control_events = self.rng("apiserver/job-pod-control-events")
        pod_events = self.rng("apiserver/pod-events")

        def event_rng(obj: Any) -> random.Random | None:
            """Events added after the first recorded runs draw their uids from streams of their own, so
            they shift no other object's uid or generated name."""
            kind = (obj.get("regarding") or {}).get("kind")
            if kind == "Pod":
                return pod_events
            return pod_control_events if kind == "Job" and obj.get("reason") in POD_CONTROL_REASONS else None

        self.server.resource("Event").rng_for = event_rng
        self.gc = GarbageCollector(self.clock, self.server, latency=self.config.gc_latency)
        for pool in self.config.nodes:
            self._add_pool(pool)
        config = self.config
        self.scheduler = Scheduler(self.client("system:kube-scheduler"), self.clock, self.rng("scheduler"),
                                   behaviour=config.behaviour, latency=config.scheduler_latency)
        self.network = Network(self.clock, config.network, config.dns)
        self.client("coredns").watch("EndpointSlice", self.network.dns.watch)
        self.kubelet = Kubelet(self.client("system:node"), self.clock, self.rng("kubelet"),
                               behaviour=config.behaviour, network=self.network)
        if config.pod_events:
            self.kubelet.events = KubeletEvents(self.client("system:node"), self.clock)
            self.scheduler.events = EventRecorder(self.client("system:kube-scheduler"), self.clock,
                                                  reporting_controller="default-scheduler",
                                                  hostname="fakecluster-control-plane")
        self.job_controller = JobController(self.client(job_controller.COMPONENT), self.clock,
                                            latency=config.job_controller_latency)
        self.node_lifecycle = NodeLifecycleController(
            self.client(node_lifecycle.COMPONENT), self.clock, self.kubelet,
            taint_eviction_client=self.client(taint_eviction.COMPONENT))
        self.pod_gc = PodGC(self.client(podgc.COMPONENT), self.clock)
        self.ttl_after_finished_controller = TTLAfterFinishedController(
            self.client(ttl_after_finished.COMPONENT), self.clock)
        self.endpoint_slice_controller = EndpointSliceController(
            self.client(endpointslice.COMPONENT), self.clock, self.rng(endpointslice.COMPONENT),
            latency=config.endpoint_slice_latency)

    def rng(self, component: str) -> random.Random:
        return random.Random(f"{self.seed}/{component}")

    def client(self, user: str = "admin") -> InternalClient:
        """A client acting as ``user``. The controllers' users (:data:`~fakecluster.client.conflicts.
        CONTROLLER_USERS`) get what the config asks for: reads and watch events through their own
        lagging informer, and injected Conflicts on writes. Each call is a new process's client (a
        restarted controller starts a fresh informer); the fault stream of a user survives restarts."""
        client: InternalClient = LocalClient(self.server, user)
        if user not in CONTROLLER_USERS:
            return client
        if self.config.informer_lag > 0:
            client = InformerClient(client, Informer(self.server, self.clock, self.config.informer_lag))
        if self.config.conflict_rate > 0:
            rng = self._fault_rngs.get(user)
            if rng is None:
                rng = self._fault_rngs[user] = self.rng(f"faults/{user}")
            client = ConflictInjectingClient(
                client, self.server, user=user, rate=self.config.conflict_rate, rng=rng,
                stats=self.fault_stats,
            )
        return client

    def _add_pool(self, pool: NodePool) -> None:
        names = [pool.name] if pool.count == 1 else [f"{pool.name}-{i}" for i in range(pool.count)]
        for name in names:
            capacity = {k: str(v) for k, v in pool.capacity.items()}
            self.server.create(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **pool.labels}},
                    "spec": {"taints": list(pool.taints)} if pool.taints else {},
                    "status": {
                        "capacity": capacity,
                        "allocatable": dict(capacity),
                        "conditions": [
                            {
                                "type": "Ready",
                                "status": "True",
                                "reason": "KubeletReady",
                                "message": "kubelet is posting ready status",
                                "lastHeartbeatTime": self.clock.timestamp(),
                                "lastTransitionTime": self.clock.timestamp(),
                            }
                        ],
                    },
                }
            )

    def run(self, until: float) -> bool:
        """Advance virtual time; True if work remains after ``until``. With the snapshot guard on, the
        snapshots handed out since the last write are checked once more at the end."""
        remaining = self.clock.run(until)
        if self.server.snapshots is not None:
            self.server.snapshots.verify()
        return remaining

    def close(self) -> None:
        """End of life: take the cluster apart so its objects go by reference counting at once.

        Every component is tied to the others in cycles (watch handlers, timers and controller loops are
        bound methods of the components that hold them), so without this a finished run's whole object
        graph -- every stored version, pod worker and timer -- waits for a full cyclic collection, which
        walks every live object of the process (about 0.4 s per 10,000 pods, paid again by each later
        collection while the graph lives; pytest and campaigns run many clusters in one process). The
        cluster is unusable afterwards; what a run's outcome keeps (trace events, snapshots of stored
        objects) are plain acyclic values and stay valid."""
        self.network.close()  # its program runs' cycles sit in dicts, out of dismantle's reach
        dismantle(self.clock, self.server, *vars(self).values())
        vars(self).clear()


def dismantle(*parts: object) -> None:
    """Drop every attribute of each object in ``parts`` and of the objects they hold directly (a
    component's client, controller loop, caches): nothing they referred to keeps another part alive,
    so the cycles between them are broken. Only for objects at the end of their life."""
    seen: dict[int, object] = {}
    for part in parts:
        _collect(part, seen, depth=2)
    for obj in seen.values():
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict):
            state.clear()
        for slot in _slots_of(type(obj)):
            if hasattr(obj, slot):
                with contextlib.suppress(AttributeError, TypeError):  # read-only slots
                    delattr(obj, slot)


def _slots_of(cls: type) -> tuple[str, ...]:
    """The slot attributes of ``cls`` and its bases (once per class: every run takes its cluster apart)."""
    slots = _SLOTS.get(cls)
    if slots is None:
        slots = _SLOTS[cls] = tuple(slot for klass in cls.__mro__ for slot in getattr(klass, "__slots__", ())
                                    if slot not in ("__dict__", "__weakref__"))
    return slots


_SLOTS: dict[type, tuple[str, ...]] = {}


def _collect(obj: object, seen: dict[int, object], *, depth: int) -> None:
    """``obj`` and, ``depth`` levels down, the instances of this project's classes it holds as
    attributes."""
    if id(obj) in seen or not _own(type(obj)):
        return
    seen[id(obj)] = obj
    if depth == 0:
        return
    values: list[object] = list(getattr(obj, "__dict__", {}).values())
    values.extend(getattr(obj, slot, None) for slot in _slots_of(type(obj)))
    for value in values:
        # Most attributes are numbers, strings and containers: decided here, without a call each.
        if _OWN.get(type(value), True) and id(value) not in seen:
            _collect(value, seen, depth=depth - 1)


_OWN: dict[type, bool] = {}
"""Class -> whether it is this project's (its module is in ``fakecluster`` or ``jobset``)."""


def _own(cls: type) -> bool:
    own = _OWN.get(cls)
    if own is None:
        own = _OWN[cls] = cls.__module__.startswith(("fakecluster.", "jobset."))
    return own
