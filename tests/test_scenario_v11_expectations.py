"""Scenario format 1.1 expectations on the runner side: ``gap``, ``stuck`` (with the diagnosis) and the
object assertions on pods/jobs/services, each expected key checked against the kind's schema at load.

Each test writes a small two-tier JobSet (``driver`` then ``workers``, InOrder) into ``tmp_path`` and
plays it; every assertion would fail if the feature it names were broken.
"""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from fakecluster.clock import Clock
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioRun, run_scenario
from fakecluster.scenario.stuck import LOOKAHEAD_EVENTS, StuckProbe
from fakecluster.scenario.trace import Snapshot, TraceEvent
from fakecluster.workload_plugin import load_plugin


def _rjob(name: str, pods: int, probe: dict[str, Any] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "busybox"}
    if probe is not None:
        container["readinessProbe"] = probe
    return {
        "name": name,
        "replicas": 1,
        "template": {
            "spec": {
                "parallelism": pods,
                "completions": pods,
                "backoffLimit": 0,
                "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
            }
        },
    }


JOBSET: dict[str, Any] = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "js"},
    "spec": {
        "startupPolicy": {"startupPolicyOrder": "InOrder"},
        "replicatedJobs": [
            _rjob("driver", 1, {"tcpSocket": {"port": 6379}, "periodSeconds": 5}),
            _rjob("workers", 2),
        ],
    },
}
# The driver runs at 1 s and is Ready at 4 s; its Job is Ready at 5 s (the Job controller's 1 s batch),
# so the workers are created at 5 s, run at 6 s and exit at 16 s. The driver never exits: the JobSet
# never completes.
PODS: list[dict[str, Any]] = [
    {"match": {"replicatedJob": "driver"}, "start": "1s", "ready": "3s", "exit": "never"},
    {"match": {}, "start": "1s", "exit": {"after": "10s"}},
]


def write(tmp_path: Path, expect: list[dict[str, Any]], **fields: Any) -> Path:
    data: dict[str, Any] = {
        "seed": 1,
        "until": "10m",
        "pods": copy.deepcopy(PODS),
        "jobset": copy.deepcopy(JOBSET),
    }
    data.update(fields)
    data["expect"] = expect
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def failures(path: Path) -> list[str]:
    return run_scenario(path).failures


# ---------------------------------------------------------------- gap


def test_gap_within_bounds_passes_and_outside_fails_with_both_times(tmp_path: Path) -> None:
    ok = {
        "gap": {"from": "all driver pods Ready", "to": "all workers pods Running", "min": "2s", "max": "2s"}
    }
    assert failures(write(tmp_path, [ok])) == []
    too_long = {"gap": {"from": "all driver pods Ready", "to": "all workers pods Succeeded", "max": "5s"}}
    (message,) = failures(write(tmp_path, [too_long]))
    assert "gap 12.0s, more than the maximum 5.0s" in message
    assert "at 4.0s" in message and "at 16.0s" in message
    too_short = {"gap": {"from": "all driver pods Ready", "to": "all workers pods Running", "min": "3s"}}
    (message,) = failures(write(tmp_path, [too_short]))
    assert "less than the minimum 3.0s" in message


def test_gap_with_a_milestone_that_never_happens_fails(tmp_path: Path) -> None:
    gap = {"gap": {"from": "all driver pods Ready", "to": "all driver pods Succeeded"}}
    (message,) = failures(write(tmp_path, [gap]))
    assert "'all driver pods Succeeded' never happened" in message


def test_gap_milestones_are_checked_against_the_workload_at_load(tmp_path: Path) -> None:
    gap = {"gap": {"from": "all drivr pods Ready", "to": "all workers pods Running"}}
    (message,) = failures(write(tmp_path, [gap]))
    assert "expect[0].gap.from" in message and "did you mean 'driver'" in message


def test_gap_max_below_min_is_a_load_error(tmp_path: Path) -> None:
    gap = {
        "gap": {"from": "all driver pods Ready", "to": "all workers pods Running", "min": "3s", "max": "1s"}
    }
    with pytest.raises(ScenarioError, match=r"expect\[0\]\.gap\.max: 'max' is smaller than 'min'"):
        load_scenario(write(tmp_path, [gap]))


