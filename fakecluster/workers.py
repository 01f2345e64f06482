"""``fakecluster run --workers N``: a plan's runs played on N worker processes, handed back in plan order.

A run is a plain function of its file, seed and options (:func:`play`): nothing it does depends on the
process that plays it, so a run played on a worker has the trace, digest, verdict and report page it has
in the command's own process, and the output is the same line for line. Only the wall time changes. The
workers are forked from the command's process once its modules are imported (:func:`process_pool`), so
each starts without importing the cluster again; each run is a single-threaded play in one worker, as
in the command's own process (no threads in a run).

Runs are *started* longest first (a sweep before single runs: :func:`cost_hint`, which orders and
nothing else) and *handed back* in plan order, so the report, ``--json`` and the printed lines never
depend on which worker finished first. A worker that dies (killed for memory, a crash in a C library)
loses nothing but its own run: the runs it and its neighbours were playing are played again, one worker
at a time, and the one that kills its worker alone is reported as failed with a one-line error.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fakecluster.scenario.format import Scenario
from fakecluster.scenario.format_v11 import sweep_seeds
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioResult, as_played, run_scenario
from fakecluster.scenario.trace import TraceEvent
from fakecluster.session import ProgressCallback

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["Played", "RunRequest", "cost_hint", "play", "play_in_plan_order", "process_pool", "sweep_hint"]

Played = tuple[ScenarioResult, list[TraceEvent]]
"""A run's result and, for ``--report``, the pod-lifecycle events its page draws (else empty)."""


@dataclass(frozen=True)
class RunRequest:
    """One run of a plan: everything :func:`play` needs, and nothing that cannot be sent to a worker."""

    path: Path
    seed: int | None
    limits: RunLimits
    lifecycle: bool
    """Record the report's pod-lifecycle events (``--report``)."""
    shuffle_ties: int | None
    invariants: bool | None
    sweep_seed: int | None = None
    """Of a sweep, this one seed's own run (:func:`play_in_plan_order` splits a sweep by seed)."""


def play(request: RunRequest, progress: ProgressCallback | None = None) -> Played:
    """Play one run: the runner's ``run_scenario``, or the report's variant that also records the pod
    lifecycle. ``progress`` (the live line) only in the command's own process."""
    if request.lifecycle:
        from fakecluster.report import run_for_report

        return run_for_report(request.path, limits=request.limits, seed=request.seed,
                              shuffle_ties=request.shuffle_ties, invariants=request.invariants,
                              sweep_seed=request.sweep_seed)
    return run_scenario(request.path, seed=request.seed, limits=request.limits, progress=progress,
                        shuffle_ties=request.shuffle_ties, invariants=request.invariants,
                        sweep_seed=request.sweep_seed), []


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes: forked on Linux (a worker starts with the parent's imports), with
    the platform's own start method elsewhere (macOS spawns: forking there can break system libraries).
    Workers ignore SIGINT: a Ctrl-C at the terminal reaches the whole process group, and it is the
    command's process that answers it (ending the workers) and says ``interrupted``, not every worker
    with a traceback.

    The pool's modules (multiprocessing, concurrent.futures: some 40 M instructions) are imported here,
    not with this module: a run on one process, the usual, never needs them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_ignore_interrupts)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def available_cores() -> int:
    """The processors this process may run on (its affinity mask where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


_SWEEP = re.compile(r"^sweep\s*:", re.MULTILINE)
SWEEP_WEIGHT = 20
"""How many single runs a sweep counts as when ordering starts (a library sweep has 20 seeds)."""


def _look(path: Path) -> tuple[int, bool]:
    """The file's size, and whether it looks like a sweep (a top-level ``sweep:`` key); (0, False) if it
    cannot be read (its run fails at once, wherever it is played)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0, False
    return len(text), _SWEEP.search(text) is not None


def sweep_hint(request: RunRequest) -> bool:
    """Whether the file looks like a sweep: worth splitting by seed. A look at the text only;
    :func:`play_in_plan_order` loads it to be sure."""
    return _look(request.path)[1]


def cost_hint(request: RunRequest) -> int:
    """A rough cost of a run, for starting the long ones first: the file's size, times
    :data:`SWEEP_WEIGHT` for a sweep. Only the order runs start in depends on it, never a result."""
    size, sweep = _look(request.path)
    return size * (SWEEP_WEIGHT if sweep else 1)


def _seed_of(request: RunRequest) -> int:
    for seed in (request.sweep_seed, request.seed):
        if seed is not None:
            return seed
    return 0


def _failed(request: RunRequest, line: str) -> ScenarioResult:
    """A failed result for ``request`` that says ``line`` (the worker's own result never came back)."""
    return ScenarioResult(request.path, request.path.stem, _seed_of(request), False, [line], line)


def _died(request: RunRequest) -> ScenarioResult:
    return _failed(request, f"{request.path}: the worker process playing this run died (killed, or a crash"
                            f" outside Python); rerun it alone: fakecluster run {request.path}")


def _sweep_played(request: RunRequest) -> Scenario | None:
    """The sweep ``request`` plays, loaded here to be split by seed; None for anything else, a file
    that does not load included (its run, played whole, says why)."""
    if request.sweep_seed is not None or not sweep_hint(request):
        return None
    try:
        scenario = as_played(load_scenario(request.path, allowed_dirs=request.limits.allowed_dirs),
                             request.seed, request.shuffle_ties)
    except Exception:  # invalid, or a loader bug: the run, played whole, reports it
        return None
    return scenario if scenario.sweep is not None else None


