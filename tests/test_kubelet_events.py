"""Pod Events (``fakecluster/kubelet/events.py``, the scheduler's): opt-in, upstream reasons and messages,
and nothing else of the run changes when they are on."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from fakecluster.kubelet.events import go_seconds
from fakecluster.scenario.runner import ScenarioRun, run_scenario
from fakecluster.scenario.trace import trace_digest
from tests.test_runner import JOBSET, assert_passed, play, scenario


def pod_events(run: ScenarioRun, pod_prefix: str = "") -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["note"]) for e in run.recorder.pod_events
            if e["regarding"]["name"].startswith(pod_prefix)]


def with_container(**fields: Any) -> dict[str, Any]:
    js = copy.deepcopy(JOBSET)
    spec = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec.update({"parallelism": 1, "completions": 1})
    js["spec"]["replicatedJobs"][0]["replicas"] = 1
    spec["template"]["spec"]["containers"][0].update(fields)
    return js


def test_off_by_default_and_the_trace_is_the_same_with_them_on(tmp_path: Path) -> None:
    off, off_run = play(scenario(tmp_path, name="off"))
    on, on_run = play(scenario(tmp_path, name="on", cluster={"podEvents": True}))
    assert off_run.recorder.pod_events == [] and on_run.recorder.pod_events
    assert trace_digest(off.trace) == trace_digest(on.trace)
    assert off.digest != on.digest  # the Event writes are in the write log
    explicit_off, _ = play(scenario(tmp_path, name="explicit", cluster={"podEvents": False}))
    assert explicit_off.digest == off.digest


def test_lifecycle_of_a_deleted_pod(tmp_path: Path) -> None:
    path = scenario(tmp_path, cluster={"podEvents": True}, jobset=with_container(image="busybox:1.36"),
                    pods=[{"match": {}, "pull": "3s", "exit": "never", "terminate": "1s"}],
                    actions=[{"at": "20s", "deletePod": {"pod": "w[0/0]"}}], until="25s",
                    expect=[{"events": {"pod": "w[0/0]", "exactly": [
                        {"type": "Normal", "reason": "Scheduled",
                         "message": "Successfully assigned default/js-w-0-0-"},
                        {"reason": "Pulling", "note": 'Pulling image "busybox:1.36"'},
                        {"reason": "Pulled",
                         "note": 'Successfully pulled image "busybox:1.36" in 3s (3s including'},
                        {"reason": "Created", "note": "Created container: c"},
                        {"reason": "Started", "note": "Started container c"},
                        {"reason": "Killing", "note": "Stopping container c"}]}}])
    outcome, run = play(path)
    assert_passed(outcome)
    pulled = next(e for e in run.recorder.pod_events if e["reason"] == "Pulled")
    assert pulled["regarding"]["fieldPath"] == "spec.containers{c}"
    assert pulled["deprecatedSource"] == {"component": "kubelet", "host": "node"}
    assert pulled["eventTime"] == "2025-01-01T00:00:03.000000Z"


def test_image_present_with_if_not_present_policy(tmp_path: Path) -> None:
    path = scenario(tmp_path, jobset=with_container(image="busybox:1.36", imagePullPolicy="IfNotPresent"),
                    expect=[{"events": {"pod": "w[0/0]", "contains": [
                        {"reason": "Pulled", "message": 'Container image "busybox:1.36" already present'}],
                        "absent": [{"reason": "Pulling"}]}}])
    assert_passed(run_scenario(path))


def test_image_pull_failures(tmp_path: Path) -> None:
    path = scenario(tmp_path, jobset=with_container(image="registry.example/app:v2"),
                    pods=[{"match": {}, "pull": "1s", "pullFailures": 2, "exit": {"after": "5s"}}],
                    expect=[{"happens": "jobset Completed"}, {"events": {"pod": "w[0/0]", "contains": [
                        {"type": "Warning", "reason": "Failed",
                         "message": 'Failed to pull image "registry.example/app:v2": rpc error: code ='},
                        {"type": "Warning", "reason": "Failed", "message": "Error: ErrImagePull", "count": 2},
                        {"type": "Normal", "reason": "BackOff", "message": 'Back-off pulling image'},
                        {"type": "Warning", "reason": "Failed", "message": "Error: ImagePullBackOff"},
                        {"reason": "Pulled"}, {"reason": "Started"}]}}])
    assert_passed(run_scenario(path))


def test_crash_loop_back_off_and_liveness_kill(tmp_path: Path) -> None:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "failureThreshold": 2}
    js = with_container(livenessProbe=probe)
    spec = js["spec"]["replicatedJobs"][0]["template"]["spec"]
    spec["backoffLimit"] = 3
    spec["template"]["spec"]["restartPolicy"] = "OnFailure"
    path = scenario(tmp_path, jobset=js, until="3m",
                    pods=[{"match": {}, "exit": "never", "probes": {"liveness": {"failFor": "never"}}}],
                    expect=[{"events": {"pod": "w[0/0]", "contains": [
                        {"type": "Warning", "reason": "Unhealthy", "note": "Liveness probe failed: "},
                        {"type": "Normal", "reason": "Killing",
                         "note": "Container c failed liveness probe, will be restarted"},
                        {"type": "Warning", "reason": "BackOff",
                         "message": "Back-off restarting failed container c in pod js-w-0-0-"}]}}])
    assert_passed(run_scenario(path))


def test_failed_scheduling(tmp_path: Path) -> None:
    js = with_container(resources={"requests": {"cpu": "16"}})
    nodes = {"nodes": [{"name": "n", "capacity": {"cpu": "8"}}]}
    path = scenario(tmp_path, jobset=js, until="1m", cluster=nodes,
                    expect=[{"events": {"pod": "w[0/0]", "exactly": [
                        {"type": "Warning", "reason": "FailedScheduling",
                         "message": "0/1 nodes are available: 1 Insufficient cpu."}]}}])
    outcome, run = play(path)
    assert_passed(outcome)
    (event,) = [e for e in run.recorder.pod_events if e["reason"] == "FailedScheduling"]
    assert event["reportingController"] == "default-scheduler" and event["action"] == "Scheduling"
    assert event["reportingInstance"] == "default-scheduler-fakecluster-control-plane"


def test_go_duration_strings() -> None:
    assert [go_seconds(s) for s in (0, 1.5, 60, 90.25, 3630)] == ["0s", "1.5s", "1m0s", "1m30.25s", "1h0m30s"]
