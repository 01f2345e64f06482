"""``sweep``: one scenario over many seeds, and ``distribution`` expectations over the runs.

Run *i* of ``sweep: {seeds: N}`` is exactly the file with ``seed: <seed + i>`` and no ``sweep`` key
(scenario format 1.1): :func:`run_sweep` maps the runner's ``play_seed`` over the seeds, one plain call
per seed with no shared state, so ``executor.map`` of a ``concurrent.futures`` pool could replace the
loop without changing a digest. Ordinary expectations must hold in every run (a failure names its
seed); each ``distribution`` is judged over the runs' measured times.

Figures: ``n``, ``mean``, ``sd`` (population standard deviation), ``min``, ``median`` (mean of the middle
two for an even count), ``max``, and ``modes``: the sorted times split wherever two neighbours are more
than ``modeGap`` apart (default 5 s), each mode with its count, range and median, which is how a bimodal
"fast runs / runs that waited one 30 s connect timeout" shape shows up as two modes; and the slow-mode
offset, the slowest mode's median minus the fastest mode's (0 with one mode), which says how far above
the fast runs the slow ones sit whatever the base time.
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.format_v11 import Bounds, Distribution, sweep_seeds
from fakecluster.workload_plugin import WorkloadPlugin

if TYPE_CHECKING:
    from fakecluster.scenario.runner import ScenarioOutcome

__all__ = [
    "Figures", "Mode", "SweepSummary", "figures", "fold_sweep", "histogram", "run_sweep", "sweep_digest",
]

PlaySeed = Callable[[Scenario, Path | None, WorkloadPlugin, int], "ScenarioOutcome"]
HISTOGRAM_BINS = 10
HISTOGRAM_WIDTH = 40


@dataclass(frozen=True, slots=True)
class Mode:
    count: int
    low: float
    high: float
    median: float

    def __str__(self) -> str:
        span = (
            format_seconds(self.low)
            if self.low == self.high
            else f"{format_seconds(self.low)}-{format_seconds(self.high)}"
        )
        return f"{self.count} in {span}"


@dataclass(frozen=True, slots=True)
class Figures:
    """The figures of one distribution over the runs that measured it."""

    n: int
    mean: float
    sd: float
    min: float
    median: float
    max: float
    modes: tuple[Mode, ...]

    @property
    def slow_mode_offset(self) -> float:
        """The slowest mode's median minus the fastest mode's; 0 with one mode."""
        return self.modes[-1].median - self.modes[0].median

    def value(self, name: str) -> float:
        return float(getattr(self, name))

    def record(self) -> dict[str, Any]:
        return {
            "n": self.n,
            **{k: round(self.value(k), 6) for k in ("mean", "sd", "min", "median", "max")},
            "modes": [
                {"count": m.count, "min": round(m.low, 6), "max": round(m.high, 6),
                 "median": round(m.median, 6)} for m in self.modes
            ],
            "slowModeOffset": round(self.slow_mode_offset, 6),
        }

    def line(self) -> str:
        parts = [f"n {self.n}"] + [
            f"{k} {format_seconds(self.value(k))}" for k in ("mean", "sd", "min", "median", "max")
        ]
        return (
            ", ".join(parts)
            + f"; {len(self.modes)} mode{'s' if len(self.modes) != 1 else ''}: "
            + "; ".join(str(m) for m in self.modes)
            + (f"; slow mode +{format_seconds(self.slow_mode_offset)}" if len(self.modes) > 1 else "")
        )


def figures(values: Sequence[float], mode_gap: float) -> Figures:
    ordered = sorted(values)
    modes: list[Mode] = []
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] - ordered[i - 1] > mode_gap:
            modes.append(Mode(i - start, ordered[start], ordered[i - 1], statistics.median(ordered[start:i])))
            start = i
    return Figures(
        n=len(ordered),
        mean=statistics.fmean(ordered),
        sd=statistics.pstdev(ordered),
        min=ordered[0],
        median=statistics.median(ordered),
        max=ordered[-1],
        modes=tuple(modes),
    )


def histogram(values: Sequence[float], bins: int = HISTOGRAM_BINS, width: int = HISTOGRAM_WIDTH) -> list[str]:
    """A text histogram: equal-width bins from min to max, one ``#`` row each (empty bins shown)."""
    low, high = min(values), max(values)
    if low == high:
        return [f"{format_seconds(low):>9}  {'#' * min(len(values), width)} {len(values)}"]
    step = (high - low) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / step), bins - 1)] += 1
    peak = max(counts)
    lines = []
    for i, count in enumerate(counts):
        bar = "#" * max(1 if count else 0, round(count * width / peak))
        edge = f"{low + i * step:.1f}-{low + (i + 1) * step:.1f}s"
        lines.append(f"{edge:>19}  {bar}{' ' if bar else ''}{count}")
    return lines


