"""The client protocol's in-process implementation (fakecluster/client/local.py): every call returns the
store's shared read-only snapshot, the server never keeps a caller's object, and the snapshot guard
(fakecluster/apiserver/snapshots.py, on in this suite) catches a caller that changes a snapshot."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone, owner_reference
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.apiserver.snapshots import SnapshotMutated
from fakecluster.client.local import LocalClient
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock
from fakecluster.controllers.garbage_collector import GarbageCollector


def make_client() -> tuple[Clock, ApiServer, LocalClient]:
    clock = Clock()
    server = ApiServer(clock, random.Random("0"), check_snapshots=True)
    register_builtin(server)
    GarbageCollector(clock, server)
    server.register(ResourceType("Widget", "example.com/v1", "widgets", generation="custom",
                                 unconditional_update=False))
    return clock, server, LocalClient(server)


def widget(name: str, labels: dict[str, str] | None = None, **fields: Any) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1}, **fields}


def owned_by(owner: Obj, name: str) -> Obj:
    body = widget(name)
    body["metadata"]["ownerReferences"] = [owner_reference(owner)]
    return body


def test_local_client_satisfies_the_protocol() -> None:
    _, _, client = make_client()
    as_protocol: Client = client
    assert as_protocol.list("Widget") == []


def test_get_returns_the_shared_snapshot() -> None:
    _, server, client = make_client()
    client.create(widget("w"))
    assert client.get("Widget", "default", "w") is server.get("Widget", "default", "w")


def test_changing_a_snapshot_fails_the_next_write() -> None:
    _, _, client = make_client()
    client.create(widget("w"))
    client.create(widget("other"))
    mine = client.get("Widget", "default", "w")
    mine["spec"]["size"] = 99  # a caller that forgot to copy
    changed = r"Widget default/w \(resourceVersion \d+\) was changed .* spec\.size"
    with pytest.raises(SnapshotMutated, match=changed):
        client.update(clone(client.get("Widget", "default", "other")))


def test_a_copied_snapshot_may_be_changed_and_written_back() -> None:
    _, server, client = make_client()
    client.create(widget("w"))
    mine = clone(client.get("Widget", "default", "w"))
    mine["spec"]["size"] = 2
    assert client.update(mine) is server.get("Widget", "default", "w")
    assert server.get("Widget", "default", "w")["spec"]["size"] == 2


def test_list_returns_snapshots_and_passes_selectors() -> None:
    _, server, client = make_client()
    client.create(widget("a", {"app": "x"}))
    client.create(widget("b", {"app": "y"}))
    other = widget("c", {"app": "x"})
    other["metadata"]["namespace"] = "other"
    client.create(other)
    found = client.list("Widget", labels={"app": "x"})
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in found] == [
        ("default", "a"), ("other", "c")]
    shared = client.list("Widget", "default", labels="app in (x, y)")
    assert [o["metadata"]["name"] for o in shared] == ["a", "b"]
    assert shared[0] is server.get("Widget", "default", "a")
    assert [o["metadata"]["name"] for o in client.list("Widget", labels="app!=x")] == ["b"]


def test_list_by_owner() -> None:
    _, _, client = make_client()
    owner = client.create(widget("owner"))
    client.create(owned_by(owner, "child"))
    owned = client.list("Widget", owner_uid=owner["metadata"]["uid"])
    assert [o["metadata"]["name"] for o in owned] == ["child"]


def test_create_does_not_keep_references_to_the_callers_object() -> None:
    _, server, client = make_client()
    body = widget("w")
    created = client.create(body)
    body["spec"]["size"] = 7
    assert server.get("Widget", "default", "w")["spec"]["size"] == 1
    assert created is server.get("Widget", "default", "w")


def test_update_and_update_status_do_not_keep_the_callers_object() -> None:
    _, server, client = make_client()
    client.create(widget("w"))
    mine = clone(client.get("Widget", "default", "w"))
    mine["spec"]["size"] = 2
    updated = client.update(mine)
    assert updated["spec"]["size"] == 2
    mine["spec"]["size"] = 3  # the caller keeps using its object
    assert server.get("Widget", "default", "w")["spec"]["size"] == 2
    mine = clone(updated)
    mine["status"] = {"ready": True}
    written = client.update_status(mine)
    assert written["status"] == {"ready": True}
    mine["status"]["ready"] = False
    assert server.get("Widget", "default", "w")["status"] == {"ready": True}


def test_patch_does_not_keep_the_patch() -> None:
    _, server, client = make_client()
    client.create(widget("w"))
    patch = {"metadata": {"labels": {"a": "b"}}, "spec": {"items": [1, 2]}}
    client.patch("Widget", "default", "w", patch)
    patch["spec"]["items"].append(3)
    patch["metadata"]["labels"]["a"] = "changed"
    stored = server.get("Widget", "default", "w")
    assert stored["spec"]["items"] == [1, 2]
    assert stored["metadata"]["labels"] == {"a": "b"}
    status = client.patch("Widget", "default", "w", {"status": {"phase": "Up"}}, subresource="status")
    assert status["status"] == {"phase": "Up"}


def test_a_watch_event_object_is_a_guarded_snapshot() -> None:
    _, _, client = make_client()
    seen: list[WatchEvent] = []
    client.watch("Widget", seen.append)
    client.create(widget("w"))
    seen[0].object["metadata"]["labels"] = {"changed": "by a handler"}
    with pytest.raises(SnapshotMutated, match=r"metadata\.labels"):
        client.create(widget("next"))


def test_the_guard_is_off_unless_asked_for() -> None:
    server = ApiServer(Clock(), random.Random(0), check_snapshots=False)
    assert server.snapshots is None
    assert ApiServer(Clock(), random.Random(0), check_snapshots=True).snapshots is not None


def test_stale_copy_update_conflicts() -> None:
    _, _, client = make_client()
    client.create(widget("w"))
    first = clone(client.get("Widget", "default", "w"))
    second = clone(client.get("Widget", "default", "w"))
    first["spec"]["size"] = 2
    client.update(first)
    second["spec"]["size"] = 3
    with pytest.raises(ApiError) as info:
        client.update(second)
    assert info.value.reason == "Conflict"


def test_delete_passes_options_through() -> None:
    clock, server, client = make_client()
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}
    client.create(body)
    server.bind("default", "p", "node-1")
    assert client.delete("Pod", "default", "p", grace_period_seconds=5) is None
    assert server.get("Pod", "default", "p")["metadata"]["deletionGracePeriodSeconds"] == 5
    with pytest.raises(ApiError) as info:
        client.delete("Pod", "default", "p", preconditions={"uid": "other"})
    assert info.value.reason == "Conflict"
    client.delete("Pod", "default", "p", grace_period_seconds=0)
    assert server.count("Pod") == 0
    owner = client.create(widget("owner"))
    client.create(owned_by(owner, "child"))
    client.delete("Widget", "default", "owner", propagation_policy="Orphan")
    clock.run(100)
    assert [o["metadata"]["name"] for o in client.list("Widget")] == ["child"]


def test_watch_delivers_store_snapshots() -> None:
    _, server, client = make_client()
    events: list[WatchEvent] = []
    client.watch("Widget", events.append)
    created = client.create(widget("w"))
    assert [e.type for e in events] == ["ADDED"]
    assert events[0].object is server.get("Widget", "default", "w")
    assert events[0].object == created
    assert clone(events[0].object) == created
