"""The scenario-format side of faults: ``cluster.faults.conflictRate``, ``cluster.informerLag``,
``restartController``, ``evictPod`` and ``failNode`` — how they load, how bad values are reported, and
what the runner does with them."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_scenarios import after_init, final_jobset_status, play, play_collecting, write
from scenario_files import jobset_manifest

from fakecluster.api.objects import Obj, get_condition
from fakecluster.cluster import Cluster
from fakecluster.scenario.format import RESTARTABLE_CONTROLLERS, UNSUPPORTED_ACTIONS
from fakecluster.scenario.runner import run_scenario
from tests.test_scenario_format import load_error, load_text

JOBSET = (
    "jobset:\n"
    + jobset_manifest(
        "- name: node\n"
        "  replicas: 2\n"
        "  template: {spec: {parallelism: 2, completions: 2, template: {spec: {containers: [{name: c}]}}}}\n",
        name="mpi",
        indent=2,
    )
    + "expect: [{happens: jobset Completed}]\n"
)


# --------------------------------------------------------------------------- loading


def test_faults_and_informer_lag_load_with_their_defaults(tmp_path: Path) -> None:
    plain = load_text(tmp_path, JOBSET)
    assert plain.cluster.faults.conflict_rate == 0.0
    assert plain.cluster.informer_lag == 0.0
    tuned = load_text(tmp_path, "cluster:\n  faults: {conflictRate: 0.1}\n  informerLag: 500ms\n" + JOBSET)
    assert tuned.cluster.faults.conflict_rate == pytest.approx(0.1)
    assert tuned.cluster.informer_lag == pytest.approx(0.5)
    edges = load_text(tmp_path, "cluster:\n  faults: {conflictRate: 1}\n  informerLag: 2\n" + JOBSET)
    assert (edges.cluster.faults.conflict_rate, edges.cluster.informer_lag) == (1.0, 2.0)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("1.5", "must be within [0, 1], got 1.5"),
        ("-0.1", "must be within [0, 1], got -0.1"),
        ("'10%'", "expected a number within [0, 1], got '10%'"),
        ("true", "expected a number within [0, 1], got True"),
        (".nan", "expected a number within [0, 1]"),
    ],
)
def test_a_conflict_rate_outside_0_1_is_an_error_at_its_path(
    tmp_path: Path, value: str, fragment: str
) -> None:
    err = load_error(tmp_path, f"cluster:\n  faults:\n    conflictRate: {value}\n" + JOBSET)
    assert fragment in err.message
    assert (err.field_path, err.line) == ("cluster.faults.conflictRate", 3)


def test_unknown_keys_under_faults_are_errors_with_a_suggestion(tmp_path: Path) -> None:
    err = load_error(tmp_path, "cluster:\n  faults: {conflictrate: 0.1}\n" + JOBSET)
    assert err.field_path == "cluster.faults.conflictrate"
    assert "unknown key 'conflictrate'" in err.message and "did you mean 'conflictRate'" in err.message
    err = load_error(tmp_path, "cluster:\n  informerlag: 1s\n" + JOBSET)
    assert "unknown key 'informerlag'" in err.message and "did you mean 'informerLag'" in err.message


@pytest.mark.parametrize("value", ["-1s", "soon", "true"])
def test_informer_lag_must_be_a_duration(tmp_path: Path, value: str) -> None:
    err = load_error(tmp_path, f"cluster:\n  informerLag: {value}\n" + JOBSET)
    assert (err.field_path, err.line) == ("cluster.informerLag", 2)


def test_restart_controller_takes_jobset_and_names_the_valid_values_otherwise(tmp_path: Path) -> None:
    assert RESTARTABLE_CONTROLLERS == ("jobset",)
    assert "restartController" not in UNSUPPORTED_ACTIONS
    ok = load_text(tmp_path, JOBSET + "actions:\n  - {at: 10s, restartController: jobset}\n")
    assert ok.actions[0].verb == "restartController" and ok.actions[0].restart_controller == "jobset"
    err = load_error(tmp_path, JOBSET + "actions:\n  - at: 10s\n    restartController: job-controller\n")
    assert err.field_path == "actions[0].restartController" and err.line == 13
    assert err.message == "unknown controller 'job-controller': restartController takes one of: jobset"


def test_evict_pod_and_fail_node_are_supported_now(tmp_path: Path) -> None:
    assert UNSUPPORTED_ACTIONS.isdisjoint({"evictPod", "failNode", "restartController"})
    body = JOBSET + (
        'actions:\n  - {at: 10s, evictPod: {pod: "node[0/1]"}}\n  - {at: 20s, failNode: {node: x}}\n'
    )
    loaded = load_text(tmp_path, body)
    assert [a.verb for a in loaded.actions] == ["evictPod", "failNode"]


def test_fail_node_must_name_a_declared_node(tmp_path: Path) -> None:
    nodes = "cluster:\n  nodes:\n    - {name: pool-a, count: 2}\n    - {name: solo}\n"
    load_text(tmp_path, nodes + JOBSET + "actions:\n  - {at: 10s, failNode: {node: pool-a-1}}\n")
    load_text(tmp_path, nodes + JOBSET + "actions:\n  - {at: 10s, failNode: {node: solo}}\n")
    err = load_error(tmp_path, nodes + JOBSET + "actions:\n  - at: 10s\n    failNode: {node: pool-a-2}\n")
    assert err.field_path == "actions[0].failNode.node"
    assert err.message == "no node named 'pool-a-2' (nodes: pool-a-0, pool-a-1, solo)"
    assert err.line == 17


# --------------------------------------------------------------------------- running


def test_zero_rate_and_zero_lag_give_the_digest_of_no_faults_section(tmp_path: Path) -> None:
    plain = run_scenario(write(tmp_path, name="plain"))
    zero = run_scenario(write(tmp_path, "faults: {conflictRate: 0}\ninformerLag: 0s\n", name="zero"))
    lagged = run_scenario(write(tmp_path, "informerLag: 1ms\n", name="lagged"))
    faulty = run_scenario(write(tmp_path, "faults: {conflictRate: 0.3}\n", name="faulty"))
    assert plain.passed and zero.passed and lagged.passed and faulty.passed
    assert zero.digest == plain.digest
    assert zero.events_run == plain.events_run
    assert lagged.digest != plain.digest  # so the comparison above can tell a difference
    assert faulty.digest != plain.digest


def test_restart_in_the_middle_of_an_inorder_startup_converges_to_the_same_status(tmp_path: Path) -> None:
    """The crash comes 1 s after the driver Job is Ready, while the old controller still holds the
    reconcile that would create the worker Jobs (2 s reconcile latency): that work is lost, the new
    controller queues the JobSet at start and creates them 1 s later than the old one would have."""
    latency = "latency: {jobset: 2s}\n"
    restart = "actions:\n  - {when: all driver jobs Ready, after: 1s, restartController: jobset}\n"
    base, base_run = play(write(tmp_path, latency, name="base"))
    restarted, run = play(write(tmp_path, latency, name="restarted", actions=restart))
    assert base.passed, base.report
    assert restarted.passed, restarted.report
    assert run.actions.controller is not base_run.actions.controller

    def workers_created(outcome: object) -> float:
        return next(e.time for e in outcome.trace  # type: ignore[attr-defined]
                    if e.kind == "Job" and e.event == "Created" and e.replicated_job == "workers")

    ready = next(e.time for e in restarted.trace
                 if e.kind == "Job" and e.event == "Ready" and e.replicated_job == "driver")
    assert workers_created(base) == ready + 2.0
    assert workers_created(restarted) == ready + 1.0 + 2.0  # the crash dropped the queued reconcile
    assert run.actions.controller.controller.stats.reconciles > 0
    assert final_jobset_status(run) == final_jobset_status(base_run)


def test_restart_controller_replaces_the_runs_controller_and_stops_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jobset.controller.jobset_controller import JobSetController

    actions = "actions:\n  - {at: 5s, restartController: jobset}\n  - {at: 6s, restartController: jobset}\n"
    started, outcome, run = play_collecting(monkeypatch, JobSetController, write(tmp_path, actions=actions))
    assert outcome.passed, outcome.report
    assert len(started) == 3
    assert run.actions.controller is started[-1]
    assert [c.controller.stopped for c in started] == [True, True, False]
    assert started[-1].gates is started[0].gates


def test_evict_pod_marks_the_pod_disrupted_and_deletes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deleted: list[Obj] = []

    def watch_deletions(cluster: Cluster) -> None:
        cluster.server.watch("Pod", lambda e: deleted.append(e.object) if e.type == "DELETED" else None)

    after_init(monkeypatch, Cluster, watch_deletions)
    actions = 'actions:\n  - {when: all workers pods Ready, evictPod: {pod: "workers[1/0]"}}\n'
    outcome, run = play(write(tmp_path, actions=actions))
    assert run.actions.errors == []
    evicted = [e for e in outcome.trace if e.kind == "Pod" and e.event == "Deleted"
               and (e.replicated_job, e.job_index, e.pod_index) == ("workers", 1, 0)]
    assert len(evicted) == 1, outcome.report
    last_state = next(p for p in deleted if p["metadata"]["name"] == evicted[0].name)
    condition = get_condition(last_state, "DisruptionTarget")
    assert condition is not None and condition["reason"] == "EvictionByEvictionAPI"


def test_fail_node_stops_the_nodes_kubelet(tmp_path: Path) -> None:
    actions = "actions:\n  - {at: 10s, failNode: {node: node}}\n"
    _, run = play(write(tmp_path, actions=actions))
    assert run.actions.errors == []
    ready = get_condition(run.cluster.server.get("Node", "", "node"), "Ready")
    assert ready is not None and ready["status"] != "True"


def test_fail_node_of_an_unknown_node_without_declared_nodes_is_an_action_error(tmp_path: Path) -> None:
    actions = "actions:\n  - {at: 10s, failNode: {node: pool-z-9}}\n"
    outcome, run = play(write(tmp_path, actions=actions))
    assert not outcome.passed
    assert len(run.actions.errors) == 1
    assert "actions[0] failNode at 10s" in run.actions.errors[0]
    assert 'nodes "pool-z-9" not found' in run.actions.errors[0]
