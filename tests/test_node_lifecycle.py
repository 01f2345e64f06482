"""Node failure as Kubernetes handles it (``pkg/controller/nodelifecycle/node_lifecycle_controller.go``,
``pkg/controller/tainteviction/taint_eviction.go``): DefaultTolerationSeconds, the node lifecycle
controller, the taint-eviction controller, and what a Job sees. Every time is exact virtual time."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_harness import fail_node_at, make_pod, run_to

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone, get_condition
from fakecluster.api.watch import WatchEvent
from fakecluster.clock import rfc3339
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import PodTimings

NS = "default"
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY_TOLERATION = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                        "tolerationSeconds": 300}
UNREACHABLE_TOLERATION = {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": 300}
TAINT_MANAGER = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                 "reason": "DeletionByTaintManager",
                 "message": "Taint manager: deleting due to NoExecute taint"}


def make_cluster(*pools: NodePool, timings: PodTimings | None = None) -> Cluster:
    behaviour = timings or PodTimings()
    nodes = list(pools) or [NodePool("n", count=3)]
    return Cluster(seed=0, config=ClusterConfig(nodes=nodes, behaviour=lambda _pod: behaviour))


def make_job(**spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}]}}, **spec}}


def node(cluster: Cluster, name: str) -> Obj:
    return clone(cluster.client().get("Node", "", name))


def pod(cluster: Cluster, name: str = "p") -> Obj:
    return clone(cluster.client().get("Pod", NS, name))


def taints(cluster: Cluster, name: str) -> list[Obj]:
    return node(cluster, name)["spec"].get("taints") or []


class NodeWrites:
    """(time, taints, Ready status) of every write of one node."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster, self.name = cluster, name
        self.writes: list[tuple[float, list[Obj], str]] = []
        cluster.client().watch("Node", self._on)

    def _on(self, event: WatchEvent) -> None:
        if event.object["metadata"]["name"] == self.name:
            ready = get_condition(event.object, "Ready") or {}
            self.writes.append((self.cluster.clock.now, event.object["spec"].get("taints") or [],
                                ready.get("status", "")))


# ---------------------------------------------------------------------------------------------- admission
def test_default_tolerations_are_added_on_create() -> None:
    cluster = make_cluster()
    created = clone(cluster.client().create(make_pod(tolerations=[{"key": "gpu", "operator": "Exists"}])))
    assert created["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}, NOT_READY_TOLERATION,
                                              UNREACHABLE_TOLERATION]


@pytest.mark.parametrize(("tolerations", "added"), [
    ([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 6}],
     [NOT_READY_TOLERATION]),
    ([{"key": UNREACHABLE, "operator": "Exists"}], [NOT_READY_TOLERATION]),  # an empty effect matches
    ([{"operator": "Exists"}], []),  # an empty key tolerates both
    ([{"operator": "Exists", "effect": "NoSchedule"}], [NOT_READY_TOLERATION, UNREACHABLE_TOLERATION]),
    ([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}],
     [NOT_READY_TOLERATION, UNREACHABLE_TOLERATION]),
])
def test_default_tolerations_respect_existing_ones(tolerations: list[Obj], added: list[Obj]) -> None:
    cluster = make_cluster()
    created = clone(cluster.client().create(make_pod(tolerations=tolerations)))
    assert created["spec"]["tolerations"] == [*tolerations, *added]


def test_default_tolerations_are_not_duplicated_by_updates() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_pod())
    api.patch("Pod", NS, "p", {"metadata": {"labels": {"a": "b"}}})
    stored = clone(api.get("Pod", NS, "p"))
    stored["spec"]["tolerations"].append({"key": "gpu", "operator": "Exists"})
    api.update(stored)
    assert api.get("Pod", NS, "p")["spec"]["tolerations"] == [NOT_READY_TOLERATION, UNREACHABLE_TOLERATION,
                                                              {"key": "gpu", "operator": "Exists"}]
    stored = clone(api.get("Pod", NS, "p"))
    stored["spec"]["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
    api.update(stored)  # the plugin admits UPDATEs too: what an update drops comes back
    assert api.get("Pod", NS, "p")["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"},
                                                              NOT_READY_TOLERATION, UNREACHABLE_TOLERATION]


