"""One scenario's HTML page: header, failed expectations with links to their moments, the Gantt timeline.

Layout, top to bottom: what ran (status, seed, virtual and wall time, digest), the failed expectations
(each links to the moments it names; a click zooms the timeline there and flashes the marker), every
expectation with its milestones' times, sweep charts when the run has distributions, then the timeline:
one lane per replicated job (its pods' phases as a density band), one row per Job and restart attempt,
one row per pod under a Job with at most :data:`MAX_POD_ROWS` pods (more become the Job's density band),
and vertical markers for JobSet conditions, actions and expectation milestones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from html import escape

from fakecluster.report.assets import COLOURS, CSS, SCRIPT
from fakecluster.report.charts import distribution_chart
from fakecluster.report.model import (
    JOB_STATES,
    PHASES,
    PROGRAM_STATES,
    JobRow,
    Lane,
    Marker,
    Tick,
    Timeline,
)
from fakecluster.report.moments import Moment
from fakecluster.report.svg import density_svg, row_svg
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.trace import TraceEvent

__all__ = ["MAX_JOB_ROWS", "MAX_POD_ROWS", "PageData", "render_page"]

MAX_POD_ROWS = 40
"""A Job with more pods than this shows them as a density band instead of one row each."""
MAX_JOB_ROWS = 200
"""A lane with more Jobs than this draws the first ones as rows; its density band covers them all."""

_EXPECT_INDEX = re.compile(r"^expect\[(\d+)\]")


class PageData:
    """What a page shows; built by :mod:`fakecluster.report.writer` from a run's outcome."""

    def __init__(self, *, name: str, path: str, passed: bool, seed: int, virtual_end: float,
                 wall_seconds: float, digest: str, events: int, failures: Sequence[str],
                 timeline: Timeline, expectations: Sequence[tuple[str, Sequence[Moment]]] = (),
                 actions: Sequence[Moment] = (),
                 distributions: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
                 index_href: str = "index.html") -> None:
        self.name, self.path, self.passed, self.seed = name, path, passed, seed
        self.virtual_end, self.wall_seconds = virtual_end, wall_seconds
        self.digest, self.events = digest, events
        self.failures, self.timeline = list(failures), timeline
        self.expectations, self.actions = list(expectations), list(actions)
        self.distributions = distributions or {}
        self.index_href = index_href


def _goto(moment: Moment) -> str:
    if moment.time is None:
        return f"<span class=\"never\">{escape(moment.label)}: never</span>"
    return (f'<a href="#" class="goto" data-t="{moment.time!r}">{escape(moment.label)} @ '
            f"{format_seconds(moment.time)}</a>")


def _header(data: PageData) -> str:
    status = '<span class="pass">PASS</span>' if data.passed else '<span class="fail">FAIL</span>'
    return (
        f'<header><h1>{status} {escape(data.name)}</h1><div class="meta">'
        f"<span>{escape(data.path)}</span><span>seed {data.seed}</span>"
        f"<span>virtual {format_seconds(data.virtual_end)}</span>"
        f"<span>wall {data.wall_seconds * 1000:.0f} ms</span><span>{data.events} clock events</span>"
        f'<span>digest <code>{escape(data.digest[:16])}</code></span>'
        f'<span><a href="{escape(data.index_href, quote=True)}">all scenarios</a></span></div></header>'
    )


def _failures(data: PageData) -> str:
    if not data.failures:
        return ""
    items = []
    for text in data.failures:
        match = _EXPECT_INDEX.match(text)
        links = ""
        if match is not None and int(match.group(1)) < len(data.expectations):
            moments = data.expectations[int(match.group(1))][1]
            links = " \N{EM DASH} " + ", ".join(_goto(m) for m in moments) if moments else ""
        items.append(f"<li>{escape(text)}{links}</li>")
    return f'<section class="failures"><h2>Failed</h2><ul id="failures">{"".join(items)}</ul></section>'


def _expectations(data: PageData) -> str:
    if not data.expectations:
        return ""
    failed = {int(m.group(1)) for t in data.failures if (m := _EXPECT_INDEX.match(t))}
    items = []
    for index, (summary, moments) in enumerate(data.expectations):
        mark = '<span class="fail">\N{BALLOT X}</span>' if index in failed else \
            '<span class="pass">\N{CHECK MARK}</span>'
        links = ", ".join(_goto(m) for m in moments)
        tail = f" \N{EM DASH} {links}" if links else ""
        items.append(f"<li>{mark} expect[{index}] {escape(summary)}{tail}</li>")
    return f'<section class="expect"><h2>Expectations</h2><ul>{"".join(items)}</ul></section>'


def _charts(data: PageData) -> str:
    if not data.distributions:
        return ""
    charts = "".join(distribution_chart(title, series) for title, series in data.distributions.items())
    return f'<section class="sweep"><h2>Distributions</h2>{charts}</section>'


def _legend() -> str:
    names = [*PHASES, *(s for s in JOB_STATES if s not in PHASES), *PROGRAM_STATES.values()]
    spans = "".join(f'<span><i style="background:{COLOURS[n]}"></i>{n}</span>' for n in dict.fromkeys(names))
    return f'<div class="legend">{spans}</div>'


def _row(cls: str, label: str, tip: str, svg: str, lane: int, *, job: int | None = None) -> str:
    job_attr = f' data-job="{job}"' if job is not None else ""
    return (f'<div class="row {cls}" data-lane="{lane}"{job_attr}><div class="label" title="'
            f'{escape(tip, quote=True)}">{escape(label)}</div><div class="track">{svg}</div></div>')