# ---------------------------------------------------------------- stuck and the diagnosis


def _never_ready(tmp_path: Path, expect: list[dict[str, Any]], **fields: Any) -> Path:
    pods = [
        {"match": {"replicatedJob": "driver"}, "start": "1s", "ready": "never", "exit": "never"},
        *PODS[1:],
    ]
    return write(tmp_path, expect, pods=pods, **fields)


def test_a_finished_run_is_not_stuck(tmp_path: Path) -> None:
    pods = [{"match": {}, "start": "1s", "ready": "1s", "exit": {"after": "10s"}}]
    outcome = run_scenario(write(tmp_path, [{"stuck": True}], pods=pods))
    assert not outcome.stuck and outcome.diagnosis == ""
    assert "did not end stuck" in outcome.failures[0]


def test_an_inorder_stall_is_stuck_and_the_diagnosis_names_the_gate_and_the_probe(tmp_path: Path) -> None:
    stuck = {"stuck": {"contains": ["workers", "InOrder waits for driver Ready", "driver pods Ready 0/1"]}}
    outcome = run_scenario(_never_ready(tmp_path, [stuck]))
    assert outcome.passed, outcome.failures
    assert outcome.stuck
    assert "nothing left to happen" in outcome.diagnosis
    assert "readinessProbe tcpSocket :6379 every 5s" in outcome.diagnosis
    assert "pods rule: ready never" in outcome.diagnosis
    assert "Running, not Ready" in outcome.diagnosis
    assert "stuck diagnosis:" in outcome.report  # printed even though the scenario passed


def test_stuck_contains_is_case_sensitive_and_a_missing_item_fails(tmp_path: Path) -> None:
    outcome = run_scenario(_never_ready(tmp_path, [{"stuck": {"contains": ["inorder waits"]}}]))
    assert not outcome.passed
    assert "does not contain 'inorder waits'" in outcome.failures[0]
    assert "InOrder waits for driver Ready" in outcome.report  # the diagnosis is in the failure report


class _Cluster:
    """Just what :class:`StuckProbe` drives: a clock, and ``run`` on it."""

    def __init__(self) -> None:
        self.clock = Clock()

    def run(self, until: float) -> bool:
        return self.clock.run(until)


def _probe_after_until(
    progress_at: float | None, kind: str = "Pod", event: str = "Succeeded"
) -> tuple[bool, str, int]:
    """A cluster stopped at ``until`` = 100 s whose only pending work is a 1 s retry loop; with
    ``progress_at`` a pod finishes then (a milestone-worthy event in the trace)."""
    cluster = _Cluster()
    recorder = SimpleNamespace(trace=[])

    def retry() -> None:
        cluster.clock.call_later(1.0, retry)

    def finish() -> None:
        recorder.trace.append(TraceEvent(cluster.clock.now, 0, kind, "default", "p", event))

    cluster.clock.call_at(100.0, retry)
    if progress_at is not None:
        cluster.clock.call_at(progress_at, finish)
    cluster.clock.run(100.0)
    jobset = {"kind": "JobSet", "metadata": {"name": "js", "namespace": "default"}, "status": {}}
    final = Snapshot(100.0, {"JobSet": [jobset]})
    probe = StuckProbe(cluster, recorder, load_plugin(), {"js": {}})  # type: ignore[arg-type]
    stuck, text = probe.judge(final, stopped_by_until=True)
    return stuck, text, cluster.clock.events_run


def test_stopped_at_until_with_only_a_retry_loop_left_is_stuck() -> None:
    stuck, text, events = _probe_after_until(None)
    assert stuck
    assert "at 'until', with only unbounded waiting left" in text
    assert "next pending events:" in text and "retry()" in text
    assert events <= 3700  # looked an hour ahead, no further


def test_stopped_at_until_with_progress_later_is_not_stuck() -> None:
    stuck, text, _ = _probe_after_until(2000.0)
    assert not stuck and text == ""


def test_endpointslice_writes_after_until_are_not_progress() -> None:
    stuck, _, _ = _probe_after_until(2000.0, kind="EndpointSlice", event="Created")
    assert stuck


