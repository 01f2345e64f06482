"""Campaigns on real Dask clusters are exactly the in-process campaign: a ``distributed.LocalCluster``
started by the test, and ``fakecluster explore --dask`` against ``dask scheduler``/``dask worker``
processes.

A Dask worker plays chunks in a pool thread while its event loop runs in another thread of the same
process. These runs used to hang: the process-wide freeze (:mod:`fakecluster.wallclock_freeze`) made the
loop's ``time.monotonic()`` jump (to the frozen instant while the freeze started, to wall seconds while a
chunk played), so the timer that reports "task finished" to the scheduler lay years ahead. The first tests
pin that down without Dask; every wait below has a time-out, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster
from test_explore import MUTATIONS, _mutant

from fakecluster import wallclock_freeze as wallclock
from fakecluster.clock import EPOCH
from fakecluster.explore.campaign import campaign

ROOT = Path(__file__).resolve().parents[1]
WAIT = 60.0
"""Seconds any one wait on a cluster may take before the test fails (a whole test takes a few)."""
SEEDS = 50
"""Two chunks, so each of the two workers plays one."""
MUTATION = "depends-on-ignored"
"""The mutation found (and shrunk) quickly, in both chunks of the campaign."""


@pytest.fixture(scope="module", autouse=True)
def _no_snapshot_checks() -> Iterator[None]:
    """Off, as in test_explore.py: the snapshot guard would make these campaigns minutes. For the whole
    module, because the cluster's worker processes and the dask/CLI subprocesses inherit the environment
    when they start."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("FAKECLUSTER_CHECK_SNAPSHOTS", raising=False)
        yield


CLOCKS_OF_ANOTHER_THREAD = textwrap.dedent(
    """
    import asyncio, sys, threading, time
    from fakecluster.explore.campaign import campaign

    sys.setswitchinterval(1e-5)  # hand the GIL over often: the loop also reads while the freeze starts
    worst = [0.0, 0.0]  # how far time.monotonic() / the loop's clock strayed from the real monotonic clock
    done = threading.Event()

    async def watch() -> None:  # a Dask worker's event loop, reduced to its clock reads
        loop = asyncio.get_running_loop()
        while not done.is_set():
            real = time.clock_gettime(time.CLOCK_MONOTONIC)
            worst[0] = max(worst[0], abs(time.monotonic() - real))
            worst[1] = max(worst[1], abs(loop.time() - real))
            await asyncio.sleep(0)

    watcher = threading.Thread(target=asyncio.run, args=(watch(),))
    watcher.start()
    result = campaign(5, base_seed=1)  # starts the freeze (first run of the process), plays 5 scenarios
    done.set()
    watcher.join()
    print(result.examples_run, *worst)
    """
)


