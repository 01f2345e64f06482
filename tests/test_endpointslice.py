"""The EndpointSlice controller, case by case after upstream's reconciler tests
(``staging/src/k8s.io/endpointslice/reconciler_test.go``: ``TestReconcileEmpty``, ``TestReconcile1Pod``,
``TestReconcileManyPods``, ``TestReconcileEndpointSlicesSomePreexisting``...) and
``pkg/controller/endpointslice/endpointslice_controller_test.go`` (``TestSyncServiceNoSelector``,
``TestSyncServicePendingDeletion``), played on the fake cluster's own kubelet and scheduler."""

from __future__ import annotations

from typing import Any

import pytest

from fakecluster.api.objects import Obj, condition_true
from fakecluster.api.watch import WatchEvent
from fakecluster.client.internal import InternalClient
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.endpointslice import (
    _CONDITIONS,
    CONTROLLER_NAME,
    LABEL_HEADLESS,
    LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME,
    pod_endpoint,
)
from fakecluster.kubelet.pod_timings import PodTimings

NS = "default"


def make_cluster(timings: PodTimings | None = None, latency: float = 0.0) -> Cluster:
    fixed = timings or PodTimings()
    return Cluster(seed=0, config=ClusterConfig(behaviour=lambda _pod: fixed, endpoint_slice_latency=latency))


def service(name: str = "svc", *, selector: dict[str, str] | None = None, headless: bool = True,
            **spec: Any) -> Obj:
    body: Obj = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS,
                                                                    "labels": {"team": "ml"}},
                 "spec": {**spec}}
    if selector is not None:
        body["spec"]["selector"] = selector
    if headless:
        body["spec"]["clusterIP"] = "None"
    return body


def pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {"app": "a"}},
            "spec": {"restartPolicy": "Never", "nodeName": "node", **spec,
                     "containers": [{"name": "c", "image": "busybox"}]}}


def slices(cluster: Cluster, svc: str = "svc") -> list[Obj]:
    return cluster.server.list("EndpointSlice", NS, selector={LABEL_SERVICE_NAME: svc})


class SliceWrites:
    def __init__(self, cluster: Cluster) -> None:
        self.events: list[tuple[str, str]] = []
        cluster.client().watch("EndpointSlice", self._on)

    def _on(self, event: WatchEvent) -> None:
        self.events.append((event.type, event.object["metadata"]["name"]))


