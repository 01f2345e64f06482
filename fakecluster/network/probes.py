"""``tcpSocket``/``httpGet`` probes of a container whose program is modelled: they succeed at a probe tick
only when the program listens on the probed port.

Kept as one small pure function so the kubelet's prober timing can change around it. Ticks follow the
prober worker (``pkg/kubelet/prober/worker.go``): the first at ``initialDelaySeconds`` after the
container started, then every ``periodSeconds`` (default 10); the readiness worker also runs at once when
the startup probe succeeds (``prober_manager.go UpdatePodStatus``, ``manualTriggerCh``). The default
``successThreshold`` of 1 is what applies; ``failureThreshold`` restarts of a startup probe that never
succeeds are not modelled (the container simply never becomes started). ``exec`` and ``grpc`` probes keep
the version-1 behaviour (success at ``initialDelaySeconds``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from fakecluster.api.objects import Obj

DEFAULT_PERIOD = 10.0


def _port_of(probe: Obj, container: Obj) -> int | str | None:
    """The probed port (``None`` for an exec/grpc probe; a name that no container port has: ``"?"``)."""
    handler = probe.get("tcpSocket") or probe.get("httpGet")
    if handler is None:
        return None
    port = handler.get("port")
    if isinstance(port, int):
        return port
    for declared in container.get("ports") or ():
        if declared.get("name") == port:
            return int(declared.get("containerPort"))
    return "?"


def _first_tick(probe: Obj, at_or_after: float) -> float:
    delay = float(probe.get("initialDelaySeconds") or 0)
    if at_or_after <= delay:
        return delay
    period = float(probe.get("periodSeconds") or DEFAULT_PERIOD)
    return delay + math.ceil(round((at_or_after - delay) / period, 9)) * period


def probe_success(probe: Obj, container: Obj, listening: Sequence[int], listen_after: float,
                  trigger: float = 0.0) -> float:
    """Seconds after container start of the probe's first success (``inf``: never), given the program
    listens on ``listening`` from ``listen_after`` on; ``trigger`` is a manual run (startup success)."""
    port = _port_of(probe, container)
    if port is None:
        return max(trigger, float(probe.get("initialDelaySeconds") or 0))
    if port not in listening:
        return math.inf
    delay = float(probe.get("initialDelaySeconds") or 0)
    if trigger >= delay and trigger >= listen_after:
        return trigger
    return _first_tick(probe, max(listen_after, trigger))


def program_probe_delays(container: Obj, listening: Sequence[int],
                         listen_after: float) -> tuple[float, float]:
    """(started, ready) delays for a container running a program, as ``probe_delays`` for others."""
    startup = container.get("startupProbe")
    started = probe_success(startup, container, listening, listen_after) if startup is not None else 0.0
    readiness = container.get("readinessProbe")
    if readiness is None:
        return started, started
    if math.isinf(started):
        return started, started
    return started, max(started, probe_success(readiness, container, listening, listen_after, started))
