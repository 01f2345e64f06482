"""The JobSet reconcile loop (jobset/controller/jobset_controller.py, upstream
``pkg/controllers/jobset_controller.go``).

The first part drives :class:`JobSetController` against a real in-memory API server and garbage collector,
setting Job statuses by hand the way the Job controller would, and checks worked traces of a reconcile:
exact Jobs, conditions, status and events after each step. The second part runs it on a full fake cluster.
The pure helpers have their own modules: ``test_child_jobs.py``, ``test_conditions.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from jobset_harness import (
    COMPLETED_STARTUP,
    IN_PROGRESS,
    IN_PROGRESS_DONE,
    NS,
    T0,
    Env,
    counts,
    make_jobset,
    pod_template,
    rjob,
)

from fakecluster.api.objects import Obj, clone
from fakecluster.api.watch import WatchEvent
from fakecluster.client.local import LocalClient
from fakecluster.clock import rfc3339
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.kubelet.pod_timings import NEVER, PodTimings
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller import JobSetController
from jobset.features import FeatureGates
from jobset.workload import plugin


def test_in_order_creates_the_next_replicated_job_only_once_the_previous_is_ready() -> None:
    """Worked trace A: rjobs a(1), b(3), InOrder, not suspended."""
    env = Env()
    env.create(
        make_jobset(
            rjob("a"),
            rjob("b", 3),
            startupPolicy={"startupPolicyOrder": "InOrder"},
            network={"enableDNSHostnames": True},
        )
    )
    assert env.job_names() == ["js-a-0"]
    status = env.js()["status"]
    assert status == {
        "conditions": [
            {
                "type": "StartupPolicyInProgress",
                "status": "True",
                "lastTransitionTime": T0,
                "reason": "InOrderStartupPolicyInProgress",
                "message": "in order startup policy is in progress",
            }
        ],
        "restarts": 0,
        "replicatedJobsStatus": [
            {"name": n, "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0}
            for n in ("b", "a")
        ],
    }
    assert env.events() == [
        ("Normal", "InOrderStartupPolicyInProgress", "in order startup policy is in progress")
    ]
    assert env.client.get("Service", NS, "js")["spec"]["clusterIP"] == "None"

    env.set_status("js-a-0", active=1, ready=0)
    assert env.job_names() == ["js-a-0"]
    assert env.counts()["a"] == (0, 0, 0, 1, 0)

    env.ready("js-a-0")
    assert env.job_names() == ["js-a-0", "js-b-0", "js-b-1", "js-b-2"]
    assert [env.job(f"js-b-{i}")["spec"]["suspend"] for i in range(3)] == [False, False, False]
    assert env.conditions() == [IN_PROGRESS]

    env.ready("js-b-0", "js-b-1")
    assert env.conditions() == [IN_PROGRESS]
    env.ready("js-b-2")
    assert env.conditions() == [IN_PROGRESS_DONE, COMPLETED_STARTUP]
    in_progress = env.js()["status"]["conditions"][0]
    assert in_progress["lastTransitionTime"] == T0
    assert env.events() == [
        ("Normal", "InOrderStartupPolicyInProgress", "in order startup policy is in progress"),
        ("Normal", "InOrderStartupPolicyCompleted", "in order startup policy has completed"),
    ]
    assert env.counts() == {"b": (3, 0, 0, 3, 0), "a": (1, 0, 0, 1, 0)}


@pytest.mark.parametrize("dependency", ["Ready", "Complete"])
def test_depends_on_creates_the_dependent_only_when_the_dependency_is_met(dependency: str) -> None:
    env = Env()
    env.create(make_jobset(rjob("a"), rjob("b", 2, depends_on=[("a", dependency)])))
    assert env.job_names() == ["js-a-0"]
    env.set_status("js-a-0", active=1)
    assert env.job_names() == ["js-a-0"]
    env.ready("js-a-0")
    if dependency == "Complete":
        assert env.job_names() == ["js-a-0"]
        env.finish("js-a-0", "Complete")
    assert env.job_names() == ["js-a-0", "js-b-0", "js-b-1"]
    assert env.job("js-b-1")["spec"]["suspend"] is False
    assert env.conditions() == []
    assert env.events() == []


def test_depends_on_suspended_at_creation_then_resumed() -> None:
    """Worked trace B, then a re-suspension: resume honours dependsOn for existing Jobs too."""
    env = Env()
    env.create(make_jobset(rjob("a"), rjob("b", 2, depends_on=[("a", "Ready")]), suspend=True))
    assert env.job_names() == ["js-a-0"]
    assert env.job("js-a-0")["spec"]["suspend"] is True
    assert env.conditions() == [("Suspended", "True", "SuspendedJobs", "jobset is suspended")]
    assert env.counts() == {"b": (0, 0, 0, 0, 0), "a": (0, 0, 0, 0, 1)}

    env.update_spec(suspend=False)
    assert env.job("js-a-0")["spec"]["suspend"] is False
    assert env.job_names() == ["js-a-0"]
    assert env.conditions() == [("Suspended", "False", "ResumeJobs", "jobset is resumed")]
    env.ready("js-a-0")
    assert env.job_names() == ["js-a-0", "js-b-0", "js-b-1"]
    assert env.job("js-b-0")["spec"]["suspend"] is False

    env.update_spec(suspend=True)
    assert {env.job(n)["spec"]["suspend"] for n in env.job_names()} == {True}
    env.set_status("js-a-0", active=0, ready=0)
    env.update_spec(suspend=False)
    assert [env.job(n)["spec"]["suspend"] for n in env.job_names()] == [False, True, True]
    assert env.conditions() == [("Suspended", "False", "ResumeJobs", "jobset is resumed")]
    env.ready("js-a-0")
    assert [env.job(n)["spec"]["suspend"] for n in env.job_names()] == [False, False, False]
    assert [r for _, r, _ in env.events()] == ["SuspendedJobs", "ResumeJobs", "SuspendedJobs", "ResumeJobs"]


def test_suspended_in_order_creates_everything_suspended_then_resumes_in_order() -> None:
    env = Env()
    env.create(
        make_jobset(rjob("a"), rjob("b", 2), startupPolicy={"startupPolicyOrder": "InOrder"}, suspend=True)
    )
    assert env.job_names() == ["js-a-0", "js-b-0", "js-b-1"]
    assert {env.job(n)["spec"]["suspend"] for n in env.job_names()} == {True}
    assert env.conditions() == [("Suspended", "True", "SuspendedJobs", "jobset is suspended")]
    assert env.counts() == {"b": (0, 0, 0, 0, 2), "a": (0, 0, 0, 0, 1)}

    # Kueue-style edits while suspended reach the Jobs on resume; a started Job has its startTime cleared.
    env.set_status("js-a-0", startTime=T0)
    js = env.js()
    a_pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    a_pod["metadata"] = {"labels": {"kueue": "flavor"}}
    a_pod["spec"]["nodeSelector"] = {"pool": "tpu"}
    a_pod["spec"]["tolerations"] = [{"key": "tpu", "operator": "Exists"}]
    js["spec"]["suspend"] = False
    env.client.update(js)
    env.settle()
    a0 = env.job("js-a-0")
    assert a0["spec"]["suspend"] is False
    assert "startTime" not in a0["status"]
    assert a0["spec"]["template"]["metadata"]["labels"]["kueue"] == "flavor"
    assert a0["spec"]["template"]["metadata"]["labels"][api.JOB_INDEX_KEY] == "0"
    assert a0["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "tpu"}
    assert a0["spec"]["template"]["spec"]["tolerations"] == [{"key": "tpu", "operator": "Exists"}]
    assert [env.job(f"js-b-{i}")["spec"]["suspend"] for i in range(2)] == [True, True]
    assert env.conditions() == [("Suspended", "True", "SuspendedJobs", "jobset is suspended"), IN_PROGRESS]

    env.ready("js-a-0")
    assert [env.job(f"js-b-{i}")["spec"]["suspend"] for i in range(2)] == [False, False]
    assert env.conditions()[0][:2] == ("Suspended", "True")
    env.ready("js-b-0", "js-b-1")
    assert env.conditions() == [
        ("Suspended", "False", "ResumeJobs", "jobset is resumed"),
        IN_PROGRESS_DONE,
        COMPLETED_STARTUP,
    ]
    assert [r for _, r, _ in env.events()] == [
        "SuspendedJobs",
        "InOrderStartupPolicyInProgress",
        "InOrderStartupPolicyCompleted",
        "ResumeJobs",
    ]


def test_suspending_a_running_jobset_suspends_its_active_jobs() -> None:
    env = Env()
    env.create(make_jobset(rjob("a", 2)))
    env.finish("js-a-1", "Complete")
    env.update_spec(suspend=True)
    assert env.job("js-a-0")["spec"]["suspend"] is True
    assert env.job("js-a-1")["spec"]["suspend"] is False
    assert env.conditions() == [("Suspended", "True", "SuspendedJobs", "jobset is suspended")]


@pytest.mark.parametrize(
    ("policy", "steps", "completed_after"),
    [
        pytest.param(
            {"operator": "All", "targetReplicatedJobs": ["driver"]}, ["js-driver-0"], 1, id="All, targets"
        ),
        pytest.param(
            {"operator": "Any", "targetReplicatedJobs": ["workers"]},
            ["js-driver-0", "js-workers-1"],
            2,
            id="Any, targets",
        ),
        pytest.param({"operator": "All"}, ["js-driver-0", "js-workers-0", "js-workers-1"], 3, id="All"),
    ],
)
def test_success_policy_completes_and_then_foreground_deletes_active_jobs(
    policy: Obj, steps: list[str], completed_after: int
) -> None:
    env = Env(gc=False)
    env.create(make_jobset(rjob("driver"), rjob("workers", 2), successPolicy=policy))
    for i, name in enumerate(steps, 1):
        env.finish(name, "Complete")
        assert (env.js()["status"].get("terminalState") == "Completed") is (i == completed_after)
    assert env.conditions() == [("Completed", "True", "AllJobsCompleted", "jobset completed successfully")]
    assert env.events() == [("Normal", "AllJobsCompleted", "jobset completed successfully")]
    for name in env.job_names():
        job = env.job(name)
        finished = name in steps
        assert bool(job["metadata"].get("deletionTimestamp")) is not finished
        assert job["metadata"].get("finalizers") == (None if finished else ["foregroundDeletion"])


def test_failure_without_policy_beats_success_and_names_the_first_failed_job() -> None:
    env = Env(gc=False)
    env.create(make_jobset(rjob("a", 2), rjob("b"), rjob("c"), successPolicy={"operator": "Any"}))
    env.clock.advance_to(60)
    env.finish("js-a-0", "Failed", reason="BackoffLimitExceeded", at=50, settle=False)
    env.finish("js-a-1", "Failed", reason="BackoffLimitExceeded", at=40, settle=False)
    env.finish("js-b-0", "Complete", at=30)
    message = "jobset failed due to one or more job failures (first failed job: js-a-1)"
    assert env.conditions() == [("Failed", "True", "FailedJobs", message)]
    assert env.js()["status"]["terminalState"] == "Failed"
    assert env.events() == [("Warning", "FailedJobs", message)]
    assert env.counts() == {"c": (0, 0, 0, 0, 0), "b": (0, 1, 0, 0, 0), "a": (0, 0, 2, 0, 0)}
    assert not env.job("js-b-0")["metadata"].get("deletionTimestamp")
    assert env.job("js-c-0")["metadata"]["finalizers"] == ["foregroundDeletion"]


def test_a_failure_stops_in_order_creation() -> None:
    env = Env()
    env.create(make_jobset(rjob("a"), rjob("b"), startupPolicy={"startupPolicyOrder": "InOrder"}))
    env.finish("js-a-0", "Failed")
    assert env.job_names() == ["js-a-0"]
    assert env.conditions()[-1][:3] == ("Failed", "True", "FailedJobs")


def test_restart_under_max_restarts_one_then_fail() -> None:
    """Worked trace C: default failure policy with maxRestarts=1."""
    env = Env()
    env.create(make_jobset(rjob("a"), rjob("b", 3), failurePolicy={"maxRestarts": 1}))
    names = ["js-a-0", "js-b-0", "js-b-1", "js-b-2"]
    env.ready(*names)
    env.finish("js-a-0", "Failed", reason="BackoffLimitExceeded")
    restart_message = "applying RestartJobSet failure policy action (first failed job: js-a-0)"
    status = env.js()["status"]
    assert (status["restarts"], status["restartsCountTowardsMax"]) == (1, 1)
    assert env.conditions() == [("RestartingJobSet", "True", "DefaultFailurePolicy", restart_message)]
    assert env.events() == [
        ("Warning", "DefaultFailurePolicy", restart_message),
        ("Warning", "RestartJobSetFailurePolicyAction", restart_message),
    ]
    for name in names:
        assert ("MODIFIED", name, "deleting", ("foregroundDeletion",)) in env.job_log
        assert ("DELETED", name) in [entry[:2] for entry in env.job_log]
    assert env.job_names() == names
    assert {env.job(n)["metadata"]["labels"][api.RESTARTS_KEY] for n in names} == {"1"}
    assert env.counts() == {"b": (0, 0, 0, 0, 0), "a": (0, 0, 0, 0, 0)}

    env.ready("js-a-0", "js-b-0", "js-b-2")
    assert env.conditions()[0][:2] == ("RestartingJobSet", "True")
    env.finish("js-b-1", "Complete")
    assert env.conditions() == [("RestartingJobSet", "False", "JobsReady", "all jobs are ready")]
    assert env.events()[-1] == ("Normal", "JobsReady", "all jobs are ready")

    env.finish("js-b-2", "Failed", reason="BackoffLimitExceeded")
    failed = "jobset failed due to reaching max number of restarts (first failed job: js-b-2)"
    assert env.conditions() == [
        ("RestartingJobSet", "False", "JobSetFailed", "jobset failed"),
        ("Failed", "True", "ReachedMaxRestarts", failed),
    ]
    assert env.js()["status"]["terminalState"] == "Failed"
    assert env.js()["status"]["restarts"] == 1
    assert env.events()[-2:] == [
        ("Warning", "ReachedMaxRestarts", failed),
        ("Normal", "JobSetFailed", "jobset failed"),
    ]
    assert env.job_names() == ["js-b-1", "js-b-2"]


@pytest.mark.parametrize("strategy", ["Recreate", "BlockingRecreate"])
def test_recreate_strategies(strategy: str) -> None:
    env = Env(gc=False)
    env.create(make_jobset(rjob("a", 2), failurePolicy={"maxRestarts": 2, "restartStrategy": strategy}))
    env.finish("js-a-0", "Failed")
    assert all(env.job(n)["metadata"].get("deletionTimestamp") for n in ("js-a-0", "js-a-1"))
    env.client.patch("Job", NS, "js-a-0", {"metadata": {"finalizers": None}})
    env.settle()
    if strategy == "Recreate":
        assert env.job("js-a-0")["metadata"]["labels"][api.RESTARTS_KEY] == "1"
    else:
        assert env.job_names() == ["js-a-1"]
    env.client.patch("Job", NS, "js-a-1", {"metadata": {"finalizers": None}})
    env.settle()
    assert [env.job(n)["metadata"]["labels"][api.RESTARTS_KEY] for n in env.job_names()] == ["1", "1"]


def test_ttl_after_finished_foreground_deletes_the_jobset_when_it_expires() -> None:
    env = Env(gc=False)
    env.create(make_jobset(rjob("a"), ttlSecondsAfterFinished=10))
    env.clock.advance_to(5)
    env.finish("js-a-0", "Complete")
    assert env.conditions() == [("Completed", "True", "AllJobsCompleted", "jobset completed successfully")]
    assert env.js()["status"]["conditions"][0]["lastTransitionTime"] == rfc3339(5)
    env.settle(14.9 - env.clock.now)
    assert not env.js()["metadata"].get("deletionTimestamp")
    env.settle(0.2)
    meta = env.js()["metadata"]
    assert meta["deletionTimestamp"] == rfc3339(15)
    assert meta["finalizers"] == ["foregroundDeletion"]


def test_ttl_zero_deletes_at_the_first_finished_reconcile() -> None:
    env = Env()
    env.create(make_jobset(rjob("a"), ttlSecondsAfterFinished=0))
    env.finish("js-a-0", "Complete")
    assert env.client.list("JobSet", NS) == []
    assert env.client.list("Job", NS) == []


def test_managed_by_another_controller_is_left_alone() -> None:
    env = Env()
    env.create(make_jobset(rjob("a"), managedBy="kueue.x-k8s.io/multikueue"))
    assert env.job_names() == []
    assert "status" not in env.js()


def test_restart_job_action_without_the_gate_is_a_reconcile_error_and_writes_nothing() -> None:
    env = Env()
    env.create(
        make_jobset(
            rjob("a"), failurePolicy={"maxRestarts": 3, "rules": [{"name": "r", "action": "RestartJob"}]}
        )
    )
    before = env.js()["status"]
    env.finish("js-a-0", "Failed")
    assert env.js()["status"] == before
    assert env.controller.controller.stats.last_errors[-1].endswith(
        "RestartJob failure policy action cannot be used when the feature gate RestartJob is disabled"
    )


def test_restart_job_action_with_the_gate_recreates_only_that_job() -> None:
    env = Env(gates=FeatureGates.from_dict({"RestartJob": True}))
    env.create(
        make_jobset(
            rjob("a", 2), failurePolicy={"maxRestarts": 3, "rules": [{"name": "r", "action": "RestartJob"}]}
        )
    )
    assert env.job("js-a-0")["metadata"]["labels"][api.JOB_RESTART_ATTEMPT_KEY] == "0"
    env.finish("js-a-1", "Failed")
    entry = next(s for s in env.js()["status"]["replicatedJobsStatus"] if s["name"] == "a")
    assert (entry["jobRestarts"], entry["jobRestartsCountTowardsMax"]) == ([0, 1], [0, 1])
    assert env.job("js-a-1")["metadata"]["labels"][api.JOB_RESTART_ATTEMPT_KEY] == "1"
    assert env.job("js-a-0")["metadata"]["labels"][api.JOB_RESTART_ATTEMPT_KEY] == "0"
    assert env.js()["status"]["restarts"] == 0


def test_headless_service_is_created_once_and_recreated_when_deleted() -> None:
    env = Env()
    env.create(
        make_jobset(
            rjob("a"),
            network={"enableDNSHostnames": True, "subdomain": "sub", "publishNotReadyAddresses": False},
        )
    )
    svc = env.client.get("Service", NS, "sub")
    uid = env.js()["metadata"]["uid"]
    assert svc["spec"]["selector"] == {api.JOBSET_NAME_KEY: "js"}
    assert svc["spec"]["publishNotReadyAddresses"] is False
    assert "ports" not in svc["spec"] and "labels" not in svc["metadata"]
    assert svc["metadata"]["ownerReferences"] == [
        {
            "apiVersion": api.API_VERSION,
            "kind": "JobSet",
            "name": "js",
            "uid": uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert env.job("js-a-0")["spec"]["template"]["spec"]["subdomain"] == "sub"
    env.client.delete("Service", NS, "sub")
    env.settle()
    assert env.client.get("Service", NS, "sub")["metadata"]["uid"] != svc["metadata"]["uid"]


def test_no_headless_service_without_explicit_dns_hostnames() -> None:
    env = Env()
    env.create(make_jobset(rjob("a")))
    assert env.client.list("Service", NS) == []


def test_job_creation_failure_is_an_immediate_warning_folded_into_a_series() -> None:
    """A Job of the same name controlled by another JobSet UID is not the JobSet's (owner-UID index)."""
    env = Env()
    other = env.client.create(make_jobset(name="other", uid=""))
    foreign_owner = {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "name": "js",
        "uid": other["metadata"]["uid"],
        "controller": True,
    }
    env.client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "js-a-0", "namespace": NS, "ownerReferences": [foreign_owner]},
            "spec": {"template": pod_template()},
        }
    )
    env.create(make_jobset(rjob("a")))
    (event,) = env.client.list("Event", NS)
    assert event["type"] == "Warning" and event["reason"] == "JobCreationFailed"
    assert event["note"] == 'job "js-a-0" creation failed with error: jobs.batch "js-a-0" already exists'
    assert event["action"] == "Reconciling"
    assert event["reportingController"] == "jobset"
    assert event["regarding"]["kind"] == "JobSet" and event["regarding"]["name"] == "js"
    assert event["metadata"]["name"].startswith("js.")
    assert event["series"]["count"] > 1
    assert "status" not in env.js()


