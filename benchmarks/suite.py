"""The main job as a user runs it: ``fakecluster run scenarios/ -n auto --report DIR``, one whole process
per run (interpreter start, imports, its worker processes, every scenario and sweep seed, the report
pages), timed from outside.

Run on demand (never in CI): ``python benchmarks/suite.py [--runs 3] [--workers N] [PATH ...]`` (default: the
library's ``scenarios/``). Prints the median (and min-max) wall seconds, user+sys CPU seconds and the
peak resident set size of the runs, and the runner's closing line. Processes run with cached bytecode,
as a user's second run does (see ``whole_process.py``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arguments import at_least_one
from whole_process import user_environment

ROOT = Path(__file__).resolve().parents[1]


def run_once(paths: list[str], report: Path, workers: str = "auto") -> tuple[float, float, int, str]:
    """One process: wall seconds, CPU seconds (its workers' included), peak RSS (KiB, the largest of the
    process and its workers) and the runner's last line."""
    argv = [sys.executable, "-m", "fakecluster", "run", *paths, "-q", "-n", workers, "--report", str(report)]
    started = time.perf_counter()  # a benchmark harness outside any simulated run: real time is the point
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=user_environment())
    assert proc.stdout is not None
    output = proc.stdout.read().decode(errors="replace")
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    last = output.strip().splitlines()[-1] if output.strip() else "(no output)"
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, last


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=at_least_one, default=3, help="runs (the median is reported)")
    parser.add_argument("--workers", default="auto",
                        help="fakecluster run -n: worker processes (default auto, as the README's main job;"
                             " 1: the command's own process)")
    parser.add_argument("paths", nargs="*", default=["scenarios/"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_once(args.paths, Path(tmp) / "warm-up", args.workers)  # writes the bytecode cache; not timed
        samples = [run_once(args.paths, Path(tmp) / f"report-{i}", args.workers) for i in range(args.runs)]
    walls = [s[0] for s in samples]
    print(f"wall {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}), "
          f"cpu {statistics.median(s[1] for s in samples):.2f} s, "
          f"peak RSS {max(s[2] for s in samples) / 1024:.0f} MB, {args.runs} runs: {samples[-1][3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
