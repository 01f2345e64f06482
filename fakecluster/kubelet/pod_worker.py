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
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

from fakecluster.api.objects import Obj
from fakecluster.clock import Timer
from fakecluster.kubelet.pod_timings import NO_JITTER, Jitters, PodTimings

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


_NEVER_TERMINATED: Obj = {}
"""The ``lastState`` of a container that never terminated: one object for all of them (nobody changes a
stored object, see :meth:`ContainerRun.status`)."""


@lru_cache(maxsize=256)
def _running(started_at: str | None) -> Obj:
    """A ``running`` container state; cached, so the containers that started in the same second share it."""
    return {"running": {"startedAt": started_at}}


@lru_cache(maxsize=256)
def _waiting(reason: str, message: str | None) -> Obj:
    """A ``waiting`` container state; cached, as :func:`_running` (``ContainerCreating``: every pod's)."""
    waiting: Obj = {"reason": reason}
    if message:
        waiting["message"] = message
    return {"waiting": waiting}


@lru_cache(maxsize=1024)
def _host_ips(host_ip: str) -> list[Obj]:
    """``status.hostIPs`` of the pods on the node ``host_ip``: one list for all of them, as nobody changes
    a stored object (see :meth:`ContainerRun.status`); some 250 bytes per pod otherwise."""
    return [{"ip": host_ip}]


NO_STEPS: list[tuple[Callable[..., None], tuple[Any, ...]]] = []
"""The :attr:`PodWorker.immediate` of every pod with no step queued: one empty list, never appended to
(:meth:`PodWorker.queue_step` gives a pod a list of its own first)."""

_NO_CONTAINERS: list[ContainerRun] = []
"""The :attr:`PodWorker.init_containers` of every pod that has none: one empty list (some 56 bytes per
pod otherwise), never changed, like every worker's container lists."""

_NOT_BUILT: Obj = {}
"""A container's :attr:`ContainerRun.built_status` before its first build and once retired (never read
then: no inputs equal ``None``)."""


class ContainerRun:
    """Runtime state of one container of a pod (what the CRI runtime would report for it)."""

    __slots__ = ("backoff", "backoff_updated", "built_inputs", "built_status", "container_id", "ever_ran",
                 "image", "last_terminated", "name", "ready", "restart_count", "role", "run_id", "spec",
                 "started", "started_at", "state", "terminated", "timers", "waiting_message",
                 "waiting_reason")

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
        self.built_inputs: tuple[Any, ...] | None = None
        self.built_status: Obj = _NOT_BUILT
        """The last :meth:`status` and the inputs it was built from (two slots, not a pair: a tuple per
        running container less)."""

    def cancel_timers(self) -> None:
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()

    @property
    def exit_code(self) -> int | None:
        return None if self.terminated is None else self.terminated["exitCode"]

    def status(self) -> Obj:
        """``v1.ContainerStatus`` for this container: the last one built while its inputs are unchanged.

        Sharing it between pod status versions is safe: the store never mutates a stored object, and
        neither does anyone holding one (the API server's snapshot guard checks that in tests). A container
        whose state did not change then keeps the very object the stored status holds, so the next status
        compares equal by identity, in C, and a pod with several containers rebuilds only the one that
        changed (``convertToAPIContainerStatuses`` in ``pkg/kubelet/kubelet_pods.go`` rebuilds all of them:
        the result is equal).

        The inputs: every field :meth:`_build_status` reads that can change (``name`` and ``image`` never
        do), gathered here rather than by a method of their own (a call per status build less)."""
        inputs = (self.state, self.waiting_reason, self.waiting_message, self.started_at, self.terminated,
                  self.last_terminated, self.ready, self.started, self.restart_count, self.ever_ran,
                  self.container_id)
        if inputs == self.built_inputs:
            return self.built_status
        status = self._build_status()
        self.built_inputs, self.built_status = inputs, status
        return status

    def _build_status(self) -> Obj:
        if self.state == RUNNING:
            state = _running(self.started_at)
        elif self.state == TERMINATED:
            state = {"terminated": self.terminated}
        else:
            state = _waiting(self.waiting_reason, self.waiting_message)
        out: Obj = {
            "name": self.name,
            "image": self.image,
            "imageID": image_id(self.image) if self.ever_ran else "",
            "ready": self.ready,
            "started": self.started,
            "restartCount": self.restart_count,
            "state": state,
            "lastState": (_NEVER_TERMINATED if self.last_terminated is None
                          else {"terminated": self.last_terminated}),
        }
        if self.container_id:
            out["containerID"] = self.container_id
        return out