def test_job_pods_get_the_default_tolerations_but_the_template_does_not() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_job())
    run_to(cluster, 1)
    [job_pod] = clone(api.list("Pod", NS))
    assert job_pod["spec"]["tolerations"] == [NOT_READY_TOLERATION, UNREACHABLE_TOLERATION]
    assert "tolerations" not in api.get("Job", NS, "j")["spec"]["template"]["spec"]


# ---------------------------------------------------------------------------------------------- failNode
def test_failed_node_goes_unknown_after_the_grace_period() -> None:
    cluster = make_cluster()
    assert cluster.node_lifecycle.grace == 50.0
    fail_node_at(cluster, 10, "n-1")
    run_to(cluster, 59.9)
    assert get_condition(node(cluster, "n-1"), "Ready")["status"] == "True"  # type: ignore[index]
    run_to(cluster, 60)
    conditions = {c["type"]: c for c in node(cluster, "n-1")["status"]["conditions"]}
    assert {k: (c["status"], c["reason"], c["message"]) for k, c in conditions.items()} == {
        "Ready": ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."),
        "MemoryPressure": ("Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status."),
        "DiskPressure": ("Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status."),
        "PIDPressure": ("Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status."),
    }
    assert conditions["Ready"]["lastTransitionTime"] == rfc3339(60)
    assert conditions["Ready"]["lastHeartbeatTime"] == rfc3339(0)  # the kubelet's last post
    assert get_condition(node(cluster, "n-0"), "Ready")["status"] == "True"  # type: ignore[index]