def test_service_without_pods_gets_one_placeholder_slice() -> None:
    """``TestReconcileEmpty``: a Service with a selector and no pod has one slice with no endpoints."""
    cluster = make_cluster()
    client = cluster.client()
    created = client.create(service(selector={"app": "a"}))
    cluster.run(1)
    [placeholder] = slices(cluster)
    assert placeholder["endpoints"] == []
    assert placeholder["ports"] == []
    assert placeholder["addressType"] == "IPv4"
    meta = placeholder["metadata"]
    assert meta["name"].startswith("svc-") and len(meta["name"]) == len("svc-") + 5
    assert meta["generateName"] == "svc-"
    assert meta["labels"] == {"team": "ml", LABEL_HEADLESS: "", LABEL_SERVICE_NAME: "svc",
                              LABEL_MANAGED_BY: CONTROLLER_NAME}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "svc",
                                        "uid": created["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]


def test_service_without_selector_gets_no_slice() -> None:
    """``TestSyncServiceNoSelector``."""
    cluster = make_cluster()
    cluster.client().create(service())
    cluster.client().create(pod("p"))
    cluster.run(5)
    assert cluster.server.list("EndpointSlice") == []


def test_one_running_pod_is_one_ready_endpoint() -> None:
    """``TestReconcile1Pod``: address, conditions, targetRef and nodeName of a Ready pod."""
    cluster = make_cluster()
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    created = client.create(pod("p"))
    cluster.run(5)
    [only] = slices(cluster)
    stored = client.get("Pod", NS, "p")
    assert only["endpoints"] == [{
        "addresses": [stored["status"]["podIP"]],
        "conditions": {"ready": True, "serving": True, "terminating": False},
        "targetRef": {"kind": "Pod", "namespace": NS, "name": "p", "uid": created["metadata"]["uid"]},
        "nodeName": "node",
    }]


def plain_and_published(timings: PodTimings) -> tuple[Cluster, InternalClient]:
    """Pod ``p`` behind two Services, ``plain`` and ``published`` (``publishNotReadyAddresses``)."""
    cluster = make_cluster(timings)
    client = cluster.client()
    client.create(service("plain", selector={"app": "a"}))
    client.create(service("published", selector={"app": "a"}, publishNotReadyAddresses=True))
    client.create(pod("p"))
    return cluster, client


def test_not_ready_pod_is_listed_not_ready_unless_publish_not_ready_addresses() -> None:
    cluster, _ = plain_and_published(PodTimings(ready=100.0))
    cluster.run(5)
    [plain] = slices(cluster, "plain")
    [published] = slices(cluster, "published")
    assert plain["endpoints"][0]["conditions"] == {"ready": False, "serving": False, "terminating": False}
    assert published["endpoints"][0]["conditions"] == {"ready": True, "serving": False, "terminating": False}


def test_a_pods_endpoint_is_its_previous_one_when_nothing_changed_and_shares_what_did_not() -> None:
    """``pod_endpoint`` against the pod's last endpoint: the very object when nothing it is made of
    changed (the controller then writes nothing), else a new endpoint equal to one built afresh that
    shares the unchanged parts (``targetRef``, ``addresses``) and one of the eight ``conditions`` dicts."""
    base = {**pod("p", hostname="p", subdomain="svc"), "status": {"podIP": "10.244.0.2", "phase": "Running"}}
    base["metadata"] = {**base["metadata"], "uid": "u"}
    first = pod_endpoint(base, "svc", False)
    assert first is not None
    again = {**base, "status": {**base["status"], "hostIP": "10.0.0.1"}}
    assert pod_endpoint(again, "svc", False, first) is first
    ready_status = {**base["status"], "conditions": [{"type": "Ready", "status": "True"}]}
    ready = {**base, "status": ready_status}
    second = pod_endpoint(ready, "svc", False, first)
    assert second is not None and second is not first
    assert second == pod_endpoint(ready, "svc", False)
    assert second["targetRef"] is first["targetRef"] and second["addresses"] is first["addresses"]
    assert second["conditions"] is pod_endpoint(ready, "other", False)["conditions"]  # type: ignore[index]
    moved = {**ready, "status": {**ready_status, "podIP": "10.244.0.9"}}
    third = pod_endpoint(moved, "svc", False, second)
    assert third == pod_endpoint(moved, "svc", False) and third is not None
    assert third["addresses"] == ["10.244.0.9"]
    renamed = {**moved, "spec": {**moved["spec"], "subdomain": "elsewhere"}}
    assert "hostname" not in (pod_endpoint(renamed, "svc", False, third) or {})


def test_pod_without_ip_or_finished_is_not_listed() -> None:
    """``ShouldPodBeInEndpoints``: no podIP yet (not admitted) or Succeeded/Failed: not listed."""
    assert pod_endpoint(pod("p"), "svc", False) is None
    running = {**pod("p"), "status": {"podIP": "10.244.0.2", "phase": "Running"}}
    running["metadata"] = {**running["metadata"], "uid": "u"}
    assert pod_endpoint(running, "svc", False) is not None
    finished = {**running, "status": {"podIP": "10.244.0.2", "phase": "Succeeded"}}
    assert pod_endpoint(finished, "svc", False) is None
    cluster = make_cluster(PodTimings(exit_after=3.0))
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("p"))
    cluster.run(2)
    assert len(slices(cluster)[0]["endpoints"]) == 1
    cluster.run(10)
    assert slices(cluster)[0]["endpoints"] == []  # Succeeded: gone, placeholder kept


