"""The human report for a failed scenario: which expectations broke and a compact timeline of the run.

A trace of a real JobSet has hundreds of pod events; nobody reads that. The timeline folds it the way a
person debugging startup order thinks: per JobSet its condition transitions, per replicated job one row
per Job (when it was Created / Ready / Complete ...) and one row summarising its pods (first to last time
each pod event happened, and how many pods reached it), in time order with aligned columns.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.milestones import Shapes, parse_milestone
from fakecluster.scenario.results import Failure, RunResult
from fakecluster.scenario.trace import TraceEvent, in_trace_order
from fakecluster.workload_plugin import GroupShape

if TYPE_CHECKING:
    from fakecluster.scenario.format import Scenario

__all__ = ["render_failure", "render_timeline"]

_POD_COLUMNS = ("Created", "Scheduled", "Running", "Ready", "Succeeded", "Failed", "Deleted", "", "")
_JOB_COLUMNS = ("Created", "", "", "Ready", "Complete", "Failed", "Deleted", "Suspended", "Resumed")
"""Job and pod rows share columns, so a Job's ``ready`` sits under its pods' ``ready``."""
_MAX_OTHER = 20
_MAX_CONNECT_STEPS = 8
"""Format 1.1: the last connect steps (resolved, NXDOMAIN, refused, SYN lost...) shown per replicated job."""


def _span(times: list[float]) -> str:
    low, high = min(times), max(times)
    if low == high:
        return format_seconds(low)
    return f"{format_seconds(low)[:-1]}\N{EN DASH}{format_seconds(high)}"


@dataclass(slots=True)
class _JobRow:
    """Everything the trace says about one Job (one jobIndex of one restart attempt) and its pods."""

    label: str
    attempt: int
    first: float
    job_events: dict[str, float] = field(default_factory=dict)
    pods: set[str] = field(default_factory=set)
    slots: set[int | None] = field(default_factory=set)
    pod_events: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))

    def job_cells(self) -> list[str]:
        return ["job"] + [
            f"{c.lower()} {format_seconds(self.job_events[c])}" if c and c in self.job_events else ""
            for c in _JOB_COLUMNS
        ]

    def pod_cells(self, slots_per_job: int | None) -> list[str]:
        total = len(self.pods)
        expected = slots_per_job if slots_per_job is not None else len(self.slots)
        head = f"pods {len(self.slots)}/{expected}"
        if total > len(self.slots):
            head += f" (+{total - len(self.slots)} replaced)"
        cells = [head]
        for column in _POD_COLUMNS:
            by_pod = self.pod_events.get(column, {}) if column else {}
            if not by_pod:
                cells.append("")
                continue
            reached = "" if len(by_pod) == total else f" {len(by_pod)}/{total}"
            cells.append(f"{column.lower()}{reached} {_span(list(by_pod.values()))}")
        return cells


def _widths(rows: list[list[str]]) -> list[int]:
    columns = max((len(r) for r in rows), default=0)
    return [max((len(r[c]) for r in rows if c < len(r)), default=0) for c in range(columns)]


def _line(row: list[str], widths: list[int], indent: str, width: int) -> list[str]:
    """Pad cells to their column and drop columns empty in every row; an overlong line continues on
    the next one, indented under the first event column, breaking only between cells."""
    cells = [row[c].ljust(widths[c]) for c in range(len(row)) if widths[c]]
    lines = [indent + cells[0]]
    for cell in cells[1:]:
        if len((lines[-1] + "  " + cell).rstrip()) > width and lines[-1].strip():
            lines.append(indent + " " * (len(cells[0]) + 2) + cell)
        else:
            lines[-1] += "  " + cell
    return [line.rstrip() for line in lines if line.strip()]


def _related_filter(related: Sequence[str] | None) -> set[str]:
    """Replicated job and JobSet names the related milestone texts (or bare names) point at."""
    names: set[str] = set()
    for text in related or []:
        try:
            milestone = parse_milestone(text)
        except ValueError:
            names.add(text)
            continue
        if milestone.replicated_job is not None:
            names.add(milestone.replicated_job)
        if milestone.jobset is not None and milestone.kind == "JobSet":
            names.add(milestone.jobset)
    return names


def render_timeline(
    trace: Sequence[TraceEvent], shapes: Shapes, related: list[str] | None = None, width: int = 100
) -> str:
    """Per JobSet: condition transitions, then per replicated job one Job row and one pods row per Job.

    With ``related`` (milestone texts or names), only the replicated jobs they name are shown, unless
    none of them matches anything in the trace; then everything is.
    """
    events = in_trace_order(trace)
    jobsets: dict[str, list[TraceEvent]] = {}
    rows: dict[str, dict[str, dict[tuple[int, int | None], _JobRow]]] = {}
    other: list[TraceEvent] = []
    connects: dict[tuple[str, str], list[TraceEvent]] = {}
    for event in events:
        if event.kind == "Connect" and event.jobset is not None and event.replicated_job is not None:
            connects.setdefault((event.jobset, event.replicated_job), []).append(event)
        elif event.kind == "JobSet":
            jobsets.setdefault(event.name, []).append(event)
        elif event.jobset is not None and event.replicated_job is not None:
            jobsets.setdefault(event.jobset, [])
            _add(rows.setdefault(event.jobset, {}).setdefault(event.replicated_job, {}), event)
        else:
            other.append(event)
    for name in shapes:
        jobsets.setdefault(name, [])
    wanted = _related_filter(related)
    known = (
        set(jobsets)
        | {rj for by_rj in rows.values() for rj in by_rj}
        | {rj for s in shapes.values() for rj in s}
    )
    if not wanted & known:
        wanted = set()
    lines: list[str] = []
    for name in sorted(jobsets, key=lambda n: _first_time(jobsets[n], rows.get(n, {}))):
        lines.extend(
            _render_jobset(
                name,
                events=jobsets[name],
                by_rj=rows.get(name, {}),
                shapes=shapes.get(name, {}),
                wanted=wanted,
                width=width,
                connects=connects,
            )
        )
    if other and not wanted:
        lines.append("other objects")
        lines.extend(
            f"  {format_seconds(e.time):>9}  {e.kind} {e.namespace}/{e.name} {e.event}"
            for e in other[:_MAX_OTHER]
        )
        if len(other) > _MAX_OTHER:
            lines.append(f"  ... {len(other) - _MAX_OTHER} more")
    return "\n".join(lines) if lines else "(the trace is empty)"


def _add(by_job: dict[tuple[int, int | None], _JobRow], event: TraceEvent) -> None:
    attempt = event.attempt or 0
    key = (attempt, event.job_index)
    row = by_job.get(key)
    if row is None:
        index = "?" if event.job_index is None else str(event.job_index)
        row = by_job[key] = _JobRow(f"{event.replicated_job}-{index}", attempt, event.time)
    if event.kind == "Job":
        row.job_events.setdefault(event.event, event.time)
        return
    pod = f"{event.namespace}/{event.name}"
    if event.event == "Created" or pod not in row.pods:
        row.pods.add(pod)
        row.slots.add(event.pod_index)
    row.pod_events[event.event].setdefault(pod, event.time)


def _first_time(
    jobset_events: list[TraceEvent], by_rj: dict[str, dict[tuple[int, int | None], _JobRow]]
) -> float:
    times = [e.time for e in jobset_events] + [r.first for rows in by_rj.values() for r in rows.values()]
    return min(times, default=float("inf"))


def _render_jobset(
    name: str,
    *,
    events: list[TraceEvent],
    by_rj: dict[str, dict[tuple[int, int | None], _JobRow]],
    shapes: Mapping[str, GroupShape],
    wanted: set[str],
    width: int,
    connects: Mapping[tuple[str, str], list[TraceEvent]] | None = None,
) -> list[str]:
    namespace = events[0].namespace + "/" if events else ""
    lines = [f"JobSet {namespace}{name}"]
    transitions = [
        f"{e.event} {format_seconds(e.time)}" + (f" (attempt {e.attempt})" if e.attempt else "")
        for e in events
    ]
    text = "  jobset  " + ("  ·  ".join(transitions) if transitions else "no events")
    lines.extend(textwrap.wrap(text, width, subsequent_indent=" " * 10, break_long_words=False))
    rjob_names = list(by_rj) + [rj for rj in shapes if rj not in by_rj]
    show_all = not wanted or name in wanted
    hidden = 0
    for rj in sorted(
        rjob_names, key=lambda r: min((row.first for row in by_rj.get(r, {}).values()), default=float("inf"))
    ):
        if not show_all and rj not in wanted:
            hidden += 1
            continue
        lines.extend(_render_rjob(rj, list(by_rj.get(rj, {}).values()), shapes.get(rj), width))
        lines.extend(_render_connects((connects or {}).get((name, rj), [])))
    if hidden:
        lines.append(f"  ({hidden} other replicated job{'s' if hidden != 1 else ''} not shown)")
    return lines


def _render_rjob(rj: str, rows: list[_JobRow], shape: GroupShape | None, width: int) -> list[str]:
    """One replicated job: a header with its shape, then a Job row and a pods row per Job, grouped by
    restart attempt when the JobSet restarted, with columns aligned across the whole block."""
    header = f"  {rj}"
    if shape is not None:
        header += f"  ({shape.replicas} job{'s' if shape.replicas != 1 else ''} \N{MULTIPLICATION SIGN}"
        header += f" {shape.pods_per_job} pod{'s' if shape.pods_per_job != 1 else ''})"
    if not rows:
        return [header, "    no events"]
    rows.sort(key=lambda r: (r.attempt, r.first, r.label))
    slots = shape.pods_per_job if shape is not None else None
    restarted = any(r.attempt for r in rows)
    table: list[tuple[int, list[str]]] = []
    for row in rows:
        if row.job_events:
            table.append((row.attempt, [row.label, *row.job_cells()]))
        if row.pods:
            table.append((row.attempt, [row.label, *row.pod_cells(slots)]))
    widths = _widths([cells for _, cells in table])
    lines = [header]
    for position, (attempt, cells) in enumerate(table):
        if restarted and (position == 0 or table[position - 1][0] != attempt):
            lines.append(f"    attempt {attempt}")
        lines.extend(_line(cells, widths, "      " if restarted else "    ", width))
    return lines


def _render_connects(steps: list[TraceEvent]) -> list[str]:
    """The last connect steps of a replicated job's pods: what their programs met on the network."""
    if not steps:
        return []
    shown = steps[-_MAX_CONNECT_STEPS:]
    last = f", last {len(shown)}" if len(shown) < len(steps) else ""
    lines = [f"    connect steps ({len(steps)}{last})"]
    for e in shown:
        slot = f"{e.replicated_job}-{e.job_index}/{e.pod_index}"
        lines.append(f"      {format_seconds(e.time):>9}  {slot}  {e.event}  {e.detail}".rstrip())
    return lines


