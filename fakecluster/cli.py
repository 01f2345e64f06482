"""``python -m fakecluster run PATH... [--json FILE] [--report DIR] [--trace FILE]``, ``diff``, ``export``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fakecluster.explore import command as explore_command
from fakecluster.report import cli as report_cli
from fakecluster.scenario.errors import escape_control
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.runner import ScenarioOutcome, discover, run_scenario
from fakecluster.scenario.trace import TraceEvent


def _line(outcome: ScenarioOutcome) -> str:
    status = "PASS" if outcome.passed else "FAIL"
    return (
        f"{status}  {escape_control(str(outcome.path))}  virtual {outcome.virtual_end:.1f}s  "
        f"wall {outcome.wall_seconds * 1000:.0f}ms  seed {outcome.seed}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakecluster", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run scenario files or folders")
    run.add_argument("paths", nargs="+", type=Path)
    run.add_argument("--json", type=Path, help="write one JSON record per scenario to this file")
    run.add_argument("-q", "--quiet", action="store_true", help="print failures' reports only")
    _add_limit_options(run)
    report_cli.add_run_options(run)
    report_cli.add_commands(sub)
    explore_command.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "explore":
        return explore_command.run(args)
    if args.command == "diff":
        return report_cli.run_diff(args.a, args.b)
    if args.command == "export":
        return report_cli.run_export(args.scenario, args.directory)
    limits = RunLimits(
        max_events=args.max_events, max_wall_seconds=args.max_wall_seconds, max_pods=args.max_pods,
        allowed_dirs=tuple(args.allow_dir),
    )
    if args.json is not None and not _writable(args.json):
        return 2
    sinks = report_cli.RunSinks(args.report, args.trace)

    files, missing = discover(args.paths)
    outcomes: list[ScenarioOutcome] = []
    for path in missing:
        print(f"ERROR {escape_control(str(path))}: no such file or directory", file=sys.stderr)
    for path in files:
        outcome, lifecycle = _run_one(path, sinks.wants_lifecycle, limits)
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
        try:
            args.json.write_text(json.dumps([o.record() for o in outcomes], indent=2) + "\n")
        except OSError as exc:
            shown = escape_control(str(args.json))
            print(f"ERROR cannot write --json {shown}: {exc.strerror}", file=sys.stderr)
            return 2
    for line in sinks.close():
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and outcomes else 1


def _run_one(path: Path, lifecycle: bool, limits: RunLimits) -> tuple[ScenarioOutcome, list[TraceEvent]]:
    """A plain run, or (for ``--report``) one with the report's pod-lifecycle observer attached."""
    if lifecycle:
        from fakecluster.report import run_for_report

        return run_for_report(path, limits=limits)
    return run_scenario(path, limits=limits), []


def _positive_int(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text) if text.isascii() else -1.0
    except ValueError:
        value = -1.0
    if not 0 < value <= 10 * 365 * 24 * 3600:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _add_limit_options(run: argparse.ArgumentParser) -> None:
    """The bounds of :mod:`fakecluster.scenario.limits`; each overrides the scenario's ``cluster.budget``."""
    run.add_argument("--max-events", type=_positive_int, metavar="N",
                     help="clock events one scenario may run (default 2000000)")
    run.add_argument("--max-wall-seconds", type=_positive_seconds, metavar="S",
                     help="wall-clock seconds one scenario may take (default 120)")
    run.add_argument("--max-pods", type=_positive_int, metavar="N",
                     help="pods one scenario's manifests may ask for (default 150000)")
    run.add_argument("--allow-dir", type=Path, action="append", default=[], metavar="DIR",
                     help="let {file:} references read from DIR too (repeatable)")


def _writable(target: Path) -> bool:
    """Check ``--json`` before running anything: a typo in its folder must not cost the whole run."""
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir() or not folder.is_dir():
        what = "is a directory" if target.is_dir() else f"folder {escape_control(str(folder))} does not exist"
        print(f"ERROR cannot write --json {escape_control(str(target))}: {what}", file=sys.stderr)
        return False
    return True


def _indent(text: str) -> str:
    """Indent a report; each line with control characters escaped (a scenario's name could hold ANSI
    escapes that repaint the terminal)."""
    return "\n".join("    " + escape_control(line) for line in text.splitlines())


