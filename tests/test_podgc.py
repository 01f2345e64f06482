"""PodGC (``pkg/controller/podgc/gc_controller.go``): what finishes the pods a lost node leaves behind.
Passes fall on multiples of 20 s; times are exact."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_harness import PodWrites, fail_node_at, make_pod, run_to

from fakecluster.api.errors import NotFound
from fakecluster.api.objects import Obj, clone, get_condition
from fakecluster.clock import rfc3339
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import PodTimings

NS = "default"
PODGC_CONDITION = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                   "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"}
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}


def make_cluster(nodes: int = 3) -> Cluster:
    timings = PodTimings()
    return Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("n", count=nodes)],
                                                behaviour=lambda _pod: timings))


def make_job(**spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "nodeSelector": {
                "kubernetes.io/hostname": "n-1"}, "containers": [
                {"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}]}}, **spec}}


def gone(cluster: Cluster, name: str) -> bool:
    try:
        cluster.client().get("Pod", NS, name)
    except NotFound:
        return True
    return False


def test_pods_of_a_deleted_node_are_failed_and_removed_after_the_quarantine() -> None:
    cluster = make_cluster()
    api = cluster.client()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"))
    run_to(cluster, 401)
    writes = PodWrites(cluster)
    api.delete("Node", "", "n-1")  # at 401: passes at 420 (quarantine until 460), 440, 460
    run_to(cluster, 459.9)
    assert not gone(cluster, "a")
    run_to(cluster, 460)
    [(t1, e1, failed), (t2, e2, _)] = writes.of("a")
    assert (t1, e1, t2, e2) == (460, "MODIFIED", 460, "DELETED")
    assert failed["status"]["phase"] == "Failed"
    # the taint manager's DisruptionTarget (set at 365) is replaced: same status, so the time is kept
    expected = {**PODGC_CONDITION, "lastTransitionTime": rfc3339(365)}
    assert get_condition(failed, "DisruptionTarget") == expected
    assert cluster.pod_gc.passes == 3
    assert not cluster.run(100_000)  # quiescent again


def test_a_pod_bound_to_a_node_that_never_existed_is_collected() -> None:
    cluster = make_cluster()
    api = cluster.client()
    writes = PodWrites(cluster)
    api.create(make_pod("ghost", nodeName="nowhere"))
    run_to(cluster, 59.9)
    assert not gone(cluster, "ghost")
    run_to(cluster, 60)  # first pass at 20 quarantines "nowhere" until 60
    [(t, etype, failed), (_, last, _)] = [e for e in writes.of("ghost") if e[0] == 60]
    assert (t, etype, last) == (60, "MODIFIED", "DELETED")
    assert (failed["status"]["phase"], get_condition(failed, "DisruptionTarget")) == \
        ("Failed", {**PODGC_CONDITION, "lastTransitionTime": rfc3339(60)})


def test_a_node_that_comes_back_within_the_quarantine_keeps_its_pods() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_pod("ghost", nodeName="late"))
    run_to(cluster, 30)
    api.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    run_to(cluster, 200)
    assert not gone(cluster, "ghost")
    assert get_condition(api.get("Pod", NS, "ghost"), "DisruptionTarget") is None


def test_terminating_pods_on_an_out_of_service_node_are_force_deleted_once_it_is_not_ready() -> None:
    """The documented non-graceful node shutdown: ``out-of-service=nodeshutdown:NoExecute`` makes the taint
    manager delete the pods at once; they stay Terminating until the node is not Ready and PodGC runs."""
    cluster = make_cluster()
    api = cluster.client()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"))
    node = clone(api.get("Node", "", "n-1"))
    node["spec"]["taints"] = [OUT_OF_SERVICE]
    api.update(node)
    run_to(cluster, 10)
    evicted = clone(api.get("Pod", NS, "a"))
    assert evicted["metadata"]["deletionTimestamp"] == rfc3339(40)
    assert get_condition(evicted, "DisruptionTarget")["reason"] == "DeletionByTaintManager"  # type: ignore[index]
    writes = PodWrites(cluster)
    run_to(cluster, 59.9)  # out of service but still Ready: gcTerminating leaves it (passes at 20, 40)
    assert writes.of("a") == []
    run_to(cluster, 79.9)  # Ready=Unknown at 60; the next pass is at 80
    assert [e for _, e, o in writes.of("a") if o["status"].get("phase") == "Failed"] == []
    run_to(cluster, 80)
    [(t1, e1, failed), (t2, e2, _)] = [(t, e, o) for t, e, o in writes.of("a")
                                       if o["status"].get("phase") == "Failed"]
    assert (t1, e1, t2, e2) == (80, "MODIFIED", 80, "DELETED")
    # gcTerminating adds no condition of its own: the taint manager's stays
    assert get_condition(failed, "DisruptionTarget")["reason"] == "DeletionByTaintManager"  # type: ignore[index]


def test_out_of_service_taint_alone_does_not_touch_running_pods() -> None:
    cluster = make_cluster()
    api = cluster.client()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"))
    node = clone(api.get("Node", "", "n-1"))
    node["spec"]["taints"] = [{**OUT_OF_SERVICE, "effect": "NoSchedule"}]
    api.update(node)
    run_to(cluster, 200)
    assert api.get("Pod", NS, "a")["status"]["phase"] == "Running"  # not terminating: not PodGC's


def test_unscheduled_terminating_pod_is_failed_and_removed() -> None:
    cluster = make_cluster()
    api = cluster.client()
    created = make_pod("u", schedulerName="nobody")
    created["metadata"]["finalizers"] = ["example.com/hold"]
    api.create(created)
    run_to(cluster, 25)
    api.delete("Pod", NS, "u")
    run_to(cluster, 39.9)
    assert api.get("Pod", NS, "u")["status"]["phase"] == "Pending"
    run_to(cluster, 40)
    held = clone(api.get("Pod", NS, "u"))
    assert held["status"]["phase"] == "Failed"
    assert get_condition(held, "DisruptionTarget") is None
    assert not cluster.run(100_000)


@pytest.mark.parametrize("policy", [False, True])
def test_what_a_job_sees_when_its_node_is_lost_and_then_deleted(policy: bool) -> None:
    """Default TerminatingOrFailed: the failure counts when the taint manager deletes the pod. With a
    podFailurePolicy the Job waits for phase Failed, i.e. for PodGC, and Ignore matches DisruptionTarget."""
    cluster = make_cluster()
    api = cluster.client()
    spec: dict[str, Any] = {"backoffLimit": 0}
    if policy:
        spec["podFailurePolicy"] = {"rules": [{"action": "Ignore",
                                               "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    fail_node_at(cluster, 10, "n-1", make_job(**spec))
    run_to(cluster, 400)
    status = api.get("Job", NS, "j")["status"]
    if policy:  # the terminating pod is neither counted nor replaced
        assert ("failed" not in status, status["terminating"], len(api.list("Pod", NS))) == (True, 1, 1)
    else:  # counted at 366, but Failed waits (1.31+) until no pod is terminating: only FailureTarget
        assert status["failed"] == 1
        assert [(c["type"], c["reason"]) for c in status["conditions"]] == [
            ("FailureTarget", "BackoffLimitExceeded")]
    api.delete("Node", "", "n-1")
    run_to(cluster, 460.9)
    run_to(cluster, 461)  # PodGC at 460; the Job sees the Failed pod after its 1 s batching
    status = api.get("Job", NS, "j")["status"]
    if not policy:
        assert [(c["type"], c["lastTransitionTime"]) for c in status["conditions"]] == [
            ("FailureTarget", rfc3339(366)), ("Failed", rfc3339(461))]
        return
    assert "failed" not in status  # Ignore: not counted against backoffLimit 0
    assert not any(c["type"] == "Failed" for c in status.get("conditions") or ())
    pods = clone(api.list("Pod", NS))
    assert len(pods) == 1 and "deletionTimestamp" not in pods[0]["metadata"]  # the replacement