def sweep_digest(digests: Sequence[str]) -> str:
    """SHA-256 of the per-seed digests in seed order (format 1.1: the sweep record's ``digest``)."""
    return hashlib.sha256("".join(digests).encode()).hexdigest()


@dataclass(slots=True)
class DistributionResult:
    index: int
    spec: Distribution
    values: dict[int, float | None]
    figures: Figures | None
    failures: list[str] = field(default_factory=list)
    slow_fraction: float | None = None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"expect": self.index, "of": str(self.spec.of)}
        if self.figures is not None:
            out.update(self.figures.record())
        if self.slow_fraction is not None and self.spec.slow is not None:
            out["slow"] = {"above": self.spec.slow.above, "fraction": round(self.slow_fraction, 6)}
        out["values"] = {
            str(seed): (round(v, 6) if v is not None else None) for seed, v in self.values.items()
        }
        out["passed"] = not self.failures
        return out

    def report(self) -> list[str]:
        lines = [f"distribution expect[{self.index}] of {self.spec.of}:"]
        if self.figures is None:
            return [*lines, "  no run measured it"]
        lines.append(f"  {self.figures.line()}")
        if self.slow_fraction is not None and self.spec.slow is not None:
            lines.append(
                f"  slow (above {format_seconds(self.spec.slow.above)}): {self.slow_fraction:.0%} of runs"
            )
        measured = [v for v in self.values.values() if v is not None]
        lines.extend(f"  {row}" for row in histogram(measured))
        return lines


@dataclass(slots=True)
class SweepSummary:
    """Every seed's outcome and each distribution's figures: the ``--json`` additions and the report."""

    seeds: list[int]
    runs: list[ScenarioOutcome]
    distributions: list[DistributionResult]

    def record(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "digests": [r.digest for r in self.runs],
            "runs": [
                {
                    "seed": r.seed,
                    "passed": r.passed,
                    "digest": r.digest,
                    "virtualEnd": round(r.virtual_end, 6),
                    "stuck": r.stuck,
                    "failures": r.failures,
                }
                for r in self.runs
            ],
            "distributions": [d.record() for d in self.distributions],
        }

    def report(self) -> str:
        passed = sum(1 for r in self.runs if r.passed)
        lines = [f"sweep: {len(self.runs)} seeds ({self.seeds[0]}..{self.seeds[-1]}), {passed} passed"]
        for d in self.distributions:
            lines.extend(d.report())
        return "\n".join(lines)


def run_sweep(
    scenario: Scenario, path: Path | None, plugin: WorkloadPlugin, play_seed: PlaySeed
) -> ScenarioOutcome:
    """Play every seed of the sweep and fold the runs into one outcome (one pytest item, one record)."""
    seeds = sweep_seeds(scenario.seed, scenario.sweep)
    first = play_seed(scenario, path, plugin, seeds[0])
    if not first.digest:
        return first  # bad input (or an internal error) found before anything ran: say it once, not per seed
    rest = [play_seed(scenario, path, plugin, seed) for seed in seeds[1:]]
    return fold_sweep(scenario, path, [first, *rest])


