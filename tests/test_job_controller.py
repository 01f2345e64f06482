"""The batch/v1 Job controller emulator against upstream semantics (shared/reference/kubernetes.md §1).

Most tests run the controller on a :class:`Harness`: API server, garbage collector and Job controller
on one virtual clock, with no scheduler and no kubelet. The tests move pods through their phases
themselves (a tiny stand-in kubelet only finishes deleted pods), so every transition happens at a known
virtual time and the controller's own timing (1 s batching, 10 s x 2^n back-off) is asserted exactly.
The last tests run a full :class:`fakecluster.cluster.Cluster` end to end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from fakecluster.api.core import Pod
from fakecluster.api.objects import Obj, clone, owner_reference
from fakecluster.api.validation import validate_model
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.client import LocalClient
from fakecluster.clock import Clock, rfc3339
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.garbage_collector import GarbageCollector
from fakecluster.controllers.job.indexed_job_utils import format_indexes, parse_indexes
from fakecluster.controllers.job.job_controller import JobController
from fakecluster.controllers.job.pods import UNKNOWN_INDEX, PodFactory
from fakecluster.kubelet.pod_timings import PodTimings

NS = "default"
TRACKING = "batch.kubernetes.io/job-tracking"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")


def ts(seconds: float) -> str:
    return rfc3339(seconds)


class Harness:
    """The parts of a cluster the Job controller talks to, plus hand-driven pods.

    ``terminate_after`` is how long the stand-in kubelet takes to stop a deleted, bound pod: it then
    marks it ``Failed`` and deletes it with grace 0, as the real kubelet does (the pod object stays
    while the tracking finalizer remains). ``None`` leaves deleted pods to the test.
    """

    def __init__(self, terminate_after: float | None = 2.0) -> None:
        self.config = ClusterConfig()
        self.clock = Clock()
        self.server = ApiServer(self.clock, random.Random("0/apiserver"))
        register_builtin(self.server)
        self.gc = GarbageCollector(self.clock, self.server)
        self.api = LocalClient(self.server)
        self.terminate_after = terminate_after
        self.server.watch("Pod", self._kubelet)
        self.jobs = JobController(self)  # type: ignore[arg-type]

    # the subset of Cluster the controller uses
    def client(self, user: str = "admin") -> LocalClient:
        return LocalClient(self.server, user)

    def rng(self, component: str) -> random.Random:
        return random.Random(f"0/{component}")

    # ------------------------------------------------------------------ time
    def run_until(self, when: float) -> None:
        self.clock.run(when)
        self.clock.advance_to(when)

    def at(self, when: float, action: Callable[..., Any], *args: Any) -> None:
        self.clock.call_at(when, action, *args)

    # ------------------------------------------------------------------ objects
    def create_job(self, name: str = "j", **spec: Any) -> Obj:
        template_spec = spec.pop("template_spec", None) or {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
                "spec": {**spec, "template": {"spec": template_spec}}}
        return self.api.create(body)

    def job(self, name: str = "j") -> Obj:
        return self.api.get("Job", NS, name)

    def status(self, name: str = "j") -> Obj:
        return self.job(name).get("status") or {}

    def pods(self, job: str = "j") -> list[Obj]:
        return self.api.list("Pod", NS, labels={"batch.kubernetes.io/job-name": job})

    def pod_names(self, job: str = "j") -> list[str]:
        return [p["metadata"]["name"] for p in self.pods(job)]

    def pod_by_index(self, index: int, job: str = "j") -> Obj:
        [pod] = [p for p in self.pods(job) if p["metadata"]["labels"].get(INDEX_KEY) == str(index)
                 and p["metadata"].get("deletionTimestamp") is None]
        return pod

    def add_pod(self, job: Obj, name: str, phase: str, *, index: int | None = None,
                annotations: dict[str, str] | None = None, exit_code: int | None = None,
                container: str = "c", restarts: int = 0, finished_at: float = 0.0) -> None:
        """A pod of ``job`` made by hand, as upstream's ``buildPod()...trackingFinalizer()``: a terminated
        one finished at ``finished_at``, a Running one is bound to the node."""
        meta = job["metadata"]
        annotations = dict(annotations or {})
        labels = {"batch.kubernetes.io/job-name": meta["name"], "controller-uid": meta["uid"],
                  "batch.kubernetes.io/controller-uid": meta["uid"]}
        if index is not None:
            annotations[INDEX_KEY] = labels[INDEX_KEY] = str(index)
        self.api.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": NS, "annotations": annotations, "finalizers": [TRACKING],
            "labels": labels, "ownerReferences": [owner_reference(job)],
        }, "spec": {"restartPolicy": job["spec"]["template"]["spec"]["restartPolicy"],
                    "containers": [{"name": container, "image": "busybox"}]}})
        if phase == "Running":
            self.server.bind(NS, name, "node")
        state: Obj = {"waiting": {"reason": "ContainerCreating"}}
        if phase in ("Succeeded", "Failed"):
            code = (0 if phase == "Succeeded" else 1) if exit_code is None else exit_code
            at = ts(finished_at)
            state = {"terminated": {"exitCode": code, "finishedAt": at, "startedAt": at}}
        elif phase == "Running":
            state = {"running": {"startedAt": self.clock.timestamp()}}
        self._set_status(name, {"phase": phase, "containerStatuses": [
            {"name": container, "ready": False, "restartCount": restarts, "state": state}]})

    # ------------------------------------------------------------------ pod phases, by hand
    def _set_status(self, name: str, status: Obj) -> None:
        pod = self.api.get("Pod", NS, name)
        pod["status"] = {**pod.get("status", {}), **status}
        self.api.update_status(pod)

    def run_pod(self, name: str, *, ready: bool = True, restarts: int = 0) -> None:
        if not self.api.get("Pod", NS, name)["spec"].get("nodeName"):
            self.server.bind(NS, name, "node")
        now = self.clock.timestamp()
        self._set_status(name, {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": str(ready), "lastTransitionTime": now}],
            "containerStatuses": [{"name": "c", "ready": ready, "restartCount": restarts,
                                   "state": {"running": {"startedAt": now}}}],
        })

    def finish_pod(self, name: str, exit_code: int = 0, conditions: tuple[Obj, ...] = ()) -> None:
        now = self.clock.timestamp()
        self._set_status(name, {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "conditions": [*conditions, {"type": "Ready", "status": "False", "lastTransitionTime": now}],
            "containerStatuses": [{"name": "c", "ready": False, "restartCount": 0, "state": {
                "terminated": {"exitCode": exit_code, "finishedAt": now, "startedAt": now}}}],
        })

    def run_all(self, job: str = "j") -> None:
        for name in self.pod_names(job):
            self.run_pod(name)

    def _kubelet(self, event: WatchEvent) -> None:
        pod = event.object
        meta = pod["metadata"]
        newly_deleted = meta.get("deletionTimestamp") and not (event.old or {}).get("metadata", {}).get(
            "deletionTimestamp")
        if event.type == "DELETED" or not newly_deleted or self.terminate_after is None:
            return
        if pod["spec"].get("nodeName") and pod["status"].get("phase") not in ("Succeeded", "Failed"):
            self.at(self.clock.now + self.terminate_after, self._stop, meta["name"], meta["uid"])

    def _stop(self, name: str, uid: str) -> None:
        try:
            pod = self.api.get("Pod", NS, name)
        except ApiError:
            return
        if pod["metadata"]["uid"] != uid:
            return
        self.finish_pod(name, exit_code=137)
        self.api.delete("Pod", NS, name, grace_period_seconds=0)


def condition(status: Obj, cond_type: str) -> Obj | None:
    return next((c for c in status.get("conditions") or () if c["type"] == cond_type), None)


def condition_types(status: Obj) -> list[str]:
    return [c["type"] for c in status.get("conditions") or ()]


POD_CONTROL_REASONS = ("SuccessfulCreate", "SuccessfulDelete", "FailedCreate", "FailedDelete")


def events(h: Harness, *, pod_control: bool = False) -> list[tuple[str, str, str]]:
    """The Job events in order; the per-pod RealPodControl events only when asked for."""
    return [(e["type"], e["reason"], e["note"]) for e in sorted(h.api.list("Event", NS),
                                                                key=lambda e: e["metadata"]["name"])
            if pod_control or e["reason"] not in POD_CONTROL_REASONS]


# ---------------------------------------------------------------------- pod shape
def test_indexed_pods_carry_index_name_label_annotation_hostname_and_env() -> None:
    h = Harness()
    h.create_job(completions=3, parallelism=3, completionMode="Indexed", template_spec={
        "restartPolicy": "Never", "hostname": "user-set",
        "initContainers": [{"name": "init", "image": "busybox"}],
        "containers": [
            {"name": "c", "image": "busybox"},
            {"name": "own", "image": "busybox", "env": [{"name": "JOB_COMPLETION_INDEX", "value": "x"}]},
        ],
    })
    job = h.job()
    h.run_until(0)
    pods = h.pods()
    assert sorted(p["metadata"]["labels"][INDEX_KEY] for p in pods) == ["0", "1", "2"]
    index_env = {"name": "JOB_COMPLETION_INDEX",
                 "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX_KEY}']"}}}
    for pod in pods:
        meta, spec = pod["metadata"], pod["spec"]
        index = meta["labels"][INDEX_KEY]
        assert meta["generateName"] == f"j-{index}-"
        assert meta["name"].startswith(f"j-{index}-") and len(meta["name"]) == len(f"j-{index}-") + 5
        assert meta["annotations"][INDEX_KEY] == index
        assert meta["labels"]["batch.kubernetes.io/job-name"] == "j"
        assert meta["labels"]["controller-uid"] == job["metadata"]["uid"]
        assert spec["hostname"] == f"j-{index}"
        assert spec["initContainers"][0]["env"] == [index_env]
        assert spec["containers"][0]["env"] == [index_env]
        assert spec["containers"][1]["env"] == [{"name": "JOB_COMPLETION_INDEX", "value": "x"}]
        assert meta["finalizers"] == [TRACKING]
        assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "j",
                                            "uid": job["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]


def test_nonindexed_pods_have_job_prefix_and_no_index() -> None:
    h = Harness()
    h.create_job(parallelism=2, completions=2)
    h.run_until(0)
    pods = h.pods()
    assert len(pods) == 2
    for pod in pods:
        assert pod["metadata"]["generateName"] == "j-"
        assert INDEX_KEY not in pod["metadata"]["labels"]
        assert "annotations" not in pod["metadata"]
        assert "hostname" not in pod["spec"]
        assert "env" not in pod["spec"]["containers"][0]


IGNORE_DISRUPTION = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}


@pytest.mark.parametrize("shape", [
    {"completions": 3, "parallelism": 2},
    {"completions": 3, "parallelism": 3, "completionMode": "Indexed"},
    {"completions": 3, "parallelism": 3, "completionMode": "Indexed", "backoffLimitPerIndex": 1,
     "podFailurePolicy": IGNORE_DISRUPTION},
])
def test_pods_built_from_a_stored_job_pass_the_pod_schema(shape: dict[str, Any]) -> None:
    """The premise on which the Job controller creates pods with ``schema_valid=True``."""
    h = Harness()
    template = {"metadata": {"labels": {"app": "x"}, "annotations": {"note": "y"}, "finalizers": ["keep/me"]},
                "spec": {"restartPolicy": "Never", "subdomain": "svc", "nodeSelector": {"pool": "a"},
                         "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
                         "initContainers": [{"name": "init", "image": "busybox"},
                                            {"name": "side", "image": "envoy", "restartPolicy": "Always"}],
                         "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "1"],
                                         "env": [{"name": "A", "value": "1"}],
                                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    job = h.api.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
                        "spec": {**shape, "template": template}})
    indexed = job["spec"]["completionMode"] == "Indexed"
    per_index = "backoffLimitPerIndex" in shape
    factory = PodFactory(job, indexed, (lambda index: {"count": str(index)}) if per_index else None)
    for index in (0, 2) if indexed else (UNKNOWN_INDEX,):
        pod = factory.pod(index)
        pod["metadata"]["name"] = pod["metadata"]["generateName"] + "abcde"
        assert validate_model(Pod, pod)[1] == []


@pytest.mark.parametrize("mode", ["NonIndexed", "Indexed"])
def test_creating_pods_leaves_the_stored_job_template_unchanged(mode: str) -> None:
    """Pods are donated to the API server sharing parts of the Job's stored template (PodFactory)."""
    h = Harness()
    h.create_job(completions=3, parallelism=3, completionMode=mode, template_spec={
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}],
        "tolerations": [{"operator": "Exists"}]})  # DefaultTolerationSeconds adds nothing (copies nothing)
    template = clone(h.job()["spec"]["template"])
    h.run_until(0)
    assert len(h.pods()) == 3
    assert h.job()["spec"]["template"] == template


