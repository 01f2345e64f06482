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
from itertools import chain, count
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
    slices, iteration); an event's ``seq`` is its index.

    Two stores, one after the other: the events :meth:`events` has built already (the whole run's, once
    it ended), then the rows recorded since (all of them while the run goes on)."""

    __slots__ = ("_built", "_rows", "add_row")

    def __init__(self) -> None:
        self._built: list[TraceEvent] = []
        self._rows: list[Row] = []
        self.add_row = self._rows.append
        """Record one event, given as its :data:`Row`, at the end: the recorder's way, a call into C
        for some seven events per pod (its ``seq`` is ``len(log) - 1`` then)."""

    def add(self, row: Row) -> int:
        """Record one event at the end; its ``seq``."""
        self._rows.append(row)
        return len(self._built) + len(self._rows) - 1

    def append(self, event: TraceEvent) -> None:
        """Record ``event`` at the end (its ``seq`` becomes its index here, as for :meth:`add`)."""
        self.add((event.time, event.kind, event.namespace, event.name, event.event,
                  (event.jobset, event.replicated_job, event.job_index, event.pod_index, event.attempt),
                  event.detail))

    def __len__(self) -> int:
        return len(self._built) + len(self._rows)

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[TraceEvent]: ...

    def __getitem__(self, index: int | slice) -> TraceEvent | list[TraceEvent]:
        built, rows = self._built, self._rows
        size = len(built) + len(rows)
        done = len(built)
        if isinstance(index, slice):
            return [built[seq] if seq < done else _event(seq, rows[seq - done])
                    for seq in range(*index.indices(size))]
        seq = index if index >= 0 else index + size
        if not 0 <= seq < size:
            raise IndexError("trace index out of range")
        return built[seq] if seq < done else _event(seq, rows[seq - done])

    def __iter__(self) -> Iterator[TraceEvent]:
        return chain(iter(self._built), map(_event, count(len(self._built)), self._rows))

    def events(self) -> list[TraceEvent]:
        """Every event, as a new list (what a run's result holds). The rows recorded since the last call
        become events here, kept as such: from the last one back, each row let go as soon as its event
        is built, so a long trace is never held twice over (at 100,000 pods its rows are some 70 MB,
        its events 120 MB)."""
        rows, built = self._rows, self._built
        if rows:
            new, pop = tuple.__new__, rows.pop
            fresh: list[TraceEvent] = []
            keep = fresh.append
            for seq in range(len(built) + len(rows) - 1, len(built) - 1, -1):
                time, kind, ns, name, event, c, text = pop()
                keep(new(TraceEvent, (time, seq, kind, ns, name, event, c[0], c[1], c[2], c[3], c[4], text)))
            fresh.reverse()
            built.extend(fresh)
        return built[:]

    def __repr__(self) -> str:
        return f"TraceLog({len(self)} events)"
