"""Watches of the API server (fakecluster/apiserver/server.py): ADDED / MODIFIED / DELETED in
resourceVersion order, per kind or for all kinds, nested writes, immutable snapshots."""

from __future__ import annotations

from apiserver_harness import Recorder, brief, job, make_server, pod, rv, widget

from fakecluster.api.watch import WatchEvent

# ------------------------------------------------------------------------------------------- watch


def test_watch_delivers_added_modified_deleted_in_resource_version_order() -> None:
    _, server = make_server()
    recorder = Recorder(server, "Widget")
    a = server.create(widget("a"))
    b = server.create(widget("b"))
    a2 = server.patch("Widget", "default", "a", {"spec": {"size": 2}})
    server.delete("Widget", "default", "b")
    server.delete("Widget", "default", "a")
    summary = recorder.summary()
    assert [(t, n) for t, _, n, _ in summary] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("DELETED", "a")]
    rvs = [r for *_, r in summary]
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == len(rvs)
    assert summary[0][3] == rv(a) and summary[1][3] == rv(b) and summary[2][3] == rv(a2)
    deleted_a = recorder.events[-1]
    assert deleted_a.object["spec"] == {"size": 2}  # the last state
    assert deleted_a.old is a2


def test_deleting_the_most_recently_written_object_still_gets_a_new_resource_version() -> None:
    _, server = make_server()
    recorder = Recorder(server)
    created = server.create(pod("p"))
    server.delete("Pod", "default", "p")
    assert [(t, r) for t, _, _, r in recorder.summary()] == [
        ("ADDED", rv(created)), ("DELETED", rv(created) + 1)]
    assert server.create(widget("w"))["metadata"]["resourceVersion"] == str(rv(created) + 2)


def test_watch_by_kind_and_all_kinds() -> None:
    _, server = make_server()
    pods = Recorder(server, "Pod")
    everything = Recorder(server)
    server.create(pod("p"))
    server.create(widget("w"))
    assert [e.kind for e in pods.events] == ["Pod"]
    assert [e.kind for e in everything.events] == ["Pod", "Widget"]


def test_nested_writes_from_a_handler_arrive_after_the_current_event_for_every_watcher() -> None:
    _, server = make_server()
    logs: dict[str, list[tuple[str, str, int]]] = {"first": [], "second": [], "all": []}

    def first(event: WatchEvent) -> None:
        logs["first"].append(brief(event))
        if event.type == "ADDED" and event.object["metadata"]["name"] == "a":
            server.create(widget("child"))
            server.patch("Widget", "default", "a", {"metadata": {"labels": {"seen": "yes"}}})

    server.watch("Widget", first)
    server.watch("Widget", lambda e: logs["second"].append(brief(e)))
    server.watch(None, lambda e: logs["all"].append(brief(e)))
    created = server.create(widget("a"))
    expected = [("ADDED", "a", rv(created)), ("ADDED", "child", rv(created) + 1),
                ("MODIFIED", "a", rv(created) + 2)]
    assert logs["first"] == expected
    assert logs["second"] == expected
    assert logs["all"] == expected


def test_watch_snapshots_are_never_mutated_by_later_writes() -> None:
    _, server = make_server()
    recorder = Recorder(server, "Job")
    server.create(job("j"))
    server.patch("Job", "default", "j", {"spec": {"parallelism": 3}, "metadata": {"labels": {"x": "y"}}})
    server.patch("Job", "default", "j", {"status": {"active": 3}}, subresource="status")
    first = recorder.events[0].object
    assert first["spec"]["parallelism"] == 1
    assert "labels" not in first["metadata"]
    assert first["status"] == {}
    assert recorder.events[1].old is first
    assert recorder.events[2].object["spec"]["parallelism"] == 3
