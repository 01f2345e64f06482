"""``benchmarks/floor.py``: the floor model does the work the performance issue counts per pod (seven
copy-on-write writes, each delivered to eight handlers; five timers) and nothing it does not, and it runs
as a whole process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.test_network_cost_benchmark import BENCHMARKS, _load


def test_each_pod_is_written_seven_times_and_each_write_reaches_eight_handlers() -> None:
    floor = _load("floor")
    seen: list[tuple[str, str, Any]] = []
    events: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []

    def record(event: tuple[str, dict[str, Any], dict[str, Any] | None]) -> None:
        etype, new, _old = event
        seen.append((etype, new["metadata"]["name"], new["metadata"]["resourceVersion"]))
        events.append(event)

    _seconds, store = floor.play(3, handlers=(record,) * 8)
    assert len(seen) == 3 * 7 * 8
    versions = {(name, rv) for _, name, rv in seen}
    assert len(versions) == 3 * 7  # 21 writes, each with its own resourceVersion
    assert sorted(int(rv) for _, rv in versions) == list(range(1, 22))
    for name in ("worker-0", "worker-1", "worker-2"):
        pod = store[name]
        assert pod["spec"]["nodeName"] == "node-0"
        assert pod["status"]["phase"] == "Succeeded"
        assert pod["metadata"]["finalizers"] == []
    assert [etype for etype, name, _ in seen if name == "worker-0"][::8] == ["ADDED"] + ["MODIFIED"] * 6
    # Copy-on-write: a write shares every part it does not change with the version before it.
    _etype, last, before = events[-1]
    assert before is not None and last["status"] is before["status"] and last["spec"] is before["spec"]
    assert last["metadata"] is not before["metadata"]


def test_the_floor_runs_as_a_whole_process() -> None:
    out = subprocess.run([sys.executable, str(BENCHMARKS / "floor.py"), "--pods", "200", "--repeat", "1"],
                         capture_output=True, text=True, check=True, cwd=Path(BENCHMARKS).parent).stdout
    assert out.startswith("floor: 200 pods, event work median ")
    assert "µs/pod" in out


def test_whole_process_puts_each_case_beside_the_start_up_and_the_floor() -> None:
    argv = [sys.executable, str(BENCHMARKS / "whole_process.py"), "--runs", "1", "--cases", "1k", "--floor"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True,
                         cwd=Path(BENCHMARKS).parent).stdout.splitlines()
    header, case, start_up = out
    assert "event us/pod" in header and "x floor" in header
    assert start_up.split()[0] == "start-up" and float(start_up.split()[1]) > 0
    fields = case.split()
    assert fields[0] == "1k" and fields[-1] == "ok"
    event_us_per_pod, times_floor = float(fields[-3]), float(fields[-2])
    wall, start = float(fields[3]), float(start_up.split()[1])
    # (wall - start-up) per pod, from the unrounded medians: within the rounding of the printed seconds
    assert abs(event_us_per_pod - (wall - start) / 1000 * 1e6) <= 10.1
    assert times_floor > 1  # a real run does more than the floor model


def test_the_start_up_process_starts_as_a_run_does_and_exits_cleanly() -> None:
    """It once got ``--sizes 0``, which ``scale.py`` came to refuse: the process then ended with a usage
    error, its 0.05 s was printed as the start-up, and the rounds still read ``ok``."""
    whole_process = _load("whole_process")
    sample = whole_process.run_once(whole_process.START_UP)
    assert sample.ok
