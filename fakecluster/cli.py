"""The ``fakecluster`` command line (also ``python -m fakecluster``): run, list and validate scenarios.

Start-up stays small: this module imports only the standard library at the top; a command imports the
runner when it needs it, so ``--version`` and ``--help`` never load pydantic or the cluster; ``run``
imports it with the cyclic garbage collector paused and then freezes what the imports built
(:func:`import_for_good`). Options of
``run`` are added one group per function (selection, seeds, output, control), so a new group (reports,
traces) is one more function and one more line in :func:`build_parser`. A closed pipe (``| head``) and
Ctrl-C end the process quietly with the conventional exit status (141, 130), never a traceback.
``run --report DIR``/``--trace FILE`` and the ``diff``/``export`` verbs come from :mod:`fakecluster.report`
(imported when used); ``--max-events``/``--max-wall-seconds``/``--max-pods``/``--allow-dir`` are the
bounds of :mod:`fakecluster.scenario.limits`. Text from scenario files is printed with control characters
escaped, so a hostile file cannot repaint the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import sys
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakecluster.progress import Progress
    from fakecluster.scenario.limits import RunLimits
    from fakecluster.scenario.runner import ScenarioResult
    from fakecluster.workers import Played, RunRequest

__all__ = ["build_parser", "main"]

_SHORT_DESCRIPTION = 100
"""Characters of a description ``list`` shows without ``-v`` (descriptions are often paragraphs)."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away

DESCRIPTION = """\
Deterministic, in-memory Kubernetes cluster for testing the JobSet controller.
Plays scenario files (YAML) on a virtual clock and checks their expectations."""