class PodWorker:
    """The kubelet's per-pod state machine data. Behaviour lives in
    :class:`fakecluster.kubelet.kubelet.Kubelet`."""

    __slots__ = ("active_deadline", "conditions_built", "containers", "containers_by_name",
                 "delete_after_sync", "done", "failed_reason", "grace_period", "host_ip", "host_ips",
                 "immediate", "init_containers", "init_index", "jitters", "kill_at", "kill_code", "name",
                 "namespace", "node", "pod_ip", "pod_ips", "readiness_gates", "regular_started",
                 "restart_policy", "sandbox_ready", "start_time", "stop_requested_at", "terminal",
                 "terminating", "timers", "timings", "uid")

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
        gates = spec.get("readinessGates")
        self.readiness_gates = tuple(g.get("conditionType") for g in gates) if gates else ()
        """A tuple: nearly every pod has none, and the empty tuple is one object for all of them (and no
        generator is made for them)."""
        deadline = spec.get("activeDeadlineSeconds")
        self.active_deadline: float | None = None if deadline is None else float(deadline)
        """``spec.activeDeadlineSeconds`` as admitted (``pkg/kubelet/active_deadline.go``)."""
        self.failed_reason: tuple[str, str] | None = None
        """(reason, message) of a pod the kubelet itself failed, e.g. ``DeadlineExceeded``."""
        init_specs = spec.get("initContainers") or ()
        default_reason = "PodInitializing" if init_specs else "ContainerCreating"
        self.init_containers: list[ContainerRun] = [
            ContainerRun(c, SIDECAR if c.get("restartPolicy") == "Always" else INIT, default_reason)
            for c in init_specs
        ] if init_specs else _NO_CONTAINERS
        """:data:`_NO_CONTAINERS` for the pods without init containers: these lists are never changed."""
        self.containers = [ContainerRun(c, REGULAR, default_reason) for c in spec.get("containers") or ()]
        self.containers_by_name = (self.containers if len(self.containers) < 2
                                   else sorted(self.containers, key=attrgetter("name")))
        """The regular containers in the order of their statuses: ``convertToAPIContainerStatuses`` sorts
        them by name (``SortedContainerStatuses``); a stable sort, so equal names keep spec order. A lone
        container is in order already: the same list (neither is ever changed), not a copy per pod."""
        self.init_index = 0
        self.regular_started = False
        self.host_ip: str | None = None
        self.host_ips: list[Obj] | None = None
        self.pod_ip: str | None = None
        self.pod_ips: list[Obj] | None = None
        """``status.podIPs`` as the kubelet writes it once the sandbox is up (see :meth:`admitted`); None
        before, and once retired."""
        self.start_time: str | None = None
        """``hostIP(s)``, ``podIP(s)`` and ``startTime`` above: as the status says them, from
        :meth:`admitted` on (:func:`build_status` writes them when the stored status lacks them)."""
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
        self.kill_at = math.inf
        """When the containers will have stopped (own exit after SIGTERM, or SIGKILL at the deadline)."""
        self.kill_code = 137
        self.timers: list[Timer] = []
        self.immediate: list[tuple[Callable[..., None], tuple[Any, ...]]] = NO_STEPS
        """Zero-delay steps, run in order before the next status write (one write per instant): queued
        with :meth:`queue_step`. A list while it holds steps, else the one shared empty list
        :data:`NO_STEPS` (a list of its own would be 56 bytes more per pod the kubelet knows; a deque,
        700)."""
        self.conditions_built: BuiltConditions | None = None

    def admitted(self, start_time: str, host_ip: str, pod_ip: str) -> None:
        """The pod sandbox is up: the pod started at ``start_time`` on the node ``host_ip`` with ``pod_ip``.

        What the status says about that never changes again, so its fields are built once, here, and
        every status build shares them (the store never mutates a stored object): a status that did not
        change them holds the very lists the stored one holds, and compares equal by identity."""
        self.start_time, self.host_ip, self.pod_ip = start_time, host_ip, pod_ip
        self.host_ips, self.pod_ips = _host_ips(host_ip), [{"ip": pod_ip}]
        self.sandbox_ready = True

    def retire(self) -> None:
        """Drop what only the next status build or step reads, once :attr:`done` (which is never undone)
        and the last status written: the kubelet never builds this pod's status again nor runs a step
        for it (a step for a done worker is not run), and a node's finished pods stay known to it until
        deleted, some 700 bytes each (the jitters: an array of seven doubles)."""
        self.conditions_built = None
        self.pod_ips = None
        self.jitters = NO_JITTER
        for container in self.init_containers:
            container.built_inputs, container.built_status = None, _NOT_BUILT
        for container in self.containers:
            container.built_inputs, container.built_status = None, _NOT_BUILT

    def queue_step(self, step: Callable[..., None], args: tuple[Any, ...]) -> None:
        """Queue a zero-delay step (see :attr:`immediate`)."""
        immediate = self.immediate
        if immediate is NO_STEPS:
            immediate = self.immediate = []
        immediate.append((step, args))

    def idle(self) -> bool:
        """No timer of the pod or of its containers is pending (nor any queued step)."""
        if self.timers or self.immediate:
            return False
        # Loops, not any() over a generator: its resumptions from C cost more (this runs as a pod ends).
        for c in self.init_containers:
            if c.timers:
                return False
        for c in self.containers:  # noqa: SIM110 -- as above
            if c.timers:
                return False
        return True

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
        if self.init_containers or len(self.containers) != 1:
            return self._counted_phase()
        # A lone regular container (most pods): the same answers without the counters, written here
        # rather than in a method of its own, a call less per status build (tests/test_kubelet_status_
        # build.py compares the two).
        c = self.containers[0]
        state = c.state
        if state == RUNNING:
            return "Running"
        if state == TERMINATED:
            terminated = c.terminated  # (ContainerRun.exit_code, without the property's call)
            succeeded = terminated is not None and terminated["exitCode"] == 0
        elif c.last_terminated is not None:
            succeeded = False
        else:
            return "Pending"
        if self.terminal:
            return "Succeeded" if succeeded else "Failed"
        policy = self.restart_policy
        if policy == "Always":
            return "Running"
        if succeeded:
            return "Succeeded"
        return "Failed" if policy == "Never" else "Running"

    def _counted_phase(self) -> str:
        """``getPhase`` with all its counters, for any pod (:meth:`phase` takes a short way for a lone
        container; tests/test_kubelet_status_build.py holds the two equal)."""
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