# ---------------------------------------------------------------------- parallelism / completions
def test_parallelism_caps_active_pods_and_lowest_pending_index_is_created_first() -> None:
    h = Harness()
    h.create_job(completions=4, parallelism=2, completionMode="Indexed")
    h.run_until(0)
    assert sorted(p["metadata"]["labels"][INDEX_KEY] for p in h.pods()) == ["0", "1"]
    h.run_all()
    h.finish_pod(h.pod_by_index(1)["metadata"]["name"])
    h.run_until(1.5)
    assert sorted(p["metadata"]["labels"][INDEX_KEY] for p in h.pods()) == ["0", "1", "2"]
    assert h.status()["completedIndexes"] == "1"
    assert h.status()["active"] == 2


def test_work_queue_job_stops_creating_after_first_success() -> None:
    h = Harness()
    h.create_job(parallelism=3)  # completions unset: "work queue" mode
    h.run_until(0)
    assert len(h.pods()) == 3
    h.run_all()
    first, *rest = h.pod_names()
    h.finish_pod(first)
    h.run_until(5)
    assert len(h.pods()) == 3
    assert condition(h.status(), "Complete") is None
    for name in rest:
        h.finish_pod(name)
    h.run_until(10)
    assert condition(h.status(), "Complete") is not None
    assert h.status()["succeeded"] == 3