EXAMPLES = """\
examples:
  fakecluster run scenarios/
  fakecluster run scenarios/ -n auto                       # one worker process per core, same output
  fakecluster run scenarios/ -k inorder -m "workers-first and not slow" -x
  fakecluster run regressions/ray.yaml --seeds 20          # the same file with 20 seeds
  fakecluster run scenarios/ --json report.json --junit-xml junit.xml -q
  fakecluster run scenarios/ --report out/ --trace out/trace.jsonl   # HTML timelines, JSON-lines traces
  fakecluster diff a.jsonl b.jsonl                         # first divergence of two traces
  fakecluster export scenarios/x.yaml out/kwok/            # manifests + KWOK stages + a check script
  fakecluster list scenarios/
  fakecluster validate regressions/                        # every problem, no run
  fakecluster run scenarios/ --shuffle-ties --shuffle-seed 3   # same-instant events in another order
  fakecluster explore --seeds 200 --seed 7                 # random JobSets, invariants on, shrunk findings
  python -m fakecluster --version"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakecluster",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"fakecluster {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="play scenario files or folders and check their expectations",
        description="Play scenarios and check their expectations. Prints PASS|FAIL per run, a report for"
        " each failure and 'N passed, M failed'; the exit status is 0 only if every run passed.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_paths(run)
    _add_selection_options(run)
    _add_seed_options(run)
    _add_output_options(run)
    _add_report_options(run)
    _add_control_options(run)
    _add_limit_options(run)
    run.set_defaults(handler=_run, preload=RUN_MODULES)

    listing = sub.add_parser("list", help="list scenarios with their tags and descriptions")
    _add_paths(listing)
    _add_selection_options(listing)
    listing.add_argument("-v", "--verbose", action="store_true", help="whole descriptions, not one line")
    _add_allow_dir(listing)
    listing.set_defaults(handler=_list)

    validate = sub.add_parser(
        "validate", help="load and check scenarios without playing them, listing every problem"
    )
    _add_paths(validate)
    _add_allow_dir(validate)
    validate.set_defaults(handler=_validate, preload=RUN_MODULES)

    _add_report_commands(sub)
    _add_explore_command(sub)
    return parser


def _add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="scenario files or folders")


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("selection")
    group.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="only scenarios whose path contains these words (case-insensitive; and/or/not, parentheses)",
    )
    group.add_argument("-m", dest="tags", metavar="TAGS", help="only scenarios whose tags match (and/or/not)")


def _add_seed_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("seeds")
    group.add_argument("--seed", type=int, metavar="N", help="play every scenario with seed N")
    group.add_argument(
        "--seeds",
        type=_positive,
        default=1,
        metavar="N",
        help="sweep: play every scenario with N consecutive seeds, from --seed or the file's own seed",
    )


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    volume = group.add_mutually_exclusive_group()
    volume.add_argument("-q", "--quiet", action="store_true", help="print failures and the closing line only")
    volume.add_argument("-v", "--verbose", action="store_true", help="also print each run's milestone times")
    group.add_argument("--json", type=Path, metavar="FILE", help="write one JSON record per run to FILE")
    group.add_argument("--junit-xml", type=Path, metavar="FILE", help="write a JUnit XML report to FILE")


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("report")
    group.add_argument("--report", type=Path, metavar="DIR",
                       help="write an HTML timeline per scenario and an index.html into DIR")
    group.add_argument("--trace", type=Path, metavar="FILE",
                       help="write every scenario's trace to FILE as JSON lines (docs/trace-format.md)")


def _add_control_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("control")
    group.add_argument("-x", "--exitfirst", action="store_true", help="stop after the first failed run")
    group.add_argument("--shuffle-ties", action="store_true",
                       help="run same-instant events in a seeded random order (cluster.shuffleTies)")
    group.add_argument("--shuffle-seed", type=int, metavar="N", default=None,
                       help="the shuffle's seed (default 0; implies --shuffle-ties)")
    group.add_argument("--no-invariants", dest="invariants", action="store_const", const=False, default=None,
                       help="check no invariant (cluster.invariants: false), to time the cluster alone")
    group.add_argument("-n", "--workers", type=_workers, metavar="N", default=1,
                       help="play the runs on N worker processes ('auto': one per core; default 1, this"
                            " process); the output is the same, in the same order")


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The bounds of :mod:`fakecluster.scenario.limits`; each overrides the scenario's ``cluster.budget``."""
    group = parser.add_argument_group("limits")
    group.add_argument("--max-events", type=_positive_int, metavar="N",
                       help="clock events one scenario may run (default 2000000)")
    group.add_argument("--max-wall-seconds", type=_positive_seconds, metavar="S",
                       help="wall-clock seconds one scenario may take (default 120)")
    group.add_argument("--max-pods", type=_positive_int, metavar="N",
                       help="pods one scenario's manifests may ask for (default 150000)")
    _add_allow_dir(group)


