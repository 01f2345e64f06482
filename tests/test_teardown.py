"""A finished run leaves no cyclic garbage: its cluster is taken apart (``Cluster.close``), so the run's
objects are freed by reference counting at once instead of by a full cyclic collection that walks every
live object of the process (pytest and campaigns run many clusters in one process)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from scenario_files import jobset_object, rjob_object

from fakecluster.scenario.runner import run_scenario
from fakecluster.session import FakeCluster

SCENARIO = Path(__file__).parents[1] / "scenarios" / "driver-first" / "ray-head-first-inorder.yaml"
JOBSET = jobset_object(rjob_object(replicas=2, parallelism=2, completions=2, pod_spec={
    "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "5"]}]}))


def _garbage_after(action: object) -> int:
    """How many objects a full collection finds unreachable after ``action()`` (garbage from before
    is collected first)."""
    action()  # once first: one-time garbage (plugin entry points, caches) is not the run's
    gc.collect()
    gc.disable()  # nothing collects behind our back while the run builds its graph
    try:
        assert callable(action)
        result = action()
        found = gc.collect()
    finally:
        gc.enable()
    del result
    return found


def test_a_scenario_run_leaves_no_cyclic_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few leftovers at most (caches, one-off imports): an order of magnitude less than the same run
    leaves when its cluster is not taken apart (the control, with ``close`` doing nothing)."""
    outcome_passed: list[bool] = []

    def run() -> None:
        outcome_passed.append(run_scenario(SCENARIO).passed)

    with_teardown = _garbage_after(run)
    with monkeypatch.context() as patch:
        patch.setattr(FakeCluster, "close", lambda self: None)
        without = _garbage_after(run)
    assert without > 1000
    assert with_teardown * 10 < without, (with_teardown, without)
    assert outcome_passed == [True] * 4


def test_a_closed_fake_cluster_leaves_no_cyclic_garbage_and_what_was_read_stays_valid() -> None:
    read: list[dict[str, object]] = []

    def play() -> None:
        with FakeCluster() as cluster:
            cluster.apply(JOBSET)
            cluster.run(milestone="jobset Completed")
            read.append(cluster.get("JobSet", "js"))

    assert _garbage_after(play) < 500
    conditions = {c["type"]: c["status"] for c in read[-1]["status"]["conditions"]}
    assert conditions["Completed"] == "True"


def test_a_run_with_programs_leaves_no_program_runs_or_pod_workers_in_cycles() -> None:
    """A program run, its pod's network record, its targets and the connections between runs refer to
    each other; ``Cluster.close`` breaks those cycles (``Network.close``), so the runs and the kubelet
    workers they hold go by reference counting, not with the next cyclic collection."""
    scenario = SCENARIO.parents[1] / "network" / "pytorch-rendezvous-all-ranks-reach-rank0.yaml"
    assert run_scenario(scenario).passed  # one-time garbage first
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        outcome = run_scenario(scenario)
        gc.collect()
        kinds = {type(o).__qualname__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert outcome.passed
    assert not kinds & {"PodNet", "ProgramRun", "TargetRun", "Connection", "PodWorker", "ContainerRun"}, kinds
