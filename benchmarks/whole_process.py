"""Whole-process scale benchmark: each case is one fresh ``python benchmarks/scale.py`` process, timed
from outside (interpreter start, imports, the run, and everything after it, garbage collection and exit
included), as a user running ``fakecluster run`` pays it.

Run on demand (never in CI): ``python benchmarks/whole_process.py [--runs 3] [--cases 10k 100k ...]
[--interleave] [--floor]``.
Prints, per case, the median (and min-max) wall seconds of ``--runs`` runs, user+sys CPU seconds,
pods per wall second, wall microseconds per pod and the peak resident set size (the largest of the
runs, from ``wait4``'s rusage). The processes run as a user's do, with cached bytecode (an untimed
warm-up run writes it first; ``PYTHONDONTWRITEBYTECODE`` is not passed on). ``--floor`` adds each
case's event work (its wall time less a start-up-only process's) per pod and as a multiple of the floor
model's for as many pods (``floor.py``, its fastest of three rounds): a start-up process, the case and
the floor are taken one after the other in each round, and the medians are of the rounds' figures.

Cases (driver-first JobSets, InOrder, a driver Job and worker Jobs):

==========  =======  ============  ==========================================================
case        pods     pods per Job  what it measures
==========  =======  ============  ==========================================================
1k          1,000    500           the small end of the linearity check
10k         10,000   500           the headline figure
100k        100,000  500           the large end; memory
20k-201     20,000   100           201 Jobs: per-Job costs (JobSet reconcile walking its Jobs)
20k-11      20,000   2,000         the same pods in 11 Jobs: ``20k-201``'s like-for-like reference
2k-501      2,000    4             many small Jobs (a TPU multi-slice shape): per-Job costs dominate
2k-5        2,000    500           the same pods in 5 Jobs: ``2k-501``'s like-for-like reference
10k-conn    10,000   500           every worker runs a connect program (DNS, TCP, EndpointSlices)
10k-inv     10,000   500           the headline case with the invariants checked, as scenario runs do
1k-inv      1,000    500           the small case with the invariants checked
10k-c-inv   10,000   500           the connect case with the invariants (and the network one) checked
10k-shuf    10,000   500           the headline case with same-instant events shuffled (shuffleTies)
10k-when    10,000   500           the headline case with a ``when: all workers pods Running`` action
==========  =======  ============  ==========================================================
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

from arguments import at_least_one

SCALE = Path(__file__).with_name("scale.py")


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    pods: int
    pods_per_job: int
    extra: tuple[str, ...] = ()

    @property
    def jobs(self) -> int:
        return max(self.pods // self.pods_per_job, 1) + 1


CASES = {
    c.name: c
    for c in (
        Case("1k", 1_000, 500),
        Case("10k", 10_000, 500),
        Case("100k", 100_000, 500),
        Case("20k-201", 20_000, 100),
        Case("20k-11", 20_000, 2_000),
        Case("2k-501", 2_000, 4),
        Case("2k-5", 2_000, 500),
        Case("10k-conn", 10_000, 500, ("--variant", "connect")),
        Case("10k-inv", 10_000, 500, ("--invariants",)),
        Case("1k-inv", 1_000, 500, ("--invariants",)),
        Case("10k-c-inv", 10_000, 500, ("--variant", "connect", "--invariants")),
        Case("10k-shuf", 10_000, 500, ("--shuffle-ties",)),
        Case("10k-when", 10_000, 500, ("--variant", "when")),
    )
}


@dataclasses.dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    max_rss_kib: int
    ok: bool
    start_up: float | None = None
    """With ``--floor``: the wall time of a start-up-only process run just before this one."""
    floor: float | None = None
    """With ``--floor``: the floor model's event work for as many pods, timed just after this run."""


