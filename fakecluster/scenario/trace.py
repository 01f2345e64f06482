"""The trace: what happened in a run, as a flat list of events, and a digest that proves two runs equal.

The runner records one :class:`TraceEvent` per observable change (a pod became Ready, a Job completed, a
JobSet condition turned True). Milestones, expectations and the failure timeline are pure functions over
this list, which is why it carries the workload coordinates (replicated job, job index, completion index,
restart attempt) rather than leaving readers to re-derive them from object names.
"""

from __future__ import annotations

import hashlib
import math
from array import array
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, count, islice, pairwise, starmap
from operator import itemgetter, le
from struct import pack
from typing import Any, NamedTuple, overload

__all__ = ["Snapshot", "TraceEvent", "TraceLog", "in_trace_order", "trace_digest"]


class TraceEvent(NamedTuple):
    """One observable change; ``seq`` orders events that share a virtual ``time``.

    Immutable like the rest of the trace. A named tuple rather than a frozen dataclass: the recorder
    builds one for nearly every pod write, and a tuple is built several times faster."""

    time: float
    seq: int
    kind: str
    namespace: str
    name: str
    event: str
    jobset: str | None = None
    replicated_job: str | None = None
    job_index: int | None = None
    pod_index: int | None = None
    attempt: int | None = None
    detail: str = ""

    def key(self) -> str:
        """One canonical line for the digest: fixed-precision time, then only the coordinates present.

        ``seq`` is left out because it is implied by the line's position in the trace. Written out in
        :func:`canonical_lines`, which builds a whole trace's lines in one loop.
        """
        return canonical_lines((self,))[0]


DIGEST_CHUNK = 4096
"""Events whose lines are hashed at a time: the digest never holds more lines than that."""


def trace_digest(trace: Iterable[TraceEvent]) -> str:
    """SHA-256 over the events' canonical lines (:meth:`TraceEvent.key`) joined by newlines: equal for
    equal runs, different when anything differs.

    Hashed chunk by chunk (SHA-256 over a concatenation equals updates with its pieces), so the lines of
    a whole large run never exist at once: joined and encoded in one piece they were three copies of
    some 100 bytes per event, 165 MiB on top of the 100,000-pod run's peak."""
    if isinstance(trace, TraceLog):
        return trace.digest()
    digest = hashlib.sha256()
    events = iter(trace)
    separator = b""
    while chunk := list(islice(events, DIGEST_CHUNK)):
        digest.update(separator + "\n".join(canonical_lines(chunk)).encode("utf-8"))
        separator = b"\n"
    return digest.hexdigest()


def canonical_lines(trace: Iterable[TraceEvent]) -> list[str]:
    """Every event's :meth:`~TraceEvent.key`, built in one loop (:func:`_row_lines`, over each event's
    :data:`Row`): the digest of a large run formats some ten lines per pod, and a method call per line
    cost as much as the line."""
    return _row_lines((e[0], e[2], e[3], e[4], e[5], e[6:11], e[11]) for e in trace)


def _row_lines(rows: Iterable[Row]) -> list[str]:
    """:func:`canonical_lines` of the events that ``rows`` (:data:`Row` s) stand for, read from the rows
    themselves, no event built: what :class:`TraceLog` hashes as it compacts its rows. The time is
    formatted once per instant (events of one instant come together), a zero time every time (so that
    ``-0.0`` would keep its sign)."""
    lines: list[str] = []
    append = lines.append
    last_time: float | None = None
    stamp = ""
    for time, kind, namespace, name, event, (jobset, replicated_job, job_index, pod_index, attempt), \
            detail in rows:
        if time != last_time or not time:
            last_time, stamp = time, f"{time:.6f}"
        # The two usual shapes in one piece each: a pod in its slot (every coordinate) and an object of
        # no workload (none: slices, Services); any other, coordinate by coordinate.
        if attempt is None and pod_index is None and jobset is None and replicated_job is None \
                and job_index is None:
            line = f"{stamp} {kind} {namespace}/{name} {event}"
        elif attempt is not None and pod_index is not None and jobset is not None \
                and replicated_job is not None and job_index is not None:
            line = (f"{stamp} {kind} {namespace}/{name} {event} js={jobset} rj={replicated_job} "
                    f"ji={job_index} pi={pod_index} a={attempt}")
        else:
            line = f"{stamp} {kind} {namespace}/{name} {event}"
            if jobset is not None:
                line += f" js={jobset}"
            if replicated_job is not None:
                line += f" rj={replicated_job}"
            if job_index is not None:
                line += f" ji={job_index}"
            if pod_index is not None:
                line += f" pi={pod_index}"
            if attempt is not None:
                line += f" a={attempt}"
        if detail:
            # Escaped only when there is something to escape (rarely): two method calls fewer a line.
            line += " " + (detail.replace("\\", "\\\\").replace("\n", "\\n")
                           if "\\" in detail or "\n" in detail else detail)
        append(line)
    return lines


