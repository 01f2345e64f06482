"""The emulated default scheduler: timing, filters, placement, failure messages and retries
(``pkg/scheduler/schedule_one.go``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from fakecluster.api.objects import Obj, clone, get_condition
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import PodTimings
from fakecluster.scheduler.filters import NodeInfo, filter_node, fit_error_message, pod_request

SMALL = {"cpu": "1", "memory": "4Gi", "pods": 110}


ZERO = PodTimings()


def make_cluster(nodes: list[NodePool], timings: PodTimings | Callable[[Obj], PodTimings] = ZERO,
                 seed: int = 0, scheduler_latency: float = 0.0) -> Cluster:
    behaviour = timings if callable(timings) else (lambda _pod: timings)
    return Cluster(seed=seed, config=ClusterConfig(nodes=nodes, behaviour=behaviour,
                                                   scheduler_latency=scheduler_latency))


def make_pod(name: str, cpu: str | None = None, memory: str | None = None, command: list[str] | None = None,
             **spec: Any) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    main: Obj = {"name": "main", "image": "busybox", "command": command or ["sleep", "infinity"]}
    if requests:
        main["resources"] = {"requests": requests}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"restartPolicy": "Never", "containers": [main], **spec}}


def run_to(cluster: Cluster, until: float) -> None:
    cluster.run(until)
    cluster.clock.advance_to(until)


def node_of(cluster: Cluster, name: str) -> str | None:
    return clone(cluster.client().get("Pod", "default", name)["spec"].get("nodeName"))


def scheduled_condition(cluster: Cluster, name: str) -> Obj | None:
    return get_condition(cluster.client().get("Pod", "default", name), "PodScheduled")


def scheduling_message(cluster: Cluster, name: str) -> str:
    """The message of pod ``name``'s ``PodScheduled`` condition (which it must have)."""
    cond = scheduled_condition(cluster, name)
    assert cond is not None
    return str(cond["message"])


