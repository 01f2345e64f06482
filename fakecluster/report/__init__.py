"""See and share a run: HTML timeline reports, the trace as JSON lines, trace diffs, KWOK export.

This package sits on top of the scenario runner and only reads what a run leaves behind (plus, for the
HTML report, a few pod edges a pure observer records alongside the trace); nothing here drives the
cluster. The public face:

- :func:`run_for_report` plays a scenario with the report's observer attached;
- :func:`write_page` / :func:`write_index` write the report folder;
- :func:`write_trace` / :func:`read_traces` the ``fakecluster-trace/1`` JSON-lines format;
- :func:`diff_traces` the first divergence and the milestones that moved.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakecluster.cluster import Cluster
from fakecluster.report.diff import diff_traces, first_divergence, milestone_times
from fakecluster.report.jsonl import (
    SCHEMA,
    TraceFile,
    TraceFormatError,
    header_record,
    read_traces,
    write_trace,
)
from fakecluster.report.lifecycle import LifecycleObserver
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.runner import ScenarioOutcome, run_scenario
from fakecluster.scenario.trace import TraceEvent, trace_digest
from fakecluster.workload_plugin import WorkloadPlugin

if TYPE_CHECKING:
    from fakecluster.report.writer import IndexEntry, page_name, read_records, write_index, write_page

_WRITER_NAMES = ("IndexEntry", "page_name", "read_records", "write_index", "write_page")
"""Imported when first asked for (PEP 562): every ``fakecluster run`` imports this package, and the HTML
writer (about 10 ms of imports) is needed only with ``--report``."""


def __getattr__(name: str) -> Any:
    if name in _WRITER_NAMES:
        from fakecluster.report import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "SCHEMA",
    "IndexEntry",
    "TraceFile",
    "TraceFormatError",
    "diff_traces",
    "first_divergence",
    "header_record",
    "milestone_times",
    "page_name",
    "read_records",
    "read_traces",
    "run_for_report",
    "trace_header",
    "write_index",
    "write_page",
    "write_trace",
]


def run_for_report(
    path: Path, *, limits: RunLimits | None = None, seed: int | None = None, shuffle_ties: int | None = None,
    invariants: bool | None = None, sweep_seed: int | None = None,
) -> tuple[ScenarioOutcome, list[TraceEvent]]:
    """Play one scenario with the lifecycle observer attached: the outcome and the report-only edges
    (``seed``: the seed override of a ``--seeds``/``--fakecluster-seeds`` sweep; ``shuffle_ties``: the
    ``--shuffle-ties`` seed; ``invariants``: ``--no-invariants``; ``sweep_seed``: that one seed of a
    sweep, as :func:`~fakecluster.scenario.runner.run_scenario` plays it)."""
    observers: list[LifecycleObserver] = []

    def observe(cluster: Cluster, plugin: WorkloadPlugin) -> None:
        observers.append(LifecycleObserver(cluster, plugin))

    outcome = run_scenario(path, observe=observe, limits=limits, seed=seed, shuffle_ties=shuffle_ties,
                           invariants=invariants, sweep_seed=sweep_seed)
    return outcome, (observers[0].events if observers else [])


def trace_header(outcome: ScenarioOutcome) -> dict[str, object]:
    """The ``fakecluster-trace/1`` header line for an outcome."""
    return header_record(path=str(outcome.path), name=outcome.name, seed=outcome.seed, passed=outcome.passed,
                         digest=outcome.digest, trace_digest=trace_digest(outcome.trace),
                         virtual_end=outcome.virtual_end, events=len(outcome.trace))