def test_at_most_500_creations_per_sync() -> None:
    h = Harness()
    h.create_job(completions=600, parallelism=600)
    h.run_until(0)
    assert len(h.pods()) == 500
    h.run_until(1)
    assert len(h.pods()) == 600


# ---------------------------------------------------------------------- status timing
def test_status_reflects_pod_changes_one_second_later() -> None:
    h = Harness()
    h.create_job()
    h.run_until(0)
    assert h.status()["active"] == 1
    assert h.status()["ready"] == 0
    assert h.status()["startTime"] == ts(0)
    h.run_until(5)
    h.run_all()
    h.run_until(5.999)
    assert h.status()["ready"] == 0
    h.run_until(6)
    assert h.status()["ready"] == 1


def test_ready_excludes_terminating_pods_which_are_counted_separately() -> None:
    h = Harness(terminate_after=None)
    h.create_job(parallelism=2, completions=2)
    h.run_until(0)
    h.run_all()
    h.run_until(2)
    assert (h.status()["active"], h.status()["ready"], h.status()["terminating"]) == (2, 2, 0)
    h.api.delete("Pod", NS, h.pod_names()[0])
    h.run_until(3)
    assert (h.status()["ready"], h.status()["terminating"]) == (1, 1)


# ---------------------------------------------------------------------- success
def test_indexed_success_is_two_step_with_verbatim_reason_and_interval_indexes() -> None:
    h = Harness()
    h.create_job(completions=6, parallelism=6, completionMode="Indexed")
    h.run_until(0)
    h.run_all()
    for index in (0, 1, 3, 4, 5):
        h.finish_pod(h.pod_by_index(index)["metadata"]["name"])
    h.run_until(4)
    status = h.status()
    assert status["completedIndexes"] == "0,1,3-5"
    assert status["succeeded"] == 5
    assert condition_types(status) == []
    h.run_until(10)
    h.finish_pod(h.pod_by_index(2)["metadata"]["name"])
    h.run_until(11)
    status = h.status()
    assert status["completedIndexes"] == "0-5"
    assert status["succeeded"] == 6
    assert condition_types(status) == ["SuccessCriteriaMet", "Complete"]
    for cond in status["conditions"]:
        assert cond["status"] == "True"
        assert cond["reason"] == "CompletionsReached"
        assert cond["message"] == "Reached expected number of succeeded pods"
        assert cond["lastProbeTime"] == cond["lastTransitionTime"] == ts(11)
    assert status["completionTime"] == ts(11)
    assert "active" not in status
    assert status["terminating"] == 0
    assert status["uncountedTerminatedPods"] == {}
    assert all(TRACKING not in (p["metadata"].get("finalizers") or ()) for p in h.pods())
    assert events(h) == [("Normal", "Completed", "Job completed")]