def test_the_lookahead_is_bounded_in_events() -> None:
    cluster = _Cluster()
    recorder = SimpleNamespace(trace=[])

    def busy() -> None:
        cluster.clock.call_later(0.001, busy)

    cluster.clock.call_at(0.0, busy)
    cluster.clock.run(0.0)
    final = Snapshot(0.0, {"JobSet": [{"kind": "JobSet", "metadata": {"name": "js"}}]})
    stuck, _ = StuckProbe(cluster, recorder, load_plugin(), {}).judge(final, stopped_by_until=True)  # type: ignore[arg-type]
    assert stuck
    assert cluster.clock.events_run < LOOKAHEAD_EVENTS + 2_000


def test_stopped_at_until_with_an_exit_pending_is_slow_not_stuck(tmp_path: Path) -> None:
    pods = [{"match": {}, "start": "1s", "ready": "1s", "exit": {"after": "30m"}}]
    outcome = run_scenario(write(tmp_path, [{"stuck": True}], pods=pods, until="1m"))
    assert outcome.virtual_end == 60.0
    assert not outcome.stuck
    assert "did not end stuck" in outcome.failures[0]


def test_the_lookahead_leaves_trace_digest_and_events_as_at_until(tmp_path: Path) -> None:
    pods = [{"match": {}, "start": "1s", "ready": "1s", "exit": {"after": "30m"}}]
    short = run_scenario(write(tmp_path, [{"happens": "all driver pods Running"}], pods=pods, until="1m"))
    assert short.trace[-1].time <= 60.0
    assert all(e.event != "Succeeded" for e in short.trace)