def in_trace_order(trace: Iterable[TraceEvent]) -> Sequence[TraceEvent]:
    """Events sorted by (time, seq): the order milestones and ``order:`` expectations reason in.

    A recorded trace is already in that order (time only moves forward, ``seq`` counts up), so that is
    checked first: one pass instead of a sort keyed on every event, for each milestone looked up. A
    :class:`TraceLog` in order is returned as it is, its events not built into a list (at 100,000 pods
    they would be 120 MB for each milestone looked up while a run goes on)."""
    if isinstance(trace, TraceLog) and trace.in_order():
        return trace
    events = list(trace)
    # (time, seq) pairs compared at C speed: for times, which are never NaN, ``(a.time, a.seq) <=
    # (b.time, b.seq)`` is ``a.time < b.time or (a.time == b.time and a.seq <= b.seq)``. Neighbours
    # come in pairs as the pairs are made, none kept in a list: as fast as a list of them, and a
    # 100,000-pod run's 900,000 pairs (58 MB) do not add to its peak.
    if all(starmap(le, pairwise(map(_TRACE_ORDER, events)))):
        return events
    return sorted(events, key=_TRACE_ORDER)


_TRACE_ORDER = itemgetter(0, 1)
"""An event's (time, seq): its first two fields."""
_ROW_EVENT = itemgetter(4)
"""A :data:`Row`'s event name."""
_TRACE_ORDER_TIME = itemgetter(0)
"""An event's or a :data:`Row`'s time: its first field."""


@dataclass(slots=True)
class Snapshot:
    """The API server's objects at one virtual time, by kind, in wire form (camelCase dicts)."""

    time: float
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        """Objects of ``kind`` ("JobSet", "Job", "Pod", "Service", "Node"); empty if none exist."""
        return self.objects.get(kind, [])

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The object of ``kind`` with that name (and namespace, if given), or ``None``."""
        for obj in self.of_kind(kind):
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (namespace is None or meta.get("namespace") == namespace):
                return obj
        return None


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


_ROW_TIME = itemgetter(0)
_ROW_NAME = itemgetter(3)
_ROW_COORDINATES = itemgetter(5)
_ROW_SHARED = itemgetter(1, 2, 4, 6)
"""A :data:`Row`'s parts that few rows differ in: ``kind``, ``namespace``, ``event``, ``detail``."""
_SHARED_EVENT = itemgetter(2)
"""The ``event`` of a :data:`_ROW_SHARED` tuple."""


class _Chunk:
    """Rows kept in columns (:meth:`TraceLog.compact`): per row, its time as a C double (an ``array``:
    the float objects the clock's ``now`` was, some four a pod, were otherwise kept by the trace alone
    all run long, 24 bytes each), and references to its name, its coordinates (both shared: with the
    stored pod, and between a pod's events) and one ``(kind, namespace, event, detail)`` tuple shared by
    all the rows of the chunk that have those (a run has a few dozen such combinations). Some 32 bytes a
    row instead of 136 (the row tuple's 96, the list's 8 and its time float's 32).

    Read back, a row's parts are the row's very objects, but for its time: an equal float, one for the
    consecutive rows of an instant (:meth:`events`), as few as the rows shared before."""

    __slots__ = ("coordinates", "names", "ordered", "shared", "times")

    def __init__(self, rows: list[Row]) -> None:
        times = tuple(map(_ROW_TIME, rows))
        self.times = array("d")
        self.times.frombytes(pack(f"{len(times)}d", *times))  # array("d", times) converts each item by a
        # format-string parse, some 300 instructions a row
        self.ordered = all(starmap(le, pairwise(times)))
        """Whether the times never go back: checked once, here, on the floats (:meth:`TraceLog.in_order`
        then reads only a chunk's first and last time, instead of making a float of each)."""
        keys = list(map(_ROW_SHARED, rows))
        table: dict[tuple[str, str, str, str], tuple[str, str, str, str]] = {}
        self.shared: tuple[tuple[str, str, str, str], ...] = tuple(map(table.setdefault, keys, keys))
        self.names: tuple[str, ...] = tuple(map(_ROW_NAME, rows))
        self.coordinates: tuple[Coordinates, ...] = tuple(map(_ROW_COORDINATES, rows))

    def __len__(self) -> int:
        return len(self.times)

    def event(self, seq: int, i: int) -> TraceEvent:
        """Row ``i``'s event, whose ``seq`` is ``seq``."""
        kind, namespace, event, detail = self.shared[i]
        c = self.coordinates[i]
        return tuple.__new__(TraceEvent, (self.times[i], seq, kind, namespace, self.names[i], event,
                                          c[0], c[1], c[2], c[3], c[4], detail))

    def events(self, first: int) -> list[TraceEvent]:
        """Every row's event in order, the first one's ``seq`` ``first``."""
        new = tuple.__new__
        out: list[TraceEvent] = []
        keep = out.append
        at = math.nan  # equal to no time: the first row's is kept
        for seq, time, (kind, namespace, event, detail), name, c in zip(
                count(first), self.times.tolist(), self.shared, self.names, self.coordinates):
            if time != at:
                at = time  # the float the rows of this instant share (times are never NaN)
            keep(new(TraceEvent, (at, seq, kind, namespace, name, event, c[0], c[1], c[2], c[3], c[4],
                                  detail)))
        return out


