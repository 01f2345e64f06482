"""Probe workers as the kubelet runs them: ``pkg/kubelet/prober/worker.go`` and ``prober_manager.go``.

One worker per container and probe kind (startup, readiness, liveness), started when the kubelet admits
the pod (``prober_manager.AddPod`` in ``HandlePodAdditions``, before any image pull). A worker probes once
at once, then on every ``periodSeconds`` tick *from its start*, so ticks fall on period multiples from
admission, not from the container's start. ``doProbe`` per tick:

- a container that is not running: readiness reads as failed; nothing else happens;
- a new container instance (a restart): results reset to the kind's initial value (readiness: failure,
  liveness: success, startup: unknown) and a held worker resumes;
- ``initialDelaySeconds``: ticks earlier than that many whole seconds after the container started are
  skipped (``int32(time.Since(startedAt).Seconds()) < InitialDelaySeconds``) - the delay does not move
  the ticks;
- a startup worker probes only until the container has started; readiness and liveness only after;
- a result must repeat ``successThreshold`` (default 1) or ``failureThreshold`` (default 3) times in a
  row before it is reported;
- a reported liveness or startup failure kills the container (the kubelet restarts it per the pod's
  restartPolicy and crash-loop back-off) and holds the worker until the next container instance.

``prober_manager.UpdatePodStatus`` also triggers the readiness worker at once (``manualTriggerCh``)
whenever a started container is not ready yet and the pod's status is generated: when the container
starts running and when its startup probe succeeds; those extra probes do not move the ticks.
``on_failed`` hears every failed probe (the kubelet's ``Unhealthy`` event, when pod Events are recorded).

Not emulated: the random initial sleep (up to one period) a worker takes when the kubelet itself has
just started, and probe timeouts. Whether one probe succeeds is
:func:`probe_succeeds`, one small function; for a container running a network program
(:mod:`fakecluster.network`) a tcpSocket/httpGet probe also needs the program to listen on the probed
port at that tick (:func:`fakecluster.network.probes.program_probe_succeeds`), so such probes follow the
program's listening state on the workers' own schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fakecluster.api.objects import Obj
from fakecluster.clock import Clock, Timer
from fakecluster.network.probes import program_probe_succeeds

if TYPE_CHECKING:
    from fakecluster.kubelet.pod_worker import ContainerRun, PodWorker

STARTUP, READINESS, LIVENESS = "startup", "readiness", "liveness"
PROBE_FIELDS = {STARTUP: "startupProbe", READINESS: "readinessProbe", LIVENESS: "livenessProbe"}
DEFAULT_PERIOD = 10.0
DEFAULT_FAILURE_THRESHOLD = 3
DEFAULT_SUCCESS_THRESHOLD = 1


def probe_succeeds(kind: str, container_started: float, now: float, fail_for: Mapping[str, float],
                   network: bool | None = None) -> bool:
    """Does a ``kind`` probe of a container that started at ``container_started`` succeed at ``now``?

    The scenario's ``probes: {<kind>: {failFor: <duration>}}`` makes it fail during the first ``failFor``
    seconds of every run of the container (``never``: it always fails); ``network`` is the network's
    verdict on a tcpSocket/httpGet probe of a program's container (does the program listen on the port
    now; ``None``: not such a probe); otherwise probes succeed."""
    if network is False:
        return False
    window = fail_for.get(kind)
    return window is None or now - container_started >= window


@dataclass(slots=True)
class ProbeWorker:
    """``worker``: one probe of one container."""

    kind: str
    container: ContainerRun
    spec: Obj
    """The probe (its handler decides whether the network has a say)."""
    period: float
    initial_delay: int
    success_threshold: int
    failure_threshold: int
    run_id: int = -1
    """The container instance the results belong to (``containerID``)."""
    started_at: float = 0.0
    last_result: bool | None = None
    result_run: int = 0
    on_hold: bool = False
    timer: Timer | None = None

    @classmethod
    def of(cls, kind: str, container: ContainerRun, probe: Obj) -> ProbeWorker:
        period = float(probe.get("periodSeconds") or DEFAULT_PERIOD)
        return cls(kind, container, probe, period if period > 0 else DEFAULT_PERIOD,
                   int(probe.get("initialDelaySeconds") or 0),
                   int(probe.get("successThreshold") or DEFAULT_SUCCESS_THRESHOLD),
                   int(probe.get("failureThreshold") or DEFAULT_FAILURE_THRESHOLD))


class Prober:
    """The probe manager of all kubelets; the kubelet calls it at admission and at container starts.

    ``fire(worker, step, *args)`` runs a step through the kubelet's step machinery (so the status is
    written once), ``kill(worker, container, kind)`` stops a container that failed its liveness or
    startup probe, ``on_started(worker, container)`` tells the kubelet a startup probe succeeded,
    ``listening(worker, container)`` gives the ports a container's program listens on now (``None``: the
    container runs no program)."""

    def __init__(self, clock: Clock, *, fire: Callable[..., None],
                 kill: Callable[[PodWorker, Any, str], None],
                 on_started: Callable[[PodWorker, Any], None],
                 listening: Callable[[PodWorker, Any], Sequence[int] | None] | None = None,
                 on_failed: Callable[[PodWorker, Any, str, Obj], None] | None = None) -> None:
        self.clock = clock
        self._fire = fire
        self._kill = kill
        self._on_started = on_started
        self._on_failed = on_failed
        self._listening = listening
        self._workers: dict[str, list[ProbeWorker]] = {}
        """Probe workers by pod uid."""

    def add_pod(self, worker: PodWorker, *, readiness_by_rule: bool,
                readiness_by_program: ContainerRun | None = None) -> None:
        """``AddPod``: start the workers of every probed container (init containers are never probed,
        native sidecars are). With the scenario rule deciding readiness (for the whole pod, or for the
        container whose program has a ``ready`` condition), only liveness probes run there."""
        fail_for = worker.timings.probe_fail_for
        probes: list[ProbeWorker] = []
        probed = ([*(c for c in worker.init_containers if c.role == "sidecar"), *worker.containers]
                  if worker.init_containers else worker.containers)  # (most pods: no generator to run)
        for c in probed:
            by_rule = readiness_by_rule or c is readiness_by_program
            for kind, field_name in PROBE_FIELDS.items():
                spec = c.spec.get(field_name)
                if spec is None or (by_rule and kind != LIVENESS):
                    continue
                if kind == LIVENESS and kind not in fail_for and not self._network_probe(worker, c, spec):
                    continue  # a liveness probe that always succeeds changes nothing: no worker needed
                probes.append(ProbeWorker.of(kind, c, spec))
        if not probes:
            return
        self._workers[worker.uid] = probes
        for probe in probes:
            self._tick(worker, probe)

    def _network_probe(self, worker: PodWorker, c: ContainerRun, spec: Obj) -> bool:
        """A tcpSocket/httpGet probe of a program's container: it can fail, so it needs its worker."""
        return (self._listening is not None and self._listening(worker, c) is not None
                and program_probe_succeeds(spec, c.spec, ()) is not None)

    def _network_verdict(self, worker: PodWorker, probe: ProbeWorker) -> bool | None:
        if self._listening is None:
            return None
        ports = self._listening(worker, probe.container)
        return None if ports is None else program_probe_succeeds(probe.spec, probe.container.spec, ports)

    def has_probe(self, worker: PodWorker, container: ContainerRun, kind: str) -> bool:
        return any(p.container is container and p.kind == kind for p in self._workers.get(worker.uid, ()))

    def forget(self, uid: str) -> None:
        self._workers.pop(uid, None)

    def manual_trigger(self, worker: PodWorker, container: ContainerRun) -> None:
        for probe in self._workers.get(worker.uid, ()):
            if probe.container is container and probe.kind == READINESS:
                self.do_probe(worker, probe)

    def _tick(self, worker: PodWorker, probe: ProbeWorker) -> None:
        """Probe now, then again one period later (``probeTicker``), while the pod is alive. The pending
        tick is one of the pod's timers, so termination and a stopped node cancel or freeze it."""
        if probe.timer is not None and probe.timer in worker.timers:
            worker.timers.remove(probe.timer)
        probe.timer = None
        if worker.done or worker.terminating:
            return
        self.do_probe(worker, probe)
        probe.timer = self.clock.call_later(probe.period, self._fire, worker, self._tick, probe)
        worker.timers.append(probe.timer)

    def do_probe(self, worker: PodWorker, probe: ProbeWorker) -> None:
        """``doProbe`` for one worker (see the module docstring)."""
        c = probe.container
        if c.state != "running":
            if probe.kind == READINESS:
                c.ready = False
            return
        now = self.clock.now
        if probe.run_id != c.run_id:
            self.reset(probe, c, now)
        if probe.on_hold:
            return
        if int(now - probe.started_at + 1e-9) < probe.initial_delay:
            return
        if (probe.kind == STARTUP) == c.started:
            return  # startup probes run until started; the others only after
        result = probe_succeeds(probe.kind, probe.started_at, now, worker.timings.probe_fail_for,
                                self._network_verdict(worker, probe))
        if not result and self._on_failed is not None:
            self._on_failed(worker, c, probe.kind, probe.spec)
        if result == probe.last_result:
            probe.result_run += 1
        else:
            probe.last_result, probe.result_run = result, 1
        threshold = probe.success_threshold if result else probe.failure_threshold
        if probe.result_run < threshold:
            return
        if probe.kind == READINESS:
            c.ready = result
        elif result:
            if probe.kind == STARTUP:
                c.started = True
                if not self.has_probe(worker, c, READINESS):
                    c.ready = True
                self._on_started(worker, c)
                self.manual_trigger(worker, c)
        else:
            probe.on_hold, probe.result_run = True, 0
            self._kill(worker, c, probe.kind)

    def reset(self, probe: ProbeWorker, container: ContainerRun, now: float) -> None:
        """A new container instance (``containerID`` changed)."""
        probe.run_id, probe.started_at = container.run_id, now
        probe.last_result, probe.result_run, probe.on_hold = None, 0, False

    def container_run_started(self, worker: PodWorker, container: ContainerRun) -> None:
        """Right after a container (re)starts: its workers' results reset, and the status sync that
        follows triggers its readiness probe (``UpdatePodStatus``)."""
        now = self.clock.now
        for probe in self._workers.get(worker.uid, ()):
            if probe.container is container:
                self.reset(probe, container, now)
        self.manual_trigger(worker, container)


__all__ = ["LIVENESS", "READINESS", "STARTUP", "ProbeWorker", "Prober", "probe_succeeds"]