def test_terminating_pod_stays_listed_as_terminating() -> None:
    """Terminating endpoints (GA 1.26): ``serving`` follows readiness, ``ready`` is false unless
    ``publishNotReadyAddresses``."""
    cluster, client = plain_and_published(PodTimings(terminate=10.0))
    cluster.run(2)
    client.delete("Pod", NS, "p")
    cluster.run(5)
    assert slices(cluster, "plain")[0]["endpoints"][0]["conditions"] == {
        "ready": False, "serving": True, "terminating": True}
    assert slices(cluster, "published")[0]["endpoints"][0]["conditions"] == {
        "ready": True, "serving": True, "terminating": True}
    cluster.run(20)
    assert slices(cluster, "plain")[0]["endpoints"] == []


def test_hostname_only_when_subdomain_is_the_service_name() -> None:
    """``ShouldSetHostname``: ``spec.hostname`` set and ``spec.subdomain`` == Service name."""
    cluster = make_cluster()
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("in", hostname="w-0", subdomain="svc"))
    client.create(pod("other", hostname="w-1", subdomain="elsewhere"))
    client.create(pod("bare", subdomain="svc"))
    cluster.run(5)
    by_name = {e["targetRef"]["name"]: e for e in slices(cluster)[0]["endpoints"]}
    assert by_name["in"]["hostname"] == "w-0"
    assert "hostname" not in by_name["other"]
    assert "hostname" not in by_name["bare"]


def test_selector_decides_membership_and_label_change_moves_pod() -> None:
    cluster = make_cluster()
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("yes"))
    client.create(pod("no", labels={"app": "b"}))
    cluster.run(5)
    assert [e["targetRef"]["name"] for e in slices(cluster)[0]["endpoints"]] == ["yes"]
    client.patch("Pod", NS, "yes", {"metadata": {"labels": {"app": "b"}}})
    cluster.run(6)
    assert slices(cluster)[0]["endpoints"] == []


def behind_a_service(count: int, timings: PodTimings | None = None) -> tuple[Cluster, InternalClient]:
    """Pods ``p-000``, ``p-001``, ... behind one Service, all created at 0 s."""
    cluster = make_cluster(timings)
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    for i in range(count):
        client.create(pod(f"p-{i:03d}"))
    return cluster, client


def test_many_pods_fill_slices_of_at_most_100_oldest_first() -> None:
    """``TestReconcileManyPods``: 250 pods → slices of 100, 100 and 50."""
    cluster, _ = behind_a_service(250)
    cluster.run(5)
    found = slices(cluster)
    assert sorted(len(s["endpoints"]) for s in found) == [50, 100, 100]
    names = [e["targetRef"]["name"] for s in sorted(found, key=lambda s: -len(s["endpoints"]))
             for e in s["endpoints"]]
    assert sorted(names) == [f"p-{i:03d}" for i in range(250)]
    for s in found:
        members = [e["targetRef"]["name"] for e in s["endpoints"]]
        assert members == sorted(members)  # same creation second: by name


def test_a_pod_change_rewrites_only_the_slice_that_lists_it() -> None:
    """Incremental: a readiness change of one pod among 250 is one slice update, not three."""
    cluster, client = behind_a_service(250, PodTimings(ready=100.0))
    cluster.run(5)
    writes = SliceWrites(cluster)
    client.delete("Pod", NS, "p-007", grace_period_seconds=0)
    cluster.run(6)
    assert len(writes.events) == 1 and writes.events[0][0] == "MODIFIED"
    holder = next(s for s in slices(cluster) if writes.events[0][1] == s["metadata"]["name"])
    assert "p-007" not in [e["targetRef"]["name"] for e in holder["endpoints"]]


def test_latency_batches_changes_into_one_write() -> None:
    """``--endpointslice-updates-batch-period``: pods admitted within the window are written together,
    ``latency`` after the first change."""
    cluster = make_cluster(latency=2.0)
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    cluster.run(3)
    cluster.clock.advance_to(3)
    writes = SliceWrites(cluster)
    client.create(pod("a"))
    cluster.run(3.5)
    cluster.clock.advance_to(3.5)
    client.create(pod("b"))
    cluster.run(4.9)
    assert writes.events == []
    cluster.run(5.0)
    assert len(writes.events) == 1
    assert len(slices(cluster)[0]["endpoints"]) == 2