def test_completed_indexes_formatting() -> None:
    assert format_indexes(parse_indexes("3,4", 10)) == "3,4"
    assert format_indexes(parse_indexes("3,4,5", 10)) == "3-5"
    assert format_indexes(parse_indexes("0,2,3,4,7,8", 10)) == "0,2-4,7,8"
    assert format_indexes(parse_indexes("1-9", 5)) == "1-4"


def test_terminated_pod_goes_through_uncounted_then_finalizer_removal_then_counter() -> None:
    h = Harness()
    h.create_job()
    h.run_until(0)
    [pod] = h.pods()
    uid = pod["metadata"]["uid"]
    trace: list[tuple[str, Any]] = []

    def watch(event: WatchEvent) -> None:
        obj = event.object
        if event.kind == "Job":
            status = obj.get("status") or {}
            trace.append(("job", (status.get("uncountedTerminatedPods"), status.get("succeeded"))))
        elif event.old is not None and TRACKING in (event.old["metadata"].get("finalizers") or ()) \
                and TRACKING not in (obj["metadata"].get("finalizers") or ()):
            trace.append(("finalizer removed", obj["metadata"]["uid"]))

    h.server.watch(None, watch)
    h.run_all()
    h.finish_pod(pod["metadata"]["name"])
    h.run_until(5)
    assert trace == [
        ("job", ({"succeeded": [uid]}, None)),  # also carries SuccessCriteriaMet
        ("finalizer removed", uid),
        ("job", ({}, 1)),  # Complete
    ]


