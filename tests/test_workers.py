"""``fakecluster run --workers N`` (:mod:`fakecluster.workers`): the same output as one process, in plan
order, whatever finishes first; a worker that dies loses only its own run; ``-x`` and Ctrl-C end the
workers at once."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import fakecluster.workers as workers_module
from fakecluster.cli import _workers
from fakecluster.scenario.limits import RunLimits
from fakecluster.workers import Played, RunRequest, cost_hint, play, play_in_plan_order, process_pool
from tests.test_cli_usability import interruptible, run_on_a_terminal, write

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "scenarios"
CHOSEN = (
    "driver-first/ray-head-first-inorder.yaml",
    "driver-first/spark-driver-first.yaml",
    "network/flux-study/per-packet-path-connect-timeout-10s.yaml",  # a 20-seed sweep
    "depends-on/initializer-then-trainer-complete.yaml",
    "failure-policy",
)
_WALL = re.compile(r"wall \d+ ?ms|<td class=\"num\">\d+ ms</td>")
"""A run's wall time, as the printed line and the report pages show it: the one thing that differs."""


def _suite(tmp_path: Path) -> Path:
    """Library scenarios (a sweep among them), one that fails and one that does not load."""
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in CHOSEN:
        source = LIBRARY / name
        if source.is_dir():
            shutil.copytree(source, folder / source.name)
        else:
            shutil.copy(source, folder / source.name)
    failing = (LIBRARY / CHOSEN[0]).read_text().replace("expect:\n", "expect:\n  - happens: jobset Failed\n")
    (folder / "b-fails.yaml").write_text(failing)
    (folder / "c-broken.yaml").write_text("name: broken\nseed: 1\nuntil: [oops\n")
    return folder