def test_deleted_service_takes_its_slices_and_a_new_one_gets_new_slices() -> None:
    """Slices go with their Service (owner reference, garbage collector); while the Service is pending
    deletion no slice is created (``TestSyncServicePendingDeletion``); a recreated Service gets its own."""
    cluster = make_cluster()
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("p"))
    cluster.run(5)
    old = slices(cluster)[0]["metadata"]["name"]
    client.delete("Service", NS, "svc")
    cluster.run(10)
    assert slices(cluster) == []
    created = client.create(service(selector={"app": "a"}))
    cluster.run(15)
    [fresh] = slices(cluster)
    assert fresh["metadata"]["name"] != old
    assert fresh["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert len(fresh["endpoints"]) == 1


def test_slice_deleted_by_someone_else_is_recreated() -> None:
    cluster = make_cluster()
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("p"))
    cluster.run(5)
    client.delete("EndpointSlice", NS, slices(cluster)[0]["metadata"]["name"])
    cluster.run(6)
    [again] = slices(cluster)
    assert len(again["endpoints"]) == 1


def test_service_setting_change_rewrites_conditions() -> None:
    cluster = make_cluster(PodTimings(ready=100.0))
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("p"))
    cluster.run(5)
    assert slices(cluster)[0]["endpoints"][0]["conditions"]["ready"] is False
    client.patch("Service", NS, "svc", {"spec": {"publishNotReadyAddresses": True}})
    cluster.run(6)
    [only] = slices(cluster)
    assert only["endpoints"][0]["conditions"]["ready"] is True


def test_slices_are_schema_valid_objects() -> None:
    """The API server checks EndpointSlices against the discovery/v1 schema: a bad one is Invalid."""
    import pytest

    from fakecluster.api.errors import ApiError

    cluster = make_cluster()
    with pytest.raises(ApiError) as err:
        cluster.client().create({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                                 "metadata": {"name": "x", "namespace": NS}, "addressType": "IPv5",
                                 "endpoints": []})
    assert err.value.reason == "Invalid"


def test_every_slice_the_controller_writes_passes_the_schema_it_vouches_for() -> None:
    """The server checks again only the endpoints a write does not share with the stored version: hold
    every version the controller writes to the whole schema."""
    from fakecluster.api.discovery import EndpointSlice
    from fakecluster.api.validation import validate_model

    cluster = make_cluster(PodTimings(ready=3.0, terminate=2.0))
    client = cluster.client()
    client.create(service(selector={"app": "a"}, publishNotReadyAddresses=True))
    seen: list[Obj] = []
    client.watch("EndpointSlice", lambda e: seen.append(e.object))
    for i in range(120):
        client.create(pod(f"p-{i:03d}", hostname=f"h-{i}", subdomain="svc"))
    cluster.run(5)
    client.delete("Pod", NS, "p-003")
    cluster.run(20)
    assert len(seen) > 3
    for obj in seen:
        _, errors = validate_model(EndpointSlice, obj)
        assert errors == [], errors


def _stored_slice(cluster: Cluster, endpoints: list[Obj]) -> Obj:
    client = cluster.client()
    return client.create_donated({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                                  "metadata": {"name": "manual", "namespace": NS}, "addressType": "IPv4",
                                  "endpoints": endpoints})


def _endpoint(i: int) -> Obj:
    return {"addresses": [f"10.0.0.{i}"], "conditions": {"ready": True}}


def test_a_donated_update_is_stored_uncopied_sharing_unchanged_endpoints() -> None:
    """``update_donated`` hands the object over: the stored version holds the caller's very endpoint
    objects, so the next version shares the unchanged ones (what the DNS server skips by identity)."""
    cluster = make_cluster()
    first = _stored_slice(cluster, [_endpoint(i) for i in range(5)])
    body = {**first, "endpoints": [*first["endpoints"][:2], _endpoint(9), *first["endpoints"][3:]]}
    second = cluster.client().update_donated(body)
    assert [a is b for a, b in zip(first["endpoints"], second["endpoints"], strict=True)] == [
        True, True, False, True, True]
    assert second["endpoints"][2] is body["endpoints"][2]