def test_success_policy_ends_the_job_early_without_counting_the_deleted_pods_as_failed() -> None:
    h = Harness(terminate_after=2)
    h.create_job(completions=3, parallelism=3, completionMode="Indexed",
                 successPolicy={"rules": [{"succeededIndexes": "0"}]})
    h.run_until(0)
    h.run_all()
    h.run_until(5)
    h.finish_pod(h.pod_by_index(0)["metadata"]["name"])
    h.run_until(6)
    status = h.status()
    assert condition_types(status) == ["SuccessCriteriaMet"]
    met = condition(status, "SuccessCriteriaMet")
    assert met is not None
    assert (met["reason"], met["message"]) == ("SuccessPolicy", "Matched rules at index 0")
    assert status["terminating"] == 2
    h.run_until(9)
    status = h.status()
    assert condition_types(status) == ["SuccessCriteriaMet", "Complete"]
    assert condition(status, "Complete")["reason"] == "SuccessPolicy"  # type: ignore[index]
    assert (status["succeeded"], "failed" in status, status["completionTime"]) == (1, False, ts(9))


def test_elastic_indexed_scale_down_removes_out_of_range_indexes() -> None:
    h = Harness(terminate_after=None)
    h.create_job(completions=4, parallelism=4, completionMode="Indexed")
    h.run_until(0)
    h.run_all()
    h.run_until(5)
    job = h.job()
    job["spec"]["completions"] = job["spec"]["parallelism"] = 2
    h.api.update(job)
    h.run_until(5)
    deleted = sorted(p["metadata"]["labels"][INDEX_KEY] for p in h.pods()
                     if p["metadata"].get("deletionTimestamp"))
    assert deleted == ["2", "3"]
    assert (h.status()["active"], h.status()["terminating"]) == (2, 2)
    assert "failed" not in h.status()


# ---------------------------------------------------------------------- failure and back-off
def test_backoff_limit_zero_fails_after_active_pods_terminate() -> None:
    h = Harness(terminate_after=2)
    h.create_job(parallelism=2, completions=2, backoffLimit=0)
    h.run_until(0)
    h.run_all()
    failing, running = h.pod_names()
    h.run_until(5)
    h.finish_pod(failing, exit_code=1)
    h.run_until(6)
    status = h.status()
    assert condition_types(status) == ["FailureTarget"]
    target = condition(status, "FailureTarget")
    assert target is not None
    assert (target["reason"], target["message"]) == BACKOFF_LIMIT_EXCEEDED
    assert target["lastTransitionTime"] == ts(6)
    assert h.api.get("Pod", NS, running)["metadata"]["deletionTimestamp"] is not None
    assert (status.get("active", 0), status["terminating"], status["failed"]) == (0, 1, 2)
    h.run_until(8.5)  # the running pod stopped at 8
    assert condition(h.status(), "Failed") is None
    h.run_until(9)
    status = h.status()
    assert condition_types(status) == ["FailureTarget", "Failed"]
    failed = condition(status, "Failed")
    assert failed is not None
    assert (failed["reason"], failed["message"]) == BACKOFF_LIMIT_EXCEEDED
    assert failed["lastProbeTime"] == failed["lastTransitionTime"] == ts(9)
    assert "completionTime" not in status
    assert (status.get("active", 0), status["terminating"], status["failed"]) == (0, 0, 2)
    assert len(h.pods()) == 1  # the failed pod stays; nothing was recreated
    assert events(h) == [("Warning", *BACKOFF_LIMIT_EXCEEDED)]


def test_backoff_limit_two_recreates_after_10s_then_20s_then_fails() -> None:
    h = Harness()
    h.create_job(backoffLimit=2)
    h.run_until(0)
    creation_times = []

    def fail_current(at: float) -> None:
        h.run_until(at)
        [name] = [p["metadata"]["name"] for p in h.pods() if p["status"]["phase"] != "Failed"]
        creation_times.append(h.api.get("Pod", NS, name)["metadata"]["creationTimestamp"])
        h.run_pod(name)
        h.finish_pod(name, exit_code=1)

    fail_current(10)
    h.run_until(19.999)
    assert len(h.pods()) == 1
    assert h.status()["failed"] == 1
    fail_current(25)  # the replacement was created at 10 + 10 s
    h.run_until(44.999)
    assert len(h.pods()) == 2
    fail_current(50)  # created at 25 + 20 s
    assert creation_times == [ts(0), ts(20), ts(45)]
    h.run_until(51)
    status = h.status()
    assert status["failed"] == 3
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert condition(status, "Failed")["reason"] == "BackoffLimitExceeded"  # type: ignore[index]
    h.run_until(200)
    assert len(h.pods()) == 3


