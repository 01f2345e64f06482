"""Deletion in the API server (fakecluster/apiserver/server.py): finalizers and ``deletionTimestamp``,
propagation policies, and pods' graceful deletion (``pkg/registry/core/pod/strategy.go``
``CheckGracefulDelete``)."""

from __future__ import annotations

from apiserver_harness import Recorder, bound_pod, make_server, pod, raises, rv, widget

from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import rfc3339

# -------------------------------------------------------------------------------------- finalizers


def test_delete_with_finalizers_marks_deleting_until_last_finalizer_goes() -> None:
    clock, server = make_server()
    body = widget("w")
    body["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
    created = server.create(body)
    recorder = Recorder(server, "Widget")
    clock.advance_to(12.5)
    deleting = server.delete("Widget", "default", "w")
    assert deleting is not None
    meta = deleting["metadata"]
    assert meta["deletionTimestamp"] == "2025-01-01T00:00:12Z"
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == created["metadata"]["generation"] + 1
    assert server.get("Widget", "default", "w") is deleting
    assert server.delete("Widget", "default", "w") is deleting  # deleting again changes nothing
    one_left = server.patch("Widget", "default", "w", {"metadata": {"finalizers": ["example.com/b"]}})
    assert one_left["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    gone = server.patch("Widget", "default", "w", {"metadata": {"finalizers": None}})
    assert gone["metadata"]["resourceVersion"] == str(rv(one_left) + 1)
    assert raises(lambda: server.get("Widget", "default", "w")).reason == "NotFound"
    assert recorder.summary() == [
        ("MODIFIED", "Widget", "w", rv(deleting)),
        ("MODIFIED", "Widget", "w", rv(one_left)),
        ("DELETED", "Widget", "w", rv(one_left) + 1),
    ]
    assert recorder.events[-1].object is gone
    assert recorder.events[-1].old is one_left
    assert "finalizers" not in gone["metadata"]
    assert server.get_by_uid(created["metadata"]["uid"]) is None


def deleting_widget() -> tuple[ApiServer, Obj]:
    """A server and its Widget ``w``, deleted but kept by the finalizer ``a``."""
    _, server = make_server()
    body = widget("w")
    body["metadata"]["finalizers"] = ["a"]
    server.create(body)
    deleting = server.delete("Widget", "default", "w")
    assert deleting is not None
    return server, deleting


def test_no_new_finalizers_while_deleting() -> None:
    server, deleting = deleting_widget()
    err = raises(lambda: server.patch("Widget", "default", "w",
                                      {"metadata": {"finalizers": ["a", "z", "b"]}}))
    assert err.code == 422
    assert err.message == (
        'Widget.example.com "w" is invalid: metadata.finalizers: Forbidden: '
        "no new finalizers can be added if the "
        'object is being deleted, found new finalizers []string{"b", "z"}'
    )
    reordered = server.patch("Widget", "default", "w", {"metadata": {"finalizers": ["a"]}})
    assert reordered is deleting


def test_deletion_timestamp_cannot_be_unset_by_update() -> None:
    server, deleting = deleting_widget()
    attempt = clone(deleting)
    del attempt["metadata"]["deletionTimestamp"]
    attempt["spec"]["size"] = 7
    updated = server.update(attempt)
    assert updated["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]
    assert updated["spec"]["size"] == 7


def test_removing_last_finalizer_and_relabelling_in_one_write_leaves_no_stale_index() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"].update({"finalizers": ["a"], "labels": {"app": "old"},
                             "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o",
                                                  "uid": "owner"}]})
    server.create(body)
    server.delete("Widget", "default", "w")
    server.patch("Widget", "default", "w", {"metadata": {"finalizers": None, "labels": {"app": "new"},
                                                          "ownerReferences": None}})
    assert server.list("Widget", selector="app=old") == []
    assert server.list("Widget", selector="app=new") == []
    assert server.list("Widget", owner_uid="owner") == []
    assert server.dependents("owner") == []


# --------------------------------------------------------------------------- pod graceful deletion


def test_scheduled_pod_is_deleted_gracefully() -> None:
    clock, server = make_server()
    bound = bound_pod(server, "p")
    recorder = Recorder(server, "Pod")
    clock.advance_to(100)
    terminating = server.delete("Pod", "default", "p")
    assert terminating is not None
    meta = terminating["metadata"]
    assert meta["deletionTimestamp"] == rfc3339(130)
    assert meta["deletionGracePeriodSeconds"] == 30
    assert meta["generation"] == bound["metadata"]["generation"] + 1
    assert server.get("Pod", "default", "p") is terminating
    clock.advance_to(105)
    # Pending: a plain second delete, or one with a longer grace, changes nothing.
    assert server.delete("Pod", "default", "p") is terminating
    assert server.delete("Pod", "default", "p", grace_period_seconds=60) is terminating
    assert server.delete("Pod", "default", "p", grace_period_seconds=0) is None
    assert server.count("Pod") == 0
    assert [e[0] for e in recorder.summary()] == ["MODIFIED", "DELETED"]
    assert recorder.summary()[1][3] > rv(terminating)