def test_other_threads_keep_the_real_monotonic_clock_while_the_freeze_starts_and_scenarios_play() -> None:
    """In a fresh process (so the freeze starts while the other thread is already reading clocks)."""
    proc = subprocess.run(
        [sys.executable, "-c", CLOCKS_OF_ANOTHER_THREAD], cwd=ROOT, capture_output=True, text=True,
        timeout=WAIT, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    examples, monotonic_off, loop_off = proc.stdout.split()
    assert int(examples) == 5
    assert float(monotonic_off) < 1.0 and float(loop_off) < 1.0, proc.stdout


def test_each_thread_playing_a_scenario_reads_its_own_virtual_instant_and_other_threads_real_time() -> None:
    """Two runs at once in one process (a Dask worker with two threads), and the host thread beside them."""
    seen: dict[str, float] = {}
    both_on = threading.Barrier(3)

    def play(name: str, at: float) -> None:
        with wallclock.virtual_time():
            wallclock.move_to(at)
            both_on.wait(WAIT)
            seen[name] = time.time()
            both_on.wait(WAIT)

    players = [threading.Thread(target=play, args=args) for args in (("a", 5.0), ("b", 7.0))]
    for player in players:
        player.start()
    both_on.wait(WAIT)
    seen["host"] = time.time() - time.clock_gettime(time.CLOCK_REALTIME)
    seen["host monotonic"] = time.monotonic() - time.clock_gettime(time.CLOCK_MONOTONIC)
    both_on.wait(WAIT)
    for player in players:
        player.join(WAIT)
    assert seen["a"] == EPOCH.timestamp() + 5.0 and seen["b"] == EPOCH.timestamp() + 7.0
    assert abs(seen["host"]) < 1.0 and abs(seen["host monotonic"]) < 1.0, seen


class _BoundedFuture(Future[Any]):
    """A future whose ``result()`` gives up after :data:`WAIT` seconds: a stuck cluster fails the test."""

    def __init__(self, inner: Future[Any]) -> None:
        super().__init__()
        self._inner = inner

    def result(self, timeout: float | None = None) -> Any:
        return self._inner.result(timeout=WAIT if timeout is None else timeout)


class _Bounded(Executor):
    """Submits to ``inner``; its futures are :class:`_BoundedFuture` (``campaign`` waits on them)."""

    def __init__(self, inner: Executor) -> None:
        self._inner = inner

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return _BoundedFuture(self._inner.submit(fn, *args, **kwargs))


def _on(client: Client) -> Executor:
    return _Bounded(client.get_executor(pure=False))  # type: ignore[no-untyped-call]


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    """Two worker processes of one thread each (the default spawn start method: fresh interpreters)."""
    with (
        LocalCluster(  # type: ignore[no-untyped-call]  # dask.distributed ships no annotations
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_port=0
        ) as cluster,
        Client(cluster, timeout=WAIT) as dask_client,  # type: ignore[no-untyped-call]
    ):
        dask_client.wait_for_workers(2, timeout=WAIT)
        yield dask_client


def test_a_real_dask_cluster_gives_the_same_campaign_as_one_process(client: Client) -> None:
    """The one-process reference runs here, in this pytest worker, after whatever other tests it ran:
    a campaign is a function of its seed alone (each chunk draws with an empty local-constant pool,
    see ``tests/test_campaign_determinism.py``), so process history must not matter either."""
    serial = campaign(SEEDS, base_seed=9)
    distributed = campaign(SEEDS, base_seed=9, executor=_on(client))
    assert len(client.scheduler_info()["workers"]) == 2
    assert distributed.examples_run == serial.examples_run == SEEDS
    assert distributed.fingerprint == serial.fingerprint
    assert distributed.findings == [] and serial.findings == []


_WORKER_PATCH = pytest.MonkeyPatch()
"""On a Dask worker (which imports this module to run the two functions below): the mutant swap-in."""


def _mutate_this_worker(mutation: str) -> None:
    module, old, new, _ = MUTATIONS[mutation]
    _mutant(_WORKER_PATCH, module, old, new)


def _restore_this_worker() -> None:
    _WORKER_PATCH.undo()


def test_a_mutated_controller_is_caught_on_a_real_dask_cluster_as_in_one_process(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    module, old, new, expected = MUTATIONS[MUTATION]
    _mutant(monkeypatch, module, old, new)
    serial = campaign(SEEDS, base_seed=5, shrink_runs=20)
    client.run(_mutate_this_worker, MUTATION)
    try:
        distributed = campaign(
            SEEDS, base_seed=5, shrink_runs=20, executor=_on(client)
        )
    finally:
        client.run(_restore_this_worker)
    assert serial.findings and all(f.signature.startswith(expected) for f in serial.findings)
    assert distributed.findings == serial.findings  # same chunks, signatures, failures, shrunk scenarios
    assert distributed.fingerprint == serial.fingerprint


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group this test started (a worker's nannies and their worker processes), then
    SIGKILL whatever has not left after a grace period."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def _explore_on_dask(address: str, out: Path) -> str:
    """``fakecluster explore --dask ADDRESS``: the campaign fingerprint it prints."""
    proc = subprocess.run(
        [sys.executable, "-m", "fakecluster", "explore", "--seeds", str(SEEDS), "--seed", "3", "--dask",
         address, "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=WAIT, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.strip().splitlines()[-1]
    assert f"{SEEDS} scenarios in 2 chunks, 0 findings, fingerprint " in summary, proc.stdout
    return summary.split("fingerprint ")[1].split(",")[0]


def _address(scheduler_file: Path, started: list[subprocess.Popen[bytes]], logs: Path) -> str:
    """The scheduler's address, once it has written its file (it chose a free port: ``--port 0``)."""
    give_up = time.monotonic() + WAIT  # host time, outside any run
    while True:
        try:
            return str(json.loads(scheduler_file.read_text())["address"])
        except (OSError, ValueError, KeyError):  # not written yet, or half written
            assert time.monotonic() < give_up, logs.read_text()
            assert all(p.poll() is None for p in started), logs.read_text()
            time.sleep(0.1)


def test_the_command_line_runs_on_dask_scheduler_and_worker_processes(tmp_path: Path) -> None:
    """A scheduler and a worker with two worker processes, as an operator starts them; the in-process
    campaign is played while they start."""
    scheduler_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    logs = tmp_path / "dask.log"
    with logs.open("wb") as log:
        started: list[subprocess.Popen[bytes]] = []
        try:
            started.append(subprocess.Popen(
                [*dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                 "--scheduler-file", str(scheduler_file)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            ))
            started.append(subprocess.Popen(
                [*dask, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "2", "--nthreads",
                 "1", "--no-dashboard", "--local-directory", str(tmp_path / "work"), "--death-timeout",
                 str(int(WAIT))],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            ))
            in_process = campaign(SEEDS, base_seed=3)
            address = _address(scheduler_file, started, logs)
            with Client(address, timeout=WAIT) as watcher:  # type: ignore[no-untyped-call]
                watcher.wait_for_workers(2, timeout=WAIT)
            on_dask = _explore_on_dask(address, tmp_path / "findings")
        finally:
            for proc in reversed(started):
                _stop(proc)
    assert on_dask == in_process.fingerprint[:16]
    assert in_process.findings == [] and not list((tmp_path / "findings").glob("*"))