class TraceLog(Sequence[TraceEvent]):
    """The trace as the recorder keeps it while a run goes on: a sequence of :class:`TraceEvent`
    (``len``, indexes, slices, iteration), each ``seq`` its index, stored compactly until
    :meth:`events` builds them.

    A :class:`TraceEvent` has twelve fields, and its ``seq`` is an ``int`` object of its own (past 256
    every int is): 176 bytes an event, and a pod has some seven to ten, all kept until the run ends. The
    recorder adds one :data:`Row` per event: the seven parts that vary, the five coordinates as one
    tuple that it shares between all the events of a pod (its slot cache), and no ``seq``, which is the
    row's position. Every few thousand rows (:meth:`compact`, called by the recorder) the rows so far
    become one :class:`_Chunk` of columns, some 46 bytes a row instead of 136 (the tuple, its time
    float, the list's slot): at 100,000 pods some 100 MB less while the run goes on.

    Three stores, one after the other: the events :meth:`events` has built (the whole run's, once it
    ended), the chunks compacted since, then the rows recorded since the last :meth:`compact`."""

    __slots__ = ("_built", "_chunks", "_hashed", "_rows", "_separator", "_sha", "_starts", "add_row")

    def __init__(self) -> None:
        self._built: list[TraceEvent] = []
        self._chunks: list[_Chunk] = []
        self._starts: list[int] = []
        """Each chunk's first ``seq``."""
        self._rows: list[Row] = []
        self._sha = hashlib.sha256()
        """The digest (:func:`trace_digest`) of the first :attr:`_hashed` events, hashed as their rows were
        compacted: the run's digest then reads no event (see :meth:`digest`)."""
        self._hashed = 0
        self._separator = b""
        self.add_row = self._rows.append
        """Record one event, given as its :data:`Row`, at the end: the recorder's way, a call into C
        for some seven events per pod (its ``seq`` is ``len(log) - 1`` then)."""

    def _rows_start(self) -> int:
        """The ``seq`` of the first row not compacted yet."""
        chunks = self._chunks
        return self._starts[-1] + len(chunks[-1]) if chunks else len(self._built)

    def compact(self) -> None:
        """Keep the rows recorded since the last call as one :class:`_Chunk`: the same events, read
        back as they were, in a fraction of the memory."""
        rows = self._rows
        if rows:
            start = self._rows_start()
            if self._hashed == start:  # (else the events before were built unhashed: see digest())
                self._hash(rows)
            self._chunks.append(_Chunk(rows))
            self._starts.append(start)
            rows.clear()  # the same list: add_row is its append

    def _hash(self, rows: list[Row]) -> None:
        """Hash the lines of ``rows``, the events from :attr:`_hashed` on (chunk by chunk, as
        :func:`trace_digest` does)."""
        sha = self._sha
        for at in range(0, len(rows), DIGEST_CHUNK):
            sha.update(self._separator + "\n".join(_row_lines(rows[at:at + DIGEST_CHUNK])).encode("utf-8"))
            self._separator = b"\n"
        self._hashed += len(rows)

    def digest(self) -> str:
        """:func:`trace_digest` of the events: the lines of the compacted ones were hashed as they were
        compacted, those of the rows since are hashed now, and no event is built. A log whose events
        were built before all its rows were hashed (:meth:`events` called during a run) is read
        through its events instead."""
        if self._hashed != self._rows_start():
            return trace_digest(iter(self))
        sha, separator, hashed = self._sha, self._separator, self._hashed
        self._sha = sha.copy()  # hashing the rows on a copy: the log's own state stays as it was
        try:
            self._hash(self._rows)
            return self._sha.hexdigest()
        finally:
            self._sha, self._separator, self._hashed = sha, separator, hashed

    def __len__(self) -> int:
        return self._rows_start() + len(self._rows)

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[TraceEvent]: ...

    def __getitem__(self, index: int | slice) -> TraceEvent | list[TraceEvent]:
        if isinstance(index, slice):
            return [self._at(seq) for seq in range(*index.indices(len(self)))]
        size = len(self)
        seq = index if index >= 0 else index + size
        if not 0 <= seq < size:
            raise IndexError("trace index out of range")
        return self._at(seq)

    def _at(self, seq: int) -> TraceEvent:
        """The event ``seq`` (in range)."""
        built = self._built
        if seq < len(built):
            return built[seq]
        done = self._rows_start()
        if seq >= done:
            return _event(seq, self._rows[seq - done])
        at = bisect_right(self._starts, seq) - 1
        return self._chunks[at].event(seq, seq - self._starts[at])

    def __iter__(self) -> Iterator[TraceEvent]:
        # A chunk's events are built when the iteration reaches it and let go when it leaves it: a pass
        # over the whole log (a check's) never holds more than one chunk's.
        compacted = starmap(_Chunk.events, list(zip(self._chunks, self._starts, strict=True)))
        return chain(iter(self._built), chain.from_iterable(compacted),
                     map(_event, count(self._rows_start()), self._rows))

    def last(self, row: Row) -> TraceEvent:
        """The last event, given its :data:`Row` (the one just added): its ``seq`` is the log's length
        less one, and the event is built without an index lookup (the recorder's listeners get one
        per event)."""
        return _event(self._rows_start() + len(self._rows) - 1, row)

    def named(self, start: int, names: Collection[str]) -> list[TraceEvent]:
        """The events from ``seq`` ``start`` on whose ``event`` is one of ``names``, in order. A
        milestone's candidates: only they are built (a milestone is fired by one or two names of the
        run's some twenty, so most rows, and most chunk codes, are passed over at C speed)."""
        built, rows, chunks, starts = self._built, self._rows, self._chunks, self._starts
        found = [e for e in built[start:] if e[5] in names] if start < len(built) else []
        if chunks:
            for at in range(max(bisect_right(starts, start) - 1, 0), len(chunks)):
                chunk, first = chunks[at], starts[at]
                skip = start - first if start > first else 0
                shared = chunk.shared[skip:] if skip else chunk.shared
                keep = compress(count(skip), map(names.__contains__, map(_SHARED_EVENT, shared)))
                found.extend(chunk.event(first + i, i) for i in keep)
        done = self._rows_start()
        first = max(start - done, 0)
        tail = rows[first:] if first else rows  # a slice copies only the references asked for
        keep = compress(count(done + first), map(names.__contains__, map(_ROW_EVENT, tail)))
        found.extend(_event(seq, rows[seq - done]) for seq in keep)
        return found

    def in_order(self) -> bool:
        """Whether the events are in trace order: their times never go back (``seq`` always counts up).
        One pass over the times, at C speed; the recorder's log always is."""
        chunks = self._chunks
        if not all(chunk.ordered for chunk in chunks):
            return False
        # Each chunk in order within: the whole is if the times at its ends are, with the others'.
        times = chain(map(_TRACE_ORDER_TIME, self._built),
                      chain.from_iterable((chunk.times[0], chunk.times[-1]) for chunk in chunks),
                      map(_TRACE_ORDER_TIME, self._rows))
        return all(starmap(le, pairwise(times)))

    def events(self) -> list[TraceEvent]:
        """Every event, as a new list (what a run's result holds). The rows and chunks recorded since
        the last call become events here, kept as such: from the last one back, each row or chunk let
        go as soon as its events are built, so a long trace is never held twice over."""
        rows, built, chunks, starts = self._rows, self._built, self._chunks, self._starts
        if rows or chunks:
            done = self._rows_start()
            new, pop = tuple.__new__, rows.pop
            fresh: list[TraceEvent] = []
            keep = fresh.append
            for seq in range(done + len(rows) - 1, done - 1, -1):
                time, kind, ns, name, event, c, text = pop()
                keep(new(TraceEvent, (time, seq, kind, ns, name, event, c[0], c[1], c[2], c[3], c[4], text)))
            fresh.reverse()
            parts = [fresh]
            while chunks:
                parts.append(chunks.pop().events(starts.pop()))
            for part in reversed(parts):
                built.extend(part)
        return built[:]

    def __repr__(self) -> str:
        return f"TraceLog({len(self)} events)"