def _fakecluster(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fakecluster", *args], check=False, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _records(path: Path) -> list[dict[str, object]]:
    records = json.loads(path.read_text())
    for record in records:
        record.pop("wallSeconds")
    return records


def test_the_output_with_workers_is_the_output_of_one_process(tmp_path: Path) -> None:
    """Printed lines, ``--json`` records (every digest among them) and report pages are the same with
    2 workers as in one process, in the same order; only wall times differ."""
    suite = _suite(tmp_path)
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        out.mkdir()
        proc = _fakecluster("run", str(suite), "-v", "--json", str(out / "runs.json"), "--report",
                            str(out / "report"), "-n", workers, cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr  # the failing and the broken file
        outputs[workers] = (_WALL.sub("wall", proc.stdout.replace(str(out), "OUT")), proc.stderr)
    assert outputs["1"] == outputs["2"]
    lines = outputs["1"][0]
    assert "FAIL  " in lines and "b-fails.yaml" in lines and "c-broken.yaml" in lines
    assert " passed, 2 failed" in lines
    one, two = _records(tmp_path / "w1/runs.json"), _records(tmp_path / "w2/runs.json")
    assert one == two
    sweeps = [r for r in one if "digests" in r]  # the sweep's record, with every seed's digest
    assert len(one) >= 8 and len(sweeps) == 1 and len(sweeps[0]["digests"]) == 20  # type: ignore[arg-type]
    pages = sorted(p.relative_to(tmp_path / "w1/report") for p in (tmp_path / "w1/report").rglob("*.html"))
    assert len(pages) >= 8
    for page in pages:
        first = _WALL.sub("", (tmp_path / "w1/report" / page).read_text())
        second = _WALL.sub("", (tmp_path / "w2/report" / page).read_text())
        assert first == second, page


def _requests(tmp_path: Path, names: list[str]) -> list[RunRequest]:
    requests = []
    for name in names:
        path = tmp_path / name
        if not path.exists():
            shutil.copy(LIBRARY / CHOSEN[0], path)
        requests.append(RunRequest(path, None, RunLimits(), False, None, None))
    return requests


def test_results_come_back_in_plan_order_whatever_starts_first(tmp_path: Path) -> None:
    requests = _requests(tmp_path, [f"s{i}.yaml" for i in range(5)])
    costs = [0, 1, 2, 3, 4]  # the last starts first
    played = [result.path for result, _ in play_in_plan_order(requests, 2, costs=costs)]
    assert played == [r.path for r in requests]
    alone = [play(r)[0].digest for r in requests]
    assert [result.digest for result, _ in play_in_plan_order(requests, 2)] == alone


def test_a_caller_that_stops_at_the_last_result_lets_the_idle_workers_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI zips the plan with the results and closes the iterator without asking for one more: every
    run is back by then, so the pool is shut down as after a finished loop, not ended at once (which
    terminated idle workers and left the pool's thread racing the interpreter's exit: an
    "OSError: Bad file descriptor" traceback on stderr, now and then)."""
    ends: list[bool] = []
    real_end = workers_module._end

    def recorded_end(pool: ProcessPoolExecutor, *, wait: bool) -> None:
        ends.append(wait)
        real_end(pool, wait=wait)

    monkeypatch.setattr(workers_module, "_end", recorded_end)
    requests = _requests(tmp_path, ["a.yaml", "b.yaml", "c.yaml"])
    played = play_in_plan_order(requests, 2)
    results = [result for _, (result, _) in zip(requests, played, strict=False)]
    played.close()
    assert [r.path for r in results] == [r.path for r in requests]
    assert ends == [True]
    played = play_in_plan_order(requests, 2)
    next(played)
    played.close()  # -x after the first result: the rest is ended at once
    assert ends == [True, False]
    assert [t.name for t in threading.enumerate() if t is not threading.main_thread()
            and "ExecutorManager" in type(t).__name__] == []  # the pool's thread ended with it


def die_on_boom(request: RunRequest) -> Played:
    """Kills its worker when it plays a file named boom.yaml (as a scenario would that a C library or the
    kernel's out-of-memory killer ends); plays anything else."""
    if request.path.name == "boom.yaml":
        os._exit(9)
    return play(request)


def test_a_worker_that_dies_loses_only_its_own_run(tmp_path: Path) -> None:
    requests = _requests(tmp_path, ["a.yaml", "boom.yaml", "b.yaml", "c.yaml", "d.yaml"])
    results = [result for result, _ in play_in_plan_order(requests, 2, play_one=die_on_boom)]
    assert [r.path for r in results] == [r.path for r in requests]
    assert [r.passed for r in results] == [True, False, True, True, True]
    assert results[1].failures == [
        f"{tmp_path / 'boom.yaml'}: the worker process playing this run died (killed, or a crash outside"
        f" Python); rerun it alone: fakecluster run {tmp_path / 'boom.yaml'}"
    ]


def test_a_sweep_is_started_before_single_runs(tmp_path: Path) -> None:
    sweep = LIBRARY / CHOSEN[2]
    single = LIBRARY / CHOSEN[0]
    limits = RunLimits()
    assert cost_hint(RunRequest(sweep, None, limits, False, None, None)) > \
        cost_hint(RunRequest(single, None, limits, False, None, None)) * 5
    assert cost_hint(RunRequest(tmp_path / "missing.yaml", None, limits, False, None, None)) == 0


def test_exitfirst_with_workers_stops_where_one_process_stops(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    one = _fakecluster("run", str(suite), "-x", "-q", cwd=tmp_path)
    two = _fakecluster("run", str(suite), "-x", "-q", "-n", "2", cwd=tmp_path)
    assert one.returncode == two.returncode == 1
    assert _WALL.sub("wall", one.stdout) == _WALL.sub("wall", two.stdout)
    assert one.stdout.count("FAIL  ") == 1


@pytest.mark.parametrize("whole_group", [False, True], ids=["parent", "process-group"])
def test_ctrl_c_with_workers_ends_quietly_and_leaves_no_worker(tmp_path: Path, whole_group: bool) -> None:
    """SIGINT to the command alone (``kill -INT``) or to its whole process group (Ctrl-C at a terminal):
    ``interrupted``, status 130, no traceback, and no worker left running its run."""
    big = write(tmp_path / "big.yaml", pods=3000, by="1h")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakecluster", "run", "-n", "2", *[str(big)] * 20],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=interruptible,  # noqa: PLW1509 -- one signal() call, no lock a thread could hold
    )  # fmt: skip
    time.sleep(3.0)
    if whole_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "interrupted"
    deadline = time.monotonic() + 10  # the host's clock: this test waits for real processes
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)  # anyone left in the command's process group?
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail("a worker outlived the interrupted command")


@pytest.mark.parametrize(("value", "message"), [
    ("0", "expected a whole number of at least 1 or 'auto', got '0'"),
    ("two", "expected a whole number of at least 1 or 'auto', got 'two'"),
])
def test_a_bad_workers_value_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    proc = _fakecluster("run", str(LIBRARY / CHOSEN[0]), "-n", value, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == f"fakecluster run: error: argument -n/--workers: {message}"


def test_auto_is_one_worker_per_core_this_process_may_use(tmp_path: Path) -> None:
    assert _workers("auto") == len(os.sched_getaffinity(0))
    proc = _fakecluster("run", str(LIBRARY / CHOSEN[0]), str(LIBRARY / CHOSEN[1]), "-n", "auto", "-q",
                        cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "2 passed, 0 failed"


def test_a_spawned_worker_plays_a_run_as_this_process_does(tmp_path: Path) -> None:
    """macOS and Windows spawn their workers (a fresh interpreter that imports what it is sent by name):
    the request and :func:`play` travel that way too, and the run is the same."""
    request = _requests(tmp_path, ["spawned.yaml"])[0]
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        spawned, _ = pool.submit(play, request).result(timeout=120)
    assert spawned.passed and spawned.digest == play(request)[0].digest


def test_workers_are_forked_on_linux() -> None:
    pool = process_pool(1)
    try:
        context = pool._mp_context
        assert context is not None
        method = context.get_start_method()
    finally:
        pool.shutdown()
    assert method == ("fork" if sys.platform.startswith("linux") else multiprocessing.get_start_method())


def _without_wall(record: dict[str, object]) -> dict[str, object]:
    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "wallSeconds"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(record)  # type: ignore[return-value]


def test_a_sweep_is_played_seed_by_seed_and_folded_as_one_process_folds_it() -> None:
    sweep = LIBRARY / CHOSEN[2]
    request = RunRequest(sweep, None, RunLimits(), False, None, None)
    [(folded, _)] = list(play_in_plan_order([request], 2))
    whole, _ = play(request)
    assert folded.sweep is not None and len(folded.sweep.runs) == 20
    assert _without_wall(folded.record()) == _without_wall(whole.record())
    assert folded.report == whole.report and folded.digest == whole.digest


def die_on_seed_1003(request: RunRequest) -> Played:
    """Kills its worker when it plays seed 1003 of a sweep."""
    if request.sweep_seed == 1003:
        os._exit(9)
    return play(request)


def test_a_worker_that_dies_on_one_seed_of_a_sweep_fails_that_seed_alone() -> None:
    sweep = LIBRARY / CHOSEN[2]
    request = RunRequest(sweep, None, RunLimits(), False, None, None)
    [(folded, _)] = list(play_in_plan_order([request], 2, play_one=die_on_seed_1003))
    assert not folded.passed
    died = [f for f in folded.failures if "died" in f]
    assert len(died) == 1 and died[0].startswith("seed 1003: ")
    assert folded.sweep is not None
    assert [r.seed for r in folded.sweep.runs if not r.passed] == [1003]


def test_the_live_line_counts_the_runs_the_workers_hand_back(tmp_path: Path) -> None:
    """On a terminal the bar says how many workers play and counts the runs handed back; the result
    lines still go to stdout, untouched by it."""
    paths = [str(write(tmp_path / f"w{i}.yaml", pods=40)) for i in range(3)]
    drawn, stdout = run_on_a_terminal("run", *paths, "-n", "2")
    assert "2 workers" in drawn and "3/3" in drawn, drawn
    assert [line.split()[1] for line in stdout.splitlines() if line.startswith("PASS")] == paths