def test_a_status_conflict_drops_the_queued_events_and_the_retry_emits_them_once() -> None:
    env = Env()
    touched: list[str] = []

    def touch_jobset_when_a_job_is_created(event: WatchEvent) -> None:
        if event.type == "ADDED" and not touched:
            touched.append(event.object["metadata"]["name"])
            env.client.patch("JobSet", NS, "js", {"metadata": {"annotations": {"touched": "yes"}}})

    env.server.watch("Job", touch_jobset_when_a_job_is_created)
    env.create(make_jobset(rjob("a"), rjob("b"), startupPolicy={"startupPolicyOrder": "InOrder"}))
    assert touched == ["js-a-0"]
    assert env.controller.controller.stats.last_errors[0].endswith(
        'Operation cannot be fulfilled on jobsets.jobset.x-k8s.io "js": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert env.conditions() == [IN_PROGRESS]
    assert env.events() == [
        ("Normal", "InOrderStartupPolicyInProgress", "in order startup policy is in progress")
    ]


def test_a_restarted_controller_continues_from_the_stored_state() -> None:
    env = Env()
    env.create(make_jobset(rjob("a"), rjob("b", 2), startupPolicy={"startupPolicyOrder": "InOrder"}))
    env.controller.stop()
    env.ready("js-a-0")
    assert env.job_names() == ["js-a-0"]
    env.controller = JobSetController(env.client, env.clock)
    env.settle()
    assert env.job_names() == ["js-a-0", "js-b-0", "js-b-1"]
    assert env.conditions() == [IN_PROGRESS]
    assert len(env.events()) == 1


def test_elastic_jobset_patches_parallelism_and_completions_of_active_jobs() -> None:
    env = Env(gates=FeatureGates.from_dict({"ElasticJobSet": True}))
    env.create(make_jobset(rjob("a", 2)))
    env.finish("js-a-1", "Complete")
    js = env.js()
    js["spec"]["replicatedJobs"][0]["template"]["spec"].update(parallelism=3, completions=3)
    env.client.update(js)
    env.settle()
    assert (env.job("js-a-0")["spec"]["parallelism"], env.job("js-a-0")["spec"]["completions"]) == (3, 3)
    assert (env.job("js-a-1")["spec"]["parallelism"], env.job("js-a-1")["spec"]["completions"]) == (1, 1)


def test_a_jobset_being_deleted_is_not_reconciled() -> None:
    env = Env()
    js = make_jobset(rjob("a"))
    js["metadata"]["finalizers"] = ["example.com/keep"]
    env.create(js)
    env.client.delete("JobSet", NS, "js")
    env.finish("js-a-0", "Failed")
    assert env.js()["metadata"]["deletionTimestamp"]
    assert env.conditions() == []
    assert env.events() == []


# ================================================================================== on a full fake cluster
def _cluster_jobset(*rjobs: tuple[str, int], **spec: Any) -> Obj:
    template = {
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1"}]}
            },
        }
    }
    return {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": NS},
        "spec": {
            "replicatedJobs": [{"name": n, "replicas": r, "template": template} for n, r in rjobs],
            **spec,
        },
    }