def test_a_changed_endpoint_among_shared_ones_is_still_schema_checked_with_its_own_index() -> None:
    """Only endpoints the stored version does not hold are checked again, and a bad one is reported
    exactly as a full validation reports it (its index in the whole list, not in the changed part)."""
    import pytest

    from fakecluster.api.errors import Invalid

    cluster = make_cluster()
    first = _stored_slice(cluster, [_endpoint(i) for i in range(5)])
    bad = {"addresses": "10.0.0.7", "conditions": {"ready": True}}  # a string, not a list
    body = {**first, "endpoints": [*first["endpoints"][:3], bad, first["endpoints"][4]]}
    with pytest.raises(Invalid) as err:
        cluster.client().update_donated(body)
    assert "endpoints[3].addresses" in str(err.value)
    assert cluster.server.get("EndpointSlice", NS, "manual") is first  # nothing written


def test_a_bad_endpoint_is_caught_whatever_its_position_and_the_shared_ones_pass() -> None:
    """Prepended, appended or replacing every item: the unshared items are checked in each case."""
    import pytest

    from fakecluster.api.errors import Invalid

    bad = {"addresses": ["10.0.0.7"], "conditions": {"ready": "yes"}}
    for where in ("head", "tail", "all"):
        cluster = make_cluster()
        first = _stored_slice(cluster, [_endpoint(i) for i in range(4)])
        shared = first["endpoints"]
        endpoints = {"head": [bad, *shared], "tail": [*shared, bad], "all": [bad]}[where]
        with pytest.raises(Invalid):
            cluster.client().update_donated({**first, "endpoints": endpoints})
        ok = {"head": [_endpoint(8), *shared], "tail": [*shared, _endpoint(8)], "all": [_endpoint(8)]}[where]
        assert len(cluster.client().update_donated({**first, "endpoints": ok})["endpoints"]) == len(ok)



def test_fields_beside_the_shared_endpoints_are_still_schema_checked() -> None:
    """With endpoints shared, only what is not the stored version's very values is checked, but that is
    checked as a full validation checks it: a bad port or address type is refused."""
    import pytest

    from fakecluster.api.errors import Invalid

    for change, path in (
        ({"ports": [{"name": "x", "port": "80", "protocol": "TCP"}]}, "ports[0].port"),
        ({"addressType": "IPv5"}, "addressType"),
    ):
        cluster = make_cluster()
        first = _stored_slice(cluster, [_endpoint(i) for i in range(4)])
        body = {**first, **change, "endpoints": [*first["endpoints"], _endpoint(8)]}
        with pytest.raises(Invalid) as err:
            cluster.client().update_donated(body)
        assert path in str(err.value), (change, str(err.value))
        assert cluster.server.get("EndpointSlice", NS, "manual") is first


def test_a_pods_services_are_kept_in_the_order_they_listed_it_and_forgotten_with_it() -> None:
    """The controller's pod -> Services index (one small tuple per listed pod) follows every change."""
    cluster = make_cluster()
    client = cluster.client()
    client.create(service("one", selector={"app": "a"}))
    client.create(service("two", selector={"app": "a"}))
    uid = client.create(pod("p"))["metadata"]["uid"]
    cluster.run(5)
    index = cluster.endpoint_slice_controller._pod_services
    assert index[uid] == ((NS, "one"), (NS, "two"))
    client.delete("Service", NS, "one")
    cluster.run(6)
    assert index[uid] == ((NS, "two"),)
    client.delete("Pod", NS, "p")
    cluster.run(60)
    assert uid not in index
    assert [e["targetRef"]["name"] for s in slices(cluster, "two") for e in s.get("endpoints") or ()] == []


def _one_listed_pod_not_ready() -> tuple[Cluster, Any, Obj, SliceWrites]:
    """A Service and its one pod, listed with an IP and not Ready yet (Ready at 100 s): the cluster,
    a client, the slice as written, and a recorder of the slice writes from now on."""
    cluster = make_cluster(PodTimings(ready=100.0))
    client = cluster.client()
    client.create(service(selector={"app": "a"}))
    client.create(pod("p"))
    cluster.run(5)
    [before] = slices(cluster)
    return cluster, client, before, SliceWrites(cluster)


