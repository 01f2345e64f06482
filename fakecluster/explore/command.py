"""The ``explore`` verb of the command line: draw, run, shrink, write reproducers.

``fakecluster explore --seeds 2000 --seed 7 --out scenarios/regressions/`` runs 2,000 drawn scenarios
from base seed 7 on all cores and writes one shrunk scenario file per finding; ``--dask tcp://host:8786``
runs the chunks on a Dask cluster instead; ``--shuffle-ties`` runs every drawn scenario with its
same-instant events in a seeded random order. Same ``--seed`` and ``--seeds``: same findings.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import Executor
from pathlib import Path

from fakecluster import wallclock_freeze as wallclock


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    explore = sub.add_parser(
        "explore",
        help="run random scenarios with every invariant on; shrink failures to scenario files",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    explore.add_argument("--seeds", type=int, default=200, help="how many scenarios to draw (default 200)")
    explore.add_argument("--seed", type=int, default=0, help="base seed of the campaign (default 0)")
    explore.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                         help="stop drawing new chunks after this many wall seconds")
    explore.add_argument("--out", type=Path, default=Path("explore-findings"),
                         help="folder for the shrunk scenario files (default explore-findings/)")
    explore.add_argument("--workers", type=int, default=None,
                         help="local worker processes (default: one per core; 1 runs in this process)")
    explore.add_argument("--dask", metavar="ADDRESS", default=None,
                         help="run on the Dask scheduler at ADDRESS (tcp://host:8786) instead")
    explore.add_argument("--no-shrink", action="store_true", help="report failures as drawn")
    explore.add_argument("--max-findings", type=int, default=None, metavar="N",
                         help="stop after the chunk that brings the findings to N")
    explore.add_argument("--shuffle-ties", action="store_true",
                         help="run same-instant events in a seeded random order (cluster.shuffleTies: true)")


def run(args: argparse.Namespace) -> int:
    from fakecluster.explore.campaign import campaign  # here: every command builds the parser alone
    from fakecluster.explore.executors import DaskExecutor, local_executor

    if args.seeds < 1:
        print("fakecluster explore: --seeds must be at least 1", file=sys.stderr)
        return 2
    started = wallclock.real_perf_counter()
    deadline = None
    if args.time_budget is not None:
        budget = float(args.time_budget)

        def deadline() -> bool:
            return wallclock.real_perf_counter() - started > budget

    executor: Executor | None
    if args.dask:
        executor = DaskExecutor(args.dask)
    elif args.workers == 1:
        executor = None
    else:
        executor = local_executor(args.workers)
    try:
        result = campaign(
            args.seeds, base_seed=args.seed, executor=executor, deadline=deadline, shrink=not args.no_shrink,
            max_findings=args.max_findings, shuffle_ties=args.shuffle_ties,
        )
    finally:
        if executor is not None:
            executor.shutdown()
    elapsed = wallclock.real_perf_counter() - started
    for finding, path in zip(result.findings, result.write(args.out), strict=True):
        print(f"FINDING  {finding.signature}  -> {path}")
        print(f"    {finding.failures[0]}")
    rate = result.examples_run / elapsed if elapsed > 0 else 0.0
    # the fingerprint names the campaign (every drawn scenario and its trace): two runs of the same
    # --seed/--seeds on different executors print the same one, which is how a user checks "same findings"
    print(
        f"{result.examples_run} scenarios in {result.chunks_run} chunks, {len(result.findings)} findings, "
        f"fingerprint {result.fingerprint[:16]}, {elapsed:.1f}s wall ({rate:.0f} scenarios/s)"
    )
    return 1 if result.findings else 0
