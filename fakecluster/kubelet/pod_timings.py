"""How the emulated node treats one pod: the timings a scenario's ``pods:`` rules resolve to.

The kubelet and scheduler ask a resolver (built by the scenario runner from the rules, or a constant in
unit tests) for each pod's :class:`PodTimings`; the cluster never interprets scenario files itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from fakecluster.api.objects import Obj

NEVER = math.inf
"""A delay that never elapses (``ready: never``, ``exit: never``)."""


@dataclass(frozen=True, slots=True)
class PodTimings:
    """Delays in virtual seconds; ``None`` means the rule left it to the pod's own spec."""

    schedule: float = 0.0
    """From creation until the scheduler binds the pod (if a node fits)."""
    pull: float = 0.0
    """Image pull: container waiting with reason ContainerCreating."""
    start: float = 0.0
    """From pull done until the container runs (pod phase Running)."""
    ready: float | None = None
    """From running until Ready; None: readinessProbe/startupProbe decide, else Ready at once."""
    exit_after: float | None = None
    """From running until the container exits; None: the command decides (``sleep N``), else never."""
    exit_code: int = 0
    exit_runs: tuple[tuple[float, int], ...] = ()
    """Per successive run of a container (its restart count), (exit_after, exit_code); the last entry
    repeats. Empty: every run uses ``exit_after``/``exit_code``."""
    terminate: float = 0.0
    """After deletion: time the containers take to stop (capped by the grace period)."""
    jitter: float = 0.0
    """Each delay above gets a seeded random extra in [0, jitter]."""
    pull_failures: float = 0
    """How many image pulls fail (``ErrImagePull``, then ``ImagePullBackOff``) before one succeeds; each
    attempt takes ``pull``; ``NEVER`` (inf): every pull fails."""
    probe_fail_for: Mapping[str, float] = field(default_factory=dict)
    """Per probe kind (``startup``, ``readiness``, ``liveness``): seconds from each container start during
    which that probe fails (``NEVER``: always); kinds not given always succeed
    (:func:`fakecluster.kubelet.prober.probe_succeeds`)."""


class Jitters(NamedTuple):
    """One pod's seeded extras in [0, ``jitter``], one per delay, drawn once when the kubelet admits it."""

    pull: float
    start: float
    ready: float
    exit_after: float
    terminate: float


NO_JITTER = Jitters(0.0, 0.0, 0.0, 0.0, 0.0)


BehaviourResolver = Callable[[Obj], PodTimings]


def default_behaviour(_pod: Obj) -> PodTimings:
    return PodTimings()
