"""Writes a run's report folder: one self-contained page per scenario and an ``index.html``.

File names come from the scenario path (``scenarios/driver-first/x.yaml`` -> ``driver-first--x.html``),
so a CI artifact keeps one stable name per scenario across runs. Pages are pure functions of the run
(the wall time aside), and the index is sorted by path, so a report folder diffs cleanly.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from fakecluster.report.assets import CSS
from fakecluster.report.model import build_timeline
from fakecluster.report.moments import Moment, action_moments, expectation_moments
from fakecluster.report.page import PageData, render_page
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.format import Expectation, Scenario
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioOutcome
from fakecluster.scenario.trace import TraceEvent

__all__ = ["IndexEntry", "page_name", "read_records", "start_report", "write_index", "write_page"]


def page_name(path: Path) -> str:
    """A flat, stable file name for a scenario's page."""
    parts = [p for p in path.with_suffix("").parts if p not in ("", ".", "..", "/")]
    if "scenarios" in parts:
        parts = parts[len(parts) - parts[::-1].index("scenarios"):]
    return "--".join(parts) + ".html"


@dataclass(slots=True)
class IndexEntry:
    """One ``index.html`` row; also stored as JSON so separate processes (xdist) can share an index."""

    path: str
    name: str
    page: str
    passed: bool
    seed: int
    virtual_end: float
    wall_seconds: float
    digest: str
    failures: int

    @classmethod
    def of(cls, outcome: ScenarioOutcome, page: str) -> IndexEntry:
        return cls(str(outcome.path), outcome.name, page, outcome.passed, outcome.seed, outcome.virtual_end,
                   outcome.wall_seconds, outcome.digest, len(outcome.failures))


def _describe(exp: Expectation) -> str:
    if exp.order is not None:
        return "order: " + " < ".join(str(m) for m in exp.order)
    if exp.happens is not None:
        window = (f" after {exp.after:g}s" if exp.after is not None else "") + \
                 (f" by {exp.by:g}s" if exp.by is not None else "")
        return f"happens: {exp.happens}{window}"
    if exp.never is not None:
        return f"never: {exp.never}"
    gap = getattr(exp, "gap", None)
    if gap is not None:
        bounds = f" min {gap.min:g}s" if gap.min else ""
        bounds += f" max {gap.max:g}s" if gap.max is not None else ""
        return f"gap: from {gap.from_} to {gap.to}{bounds}"
    distribution = getattr(exp, "distribution", None)
    if distribution is not None:
        return f"distribution of {distribution.of} (over the sweep's seeds)"
    if exp.at is not None:
        return f"at {exp.at:g}s: state"
    return exp.kind


def _scenario(outcome: ScenarioOutcome) -> Scenario | None:
    if outcome.scenario is not None:
        return outcome.scenario
    if outcome.path is None:  # played from a dict (the Python API): there is no file to read back
        return None
    try:
        return load_scenario(outcome.path)
    except (ScenarioError, OSError):
        return None


def sweep_distributions(outcome: ScenarioOutcome) -> dict[str, dict[str, list[float]]]:
    """A sweep's per-seed values by distribution, in the chart's shape (a seed where the milestone never
    happened is NaN, which the chart counts as "never")."""
    sweep = getattr(outcome, "sweep", None)
    if sweep is None:
        return {}
    charts: dict[str, dict[str, list[float]]] = {}
    for result in sweep.distributions:
        values = [math.nan if v is None else float(v) for _seed, v in sorted(result.values.items())]
        charts[f"expect[{result.index}] distribution of {result.spec.of}"] = {
            f"seeds {sweep.seeds[0]}..{sweep.seeds[-1]}": values
        }
    return charts


