"""The trace recorder: lifecycle edges of Pods, Jobs and the JobSet, with their workload coordinates
(replicated job, job index, completion index, restart attempt), in time order with a strictly
increasing ``seq``; plus its listeners, the JobSet Events it keeps, and the write-log digest.
"""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from scenario_files import jobset_object, rjob_object

from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.runner import ScenarioOutcome, run_scenario
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import load_plugin

# replicated job "a": 1 Job x 1 pod; "b": 2 Jobs x 3 pods
JOBSET: dict[str, Any] = jobset_object(
    rjob_object("a", backoffLimit=0),
    rjob_object("b", replicas=2, parallelism=3, completions=3, backoffLimit=0),
)
SLOTS = {("a", 0, 0), ("b", 0, 0), ("b", 0, 1), ("b", 0, 2), ("b", 1, 0), ("b", 1, 1), ("b", 1, 2)}

# bound at 1 s, image pulled 3 s, running 4 s, Ready 7 s, Succeeded 24 s
PODS = [{"match": {}, "schedule": "1s", "pull": "2s", "start": "1s", "ready": "3s", "exit": {"after": "20s"}}]


def run(tmp_path: Path, name: str = "s", **spec: Any) -> ScenarioOutcome:
    manifest = copy.deepcopy(JOBSET)
    manifest["spec"].update(spec.pop("jobset_spec", {}))
    data: dict[str, Any] = {
        "seed": 5,
        "until": "10m",
        "pods": copy.deepcopy(PODS),
        "jobset": manifest,
        "expect": [{"happens": "jobset Completed"}],
        **spec,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    outcome = run_scenario(path)
    assert outcome.passed, outcome.report
    return outcome


def by_name(trace: list[TraceEvent], kind: str) -> dict[str, list[TraceEvent]]:
    grouped: dict[str, list[TraceEvent]] = defaultdict(list)
    for event in trace:
        if event.kind == kind:
            grouped[event.name].append(event)
    return grouped


def test_a_full_lifecycle_is_recorded_for_every_object(tmp_path: Path) -> None:
    """With a TTL everything is deleted after completion, so every lifecycle edge shows up."""
    outcome = run(tmp_path, jobset_spec={"ttlSecondsAfterFinished": 5})
    pods = by_name(outcome.trace, "Pod")
    assert len(pods) == 7
    completed = next(e.time for e in outcome.trace if e.kind == "JobSet" and e.event == "Completed")
    for name, recorded in pods.items():
        assert [e.event for e in recorded if e.event == "Resolvable"] == ["Resolvable"]  # format 1.1: DNS
        history = [e for e in recorded if e.event != "Resolvable"]
        assert [e.event for e in history] == [
            "Created",
            "Scheduled",
            "Running",
            "Ready",
            "Succeeded",
            "Deleted",
        ], name
        assert [e.time for e in history] == [0.0, 1.0, 4.0, 7.0, 24.0, completed + 5], name
        assert history[1].detail == "node"  # Scheduled carries the node name
    jobs = by_name(outcome.trace, "Job")
    assert sorted(jobs) == ["js-a-0", "js-b-0", "js-b-1"]
    for name, history in jobs.items():
        assert [e.event for e in history] == ["Created", "Ready", "Complete", "Deleted"], name
        assert history[1].time >= 7.0 and history[2].time >= 24.0
        assert history[2].detail == "CompletionsReached"
    jobset = [(e.event, e.detail) for e in outcome.trace if e.kind == "JobSet"]
    assert jobset == [("Created", ""), ("Completed", "AllJobsCompleted"), ("Deleted", "")]
    assert completed >= 24.0


def test_events_carry_the_slot_coordinates(tmp_path: Path) -> None:
    outcome = run(tmp_path)
    pod_events = [e for e in outcome.trace if e.kind == "Pod"]
    assert {(e.replicated_job, e.job_index, e.pod_index) for e in pod_events} == SLOTS
    for e in pod_events:
        assert e.jobset == "js" and e.attempt == 0 and e.namespace == "default"
        # generated names are <jobset>-<rjob>-<jobIndex>-<podIndex>-<suffix>
        assert e.name.rsplit("-", 1)[0] == f"js-{e.replicated_job}-{e.job_index}-{e.pod_index}", e
    created = [e for e in pod_events if e.event == "Created"]
    assert len(created) == len(SLOTS)
    for e in (e for e in outcome.trace if e.kind == "Job"):
        assert e.name == f"js-{e.replicated_job}-{e.job_index}"
        assert e.jobset == "js" and e.pod_index is None and e.attempt == 0
    for e in (e for e in outcome.trace if e.kind == "JobSet"):
        assert e.name == "js" and e.jobset == "js"
        assert (e.replicated_job, e.job_index, e.pod_index, e.attempt) == (None, None, None, None)


def test_a_restart_records_attempts_failure_detail_and_jobset_conditions(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        jobset_spec={"failurePolicy": {"maxRestarts": 1}},
        actions=[{"at": "10s", "failPod": {"pod": "b[1/2]", "exitCode": 3}}],
        expect=[{"happens": "jobset Completed"}, {"final": {"jobset": {"status": {"restarts": 1}}}}],
    )
    trace = outcome.trace
    failed = [e for e in trace if e.kind == "Pod" and e.event == "Failed" and e.detail == "exitCode=3"]
    assert len(failed) == 1
    where = (failed[0].time, failed[0].replicated_job, failed[0].job_index, failed[0].pod_index)
    assert where == (10.0, "b", 1, 2)
    job_failed = [e for e in trace if e.kind == "Job" and e.event == "Failed"]
    assert [(e.name, e.attempt, e.detail) for e in job_failed] == [("js-b-1", 0, "BackoffLimitExceeded")]
    restarted = [e for e in trace if e.kind == "JobSet" and e.event == "Restarted"]
    assert [e.detail for e in restarted] == ["1"]
    restarting = [e for e in trace if e.kind == "JobSet" and e.event == "RestartingJobSet"]
    assert len(restarting) == 1 and restarting[0].time <= restarted[0].time
    for attempt in (0, 1):
        created = {
            (e.replicated_job, e.job_index, e.pod_index)
            for e in trace
            if e.kind == "Pod" and e.event == "Created" and e.attempt == attempt
        }
        assert created == SLOTS, attempt
        jobs = {e.name for e in trace if e.kind == "Job" and e.event == "Created" and e.attempt == attempt}
        assert jobs == {"js-a-0", "js-b-0", "js-b-1"}
    # everything of attempt 1 comes after the restart; every attempt-0 pod is gone
    assert all(e.time >= restarted[0].time for e in trace if e.attempt == 1)
    deleted0 = {e.name for e in trace if e.kind == "Pod" and e.event == "Deleted" and e.attempt == 0}
    assert len(deleted0) == len(SLOTS)
    succeeded = [e for e in trace if e.kind == "Pod" and e.event == "Succeeded"]
    assert len(succeeded) == len(SLOTS) and {e.attempt for e in succeeded} == {1}
    assert [e.event for e in trace if e.kind == "JobSet"][-1] == "Completed"


def test_trace_is_in_time_order_and_seq_strictly_increasing(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        jobset_spec={"failurePolicy": {"maxRestarts": 2}},
        actions=[
            {"at": "5s", "deletePod": {"pod": "b[0/1]"}},  # backoffLimit 0: the Job fails, restart 1
            {"at": "12s", "failPod": {"pod": "a[0/0]", "exitCode": 2}},  # attempt 1's pod: restart 2
        ],
        expect=[{"happens": "jobset Completed"}, {"final": {"jobset": {"status": {"restarts": 2}}}}],
    )
    trace = outcome.trace
    assert len(trace) > 50
    assert {e.attempt for e in trace if e.kind == "Pod"} == {0, 1, 2}
    assert [e.seq for e in trace] == list(range(len(trace)))
    assert all(a.seq < b.seq for a, b in itertools.pairwise(trace))
    assert all(a.time <= b.time for a, b in itertools.pairwise(trace))
    # per pod, the lifecycle edges never go backwards
    rank = {"Created": 0, "Scheduled": 1, "Running": 2, "Ready": 3, "Succeeded": 4, "Failed": 4, "Deleted": 5}
    for name, history in by_name(trace, "Pod").items():
        ranks = [rank[e.event] for e in history if e.event != "Resolvable"]
        assert ranks == sorted(ranks), (name, [e.event for e in history])
        assert history[0].event == "Created"


def test_suspend_and_resume_are_recorded_on_jobs_and_the_jobset(tmp_path: Path) -> None:
    outcome = run(tmp_path, actions=[{"at": "10s", "suspend": "js"}, {"at": "30s", "resume": "js"}])
    trace = outcome.trace
    suspended = [e for e in trace if e.kind == "JobSet" and e.event == "Suspended"]
    assert [(e.time, e.detail) for e in suspended] == [(10.0, "SuspendedJobs")]
    for event, at in (("Suspended", 10.0), ("Resumed", 30.0)):
        jobs = [e for e in trace if e.kind == "Job" and e.event == event]
        assert sorted((e.replicated_job, e.job_index) for e in jobs) == [("a", 0), ("b", 0), ("b", 1)]
        assert {e.time for e in jobs} == {at}
    deleted = [e for e in trace if e.kind == "Pod" and e.event == "Deleted"]
    assert len(deleted) == len(SLOTS) and all(10.0 <= e.time < 30.0 for e in deleted)
    # the pods of the first run were stopped by the deletion: SIGTERM
    stopped = [e for e in trace if e.kind == "Pod" and e.event == "Failed"]
    assert {e.name for e in stopped} == {e.name for e in deleted}
    assert {e.detail for e in stopped} == {"exitCode=143"}


# --------------------------------------------------------------------------- recorder on its own


def _manifest(seconds: int) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox", "command": ["sleep", str(seconds)]}
    return jobset_object(rjob_object(pod_spec={"restartPolicy": "Never", "containers": [container]}))


def _record(seconds: int) -> tuple[TraceRecorder, list[TraceEvent]]:
    plugin = load_plugin()
    cluster = Cluster(0, ClusterConfig())
    plugin.install(cluster, {})
    recorder = TraceRecorder(cluster, plugin)
    heard: list[TraceEvent] = []
    recorder.listeners.append(heard.append)
    cluster.client("test").create(_manifest(seconds))
    cluster.run(600)
    return recorder, heard


def test_listeners_hear_every_event_as_it_is_recorded_and_events_are_kept() -> None:
    recorder, heard = _record(5)
    assert heard == list(recorder.trace)
    assert ("EndpointSlice", "Created") in [(e.kind, e.event) for e in recorder.trace]
    assert [(e.kind, e.event) for e in recorder.trace if e.kind not in ("Pod", "EndpointSlice")] == [
        ("JobSet", "Created"),
        ("Job", "Created"),
        ("Job", "Ready"),
        ("Job", "Complete"),
        ("JobSet", "Completed"),
    ]
    succeeded = next(e for e in recorder.trace if e.event == "Succeeded")
    assert succeeded.time == 5.0  # `sleep 5` exits 0 after 5 s
    reasons = [e.get("reason") for e in recorder.events]
    assert "AllJobsCompleted" in reasons
    for event in recorder.events:
        regarding = event.get("regarding") or event.get("involvedObject") or {}
        assert regarding.get("kind") == "JobSet"


def test_write_digest_covers_every_write() -> None:
    first, _ = _record(5)
    again, _ = _record(5)
    longer, _ = _record(6)
    assert len(first.write_digest()) == 64
    assert first.write_digest() == again.write_digest()
    assert first.write_digest() != longer.write_digest()