BuiltConditions = tuple[list[Obj], Sequence[ConditionSpec | None]]
"""What :func:`build_status` last built, so the next build can reuse it while nobody replaced it: the
whole ``status.conditions`` list written (the kubelet-owned conditions first, one per type in
:data:`KUBELET_CONDITIONS` order, then the other owners' ones it carried over, in order; the split is
not kept beside it, two lists per running pod: when a condition changes, a copy of this list has it
replaced), and the specs the kubelet-owned conditions were built from. A plain
tuple: a named one costs a call (or ``tuple.__new__``, dearer still) at every build that changes a
condition."""


_NO_SPECS: tuple[None, ...] = (None,) * len(KUBELET_CONDITIONS)
_OWNED = len(KUBELET_CONDITIONS)
"""How many conditions of a built list are the kubelet's own (the list of a :data:`BuiltConditions`)."""
# Specs without a message, built once: most status builds produce only these.
_SANDBOX_READY = ConditionSpec("PodReadyToStartContainers", True)
_SANDBOX_NOT_READY = ConditionSpec("PodReadyToStartContainers", False)
_INITIALIZED = ConditionSpec("Initialized", True)
_INITIALIZED_COMPLETED = ConditionSpec("Initialized", True, "PodCompleted")
_READY = ConditionSpec("Ready", True)
_CONTAINERS_READY = ConditionSpec("ContainersReady", True)
_TERMINAL_READINESS = {
    phase: (ConditionSpec("Ready", False, reason), ConditionSpec("ContainersReady", False, reason))
    for phase, reason in (("Succeeded", "PodCompleted"), ("Failed", "PodFailed"))
}
"""``Ready`` and ``ContainersReady`` of a pod in a terminal phase, by phase."""


