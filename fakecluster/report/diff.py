"""``fakecluster diff A.jsonl B.jsonl``: where two runs part ways, and which milestones moved.

The first divergence compares events in trace order by their canonical line (``TraceEvent.key``, the line
the digest hashes), so two traces with equal digests never show a divergence. The milestone summary names
each difference in the scenario grammar (``first worker pods Ready``, ``all worker pods Ready attempt 1``,
``jobset Completed``), so a line can be pasted into an ``expect:`` entry. ``all`` is taken over the slots
the trace shows (every (jobset, job index, pod index) that has the event at least once), since a trace file
does not carry the manifests' shapes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fakecluster.report.jsonl import TraceFile
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.trace import TraceEvent, in_trace_order

__all__ = ["MilestoneTimes", "diff_traces", "first_divergence", "milestone_times"]


@dataclass(frozen=True, slots=True)
class MilestoneTimes:
    """When a milestone phrase first and (over every slot seen) last happened."""

    first: float
    all: float
    count: int


def _phrase(event: TraceEvent, quantifier: str) -> str | None:
    if event.kind in ("Pod", "Job") and event.replicated_job is not None:
        target = f"{event.jobset}/{event.replicated_job}" if event.jobset else event.replicated_job
        phrase = f"{quantifier} {target} {event.kind.lower()}s {event.event}"
        return phrase + (f" attempt {event.attempt}" if event.attempt else "")
    return None


def milestone_times(trace: Iterable[TraceEvent]) -> dict[str, MilestoneTimes]:
    """Every milestone the trace shows, by phrase; JobSet conditions as ``jobset <name> <Condition>``."""
    firsts: dict[str, float] = {}
    slots: dict[str, dict[tuple[object, ...], float]] = {}
    for event in in_trace_order(trace):
        if event.kind not in ("Pod", "Job"):
            if event.jobset is not None and event.jobset == event.name:
                firsts.setdefault(f"jobset {event.name} {event.event}", event.time)
            continue
        phrase = _phrase(event, "first")
        if phrase is None:
            continue
        firsts.setdefault(phrase, event.time)
        slot = (event.jobset, event.job_index, event.pod_index if event.kind == "Pod" else None)
        slots.setdefault(phrase, {}).setdefault(slot, event.time)
    result: dict[str, MilestoneTimes] = {}
    for phrase, first in firsts.items():
        seen = slots.get(phrase)
        if seen is None:
            result[phrase] = MilestoneTimes(first, first, 1)
        else:
            result[phrase] = MilestoneTimes(first, max(seen.values()), len(seen))
    return result


def _identity(event: TraceEvent) -> tuple[object, ...]:
    """What an event is, with a generated object name replaced by its workload slot: two seeds give pods
    different random suffixes (``generateName``), which is not the divergence anyone is looking for."""
    if event.replicated_job is None:
        return (event.key(),)
    return (f"{event.time:.6f}", event.kind, event.namespace, event.jobset, event.replicated_job,
            event.job_index, event.pod_index, event.attempt, event.event, event.detail)


def first_divergence(a: Sequence[TraceEvent], b: Sequence[TraceEvent]) -> int | None:
    """Index of the first event that differs (or where one trace ends), else ``None``.

    Events compare by their canonical line, except that an object in a workload slot is known by the slot
    rather than its generated name."""
    ordered_a, ordered_b = in_trace_order(a), in_trace_order(b)
    for index, (left, right) in enumerate(zip(ordered_a, ordered_b, strict=False)):
        if _identity(left) != _identity(right):
            return index
    if len(ordered_a) != len(ordered_b):
        return min(len(ordered_a), len(ordered_b))
    return None


def _show(event: TraceEvent | None) -> str:
    return "(end of trace)" if event is None else event.key()


def _at(value: float | None) -> str:
    return "never" if value is None else format_seconds(value)


MAX_MILESTONE_LINES = 40


def diff_traces(a: TraceFile, b: TraceFile, *, limit: int = MAX_MILESTONE_LINES) -> list[str]:
    """Lines describing how ``b`` differs from ``a``; empty when the traces are equal.

    Differing milestones are listed in time order (the earlier of the two times), at most ``limit``."""
    index = first_divergence(a.events, b.events)
    if index is None:
        return []
    ordered_a, ordered_b = in_trace_order(a.events), in_trace_order(b.events)
    left = ordered_a[index] if index < len(ordered_a) else None
    right = ordered_b[index] if index < len(ordered_b) else None
    lines = [
        f"first divergence at event #{index}:",
        f"  A: {_show(left)}",
        f"  B: {_show(right)}",
    ]
    times_a, times_b = milestone_times(a.events), milestone_times(b.events)
    moved: list[tuple[float, str, str]] = []
    for phrase in set(times_a) | set(times_b):
        ta, tb = times_a.get(phrase), times_b.get(phrase)
        if ta is not None and tb is not None and ta == tb:
            continue
        when = min(t.first for t in (ta, tb) if t is not None)
        moved.extend((when, phrase, line) for line in _moved(phrase, ta, tb))
    moved.sort()
    lines.append(f"milestones that differ: {len(moved)}" + (":" if moved else ""))
    lines.extend("  " + line for _when, _phrase, line in moved[:limit])
    if len(moved) > limit:
        lines.append(f"  ... and {len(moved) - limit} more")
    return lines


def _moved(phrase: str, ta: MilestoneTimes | None, tb: MilestoneTimes | None) -> list[str]:
    if ta is None or tb is None:
        return [f"{phrase}: A {_at(ta.first if ta else None)}, B {_at(tb.first if tb else None)}"]
    out = []
    if ta.first != tb.first:
        out.append(f"{phrase}: A {_at(ta.first)}, B {_at(tb.first)} ({_delta(tb.first - ta.first)})")
    several = ta.count > 1 or tb.count > 1
    if phrase.startswith("first ") and several and (ta.all != tb.all or ta.count != tb.count):
        every = "all " + phrase.removeprefix("first ")
        out.append(
            f"{every}: A {_at(ta.all)} over {ta.count}, B {_at(tb.all)} over {tb.count}"
            f" ({_delta(tb.all - ta.all)})"
        )
    return out


def _delta(seconds: float) -> str:
    sign = "+" if seconds >= 0 else "-"
    return f"{sign}{format_seconds(abs(seconds))}"
