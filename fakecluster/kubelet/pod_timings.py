"""How the emulated node treats one pod: the timings a scenario's ``pods:`` rules resolve to.

The kubelet and scheduler ask a resolver (built by the scenario runner from the rules, or a constant in
unit tests) for each pod's :class:`PodTimings`; the cluster never interprets scenario files itself.
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING

from fakecluster.api.objects import Obj

if TYPE_CHECKING:
    from fakecluster.network.program import ProgramSpec

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
    jitter_by_phase: tuple[tuple[str, float], ...] = ()
    """Format 1.1 per-phase jitter (``jitter: {pull: 9s}``): only the named delays are jittered (names
    ``schedule``, ``pull``, ``start``, ``ready``, ``exit``, ``terminate``, ``startup``, ``work``)."""
    program: ProgramSpec | None = None
    """What the pod's container runs on the network (:mod:`fakecluster.network`); None: version 1."""
    pull_failures: float = 0
    """How many image pulls fail (``ErrImagePull``, then ``ImagePullBackOff``) before one succeeds; each
    attempt takes ``pull``; ``NEVER`` (inf): every pull fails."""
    probe_fail_for: Mapping[str, float] = field(default_factory=dict)
    """Per probe kind (``startup``, ``readiness``, ``liveness``): seconds from each container start during
    which that probe fails (``NEVER``: always); kinds not given always succeed
    (:func:`fakecluster.kubelet.prober.probe_succeeds`)."""

    def jitter_of(self, phase: str) -> float:
        """The jitter amount of one delay."""
        if self.jitter_by_phase:
            return dict(self.jitter_by_phase).get(phase, 0.0)
        return self.jitter


KUBELET_JITTER_PHASES = ("pull", "start", "ready", "exit", "terminate", "startup", "work")
"""The order of the kubelet's draws (after the scheduler's ``schedule``): version-1 delays first and in
version-1 order, then the program's, so jittered version-1 scenarios keep their times."""


if TYPE_CHECKING:
    _JitterBase = array[float]
else:
    _JitterBase = array


class Jitters(_JitterBase):
    """One pod's seeded extras, one per delay, drawn once when the kubelet admits it
    (:data:`KUBELET_JITTER_PHASES` order), read by name.

    Seven C doubles (an ``array``), not a named tuple of seven floats: a running pod keeps its own
    until it is done, and the floats drawn were some 120 bytes of it besides the tuple's 104 (an
    array of seven is 120 in all). Reading one makes an equal float."""

    __slots__ = ()

    if TYPE_CHECKING:
        pull: float
        start: float
        ready: float
        exit_after: float
        terminate: float
        startup: float
        """The network program's startup (format 1.1)."""
        work: float
        """The network program's work duration (format 1.1)."""
    else:
        pull, start, ready, exit_after, terminate, startup, work = (property(itemgetter(i)) for i in range(7))

    @classmethod
    def of(cls, values: Sequence[float]) -> Jitters:
        """The jitters ``values`` are, in :data:`KUBELET_JITTER_PHASES` order. From the sequence, not
        packed bytes: an array takes bytes in with room to grow (160 bytes in all, not 136)."""
        return cls("d", values)


NO_JITTER = Jitters.of((0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))


def draw_jitters(rng: random.Random, timings: PodTimings) -> Jitters:
    """One seeded draw per jittered delay, uniform in ``[0, amount]``, for :data:`KUBELET_JITTER_PHASES`.

    A single ``jitter`` draws all five version-1 delays as version 1 did (unrounded, so their times do
    not move), then the program's two; per-phase amounts draw only the named delays, each rounded to
    the microsecond (format 1.1 "Time")."""
    if timings.jitter_by_phase:
        amounts = dict(timings.jitter_by_phase)
        return Jitters.of([round(rng.uniform(0.0, amounts[p]), 6) if amounts.get(p, 0.0) > 0 else 0.0
                           for p in KUBELET_JITTER_PHASES])
    if timings.jitter <= 0:
        return NO_JITTER
    v1 = [rng.uniform(0.0, timings.jitter) for _ in range(5)]
    if timings.program is None:
        return Jitters.of((*v1, 0.0, 0.0))
    return Jitters.of((*v1, *(round(rng.uniform(0.0, timings.jitter), 6) for _ in range(2))))


BehaviourResolver = Callable[[Obj], PodTimings]


def default_behaviour(_pod: Obj) -> PodTimings:
    return PodTimings()