@lru_cache(maxsize=1024)
def _condition(spec: ConditionSpec, transition: str | None) -> Obj:
    """The ``v1.PodCondition`` ``spec`` builds, last transitioned at ``transition``. Cached, so the pods
    whose condition changed in the same second (a Job's pods turning ready together) share one object:
    sound because nobody changes a stored object (see :meth:`ContainerRun.status`)."""
    out: Obj = {"type": spec.type, "status": "True" if spec.status else "False", "lastProbeTime": None}
    if spec.reason:
        out["reason"] = spec.reason
    if spec.message:
        out["message"] = spec.message
    out["lastTransitionTime"] = transition
    return out


def _names(names: tuple[str, ...]) -> str:
    """Go's ``%s`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(names) + "]"


Specs = tuple[ConditionSpec, ConditionSpec, ConditionSpec, ConditionSpec]
"""The kubelet-owned conditions' specs, in :data:`KUBELET_CONDITIONS` order."""


def kubelet_condition_specs(worker: PodWorker, phase: str, api_conditions: list[Obj]) -> Specs:
    """PodReadyToStartContainers, Initialized, Ready, ContainersReady (``pkg/kubelet/status/generate.go``)
    as :class:`ConditionSpec` s, in :data:`KUBELET_CONDITIONS` order."""
    if phase in TERMINAL_PHASES:
        ready, containers_ready = _TERMINAL_READINESS[phase]
        initialized = _INITIALIZED_COMPLETED if phase == "Succeeded" else _initialized(worker)
        return _SANDBOX_NOT_READY, initialized, ready, containers_ready
    sandbox = _SANDBOX_READY if worker.sandbox_ready else _SANDBOX_NOT_READY
    containers = worker.containers
    if worker.init_containers:
        initialized = _initialized(worker)
        unready = [c.name for c in worker.init_containers if c.role == SIDECAR and not c.ready]
        unready += [c.name for c in containers if not c.ready]
    else:
        initialized = _INITIALIZED
        if len(containers) == 1:  # most pods: their one container decides, without a list of names
            if not containers[0].ready:
                containers_ready, ready = _not_ready((containers[0].name,))
                return sandbox, initialized, ready, containers_ready
            unready = _NO_NAMES
        else:
            unready = [c.name for c in containers if not c.ready]
    if unready:
        containers_ready, ready = _not_ready(tuple(unready))
        return sandbox, initialized, ready, containers_ready
    if not worker.readiness_gates:
        return sandbox, initialized, _READY, _CONTAINERS_READY
    gate_messages = _readiness_gate_messages(worker.readiness_gates, api_conditions)
    ready = ConditionSpec("Ready", False, "ReadinessGatesNotReady", ", ".join(gate_messages)) \
        if gate_messages else _READY
    return sandbox, initialized, ready, _CONTAINERS_READY


_NO_NAMES: list[str] = []
"""No unready container (never changed)."""


def _initialized(worker: PodWorker) -> ConditionSpec:
    """``Initialized`` of a pod not ``Succeeded``: false while an init container is incomplete and no
    regular container has run yet (``generate.go`` ``GeneratePodInitializedCondition``)."""
    if not worker.init_containers:
        return _INITIALIZED
    incomplete = [c.name for c in worker.init_containers if not _init_complete(c)]
    if incomplete and not any(c.ever_ran for c in worker.containers):
        return _not_initialized(tuple(incomplete))
    return _INITIALIZED