def _add_allow_dir(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument("--allow-dir", type=Path, action="append", default=[], metavar="DIR",
                        help="let {file:} references read from DIR too (repeatable)")


def _add_report_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    diff = sub.add_parser("diff", help="first divergence and differing milestones of two trace files")
    diff.add_argument("a", type=Path, metavar="A.jsonl")
    diff.add_argument("b", type=Path, metavar="B.jsonl")
    diff.set_defaults(handler=_diff)
    export = sub.add_parser("export", help="write a scenario as manifests + KWOK stages + a check script")
    export.add_argument("scenario", type=Path, metavar="SCENARIO")
    export.add_argument("directory", type=Path, metavar="DIR")
    export.set_defaults(handler=_export)


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


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _workers(text: str) -> int:
    if text == "auto":
        from fakecluster.workers import available_cores

        return available_cores()
    try:
        return _positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1 or 'auto', got {text!r}") \
            from None


def _version() -> str:
    from fakecluster._version import __version__

    return __version__


# ---------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script and ``-m`` exit with it)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        if getattr(args, "preload", ()):
            import_for_good(args.preload)
        try:
            status = handler(args)
            sys.stdout.flush()  # a reader that left early shows up here, not as a warning at exit
            return status
        except _UsageError as err:  # returned, not raised: callers of main() get the status
            print(f"fakecluster: error: {err}", file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader (`| head`) is gone: send the rest of our output nowhere and exit quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return 0


RUN_MODULES = ("fakecluster.scenario.runner", "fakecluster.scenario.discovery",
               "fakecluster.scenario.selection", "fakecluster.progress", "fakecluster.report.cli",
               "fakecluster.api.discovery")
"""What ``run`` imports before its first scenario (the workload plugin too: see :func:`import_for_good`;
``validate``, which loads the same, and ``benchmarks/scale.py`` start the same way, so its runs pay
what ``fakecluster run`` pays)."""


def import_for_good(modules: Sequence[str] = RUN_MODULES) -> None:
    """Import a command's modules (and the default workload plugin) with the cyclic garbage collector
    paused, then freeze every object there is (``gc.freeze``): the classes, pydantic schemas and tables
    an import builds live as long as the process, so no collection need scan them again, nor the one
    Python runs at exit. Paused, the collector does not rescan the growing heap during the imports
    either. A one-scenario run: 0.44 -> 0.33 s. Only for a process this command line owns; the pytest
    plugin does the like only for a session of scenario files (``pytest_collection_finish``).

    The wall-clock freeze is started here too, which the first run would do: starting it walks every
    loaded module's namespace (:func:`fakecluster.wallclock_freeze._clock_attributes`); here that is
    done once, frozen with the rest, and before ``--workers`` forks, so no worker does it again (a
    worker's first run took 80 ms longer than its second)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        for name in modules:
            importlib.import_module(name)
        from fakecluster import wallclock_freeze
        from fakecluster.workload_plugin import load_plugin

        with contextlib.suppress(LookupError):  # reported by the scenario that needs it, as before
            load_plugin()
        wallclock_freeze.freeze_once()
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


class _UsageError(Exception):
    """A bad option value found after parsing (an unreadable ``-k`` expression)."""


# ---------------------------------------------------------------- choosing files


def _selected(args: argparse.Namespace) -> tuple[list[Path], list[Path]]:
    """Scenario files under the paths that pass ``-k``/``-m``; and the paths that do not exist."""
    from fakecluster.scenario.discovery import discover, peek
    from fakecluster.scenario.selection import Expression, tag_names

    try:
        keyword = Expression(args.keyword) if args.keyword else None
        tags = Expression(args.tags) if args.tags else None
    except ValueError as err:
        raise _UsageError(f"cannot read the selection expression: {err}") from None
    files, missing = discover(args.paths)
    chosen = []
    for path in files:
        text = str(path).lower()
        if keyword is not None and not keyword.evaluate(lambda word: word.lower() in text):  # noqa: B023
            continue
        if tags is not None:
            data = peek(path)
            raw = data.get("tags") if isinstance(data, dict) else None
            names = tag_names([str(t) for t in raw]) if isinstance(raw, list) else set()
            if not tags.evaluate(names.__contains__):
                continue
        chosen.append(path)
    return chosen, missing


def _report_missing(missing: list[Path]) -> None:
    for path in missing:
        print(f"ERROR {_shown(path)}: no such file or directory", file=sys.stderr)


def _shown(value: object) -> str:
    """Text from the user's files and paths with control characters escaped."""
    from fakecluster.scenario.errors import escape_control

    return escape_control(str(value))


def _limits(args: argparse.Namespace) -> RunLimits:
    from fakecluster.scenario.limits import RunLimits

    return RunLimits(
        max_events=getattr(args, "max_events", None),
        max_wall_seconds=getattr(args, "max_wall_seconds", None),
        max_pods=getattr(args, "max_pods", None),
        allowed_dirs=tuple(args.allow_dir),
    )


# ---------------------------------------------------------------- run


def _run(args: argparse.Namespace) -> int:
    from fakecluster.progress import Progress
    from fakecluster.report.cli import RunSinks
    from fakecluster.scenario.discovery import peek
    from fakecluster.scenario.selection import sweep_seeds
    from fakecluster.workers import RunRequest

    for target in (args.json, args.junit_xml):
        if target is not None and not target.parent.is_dir():
            raise _UsageError(f"cannot write {_shown(target)}: no such directory {_shown(target.parent)}")
    limits = _limits(args)
    files, missing = _selected(args)
    _report_missing(missing)
    plan: list[tuple[Path, int | None, str]] = []
    for path in files:
        data = peek(path) if args.seeds > 1 else None
        own = data.get("seed") if isinstance(data, dict) else None
        for seed in sweep_seeds(own, args.seed, args.seeds):
            plan.append((path, seed, path.stem if args.seeds == 1 else f"{path.stem}[seed={seed}]"))
    sinks = RunSinks(args.report, args.trace, per_seed=args.seeds > 1)
    requests = [RunRequest(path, seed, limits, sinks.wants_lifecycle, _shuffle_seed(args), args.invariants)
                for path, seed, _ in plan]
    progress = Progress(len(plan), enabled=Progress.wanted())
    results: list[tuple[str, ScenarioResult]] = []
    played = _played(requests, [name for _, _, name in plan], args.workers, progress)
    try:
        for (_, _, name), (result, lifecycle) in zip(plan, played, strict=False):  # -x may stop early
            progress.done()
            sinks.add(result, lifecycle)
            result.scenario = None  # the page is written; kept for the summary, ~35 KB each would add up
            results.append((name, result))
            _print_result(progress, result, args)
            if args.exitfirst and not result.passed:
                break
    finally:
        played.close()  # -x, Ctrl-C: the workers end now, runs under way included
        progress.close()
    failed = sum(1 for _, r in results if not r.passed) + len(missing)
    passed = len(results) - (failed - len(missing))
    written = _write_reports(args, results)
    for line in sinks.close():
        print(_shown(line))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and results and written else 1


def _shuffle_seed(args: argparse.Namespace) -> int | None:
    """``--shuffle-ties`` / ``--shuffle-seed N``: the shuffle seed overriding ``cluster.shuffleTies``."""
    if args.shuffle_seed is not None:
        if args.shuffle_seed < 0:
            raise _UsageError("--shuffle-seed must be 0 or more")
        return int(args.shuffle_seed)
    return 0 if args.shuffle_ties else None


def _played(
    requests: list[RunRequest], names: list[str], workers: int, progress: Progress
) -> Generator[Played, None, None]:
    """Each run's result, in plan order: played here one after another (the live line shows each run's
    virtual time), or by ``workers`` processes (:mod:`fakecluster.workers`) when there is more than one
    run or a sweep to split by seed (the live line counts the runs handed back)."""
    from fakecluster.workers import play, play_in_plan_order, sweep_hint

    if workers > 1 and (len(requests) > 1 or sweep_hint(requests[0])):  # a lone sweep: split by seed
        progress.start(f"{workers} workers")
        yield from play_in_plan_order(requests, workers)
        return
    for request, name in zip(requests, names, strict=True):
        progress.start(name)
        yield play(request, progress.update if progress.enabled else None)


def _print_result(progress: Any, result: ScenarioResult, args: argparse.Namespace) -> None:
    if not args.quiet or not result.passed:
        status = "PASS" if result.passed else "FAIL"
        progress.write(
            f"{status}  {_shown(result.path)}  virtual {result.virtual_end:.1f}s  "
            f"wall {result.wall_seconds * 1000:.0f}ms  seed {result.seed}"
        )
    if not result.passed:
        progress.write(_indent(result.report))
    elif not args.quiet and (result.sweep is not None or result.stuck):
        progress.write(_indent(result.report))  # a sweep's figures and histograms; a stuck run's diagnosis
    if result.passed and args.verbose:
        for milestone, when in result.milestones.items():
            progress.write(f"    {'never' if when is None else f'{when:.1f}s':>9}  {milestone}")


def _write_reports(args: argparse.Namespace, results: list[tuple[str, ScenarioResult]]) -> bool:
    """Write the requested report files; False (after a one-line error each) if one cannot be written.
    The JUnit writer is imported only when asked for: its XML library costs a run without it 8 M
    instructions."""

    def junit_xml(path: Path) -> None:
        from fakecluster.junit_xml import write_junit_xml

        write_junit_xml(path, results)

    writers: list[tuple[Path | None, Callable[[Path], object]]] = [
        (args.json, lambda p: p.write_text(json.dumps([r.record() for _, r in results], indent=2) + "\n")),
        (args.junit_xml, junit_xml),
    ]
    ok = True
    for target, write in writers:
        if target is None:
            continue
        try:
            write(target)
        except OSError as err:
            print(f"ERROR cannot write {_shown(target)}: {err.strerror or err}", file=sys.stderr)
            ok = False
    return ok


def _indent(text: str) -> str:
    """Indent a report; each line with control characters escaped (a scenario's name could hold ANSI
    escapes that repaint the terminal)."""
    from fakecluster.scenario.errors import escape_control

    return "\n".join("    " + escape_control(line) for line in text.splitlines())


# ---------------------------------------------------------------- diff and export


def _add_explore_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``fakecluster explore``: parser and handler are :mod:`fakecluster.explore.command`'s."""
    from fakecluster.explore import command as explore_command

    explore_command.add_parser(sub)
    sub.choices["explore"].set_defaults(handler=_explore)


def _explore(args: argparse.Namespace) -> int:
    from fakecluster.explore import command as explore_command

    return explore_command.run(args)


def _diff(args: argparse.Namespace) -> int:
    from fakecluster.report.cli import run_diff

    return run_diff(args.a, args.b)


def _export(args: argparse.Namespace) -> int:
    from fakecluster.report.cli import run_export

    return run_export(args.scenario, args.directory)


# ---------------------------------------------------------------- list and validate


def _list(args: argparse.Namespace) -> int:
    from fakecluster.scenario.errors import ScenarioError
    from fakecluster.scenario.loader import load_scenario

    files, missing = _selected(args)
    _report_missing(missing)
    broken = 0
    for path in files:
        try:
            scenario = load_scenario(path, allowed_dirs=tuple(args.allow_dir))
        except ScenarioError as err:
            broken += 1
            print(f"{_shown(path)}  (cannot load: {_shown(str(err).splitlines()[0])})")
            continue
        tags = f"[{', '.join(scenario.tags)}]" if scenario.tags else "[]"
        description = " ".join(scenario.description.split())
        if not args.verbose and len(description) > _SHORT_DESCRIPTION:
            description = description[: _SHORT_DESCRIPTION - 3].rstrip() + "..."
        print(_shown(f"{path}  {tags}  {description}".rstrip()))
    print(f"{len(files)} scenario{'s' if len(files) != 1 else ''}" + (f", {broken} broken" if broken else ""))
    return 1 if broken or missing else 0


def _validate(args: argparse.Namespace) -> int:
    from fakecluster.scenario.errors import MAX_PROBLEMS
    from fakecluster.scenario.runner import validate_scenario

    args.keyword = args.tags = None
    files, missing = _selected(args)
    _report_missing(missing)
    invalid = 0
    for path in files:
        problems = validate_scenario(path, limits=_limits(args))
        if not problems:
            print(f"OK       {_shown(path)}")
            continue
        invalid += 1
        print(f"INVALID  {_shown(path)}  ({len(problems)} problem{'s' if len(problems) != 1 else ''})")
        for problem in problems[:MAX_PROBLEMS]:
            print(f"  {_shown(problem)}")
        if len(problems) > MAX_PROBLEMS:
            print(f"  ... and {len(problems) - MAX_PROBLEMS} more problems")
    print(f"{len(files) - invalid} valid, {invalid} invalid")
    return 1 if invalid or missing or not files else 0
