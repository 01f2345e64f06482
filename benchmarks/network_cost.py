"""What the network costs: the two cost figures of the network work, as whole processes, pair by pair.

Run on demand (never in CI): ``python benchmarks/network_cost.py [--pairs 5] [--pods 10000]
[--instructions]``. Two comparisons, each of fresh ``python benchmarks/scale.py`` processes run in
turn (A B A B ...), so that a drift of the machine's speed hits both sides of a pair alike:

- **network**: the plain driver-first run against the same run ``--without-network`` (no EndpointSlice
  controller, no DNS indexing: see ``scale.py``). The ratio is what the EndpointSlice controller, its
  slice writes (the API server, the watch fan-out, the trace) and the DNS server cost a scenario whose
  pods are all behind one headless Service, as every JobSet's are.
- **connect**: the run in which every worker's program connects to the driver against the plain run.

Prints, per comparison, the median (min-max) CPU seconds (user+sys, from ``wait4``) of each side and
the median of the per-pair CPU ratios. CPU rather than wall seconds: on a shared machine the time a
process waits for a processor is not its own. ``--instructions`` also counts each side's instructions
once under valgrind (``cachegrind``, no cache simulation): an exact figure, the same from run to run
within a fraction of a percent, for changes too small to see through timing noise (needs ``valgrind``;
about 20 s per 2,000 pods).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from arguments import at_least_one

SCALE = Path(__file__).with_name("scale.py")

COMPARISONS = {
    "network": (("--variant", "plain"), ("--variant", "plain", "--without-network")),
    "connect": (("--variant", "connect"), ("--variant", "plain")),
}
"""Name -> (side A's scale.py arguments, side B's): the ratio is A / B."""


@dataclass(frozen=True)
class Side:
    cpu: list[float]
    instructions: int | None


def environment() -> dict[str, str]:
    """As a user's run: cached bytecode (see ``whole_process.py``), and one hash seed, so that the
    instruction counts of two runs compare exactly."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONHASHSEED"] = "0"
    return env


def scale_argv(pods: int, extra: tuple[str, ...]) -> list[str]:
    return [sys.executable, str(SCALE), "--sizes", str(pods), "--pods-per-job", "500", *extra]


def cpu_seconds(argv: list[str]) -> float:
    """One process's user+sys CPU seconds, from ``wait4``; a run that does not end ``ok`` is an error."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment())
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or b" ok" not in output:
        sys.exit(f"network_cost: {' '.join(argv[1:])} did not pass:\n{output.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def instructions(argv: list[str]) -> int:
    """The instructions one process executes, counted by valgrind's cachegrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/out", *argv,
             "--max-wall-seconds", "36000"],  # valgrind runs some 30x slower than the 120 s budget allows
            capture_output=True, text=True, env=environment(), check=False)
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if out.returncode != 0 or found is None:
        sys.exit(f"network_cost: valgrind failed on {' '.join(argv[1:])}:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def compare(pods: int, pairs: int, count_instructions: bool,
            a: tuple[str, ...], b: tuple[str, ...]) -> tuple[Side, Side, list[float]]:
    argv_a, argv_b = scale_argv(pods, a), scale_argv(pods, b)
    cpu_a: list[float] = []
    cpu_b: list[float] = []
    for _ in range(pairs):
        cpu_a.append(cpu_seconds(argv_a))
        cpu_b.append(cpu_seconds(argv_b))
    ratios = [x / y for x, y in zip(cpu_a, cpu_b, strict=True)]
    ins_a = instructions(argv_a) if count_instructions else None
    ins_b = instructions(argv_b) if count_instructions else None
    return Side(cpu_a, ins_a), Side(cpu_b, ins_b), ratios


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=at_least_one, default=5,
                        help="A/B pairs per comparison (the median is reported)")
    parser.add_argument("--pods", type=at_least_one, default=10_000, help="worker pods (Jobs of 500)")
    parser.add_argument("--comparisons", nargs="+", choices=list(COMPARISONS), default=list(COMPARISONS))
    parser.add_argument("--instructions", action="store_true",
                        help="also count each side's instructions once under valgrind")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind on the PATH")
    subprocess.run(scale_argv(10, ()), env=environment(), stdout=subprocess.DEVNULL, check=False)  # bytecode
    print(f"{'comparison':>10} {'pods':>7} {'A cpu s (min-max)':>20} {'B cpu s (min-max)':>20} "
          f"{'A/B cpu (min-max)':>20}" + (f" {'A instructions':>16} {'B instructions':>16} {'A/B':>6}"
                                           if args.instructions else ""))
    for name in args.comparisons:
        side_a, side_b, ratios = compare(args.pods, args.pairs, args.instructions, *COMPARISONS[name])
        line = (f"{name:>10} {args.pods:>7} {spread(side_a.cpu):>20} {spread(side_b.cpu):>20} "
                f"{spread(ratios):>20}")
        if side_a.instructions is not None and side_b.instructions is not None:
            line += (f" {side_a.instructions:>16,} {side_b.instructions:>16,} "
                     f"{side_a.instructions / side_b.instructions:>6.3f}")
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
