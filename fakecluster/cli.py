"""``python -m fakecluster run PATH... [--json FILE] [--report DIR] [--trace FILE]``, ``diff``, ``export``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fakecluster.report import cli as report_cli
from fakecluster.scenario.runner import ScenarioOutcome, discover, run_scenario
from fakecluster.scenario.trace import TraceEvent


def _line(outcome: ScenarioOutcome) -> str:
    status = "PASS" if outcome.passed else "FAIL"
    return (
        f"{status}  {outcome.path}  virtual {outcome.virtual_end:.1f}s  "
        f"wall {outcome.wall_seconds * 1000:.0f}ms  seed {outcome.seed}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakecluster", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenario files or folders")
    run.add_argument("paths", nargs="+", type=Path)
    run.add_argument("--json", type=Path, help="write one JSON record per scenario to this file")
    run.add_argument("-q", "--quiet", action="store_true", help="print failures' reports only")
    report_cli.add_run_options(run)
    report_cli.add_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "diff":
        return report_cli.run_diff(args.a, args.b)
    if args.command == "export":
        return report_cli.run_export(args.scenario, args.directory)
    sinks = report_cli.RunSinks(args.report, args.trace)

    files, missing = discover(args.paths)
    outcomes: list[ScenarioOutcome] = []
    for path in missing:
        print(f"ERROR {path}: no such file or directory", file=sys.stderr)
    for path in files:
        outcome, lifecycle = _run_one(path, sinks.wants_lifecycle)
        sinks.add(outcome, lifecycle)
        outcomes.append(outcome)
        if not args.quiet or not outcome.passed:
            print(_line(outcome))
        if not outcome.passed:
            print(_indent(outcome.report))
        elif not args.quiet and (outcome.sweep is not None or outcome.stuck):
            print(_indent(outcome.report))  # a sweep's figures and histograms; a stuck run's diagnosis
    failed = sum(1 for o in outcomes if not o.passed) + len(missing)
    passed = len(outcomes) - (failed - len(missing))
    if args.json:
        args.json.write_text(json.dumps([o.record() for o in outcomes], indent=2) + "\n")
    for line in sinks.close():
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and outcomes else 1


def _run_one(path: Path, lifecycle: bool) -> tuple[ScenarioOutcome, list[TraceEvent]]:
    """A plain run, or (for ``--report``) one with the report's pod-lifecycle observer attached."""
    if lifecycle:
        from fakecluster.report import run_for_report

        return run_for_report(path)
    return run_scenario(path), []


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())

