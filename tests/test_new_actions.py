"""Actions ``delete`` with ``propagationPolicy``, ``create``, ``recoverNode`` and ``deleteNode``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import run_scenario
from tests.test_runner import JOBSET, assert_passed, play, scenario

NODES = {"nodes": [{"name": "pool", "count": 2}]}


@pytest.mark.parametrize(("policy", "jobsets_at_6s"), [("Foreground", 1), ("Background", 0)])
def test_delete_with_propagation_policy(tmp_path: Path, policy: str, jobsets_at_6s: int) -> None:
    # Pods stop 2 s after deletion: in the foreground the JobSet waits for its Jobs (and their pods).
    path = scenario(tmp_path, actions=[{"at": "5s", "delete": {"jobset": "js", "propagationPolicy": policy}}],
                    expect=[{"at": "5500ms", "count": {"jobsets": jobsets_at_6s}},
                            {"final": {"count": {"jobsets": 0, "jobs": 0}}}])
    outcome, _run = play(path)
    assert_passed(outcome)


def test_create_action_creates_any_kind(tmp_path: Path) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "extra"},
               "spec": {"clusterIP": "None", "selector": {"app": "x"}}}
    path = scenario(tmp_path, actions=[{"at": "1s", "create": service}],
                    expect=[{"final": {"count": {"services": 2}}}])
    outcome, run = play(path)
    assert_passed(outcome)
    assert run.cluster.server.get("Service", "default", "extra")["spec"]["clusterIP"] == "None"


def test_delete_and_recover_node(tmp_path: Path) -> None:
    path = scenario(tmp_path, cluster=NODES, actions=[
        {"at": "10s", "failNode": {"node": "pool-1"}}, {"at": "20s", "recoverNode": {"node": "pool-1"}},
        {"at": "30s", "deleteNode": {"node": "pool-0"}}],
        expect=[{"at": "31s", "count": {"nodes": 1}}])
    outcome, run = play(path)
    assert_passed(outcome)
    ready = next(c for c in run.cluster.server.get("Node", "", "pool-1")["status"]["conditions"]
                 if c["type"] == "Ready")
    assert ready["status"] == "True"


def test_node_actions_name_a_declared_node(tmp_path: Path) -> None:
    path = scenario(tmp_path, cluster=NODES, actions=[{"at": "1s", "deleteNode": {"node": "pool-7"}}])
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert "actions[0].deleteNode.node" in str(err.value) and "no node named 'pool-7'" in str(err.value)


def test_patch_status_writes_the_status_subresource(tmp_path: Path) -> None:
    # The Job is marked Complete by hand (as upstream's integration tests do): the Job controller leaves a
    # finished Job alone and the JobSet completes at once, long before its pods would.
    conditions = [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]
    actions = [{"at": f"{5 + i}s", "patchStatus": {"job": f"js-w-{i}", "merge": {"status": {
        "conditions": conditions, "succeeded": 2, "active": 0, "ready": 0}}}} for i in (0, 1)]
    path = scenario(tmp_path, actions=actions, expect=[
        {"happens": "jobset Completed", "by": "6s"},
        {"final": {"jobs": {"js-w-0": {"status": {"succeeded": 2}}}}}])
    outcome, _run = play(path)
    assert_passed(outcome)


def test_patch_status_on_the_main_resource_fields_is_ignored(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "1s", "patchStatus": {
        "jobset": "js", "merge": {"spec": {"suspend": True}}}}], expect=[{"never": "jobset Suspended"}])
    outcome, _run = play(path)
    assert_passed(outcome)


def test_objects_exist_before_the_jobset_and_a_refusal_names_the_item(tmp_path: Path) -> None:
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pre"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    path = scenario(tmp_path, objects=[claim], expect=[
        {"at": "0s", "count": {"persistentvolumeclaims": 1},
         "persistentvolumeclaims": {"pre": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}])
    outcome, _run = play(path)
    assert_passed(outcome)
    bad = scenario(tmp_path, name="bad", objects=[claim, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                                          "metadata": {}}])
    outcome = run_scenario(bad)
    assert not outcome.passed and "objects[1]: the API server rejected the object" in outcome.failures[0]
    with pytest.raises(ScenarioError, match="objects\\[0\\]"):
        load_scenario(scenario(tmp_path, name="nokind", objects=[{"metadata": {"name": "x"}}]))


def test_target_namespace_and_generate_name_prefix(tmp_path: Path) -> None:
    js = {**JOBSET, "metadata": {"generateName": "train-", "namespace": "team-a"}}
    path = scenario(tmp_path, jobset=js, actions=[
        {"at": "5s", "patch": {"jobset": "train-", "merge": {"spec": {"suspend": True}}}},
        {"at": "6s", "patch": {"service": "nope", "namespace": "team-a", "merge": {}},
         "rejected": {"message": ['services "nope" not found']}}],
        expect=[{"happens": "jobset Suspended", "by": "5s"}])
    assert_passed(run_scenario(path))


def test_rejected_lists_every_substring(tmp_path: Path) -> None:
    patch = {"jobset": "js", "merge": {"spec": {"managedBy": "example.com/other"}}}
    ok = scenario(tmp_path, actions=[{"at": "1s", "patch": patch,
                                      "rejected": {"message": ["spec.managedBy", "field is immutable"]}}])
    assert_passed(run_scenario(ok))
    wrong = {"message": ["spec.managedBy", "no such text"]}
    bad = scenario(tmp_path, name="bad", actions=[{"at": "1s", "patch": patch, "rejected": wrong}])
    outcome = run_scenario(bad)
    assert any("does not contain 'no such text'" in f for f in outcome.failures), outcome.failures
