"""Sweep charts: one strip plot with a histogram under it per distribution, like the timing study's figures.

A sweep runs a scenario over many seeds and collects one value per seed for each named distribution (a
milestone's time, a gap between two milestones). :func:`distribution_chart` takes those per-seed values
as plain lists, keyed by configuration, so it plugs into whatever produces them; each configuration is one
strip (every seed a dot, the median a bar) and one histogram over shared bins, so two configurations'
shapes (a bimodal startup, say) compare at a glance.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from html import escape

from fakecluster.scenario.durations import format_seconds

__all__ = ["distribution_chart"]

_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
_W, _LEFT, _STRIP, _HIST = 640, 150, 22, 60


def _f(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") or "0"


def distribution_chart(title: str, series: Mapping[str, Sequence[float]], *, bins: int = 30) -> str:
    """An inline SVG: per configuration a strip of per-seed values and a histogram, on one time axis.

    Raises ``ValueError`` for an empty chart; NaN values are left out (a seed where the milestone never
    happened is counted in the label instead)."""
    if not series:
        raise ValueError(f"distribution {title!r}: no configurations to chart")
    clean = {name: sorted(v for v in values if math.isfinite(v)) for name, values in series.items()}
    every = [v for values in clean.values() for v in values]
    low, high = (min(every), max(every)) if every else (0.0, 1.0)
    if high <= low:
        high = low + 1.0
    plot = _W - _LEFT - 10

    def x(value: float) -> float:
        return _LEFT + plot * (value - low) / (high - low)

    body: list[str] = []
    y = 22
    width = (high - low) / bins
    for index, (name, values) in enumerate(clean.items()):
        colour = _PALETTE[index % len(_PALETTE)]
        missing = len(series[name]) - len(values)
        label = f"{name} (n={len(values)}" + (f", {missing} never" if missing else "") + ")"
        body.append(f'<text x="4" y="{y + 14}" font-size="11">{escape(label)}</text>')
        body.append(f'<g class="strip" data-config="{escape(name, quote=True)}">')
        for seed_index, value in enumerate(values):
            jitter = (seed_index * 7919) % 11 - 5  # deterministic spread so equal values stay visible
            body.append(f'<circle cx="{_f(x(value))}" cy="{y + 11 + jitter}" r="2" fill="{colour}" '
                        f'fill-opacity="0.6" data-tip="{escape(name, quote=True)}: '
                        f'{format_seconds(value)}"/>')
        if values:
            median = statistics.median(values)
            body.append(f'<rect x="{_f(x(median) - 1)}" y="{y}" width="2" height="{_STRIP}" fill="#000" '
                        f'data-tip="median {format_seconds(median)}"/>')
        body.append("</g>")
        y += _STRIP + 4
        counts = [0] * bins
        for value in values:
            counts[min(bins - 1, int((value - low) / width))] += 1
        peak = max(counts) or 1
        body.append(f'<g class="histogram" data-config="{escape(name, quote=True)}">')
        for k, count in enumerate(counts):
            if count:
                h = _HIST * count / peak
                body.append(
                    f'<rect x="{_f(x(low + k * width))}" y="{_f(y + _HIST - h)}" '
                    f'width="{_f(max(plot / bins - 1, 1))}" height="{_f(h)}" fill="{colour}" '
                    f'data-tip="{format_seconds(low + k * width)}\N{EN DASH}'
                    f'{format_seconds(low + (k + 1) * width)}: {count}"/>'
                )
        body.append("</g>")
        y += _HIST + 10
    for k in range(6):
        value = low + (high - low) * k / 5
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        body.append(f'<text x="{_f(x(value))}" y="{y + 12}" font-size="10" text-anchor="{anchor}">'
                    f"{format_seconds(round(value, 3))}</text>")
    height = y + 18
    return (f'<figure class="chart"><figcaption>{escape(title)}</figcaption>'
            f'<svg class="distribution" width="{_W}" height="{height}" viewBox="0 0 {_W} {height}">'
            + "".join(body) + "</svg></figure>")
