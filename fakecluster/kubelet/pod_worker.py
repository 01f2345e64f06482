"""The emulated kubelet's per-pod state and the pod status it reports.

:class:`PodWorker` is the kubelet's in-memory view of one pod on its node (``pkg/kubelet/pod_workers.go``):
the containers' runtime state, sandbox IPs, pending timers. :func:`build_status` turns it into the
``PodStatus`` the status manager would write, following ``generateAPIPodStatus`` and
``convertToAPIContainerStatuses`` (``pkg/kubelet/kubelet_pods.go``), ``getPhase`` (same file) and the
condition generators of ``pkg/kubelet/status/generate.go``. The build never mutates the stored object:
it starts from a shallow copy of the current status, so fields owned by others (``qosClass``,
``nominatedNodeName``, the scheduler's ``PodScheduled``, a ``DisruptionTarget`` set by an evictor) pass
through untouched, and an unchanged condition keeps its ``lastTransitionTime``.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from fakecluster.api.objects import Obj
from fakecluster.clock import Timer
from fakecluster.kubelet.pod_timings import Jitters, PodTimings

WAITING, RUNNING, TERMINATED = "waiting", "running", "terminated"
INIT, SIDECAR, REGULAR = "init", "sidecar", "regular"
TERMINAL_PHASES = ("Succeeded", "Failed")
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
"""Owned by the kubelet (``kubetypes.PodConditionsByKubelet``), in the order it appends them."""
UNKNOWN_MESSAGE = "The container could not be located when the pod was terminated"

@lru_cache(maxsize=1024)
def image_id(image: str) -> str:
    """A stable fake ``imageID`` (``repo@sha256:<digest>``): the digest is a hash of the image name."""
    repo = image.split("@", 1)[0]
    if ":" in repo.rsplit("/", 1)[-1]:
        repo = repo.rsplit(":", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


class ContainerRun:
    """Runtime state of one container of a pod (what the CRI runtime would report for it)."""

    __slots__ = ("backoff", "backoff_updated", "container_id", "ever_ran", "image", "last_terminated", "name",
                 "ready", "restart_count", "role", "run_id", "spec", "started", "started_at", "state",
                 "terminated", "timers", "waiting_message", "waiting_reason")

    def __init__(self, spec: Obj, role: str, waiting_reason: str) -> None:
        self.spec = spec
        self.name: str = spec["name"]
        self.image: str = spec.get("image") or ""
        self.role = role
        self.state = WAITING
        self.waiting_reason = waiting_reason
        self.waiting_message: str | None = None
        self.started_at: str | None = None
        self.terminated: Obj | None = None
        self.last_terminated: Obj | None = None
        self.ready = False
        self.started = False
        self.restart_count = 0
        self.run_id = 0
        """Bumped on every start and stop, so a stale timer or queued step for a previous run is a no-op."""
        self.container_id = ""
        self.ever_ran = False
        self.backoff = 0.0
        """Current crash-loop back-off entry (``flowcontrol.Backoff``); 0: none yet."""
        self.backoff_updated = 0.0
        self.timers: list[Timer] = []

    def cancel_timers(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()

    @property
    def exit_code(self) -> int | None:
        return None if self.terminated is None else self.terminated["exitCode"]

    def status(self) -> Obj:
        """``v1.ContainerStatus`` for this container."""
        if self.state == RUNNING:
            state: Obj = {"running": {"startedAt": self.started_at}}
        elif self.state == TERMINATED:
            state = {"terminated": self.terminated}
        else:
            waiting: Obj = {"reason": self.waiting_reason}
            if self.waiting_message:
                waiting["message"] = self.waiting_message
            state = {"waiting": waiting}
        out: Obj = {
            "name": self.name,
            "image": self.image,
            "imageID": image_id(self.image) if self.ever_ran else "",
            "ready": self.ready,
            "started": self.started,
            "restartCount": self.restart_count,
            "state": state,
            "lastState": {"terminated": self.last_terminated} if self.last_terminated is not None else {},
        }
        if self.container_id:
            out["containerID"] = self.container_id
        return out


class PodWorker:
    """The kubelet's per-pod state machine data. Behaviour lives in
    :class:`fakecluster.kubelet.kubelet.Kubelet`."""

    __slots__ = ("active_deadline", "conditions_built", "containers", "delete_after_sync", "done",
                 "failed_reason", "grace_period", "host_ip", "immediate",
                 "init_containers", "init_index", "jitters", "kill_at", "kill_code", "name", "namespace",
                 "node", "pod_ip", "readiness_gates", "regular_started", "restart_policy", "sandbox_ready",
                 "start_time", "stop_requested_at", "terminal", "terminating", "timers", "timings", "uid")

    def __init__(self, pod: Obj, timings: PodTimings, jitters: Jitters) -> None:
        meta = pod["metadata"]
        spec = pod["spec"]
        self.uid: str = meta["uid"]
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta["name"]
        self.node: str = spec["nodeName"]
        self.timings = timings
        self.jitters = jitters
        """Seeded extras for the delays, drawn once at admission."""
        self.restart_policy: str = spec.get("restartPolicy") or "Always"
        grace = spec.get("terminationGracePeriodSeconds")
        self.grace_period: int = 30 if grace is None else max(int(grace), 0)
        """``terminationGracePeriodSeconds``: what a probe-failure kill waits before SIGKILL."""
        self.readiness_gates = [g.get("conditionType") for g in spec.get("readinessGates") or ()]
        deadline = spec.get("activeDeadlineSeconds")
        self.active_deadline: float | None = None if deadline is None else float(deadline)
        """``spec.activeDeadlineSeconds`` as admitted (``pkg/kubelet/active_deadline.go``)."""
        self.failed_reason: tuple[str, str] | None = None
        """(reason, message) of a pod the kubelet itself failed, e.g. ``DeadlineExceeded``."""
        init_specs = spec.get("initContainers") or ()
        default_reason = "PodInitializing" if init_specs else "ContainerCreating"
        self.init_containers = [
            ContainerRun(c, SIDECAR if c.get("restartPolicy") == "Always" else INIT, default_reason)
            for c in init_specs
        ]
        self.containers = [ContainerRun(c, REGULAR, default_reason) for c in spec.get("containers") or ()]
        self.init_index = 0
        self.regular_started = False
        self.host_ip: str | None = None
        self.pod_ip: str | None = None
        self.start_time: str | None = None
        self.sandbox_ready = False
        self.terminating = False
        """``deletionTimestamp`` seen: the pod is being killed."""
        self.terminal = False
        """The kubelet considers the pod finished: its containers will not run again (podIsTerminal)."""
        self.done = False
        """Nothing more to do for this pod (terminal status written, or another writer made it terminal)."""
        self.delete_after_sync = False
        self.stop_requested_at: float | None = None
        """When the kubelet first saw ``deletionTimestamp`` (SIGTERM sent)."""
        self.kill_at = float("inf")
        """When the containers will have stopped (own exit after SIGTERM, or SIGKILL at the deadline)."""
        self.kill_code = 137
        self.timers: list[Timer] = []
        self.immediate: deque[tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        """Zero-delay steps, run in order before the next status write (one write per instant)."""
        self.conditions_built: BuiltConditions | None = None

    def all_containers(self) -> list[ContainerRun]:
        return [*self.init_containers, *self.containers]

    def cancel_timers(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()
        for container in self.init_containers:
            container.cancel_timers()
        for container in self.containers:
            container.cancel_timers()
        self.immediate.clear()

    # ------------------------------------------------------------------ phase (getPhase)
    def phase(self) -> str:
        """``getPhase`` (pkg/kubelet/kubelet_pods.go), over our container states."""
        if self.failed_reason is not None:
            return "Failed"  # generateAPIPodStatus: an eviction result (active deadline) fails the pod
        pending_regular_init = pending_sidecars = failed_init = 0
        running = waiting = stopped = succeeded = 0
        for c in self.init_containers:
            if c.role == INIT:
                if c.state == RUNNING:
                    pending_regular_init += 1
                elif c.state == TERMINATED:
                    failed_init += c.exit_code != 0
                elif c.last_terminated is not None:
                    failed_init += c.last_terminated["exitCode"] != 0
                else:
                    pending_regular_init += 1
            elif c.state == RUNNING:
                pending_sidecars += not c.started
                running += 1
            elif c.state == WAITING and c.last_terminated is None:
                pending_sidecars += 1
                waiting += 1
        for c in self.containers:
            if c.state == RUNNING:
                running += 1
            elif c.state == TERMINATED:
                stopped += 1
                succeeded += c.exit_code == 0
            elif c.last_terminated is not None:
                stopped += 1
            else:
                waiting += 1
        if failed_init and self.restart_policy == "Never":
            return "Failed"
        if pending_regular_init or (pending_sidecars and not self.regular_started) or waiting:
            return "Pending"
        if running:
            return "Running"
        if stopped:
            if self.terminal:
                return "Succeeded" if stopped == succeeded else "Failed"
            if self.restart_policy == "Always":
                return "Running"
            if stopped == succeeded:
                return "Succeeded"
            return "Failed" if self.restart_policy == "Never" else "Running"
        return "Pending"


class ConditionSpec(NamedTuple):
    """A kubelet-owned condition before it becomes a dict. Two equal specs build equal conditions, so
    :func:`build_status` compares specs instead of dicts."""

    type: str
    status: bool
    reason: str | None = None
    message: str | None = None


class BuiltConditions(NamedTuple):
    """What :func:`build_status` last built, so the next build can reuse it while nobody replaced it."""

    conditions: list[Obj]
    """The whole ``status.conditions`` list written."""
    owned: Sequence[Obj | None]
    """Its kubelet-owned conditions, in :data:`KUBELET_CONDITIONS` order."""
    others: list[Obj]
    """The conditions of other owners it carried over, in order."""
    specs: Sequence[ConditionSpec | None]
    """The specs ``owned`` was built from."""


_NO_SPECS: tuple[None, ...] = (None,) * len(KUBELET_CONDITIONS)
# Specs without a message, built once: most status builds produce only these.
_SANDBOX_READY = ConditionSpec("PodReadyToStartContainers", True)
_SANDBOX_NOT_READY = ConditionSpec("PodReadyToStartContainers", False)
_INITIALIZED = ConditionSpec("Initialized", True)
_INITIALIZED_COMPLETED = ConditionSpec("Initialized", True, "PodCompleted")
_READY = ConditionSpec("Ready", True)
_CONTAINERS_READY = ConditionSpec("ContainersReady", True)
_TERMINAL_READINESS = {
    reason: (ConditionSpec("Ready", False, reason), ConditionSpec("ContainersReady", False, reason))
    for reason in ("PodCompleted", "PodFailed")
}


def _condition(cond_type: str, status: bool, reason: str | None = None, message: str | None = None) -> Obj:
    out: Obj = {"type": cond_type, "status": "True" if status else "False", "lastProbeTime": None}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def _names(containers: list[ContainerRun]) -> str:
    """Go's ``%s`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(c.name for c in containers) + "]"