def _start_cluster(behaviour: Any) -> tuple[Cluster, LocalClient]:
    cluster = Cluster(seed=0, config=ClusterConfig(behaviour=behaviour))
    plugin.install(cluster, {})
    return cluster, cluster.client()


def _jobset_events(client: LocalClient) -> list[tuple[str, str, str]]:
    events = clone(client.list("Event", NS))  # names end in the creation time's hex nanoseconds
    return [
        (e["eventTime"], e["reason"], e["note"]) for e in events if e.get("reportingController") == "jobset"
    ]


def test_cluster_in_order_waits_for_ready_pods_before_the_next_replicated_job() -> None:
    cluster, client = _start_cluster(lambda pod: PodTimings(pull=2, ready=3, exit_after=NEVER))
    client.create(_cluster_jobset(("a", 1), ("b", 3), startupPolicy={"startupPolicyOrder": "InOrder"}))
    cluster.run(60)
    a_ready = next(
        c
        for c in client.list("Pod", NS, labels={api.REPLICATED_JOB_NAME_KEY: "a"})[0]["status"]["conditions"]
        if c["type"] == "Ready"
    )["lastTransitionTime"]
    b_created = {
        j["metadata"]["creationTimestamp"]
        for j in client.list("Job", NS)
        if j["metadata"]["name"].startswith("js-b-")
    }
    assert len(b_created) == 1 and min(b_created) >= a_ready == rfc3339(5)
    reasons = [reason for _, reason, _ in _jobset_events(client)]
    assert reasons == ["InOrderStartupPolicyInProgress", "InOrderStartupPolicyCompleted"]
    status = client.get("JobSet", NS, "js")["status"]
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("StartupPolicyInProgress", "False"),
        ("StartupPolicyCompleted", "True"),
    ]
    assert counts(status["replicatedJobsStatus"]) == {"b": (3, 0, 0, 3, 0), "a": (1, 0, 0, 1, 0)}


