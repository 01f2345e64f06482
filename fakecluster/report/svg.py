"""SVG for one timeline row: phase segments, program bands, ticks, and density bands for many pods.

Coordinates are virtual seconds on x and [0, 1] on y (the page's script zooms by changing the viewBox),
so every number written is a time or a fraction and the timeline is a pure function of the trace: two
runs with the same seed draw byte-identical timelines (only the page header's wall time differs).
Numbers are written with a fixed precision to keep a 10,000-pod page small.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from fakecluster.report.assets import COLOURS
from fakecluster.report.model import PHASES, PodRow, Segment, Tick
from fakecluster.scenario.durations import format_seconds

__all__ = ["DENSITY_BINS", "density", "density_svg", "row_svg"]

DENSITY_BINS = 160
"""Time bins of a density band: fine enough to see a staggered start, small enough for 10,000 pods."""


def _n(value: float) -> str:
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _span(seg: Segment) -> str:
    return f"{format_seconds(seg.start)} \N{RIGHTWARDS ARROW} {format_seconds(seg.end)} " \
           f"({format_seconds(seg.end - seg.start)})"


def _rects(segments: Sequence[Segment], name: str, y: float, h: float, end: float) -> list[str]:
    out = []
    min_width = end / 2000
    for seg in segments:
        width = max(seg.end - seg.start, min_width)
        tip = escape(f"{name}\n{seg.state}: {_span(seg)}", quote=True)
        out.append(
            f'<rect class="seg {seg.state}" x="{_n(seg.start)}" y="{_n(y)}" width="{_n(width)}" '
            f'height="{_n(h)}" fill="{COLOURS.get(seg.state, "#999")}" data-state="{seg.state}" '
            f'data-tip="{tip}"/>'
        )
    return out


def _ticks(ticks: Sequence[Tick], name: str, end: float) -> list[str]:
    out = []
    width = end / 800
    for tick in ticks:
        tip = escape(f"{name}\n{tick.event} {tick.detail} at {format_seconds(tick.time)}".strip(), quote=True)
        colour = _outcome_colour(tick.detail)
        out.append(
            f'<rect class="tick" x="{_n(tick.time - width / 2)}" y="0.62" width="{_n(width)}" '
            f'height="0.38" fill="{colour}" data-event="{escape(tick.event, quote=True)}" data-tip="{tip}"/>'
        )
    return out


_OUTCOME_COLOURS = {"ok": "#16a085", "connected": "#16a085", "refused": "#c0392b", "timeout": "#e67e22",
                    "nxdomain": "#8e44ad", "unreachable": "#7f8c8d"}


def _outcome_colour(detail: str) -> str:
    """A connection attempt's colour by its outcome word (``outcome=refused`` or just ``refused``)."""
    word = detail.rsplit("=", 1)[-1].split(maxsplit=1)[0].lower() if detail else ""
    return _OUTCOME_COLOURS.get(word, "#34495e")


def row_svg(segments: Sequence[Segment], name: str, end: float, *, program: Sequence[Segment] = (),
            ticks: Sequence[Tick] = ()) -> str:
    """One object's row: its phase band, and under it the program band and point events if any."""
    body = _rects(segments, name, 0.0, 0.62 if program else 1.0, end)
    if program:
        body += _rects(program, f"{name} program", 0.66, 0.34, end)
    body += _ticks(ticks, name, end)
    return _svg(body, end)


def _svg(body: list[str], end: float) -> str:
    return (f'<svg class="tl" viewBox="0 0 {_n(end)} 1" preserveAspectRatio="none">' + "".join(body)
            + "</svg>")


def density(pods: Sequence[PodRow], end: float, bins: int = DENSITY_BINS) -> dict[str, list[int]]:
    """How many pods are in each phase at the middle of each time bin: O(segments + bins)."""
    width = end / bins
    deltas = {phase: [0] * (bins + 1) for phase in PHASES}
    for pod in pods:
        for seg in pod.segments:
            delta = deltas.get(seg.state)
            if delta is None:
                continue
            # bins whose midpoint m = (k + 0.5) * width satisfies start <= m < end
            first = max(0, _ceil((seg.start / width) - 0.5))
            last = min(bins, _ceil((seg.end / width) - 0.5))
            if first < last:
                delta[first] += 1
                delta[last] -= 1
    counts: dict[str, list[int]] = {}
    for phase, delta in deltas.items():
        running, series = 0, []
        for k in range(bins):
            running += delta[k]
            series.append(running)
        if any(series):
            counts[phase] = series
    return counts


def _ceil(value: float) -> int:
    whole = int(value)
    return whole if whole >= value else whole + 1


def density_svg(pods: Sequence[PodRow], end: float, name: str) -> str:
    """A stacked area per phase, normalised to the peak number of pods at once, peak count in the tooltip."""
    counts = density(pods, end)
    # Full height is the most pods alive at once, so restart attempts do not halve the band.
    total = max([sum(series[k] for series in counts.values()) for k in range(DENSITY_BINS)] + [1])
    bins = DENSITY_BINS
    width = end / bins
    # The bin edges and the heights (a count over the total) repeat across phases and bins: format each
    # once (a report page draws one band per replicated job; this was most of a page's rendering).
    xs = [_n(k * width) for k in range(bins + 1)]
    ys: dict[int, str] = {}

    def y_of(count: int) -> str:
        text = ys.get(count)
        if text is None:
            text = ys[count] = _n(1 - count / total)
        return text

    floor = [0] * bins
    body = []
    for phase in PHASES:
        series = counts.get(phase)
        if series is None:
            continue
        top = [floor[k] + series[k] for k in range(bins)]
        points = []
        for k in range(bins):
            y = y_of(top[k])
            points.append(f"{xs[k]},{y} {xs[k + 1]},{y}")
        for k in reversed(range(bins)):
            y = y_of(floor[k])
            points.append(f"{xs[k + 1]},{y} {xs[k]},{y}")
        peak = max(series)
        tip = escape(f"{name}: {len(pods)} pods\n{phase}: up to {peak} at once", quote=True)
        body.append(
            f'<polygon class="density {phase}" fill="{COLOURS[phase]}" points="{" ".join(points)}" '
            f'data-state="{phase}" data-tip="{tip}"/>'
        )
        floor = top
    return _svg(body, end)
