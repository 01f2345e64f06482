"""The bounds every scenario run stays within, and how a user raises them.

A scenario must end: a restart loop until ``87600h``, ``conflictRate: 1.0`` for a day or ``replicas:
1000000000`` would otherwise run for hours or exhaust memory. So each run has a budget of clock events
and of wall-clock seconds, and the manifests may ask for a bounded number of pods. Defaults are stated
here (and in ``docs/scenario-format.md``); a scenario raises them under ``cluster.budget`` and the command
line (``--max-events``, ``--max-wall-seconds``, ``--max-pods``) overrides both, so a user can always cut a
run short or let a big one through without editing the file.

The node and pod bounds are Kubernetes' own large-cluster guidance ("Considerations for large clusters":
no more than 5,000 nodes and 150,000 pods in total).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fakecluster.clock import Clock

__all__ = [
    "CHECK_EVERY", "DEFAULT_MAX_EVENTS", "DEFAULT_MAX_PODS", "DEFAULT_MAX_WALL_SECONDS", "MAX_NODES",
    "BudgetExhausted", "RunLimits", "install_budget",
]  # fmt: skip

DEFAULT_MAX_EVENTS = 2_000_000
"""Clock events one scenario may run (the library's largest runs ~1,000; 8,000 pods take ~400,000)."""
DEFAULT_MAX_WALL_SECONDS = 120.0
"""Wall-clock seconds one scenario may take."""
DEFAULT_MAX_PODS = 150_000
"""Pods the manifests of one scenario may ask for (replicas x completions, summed)."""
MAX_NODES = 5_000
"""Nodes one scenario's ``cluster.nodes`` may declare."""
CHECK_EVERY = 4096
"""Events between two looks at the wall clock: the per-event cost is one integer comparison."""


@dataclass(frozen=True, slots=True)
class RunLimits:
    """What the user asked for on the command line (``None``: the scenario's value, else the default)."""

    max_events: int | None = None
    max_wall_seconds: float | None = None
    max_pods: int | None = None
    allowed_dirs: tuple[Path, ...] = field(default_factory=tuple)
    """Extra folders ``{file:}`` references may read from (``--allow-dir``)."""


class BudgetExhausted(Exception):
    """The run used its budget; the message is the one line the report shows."""

    def __init__(self, what: str, events: int, now: float, how: str) -> None:
        self.events = events
        self.virtual_time = now
        super().__init__(
            f"budget exhausted after {events} events at virtual time {now:.3f}s ({what}; {how})"
        )


def install_budget(
    clock: Clock, max_events: int, max_wall_seconds: float, wall_clock: Callable[[], float]
) -> None:
    """Make ``clock.run`` raise :class:`BudgetExhausted` once ``max_events`` events have run or
    ``max_wall_seconds`` have passed on ``wall_clock`` (checked every :data:`CHECK_EVERY` events)."""
    deadline = wall_clock() + max_wall_seconds
    limit = clock.events_run + max_events

    def checkpoint() -> None:
        if clock.events_run >= limit:
            raise BudgetExhausted(
                f"limit {max_events} events", clock.events_run, clock.now,
                "raise cluster.budget.events or pass --max-events",
            )
        if wall_clock() > deadline:
            raise BudgetExhausted(
                f"limit {max_wall_seconds:g} wall seconds", clock.events_run, clock.now,
                "raise cluster.budget.wallSeconds or pass --max-wall-seconds",
            )
        clock.next_checkpoint = min(clock.events_run + CHECK_EVERY, limit)

    clock.on_checkpoint = checkpoint
    clock.next_checkpoint = min(clock.events_run + CHECK_EVERY, limit)