def kubelet_condition_specs(worker: PodWorker, phase: str, api_conditions: list[Obj]) -> list[ConditionSpec]:
    """PodReadyToStartContainers, Initialized, Ready, ContainersReady (``pkg/kubelet/status/generate.go``)
    as :class:`ConditionSpec` s, in :data:`KUBELET_CONDITIONS` order."""
    sandbox = (_SANDBOX_READY if worker.sandbox_ready and phase not in TERMINAL_PHASES
               else _SANDBOX_NOT_READY)
    any_regular_ran = any(c.ever_ran for c in worker.containers)
    initialized: ConditionSpec
    if phase == "Succeeded":
        initialized = _INITIALIZED_COMPLETED
    else:
        incomplete = [c for c in worker.init_containers if not _init_complete(c)]
        initialized = (_not_initialized(f"containers with incomplete status: {_names(incomplete)}")
                       if incomplete and not any_regular_ran else _INITIALIZED)
    ready: ConditionSpec
    containers_ready: ConditionSpec
    if phase in TERMINAL_PHASES:
        ready, containers_ready = _TERMINAL_READINESS["PodCompleted" if phase == "Succeeded" else "PodFailed"]
        return [sandbox, initialized, ready, containers_ready]
    unready = [c for c in worker.init_containers if c.role == SIDECAR and not c.ready]
    unready += [c for c in worker.containers if not c.ready]
    if unready:
        containers_ready, ready = _not_ready(f"containers with unready status: {_names(unready)}")
    else:
        containers_ready = _CONTAINERS_READY
        ready = _READY
        gate_messages = _readiness_gate_messages(worker.readiness_gates, api_conditions)
        if gate_messages:
            ready = ConditionSpec("Ready", False, "ReadinessGatesNotReady", ", ".join(gate_messages))
    return [sandbox, initialized, ready, containers_ready]