def test_success_resets_the_backoff() -> None:
    h = Harness()
    h.create_job(completions=4, parallelism=2, backoffLimit=10)
    h.run_until(0)
    failing, succeeding = h.pod_names()
    h.run_all()
    h.run_until(5)
    h.finish_pod(failing, exit_code=1)
    h.run_until(7)  # the back-off would hold the replacement until 15
    assert len(h.pods()) == 2
    h.finish_pod(succeeding)
    h.run_until(8)  # a success resets it: both free slots are filled at the next sync
    fresh = [p for p in h.pods() if p["metadata"]["name"] not in (failing, succeeding)]
    assert [p["metadata"]["creationTimestamp"] for p in fresh] == [ts(8), ts(8)]


def test_restart_policy_on_failure_counts_container_restarts() -> None:
    h = Harness()
    h.create_job(backoffLimit=2, template_spec={
        "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]})
    h.run_until(0)
    [name] = h.pod_names()
    h.run_pod(name, restarts=1)
    h.run_until(5)
    assert condition(h.status(), "FailureTarget") is None
    h.run_pod(name, restarts=2)
    h.run_until(10)
    target = condition(h.status(), "FailureTarget")
    assert target is not None and target["reason"] == "BackoffLimitExceeded"


def test_active_deadline_fails_the_job_at_start_plus_deadline() -> None:
    h = Harness(terminate_after=2)
    h.create_job(activeDeadlineSeconds=30)
    h.run_until(0)
    h.run_all()
    h.run_until(29.999)
    assert condition_types(h.status()) == []
    h.run_until(30)
    target = condition(h.status(), "FailureTarget")
    assert target is not None
    assert (target["reason"], target["message"]) == ("DeadlineExceeded",
                                                     "Job was active longer than specified deadline")
    assert target["lastTransitionTime"] == ts(30)
    h.run_until(33)
    failed = condition(h.status(), "Failed")
    assert failed is not None and failed["reason"] == "DeadlineExceeded"
    assert failed["lastTransitionTime"] == ts(33)


# ---------------------------------------------------------------------- deleted pods
def test_deleted_pod_counts_as_failed_and_is_replaced_with_the_same_index() -> None:
    h = Harness(terminate_after=60)
    h.create_job(completions=2, parallelism=2, completionMode="Indexed")
    h.run_until(0)
    h.run_all()
    doomed = h.pod_by_index(0)["metadata"]["name"]
    h.run_until(10)
    h.api.delete("Pod", NS, doomed)
    h.run_until(11)
    status = h.status()
    assert (status["failed"], status["active"], status["terminating"]) == (1, 1, 1)
    h.run_until(19.999)  # first failure: 10 s back-off from the deletion
    assert len(h.pods()) == 2
    h.run_until(20)
    replacement = h.pod_by_index(0)
    assert replacement["metadata"]["name"] != doomed
    assert replacement["metadata"]["creationTimestamp"] == ts(20)
    assert replacement["spec"]["hostname"] == "j-0"
    assert h.api.get("Pod", NS, doomed)["metadata"]["deletionTimestamp"] is not None  # coexists
    h.run_until(21)
    assert (h.status()["active"], h.status()["terminating"]) == (2, 1)


def test_pod_failure_policy_waits_for_failed_phase_then_applies_rules() -> None:
    h = Harness(terminate_after=None)
    h.create_job(backoffLimit=0, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]},
    ]})
    h.run_until(0)
    [first] = h.pod_names()
    h.run_pod(first)
    h.run_until(10)
    h.api.delete("Pod", NS, first)
    h.run_until(19)
    status = h.status()
    assert ("failed" not in status, status["terminating"], len(h.pods())) == (True, 1, 1)
    assert condition_types(status) == []  # with backoffLimit 0, counting it would have failed the Job
    h.finish_pod(first, exit_code=137, conditions=({"type": "DisruptionTarget", "status": "True"},))
    h.api.delete("Pod", NS, first, grace_period_seconds=0)
    h.run_until(40)
    assert "failed" not in h.status()  # matched the Ignore rule
    [second] = [n for n in h.pod_names() if n != first]
    h.run_pod(second)
    h.finish_pod(second, exit_code=42)
    h.run_until(45)
    status = h.status()
    assert condition_types(status) == ["FailureTarget", "Failed"]
    for cond in status["conditions"]:
        assert cond["reason"] == "PodFailurePolicy"
        assert cond["message"] == (f"Container c for pod {NS}/{second} failed with exit code 42 matching "
                                   "FailJob rule at index 0")
    assert status["failed"] == 1


