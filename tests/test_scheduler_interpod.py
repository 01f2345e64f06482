"""InterPodAffinity and PodTopologySpread in the emulated scheduler (``fakecluster/scheduler/interpod.py``).

Cases follow upstream's ``interpodaffinity/filtering_test.go`` and ``podtopologyspread/filtering_test.go``:
the self-affinity of the first pod of a group, anti-affinity on a topology domain, existing pods'
anti-affinity, the namespace rules, maxSkew and minDomains, missing topology labels, and the Unschedulable
messages with their preemption part (affinity: unresolvable; anti-affinity and skew: resolvable).
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.objects import Obj
from fakecluster.cluster import NodePool
from fakecluster.scheduler.filters import NodeInfo
from fakecluster.scheduler.interpod import (
    REASON_AFFINITY_RULES,
    REASON_ANTI_AFFINITY_RULES,
    REASON_EXISTING_ANTI_AFFINITY,
    REASON_SPREAD,
    REASON_SPREAD_MISSING_LABEL,
    PlacedPod,
    PodConstraints,
    prefilter,
    required_terms,
)
from tests.test_scheduler import make_cluster, make_pod, node_of, run_to, scheduled_condition

ZONE = "topology.kubernetes.io/zone"


def term(labels: dict[str, str], key: str = ZONE, **extra: Any) -> Obj:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key, **extra}


def pod(name: str, labels: dict[str, str] | None = None, *, affinity: list[Obj] | None = None,
        anti: list[Obj] | None = None, spread: list[Obj] | None = None, namespace: str = "default",
        **spec: Any) -> Obj:
    obj = make_pod(name, **spec)
    obj["metadata"]["labels"] = labels or {}
    obj["metadata"]["namespace"] = namespace
    aff: Obj = {}
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": affinity}
    if anti:
        aff["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": anti}
    if aff:
        obj["spec"]["affinity"] = aff
    if spread:
        obj["spec"]["topologySpreadConstraints"] = spread
    return obj


def nodes(**zones: str) -> dict[str, NodeInfo]:
    return {name: NodeInfo(name, {ZONE: zone} if zone else {}, [], False, {}, 110)
            for name, zone in zones.items()}


def placed(name_labels: dict[str, str], node: str, namespace: str = "default", anti: list[Obj] | None = None
           ) -> PlacedPod:
    spec = pod("x", anti=anti)["spec"]
    return PlacedPod(namespace, name_labels, node, required_terms(namespace, spec, "podAntiAffinity"))


def verdicts(incoming: Obj, existing: list[PlacedPod], infos: dict[str, NodeInfo]) -> dict[str, list[str]]:
    constraints = PodConstraints.of(incoming)
    with_anti = [p for p in existing if p.anti_affinity]
    state = prefilter(constraints, incoming["spec"], existing, with_anti, infos)
    return {name: state.filter(info)[0] for name, info in infos.items()}


# ------------------------------------------------------------------------------------ pure filters
def test_first_pod_of_a_self_affine_group_goes_anywhere_with_the_topology_label() -> None:
    incoming = pod("p", {"app": "db"}, affinity=[term({"app": "db"})])
    assert verdicts(incoming, [], nodes(a="z1", b="z2", c="")) == {
        "a": [], "b": [], "c": [REASON_AFFINITY_RULES]}


def test_affinity_needs_a_matching_pod_in_the_domain() -> None:
    incoming = pod("p", {"app": "web"}, affinity=[term({"app": "db"})])
    infos = nodes(a="z1", b="z1", c="z2")
    assert verdicts(incoming, [placed({"app": "db"}, "b")], infos) == {
        "a": [], "b": [], "c": [REASON_AFFINITY_RULES]}
    # No db pod anywhere and the pod does not match its own term: nowhere.
    assert verdicts(incoming, [], infos) == {n: [REASON_AFFINITY_RULES] for n in infos}


def test_anti_affinity_repels_matching_pods_in_the_domain_only() -> None:
    incoming = pod("p", {"app": "web"}, anti=[term({"app": "web"})])
    infos = nodes(a="z1", b="z1", c="z2")
    assert verdicts(incoming, [placed({"app": "web"}, "a")], infos) == {
        "a": [REASON_ANTI_AFFINITY_RULES], "b": [REASON_ANTI_AFFINITY_RULES], "c": []}


def test_existing_pods_anti_affinity_repels_the_incoming_pod() -> None:
    incoming = pod("p", {"app": "web"})
    existing = placed({"app": "db"}, "a", anti=[term({"app": "web"})])
    assert verdicts(incoming, [existing], nodes(a="z1", b="z1", c="z2")) == {
        "a": [REASON_EXISTING_ANTI_AFFINITY], "b": [REASON_EXISTING_ANTI_AFFINITY], "c": []}


def test_term_namespaces_default_to_the_pods_own_and_empty_selector_means_all() -> None:
    infos = nodes(a="z1", b="z2")
    other_ns = placed({"app": "web"}, "a", namespace="team-b")
    own = pod("p", {"app": "web"}, anti=[term({"app": "web"})])
    assert verdicts(own, [other_ns], infos) == {"a": [], "b": []}
    everywhere = pod("p", {"app": "web"}, anti=[term({"app": "web"}, namespaceSelector={})])
    assert verdicts(everywhere, [other_ns], infos) == {"a": [REASON_ANTI_AFFINITY_RULES], "b": []}
    listed = pod("p", {"app": "web"}, anti=[term({"app": "web"}, namespaces=["team-b"])])
    assert verdicts(listed, [other_ns], infos) == {"a": [REASON_ANTI_AFFINITY_RULES], "b": []}


def spread(max_skew: int = 1, **extra: Any) -> Obj:
    return {"maxSkew": max_skew, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def test_spread_max_skew_against_the_least_populated_domain() -> None:
    infos = nodes(a="z1", b="z2", c="z3")
    existing = [placed({"app": "web"}, "a"), placed({"app": "web"}, "b")]
    incoming = pod("p", {"app": "web"}, spread=[spread()])
    assert verdicts(incoming, existing, infos) == {"a": [REASON_SPREAD], "b": [REASON_SPREAD], "c": []}
    looser = pod("p", {"app": "web"}, spread=[spread(2)])
    assert verdicts(looser, existing, infos) == {"a": [], "b": [], "c": []}


def test_spread_min_domains_counts_missing_domains_as_empty() -> None:
    infos = nodes(a="z1", b="z2")
    existing = [placed({"app": "web"}, "a"), placed({"app": "web"}, "b")]
    assert verdicts(pod("p", {"app": "web"}, spread=[spread()]), existing, infos) == {"a": [], "b": []}
    incoming = pod("p", {"app": "web"}, spread=[spread(minDomains=3)])
    assert verdicts(incoming, existing, infos) == {"a": [REASON_SPREAD], "b": [REASON_SPREAD]}


def test_spread_ignores_schedule_anyway_and_needs_the_label() -> None:
    infos = nodes(a="z1", b="")
    existing = [placed({"app": "web"}, "a")] * 3
    assert verdicts(pod("p", {"app": "web"}, spread=[spread(whenUnsatisfiable="ScheduleAnyway")]),
                    existing, infos) == {"a": [], "b": []}
    assert verdicts(pod("p", {"app": "web"}, spread=[spread()]), existing, infos)["b"] == [
        REASON_SPREAD_MISSING_LABEL]


def test_spread_match_label_keys_narrow_the_selector() -> None:
    infos = nodes(a="z1", b="z2")
    existing = [placed({"app": "web", "rev": "1"}, "a"), placed({"app": "web", "rev": "1"}, "a")]
    incoming = pod("p", {"app": "web", "rev": "2"}, spread=[spread(matchLabelKeys=["rev"])])
    assert verdicts(incoming, existing, infos) == {"a": [], "b": []}


# ------------------------------------------------------------------------------------ in the cluster
def zoned_cluster() -> Any:
    return make_cluster([NodePool("z1", count=2, labels={ZONE: "z1"}),
                         NodePool("z2", count=2, labels={ZONE: "z2"})])


def test_anti_affine_pods_fill_one_per_domain_and_the_third_is_unschedulable() -> None:
    cluster = zoned_cluster()
    client = cluster.client()
    for name in ("a", "b", "c"):
        client.create(pod(name, {"app": "web"}, anti=[term({"app": "web"})]))
        run_to(cluster, cluster.clock.now + 1)
    zones = {node_of(cluster, n)[:2] for n in ("a", "b")}  # type: ignore[index]
    assert zones == {"z1", "z2"}
    assert node_of(cluster, "c") is None
    condition = scheduled_condition(cluster, "c")
    assert condition is not None and condition["reason"] == "Unschedulable"
    assert condition["message"] == (
        "0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.")
    # The repelling pod finishes: the parked pod is retried at once (after its back-off).
    client.delete("Pod", "default", "a", grace_period_seconds=0)
    run_to(cluster, cluster.clock.now + 15)
    assert node_of(cluster, "c") is not None


def test_affinity_without_any_match_is_unresolvable_and_retried_when_a_match_is_bound() -> None:
    cluster = zoned_cluster()
    client = cluster.client()
    client.create(pod("web", {"app": "web"}, affinity=[term({"app": "db"})]))
    run_to(cluster, 1)
    condition = scheduled_condition(cluster, "web")
    assert condition is not None and condition["message"] == (
        "0/4 nodes are available: 4 node(s) didn't match pod affinity rules. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    client.create(pod("db", {"app": "db"}, nodeSelector={ZONE: "z2"}))
    run_to(cluster, 15)
    assert node_of(cluster, "db").startswith("z2")  # type: ignore[union-attr]
    assert node_of(cluster, "web").startswith("z2")  # type: ignore[union-attr]


def test_spread_balances_zones_that_least_allocated_alone_would_not() -> None:
    def zones_of(with_spread: bool) -> list[str]:
        cluster = make_cluster([NodePool("z1", count=3, labels={ZONE: "z1"}),
                                NodePool("z2", count=1, labels={ZONE: "z2"})])
        client = cluster.client()
        for i in range(4):
            client.create(pod(f"p{i}", {"app": "web"}, spread=[spread()] if with_spread else None))
            run_to(cluster, cluster.clock.now + 1)
        return sorted(node_of(cluster, f"p{i}")[:2] for i in range(4))  # type: ignore[index]

    assert zones_of(False) == ["z1", "z1", "z1", "z2"]  # one pod per node
    assert zones_of(True) == ["z1", "z1", "z2", "z2"]