def test_depends_on_gate_is_diagnosed_with_the_target_state(tmp_path: Path) -> None:
    spec = copy.deepcopy(JOBSET)
    del spec["spec"]["startupPolicy"]
    spec["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "driver", "status": "Complete"}]
    outcome = run_scenario(_never_ready(tmp_path, [{"stuck": True}], jobset=spec))
    assert outcome.stuck
    assert (
        "dependsOn waits for driver Complete; driver pods Succeeded 0/1, jobs Complete 0/1"
        in outcome.diagnosis
    )


def test_unschedulable_pods_are_diagnosed_with_the_scheduler_message(tmp_path: Path) -> None:
    spec = copy.deepcopy(JOBSET)
    container = spec["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    container["resources"] = {"requests": {"cpu": "64"}}
    nodes = [{"name": "small", "capacity": {"cpu": "8", "memory": "32Gi", "pods": 110}}]
    outcome = run_scenario(write(tmp_path, [{"stuck": {"contains": ["Unschedulable"]}}], jobset=spec,
                                 cluster={"nodes": nodes}))  # fmt: skip
    assert outcome.passed, outcome.report
    assert "Pending, Unschedulable: 0/1 nodes are available" in outcome.diagnosis


def test_stuck_false_is_a_load_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="'stuck: false' checks nothing"):
        load_scenario(write(tmp_path, [{"stuck": False}]))


# ---------------------------------------------------------------- object assertions


def test_pod_job_and_service_assertions_match_the_final_objects(tmp_path: Path) -> None:
    final = {
        "final": {
            "pods": {
                "driver[0/0]": {"status": {"phase": "Running"}, "spec": {"subdomain": "js"}},
                "workers[0/1]": {"status": {"phase": "Succeeded"}},
            },
            "jobs": {"js-workers-0": {"status": {"succeeded": 2}}},
            "services": {"js": {"spec": {"clusterIP": "None", "publishNotReadyAddresses": True}}},
        }
    }
    assert failures(write(tmp_path, [final])) == []
    wrong = {"final": {"pods": {"workers[0/1]": {"status": {"phase": "Running"}}}, "jobs": {"js-x-0": {}}}}
    (message,) = failures(write(tmp_path, [wrong]))
    assert "pods.workers[0/1]: status.phase: expected 'Running', got 'Succeeded'" in message
    assert "jobs.js-x-0: no Job named 'js-x-0' exists" in message


def test_at_takes_object_assertions_too(tmp_path: Path) -> None:
    at = {"at": "5s", "pods": {"workers[0/0]": {"status": {"phase": "Pending"}}}}
    assert failures(write(tmp_path, [at])) == []
    late = {"at": "6s", "pods": {"workers[0/0]": {"status": {"phase": "Pending"}}}}
    assert "expected 'Pending', got 'Running'" in failures(write(tmp_path, [late]))[0]


@pytest.mark.parametrize(
    ("expect", "path", "hint"),
    [
        (
            {"final": {"jobset": {"status": {"restart": 0}}}},
            "expect[0].final.jobset.status.restart",
            "restarts",
        ),
        (
            {"final": {"pods": {"driver[0/0]": {"status": {"phse": "Running"}}}}},
            "expect[0].final.pods.driver[0/0].status.phse",
            "phase",
        ),
        (
            {"at": "5s", "jobs": {"js-driver-0": {"status": {"readyy": 0}}}},
            "expect[0].jobs.js-driver-0.status.readyy",
            "ready",
        ),
        (
            {"final": {"services": {"js": {"spec": {"publishNotReadyAdresses": False}}}}},
            "expect[0].final.services.js.spec.publishNotReadyAdresses",
            "publishNotReadyAddresses",
        ),
        (
            {"final": {"jobset": {"status": {"replicatedJobsStatus": [{"name": "driver", "redy": 0}]}}}},
            "expect[0].final.jobset.status.replicatedJobsStatus[0].redy",
            "ready",
        ),
    ],
)
def test_a_misspelt_key_is_a_load_error_even_with_a_zero_value(
    tmp_path: Path, expect: dict[str, Any], path: str, hint: str
) -> None:
    file = write(tmp_path, [expect])
    scenario = load_scenario(file)
    with pytest.raises(ScenarioError) as err:
        ScenarioRun(scenario, file, load_plugin())
    text = str(err.value)
    assert f"{path}: unknown key" in text
    assert f"did you mean '{hint}'" in text
    assert f"{file}:" in text  # file and line
    assert "\n" not in text


def test_free_form_maps_accept_any_key(tmp_path: Path) -> None:
    labels = {
        "final": {
            "pods": {
                "driver[0/0]": {"metadata": {"labels": {"jobset.sigs.k8s.io/replicatedjob-name": "driver"}}}
            }
        }
    }
    assert failures(write(tmp_path, [labels])) == []


def test_a_pod_reference_out_of_range_is_a_load_error(tmp_path: Path) -> None:
    (message,) = failures(write(tmp_path, [{"final": {"pods": {"workers[0/5]": {}}}}]))
    assert "expect[0].final.pods.workers[0/5]" in message and "pod index 5 is out of range" in message


def test_count_takes_endpointslices(tmp_path: Path) -> None:
    path = write(tmp_path, [{"final": {"count": {"endpointslices": 0}}}])
    assert load_scenario(path).expect[0].final is not None


def test_endpointslice_assertions_match_the_services_first_slice(tmp_path: Path) -> None:
    slices = {
        "final": {
            "endpointslices": {
                "js": {
                    "addressType": "IPv4",
                    "metadata": {
                        "labels": {
                            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"
                        }
                    },
                    "endpoints": [
                        {"hostname": "js-driver-0-0", "conditions": {"ready": True, "serving": True}}
                    ],
                }
            },
            "count": {"endpointslices": 1},
        }
    }
    assert failures(write(tmp_path, [slices])) == []
    wrong = {
        "final": {
            "endpointslices": {
                "js": {"endpoints": [{"hostname": "js-driver-0-0", "conditions": {"ready": False}}]}
            }
        }
    }
    (message,) = failures(write(tmp_path, [wrong]))
    assert (
        "endpointslices.js: endpoints[hostname=js-driver-0-0].conditions.ready: expected false, got true"
        in message
    )
    (message,) = failures(write(tmp_path, [{"final": {"endpointslices": {"nope": {}}}}]))
    assert "endpointslices.nope: Service 'nope' has no EndpointSlice" in message


def test_a_misspelt_endpointslice_key_is_a_load_error(tmp_path: Path) -> None:
    file = write(
        tmp_path, [{"final": {"endpointslices": {"js": {"endpoints": [{"hostname": "x", "conditons": {}}]}}}}]
    )
    with pytest.raises(
        ScenarioError,
        match=r"endpoints\[0\]\.conditons: unknown key 'conditons' for kind EndpointSlice \(did you mean",
    ):
        ScenarioRun(load_scenario(file), file, load_plugin())