# ---------------------------------------------------------------------- suspend / resume
def test_suspend_deletes_pods_uncounted_and_resume_recreates_and_resets_start_time() -> None:
    h = Harness(terminate_after=2)
    h.create_job(parallelism=2, completions=4)
    h.run_until(0)
    h.run_all()
    before = h.pod_names()
    h.run_until(10)
    job = h.job()
    job["spec"]["suspend"] = True
    h.api.update(job)
    h.run_until(10)
    status = h.status()
    suspended = condition(status, "Suspended")
    assert suspended == {"type": "Suspended", "status": "True", "reason": "JobSuspended",
                         "message": "Job suspended", "lastProbeTime": ts(10), "lastTransitionTime": ts(10)}
    assert (status.get("active", 0), status["ready"], status["terminating"]) == (0, 0, 2)
    assert all(p["metadata"].get("deletionTimestamp") for p in h.pods())
    assert all(TRACKING not in (p["metadata"].get("finalizers") or ()) for p in h.pods())
    h.run_until(15)
    assert h.pods() == []
    assert "failed" not in h.status()
    assert h.status()["terminating"] == 0
    # JobSet's resumeJob: clear startTime through the status endpoint, then unsuspend.
    h.run_until(30)
    job = h.job()
    del job["status"]["startTime"]
    h.api.update_status(job)
    job = h.job()
    job["spec"]["suspend"] = False
    h.api.update(job)
    h.run_until(30)
    status = h.status()
    assert condition(status, "Suspended") == {
        "type": "Suspended", "status": "False", "reason": "JobResumed", "message": "Job resumed",
        "lastProbeTime": ts(30), "lastTransitionTime": ts(30)}
    assert status["startTime"] == ts(30)
    after = h.pod_names()
    assert len(after) == 2 and not set(after) & set(before)
    assert events(h) == [("Normal", "Suspended", "Job suspended"), ("Normal", "Resumed", "Job resumed")]


def test_resume_resets_start_time_even_when_not_cleared() -> None:
    h = Harness()
    h.create_job()
    h.run_until(5)
    job = h.job()
    job["spec"]["suspend"] = True
    h.api.update(job)
    h.run_until(20)
    assert h.status()["startTime"] == ts(0)  # not cleared on suspend (<= 1.34)
    job = h.job()
    job["spec"]["suspend"] = False
    h.api.update(job)
    h.run_until(20)
    assert h.status()["startTime"] == ts(20)


def test_job_created_suspended_has_no_pods_no_start_time_and_no_false_condition_before() -> None:
    h = Harness()
    h.create_job(suspend=True)
    h.run_until(5)
    status = h.status()
    assert h.pods() == []
    assert "startTime" not in status
    assert condition_types(status) == ["Suspended"]


# ---------------------------------------------------------------------- deletion and ownership
def test_foreground_deletion_of_a_job_completes() -> None:
    h = Harness(terminate_after=2)
    h.create_job(parallelism=3, completions=3)
    h.run_until(0)
    h.run_all()
    h.run_until(10)
    h.api.delete("Job", NS, "j", propagation_policy="Foreground")
    h.run_until(10)
    assert h.job()["metadata"]["deletionTimestamp"] is not None
    assert all(TRACKING not in (p["metadata"].get("finalizers") or ()) for p in h.pods())
    assert len(h.pods()) == 3  # the kubelet has not stopped them yet
    h.run_until(13)
    assert h.pods() == []
    with pytest.raises(ApiError) as err:
        h.job()
    assert err.value.reason == "NotFound"


def test_orphaning_deletion_strips_the_tracking_finalizer_from_orphans() -> None:
    h = Harness()
    h.create_job(parallelism=2, completions=2)
    h.run_until(0)
    h.run_all()
    h.api.delete("Job", NS, "j")  # batch/v1 default: Orphan
    h.run_until(5)
    pods = h.pods()
    assert len(pods) == 2
    for pod in pods:
        assert "ownerReferences" not in pod["metadata"]
        assert TRACKING not in (pod["metadata"].get("finalizers") or ())
        assert pod["status"]["phase"] == "Running"