def test_unscheduled_and_terminal_pods_are_removed_at_once() -> None:
    _, server = make_server()
    server.create(pod("unscheduled"))
    assert server.delete("Pod", "default", "unscheduled", grace_period_seconds=30) is None
    bound_pod(server, "done")
    server.patch("Pod", "default", "done", {"status": {"phase": "Succeeded"}}, subresource="status")
    assert server.delete("Pod", "default", "done") is None
    assert server.count("Pod") == 0


def test_pod_grace_period_from_spec_and_options() -> None:
    _, server = make_server()
    bound_pod(server, "short", terminationGracePeriodSeconds=5)
    short = server.delete("Pod", "default", "short")
    assert short is not None
    assert short["metadata"]["deletionGracePeriodSeconds"] == 5
    bound_pod(server, "neg")
    neg = server.delete("Pod", "default", "neg", grace_period_seconds=-3)
    assert neg is not None
    assert neg["metadata"]["deletionGracePeriodSeconds"] == 1  # CheckGracefulDelete: negative becomes 1
    bound_pod(server, "zero")
    assert server.delete("Pod", "default", "zero", grace_period_seconds=0) is None


def test_shorter_second_delete_moves_the_deadline_earlier_from_the_original_request() -> None:
    clock, server = make_server()
    bound_pod(server, "p")
    clock.advance_to(10)
    first = server.delete("Pod", "default", "p", grace_period_seconds=60)
    assert first is not None
    assert first["metadata"]["deletionTimestamp"] == rfc3339(70)
    clock.advance_to(50)
    second = server.delete("Pod", "default", "p", grace_period_seconds=30)
    assert second is not None
    assert second["metadata"]["deletionGracePeriodSeconds"] == 30
    assert second["metadata"]["deletionTimestamp"] == rfc3339(40)  # 10 + 30, not 50 + 30
    assert rv(second) > rv(first)
    assert server.delete("Pod", "default", "p", grace_period_seconds=45) is second


def tracked_pod(server: ApiServer, name: str, *, bind: bool = True) -> Obj:
    body = pod(name)
    body["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    created = server.create(body)
    return server.bind("default", name, "node-1") if bind else created


def test_dropping_the_finalizer_during_the_grace_period_keeps_the_pod() -> None:
    clock, server = make_server()
    tracked_pod(server, "p")
    clock.advance_to(3)
    terminating = server.delete("Pod", "default", "p")
    assert terminating is not None
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    clock.advance_to(20)
    waiting = server.patch("Pod", "default", "p", {"metadata": {"finalizers": None}})
    assert server.get("Pod", "default", "p") is waiting  # the kubelet has not confirmed termination yet
    assert server.delete("Pod", "default", "p", grace_period_seconds=0) is None


def test_pod_with_finalizer_killed_with_grace_zero_stays_until_finalized() -> None:
    clock, server = make_server()
    tracked_pod(server, "q")
    clock.advance_to(20)
    server.delete("Pod", "default", "q")
    clock.advance_to(25)
    killed = server.delete("Pod", "default", "q", grace_period_seconds=0)
    assert killed is not None
    assert killed["metadata"]["deletionGracePeriodSeconds"] == 0
    assert killed["metadata"]["deletionTimestamp"] == rfc3339(20)
    assert server.delete("Pod", "default", "q", grace_period_seconds=0) is killed
    server.patch("Pod", "default", "q", {"metadata": {"finalizers": None}})
    assert raises(lambda: server.get("Pod", "default", "q")).reason == "NotFound"


def test_unscheduled_pod_with_finalizer_is_marked_not_removed() -> None:
    clock, server = make_server()
    tracked_pod(server, "u", bind=False)
    clock.advance_to(4)
    marked = server.delete("Pod", "default", "u")
    assert marked is not None
    assert marked["metadata"]["deletionTimestamp"] == rfc3339(4)
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    server.patch("Pod", "default", "u", {"metadata": {"finalizers": []}})
    assert server.count("Pod") == 0


def test_policy_on_a_pending_graceful_delete_does_not_add_finalizers() -> None:
    _, server = make_server()
    terminating = server.delete("Pod", "default", bound_pod(server, "p")["metadata"]["name"])
    assert terminating is not None
    assert server.delete("Pod", "default", "p", propagation_policy="Foreground") is terminating


def test_background_delete_strips_an_existing_orphan_finalizer() -> None:
    _, server = make_server()
    bound_pod(server, "p")
    orphaning = server.delete("Pod", "default", "p", propagation_policy="Orphan")
    assert orphaning is not None
    assert orphaning["metadata"]["finalizers"] == ["orphan"]
    killed = server.delete("Pod", "default", "p", propagation_policy="Background", grace_period_seconds=0)
    assert killed is None
    assert server.count("Pod") == 0
