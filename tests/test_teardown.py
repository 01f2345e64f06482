"""A finished run leaves no cyclic garbage: its cluster is taken apart (``Cluster.close``), so the run's
objects are freed by reference counting at once instead of by a full cyclic collection that walks every
live object of the process (pytest and campaigns run many clusters in one process)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from fakecluster.scenario.runner import run_scenario
from fakecluster.session import FakeCluster

SCENARIO = Path(__file__).parents[1] / "scenarios" / "driver-first" / "ray-head-first-inorder.yaml"
JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "js"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {
        "parallelism": 2, "completions": 2,
        "template": {"spec": {"restartPolicy": "Never",
                              "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "5"]}]}},
    }}}]},
}


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


def test_a_scenario_run_leaves_no_cyclic_garbage() -> None:
    outcome_passed: list[bool] = []

    def run() -> None:
        outcome_passed.append(run_scenario(SCENARIO).passed)

    assert _garbage_after(run) < 100  # without the teardown: thousands (every stored version, timer...)
    assert outcome_passed == [True, True]


def test_a_closed_fake_cluster_leaves_no_cyclic_garbage_and_what_was_read_stays_valid() -> None:
    read: list[dict[str, object]] = []

    def play() -> None:
        with FakeCluster() as cluster:
            cluster.apply(JOBSET)
            cluster.run(milestone="jobset Completed")
            read.append(cluster.get("JobSet", "js"))

    assert _garbage_after(play) < 100
    conditions = {c["type"]: c["status"] for c in read[-1]["status"]["conditions"]}
    assert conditions["Completed"] == "True"


def test_the_teardown_is_what_prevents_the_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: with ``close`` doing nothing, the same run does leave its graph to the collector."""
    monkeypatch.setattr(FakeCluster, "close", lambda self: None)

    def run() -> None:
        run_scenario(SCENARIO)

    assert _garbage_after(run) > 1000