def fold_sweep(scenario: Scenario, path: Path | None, runs: list[ScenarioOutcome]) -> ScenarioOutcome:
    """The runs of every seed of the sweep (in seed order) as one outcome: what :func:`run_sweep` returns,
    whichever processes played the runs (``fakecluster run --workers`` plays them apart). A first run
    without a digest is bad input found before anything ran: that run alone, said once."""
    from fakecluster.scenario.runner import ScenarioOutcome

    if not runs[0].digest:
        return runs[0]
    seeds = sweep_seeds(scenario.seed, scenario.sweep)
    for run in runs:
        run.scenario = None  # each seed's copy of the scenario: the folded outcome below carries one
    distributions = [
        judge_distribution(i, exp.distribution, {r.seed: r.measures.get(i) for r in runs})
        for i, exp in enumerate(scenario.expect)
        if exp.distribution is not None
    ]
    failures = [f"seed {r.seed}: {f}" for r in runs for f in r.failures]
    failures += [f for d in distributions for f in d.failures]
    summary = SweepSummary(seeds, runs, distributions)
    failed_reports = [r.report for r in runs if not r.passed][:1]
    report = summary.report()
    if failures:
        head = f"{path or scenario.name}: sweep '{scenario.name}' failed:"
        report = "\n".join([head, *(f"  - {f}" for f in failures), report, *failed_reports])
    return ScenarioOutcome(
        path=path,
        name=scenario.name,
        seed=scenario.seed,
        passed=not failures,
        failures=failures,
        report=report,
        virtual_end=max(r.virtual_end for r in runs),
        wall_seconds=sum(r.wall_seconds for r in runs),
        digest=sweep_digest([r.digest for r in runs]),
        events_run=sum(r.events_run for r in runs),
        stuck=any(r.stuck for r in runs),
        sweep=summary,
        scenario=scenario,
    )


def judge_distribution(index: int, spec: Distribution, values: dict[int, float | None]) -> DistributionResult:
    head = f"expect[{index}] distribution of {spec.of}"
    missing = [seed for seed, v in values.items() if v is None]
    measured = [v for v in values.values() if v is not None]
    result = DistributionResult(index, spec, values, figures(measured, spec.mode_gap) if measured else None)
    if missing:
        result.failures.append(f"{head}: never happened in seed{'s' if len(missing) > 1 else ''} "
                               f"{', '.join(map(str, missing))}")  # fmt: skip
    if result.figures is None:
        return result
    for name, bounds in spec.bounds():
        problem = _bound_problem(result.figures.value(name), bounds, format_seconds)
        if problem:
            result.failures.append(f"{head}: {name} {problem}")
    if spec.modes is not None:
        n_modes = len(result.figures.modes)
        low, high = spec.modes.min, spec.modes.max
        if (low is not None and n_modes < low) or (high is not None and n_modes > high):
            want = f"{low if low is not None else 0}..{high if high is not None else 'any'}"
            modes = "; ".join(str(m) for m in result.figures.modes)
            gap = format_seconds(spec.mode_gap)
            result.failures.append(f"{head}: {n_modes} mode(s) ({modes}), expected {want} (modeGap {gap})")
    if spec.slow_mode_offset is not None:
        problem = _bound_problem(result.figures.slow_mode_offset, spec.slow_mode_offset, format_seconds)
        if problem:
            modes = "; ".join(str(m) for m in result.figures.modes)
            result.failures.append(f"{head}: slow mode offset {problem} (modes: {modes})")
    if spec.slow is not None:
        fraction = sum(1 for v in measured if v > spec.slow.above) / len(measured)
        result.slow_fraction = fraction
        frac = spec.slow.fraction
        if (frac.min is not None and fraction < frac.min) or (frac.max is not None and fraction > frac.max):
            result.failures.append(
                f"{head}: {fraction:.0%} of runs above {format_seconds(spec.slow.above)},"
                f" expected {_range(frac.min, frac.max, lambda f: f'{f:.0%}')}"
            )
    return result


def _bound_problem(value: float, bounds: Bounds, show: Callable[[float], str]) -> str:
    if (bounds.min is not None and value < bounds.min) or (bounds.max is not None and value > bounds.max):
        return f"{show(value)}, expected {_range(bounds.min, bounds.max, show)}"
    return ""


def _range(low: float | None, high: float | None, show: Callable[[float], str]) -> str:
    if low is not None and high is not None:
        return f"{show(low)}..{show(high)}"
    if low is not None:
        return f"at least {show(low)}"
    return f"at most {show(high if high is not None else math.inf)}"