def test_a_status_write_that_leaves_readiness_and_ip_alone_writes_no_slice() -> None:
    """A container-only status write (the same conditions, IP and phase class) keeps the endpoint, the
    very object, and writes nothing; a readiness change is written."""
    cluster, client, before, writes = _one_listed_pod_not_ready()
    stored = client.get("Pod", NS, "p")
    status = dict(stored["status"])
    status["containerStatuses"] = [{**status["containerStatuses"][0], "restartCount": 1}]
    client.update_status_donated({**stored, "status": status})  # as the kubelet writes: the rest shared
    cluster.run(5.5)
    assert writes.events == []
    [same] = slices(cluster)
    assert same["endpoints"][0] is before["endpoints"][0]
    stored = client.get("Pod", NS, "p")
    status = dict(stored["status"])
    status["conditions"] = [{**c, "status": "True"} if c["type"] == "Ready" else c
                            for c in status["conditions"]]
    client.update_status_donated({**stored, "status": status})
    cluster.run(6)
    assert [t for t, _ in writes.events] == ["MODIFIED"]
    [only] = slices(cluster)
    assert only["endpoints"][0]["conditions"]["serving"] is True


@pytest.mark.parametrize("publish_not_ready", [False, True])
@pytest.mark.parametrize("terminating", [False, True])
@pytest.mark.parametrize("ready_conditions", [
    [], [{"type": "Ready", "status": "True"}], [{"type": "Ready", "status": "False"}],
    [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
    [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}],  # the first one counts
    [{"type": "ContainersReady", "status": "True"}, {"type": "Ready", "status": "Unknown"}],
])
def test_endpoint_conditions_follow_pod_ready_and_are_the_shared_dicts(
        publish_not_ready: bool, terminating: bool, ready_conditions: list[Obj]) -> None:
    """``pod_endpoint`` reads readiness as ``condition_true(pod, "Ready")`` does and picks, without a
    table lookup for a pod not terminating, the very dict of the table of eight:
    ``ready = publishNotReadyAddresses || (serving && !terminating)``."""
    body = {**pod("p"), "status": {"podIP": "10.244.0.2", "phase": "Running", "conditions": ready_conditions}}
    body["metadata"] = {**body["metadata"], "uid": "u"}
    if terminating:
        body["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:05Z"
    serving = condition_true(body, "Ready")
    wire = pod_endpoint(body, "svc", publish_not_ready)
    assert wire is not None
    expected = _CONDITIONS[(publish_not_ready or (serving and not terminating), serving, terminating)]
    assert wire["conditions"] is expected
    assert expected == {"ready": publish_not_ready or (serving and not terminating), "serving": serving,
                        "terminating": terminating}


@pytest.mark.parametrize("change", ["podIP", "phase"])
def test_a_status_write_that_keeps_the_conditions_list_but_changes_ip_or_ends_the_pod_is_written(
        change: str) -> None:
    """The shortcut for a listed pod's status write that keeps the very conditions list holds only
    while the IP and the phase class stay too: a new IP is written, a Succeeded pod leaves its slice."""
    cluster, client, before, writes = _one_listed_pod_not_ready()
    assert len(before["endpoints"]) == 1
    stored = client.get("Pod", NS, "p")
    status = dict(stored["status"])  # conditions: the stored list itself
    if change == "podIP":
        status["podIP"] = "10.244.9.9"
        status["podIPs"] = [{"ip": "10.244.9.9"}]
    else:
        status["phase"] = "Succeeded"
    client.update_status_donated({**stored, "status": status})
    assert client.get("Pod", NS, "p")["status"]["conditions"] is stored["status"]["conditions"]
    cluster.run(5.5)
    assert [t for t, _ in writes.events] == ["MODIFIED"]
    [after] = slices(cluster)
    if change == "podIP":
        assert after["endpoints"][0]["addresses"] == ["10.244.9.9"]
    else:
        assert after["endpoints"] == []