@lru_cache(maxsize=256)
def _not_initialized(names: tuple[str, ...]) -> ConditionSpec:
    """``Initialized=False`` for the incomplete containers ``names``; cached, as the pods of one template
    say the same thing."""
    return ConditionSpec("Initialized", False, "ContainersNotInitialized",
                         f"containers with incomplete status: {_names(names)}")


@lru_cache(maxsize=256)
def _not_ready(names: tuple[str, ...]) -> tuple[ConditionSpec, ConditionSpec]:
    """``ContainersReady=False`` and ``Ready=False`` for the unready containers ``names``; cached, as
    :func:`_not_initialized`."""
    message = f"containers with unready status: {_names(names)}"
    return (ConditionSpec("ContainersReady", False, "ContainersNotReady", message),
            ConditionSpec("Ready", False, "ContainersNotReady", message))


def _init_complete(c: ContainerRun) -> bool:
    """A sidecar counts once started; a regular init container once it exited 0."""
    return c.started if c.role == SIDECAR else c.state == TERMINATED and c.exit_code == 0


def _readiness_gate_messages(gates: Sequence[str], conditions: list[Obj]) -> list[str]:
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
    """A new ``PodStatus`` for ``pod`` from the worker's state; ``pod`` itself is left untouched.

    ``generateAPIPodStatus`` (``pkg/kubelet/kubelet_pods.go``) builds every field afresh; here every
    sub-object that would come out equal to the stored one *is* the stored one (conditions, the IP
    lists, each container's status, the status lists), so only what changed is new: the status manager
    (``pkg/kubelet/status/status_manager.go``) compares the result with what it wrote last, and that
    comparison, ours and the API server's, then costs almost nothing for the unchanged parts. Nothing
    shared is ever mutated afterwards: the store copies on write."""
    old: Obj = pod.get("status") or {}
    status = dict(old)
    old_phase = old.get("phase")
    # "pods are not allowed to transition out of terminal phases"
    phase = old_phase if old_phase in TERMINAL_PHASES else worker.phase()
    status["phase"] = phase
    status["conditions"] = _conditions(worker, phase, old.get("conditions") or [], stamp)
    pod_ips = worker.pod_ips
    if pod_ips is not None and (
            status.get("podIPs") is not pod_ips or status.get("podIP") is not worker.pod_ip
            or status.get("hostIP") is not worker.host_ip or status.get("hostIPs") is not worker.host_ips
            or status.get("startTime") is not worker.start_time):
        # The placement fields, unless the stored status holds them already (every status the kubelet
        # wrote since admission, and any other writer's copy of one): the same keys in the same order.
        # (Five stores, not an update with keywords: that builds a dict of them first.)
        status["hostIP"] = worker.host_ip
        status["hostIPs"] = worker.host_ips
        status["podIP"] = worker.pod_ip
        status["podIPs"] = pod_ips
        status["startTime"] = worker.start_time
    if worker.failed_reason is not None:
        status["reason"], status["message"] = worker.failed_reason
    if worker.init_containers:
        status["initContainerStatuses"] = _container_statuses(worker.init_containers,
                                                              old.get("initContainerStatuses"))
    status["containerStatuses"] = _container_statuses(worker.containers_by_name, old.get("containerStatuses"))
    return status


