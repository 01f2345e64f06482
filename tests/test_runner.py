"""The scenario runner: every action verb really acts on the cluster, ``when:``/``after:`` timing,
``at:`` snapshots, failure reports and digests.

Each test writes a small scenario (one JobSet of 2 Jobs x 2 pods, inline manifest) into ``tmp_path``
and plays it with :func:`run_scenario` (or :class:`ScenarioRun` when it needs the cluster afterwards).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml
from scenario_files import jobset_object, rjob_object

from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioOutcome, ScenarioRun, run_scenario
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import load_plugin

JOBSET: dict[str, Any] = jobset_object(
    rjob_object(replicas=2, parallelism=2, completions=2, backoffLimit=2)
)

# Pods are bound at 1 s, running and Ready at 2 s, succeed at 62 s; a deleted pod takes 2 s to stop.
PODS: list[dict[str, Any]] = [
    {"match": {}, "schedule": "1s", "start": "1s", "exit": {"after": "60s", "code": 0}, "terminate": "2s"}
]


def scenario(tmp_path: Path, name: str = "s", **fields: Any) -> Path:
    """Write a scenario file: the base JobSet and pod rules, overridden/extended by ``fields``."""
    data: dict[str, Any] = {
        "seed": 3,
        "until": "10m",
        "pods": copy.deepcopy(PODS),
        "jobset": copy.deepcopy(JOBSET),
        "expect": [{"happens": "jobset Completed"}],
    }
    data.update(fields)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def play(path: Path) -> tuple[ScenarioOutcome, ScenarioRun]:
    """Play a scenario keeping the cluster, to inspect objects after the run."""
    run = ScenarioRun(load_scenario(path), path, load_plugin())
    return run.play(), run


def events(outcome: ScenarioOutcome, kind: str, event: str, **coords: Any) -> list[TraceEvent]:
    return [
        e
        for e in outcome.trace
        if e.kind == kind and e.event == event and all(getattr(e, k) == v for k, v in coords.items())
    ]


def one(outcome: ScenarioOutcome, kind: str, event: str, **coords: Any) -> TraceEvent:
    found = events(outcome, kind, event, **coords)
    assert len(found) == 1, (kind, event, coords, found)
    return found[0]


def assert_passed(outcome: ScenarioOutcome) -> None:
    assert outcome.passed, outcome.report


# --------------------------------------------------------------------------- baseline


def test_without_actions_pods_run_to_completion_and_are_never_deleted(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path))
    assert_passed(outcome)
    assert len(events(outcome, "Pod", "Created")) == 4
    assert len(events(outcome, "Pod", "Succeeded")) == 4
    assert {e.time for e in events(outcome, "Pod", "Succeeded")} == {62.0}
    assert events(outcome, "Pod", "Deleted") == []
    assert events(outcome, "Pod", "Failed") == []
    assert events(outcome, "Job", "Deleted") == []


# --------------------------------------------------------------------------- suspend / resume


def test_suspend_deletes_the_pods_and_resume_recreates_them(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "suspend": "js"}, {"at": "30s", "resume": "js"}],
        expect=[
            {"happens": "jobset Completed"},
            {"at": "20s", "count": {"jobs": 2, "pods": 0}},
            {
                "final": {
                    "count": {"jobs": 2, "pods": 4},
                    "jobset": {"status": {"replicatedJobsStatus": [{"name": "w", "succeeded": 2}]}},
                }
            },
        ],
    )
    outcome = run_scenario(path)
    assert_passed(outcome)
    assert one(outcome, "JobSet", "Suspended").time == 10.0
    assert [e.time for e in events(outcome, "Job", "Suspended")] == [10.0, 10.0]
    deleted = events(outcome, "Pod", "Deleted")
    assert len(deleted) == 4 and {e.time for e in deleted} == {12.0}  # terminate: 2s
    created = events(outcome, "Pod", "Created")
    assert len(created) == 8
    recreated = [e for e in created if e.time > 0]
    assert {e.time for e in recreated} == {30.0}
    assert {(e.job_index, e.pod_index) for e in recreated} == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert {e.name for e in recreated}.isdisjoint(e.name for e in deleted)
    assert [e.time for e in events(outcome, "Job", "Resumed")] == [30.0, 30.0]
    # the fresh pods run the full 60 s again
    assert one(outcome, "JobSet", "Completed").time > 90.0
    assert events(outcome, "JobSet", "Failed") == []


def test_suspend_true_means_the_only_jobset(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path, actions=[{"at": "5s", "suspend": True}]))
    assert one(outcome, "JobSet", "Suspended").time == 5.0
    assert not outcome.passed  # never resumed, so never Completed


# --------------------------------------------------------------------------- failPod


def test_failpod_fails_the_container_with_the_exit_code_and_the_job_backs_off(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "10s", "failPod": {"pod": "w[1/0]", "exitCode": 137}}])
    outcome, run = play(path)
    assert_passed(outcome)
    failed = one(outcome, "Pod", "Failed")
    assert (failed.time, failed.replicated_job, failed.job_index, failed.pod_index) == (10.0, "w", 1, 0)
    assert failed.detail == "exitCode=137"
    # the Job controller replaces it in the same slot after the 10 s pod-failure backoff
    replacement = [e for e in events(outcome, "Pod", "Created", job_index=1, pod_index=0) if e.time > 0]
    assert [e.time for e in replacement] == [20.0]
    assert replacement[0].name != failed.name
    # the failed pod is kept, and counted by its Job
    pod = run.cluster.server.get("Pod", "default", failed.name)
    assert pod["status"]["phase"] == "Failed"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 137
    job = run.cluster.server.get("Job", "default", "js-w-1")
    assert job["status"]["failed"] == 1 and job["status"]["succeeded"] == 2
    assert len(run.cluster.server.list("Pod")) == 5


def test_failpod_exit_code_defaults_to_1(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path, actions=[{"at": "10s", "failPod": {"pod": "w[0/1]"}}]))
    assert one(outcome, "Pod", "Failed").detail == "exitCode=1"


def test_failpod_on_a_pod_whose_container_is_not_running_fails_the_scenario(tmp_path: Path) -> None:
    pods = [{"match": {}, "schedule": "1s", "pull": "30s", "exit": {"after": "5s"}}]
    path = scenario(tmp_path, pods=pods, actions=[{"at": "10s", "failPod": {"pod": "w[0/0]"}}])
    outcome = run_scenario(path)
    assert not outcome.passed
    assert any("actions[0] failPod at 10s" in f and "no running container" in f for f in outcome.failures)
    assert events(outcome, "Pod", "Failed") == []


# --------------------------------------------------------------------------- deletePod


def test_deletepod_deletes_gracefully_and_a_replacement_takes_the_same_slot(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "deletePod": {"pod": "w[0/1]"}}],
        expect=[{"happens": "jobset Completed"}, {"final": {"count": {"pods": 4}}}],
    )
    outcome = run_scenario(path)
    assert_passed(outcome)
    deleted = one(outcome, "Pod", "Deleted")
    assert (deleted.time, deleted.job_index, deleted.pod_index) == (12.0, 0, 1)  # terminate: 2s
    stopped = one(outcome, "Pod", "Failed")
    assert stopped.name == deleted.name and stopped.detail == "exitCode=143"  # SIGTERM
    slot = events(outcome, "Pod", "Created", replicated_job="w", job_index=0, pod_index=1)
    assert len(slot) == 2 and slot[1].time > 10.0
    assert slot[0].name == deleted.name and slot[1].name != deleted.name
    assert len(events(outcome, "Pod", "Succeeded")) == 4


# --------------------------------------------------------------------------- patch


def test_patch_sets_ttl_and_the_jobset_is_deleted_after_it_finishes(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "patch": {"jobset": "js", "merge": {"spec": {"ttlSecondsAfterFinished": 5}}}}],
        expect=[
            {"happens": "jobset Completed"},
            {"final": {"count": {"jobsets": 0, "jobs": 0, "pods": 0, "services": 0}}},
        ],
    )
    outcome = run_scenario(path)
    assert_passed(outcome)
    completed = one(outcome, "JobSet", "Completed").time
    assert one(outcome, "JobSet", "Deleted").time == completed + 5
    assert len(events(outcome, "Job", "Deleted")) == 2
    assert len(events(outcome, "Pod", "Deleted")) == 4


def test_without_the_patch_the_jobset_stays(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path, expect=[{"final": {"count": {"jobsets": 1, "pods": 4}}}]))
    assert_passed(outcome)
    assert events(outcome, "JobSet", "Deleted") == []


# --------------------------------------------------------------------------- delete


def test_delete_job_is_recreated_by_the_jobset_controller(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "10s", "delete": {"job": "js-w-1"}}])
    outcome, run = play(path)
    assert_passed(outcome)
    job_events = [(e.time, e.event) for e in outcome.trace if e.kind == "Job" and e.name == "js-w-1"]
    assert job_events[:3] == [(0.0, "Created"), (3.0, "Ready"), (10.0, "Deleted")]
    assert (10.0, "Created") in job_events[3:]
    # the old Job's pods go (background propagation), new ones are created for job index 1
    assert {e.job_index for e in events(outcome, "Pod", "Deleted")} == {1}
    assert len(events(outcome, "Pod", "Deleted")) == 2
    new_pods = [e for e in events(outcome, "Pod", "Created", job_index=1) if e.time >= 10.0]
    assert sorted(e.pod_index for e in new_pods) == [0, 1]
    job = run.cluster.server.get("Job", "default", "js-w-1")
    assert job["metadata"]["creationTimestamp"].endswith("T00:00:10Z")
    assert events(outcome, "JobSet", "Failed") == []


def test_delete_service_is_recreated(tmp_path: Path) -> None:
    outcome, run = play(scenario(tmp_path, actions=[{"at": "10s", "delete": {"service": "js"}}]))
    assert_passed(outcome)
    services = run.cluster.server.list("Service")
    assert [s["metadata"]["name"] for s in services] == ["js"]
    assert services[0]["metadata"]["creationTimestamp"].endswith("T00:00:10Z")
    assert services[0]["metadata"]["ownerReferences"][0]["kind"] == "JobSet"
    _, control = play(scenario(tmp_path, "control"))
    original = control.cluster.server.list("Service")
    assert original[0]["metadata"]["creationTimestamp"].endswith("T00:00:00Z")


def test_delete_jobset_removes_it(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "delete": {"jobset": "js"}}],
        expect=[{"final": {"count": {"jobsets": 0, "jobs": 0, "services": 0}}}],
    )
    outcome = run_scenario(path)
    assert_passed(outcome)
    assert one(outcome, "JobSet", "Deleted").time >= 10.0


# --------------------------------------------------------------------------- when / after


def _late_pod_rules() -> list[dict[str, Any]]:
    """Pod w[1/1] is Ready only at 8 s, so ``all w pods Ready`` happens at 8 s."""
    return [{"match": {"jobIndex": 1, "podIndex": 1}, "start": "7s"}, *copy.deepcopy(PODS)]


def test_when_after_fires_relative_to_the_milestone(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        pods=_late_pod_rules(),
        actions=[{"when": "all w pods Ready", "after": "3s", "suspend": "js"}],
        expect=[{"happens": "jobset Suspended"}],
    )
    outcome = run_scenario(path)
    assert_passed(outcome)
    last_ready = max(e.time for e in events(outcome, "Pod", "Ready"))
    assert last_ready == 8.0
    assert one(outcome, "JobSet", "Suspended").time == 11.0


def test_when_without_after_fires_at_the_milestone(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        pods=_late_pod_rules(),
        actions=[{"when": "all w pods Ready", "deletePod": {"pod": "w[0/0]"}}],
    )
    outcome = run_scenario(path)
    failed = one(outcome, "Pod", "Failed")
    assert (failed.job_index, failed.pod_index) == (0, 0)
    assert one(outcome, "Pod", "Deleted").time == 8.0 + 2.0  # deleted at 8 s, 2 s to terminate


def test_when_on_a_milestone_that_never_happens_never_fires(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"when": "first w pods Failed", "suspend": "js"}])
    outcome = run_scenario(path)
    assert_passed(outcome)
    assert events(outcome, "JobSet", "Suspended") == []


# --------------------------------------------------------------------------- unappliable actions


def test_action_on_a_missing_object_fails_naming_the_action_and_the_time(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[
            {"at": "5s", "deletePod": {"pod": "w[0/0]"}},
            {"at": "10s", "delete": {"job": "nope"}},
            {"at": "100s", "deletePod": {"pod": "w[1/1]"}},  # the pod has Succeeded by then
        ],
    )
    outcome = run_scenario(path)
    assert not outcome.passed
    assert len(outcome.failures) == 2, outcome.failures
    job_line, pod_line = outcome.failures
    assert str(path) in job_line and "actions[1]" in job_line and "10s" in job_line and "nope" in job_line
    assert str(path) in pod_line and "actions[2]" in pod_line and "100s" in pod_line
    assert "w[1/1]" in pod_line
    assert "actions[1]" in outcome.report and "actions[2]" in outcome.report
    assert "\n" not in job_line and "\n" not in pod_line
    # the action that could be applied was
    assert one(outcome, "Pod", "Deleted").time == 7.0


def test_patch_of_a_deleted_jobset_fails_with_the_api_error(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[
            {"at": "5s", "delete": {"jobset": "js"}},
            {"at": "8s", "patch": {"jobset": "js", "merge": {"metadata": {"labels": {"a": "b"}}}}},
        ],
        expect=[{"final": {"count": {"jobsets": 0}}}],
    )
    outcome = run_scenario(path)
    assert not outcome.passed
    assert len(outcome.failures) == 1
    assert "actions[1] patch at 8s" in outcome.failures[0] and "not found" in outcome.failures[0]


# --------------------------------------------------------------------------- snapshots


def test_at_snapshots_see_the_state_at_that_time(tmp_path: Path) -> None:
    ready = {"status": {"replicatedJobsStatus": [{"name": "w", "ready": 2, "active": 2}]}}
    suspended = {"status": {"replicatedJobsStatus": [{"name": "w", "suspended": 2, "ready": 0}]}}
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "suspend": "js"}, {"at": "30s", "resume": "js"}],
        expect=[
            {
                "at": "0.5s",
                "count": {"jobs": 2, "pods": 4},
                "jobset": {"status": {"replicatedJobsStatus": [{"name": "w", "ready": 0}]}},
            },
            {"at": "5s", "count": {"jobs": 2, "pods": 4}, "jobset": ready},
            {"at": "11s", "count": {"pods": 4}},  # still terminating
            {"at": "12s", "count": {"pods": 0}},
            {"at": "20s", "count": {"jobs": 2, "pods": 0}, "jobset": suspended},
            {"at": "31s", "count": {"pods": 4}},
        ],
    )
    assert_passed(run_scenario(path))


def test_a_wrong_snapshot_expectation_reports_the_value_at_that_time(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        actions=[{"at": "10s", "suspend": "js"}, {"at": "30s", "resume": "js"}],
        expect=[{"at": "20s", "count": {"pods": 4}}, {"final": {"count": {"pods": 4}}}],
    )
    outcome = run_scenario(path)
    assert not outcome.passed
    assert len(outcome.failures) == 1
    assert "expect[0]" in outcome.failures[0] and "expected 4, got 0" in outcome.failures[0]


# --------------------------------------------------------------------------- reports and digests


def test_failing_expectations_report_the_seed_and_the_timeline(tmp_path: Path) -> None:
    path = scenario(
        tmp_path,
        seed=77,
        expect=[
            {"happens": "jobset Completed", "by": "30s"},
            {"never": "first w pods Ready"},
            {"final": {"count": {"pods": 4}}},
        ],
    )
    outcome = run_scenario(path)
    assert not outcome.passed
    assert outcome.seed == 77
    assert len(outcome.failures) == 2
    assert outcome.failures[0].startswith("expect[0]") and "30" in outcome.failures[0]
    assert outcome.failures[1].startswith("expect[1]")
    report = outcome.report
    assert "seed 77" in report
    assert "timeline" in report
    assert "JobSet default/js" in report
    assert "w-0  job" in report and "w-1  pods" in report
    assert "expect[2]" not in report


def test_passing_scenario_has_an_empty_report(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path))
    assert outcome.passed and outcome.failures == [] and outcome.report == ""
    assert outcome.virtual_end >= 63.0


def test_same_file_twice_gives_the_same_digest(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "10s", "deletePod": {"pod": "w[0/1]"}}])
    first, second = run_scenario(path), run_scenario(path)
    assert re.fullmatch(r"[0-9a-f]{64}", first.digest)
    assert first.digest == second.digest
    assert first.trace == second.trace
    later = run_scenario(scenario(tmp_path, "later", actions=[{"at": "11s", "deletePod": {"pod": "w[0/1]"}}]))
    assert later.digest != first.digest


def test_the_seed_changes_the_digest_of_a_jittered_scenario(tmp_path: Path) -> None:
    pods = [{**copy.deepcopy(PODS[0]), "jitter": "2s"}]
    digests = {}
    for seed in (1, 2):
        path = scenario(tmp_path, f"seed{seed}", seed=seed, pods=pods)
        outcome = run_scenario(path)
        assert_passed(outcome)
        assert run_scenario(path).digest == outcome.digest
        digests[seed] = outcome.digest
    assert digests[1] != digests[2]


def test_load_errors_become_a_failed_outcome_with_one_line(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "5s", "suspend": "js", "resume": "js"}])
    outcome = run_scenario(path)
    assert not outcome.passed
    assert len(outcome.failures) == 1 and "\n" not in outcome.failures[0]
    assert str(path) in outcome.failures[0] and "actions[0]" in outcome.failures[0]
    assert outcome.trace == [] and outcome.digest == ""


def test_a_manifest_of_another_kind_is_a_load_error(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "js"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    outcome = run_scenario(scenario(tmp_path, jobset=pod))
    assert not outcome.passed
    assert outcome.failures == [
        f"{outcome.path}:{_line_of(outcome.path, 'kind: Pod')}: jobset.kind: "
        "expected kind 'JobSet', got 'Pod'"
    ]


def test_a_manifest_too_malformed_to_shape_gets_the_api_server_message(tmp_path: Path) -> None:
    manifest = copy.deepcopy(JOBSET)
    manifest["spec"]["replicatedJobs"][0]["replicas"] = "two"
    outcome = run_scenario(scenario(tmp_path, jobset=manifest))
    assert not outcome.passed
    assert len(outcome.failures) == 1
    line = outcome.failures[0]
    assert "Traceback" not in outcome.report and "internal error" not in line
    assert "jobset" in line and "spec.replicatedJobs[0].replicas" in line


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)
