"""The invariant monitor: runs every invariant on the API server's watch stream and on cluster state.

Invariants hold at one of four moments (as in the cluster state-machine test this generalises):

- **stream**: on every write, as the watch stream delivers it (``Invariant.on_event``);
- **connect**: at the instant the pod network establishes a TCP connection (``Invariant.on_connect``);
- **caught up**: nothing is due at the instant the clock is leaving, so every zero-latency reaction to the
  last write (a reconcile, the garbage collector) has run (``Invariant.caught_up``);
- **quiet**: nothing is due within ``quiet_window`` (the Job controller's 1 s ``syncJobBatchPeriod`` from
  ``pkg/controller/job/job_controller.go``), so every batched sync triggered so far has run too
  (``Invariant.quiet``).

The state moments are probed when the clock leaves an instant (``Clock.on_advance``) and once more at the
end of the run, and only when the store changed since the last probe, so a long idle stretch costs nothing.
The monitor only reads: it never writes, schedules or draws a random number, so a run's trace and digest
are the same with invariants on or off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.clock import Clock

if TYPE_CHECKING:
    from fakecluster.network.network import Network
    from fakecluster.network.runs import Connection

MAX_VIOLATIONS_PER_INVARIANT = 5
"""A broken invariant usually breaks many times in a row; the first few tell the story."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant: its name, the virtual time and what was seen."""

    invariant: str
    time: float
    message: str

    def __str__(self) -> str:
        return f"invariant {self.invariant} violated at t={self.time:g}s: {self.message}"


class ClusterView:
    """What an invariant may look at: the store's read-only snapshots and the instant they belong to."""

    __slots__ = ("_server", "now")

    def __init__(self, server: ApiServer) -> None:
        self._server = server
        self.now = 0.0

    def list(self, kind: str) -> list[Obj]:
        """Every object of ``kind`` (all namespaces), or none if the kind is not registered."""
        if kind not in self._server.kinds():
            return []
        return self._server.list(kind)

    def get_by_uid(self, uid: str) -> Obj | None:
        return self._server.get_by_uid(uid)


Report = Callable[[str], None]
"""How an invariant reports a violation: one message; the monitor adds the name and the time."""


class Invariant(Protocol):
    """One named rule. Implement any of the four hooks; the docstring cites the upstream rule."""

    name: str

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None: ...

    def on_connect(self, connection: Connection, view: ClusterView, report: Report) -> None: ...

    def caught_up(self, view: ClusterView, report: Report) -> None: ...

    def quiet(self, view: ClusterView, report: Report) -> None: ...


class BaseInvariant:
    """No-op hooks, so an invariant defines only the moments it needs."""

    name = "unnamed"
    kinds: tuple[str, ...] | None = None
    """The kinds whose watch events ``on_event`` looks at (None: every kind). The monitor hands an event
    only to the invariants that want its kind: most writes are Pod writes that most rules ignore."""

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        return None

    def on_connect(self, connection: Connection, view: ClusterView, report: Report) -> None:
        return None

    def caught_up(self, view: ClusterView, report: Report) -> None:
        return None

    def quiet(self, view: ClusterView, report: Report) -> None:
        return None


class InvariantMonitor:
    """Attach to one cluster's server, clock and (if given) pod network; collect :class:`Violation` s in
    ``violations``."""

    def __init__(
        self,
        server: ApiServer,
        clock: Clock,
        invariants: Sequence[Invariant],
        *,
        quiet_window: float = 1.0,
        network: Network | None = None,
    ) -> None:
        self._server = server
        self._clock = clock
        self.invariants = list(invariants)
        self._quiet_window = quiet_window
        self.view = ClusterView(server)
        self.violations: list[Violation] = []
        self._counts: dict[str, int] = {}
        self._instant = 0.0
        self._probed_writes = -1
        self._probed_quiet = False
        # each moment's hooks, bound once with their reporters: the stream hooks run on every write
        self._stream = [(inv.on_event, self._reporter(inv), getattr(inv, "kinds", None))
                        for inv in self._implementing("on_event")]
        self._stream_by_kind: dict[str, list[tuple[Callable[..., None], Report]]] = {}
        self._caught_up = self._hooks("caught_up")
        self._quiet = self._hooks("quiet")
        self._connect = self._hooks("on_connect")
        server.watch(None, self._on_event)
        if network is not None and self._connect:
            network.connection_observers.append(self._on_connect)

    def _implementing(self, moment: str) -> list[Invariant]:
        base = getattr(BaseInvariant, moment)
        return [inv for inv in self.invariants if getattr(type(inv), moment) is not base]

    def _hooks(self, moment: str) -> list[tuple[Callable[..., None], Report]]:
        """(bound hook, reporter) of every invariant that implements ``moment``."""
        return [(getattr(inv, moment), self._reporter(inv)) for inv in self._implementing(moment)]

    # ------------------------------------------------------------------ reporting
    def _reporter(self, invariant: Invariant) -> Report:
        """The reporter holds what it writes to, not the monitor, which holds it: no reference cycle
        outlives a run (a finished run is freed by reference counting, ``Cluster.close``)."""
        name, counts, violations, view = invariant.name, self._counts, self.violations, self.view

        def report(message: str) -> None:
            count = counts.get(name, 0)
            counts[name] = count + 1
            if count < MAX_VIOLATIONS_PER_INVARIANT:
                violations.append(Violation(name, view.now, message))

        return report

    # ------------------------------------------------------------------ moments
    def _on_event(self, event: WatchEvent) -> None:
        hooks = self._stream_by_kind.get(event.kind)
        if hooks is None:
            hooks = self._stream_by_kind[event.kind] = [
                (hook, report) for hook, report, kinds in self._stream if kinds is None or event.kind in kinds
            ]
        view = self.view
        view.now = self._clock.now
        for hook, report in hooks:
            hook(event, view, report)

    def _on_connect(self, connection: Connection) -> None:
        view = self.view
        view.now = self._clock.now
        for hook, report in self._connect:
            hook(connection, view, report)

    def on_advance(self, when: float) -> None:
        """The clock is about to run the events at ``when``: the instant it leaves is caught up, and
        quiet if ``when`` is more than the quiet window later."""
        left, self._instant = self._instant, when
        self._probe(left, quiet=when > left + self._quiet_window)

    def finish(self) -> None:
        """The run ended: the last instant is caught up, and quiet unless work is due within the window."""
        due = self._clock.next_time()
        now = self._clock.now
        self._probe(now, quiet=due is None or due > now + self._quiet_window)

    def _probe(self, instant: float, *, quiet: bool) -> None:
        writes = self._server.writes
        if writes == self._probed_writes and (self._probed_quiet or not quiet):
            return
        self._probed_writes, self._probed_quiet = writes, quiet
        view = self.view
        view.now = instant
        for hook, report in self._caught_up:
            hook(view, report)
        if quiet:
            for hook, report in self._quiet:
                hook(view, report)