@lru_cache(maxsize=256)
def _not_initialized(message: str) -> ConditionSpec:
    """``Initialized=False``; cached by message, as the pods of one template say the same thing."""
    return ConditionSpec("Initialized", False, "ContainersNotInitialized", message)


@lru_cache(maxsize=256)
def _not_ready(message: str) -> tuple[ConditionSpec, ConditionSpec]:
    """``ContainersReady=False`` and ``Ready=False`` for ``message``; cached, as :func:`_not_initialized`."""
    return (ConditionSpec("ContainersReady", False, "ContainersNotReady", message),
            ConditionSpec("Ready", False, "ContainersNotReady", message))


def _init_complete(c: ContainerRun) -> bool:
    """A sidecar counts once started; a regular init container once it exited 0."""
    return c.started if c.role == SIDECAR else c.state == TERMINATED and c.exit_code == 0


def _readiness_gate_messages(gates: list[str], conditions: list[Obj]) -> list[str]:
    messages = []
    for gate in gates:
        cond = next((c for c in conditions if c.get("type") == gate), None)
        if cond is None:
            messages.append(f'corresponding condition of pod readiness gate "{gate}" does not exist.')
        elif cond.get("status") != "True":
            messages.append(
                f'the status of pod readiness gate "{gate}" is not "True", but {cond.get("status")}')
    return messages