class BindTimes:
    """When each pod got its node (the MODIFIED event that set ``spec.nodeName``)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.times: dict[str, float] = {}
        cluster.client().watch("Pod", self._on)

    def _on(self, event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        if event.object["spec"].get("nodeName") and name not in self.times:
            self.times[name] = self.cluster.clock.now


def create_node(cluster: Cluster, name: str, capacity: dict[str, Any], labels: dict[str, str] | None = None,
                taints: list[Obj] | None = None) -> None:
    cluster.client().create({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints} if taints else {},
        "status": {"capacity": {k: str(v) for k, v in capacity.items()},
                   "allocatable": {k: str(v) for k, v in capacity.items()},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    })


# ---------------------------------------------------------------------------------------------- timing
def test_pod_is_bound_after_schedule_delay_and_latency() -> None:
    cluster = make_cluster([NodePool("node")], PodTimings(schedule=5), scheduler_latency=0.5)
    binds = BindTimes(cluster)
    cluster.client().create(make_pod("p"))
    cluster.run(100)
    assert binds.times == {"p": 5.5}
    cond = scheduled_condition(cluster, "p")
    assert cond is not None
    assert (cond["status"], cond["lastTransitionTime"]) == ("True", "2025-01-01T00:00:05Z")


def test_schedule_jitter_is_deterministic_per_seed() -> None:
    def bind_time(seed: int) -> float:
        cluster = make_cluster([NodePool("node")], PodTimings(schedule=1, jitter=3), seed=seed)
        binds = BindTimes(cluster)
        cluster.client().create(make_pod("p"))
        cluster.run(100)
        return binds.times["p"]

    assert bind_time(4) == bind_time(4)
    assert bind_time(4) != bind_time(5)
    assert 1.0 <= bind_time(4) <= 4.0


# ---------------------------------------------------------------------------------------------- placement
def test_pods_without_requests_spread_over_nodes() -> None:
    cluster = make_cluster([NodePool("n", count=3, capacity=SMALL)])
    for i in range(6):
        cluster.client().create(make_pod(f"p{i}"))
    cluster.run(10)
    assert [node_of(cluster, f"p{i}") for i in range(6)] == ["n-0", "n-1", "n-2", "n-0", "n-1", "n-2"]


def test_pod_goes_to_the_node_with_most_free_cpu() -> None:
    cluster = make_cluster([NodePool("a", capacity={"cpu": "4", "memory": "8Gi"}),
                            NodePool("b", capacity={"cpu": "8", "memory": "8Gi"})])
    cluster.client().create(make_pod("big", cpu="4"))
    cluster.run(1)
    cluster.client().create(make_pod("next", cpu="1"))
    cluster.run(2)
    assert node_of(cluster, "big") == "b"
    assert node_of(cluster, "next") == "a"  # a: 3/4 free after placing, b: 3/8


# ---------------------------------------------------------------------------------------------- failures
def test_insufficient_cpu_everywhere_is_unschedulable_with_upstream_message() -> None:
    cluster = make_cluster([NodePool("n", count=3, capacity=SMALL)])
    client = cluster.client()
    for i in range(3):
        client.create(make_pod(f"fill{i}", cpu="600m"))
    client.create(make_pod("p", cpu="500m"))
    cluster.run(10)
    assert node_of(cluster, "p") is None
    cond = scheduled_condition(cluster, "p")
    assert cond is not None
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == (
        "0/3 nodes are available: 3 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
    assert client.get("Pod", "default", "p")["status"]["phase"] == "Pending"


def test_request_larger_than_any_node_says_preemption_is_not_helpful() -> None:
    cluster = make_cluster([NodePool("n", count=2, capacity=SMALL)])
    cluster.client().create(make_pod("p", cpu="2", memory="8Gi"))
    cluster.run(10)
    assert scheduling_message(cluster, "p") == (
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_mixed_reasons_are_counted_and_sorted_like_upstream() -> None:
    cluster = make_cluster([
        NodePool("gpu", capacity=SMALL,
                 taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]),
        NodePool("cpu", count=2, capacity=SMALL),
    ])
    cluster.client().create(make_pod("p", cpu="3"))
    cluster.run(10)
    assert scheduling_message(cluster, "p") == (
        "0/3 nodes are available: "
        "1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_too_many_pods() -> None:
    cluster = make_cluster([NodePool("n", capacity={"cpu": "8", "memory": "8Gi", "pods": 1})])
    cluster.client().create(make_pod("a"))
    cluster.client().create(make_pod("b"))
    cluster.run(10)
    assert node_of(cluster, "a") == "n"
    assert scheduling_message(cluster, "b").startswith(
        "0/1 nodes are available: 1 Too many pods. preemption:")


def test_no_nodes() -> None:
    cluster = make_cluster([])
    cluster.client().create(make_pod("p"))
    cluster.run(10)
    assert scheduling_message(cluster, "p") == "no nodes available to schedule pods"


# ---------------------------------------------------------------------------------------------- retries
def second_waits_for_first(*, sleep: str, second_at: float) -> tuple[Cluster, BindTimes]:
    """One node with room for one 1-CPU pod: ``first`` (``sleep`` seconds) at 0 s, ``second`` at
    ``second_at``."""
    cluster = make_cluster([NodePool("n", capacity=SMALL)])
    binds = BindTimes(cluster)
    cluster.client().create(make_pod("first", cpu="1", command=["sleep", sleep]))
    run_to(cluster, second_at)
    cluster.client().create(make_pod("second", cpu="1"))
    return cluster, binds


def test_unschedulable_pod_is_scheduled_when_a_pod_frees_capacity() -> None:
    cluster, binds = second_waits_for_first(sleep="40", second_at=2)
    run_to(cluster, 30)
    cond = scheduled_condition(cluster, "second")
    assert cond is not None and cond["status"] == "False"
    assert cond["lastTransitionTime"] == "2025-01-01T00:00:02Z"
    attempts_before = cluster.scheduler.controller.stats.reconciles
    cluster.run(1000)
    assert binds.times["second"] == 40.0
    cond = scheduled_condition(cluster, "second")
    assert cond is not None and cond["status"] == "True"
    assert cluster.scheduler.controller.stats.reconciles == attempts_before + 1  # no polling in between


def test_terminating_pod_holds_its_resources_until_gone() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL)], PodTimings(terminate=10))
    binds = BindTimes(cluster)
    client = cluster.client()
    client.create(make_pod("first", cpu="1"))
    client.create(make_pod("second", cpu="1"))
    run_to(cluster, 5)
    client.delete("Pod", "default", "first")
    cluster.run(1000)
    assert binds.times["second"] == 15.0


def test_retry_respects_scheduling_back_off() -> None:
    cluster, binds = second_waits_for_first(sleep="0.5", second_at=0.25)
    cluster.run(100)
    assert binds.times["second"] == 1.25  # freed at 0.5, but the 1 s back-off since the attempt at 0.25


def test_added_node_lets_pending_pod_schedule() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL)])
    binds = BindTimes(cluster)
    cluster.client().create(make_pod("p", cpu="2"))
    run_to(cluster, 20)
    assert node_of(cluster, "p") is None
    create_node(cluster, "big", {"cpu": "4", "memory": "8Gi", "pods": 10})
    cluster.run(100)
    assert binds.times["p"] == 20.0
    assert node_of(cluster, "p") == "big"


def test_node_made_schedulable_again() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL)])
    client = cluster.client()
    node = clone(client.get("Node", "", "n"))
    node["spec"]["unschedulable"] = True
    client.update(node)
    client.create(make_pod("p"))
    run_to(cluster, 5)
    assert scheduling_message(cluster, "p").startswith(
        "0/1 nodes are available: 1 node(s) were unschedulable.")
    node = clone(client.get("Node", "", "n"))
    node["spec"]["unschedulable"] = False
    client.update(node)
    cluster.run(100)
    assert node_of(cluster, "p") == "n"


# ----------------------------------------------------------------------------------------- selectors/taints
def test_node_selector_picks_matching_node_or_fails() -> None:
    cluster = make_cluster([NodePool("a", capacity=SMALL, labels={"pool": "a"}),
                            NodePool("b", capacity=SMALL, labels={"pool": "b"})])
    client = cluster.client()
    client.create(make_pod("to-b", nodeSelector={"pool": "b"}))
    client.create(make_pod("nowhere", nodeSelector={"pool": "c"}))
    cluster.run(10)
    assert node_of(cluster, "to-b") == "b"
    assert scheduling_message(cluster, "nowhere") == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_required_node_affinity_expressions() -> None:
    cluster = make_cluster([NodePool("a", capacity=SMALL, labels={"zone": "z1", "gen": "3"}),
                            NodePool("b", capacity=SMALL, labels={"zone": "z2", "gen": "5"})])
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1"]},
                              {"key": "gen", "operator": "Gt", "values": ["4"]}]}]}}}
    cluster.client().create(make_pod("p", affinity=affinity))
    gpu = {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}
    zone1 = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
    either = {"nodeSelectorTerms": [gpu, zone1]}
    cluster.client().create(make_pod(
        "q", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": either}}))
    cluster.run(10)
    assert node_of(cluster, "p") == "b"
    assert node_of(cluster, "q") == "a"


@pytest.mark.parametrize(("tolerations", "fits"), [
    ([], False),
    ([{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}], True),
    ([{"key": "dedicated", "operator": "Equal", "value": "web"}], False),
    ([{"key": "dedicated", "operator": "Exists"}], True),
    ([{"operator": "Exists"}], True),
    ([{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}], False),
])
def test_taint_toleration(tolerations: list[Obj], fits: bool) -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL,
                                     taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])])
    cluster.client().create(make_pod("p", tolerations=tolerations))
    cluster.run(10)
    assert (node_of(cluster, "p") == "n") is fits
    if not fits:
        assert "1 node(s) had untolerated taint {dedicated: ml}" in scheduling_message(cluster, "p")


def test_prefer_no_schedule_taint_does_not_filter() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL,
                                     taints=[{"key": "spot", "value": "", "effect": "PreferNoSchedule"}])])
    cluster.client().create(make_pod("p"))
    cluster.run(10)
    assert node_of(cluster, "p") == "n"


def test_not_ready_node_counts_as_tainted() -> None:
    node = {"metadata": {"name": "n"}, "spec": {},
            "status": {"allocatable": SMALL, "conditions": [{"type": "Ready", "status": "Unknown"}]}}
    info = NodeInfo.from_node(node)
    reasons, unresolvable = filter_node({}, pod_request({"containers": [{"name": "c"}]}), info)
    assert reasons == ["node(s) had untolerated taint {node.kubernetes.io/unreachable: }"]
    assert unresolvable


def test_scheduling_gates_hold_the_pod_until_removed() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL)])
    binds = BindTimes(cluster)
    client = cluster.client()
    client.create(make_pod("p", schedulingGates=[{"name": "example.com/wait"}]))
    run_to(cluster, 30)
    assert node_of(cluster, "p") is None
    pod = clone(client.get("Pod", "default", "p"))
    pod["spec"]["schedulingGates"] = []
    client.update(pod)
    cluster.run(100)
    assert binds.times["p"] == 30.0


# ---------------------------------------------------------------------------------------------- requests
def test_pod_request_sums_containers_and_takes_init_peak() -> None:
    spec = {
        "initContainers": [
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
            {"name": "big-init", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "512Mi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "500m", "nvidia.com/gpu": "1"}}},
        ],
    }
    request = pod_request(spec)
    assert request.resources == {"cpu": 2100, "memory": 1024**3, "nvidia.com/gpu": 1}
    assert request.nonzero_cpu == 750
    assert request.nonzero_memory == 512 * 1024**2 + 200 * 1024**2


def test_extended_resource_missing_on_node_is_insufficient() -> None:
    info = NodeInfo.from_node({"metadata": {"name": "n"}, "status": {"allocatable": SMALL}})
    spec = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    assert filter_node(spec, pod_request(spec), info) == (["Insufficient nvidia.com/gpu"], True)


def test_fit_error_message_sorts_as_strings() -> None:
    failures = [(["Insufficient cpu"], False)] * 10 + [(["node(s) had untolerated taint {a: b}"], True)] * 2
    assert fit_error_message(12, failures) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint {a: b}. "
        "preemption: 0/12 nodes are available: 10 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.")


def test_toleration_added_to_parked_pod_requeues_it() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL,
                                     taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])])
    binds = BindTimes(cluster)
    client = cluster.client()
    client.create(make_pod("p"))
    run_to(cluster, 7)
    assert node_of(cluster, "p") is None
    pod = clone(client.get("Pod", "default", "p"))
    pod["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    client.update(pod)
    cluster.run(100)
    assert binds.times["p"] == 7.0


def test_never_scheduled_pod_leaves_no_pending_timer() -> None:
    cluster = make_cluster([NodePool("n", capacity=SMALL)], PodTimings(schedule=math.inf))
    cluster.client().create(make_pod("p"))
    assert cluster.run(1_000_000) is False
    assert node_of(cluster, "p") is None
