"""The short way through a donated EndpointSlice update (:mod:`fakecluster.apiserver.item_updates`) gives
exactly what the generic update gives: the same answer or the same error, the same stored version and the
same watch events, for random bodies made from a stored slice (items shared, new, invalid; fields equal,
changed, added, removed; metadata kept, changed, conflicting)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver import item_updates, writes
from fakecluster.cluster import Cluster

NS = "default"


def _endpoint(i: int) -> Obj:
    return {"addresses": [f"10.0.0.{i}"], "conditions": {"ready": True, "serving": i % 2 == 0},
            "targetRef": {"kind": "Pod", "namespace": NS, "name": f"p{i}", "uid": f"u{i}"}}


BAD_ITEMS: list[Any] = [
    {"addresses": "10.0.0.7"},
    {"addresses": ["10.0.0.7"], "conditions": {"ready": "yes"}},
    {"addresses": ["10.0.0.7"], "nope": 1},
    {"conditions": {"ready": True}},
    "not an endpoint",
    None,
]


VERSION_CHANGES: dict[str, tuple[str, Any]] = {
    "ready": ("conditions", {"ready": False, "serving": True}),
    "conditions-bad": ("conditions", {"ready": "no"}),
    "conditions-unknown": ("conditions", {"ready": True, "nope": True}),
    "address": ("addresses", ["10.0.1.1"]),
    "addresses-bad": ("addresses", [7]),
    "hostname": ("hostname", "h"),
    "hostname-bad": ("hostname", 5),
    "target-bad": ("targetRef", {"kind": 1}),
    "target-none": ("targetRef", None),
    "node": ("nodeName", "node-1"),
    "unknown": ("nodeNameX", "node-1"),
    "drop-addresses": ("addresses", None),
}
"""Changes to one field of a stored endpoint; ``None`` under ``addresses`` drops the (required) field."""


def _stored(cluster: Cluster, count: int, with_meta: bool) -> Obj:
    meta: Obj = {"name": "s", "generateName": "svc-", "namespace": NS}
    if with_meta:
        meta["labels"] = {"kubernetes.io/service-name": "svc"}
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Service", "name": "svc", "uid": "x",
                                    "controller": True}]
    return cluster.client().create_donated({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta,
        "addressType": "IPv4", "endpoints": [_endpoint(i) for i in range(count)],
        "ports": [{"name": "", "port": 80, "protocol": "TCP"}]})


@st.composite
def _plans(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(0, 5))
    items = draw(st.lists(st.one_of(
        st.tuples(st.just("shared"), st.integers(0, 4)),
        st.tuples(st.just("new"), st.integers(10, 20)),
        st.tuples(st.just("bad"), st.integers(0, len(BAD_ITEMS) - 1)),
        # A new version of a stored endpoint: its parts shared, one field changed (maybe to a bad value).
        st.tuples(st.just("version"), st.tuples(st.integers(0, 4), st.sampled_from(sorted(VERSION_CHANGES)))),
    ), max_size=7))
    return {
        "kept": draw(st.booleans()),
        "count": count,
        "with_meta": draw(st.booleans()),
        "items": items,
        "endpoints_value": draw(st.sampled_from(["list", "list", "list", "same", "none", "string"])),
        "field": draw(st.sampled_from(["keep", "keep", "keep", "addressType-equal", "addressType-bad",
                                        "addressType-FQDN", "ports-equal", "ports-bad", "unknown",
                                        "drop-ports", "drop-addressType", "apiVersion", "status"])),
        "meta": draw(st.sampled_from(["keep", "keep", "keep", "rv-same", "rv-other", "uid-same", "uid-other",
                                       "uid-equal", "namespace-equal", "rv-none",
                                       "labels-equal", "labels-new", "annotation", "generateName",
                                       "name-copy", "no-namespace", "creationTimestamp", "finalizers",
                                       "drop-labels", "not-a-dict"])),
    }


def _body(first: Obj, plan: dict[str, Any]) -> Obj:
    shared = first["endpoints"]
    endpoints: list[Any] = []
    for what, n in plan["items"]:
        if what == "shared":
            if shared:
                endpoints.append(shared[n % len(shared)])
        elif what == "new":
            endpoints.append(_endpoint(n))
        elif what == "version":
            at, change = n
            if shared:
                field, value = VERSION_CHANGES[change]
                endpoint = dict(shared[at % len(shared)])
                if change == "drop-addresses":
                    del endpoint[field]
                else:
                    endpoint[field] = value
                endpoints.append(endpoint)
        else:
            endpoints.append(BAD_ITEMS[n])
    body: Obj = {k: v for k, v in first.items() if k != "metadata"}
    body = {"apiVersion": first["apiVersion"], "kind": first["kind"], "metadata": {}, **body}
    value = {"list": endpoints, "same": shared, "none": None, "string": "x"}[plan["endpoints_value"]]
    body["endpoints"] = value
    field = plan["field"]
    if field == "addressType-equal":
        body["addressType"] = "".join(["IP", "v4"])
    elif field == "addressType-bad":
        body["addressType"] = "IPv5"
    elif field == "addressType-FQDN":
        body["addressType"] = "FQDN"
    elif field == "ports-equal":
        body["ports"] = [dict(p) for p in first["ports"]]
    elif field == "ports-bad":
        body["ports"] = [{"port": "80"}]
    elif field == "unknown":
        body["extra"] = 1
    elif field == "drop-ports":
        del body["ports"]
    elif field == "drop-addressType":
        del body["addressType"]
    elif field == "apiVersion":
        body["apiVersion"] = "discovery.k8s.io/v1beta1"
    elif field == "status":
        body["status"] = {}
    stored_meta = first["metadata"]
    meta: Obj = {k: stored_meta[k] for k in ("name", "generateName", "namespace", "labels", "ownerReferences")
                 if k in stored_meta}
    change = plan["meta"]
    if change == "rv-same":
        meta["resourceVersion"] = stored_meta["resourceVersion"]
    elif change == "rv-other":
        meta["resourceVersion"] = "999"
    elif change == "uid-same":
        meta["uid"] = stored_meta["uid"]
    elif change == "uid-other":
        meta["uid"] = "other"
    elif change == "uid-equal":  # an equal string, not the stored one: the stored one is kept
        meta["uid"] = "".join(stored_meta["uid"])
    elif change == "namespace-equal":
        meta["namespace"] = "".join(["def", "ault"])
    elif change == "rv-none":
        meta["resourceVersion"] = None
    elif change == "labels-equal" and "labels" in meta:
        meta["labels"] = dict(meta["labels"])
    elif change == "labels-new":
        meta["labels"] = {"team": "ml"}
    elif change == "annotation":
        meta["annotations"] = {"a": "b"}
    elif change == "generateName":
        meta["generateName"] = "other-"
    elif change == "name-copy":
        meta["name"] = "".join(["", "s"])
    elif change == "no-namespace":
        del meta["namespace"]
    elif change == "creationTimestamp":
        meta["creationTimestamp"] = "2020-01-01T00:00:00Z"
    elif change == "finalizers":
        meta["finalizers"] = ["example.com/keep"]
    elif change == "drop-labels":
        meta.pop("labels", None)
    body["metadata"] = "oops" if change == "not-a-dict" else meta
    return body


def _play(plan: dict[str, Any], short: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    cluster = Cluster(seed=0)
    first = _stored(cluster, plan["count"], plan["with_meta"])
    seen: list[WatchEvent] = []
    cluster.client().watch("EndpointSlice", seen.append)
    taken: list[bool] = []
    real = item_updates.short_update

    def spy(*args: Any) -> Any:
        result = real(*args) if short else None
        taken.append(result is not None)
        return result

    with monkeypatch.context() as patch:
        patch.setattr(writes, "short_update", spy)
        try:
            # (0, 0): lower bounds that always hold, so the shared ends are followed from the list ends.
            kept = (0, 0) if plan.get("kept") else None
            answer: Any = cluster.client().update_donated(_body(first, plan), kept_ends=kept)
        except ApiError as err:
            answer = (type(err).__name__, str(err))
    stored = cluster.server.get("EndpointSlice", NS, "s")
    # As JSON too: the fields in the same order, as a client reading the object would see them.
    events = [(e.type, e.object, json.dumps(e.object)) for e in seen]
    return answer, (stored, json.dumps(stored)), events, cluster.server.writes, any(taken)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_plans())
def test_the_short_way_answers_stores_and_notifies_as_the_generic_update(plan: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        *short, _ = _play(plan, True, monkeypatch)
        *generic, _ = _play(plan, False, monkeypatch)
    assert short == generic


def test_the_common_slice_write_takes_the_short_way_and_tells_watchers_what_it_shares() -> None:
    """One endpoint replaced among shared ones: the short way is taken (so the property above compares
    something), the watch event says how many endpoints at each end are the old version's."""
    plan = {"count": 5, "with_meta": True, "items": [("shared", 0), ("shared", 1), ("new", 12), ("shared", 3),
                                                     ("shared", 4)],
            "endpoints_value": "list", "field": "keep", "meta": "keep"}
    with pytest.MonkeyPatch.context() as monkeypatch:
        answer, _, _, _, taken = _play(plan, True, monkeypatch)
    assert taken
    assert isinstance(answer, dict) and answer["endpoints"][2]["addresses"] == ["10.0.0.12"]
    cluster = Cluster(seed=0)
    first = _stored(cluster, 5, True)
    seen: list[WatchEvent] = []
    cluster.client().watch("EndpointSlice", seen.append)
    cluster.client().update_donated(_body(first, plan))
    assert [e.shared_items for e in seen] == [(2, 2)]