def build_status(worker: PodWorker, pod: Obj, stamp: str) -> Obj:
    """A new ``PodStatus`` for ``pod`` from the worker's state; ``pod`` itself is left untouched."""
    old: Obj = pod.get("status") or {}
    status = dict(old)
    phase = worker.phase()
    if old.get("phase") in TERMINAL_PHASES:
        phase = old["phase"]  # "pods are not allowed to transition out of terminal phases"
    status["phase"] = phase
    old_conditions: list[Obj] = old.get("conditions") or []
    previous_conditions, others, previous_specs = _split_conditions(worker, old_conditions)
    specs = kubelet_condition_specs(worker, phase, old_conditions)
    owned: list[Obj] = []
    kept = 0
    for spec, previous, previous_spec in zip(specs, previous_conditions, previous_specs, strict=True):
        if spec == previous_spec and previous is not None:
            # The stored condition is what this very spec built last time: the fresh one would equal
            # it, transition time included, and the stored one would be kept.
            owned.append(previous)
            kept += 1
            continue
        fresh = _condition(*spec)
        if previous is not None and previous.get("status") == fresh["status"]:
            fresh["lastTransitionTime"] = previous.get("lastTransitionTime")
        else:
            fresh["lastTransitionTime"] = stamp
        owned.append(previous if previous is not None and fresh == previous else fresh)
    # Every condition kept: the stored list (the last build's, see _split_conditions) says it all.
    conditions = old_conditions if kept == len(owned) else [*owned, *others]
    # tuple.__new__ skips the generated __new__ (a Python call): this runs for every status build.
    worker.conditions_built = tuple.__new__(BuiltConditions, (conditions, owned, others, specs))
    status["conditions"] = conditions
    if worker.host_ip is not None:
        status["hostIP"] = worker.host_ip
        status["hostIPs"] = _ip_list(old.get("hostIPs"), worker.host_ip)
    if worker.pod_ip is not None:
        status["podIP"] = worker.pod_ip
        status["podIPs"] = _ip_list(old.get("podIPs"), worker.pod_ip)
    if worker.start_time is not None:
        status["startTime"] = worker.start_time
    if worker.failed_reason is not None:
        status["reason"], status["message"] = worker.failed_reason
    if worker.init_containers:
        status["initContainerStatuses"] = [c.status() for c in worker.init_containers]
    # convertToAPIContainerStatuses sorts regular container statuses by name (SortedContainerStatuses).
    statuses = [c.status() for c in worker.containers]
    if len(statuses) > 1:
        statuses.sort(key=itemgetter("name"))
    status["containerStatuses"] = statuses
    return status


def _ip_list(previous: list[Obj] | None, ip: str) -> list[Obj]:
    """``[{"ip": ip}]``: the stored list if it says exactly that (so an unchanged status compares as
    identical, and nothing is rebuilt), else a new one."""
    if type(previous) is list and len(previous) == 1 and previous[0] == {"ip": ip}:
        return previous
    return [{"ip": ip}]


def _split_conditions(worker: PodWorker, conditions: list[Obj]) -> tuple[
        Sequence[Obj | None], list[Obj], Sequence[ConditionSpec | None]]:
    """The conditions of each kubelet-owned type (in :data:`KUBELET_CONDITIONS` order; the last one of
    a type, or None), the ones of other types, in order, and the specs the kubelet-owned ones were built
    from (None: unknown). If ``conditions`` is the very list the last build made (nobody replaced it
    since: the usual case), that build's split is reused."""
    built = worker.conditions_built
    if built is not None:
        built_conditions, owned, others, specs = built  # unpacked: cheaper than attribute reads
        if built_conditions is conditions:
            return owned, others, specs
    by_type = {c.get("type"): c for c in conditions}
    return ([by_type.get(t) for t in KUBELET_CONDITIONS],
            [c for c in conditions if c.get("type") not in KUBELET_CONDITIONS], _NO_SPECS)


def container_id(uid: str, name: str, restart_count: int) -> str:
    """A stable fake CRI container ID for one run of a container."""
    return "containerd://" + hashlib.sha256(f"{uid}/{name}/{restart_count}".encode()).hexdigest()


def go_seconds(seconds: float) -> str:
    """A duration as Go's ``time.Duration.String`` prints it (``0s``, ``1.5s``, ``2m0s``, ``1h0m30s``)."""
    if seconds <= 0:
        return "0s"
    whole = int(seconds)
    fraction = f"{seconds - whole:.9f}".rstrip("0").rstrip(".")[1:] if seconds != whole else ""
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}{fraction}s"
    if minutes:
        return f"{minutes}m{secs}{fraction}s"
    return f"{secs}{fraction}s"


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole seconds: ``10s``, ``1m20s``, ``5m0s``, ``1h0m0s``."""
    return go_seconds(int(seconds))