def play_in_plan_order(
    requests: Sequence[RunRequest], workers: int, *, costs: Sequence[float] | None = None,
    play_one: Callable[[RunRequest], Played] | None = None,
) -> Generator[Played, None, None]:
    """Each request's :func:`play`, yielded in the order of ``requests``, played by ``workers``
    processes; started in decreasing order of ``costs`` (default: :func:`cost_hint`; ties: plan order).
    ``play_one`` (default
    :func:`play`) must be a module-level function: it is sent to the workers by name.

    With fewer runs than workers, a sweep is played seed by seed, each seed on whichever worker is free,
    and its runs are folded into one result here (:func:`~fakecluster.scenario.sweep.fold_sweep`), the
    result one process playing the whole sweep gives. Closing the iterator early (``-x``, Ctrl-C, an
    error in the caller) cancels the runs not yet started and ends the workers at once, runs under way
    included."""
    # Here, not with this module: a plain run on one process never needs it (statistics, the figures'
    # dataclasses: 17 M instructions); imported before the pool forks, every worker starts with it.
    from fakecluster.scenario.sweep import fold_sweep

    costs = costs if costs is not None else [cost_hint(r) for r in requests]
    # Split only with fewer runs than workers: a seed played apart loads the file again (a few ms), which
    # for a plan of many runs, the workers busy anyway, costs more than it spreads (the library suite on
    # 2 cores: 1.40 times as fast as one process split, 1.60 unsplit).
    split = len(requests) < workers
    jobs: list[tuple[int, RunRequest, float]] = []  # (plan index, run, cost), in plan order
    sweeps: dict[int, tuple[Scenario, int]] = {}  # plan index -> (the sweep, how many seeds)
    for i, request in enumerate(requests):
        sweep = _sweep_played(request) if split else None
        if sweep is None:
            jobs.append((i, request, costs[i]))
            continue
        seeds = sweep_seeds(sweep.seed, sweep.sweep)
        sweeps[i] = (sweep, len(seeds))
        for n, seed in enumerate(seeds):  # the report draws the first seed's pod lifecycle only
            member = replace(request, sweep_seed=seed, lifecycle=request.lifecycle and n == 0)
            jobs.append((i, member, costs[i] / len(seeds)))
    members: list[Played] = []
    played_jobs = _play_jobs([r for _, r, _ in jobs], workers, [c for _, _, c in jobs], play_one or play)
    try:
        for (i, _, _), played in zip(jobs, played_jobs, strict=True):
            if i not in sweeps:
                yield played
                continue
            members.append(played)
            sweep, count = sweeps[i]
            if len(members) == count:
                yield fold_sweep(sweep, requests[i].path, [r for r, _ in members]), members[0][1]
                members = []
    finally:
        played_jobs.close()


def _play_jobs(
    requests: Sequence[RunRequest], workers: int, costs: Sequence[float],
    play_one: Callable[[RunRequest], Played],
) -> Generator[Played, None, None]:
    """Each run's result in the order of ``requests``, started longest first on ``workers`` processes;
    after a worker died, the runs not yet handed back again, one worker at a time."""
    from concurrent.futures.process import BrokenProcessPool  # with the pool (see process_pool)

    start = 0  # the requests before this one have been yielded
    size = workers
    while start < len(requests):
        pool = process_pool(size)
        finished = False
        try:
            futures: dict[int, Future[Played]] = {}
            for i in sorted(range(start, len(requests)), key=lambda i: (-costs[i], i)):
                futures[i] = pool.submit(play_one, requests[i])
            for i in range(start, len(requests)):
                try:
                    played = futures[i].result()
                except BrokenProcessPool:
                    if size == 1:  # alone on its worker: this run is the one that killed it
                        start = i + 1
                        yield _died(requests[i]), []
                    size = 1  # the runs not yet handed back, again, one worker at a time
                    break
                except Exception as exc:  # the result could not come back (a fakecluster bug)
                    played = _not_returned(requests[i], exc), []
                start = i + 1
                yield played
            finished = True
        finally:
            # Every run handed back: the caller that stops at the last result without asking for one
            # more (the CLI's ``zip`` with the plan) closes this generator at its last ``yield``; the
            # workers are idle then, and are shut down as after a finished loop.
            _end(pool, wait=finished or start >= len(requests))


def _not_returned(request: RunRequest, exc: Exception) -> ScenarioResult:
    detail = " ".join(str(exc).split())[:200]
    return _failed(request, f"{request.path}: internal error while handing the result back from its worker:"
                            f" {type(exc).__name__}: {detail} -- a fakecluster bug: please report it with"
                            f" this file")


def _end(pool: ProcessPoolExecutor, *, wait: bool) -> None:
    """Shut ``pool`` down: its idle workers when every run came back (``wait``), else at once, ending
    the runs still under way (nothing waits for them any more)."""
    if wait:
        pool.shutdown(wait=True)
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # public only from 3.14 on
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join()
    # The pool's manager thread sees its workers gone, closes its wake-up pipe and ends. Left running,
    # it races the interpreter's exit hook, which writes to that pipe: on 3.11 the write can find the
    # pipe just closed and print an "OSError: Bad file descriptor" traceback on stderr (the hook joins
    # the thread anyway, so waiting here costs nothing more).
    if manager is not None:
        manager.join()