def _conditions(worker: PodWorker, phase: str, old_conditions: list[Obj], stamp: str) -> list[Obj]:
    """``status.conditions``: the kubelet-owned ones (``lastTransitionTime`` kept while the status is
    unchanged, as ``updateLastTransitionTime`` in ``status_manager.go`` does), then the others' ones, in
    their order; ``old_conditions`` itself if that is what it says."""
    built = worker.conditions_built
    specs = kubelet_condition_specs(worker, phase, old_conditions)
    if built is not None and built[0] is old_conditions:
        # The very list the last build made (nobody replaced it since: the usual case).
        previous_specs = built[1]
        if specs == previous_specs:
            # The stored conditions are what these very specs built last time: the fresh ones would
            # equal them, transition times included, and the stored ones are kept.
            return old_conditions
        # A copy with the conditions whose spec changed replaced (as the loop below would build it,
        # without splitting the list and joining it again): the first ones are the kubelet's, built
        # by _condition from ``previous_specs``, none of them None, so their keys are there.
        conditions = old_conditions.copy()
        for i in range(_OWNED):
            spec = specs[i]
            previous_spec = previous_specs[i]
            if spec is not previous_spec and spec != previous_spec:
                before = conditions[i]
                transition = before["lastTransitionTime"] if before["status"] == (
                    "True" if spec.status else "False") else stamp
                fresh = _condition(spec, transition)
                if fresh != before:
                    conditions[i] = fresh
        worker.conditions_built = (conditions, specs)
        return conditions
    for condition in old_conditions:
        if condition.get("type") in KUBELET_CONDITIONS:
            break
    else:
        # None of the kubelet's conditions yet (its first build: the scheduler's PodScheduled only):
        # each is new, at ``stamp``, before the others' ones, as the loop below would build them.
        sandbox, initialized, ready, containers_ready = specs
        conditions = [_condition(sandbox, stamp), _condition(initialized, stamp), _condition(ready, stamp),
                      _condition(containers_ready, stamp), *old_conditions]
        worker.conditions_built = (conditions, specs)
        return conditions
    previous_conditions, others, previous_specs = _split_conditions(old_conditions)
    owned: list[Obj] = []
    for spec, previous, previous_spec in zip(specs, previous_conditions, previous_specs, strict=True):
        if previous is None:
            owned.append(_condition(spec, stamp))
        elif spec == previous_spec:
            owned.append(previous)  # as above, for this condition alone
        else:
            transition = previous.get("lastTransitionTime") if previous.get("status") == (
                "True" if spec.status else "False") else stamp
            fresh = _condition(spec, transition)
            owned.append(previous if fresh == previous else fresh)
    conditions = [*owned, *others]
    worker.conditions_built = (conditions, specs)
    return conditions


def _container_statuses(runs: list[ContainerRun], previous: list[Obj] | None) -> list[Obj]:
    """The statuses of ``runs``, in order; ``previous`` (the stored list) if it says exactly that. With
    every container unchanged, each status is the very object ``previous`` holds (:meth:`ContainerRun.
    status`), so the comparison is one identity check per container."""
    if len(runs) != 1:
        statuses = [c.status() for c in runs]
        return previous if type(previous) is list and statuses == previous else statuses
    # Most pods have one container (of each role they have): no list built to compare.
    status = runs[0].status()
    if type(previous) is list and len(previous) == 1:
        kept = previous[0]
        if kept is status or kept == status:
            return previous
    return [status]


def _split_conditions(conditions: list[Obj]) -> tuple[
        list[Obj | None], list[Obj], Sequence[ConditionSpec | None]]:
    """The conditions of each kubelet-owned type (in :data:`KUBELET_CONDITIONS` order; the last one of
    a type, or None), the ones of other types, in order, and the specs the kubelet-owned ones were built
    from: unknown (None), as ``conditions`` is not the list the last build made."""
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


class FinishedPod:
    """What the kubelet keeps, until the pod is deleted, of a pod it is done with: its identity and node.

    A done worker (:attr:`PodWorker.done`, never undone) with no timer pending is never run again nor
    asked about its containers; all the kubelet still does for it is answer that it is done and, when the
    pod goes, forget it. A finished Job's pods stay until the Job does, so keeping the whole worker
    (its container runs, their last states, its timer and step lists: some 700 bytes) for each of them
    is per-pod memory for the rest of the run; this stand-in is some 60 bytes. Not its uid: that is its
    key in the kubelet's pods, where it is always looked up by."""

    __slots__ = ("name", "namespace", "node")

    done = True

    def __init__(self, worker: PodWorker) -> None:
        self.namespace = worker.namespace
        self.name = worker.name
        self.node = worker.node