def test_shares_of_the_generic_path_are_not_claimed() -> None:
    """A write the short way leaves to the generic update carries no shared-items count."""
    cluster = Cluster(seed=0)
    first = _stored(cluster, 3, True)
    seen: list[WatchEvent] = []
    cluster.client().watch("EndpointSlice", seen.append)
    body = _body(first, {"count": 3, "with_meta": True, "items": [("shared", 0), ("new", 11)],
                         "endpoints_value": "list", "field": "keep", "meta": "labels-new"})
    cluster.client().update_donated(body)
    assert [e.shared_items for e in seen] == [None]


def test_a_batched_write_checks_only_the_endpoints_the_stored_version_does_not_hold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two endpoints replaced far apart (a batch period's write): the short way is taken and validates
    those two, not the shared endpoints between them, and stores what the generic update stores."""
    plan = {"count": 5, "with_meta": True,
            "items": [("shared", 0), ("new", 11), ("shared", 2), ("new", 13), ("shared", 4)],
            "endpoints_value": "list", "field": "keep", "meta": "keep"}
    checked: list[Obj] = []
    real = item_updates.is_valid

    def counting(model: Any, item: Any, like: Any = None) -> bool:
        checked.append(item)
        return real(model, item, like)

    monkeypatch.setattr(item_updates, "is_valid", counting)
    with pytest.MonkeyPatch.context() as patch:
        answer, stored, events, writes_count, taken = _play(plan, True, patch)
    assert taken
    assert [e["addresses"] for e in checked] == [["10.0.0.11"], ["10.0.0.13"]]
    with pytest.MonkeyPatch.context() as patch:
        assert (answer, stored, events, writes_count) == _play(plan, False, patch)[:4]
