"""A donating writer's ``kept_ends`` (``InternalClient.update_donated``): the server finds the shared ends
of an EndpointSlice's endpoints from the writer's lower bounds, with the same result as a scan of both
whole lists; a writer that claims more than it kept is caught by the snapshot guard; and the
EndpointSlice controller's bounds hold through random placements, replacements and removals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj, shared_ends
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.snapshots import KeptEndsWrong
from fakecluster.cluster import Cluster
from fakecluster.controllers import endpointslice

NS = "default"


def _endpoint(i: int) -> Obj:
    return {"addresses": [f"10.0.0.{i}"], "conditions": {"ready": True}}


@st.composite
def _versions(draw: st.DrawFn) -> tuple[list[object], list[object]]:
    """A list and a next version of it: items kept (the very objects), new ones put in, some dropped."""
    old: list[object] = [object() for _ in range(draw(st.integers(0, 12)))]
    new = list(old)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        if op == "insert" or not new:
            new.insert(draw(st.integers(0, len(new))), object())
        elif op == "replace":
            new[draw(st.integers(0, len(new) - 1))] = object()
        else:
            del new[draw(st.integers(0, len(new) - 1))]
    return old, new


@settings(max_examples=400)
@given(_versions(), st.data())
def test_following_the_ends_on_from_any_lower_bound_finds_what_the_scan_finds(
        versions: tuple[list[object], list[object]], data: st.DataObject) -> None:
    old, new = versions
    head, tail = shared_ends(old, new)
    shorter = min(len(old), len(new))
    # Any true lower bounds: up to the maximal head, and up to the items kept at the end of each list.
    trailing = next((i for i in range(shorter) if old[-1 - i] is not new[-1 - i]), shorter)
    kept = (data.draw(st.integers(0, head)), data.draw(st.integers(0, trailing)))
    assert shared_ends(old, new, kept) == (head, tail)


def _stored_slice(cluster: Cluster, count: int) -> Obj:
    return cluster.client().create_donated(_body([_endpoint(i) for i in range(count)]))


def _body(endpoints: list[Obj]) -> Obj:
    """A slice as the controller writes it (its metadata without what the server sets)."""
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "manual", "namespace": NS}, "addressType": "IPv4", "endpoints": endpoints}


def test_a_true_claim_gives_the_scanned_ends_in_the_watch_event() -> None:
    cluster = Cluster(seed=1)
    assert cluster.server.snapshots is not None  # the suite's conftest turns the guard on
    first = _stored_slice(cluster, 6)
    events: list[WatchEvent] = []
    cluster.server.watch("EndpointSlice", events.append)
    body = _body([*first["endpoints"][:2], _endpoint(9), *first["endpoints"][3:]])
    cluster.client().update_donated(body, kept_ends=(1, 0))  # less than was kept: still found
    assert events[-1].shared_items == (2, 3)


def test_a_writer_claiming_an_end_it_changed_is_caught_by_the_snapshot_guard() -> None:
    """Outside the guard the server would trust the claim and skip the item's schema check: the guard
    (on in the whole suite) compares every claim's result with a scan."""
    cluster = Cluster(seed=1)
    first = _stored_slice(cluster, 6)
    body = _body([*first["endpoints"][:2], _endpoint(9), *first["endpoints"][3:]])
    with pytest.raises(KeptEndsWrong, match=r"led to \(6, 0\).*a scan finds \(2, 3\)"):
        cluster.client().update_donated(body, kept_ends=(6, 0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "ready", "unready", "finish", "delete"]),
                          st.integers(0, 11)), min_size=1, max_size=120),
       st.sampled_from([0.0, 0.5]))
def test_the_controllers_claims_hold_through_random_pod_changes(
        steps: list[tuple[str, int]], latency: float) -> None:
    """Pods of one Service come, turn ready and unready, finish and go, one step per half second (with
    ``latency`` 0.5 several changes go into one write), their statuses written here (on a node no
    kubelet runs): every slice write's claim is checked against a scan by the guard, and the written
    slices list exactly the pods that should be listed."""
    from fakecluster.cluster import ClusterConfig

    cluster = Cluster(seed=3, config=ClusterConfig(endpoint_slice_latency=latency))
    assert cluster.server.snapshots is not None
    server = cluster.server
    server.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": NS},
                   "spec": {"clusterIP": "None", "selector": {"app": "a"}}})
    alive: dict[int, bool] = {}
    for step, (verb, n) in enumerate(steps):
        name = f"p{n}"
        if verb == "add" and n not in alive:
            server.create({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "namespace": NS, "labels": {"app": "a"}},
                           "spec": {"containers": [{"name": "c", "image": "i"}],
                                    "nodeName": "elsewhere"}})  # no kubelet there
            pod = server.get("Pod", NS, name)
            server.update({**pod, "status": {"phase": "Running", "podIP": f"10.1.{n // 250}.{n % 250}"}},
                          subresource="status")
            alive[n] = False
        elif verb in ("ready", "unready") and n in alive:
            pod = server.get("Pod", NS, name)
            status = {**pod["status"], "conditions": [{"type": "Ready",
                                                       "status": "True" if verb == "ready" else "False"}]}
            server.update({**pod, "status": status}, subresource="status")
        elif verb == "finish" and n in alive:
            pod = server.get("Pod", NS, name)
            server.update({**pod, "status": {**pod["status"], "phase": "Succeeded"}}, subresource="status")
            del alive[n]
        elif verb == "delete" and n in alive:
            server.delete("Pod", NS, name, grace_period_seconds=0)
            del alive[n]
        cluster.run(until=(step + 1) * 0.5)
    cluster.run(until=len(steps) * 0.5 + 5)
    listed = sorted(e["targetRef"]["name"] for s in server.list("EndpointSlice", NS) for e in s["endpoints"])
    assert listed == sorted(f"p{n}" for n in alive)
    slices = server.list("EndpointSlice", NS)
    assert all(len(s["endpoints"]) <= endpointslice.MAX_ENDPOINTS_PER_SLICE for s in slices)