def test_taints_noschedule_at_detection_and_noexecute_one_monitor_period_later() -> None:
    cluster = make_cluster()
    writes = NodeWrites(cluster, "n-1")
    fail_node_at(cluster, 10, "n-1")
    run_to(cluster, 100)
    no_schedule = {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": rfc3339(60)}
    no_execute = {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": rfc3339(65)}
    assert writes.writes == [(60, [], "Unknown"), (60, [no_schedule], "Unknown"),
                             (65, [no_schedule, no_execute], "Unknown")]


def test_pods_of_the_failed_node_are_marked_not_ready() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_pod("a", "n-1"))
    api.create(make_pod("b", "n-2"))
    run_to(cluster, 10)
    ready_before = get_condition(pod(cluster, "a"), "Ready")
    assert ready_before is not None and ready_before["status"] == "True"
    cluster.node_lifecycle.fail_node("n-1")
    run_to(cluster, 59)
    assert get_condition(pod(cluster, "a"), "Ready") == ready_before
    run_to(cluster, 60)
    assert get_condition(pod(cluster, "a"), "Ready") == {**ready_before, "status": "False",
                                                         "lastTransitionTime": rfc3339(60)}
    assert get_condition(pod(cluster, "a"), "ContainersReady")["status"] == "True"  # type: ignore[index]
    assert get_condition(pod(cluster, "b"), "Ready")["status"] == "True"  # type: ignore[index]


def test_taint_manager_deletes_the_pod_after_its_toleration_seconds() -> None:
    cluster = make_cluster()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"))
    run_to(cluster, 65)
    assert cluster.node_lifecycle.taint_eviction.scheduled_eviction(NS, "a") == 365  # taint seen + 300 s
    run_to(cluster, 364.9)
    assert get_condition(pod(cluster, "a"), "DisruptionTarget") is None
    assert "deletionTimestamp" not in pod(cluster, "a")["metadata"]
    run_to(cluster, 365)
    evicted = pod(cluster, "a")
    assert get_condition(evicted, "DisruptionTarget") == {**TAINT_MANAGER, "lastTransitionTime": rfc3339(365)}
    assert evicted["metadata"]["deletionTimestamp"] == rfc3339(395)  # the pod's own 30 s grace
    run_to(cluster, 2000)  # the kubelet is dead: nobody finishes the graceful deletion
    stuck = pod(cluster, "a")
    assert stuck["status"]["phase"] == "Running"
    assert stuck["metadata"]["deletionTimestamp"] == rfc3339(395)


@pytest.mark.parametrize(("toleration", "evicted_at"), [
    ({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}, 65),
    ({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 20}, 85),
    ({"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}, None),  # tolerated forever
])
def test_toleration_seconds_decide_when(toleration: Obj, evicted_at: float | None) -> None:
    cluster = make_cluster()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1", tolerations=[toleration]))
    times: list[float] = []
    cluster.client().watch("Pod", lambda e: times.append(cluster.clock.now)
                           if e.object["metadata"].get("deletionTimestamp") and not times else None)
    run_to(cluster, 1000)
    assert times == ([] if evicted_at is None else [evicted_at])


def test_job_counts_the_evicted_pod_and_reschedules_it_on_a_healthy_node() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_job(parallelism=3, completions=3))
    run_to(cluster, 10)
    pods = clone(api.list("Pod", NS))
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["n-0", "n-1", "n-2"]
    [victim] = [p for p in pods if p["spec"]["nodeName"] == "n-1"]
    cluster.node_lifecycle.fail_node("n-1")
    run_to(cluster, 61)  # Ready=False at 60, the Job sees it after its 1 s batching
    assert api.get("Job", NS, "j")["status"]["ready"] == 2
    run_to(cluster, 365.9)
    assert "failed" not in api.get("Job", NS, "j")["status"]
    run_to(cluster, 366)
    status = api.get("Job", NS, "j")["status"]
    assert (status["failed"], status["terminating"]) == (1, 1)
    run_to(cluster, 400)
    replacements = [p for p in api.list("Pod", NS) if p["metadata"]["uid"] != victim["metadata"]["uid"]
                    and p["metadata"]["uid"] not in {q["metadata"]["uid"] for q in pods}]
    assert len(replacements) == 1
    assert replacements[0]["spec"]["nodeName"] in ("n-0", "n-2")
    assert replacements[0]["status"]["phase"] == "Running"
    assert api.get("Job", NS, "j")["status"]["active"] == 3


def test_new_pods_are_not_scheduled_onto_the_failed_node() -> None:
    cluster = make_cluster(NodePool("n", count=2))
    api = cluster.client()
    fail_node_at(cluster, 10, "n-1")
    run_to(cluster, 60)
    api.create(make_pod("pinned", "n-1"))
    api.create(make_pod("free"))
    run_to(cluster, 100)
    assert pod(cluster, "free")["spec"]["nodeName"] == "n-0"
    pinned = pod(cluster, "pinned")
    assert "nodeName" not in pinned["spec"]
    assert "untolerated taint {node.kubernetes.io/unreachable: }" in \
        get_condition(pinned, "PodScheduled")["message"]  # type: ignore[index]


def frozen_with_a_deletion() -> Cluster:
    """Pods ``a`` (exits at 30 s) and ``b`` (1 s to terminate) on ``n-1``, which fails at 10 s; ``b`` is
    deleted right after."""
    cluster = make_cluster(timings=PodTimings(exit_after=30, terminate=1))
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"), make_pod("b", "n-1"))
    cluster.client().delete("Pod", NS, "b")
    return cluster


def test_the_frozen_kubelet_neither_reports_exits_nor_finishes_deletions() -> None:
    cluster = frozen_with_a_deletion()
    run_to(cluster, 50)
    assert pod(cluster, "a")["status"]["phase"] == "Running"  # would have exited at 30
    assert pod(cluster, "b")["status"]["phase"] == "Running"  # would have been killed at 11
    assert pod(cluster, "b")["metadata"]["deletionTimestamp"] == rfc3339(40)


def test_only_node_failing_enters_master_disruption_mode_and_evicts_nothing() -> None:
    cluster = make_cluster(NodePool("solo"))
    fail_node_at(cluster, 10, "solo", make_pod("a"))
    run_to(cluster, 2000)
    assert [(t["key"], t["effect"]) for t in taints(cluster, "solo")] == [(UNREACHABLE, "NoSchedule")]
    assert get_condition(pod(cluster, "a"), "Ready")["status"] == "False"  # type: ignore[index]
    assert get_condition(pod(cluster, "a"), "DisruptionTarget") is None
    assert not cluster.run(10_000)  # nothing left to do: the run is quiescent


def test_zone_tainter_takes_one_node_per_ten_seconds() -> None:
    cluster = make_cluster(NodePool("n", count=4))
    writes = {name: NodeWrites(cluster, name) for name in ("n-1", "n-2")}
    fail_node_at(cluster, 10, "n-1")
    cluster.node_lifecycle.fail_node("n-2")
    run_to(cluster, 200)
    no_execute_at = {name: next(t for t, ts, _ in w.writes if any(x["effect"] == "NoExecute" for x in ts))
                     for name, w in writes.items()}
    assert no_execute_at == {"n-1": 65, "n-2": 75}


def test_partial_disruption_of_a_small_zone_stops_tainting() -> None:
    cluster = make_cluster(NodePool("n", count=5))
    run_to(cluster, 10)
    for name in ("n-0", "n-1", "n-2"):
        cluster.node_lifecycle.fail_node(name)
    run_to(cluster, 1000)
    for name in ("n-0", "n-1", "n-2"):
        assert [(t["key"], t["effect"]) for t in taints(cluster, name)] == [(UNREACHABLE, "NoSchedule")]


def test_zones_are_judged_separately() -> None:
    zone_a = NodePool("a", count=2, labels={"topology.kubernetes.io/zone": "a"})
    zone_b = NodePool("b", labels={"topology.kubernetes.io/zone": "b"})
    cluster = make_cluster(zone_a, zone_b)
    run_to(cluster, 10)
    cluster.node_lifecycle.fail_node("b")  # zone b fully disrupted, zone a healthy: normal eviction rate
    cluster.node_lifecycle.fail_node("a-0")
    run_to(cluster, 100)
    assert [(t["key"], t["effect"], t["timeAdded"]) for t in taints(cluster, "b")] == [
        (UNREACHABLE, "NoSchedule", rfc3339(60)), (UNREACHABLE, "NoExecute", rfc3339(65))]
    assert [(t["key"], t["effect"], t["timeAdded"]) for t in taints(cluster, "a-0")] == [
        (UNREACHABLE, "NoSchedule", rfc3339(60)), (UNREACHABLE, "NoExecute", rfc3339(65))]


def test_recovered_node_is_untainted_and_its_pods_survive() -> None:
    cluster = make_cluster()
    fail_node_at(cluster, 10, "n-1", make_pod("a", "n-1"))
    run_to(cluster, 100)
    assert cluster.node_lifecycle.taint_eviction.scheduled_eviction(NS, "a") == 365
    cluster.node_lifecycle.recover_node("n-1")
    ready = get_condition(node(cluster, "n-1"), "Ready")
    assert ready is not None
    assert (ready["status"], ready["reason"], ready["lastTransitionTime"]) == \
        ("True", "KubeletReady", rfc3339(100))
    run_to(cluster, 100)
    assert [t["effect"] for t in taints(cluster, "n-1")] == ["NoExecute"]  # NoSchedule gone at once
    assert get_condition(pod(cluster, "a"), "Ready")["status"] == "True"  # type: ignore[index]
    run_to(cluster, 105)  # the next monitor pass: markNodeAsReachable
    assert taints(cluster, "n-1") == []
    assert cluster.node_lifecycle.taint_eviction.scheduled_eviction(NS, "a") is None
    run_to(cluster, 1000)
    assert get_condition(pod(cluster, "a"), "DisruptionTarget") is None
    assert "deletionTimestamp" not in pod(cluster, "a")["metadata"]


def test_recovered_kubelet_finishes_what_it_missed() -> None:
    cluster = frozen_with_a_deletion()
    run_to(cluster, 40)
    cluster.node_lifecycle.recover_node("n-1")
    run_to(cluster, 41)
    assert pod(cluster, "a")["status"]["phase"] == "Succeeded"  # its exit was due at 30: it happens now
    with pytest.raises(ApiError):
        pod(cluster, "b")  # killed after the 1 s terminate, then deleted


def test_fail_node_of_a_missing_node_is_not_found() -> None:
    cluster = make_cluster()
    with pytest.raises(ApiError) as err:
        cluster.node_lifecycle.fail_node("nope")
    assert (err.value.code, err.value.reason) == (404, "NotFound")


def test_node_marked_not_ready_by_its_kubelet_gets_the_not_ready_taint() -> None:
    """A kubelet posting ``Ready=False`` (heartbeats continue) gets the not-ready NoExecute taint."""
    cluster = make_cluster()
    run_to(cluster, 10)
    stored = node(cluster, "n-1")
    stored["status"]["conditions"][0].update(status="False", reason="KubeletNotReady")
    cluster.client().update_status(stored)
    run_to(cluster, 100)
    assert [(t["key"], t["effect"], t["timeAdded"]) for t in taints(cluster, "n-1")] == [
        ("node.kubernetes.io/not-ready", "NoSchedule", rfc3339(10)),
        ("node.kubernetes.io/not-ready", "NoExecute", rfc3339(15))]
