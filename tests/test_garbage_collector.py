"""Deletion propagation and the garbage collector (fakecluster/controllers/garbage_collector.py +
ApiServer.delete)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.errors import NotFound
from fakecluster.api.objects import Obj, owner_reference
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.clock import Clock
from fakecluster.controllers.garbage_collector import GarbageCollector

FOREVER = 10_000.0


def make_server(gc_latency: float = 0.0) -> tuple[Clock, ApiServer]:
    clock = Clock()
    server = ApiServer(clock, random.Random("0"))
    register_builtin(server)
    GarbageCollector(clock, server, latency=gc_latency)
    server.register(ResourceType("Widget", "example.com/v1", "widgets", generation="custom",
                                 unconditional_update=False))
    return clock, server


def widget(server: ApiServer, name: str, *owners: Obj, block: bool = True,
           finalizers: list[str] | None = None, extra_refs: list[Obj] | None = None) -> Obj:
    refs = [owner_reference(o, controller=i == 0, block=block) for i, o in enumerate(owners)]
    refs += extra_refs or []
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if refs:
        meta["ownerReferences"] = refs
    if finalizers:
        meta["finalizers"] = finalizers
    return server.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {}})


def job(server: ApiServer, name: str, *owners: Obj) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owners:
        meta["ownerReferences"] = [owner_reference(o) for o in owners]
    return server.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}}}})


def pod(server: ApiServer, name: str, owner: Obj | None, *, bound: bool = False) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner)]
    created = server.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                             "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}})
    return server.bind("default", name, "node-1") if bound else created


def exists(server: ApiServer, kind: str, name: str) -> bool:
    try:
        server.get(kind, "default", name)
    except NotFound:
        return False
    return True


def current(server: ApiServer, kind: str, name: str) -> Obj:
    return server.get(kind, "default", name)


# -------------------------------------------------------------------------------------- Background


@pytest.mark.parametrize("policy", ["Background", None])
def test_background_removes_the_owner_at_once_and_collects_dependents(policy: str | None) -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    widget(server, "child", owner)
    pod(server, "p", owner)
    grandchild_owner = widget(server, "child2", owner)
    widget(server, "grandchild", grandchild_owner)
    widget(server, "bystander")
    assert server.delete("Widget", "default", "owner", propagation_policy=policy) is None
    assert not exists(server, "Widget", "owner")
    assert exists(server, "Widget", "child")  # the collector has not run yet
    clock.run(FOREVER)
    assert [o["metadata"]["name"] for o in server.list("Widget")] == ["bystander"]
    assert server.count("Pod") == 0


def test_background_leaves_running_pods_terminating_gracefully() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    pod(server, "p", owner, bound=True)
    server.delete("Widget", "default", "owner")
    clock.run(FOREVER)
    terminating = current(server, "Pod", "p")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    server.delete("Pod", "default", "p", grace_period_seconds=0)
    assert server.count("Pod") == 0


# -------------------------------------------------------------------------------------- Foreground


def held_in_the_foreground() -> tuple[Clock, ApiServer]:
    """Widget ``owner`` deleted in the foreground and waiting (the GC has run) for its dependent ``held``,
    which the finalizer ``example.com/hold`` keeps."""
    clock, server = make_server()
    owner = widget(server, "owner")
    widget(server, "held", owner, finalizers=["example.com/hold"])
    server.delete("Widget", "default", "owner", propagation_policy="Foreground")
    clock.run(FOREVER)
    return clock, server


def test_foreground_owner_waits_for_blocking_dependents() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    pod(server, "blocking", owner, bound=True)
    widget(server, "loose", owner, block=False)
    deleting = server.delete("Widget", "default", "owner", propagation_policy="Foreground")
    assert deleting is not None
    assert deleting["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert deleting["metadata"]["deletionTimestamp"] is not None
    clock.run(FOREVER)
    assert not exists(server, "Widget", "loose")  # every dependent is deleted...
    assert current(server, "Pod", "blocking")["metadata"]["deletionTimestamp"] is not None
    assert exists(server, "Widget", "owner")  # ...but the owner waits for the terminating blocking pod
    assert current(server, "Widget", "owner")["metadata"]["finalizers"] == ["foregroundDeletion"]
    server.delete("Pod", "default", "blocking", grace_period_seconds=0)
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")


def test_foreground_owner_does_not_wait_for_non_blocking_dependents() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    widget(server, "loose", owner, block=False, finalizers=["example.com/slow"])
    server.delete("Widget", "default", "owner", propagation_policy="Foreground")
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")
    assert current(server, "Widget", "loose")["metadata"]["deletionTimestamp"] is not None


def test_foreground_waits_for_dependent_finalizers() -> None:
    clock, server = held_in_the_foreground()
    assert exists(server, "Widget", "owner")
    assert current(server, "Widget", "held")["metadata"]["deletionTimestamp"] is not None
    server.patch("Widget", "default", "held", {"metadata": {"finalizers": None}})
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")


def test_foreground_without_dependents_removes_the_owner() -> None:
    clock, server = make_server()
    widget(server, "owner")
    assert server.delete("Widget", "default", "owner", propagation_policy="Foreground") is not None
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")


def test_foreground_cascades_through_a_job_to_its_pods() -> None:
    clock, server = make_server()
    events: list[tuple[str, str, str]] = []
    server.watch(None, lambda e: events.append((e.type, e.kind, e.object["metadata"]["name"])))
    top = widget(server, "jobset")
    child = job(server, "jobset-worker-0", top)
    pod(server, "worker-0", child, bound=True)
    pod(server, "worker-1", child, bound=True)
    server.delete("Widget", "default", "jobset", propagation_policy="Foreground")
    clock.run(FOREVER)
    assert current(server, "Job", "jobset-worker-0")["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert all(p["metadata"].get("deletionTimestamp") for p in server.list("Pod"))
    assert exists(server, "Widget", "jobset")
    server.delete("Pod", "default", "worker-0", grace_period_seconds=0)
    clock.run(FOREVER)
    assert exists(server, "Job", "jobset-worker-0")
    server.delete("Pod", "default", "worker-1", grace_period_seconds=0)
    clock.run(FOREVER)
    assert server.count("Job") == 0
    assert server.count("Widget") == 0
    deleted = [(kind, name) for t, kind, name in events if t == "DELETED"]
    assert deleted == [("Pod", "worker-0"), ("Pod", "worker-1"), ("Job", "jobset-worker-0"),
                       ("Widget", "jobset")]


def test_foreground_owner_released_by_its_dependent_is_removed() -> None:
    clock, server = held_in_the_foreground()
    assert exists(server, "Widget", "owner")
    # Released, though still deleting: the owner no longer waits for it.
    server.patch("Widget", "default", "held", {"metadata": {"ownerReferences": None}})
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")
    assert exists(server, "Widget", "held")


def test_foreground_owner_notified_when_the_final_write_also_drops_the_reference() -> None:
    clock, server = held_in_the_foreground()
    server.patch("Widget", "default", "held", {"metadata": {"ownerReferences": None, "finalizers": None}})
    assert not exists(server, "Widget", "held")
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")


def test_explicit_background_after_foreground_drops_the_wait() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    pod(server, "blocking", owner, bound=True)
    server.delete("Widget", "default", "owner", propagation_policy="Foreground")
    clock.run(FOREVER)
    assert exists(server, "Widget", "owner")
    assert server.delete("Widget", "default", "owner", propagation_policy="Background") is None
    assert not exists(server, "Widget", "owner")


# ------------------------------------------------------------------------------------------ Orphan


def test_orphan_strips_owner_references_and_keeps_dependents() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    other = widget(server, "other-owner")
    widget(server, "only-child", owner)
    widget(server, "shared", owner, other)
    deleting = server.delete("Widget", "default", "owner", propagation_policy="Orphan")
    assert deleting is not None
    assert deleting["metadata"]["finalizers"] == ["orphan"]
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")
    assert "ownerReferences" not in current(server, "Widget", "only-child")["metadata"]
    shared_refs = current(server, "Widget", "shared")["metadata"]["ownerReferences"]
    assert [r["uid"] for r in shared_refs] == [other["metadata"]["uid"]]
    assert server.list("Widget", owner_uid=owner["metadata"]["uid"]) == []


def test_job_default_propagation_is_orphan() -> None:
    clock, server = make_server()
    owner = job(server, "j")
    pod(server, "p0", owner, bound=True)
    pod(server, "p1", owner)
    deleting = server.delete("Job", "default", "j")
    assert deleting is not None
    assert deleting["metadata"]["finalizers"] == ["orphan"]
    clock.run(FOREVER)
    assert server.count("Job") == 0
    pods = server.list("Pod")
    assert [p["metadata"]["name"] for p in pods] == ["p0", "p1"]
    for p in pods:
        assert "ownerReferences" not in p["metadata"]
        assert p["metadata"].get("deletionTimestamp") is None


def test_job_with_background_policy_deletes_its_pods() -> None:
    clock, server = make_server()
    owner = job(server, "j")
    pod(server, "p0", owner)
    pod(server, "p1", owner)
    assert server.delete("Job", "default", "j", propagation_policy="Background") is None
    clock.run(FOREVER)
    assert server.count("Pod") == 0


def test_existing_orphan_finalizer_decides_the_default_policy() -> None:
    clock, server = make_server()
    owner = widget(server, "owner", finalizers=["orphan"])
    widget(server, "child", owner)
    server.delete("Widget", "default", "owner")  # Widget default is Background, but the finalizer says Orphan
    clock.run(FOREVER)
    assert not exists(server, "Widget", "owner")
    assert exists(server, "Widget", "child")


# --------------------------------------------------------------------------------- dangling owners


def test_dependent_of_an_absent_owner_is_collected() -> None:
    clock, server = make_server()
    ghost = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "ghost",
             "uid": "00000000-0000-4000-8000-000000000000"}
    widget(server, "orphaned", extra_refs=[ghost])
    clock.run(FOREVER)
    assert not exists(server, "Widget", "orphaned")


def test_owner_recreated_under_the_same_name_is_a_different_owner() -> None:
    clock, server = make_server()
    first = widget(server, "owner")
    server.delete("Widget", "default", "owner")
    widget(server, "owner")
    widget(server, "stale-child", first)  # points at the old uid
    clock.run(FOREVER)
    assert not exists(server, "Widget", "stale-child")
    assert exists(server, "Widget", "owner")


def test_dangling_reference_next_to_a_live_owner_is_removed() -> None:
    clock, server = make_server()
    live = widget(server, "live")
    ghost = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "ghost", "uid": "ghost-uid"}
    widget(server, "child", live, extra_refs=[ghost])
    clock.run(FOREVER)
    refs = current(server, "Widget", "child")["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == [live["metadata"]["uid"]]


def test_adding_a_dangling_owner_reference_later_is_collected() -> None:
    clock, server = make_server()
    widget(server, "child")
    clock.run(FOREVER)
    ghost = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "ghost", "uid": "ghost-uid"}
    server.patch("Widget", "default", "child", {"metadata": {"ownerReferences": [ghost]}})
    clock.run(FOREVER)
    assert not exists(server, "Widget", "child")


def test_dependent_with_a_live_owner_is_kept() -> None:
    clock, server = make_server()
    owner = widget(server, "owner")
    widget(server, "child", owner)
    clock.run(FOREVER)
    assert exists(server, "Widget", "child")


# ------------------------------------------------------------------------------------------ timing


def test_gc_latency_delays_collection() -> None:
    clock, server = make_server(gc_latency=2.0)
    owner = widget(server, "owner")
    widget(server, "child", owner)
    removed_at: list[float] = []

    def on_event(event: WatchEvent) -> None:
        if event.type == "DELETED" and event.object["metadata"]["name"] == "child":
            removed_at.append(clock.now)

    server.watch("Widget", on_event)
    clock.advance_to(10.0)
    server.delete("Widget", "default", "owner")
    assert clock.run(11.9) is True
    assert exists(server, "Widget", "child")
    clock.run(FOREVER)
    assert removed_at == [12.0]