def write_page(directory: Path, outcome: ScenarioOutcome, lifecycle: Sequence[TraceEvent] = (), *,
               distributions: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
               workload_kind: str = "JobSet", per_seed: bool = False) -> Path:
    """Write one scenario's page (and its index record) into ``directory``; return the page's path.

    For a sweep the timeline is its first seed's run (``lifecycle`` should be that run's edges) and the
    distributions are charted over every seed. ``per_seed``: the same file is played with several seeds
    (``--seeds``, ``--fakecluster-seeds``), so each seed gets its own page (``<page>--seed-<n>.html``)."""
    directory.mkdir(parents=True, exist_ok=True)
    sweep = getattr(outcome, "sweep", None)
    shown = sweep.runs[0] if sweep is not None and sweep.runs else outcome
    end = max(shown.virtual_end, max((e.time for e in shown.trace), default=0.0))
    timeline = build_timeline(shown.trace, lifecycle, end=end, workload_kind=workload_kind)
    scenario = _scenario(outcome)
    expectations: list[tuple[str, Sequence[Moment]]] = []
    actions: list[Moment] = []
    if scenario is not None:
        moments = expectation_moments(scenario, shown.trace, shown.shapes, end)
        expectations = [(_describe(e), m) for e, m in zip(scenario.expect, moments, strict=True)]
        actions = action_moments(scenario, shown.trace, shown.shapes)
    title = outcome.name if shown is outcome else f"{outcome.name} (timeline: seed {shown.seed})"
    name = page_name(outcome.path if outcome.path is not None else Path(outcome.name))
    if per_seed:
        name = f"{name.removesuffix('.html')}--seed-{outcome.seed}.html"
    data = PageData(
        name=title, path=str(outcome.path), passed=outcome.passed, seed=outcome.seed,
        virtual_end=outcome.virtual_end, wall_seconds=outcome.wall_seconds, digest=outcome.digest,
        events=outcome.events_run, failures=outcome.failures, timeline=timeline, expectations=expectations,
        actions=actions, distributions=distributions or sweep_distributions(outcome),
    )
    page = directory / name
    page.write_text(render_page(data), encoding="utf-8")
    records = directory / ".records"
    records.mkdir(exist_ok=True)
    entry = IndexEntry.of(outcome, name)
    (records / (name + ".json")).write_text(json.dumps(_as_dict(entry), sort_keys=True))
    return page


def _as_dict(entry: IndexEntry) -> dict[str, Any]:
    return {f: getattr(entry, f) for f in IndexEntry.__slots__}


def start_report(directory: Path) -> None:
    """Forget the index records of an earlier run into the same folder (its pages may stay; the new
    index lists only this run). Called once per run, before any page is written."""
    records = directory / ".records"
    if records.is_dir():
        for file in records.glob("*.json"):
            file.unlink()


def read_records(directory: Path) -> list[IndexEntry]:
    """The index records every page writer left in ``directory`` (possibly from several processes)."""
    entries = []
    for file in sorted((directory / ".records").glob("*.json")):
        entries.append(IndexEntry(**json.loads(file.read_text())))
    return entries


def write_index(directory: Path, entries: Iterable[IndexEntry] | None = None) -> Path:
    """``index.html``: every scenario with status, virtual and wall time, seed and digest, by path."""
    rows = sorted(read_records(directory) if entries is None else entries, key=lambda e: e.path)
    passed = sum(1 for e in rows if e.passed)
    body = []
    for e in rows:
        status = '<td class="pass">PASS</td>' if e.passed else '<td class="fail">FAIL</td>'
        body.append(
            f'<tr data-passed="{str(e.passed).lower()}">{status}<td><a href="{escape(e.page, quote=True)}">'
            f"{escape(e.name)}</a></td><td>{escape(e.path)}</td>"
            f'<td class="num">{e.virtual_end:.3f}s</td><td class="num">{e.wall_seconds * 1000:.0f} ms</td>'
            f'<td class="num">{e.seed}</td><td><code>{escape(e.digest[:16])}</code></td>'
            f'<td class="num">{e.failures}</td></tr>'
        )
    html = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>fakecluster report</title>'
        f"<style>{CSS}</style></head><body><header><h1>fakecluster report</h1>"
        f'<div class="meta"><span>{passed} passed, {len(rows) - passed} failed</span></div></header>'
        '<section><table id="scenarios"><thead><tr><th>status</th><th>scenario</th><th>path</th>'
        "<th>virtual</th><th>wall</th><th>seed</th><th>digest</th><th>failures</th></tr></thead><tbody>"
        + "".join(body) + "</tbody></table></section></body></html>\n"
    )
    index = directory / "index.html"
    directory.mkdir(parents=True, exist_ok=True)
    index.write_text(html, encoding="utf-8")
    return index