def user_environment() -> dict[str, str]:
    """The environment a user's ``fakecluster run`` has: this one without ``PYTHONDONTWRITEBYTECODE``
    (some CI images and sandboxes set it), so imports load cached bytecode instead of compiling every
    module's source in every process; compiling alone cost the 1,000-pod case about 0.1 s."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm_up() -> None:
    """One untimed small run, so the timed ones find the bytecode cache written (a user's second run)."""
    subprocess.run([sys.executable, str(SCALE), "--sizes", "10"], env=user_environment(),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


START_UP = Case("start-up", 0, 1, ("--start-up-only",))
"""Not a run: a process that starts as every case's does (interpreter, imports, freeze) and exits."""


def run_once(case: Case) -> Sample:
    """One process; its wall time from fork to reaping, CPU and peak RSS from ``wait4``.

    The run's own wall-clock budget (the runner's 120 s, a guard against hangs) is lifted to an hour:
    the 100k case took 117 s on a slow day of the shared machine, and a benchmark that fails for
    being slow reports nothing; the time it took is the figure here."""
    run = () if case is START_UP else ("--sizes", str(case.pods), "--pods-per-job", str(case.pods_per_job),
                                       "--max-wall-seconds", "3600")
    argv = [sys.executable, str(SCALE), *run, *case.extra]
    started = time.perf_counter()  # a benchmark harness outside any simulated run: real time is the point
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=user_environment())
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    ok = proc.returncode == 0 and (b" ok" in output or case is START_UP)
    if not ok:
        sys.stderr.write(output.decode(errors="replace"))
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, ok)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=at_least_one, default=3, help="runs per case (the median is reported)")
    parser.add_argument("--cases", nargs="+", choices=list(CASES),
                        default=["1k", "10k", "20k-201", "10k-conn", "10k-inv", "100k"])
    parser.add_argument("--interleave", action="store_true",
                        help="run the cases round-robin (run 1 of each, then run 2 of each, ...) and print "
                             "the table at the end: a drift of the machine's speed then hits every case "
                             "alike, for comparing cases with each other (20k-11 against 20k-201)")
    parser.add_argument("--floor", action="store_true",
                        help="in each round, also time a start-up-only process (imports as a run does, then "
                             "exits) before the case and the floor model for its pods (benchmarks/floor.py, "
                             "in this process) after it; print each case's event work (its wall time less "
                             "the start-up's) per pod and as a multiple of the floor's (round medians)")
    args = parser.parse_args()
    warm_up()
    floor_columns = f" {'event us/pod':>12} {'x floor':>8}" if args.floor else ""
    print(f"{'case':>9} {'pods':>7} {'jobs':>5} {'wall s (min-max)':>22} {'cpu s':>7} {'pods/s':>8} "
          f"{'us/pod':>7} {'peak RSS':>9}{floor_columns}  result")
    cases = list(dict.fromkeys(args.cases))  # each case once

    def measure(case: Case) -> Sample:
        if not args.floor:
            return run_once(case)
        start_up = run_once(START_UP)
        sample = run_once(case)
        # A start-up process that failed measured nothing: the round fails with it.
        return dataclasses.replace(sample, ok=sample.ok and start_up.ok, start_up=start_up.wall,
                                   floor=floor_seconds(case.pods))

    interleaved: dict[str, list[Sample]] = {name: [] for name in cases}
    if args.interleave:
        for _ in range(args.runs):
            for name in cases:
                interleaved[name].append(measure(CASES[name]))
    start_ups: list[float] = []
    for name in cases:
        case = CASES[name]
        samples = interleaved[name] or [measure(case) for _ in range(args.runs)]
        walls = [s.wall for s in samples]
        wall = statistics.median(walls)
        cpu = statistics.median(s.cpu for s in samples)
        rss = max(s.max_rss_kib for s in samples) / 1024
        result = "ok" if all(s.ok for s in samples) else "FAILED"
        floor = ""
        if args.floor:
            # Per round (start-up, case, floor taken one after the other), then the median: a drift of
            # the machine's speed between rounds moves the seconds, far less the ratio.
            events = [s.wall - s.start_up for s in samples if s.start_up is not None]
            ratios = [(s.wall - s.start_up) / s.floor for s in samples
                      if s.start_up is not None and s.floor is not None]
            start_ups += [s.start_up for s in samples if s.start_up is not None]
            floor = f" {statistics.median(events) / case.pods * 1e6:>12.1f} {statistics.median(ratios):>8.1f}"
        print(f"{name:>9} {case.pods:>7} {case.jobs:>5} {wall:>8.2f} ({min(walls):.2f}-{max(walls):.2f}) "
              f"{cpu:>7.2f} {case.pods / wall:>8.0f} {wall / case.pods * 1e6:>7.1f} {rss:>7.0f}MB"
              f"{floor}  {result}", flush=True)
    if start_ups:
        print(f"{'start-up':>9} {'':>7} {'':>5} {statistics.median(start_ups):>8.2f} "
              f"({min(start_ups):.2f}-{max(start_ups):.2f})  the median of the start-up-only processes, one "
              "before each run", flush=True)
    return 0


@functools.cache
def _floor_model() -> ModuleType:
    """``benchmarks/floor.py``, loaded once (the benchmarks folder is not a package)."""
    spec = importlib.util.spec_from_file_location("_floor", Path(__file__).with_name("floor.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floor_seconds(pods: int) -> float:
    """The event work of the floor model for ``pods`` pods, in this process: the fastest of three rounds,
    since the model's work is fixed and a busy moment only ever adds to it (the cases' figures are whole
    processes, which include what a user waits for)."""
    play = _floor_model().play
    return min(play(pods)[0] for _ in range(3))


if __name__ == "__main__":
    sys.exit(main())
