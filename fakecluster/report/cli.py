"""The report's command-line pieces, kept apart from ``fakecluster/cli.py`` so that file stays small.

``run --report DIR`` and ``run --trace FILE`` are options of the ``run`` verb (``fakecluster/cli.py``
declares them in its report option group, :class:`RunSinks` writes them as scenarios finish); ``diff``
and ``export`` are verbs of their own (:func:`run_diff`, :func:`run_export`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from fakecluster.report.diff import diff_traces
from fakecluster.report.jsonl import TraceFormatError, read_traces, write_trace
from fakecluster.scenario.runner import ScenarioOutcome
from fakecluster.scenario.trace import TraceEvent

__all__ = ["RunSinks", "run_diff", "run_export"]


class RunSinks:
    """Where ``run`` sends each finished scenario besides the terminal: the report folder, the trace file."""

    def __init__(self, report: Path | None, trace: Path | None, *, per_seed: bool = False) -> None:
        """``per_seed``: each file is played with several seeds (``run --seeds N``), so pages and trace
        blocks are named by seed too."""
        self.report = report
        self.per_seed = per_seed
        self.trace_path = trace
        if report is not None:
            from fakecluster.report.writer import start_report

            start_report(report)
        self._trace: IO[str] | None = None
        if trace is not None:
            trace.parent.mkdir(parents=True, exist_ok=True)
            self._trace = trace.open("w", encoding="utf-8")

    @property
    def wants_lifecycle(self) -> bool:
        return self.report is not None

    def add(self, outcome: ScenarioOutcome, lifecycle: list[TraceEvent]) -> None:
        from fakecluster.report import trace_header

        if self.report is not None:
            from fakecluster.report.writer import write_page  # only with --report: 6 ms of imports

            write_page(self.report, outcome, lifecycle, per_seed=self.per_seed)
        if self._trace is not None:
            sweep = getattr(outcome, "sweep", None)
            runs = sweep.runs if sweep is not None else [outcome]
            for run in runs:  # a sweep: one block per seed, named "<scenario> seed <n>"
                header = trace_header(run)
                if sweep is not None or self.per_seed:
                    header["scenario"] = f"{run.name} seed {run.seed}"
                write_trace(self._trace, header, run.trace)

    def close(self) -> list[str]:
        """Finish the outputs; the lines to print about them."""
        lines = []
        if self._trace is not None:
            self._trace.close()
            lines.append(f"trace: {self.trace_path}")
        if self.report is not None:
            from fakecluster.report.writer import write_index

            lines.append(f"report: {write_index(self.report)}")
        return lines


def run_diff(a: Path, b: Path, out: IO[str] = sys.stdout) -> int:
    """Exit 0 if every scenario's trace is equal, 1 if any differs, 2 on unreadable input."""
    try:
        left, right = read_traces(a), read_traces(b)
    except TraceFormatError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    differs = False
    right_by_name = {t.name: t for t in right}
    if len(left) == 1 and len(right) == 1:
        right_by_name = {left[0].name: right[0]}  # one run each: compare them whatever they are called
    for trace in left:
        other = right_by_name.pop(trace.name, None)
        if other is None:
            print(f"{trace.name}: only in {a}", file=out)
            differs = True
            continue
        lines = diff_traces(trace, other)
        seeds = f"seed {trace.header.get('seed')} vs {other.header.get('seed')}"
        if not lines:
            print(f"{trace.name}: identical ({len(trace.events)} events, {seeds})", file=out)
            continue
        differs = True
        print(f"{trace.name}: differs ({seeds})", file=out)
        for line in lines:
            print("  " + line, file=out)
    for name in right_by_name:
        print(f"{name}: only in {b}", file=out)
        differs = True
    return 1 if differs else 0


def run_export(scenario: Path, directory: Path) -> int:
    from fakecluster.report.kwok.export import ExportError, export_scenario

    try:
        written = export_scenario(scenario, directory)
    except ExportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0
