"""The stuck diagnosis as a pure function of a snapshot: pods, Jobs, JobSet gates and pending events."""

from __future__ import annotations

from typing import Any

from fakecluster.clock import Clock
from fakecluster.scenario.diagnosis import describe_pending, describe_pod, describe_program, diagnose
from fakecluster.scenario.trace import Snapshot
from fakecluster.workload_plugin import GroupShape, load_plugin
from jobset.diagnosis import creation_waits

LABELS = {
    "jobset.sigs.k8s.io/jobset-name": "js",
    "jobset.sigs.k8s.io/replicatedjob-name": "workers",
    "jobset.sigs.k8s.io/job-index": "0",
    "jobset.sigs.k8s.io/restart-attempt": "0",
}


def pod(name: str, index: int, status: dict[str, Any], spec: dict[str, Any] | None = None) -> dict[str, Any]:
    labels = {**LABELS, "batch.kubernetes.io/job-completion-index": str(index)}
    owner = [{"kind": "Job", "name": "js-workers-0", "apiVersion": "batch/v1", "uid": "u"}]
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels, "ownerReferences": owner},
        "spec": spec or {"containers": [{"name": "c"}]},
        "status": status,
    }


def test_pending_unschedulable_pod_says_why() -> None:
    status = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available",
            }
        ],
    }
    assert describe_pod(pod("p", 0, status)) == "Pending, Unschedulable: 0/1 nodes are available"


def test_crash_looping_container_shows_its_restarts_and_last_exit_code() -> None:
    status = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [
            {
                "name": "c",
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1}},
            }
        ],
    }
    text = describe_pod(pod("p", 0, status))
    assert "container c waiting (CrashLoopBackOff)" in text
    assert "c restarted 3x, last exit code 1" in text
    assert "not Ready: no readiness probe" in text


def test_probe_and_program_state_are_named() -> None:
    spec = {
        "containers": [{"name": "c", "readinessProbe": {"tcpSocket": {"port": 6379}, "periodSeconds": 2}}]
    }
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}
    text = describe_pod(pod("p", 0, status, spec), lambda _: "connecting to d-0-0.js:6379, attempt 4")
    assert text == (
        "Running, not Ready: readinessProbe tcpSocket :6379 every 2s; connecting to d-0-0.js:6379, attempt 4"
    )


def _jobset(**spec: Any) -> dict[str, Any]:
    rjobs = [{"name": "driver", "replicas": 1}, {"name": "workers", "replicas": 1}]
    return {
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "default"},
        "spec": {"replicatedJobs": rjobs, **spec},
        "status": {"replicatedJobsStatus": [{"name": "driver", "ready": 0, "active": 1}]},
    }


def test_creation_gates_follow_the_controller_predicates() -> None:
    inorder = creation_waits(_jobset(startupPolicy={"startupPolicyOrder": "InOrder"}))
    assert [(w.policy, w.target, w.state) for w in inorder["workers"]] == [("InOrder", "driver", "Ready")]
    assert "driver" not in inorder
    anyorder = creation_waits(_jobset())
    assert anyorder == {}
    suspended = creation_waits(_jobset(suspend=True))
    assert {w.policy for ws in suspended.values() for w in ws} == {"suspend"}
    ready = _jobset(startupPolicy={"startupPolicyOrder": "InOrder"})
    ready["status"]["replicatedJobsStatus"][0]["ready"] = 1
    assert creation_waits(ready) == {}


def test_many_pods_with_the_same_state_are_grouped() -> None:
    running = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    pods = [pod(f"w-{i}", i, running) for i in range(5)]
    job = {
        "kind": "Job",
        "metadata": {"name": "js-workers-0", "namespace": "default", "labels": LABELS},
        "status": {"active": 5, "ready": 5},
    }
    snapshot = Snapshot(10.0, {"JobSet": [_jobset()], "Job": [job], "Pod": pods})
    shapes = {"js": {"driver": GroupShape(1, 1), "workers": GroupShape(1, 5)}}
    text = diagnose(snapshot, load_plugin(), shapes, ended="run ended at 10.0s")
    assert "pods w-0, w-1, w-2 (+2 more): Running, Ready" in text
    assert "Job js-workers-0: active 5, ready 5, succeeded 0, failed 0" in text
    assert "replicated job driver (1 job x 1 pod):\n    no Job created: no gate is closed" in text
    assert text.endswith("no pending events: nothing was left to happen")


def test_a_finished_jobset_has_no_diagnosis() -> None:
    done = _jobset()
    done["status"]["conditions"] = [{"type": "Completed", "status": "True"}]
    assert diagnose(Snapshot(1.0, {"JobSet": [done]}), load_plugin(), {}, ended="x") == ""


def test_pending_events_name_the_callback_and_its_arguments() -> None:
    clock = Clock()

    def tick(obj: dict[str, Any], n: int) -> None:
        pass

    clock.call_at(5.0, tick, {"kind": "Pod", "metadata": {"name": "p"}}, 3)
    clock.call_at(1.0, tick, {"kind": "Pod", "metadata": {"name": "q"}}, 4).cancel()
    (line,) = describe_pending(clock.upcoming(5))
    assert (
        line.strip()
        == "5.0s  test_pending_events_name_the_callback_and_its_arguments.<locals>.tick(Pod p, 3)"
    )


def test_a_program_state_reads_as_one_line() -> None:
    from fakecluster.network.network import ProgramState, TargetState

    broker = ProgramState("default", "b", "c", "waiting", (8050,), (), 1, "1/3 peers", "")
    assert describe_program(broker) == "program waiting, listening on :8050, waiting for 1/3 peers"
    worker = ProgramState(
        "default", "w", "c", "waiting", (),
        (TargetState("flux-broker-0-0.flux:8050", 4, False, False, "refused"),
         TargetState("x:1", 1, True, False, "")),
        0, "targets connected 1/2", "",
    )  # fmt: skip
    assert describe_program(worker) == (
        "program waiting, listening on nothing, waiting for targets connected 1/2,"
        " connecting to flux-broker-0-0.flux:8050 attempt 4, last error refused, connected to x:1"
    )
    assert describe_program(None) is None
