"""The trace: what happened in a run, as a flat list of events, and a digest that proves two runs equal.

The runner records one :class:`TraceEvent` per observable change (a pod became Ready, a Job completed, a
JobSet condition turned True). Milestones, expectations and the failure timeline are pure functions over
this list, which is why it carries the workload coordinates (replicated job, job index, completion index,
restart attempt) rather than leaving readers to re-derive them from object names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice, pairwise, starmap
from operator import itemgetter, le
from typing import Any, NamedTuple

__all__ = ["Snapshot", "TraceEvent", "in_trace_order", "trace_digest"]


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
    digest = hashlib.sha256()
    events = iter(trace)
    separator = b""
    while chunk := list(islice(events, DIGEST_CHUNK)):
        digest.update(separator + "\n".join(canonical_lines(chunk)).encode("utf-8"))
        separator = b"\n"
    return digest.hexdigest()


def canonical_lines(trace: Iterable[TraceEvent]) -> list[str]:
    """Every event's :meth:`~TraceEvent.key`, built in one loop: the digest of a large run formats
    some ten lines per pod, and a method call per line cost as much as the line. The time is
    formatted once per instant (events of one instant come together), a zero time every time (so
    that ``-0.0`` would keep its sign)."""
    lines: list[str] = []
    append = lines.append
    last_time: float | None = None
    stamp = ""
    for time, _, kind, namespace, name, event, jobset, replicated_job, job_index, pod_index, attempt, \
            detail in trace:
        if time != last_time or not time:
            last_time, stamp = time, f"{time:.6f}"
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
            line += " " + detail.replace("\\", "\\\\").replace("\n", "\\n")
        append(line)
    return lines


def in_trace_order(trace: Iterable[TraceEvent]) -> list[TraceEvent]:
    """Events sorted by (time, seq): the order milestones and ``order:`` expectations reason in.

    A recorded trace is already in that order (time only moves forward, ``seq`` counts up), so that is
    checked first: one pass instead of a sort keyed on every event, for each milestone looked up."""
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
