"""``python -m fakecluster run PATH... [--json FILE]``: run scenario files or folders and report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fakecluster.explore import command as explore_command
from fakecluster.scenario.runner import ScenarioOutcome, discover, run_scenario


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
    explore_command.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "explore":
        return explore_command.run(args)

    files, missing = discover(args.paths)
    outcomes: list[ScenarioOutcome] = []
    for path in missing:
        print(f"ERROR {path}: no such file or directory", file=sys.stderr)
    for path in files:
        outcome = run_scenario(path)
        outcomes.append(outcome)
        if not args.quiet or not outcome.passed:
            print(_line(outcome))
        if not outcome.passed:
            print(_indent(outcome.report))
    failed = sum(1 for o in outcomes if not o.passed) + len(missing)
    passed = len(outcomes) - (failed - len(missing))
    if args.json:
        args.json.write_text(json.dumps([o.record() for o in outcomes], indent=2) + "\n")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and outcomes else 1


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())