def _job_label(job: JobRow) -> str:
    index = "" if job.job_index is None else f"[{job.job_index}]"
    attempt = f" attempt {job.attempt}" if job.attempt else ""
    return f"{index} {job.name}{attempt}".strip()


def _lane_rows(lane: Lane, lane_index: int, end: float) -> list[str]:
    pods = [p for j in lane.jobs for p in j.pods]
    title = f"{lane.jobset}/{lane.replicated_job}" if lane.jobset else lane.replicated_job
    label = f"{title} \N{MIDDLE DOT} {len(lane.jobs)} jobs, {len(pods)} pods"
    rows = [_row("lane", label, label, density_svg(pods, end, title), lane_index)]
    for job_index, job in enumerate(lane.jobs[:MAX_JOB_ROWS]):
        many = len(job.pods) > MAX_POD_ROWS
        cls = "job" if many or not job.pods else "job has-pods folded"
        label = _job_label(job) + (f" \N{MIDDLE DOT} {len(job.pods)} pods" if many else "")
        svg = density_svg(job.pods, end, job.name) if many else row_svg(job.segments, job.name, end)
        rows.append(_row(cls, label, f"Job {job.name}", svg, lane_index, job=job_index))
        if many:
            continue
        for pod in job.pods:
            where = f" on {pod.node}" if pod.node else ""
            rows.append(_row("pod hidden", pod.name, f"Pod {pod.name}{where}",
                             row_svg(pod.segments, pod.name + where, end, program=pod.program,
                                     ticks=pod.ticks), lane_index, job=job_index))
    hidden = len(lane.jobs) - MAX_JOB_ROWS
    if hidden > 0:
        rows.append(_row("job note", f"\N{HORIZONTAL ELLIPSIS} {hidden} more Jobs (in the lane's band)",
                         "", "", lane_index, job=MAX_JOB_ROWS))
    return rows


MAX_OTHER_ROWS = 50


def _other_rows(events: Sequence[TraceEvent], lane_index: int, end: float) -> list[str]:
    """Objects outside any replicated job (EndpointSlices, Services, whatever a component records) as one
    folded lane: a row of ticks per object, the event and its detail (``endpoints 4``) in the tooltip."""
    by_object: dict[tuple[str, str], list[Tick]] = {}
    for e in events:
        by_object.setdefault((e.kind, e.name), []).append(Tick(e.time, e.event, e.detail))
    if not by_object:
        return []
    label = f"other objects \N{MIDDLE DOT} {len(by_object)}"
    rows = [_row("lane folded", label, label, "", lane_index)]
    for index, ((kind, name), ticks) in enumerate(list(by_object.items())[:MAX_OTHER_ROWS]):
        rows.append(_row("job hidden", f"{kind} {name}", f"{kind} {name}",
                         row_svg((), f"{kind} {name}", end, ticks=ticks), lane_index, job=index))
    return rows


def _overlay(markers: Sequence[Marker], end: float) -> str:
    lines = []
    for m in markers:
        tip = escape(f"{m.label}{' (' + m.detail + ')' if m.detail else ''} at {format_seconds(m.time)}",
                     quote=True)
        lines.append(f'<line class="marker {m.category}" x1="{m.time!r}" x2="{m.time!r}" y1="0" y2="1" '
                     f'data-t="{m.time!r}" data-tip="{tip}"/>')
    return (f'<div id="overlay"><svg class="tl" viewBox="0 0 {end!r} 1" preserveAspectRatio="none">'
            + "".join(lines) + "</svg></div>")


def _marker_list(markers: Sequence[Marker]) -> str:
    items = "".join(
        f'<li class="{m.category}">{_goto(Moment(m.label, m.time))}</li>' for m in markers
    )
    return f'<section><h2>Markers</h2><ul id="markers">{items}</ul></section>'


def render_page(data: PageData) -> str:
    """The whole self-contained HTML document."""
    timeline = data.timeline
    end = max(timeline.end, 1e-6)
    markers = list(timeline.markers)
    markers += [Marker(m.time, m.label, "action") for m in data.actions if m.time is not None]
    for _summary, moments in data.expectations:
        markers += [Marker(m.time, m.label, "milestone") for m in moments
                    if m.time is not None and m.kind == "milestone"]
    markers = sorted({(m.time, m.category, m.label): m for m in markers}.values(),
                     key=lambda m: (m.time, m.category, m.label))
    rows: list[str] = []
    for lane_index, lane in enumerate(timeline.lanes):
        rows.extend(_lane_rows(lane, lane_index, end))
    rows.extend(_other_rows(timeline.other, len(timeline.lanes), end))
    controls = (
        '<div class="controls"><button id="zin">zoom in</button><button id="zout">zoom out</button>'
        '<button id="zreset">whole run</button> <span id="window"></span> '
        "<small>(shift+wheel zooms at the pointer; click a lane or Job to fold/expand)</small>"
        f"{_legend()}</div>"
    )
    body = (
        _header(data) + _failures(data) + _expectations(data) + _charts(data) + controls
        + '<div id="axis"></div>'
        + f'<div class="timeline" id="timeline" data-end="{end!r}">{_overlay(markers, end)}{"".join(rows)}'
        + "</div>" + _marker_list(markers) + '<div id="tip"></div>'
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(data.name)} \N{EM DASH} fakecluster</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{SCRIPT}</script></body></html>\n"
    )