FAILING_PODS = {("js-a-0-", "0"): 10.0, ("js-b-2-", "1"): 40.0}
"""(pod name prefix, restart attempt) -> seconds until the container exits 1."""


def _trace_c_behaviour(pod: Obj) -> PodTimings:
    attempt = pod["metadata"]["labels"][api.RESTARTS_KEY]
    for (prefix, failing_attempt), exit_after in FAILING_PODS.items():
        if pod["metadata"]["name"].startswith(prefix) and attempt == failing_attempt:
            return PodTimings(ready=1, exit_after=exit_after, exit_code=1)
    return PodTimings(ready=1, exit_after=NEVER)


def _run_trace_c() -> tuple[list[tuple[str, str, str]], Obj, list[tuple[str, str]]]:
    cluster, client = _start_cluster(_trace_c_behaviour)
    client.create(_cluster_jobset(("a", 1), ("b", 3), failurePolicy={"maxRestarts": 1}))
    cluster.run(300)
    jobs = [
        (j["metadata"]["name"], j["metadata"]["labels"][api.RESTARTS_KEY]) for j in client.list("Job", NS)
    ]
    return _jobset_events(client), client.get("JobSet", NS, "js")["status"], jobs


def test_cluster_restart_under_max_restarts_one_then_fail_deterministically() -> None:
    """Worked trace C with real pods: a-0 of attempt 0 exits 1 at 10 s, b-2 of attempt 1 at 40 s."""
    events, status, jobs = _run_trace_c()
    restart = "applying RestartJobSet failure policy action (first failed job: js-a-0)"
    failed = "jobset failed due to reaching max number of restarts (first failed job: js-b-2)"
    assert [(reason, note) for _, reason, note in events] == [
        ("DefaultFailurePolicy", restart),
        ("RestartJobSetFailurePolicyAction", restart),
        ("JobsReady", "all jobs are ready"),
        ("ReachedMaxRestarts", failed),
        ("JobSetFailed", "jobset failed"),
    ]
    assert (status["restarts"], status["restartsCountTowardsMax"], status["terminalState"]) == (
        1,
        1,
        "Failed",
    )
    assert jobs == [("js-b-2", "1")]
    assert _run_trace_c() == (events, status, jobs)
