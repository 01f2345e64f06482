"""The trace as the recorder keeps it while a run goes on: one compact row per event, read as
:class:`~fakecluster.scenario.trace.TraceEvent` s.

A :class:`TraceEvent` has twelve fields, and its ``seq`` is an ``int`` object of its own (past 256 every
int is): 176 bytes an event, and a pod has some seven events, all kept until the run ends. A row keeps
the seven parts that vary (time, kind, namespace, name, event, workload coordinates, detail), the five
coordinates one tuple that the recorder already shares between all the events of a pod (its slot
cache), and no ``seq``: that is the row's position. 96 bytes an event: at the peak of a 5,000-pod
driver-first run, 350 bytes less per pod. Readers see the same events as before, built when read; the
run's result holds them as a list (:mod:`~fakecluster.scenario.runner`), built once at the end
(:meth:`TraceLog.events`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import count
from typing import overload

from fakecluster.scenario.trace import TraceEvent

Coordinates = tuple[str | None, str | None, int | None, int | None, int | None]
"""``jobset``, ``replicated_job``, ``job_index``, ``pod_index``, ``attempt``, as in :class:`TraceEvent`."""
Row = tuple[float, str, str, str, str, Coordinates, str]
"""``time``, ``kind``, ``namespace``, ``name``, ``event``, the coordinates, ``detail``."""


def _event(seq: int, row: Row) -> TraceEvent:
    time, kind, namespace, name, event, c, detail = row
    # tuple.__new__ with every field in order skips the named tuple's generated __new__ (a Python call);
    # the coordinates by index, not unpacked with a star (which builds a list first).
    return tuple.__new__(TraceEvent, (time, seq, kind, namespace, name, event, c[0], c[1], c[2], c[3], c[4],
                                      detail))


class TraceLog(Sequence[TraceEvent]):
    """The events recorded so far, in trace order: a sequence of :class:`TraceEvent` (``len``, indexes,
    slices, iteration); an event's ``seq`` is its index."""

    __slots__ = ("_rows", "add_row")

    def __init__(self) -> None:
        self._rows: list[Row] = []
        self.add_row = self._rows.append
        """Record one event, given as its :data:`Row`, at the end: the recorder's way, a call into C
        for some seven events per pod (its ``seq`` is ``len(log) - 1`` then)."""

    def add(self, row: Row) -> int:
        """Record one event at the end; its ``seq``."""
        rows = self._rows
        rows.append(row)
        return len(rows) - 1

    def append(self, event: TraceEvent) -> None:
        """Record ``event`` at the end (its ``seq`` becomes its index here, as for :meth:`add`)."""
        self.add((event.time, event.kind, event.namespace, event.name, event.event,
                  (event.jobset, event.replicated_job, event.job_index, event.pod_index, event.attempt),
                  event.detail))

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[TraceEvent]: ...

    def __getitem__(self, index: int | slice) -> TraceEvent | list[TraceEvent]:
        rows = self._rows
        if isinstance(index, slice):
            return [_event(seq, rows[seq]) for seq in range(*index.indices(len(rows)))]
        row = rows[index]  # an IndexError as a list's
        return _event(index if index >= 0 else index + len(rows), row)

    def __iter__(self) -> Iterator[TraceEvent]:
        return map(_event, count(), self._rows)

    def events(self) -> list[TraceEvent]:
        """Every event, as a list (what a run's result holds): ``list(log)``, built in one loop."""
        new = tuple.__new__
        return [new(TraceEvent, (time, seq, kind, ns, name, event, c[0], c[1], c[2], c[3], c[4], detail))
                for seq, (time, kind, ns, name, event, c, detail) in enumerate(self._rows)]

    def __repr__(self) -> str:
        return f"TraceLog({len(self._rows)} events)"