def test_background_deletion_leaves_finalizer_cleanup_to_the_orphan_worker() -> None:
    h = Harness(terminate_after=2)
    h.create_job(parallelism=2, completions=2)
    h.run_until(0)
    h.run_all()
    h.api.delete("Job", NS, "j", propagation_policy="Background")  # kubectl's default: Job gone at once
    h.run_until(1)
    assert len(h.pods()) == 2
    assert all(TRACKING not in (p["metadata"].get("finalizers") or ()) for p in h.pods())
    h.run_until(5)
    assert h.pods() == []


def test_pods_of_a_finished_job_lose_a_leftover_finalizer() -> None:
    h = Harness()
    h.create_job(completions=1, parallelism=1)
    h.run_until(0)
    [name] = h.pod_names()
    h.finish_pod(name)
    h.run_until(5)
    assert condition(h.status(), "Complete") is not None
    pod = h.api.get("Pod", NS, name)
    pod["metadata"]["finalizers"] = [TRACKING]  # e.g. re-added by hand
    h.api.update(pod)
    job = h.job()
    job["metadata"]["labels"] = {"touched": "yes"}  # any Job update triggers the cleanup
    h.api.update(job)
    h.run_until(6)
    assert TRACKING not in (h.api.get("Pod", NS, name)["metadata"].get("finalizers") or ())


def test_job_being_deleted_creates_no_pods() -> None:
    h = Harness(terminate_after=None)
    h.create_job(backoffLimit=5)
    h.run_until(0)
    job = h.job()
    job["metadata"]["finalizers"] = ["example.com/hold"]
    h.api.update(job)
    h.api.delete("Job", NS, "j", propagation_policy="Orphan")
    h.run_until(2)
    [name] = h.pod_names()
    h.run_pod(name)
    h.finish_pod(name, exit_code=1)
    h.run_until(100)
    assert h.pod_names() == [name]


def test_job_managed_by_another_controller_is_left_alone() -> None:
    h = Harness()
    h.create_job(managedBy="example.com/other")
    h.run_until(10)
    assert h.pods() == []
    assert h.status() == {}


# ---------------------------------------------------------------------- a whole cluster
def cluster(timings: PodTimings) -> Cluster:
    return Cluster(seed=0, config=ClusterConfig(behaviour=lambda _pod: timings))


def create_job(c: Cluster, **spec: Any) -> None:
    c.client().create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
                       "spec": {**spec, "template": {"spec": {
                           "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})


def test_cluster_runs_an_indexed_job_to_completion() -> None:
    c = cluster(PodTimings(exit_after=5.0))
    create_job(c, completions=4, parallelism=4, completionMode="Indexed")
    c.run(100)
    status = c.client().get("Job", NS, "j")["status"]
    # Pods run at 0 and exit 0 at 5; the pod events sync the Job one batch period later.
    assert condition_types(status) == ["SuccessCriteriaMet", "Complete"]
    assert status["completionTime"] == ts(6)
    assert (status["succeeded"], status["completedIndexes"], status["ready"]) == (4, "0-3", 0)
    pods = c.client().list("Pod", NS)
    assert len(pods) == 4
    assert all(TRACKING not in (p["metadata"].get("finalizers") or ()) for p in pods)


def test_cluster_recreates_failed_pods_after_the_backoff_then_fails_the_job() -> None:
    c = cluster(PodTimings(exit_after=2.0, exit_code=1))
    create_job(c, backoffLimit=1)
    c.run(100)
    pods = c.client().list("Pod", NS)
    assert sorted(p["metadata"]["creationTimestamp"] for p in pods) == [ts(0), ts(12)]  # failed at 2, +10 s
    status = c.client().get("Job", NS, "j")["status"]
    assert status["failed"] == 2
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert condition(status, "Failed")["lastTransitionTime"] == ts(14)  # type: ignore[index]


def test_cluster_replaces_a_deleted_pod_and_completes_a_foreground_deletion() -> None:
    c = cluster(PodTimings(terminate=3.0))
    api = c.client()
    create_job(c, parallelism=2, completions=2)
    c.run(10)
    c.clock.advance_to(10)
    victim = api.list("Pod", NS)[0]["metadata"]["name"]
    api.delete("Pod", NS, victim)
    c.run(30)
    status = api.get("Job", NS, "j")["status"]
    assert status["failed"] == 1
    names = {p["metadata"]["name"]: p["metadata"]["creationTimestamp"] for p in api.list("Pod", NS)}
    assert victim not in names  # stopped by the kubelet, then removed once its finalizer was
    assert sorted(names.values()) == [ts(0), ts(20)]  # deleted at 10: replaced after the 10 s back-off
    c.clock.advance_to(40)
    api.delete("Job", NS, "j", propagation_policy="Foreground")
    c.run(100)
    assert api.list("Job", NS) == []
    assert api.list("Pod", NS) == []