def render_failure(
    scenario: Scenario, result: RunResult, failures: Sequence[Failure], shapes: Shapes, width: int = 100
) -> str:
    """The report for a failed run: where and with which seed, the broken expectations, the timeline.

    The timeline is narrowed to the replicated jobs the failures name; if any failure names nothing
    (a count, an event list), the whole run is shown, since the cause could be anywhere.
    """
    where = f"{scenario.source}: " if scenario.source is not None else ""
    lines = [
        f"{where}scenario '{scenario.name}' failed (seed {result.seed}; run ended at "
        f"{format_seconds(result.virtual_end)} after {len(result.trace)} trace events)",
    ]
    if failures:
        lines.append(f"{len(failures)} failed expectation{'s' if len(failures) != 1 else ''}:")
    lines.extend(f"  - {f.summary}" for f in failures)
    if result.rejection is not None:
        lines.append(f"manifest rejected: {' '.join(result.rejection.split())}")
    related: list[str] | None = None
    if failures and all(f.related for f in failures):
        related = list(dict.fromkeys(r for f in failures for r in f.related))
    heading = "timeline" + (f" (related: {', '.join(related)})" if related else "") + ":"
    lines.extend(textwrap.wrap(heading, width, subsequent_indent="  ", break_long_words=False))
    timeline = render_timeline(result.trace, shapes, related, width=width - 2)
    lines.extend("  " + line for line in timeline.splitlines())
    lines.append(f"re-run the same file with seed {result.seed} to reproduce this exact trace")
    return "\n".join(lines)
