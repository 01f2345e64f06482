"""Tests for the JobSet reconcile loop and its ``jobset_controller.go`` helpers.

The first half mirrors upstream ``jobset_controller_test.go`` (``JobFinished``, job construction,
``updateCondition``, ``calculateReplicatedJobStatuses``, the index helpers, the headless Service). The second
half drives :class:`JobSetController` against a real in-memory API server and garbage collector, setting Job
statuses by hand the way the Job controller would, and checks worked traces of a reconcile: exact Jobs,
conditions, status and events after each step.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.client import LocalClient
from fakecluster.clock import Clock, rfc3339
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.garbage_collector import GarbageCollector
from fakecluster.kubelet.pod_timings import NEVER, PodTimings
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller import EventRecorder, JobSetController
from jobset.controller.child_jobs import (
    ChildJobs,
    calculate_replicated_job_statuses,
    construct_jobs_from_template,
    global_job_index,
    global_replicas,
    group_job_index,
    group_replicas,
    job_finished,
    update_replicated_jobs_statuses,
)
from jobset.controller.conditions import (
    ConditionOpts,
    StatusUpdate,
    make_completed_condition_opts,
    make_resumed_condition_opts,
    make_suspended_condition_opts,
    update_condition,
)
from jobset.features import FeatureGates
from jobset.workload import plugin

NS = "default"
T0 = rfc3339(0)


# ------------------------------------------------------------------------------------------ fixtures
def pod_template(**spec: Any) -> Obj:
    return {
        "spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1"}], **spec}
    }


def rjob(
    name: str,
    replicas: int = 1,
    *,
    group: str = "default",
    depends_on: list[tuple[str, str]] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    pod: Obj | None = None,
) -> Obj:
    template: Obj = {
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "completionMode": "Indexed",
            "template": pod or pod_template(),
        }
    }
    if labels or annotations:
        template["metadata"] = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    out: Obj = {"name": name, "replicas": replicas, "groupName": group, "template": template}
    if depends_on:
        out["dependsOn"] = [{"name": n, "status": s} for n, s in depends_on]
    return out


def make_jobset(*rjobs: Obj, name: str = "js", uid: str = "uid-1", **spec: Any) -> Obj:
    return {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NS, "uid": uid},
        "spec": {"replicatedJobs": list(rjobs), "successPolicy": {"operator": "All"}, **spec},
    }


def jobset_keys(
    rjob_name: str,
    idx: int,
    replicas: int,
    *,
    total: int,
    global_idx: int,
    group: str = "default",
    group_total: int | None = None,
    group_idx: int | None = None,
    restarts: int = 0,
) -> dict[str, str]:
    job_name = f"js-{rjob_name}-{idx}"
    return {
        api.JOBSET_NAME_KEY: "js",
        api.JOBSET_UID_KEY: "uid-1",
        api.REPLICATED_JOB_NAME_KEY: rjob_name,
        api.RESTARTS_KEY: str(restarts),
        api.REPLICATED_JOB_REPLICAS: str(replicas),
        api.GLOBAL_REPLICAS_KEY: str(total),
        api.JOB_INDEX_KEY: str(idx),
        api.JOB_KEY: hashlib.sha1(f"{NS}/{job_name}".encode()).hexdigest(),
        api.JOB_GLOBAL_INDEX_KEY: str(global_idx),
        api.GROUP_NAME_KEY: group,
        api.GROUP_REPLICAS_KEY: str(total if group_total is None else group_total),
        api.JOB_GROUP_INDEX_KEY: str(global_idx if group_idx is None else group_idx),
    }


def child(name: str, rjob_name: str = "a", *, restarts: int = 0, **status: Any) -> Obj:
    """A child Job as the API server returns it."""
    conditions = status.pop("conditions", None)
    job: Obj = {
        "metadata": {
            "name": name,
            "labels": {api.REPLICATED_JOB_NAME_KEY: rjob_name, api.RESTARTS_KEY: str(restarts)},
        },
        "spec": {
            "parallelism": status.pop("parallelism", 1),
            "completions": status.pop("completions", 1),
            "suspend": status.pop("suspend", False),
        },
        "status": status,
    }
    if conditions:
        job["status"]["conditions"] = conditions
    return job


# ------------------------------------------------------------------------------------------ JobFinished
@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([{"type": "Complete", "status": "True"}], (True, "Complete"), id="succeeded"),
        pytest.param([{"type": "Failed", "status": "True"}], (True, "Failed"), id="failed"),
        pytest.param([{"type": "", "status": "True"}], (False, ""), id="active"),
        pytest.param([{"type": "Suspended", "status": "True"}], (False, ""), id="suspended"),
        pytest.param([{"type": "FailureTarget", "status": "True"}], (False, ""), id="failure target"),
        pytest.param([{"type": "Failed", "status": "False"}], (False, ""), id="failed condition not true"),
    ],
)
def test_job_finished(conditions: list[Obj], expected: tuple[bool, str]) -> None:
    assert job_finished({"status": {"conditions": conditions}}) == expected


# ------------------------------------------------------------------------------------------ construction
def _names(jobs: list[Obj]) -> list[str]:
    return [j["metadata"]["name"] for j in jobs]


def _construct(js: Obj, owned: ChildJobs | None = None, *, restart_job: bool = False) -> list[Obj]:
    return [
        job
        for r in js["spec"]["replicatedJobs"]
        for job in construct_jobs_from_template(js, r, owned or ChildJobs(), restart_job=restart_job)
    ]


def test_construct_all_jobs_with_labels_annotations_on_job_and_pod_template() -> None:
    pod = pod_template()
    pod["metadata"] = {"labels": {"pod-label": "p"}, "annotations": {"pod-annotation": "p"}}
    js = make_jobset(rjob("a", 2, labels={"job-label": "j"}, annotations={"job-annotation": "j"}, pod=pod))
    jobs = _construct(js)
    assert _names(jobs) == ["js-a-0", "js-a-1"]
    keys = jobset_keys("a", 1, 2, total=2, global_idx=1)
    job = jobs[1]
    assert job["metadata"] == {
        "name": "js-a-1",
        "namespace": NS,
        "labels": {"job-label": "j", **keys},
        "annotations": {"job-annotation": "j", **keys},
    }
    assert job["spec"]["template"]["metadata"] == {
        "labels": {"pod-label": "p", **keys},
        "annotations": {"pod-annotation": "p", **keys},
    }
    assert job["spec"]["suspend"] is False
    assert job["spec"]["template"]["spec"] == pod_template()["spec"]
    assert "ownerReferences" not in job["metadata"]


@pytest.mark.parametrize("bucket", ["active", "successful", "failed", "previous"])
def test_construct_skips_names_held_by_any_owned_job(bucket: str) -> None:
    owned = ChildJobs()
    getattr(owned, bucket).append({"metadata": {"name": "js-a-0"}})
    assert _names(_construct(make_jobset(rjob("a", 2)), owned)) == ["js-a-1"]


def test_blocking_recreate_constructs_nothing_while_previous_jobs_exist() -> None:
    js = make_jobset(rjob("a", 2), failurePolicy={"restartStrategy": "BlockingRecreate"})
    assert _construct(js, ChildJobs(previous=[{"metadata": {"name": "js-a-0"}}])) == []
    assert _names(_construct(js)) == ["js-a-0", "js-a-1"]


def test_multiple_replicated_jobs_and_groups_get_global_and_group_indexes() -> None:
    js = make_jobset(rjob("a", 1, group="g1"), rjob("b", 2, group="g2"), rjob("c", 2, group="g1"))
    jobs = {j["metadata"]["name"]: j["metadata"]["labels"] for j in _construct(js)}
    assert jobs["js-c-1"] == jobset_keys(
        "c", 1, 2, total=5, global_idx=4, group="g1", group_total=3, group_idx=2
    )
    assert jobs["js-b-0"] == jobset_keys(
        "b", 0, 2, total=5, global_idx=1, group="g2", group_total=2, group_idx=0
    )


def test_exclusive_placement_node_selector_strategy_and_dns_and_coordinator() -> None:
    exclusive = {api.EXCLUSIVE_KEY: "zone", api.NODE_SELECTOR_STRATEGY_KEY: "true"}
    js = make_jobset(
        rjob("a", 1, annotations=exclusive),
        rjob("b", 1),
        network={"enableDNSHostnames": True, "subdomain": "sub"},
        coordinator={"replicatedJob": "a", "jobIndex": 0, "podIndex": 0},
        suspend=True,
    )
    a0, b0 = _construct(js)
    assert a0["metadata"]["annotations"][api.EXCLUSIVE_KEY] == "zone"
    assert api.EXCLUSIVE_KEY not in a0["metadata"]["labels"]
    assert a0["spec"]["template"]["spec"]["nodeSelector"] == {api.NAMESPACED_JOB_KEY: f"{NS}_js-a-0"}
    assert a0["spec"]["template"]["spec"]["tolerations"] == [
        {"key": api.NO_SCHEDULE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert api.EXCLUSIVE_KEY not in b0["metadata"]["annotations"]
    assert "nodeSelector" not in b0["spec"]["template"]["spec"]
    for job in (a0, b0):
        assert job["spec"]["template"]["spec"]["subdomain"] == "sub"
        assert job["spec"]["suspend"] is True
        assert job["metadata"]["labels"][api.COORDINATOR_KEY] == "js-a-0-0.sub"
        assert job["spec"]["template"]["metadata"]["annotations"][api.COORDINATOR_KEY] == "js-a-0-0.sub"


def test_jobset_level_exclusive_annotation_is_copied_to_every_job() -> None:
    js = make_jobset(rjob("a"), rjob("b"))
    js["metadata"]["annotations"] = {api.EXCLUSIVE_KEY: "rack"}
    for job in _construct(js):
        assert job["metadata"]["annotations"][api.EXCLUSIVE_KEY] == "rack"
        assert api.NODE_SELECTOR_STRATEGY_KEY not in job["metadata"]["annotations"]
        assert "tolerations" not in job["spec"]["template"]["spec"]


def test_volume_claim_policies_add_a_volume_for_mounted_templates_only() -> None:
    pod = pod_template()
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    js = make_jobset(
        rjob("a", pod=pod),
        volumeClaimPolicies=[
            {"templates": [{"metadata": {"name": "data"}}, {"metadata": {"name": "unused"}}]}
        ],
    )
    (job,) = _construct(js)
    assert job["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-js"}}
    ]


@pytest.mark.parametrize(("gate", "expected"), [(True, ["1", "0"]), (False, [None, None])])
def test_job_restart_attempt_label_only_with_the_gate(gate: bool, expected: list[str | None]) -> None:
    js = make_jobset(rjob("a", 2))
    js["status"] = {"restarts": 3, "replicatedJobsStatus": [{"name": "a", "jobRestarts": [1, 0]}]}
    jobs = _construct(js, restart_job=gate)
    assert [j["metadata"]["labels"].get(api.JOB_RESTART_ATTEMPT_KEY) for j in jobs] == expected
    assert [j["metadata"]["annotations"].get(api.JOB_RESTART_ATTEMPT_KEY) for j in jobs] == expected
    assert {j["metadata"]["labels"][api.RESTARTS_KEY] for j in jobs} == {"3"}


@pytest.mark.parametrize(
    ("rjobs", "args", "expected"),
    [
        pytest.param([("rjob", 3)], ("rjob", 1), "1", id="single replicated job"),
        pytest.param(
            [("rjob1", 2), ("rjob2", 4), ("rjob3", 1)], ("rjob2", 3), "5", id="multiple replicated jobs"
        ),
        pytest.param([("rjob1", 2)], ("rjob2", 0), "", id="replicated job not found"),
    ],
)
def test_global_job_index(rjobs: list[tuple[str, int]], args: tuple[str, int], expected: str) -> None:
    assert global_job_index(make_jobset(*(rjob(n, r) for n, r in rjobs)), *args) == expected


def test_global_and_group_replicas_and_group_index() -> None:
    assert global_replicas(make_jobset()) == "0"
    js = make_jobset(
        rjob("rjob1", 1, group="groupA"), rjob("rjob2", 2, group="groupB"), rjob("rjob3", 3, group="groupA")
    )
    assert global_replicas(js) == "6"
    assert (group_replicas(js, "groupA"), group_replicas(js, "groupB"), group_replicas(js, "none")) == (
        "4",
        "2",
        "0",
    )
    assert group_job_index(js, "groupA", "rjob3", 1) == "2"
    assert group_job_index(js, "groupB", "rjob2", 1) == "1"
    assert group_job_index(js, "groupB", "rjob3", 0) == ""


# ------------------------------------------------------------------------------------------ conditions
SUSPENDED_TRUE = {
    "type": "Suspended",
    "status": "True",
    "lastTransitionTime": T0,
    "reason": "SuspendedJobs",
    "message": "jobset is suspended",
}


@pytest.mark.parametrize(
    ("existing", "opts", "expected_update", "expected"),
    [
        pytest.param([], None, False, [], id="no existing conditions, not adding conditions"),
        pytest.param(
            [],
            make_completed_condition_opts(),
            True,
            [("Completed", "True", "AllJobsCompleted", "T1")],
            id="no existing conditions, add a condition",
        ),
        pytest.param(
            [],
            make_suspended_condition_opts(),
            True,
            [("Suspended", "True", "SuspendedJobs", "T1")],
            id="suspended",
        ),
        pytest.param(
            [SUSPENDED_TRUE],
            make_resumed_condition_opts(),
            True,
            [("Suspended", "False", "ResumeJobs", "T1")],
            id="resume (update suspended condition in place)",
        ),
        pytest.param([], make_resumed_condition_opts(), False, [], id="a False condition is never added"),
        pytest.param(
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "lastTransitionTime": T0,
                    "reason": "AllJobsCompleted",
                    "message": "jobset completed successfully",
                }
            ],
            make_completed_condition_opts(),
            False,
            [("Completed", "True", "AllJobsCompleted", T0)],
            id="existing conditions, attempt to add duplicate",
        ),
        pytest.param(
            [
                {
                    "type": "RestartingJobSet",
                    "status": "True",
                    "lastTransitionTime": T0,
                    "reason": "DefaultFailurePolicy",
                    "message": "old message",
                }
            ],
            ConditionOpts("Warning", "RestartingJobSet", "True", "NewReason", "new message"),
            True,
            [("RestartingJobSet", "True", "NewReason", T0)],
            id="update reason/message but keep status and lastTransitionTime",
        ),
    ],
)
def test_update_condition(
    existing: list[Obj],
    opts: ConditionOpts | None,
    expected_update: bool,
    expected: list[tuple[str, str, str, str]],
) -> None:
    js: Obj = {"status": {"conditions": [dict(c) for c in existing]}}
    assert update_condition(js, opts, "T1") is expected_update
    got = [(c["type"], c["status"], c["reason"], c["lastTransitionTime"]) for c in js["status"]["conditions"]]
    assert got == expected


# ------------------------------------------------------------------------------------------ statuses
def _counts(statuses: list[Obj]) -> dict[str, tuple[int, ...]]:
    return {
        s["name"]: (s["ready"], s["succeeded"], s["failed"], s["active"], s["suspended"]) for s in statuses
    }


def test_calculate_replicated_job_statuses() -> None:
    js = make_jobset(rjob("replicated-job-1", 1), rjob("replicated-job-2", 3))
    owned = ChildJobs(
        active=[
            child("j1", "replicated-job-1", parallelism=1, completions=2, ready=1, succeeded=1),
            child("j2", "replicated-job-2", parallelism=5, completions=None, ready=2, succeeded=3),
            child("j3", "replicated-job-2", parallelism=3, completions=2, ready=1, succeeded=1),
            child("j4", "replicated-job-2", parallelism=2, completions=3, ready=2, succeeded=1, active=2),
            child("j5", "replicated-job-2", parallelism=4, completions=5, ready=2, succeeded=1, suspend=True),
            child("j6", "not-in-spec", ready=1),
            {"metadata": {"name": "j7"}, "spec": {"parallelism": 1}, "status": {"ready": 1}},
        ],
        successful=[child("s1", "replicated-job-1")],
        failed=[child("f1", "replicated-job-2"), child("f2", "replicated-job-2")],
        previous=[child("p1", "replicated-job-1", ready=1)],
    )
    statuses = calculate_replicated_job_statuses(js, owned)
    assert _counts(statuses) == {"replicated-job-1": (1, 1, 0, 0, 0), "replicated-job-2": (3, 0, 2, 1, 1)}


def test_no_jobs_still_gives_one_zero_entry_per_replicated_job() -> None:
    statuses = calculate_replicated_job_statuses(make_jobset(rjob("a"), rjob("b", 3)), ChildJobs())
    assert statuses == [
        {"name": n, "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0} for n in ("a", "b")
    ]


def test_replicated_jobs_status_is_stored_in_descending_name_order_and_compared_semantically() -> None:
    js = make_jobset(rjob("a"), rjob("c"), rjob("b"))
    opts = StatusUpdate(now=T0)
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, ChildJobs()), opts)
    assert [s["name"] for s in js["status"]["replicatedJobsStatus"]] == ["c", "b", "a"]
    assert opts.should_update

    again = StatusUpdate(now=T0)
    js["status"]["replicatedJobsStatus"].reverse()
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, ChildJobs()), again)
    assert not again.should_update
    assert [s["name"] for s in js["status"]["replicatedJobsStatus"]] == ["c", "b", "a"]

    changed = StatusUpdate(now=T0)
    owned = ChildJobs(successful=[child("js-b-0", "b")])
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, owned), changed)
    assert changed.should_update
    assert _counts(js["status"]["replicatedJobsStatus"])["b"] == (0, 1, 0, 0, 0)


def test_restart_arrays_are_carried_over_only_with_the_gate() -> None:
    js = make_jobset(rjob("a", 2))
    js["status"] = {
        "replicatedJobsStatus": [{"name": "a", "jobRestarts": [1, 0], "jobRestartsCountTowardsMax": [1, 0]}]
    }
    (with_gate,) = calculate_replicated_job_statuses(js, ChildJobs(), restart_job=True)
    (without,) = calculate_replicated_job_statuses(js, ChildJobs())
    assert (with_gate["jobRestarts"], with_gate["jobRestartsCountTowardsMax"]) == ([1, 0], [1, 0])
    assert "jobRestarts" not in without


# ================================================================================== controller on a cluster
class Env:
    """An API server (with the JobSet kind registered as a bare custom resource), the garbage collector,
    and the controller under test. Job statuses are written by hand, as the Job controller would."""

    def __init__(self, *, gc: bool = True, gates: FeatureGates | None = None) -> None:
        self.clock = Clock()
        self.server = ApiServer(self.clock, random.Random(0))
        register_builtin(self.server)
        self.server.register(
            ResourceType(
                "JobSet", api.API_VERSION, "jobsets", generation="custom", unconditional_update=False
            )
        )
        if gc:
            GarbageCollector(self.clock, self.server)
        self.client = LocalClient(self.server)
        self.controller = JobSetController(self.client, self.clock, gates=gates)
        self.job_log: list[tuple[str, str, str, tuple[str, ...]]] = []
        self.server.watch("Job", self._log_job)

    def _log_job(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        deleting = "deleting" if meta.get("deletionTimestamp") else ""
        self.job_log.append((event.type, meta["name"], deleting, tuple(meta.get("finalizers") or ())))

    def settle(self, seconds: float = 1.0) -> None:
        """Run everything due in the next ``seconds`` and end at that time."""
        until = self.clock.now + seconds
        self.clock.run(until)
        self.clock.advance_to(until)

    def create(self, js: Obj) -> None:
        del js["metadata"]["uid"]
        self.client.create(js)
        self.settle()

    def js(self) -> Obj:
        return self.client.get("JobSet", NS, "js")

    def update_spec(self, **changes: Any) -> None:
        js = self.js()
        js["spec"].update(changes)
        self.client.update(js)
        self.settle()

    def job_names(self) -> list[str]:
        return [j["metadata"]["name"] for j in self.client.list("Job", NS)]

    def job(self, name: str) -> Obj:
        return self.client.get("Job", NS, name)

    def set_status(self, *names: str, settle: bool = True, **status: Any) -> None:
        for name in names:
            job = self.job(name)
            job["status"] = {**job.get("status", {}), **status}
            self.client.update_status(job)
        if settle:
            self.settle()

    def ready(self, *names: str) -> None:
        self.set_status(*names, active=1, ready=1)

    def finish(
        self,
        name: str,
        cond: str,
        *,
        reason: str = "",
        message: str = "",
        at: float | None = None,
        settle: bool = True,
    ) -> None:
        when = rfc3339(self.clock.now if at is None else at)
        condition = {
            "type": cond,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": when,
            "lastProbeTime": when,
        }
        self.set_status(
            name,
            settle=settle,
            active=0,
            ready=0,
            conditions=[condition],
            **({"succeeded": 1} if cond == "Complete" else {"failed": 1}),
        )

    def conditions(self) -> list[tuple[str, str, str, str]]:
        return [
            (c["type"], c["status"], c["reason"], c["message"])
            for c in self.js()["status"].get("conditions", ())
        ]

    def events(self) -> list[tuple[str, str, str]]:
        events = self.client.list("Event", NS)  # names end in the creation time's hex nanoseconds
        return [(e["type"], e["reason"], e["note"]) for e in events]

    def counts(self) -> dict[str, tuple[int, ...]]:
        return _counts(self.js()["status"]["replicatedJobsStatus"])


IN_PROGRESS = (
    "StartupPolicyInProgress",
    "True",
    "InOrderStartupPolicyInProgress",
    "in order startup policy is in progress",
)
IN_PROGRESS_DONE = ("StartupPolicyInProgress", "False", *IN_PROGRESS[2:])
COMPLETED_STARTUP = (
    "StartupPolicyCompleted",
    "True",
    "InOrderStartupPolicyCompleted",
    "in order startup policy has completed",
)


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


def test_volume_claim_policies_create_pvcs_owned_only_when_deleted_with_the_jobset() -> None:
    env = Env()
    env.server.register(ResourceType("PersistentVolumeClaim", "v1", "persistentvolumeclaims"))
    pod = pod_template()
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "ckpt", "mountPath": "/ckpt"}]
    policies = [
        {
            "templates": [
                {"metadata": {"name": "ckpt", "labels": {"tier": "fast"}}, "spec": {"resources": {}}}
            ],
            "retentionPolicy": {"whenDeleted": "Delete"},
        },
        {
            "templates": [{"metadata": {"name": "logs"}, "spec": {}}],
            "retentionPolicy": {"whenDeleted": "Retain"},
        },
    ]
    env.create(make_jobset(rjob("a", pod=pod), volumeClaimPolicies=policies))
    ckpt = env.client.get("PersistentVolumeClaim", NS, "ckpt-js")
    logs = env.client.get("PersistentVolumeClaim", NS, "logs-js")
    assert ckpt["metadata"]["labels"] == {"tier": "fast", api.JOBSET_NAME_KEY: "js"}
    assert [r["kind"] for r in ckpt["metadata"]["ownerReferences"]] == ["JobSet"]
    assert "ownerReferences" not in logs["metadata"]
    assert env.job("js-a-0")["spec"]["template"]["spec"]["volumes"] == [
        {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt-js"}}
    ]


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
    events = client.list("Event", NS)  # names end in the creation time's hex nanoseconds
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
    assert _counts(status["replicatedJobsStatus"]) == {"b": (3, 0, 0, 3, 0), "a": (1, 0, 0, 1, 0)}


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


def test_event_recorder_names_series_and_expiry() -> None:
    env = Env()
    recorder = EventRecorder(env.client, env.clock)
    regarding = {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "", "uid": "u", "resourceVersion": "7"},
    }
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "first")
    recorder.eventf(regarding, None, "Normal", "Other", "Reconciling", "n")
    env.settle(1)
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "second note, same series")
    first, other = env.client.list("Event", "default")
    unix_nanos = 1735689600 * 10**9
    assert first["metadata"]["name"] == f"js.{unix_nanos:x}"
    assert other["metadata"]["name"] == f"js.{unix_nanos + 1:x}"
    assert first["regarding"] == {
        "kind": "JobSet",
        "name": "js",
        "uid": "u",
        "apiVersion": api.API_VERSION,
        "resourceVersion": "7",
    }
    assert (first["note"], first["eventTime"]) == ("first", "2025-01-01T00:00:00.000000Z")
    assert first["series"] == {"count": 2, "lastObservedTime": "2025-01-01T00:00:01.000000Z"}
    assert first["reportingInstance"] == "jobset-jobset-controller-manager"
    env.settle(6 * 60 + 1)
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "after the series ended")
    assert len(env.client.list("Event", "default")) == 3
