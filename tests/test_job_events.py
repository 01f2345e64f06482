"""The Job controller's pod-control events and client-go's event correlator
(``fakecluster/controllers/job/events.py``, ``pkg/controller/controller_utils.go``,
``tools/record/events_cache.go``): one ``SuccessfulCreate``/``SuccessfulDelete`` per pod, aggregation after
ten distinct messages, the per-object spam filter (25 events, one more per 5 minutes)."""

from __future__ import annotations

from fakecluster.api.objects import Obj
from tests.test_job_controller import NS, Harness, events


def stored(h: Harness) -> list[Obj]:
    return sorted(h.api.list("Event", NS), key=lambda e: e["metadata"]["name"])


def test_each_created_pod_gets_a_successful_create_event_in_creation_order() -> None:
    h = Harness()
    h.create_job(parallelism=3, completions=3)
    h.run_until(0)
    names = sorted(h.pod_names(), key=lambda n: next(
        p["metadata"]["resourceVersion"] for p in h.pods() if p["metadata"]["name"] == n))
    assert events(h, pod_control=True) == [("Normal", "SuccessfulCreate", f"Created pod: {n}") for n in names]
    event = stored(h)[0]
    assert event["regarding"]["kind"] == "Job" and event["reportingController"] == "job-controller"


def test_suspend_records_successful_delete_per_pod() -> None:
    h = Harness(terminate_after=2)
    h.create_job(parallelism=2, completions=2)
    h.run_until(0)
    pods = set(h.pod_names())
    job = h.job()
    job["spec"]["suspend"] = True
    h.api.update(job)
    h.run_until(5)
    deleted = {note.removeprefix("Deleted pod: ") for _t, reason, note in events(h, pod_control=True)
               if reason == "SuccessfulDelete"}
    assert deleted == pods


def test_similar_events_are_aggregated_after_ten_and_the_spam_filter_stops_at_25() -> None:
    h = Harness()
    h.create_job(parallelism=30, completions=30)
    h.run_until(0)
    objects = stored(h)
    # 9 individual events, then one "(combined from similar events)" event for the 10th and later ones.
    assert len(objects) == 10
    assert all(e["note"].startswith("Created pod: ") for e in objects[:9])
    combined = objects[9]
    assert combined["note"].startswith("(combined from similar events): Created pod: ")
    # 25 tokens: 9 creates, the aggregate's create and 15 of its count updates are written.
    assert combined["deprecatedCount"] == 16
    # Five minutes later one token is back: suspending deletes 30 pods and records Suspended, but only the
    # first of those 31 events (a SuccessfulDelete) is written; as upstream, the rest are dropped.
    h.run_until(301)
    job = h.job()
    job["spec"]["suspend"] = True
    h.api.update(job)
    h.run_until(302)
    later = [(e["reason"], e["note"]) for e in stored(h)[10:]]
    assert len(later) == 1 and later[0][0] == "SuccessfulDelete"
    assert not any(r == "Suspended" for _t, r, _n in events(h))


def test_pod_control_events_draw_uids_from_their_own_stream() -> None:
    """SuccessfulCreate events are newer than the Job-level ones: their uids come from a stream of their own,
    so adding them shifted no pod's generated name (the version-1 milestone baseline keeps its names)."""
    from fakecluster.cluster import Cluster

    cluster = Cluster(seed=7)
    event = cluster.server.resource("Event")
    assert event.rng_for is not None
    pod_control = event.rng_for({"reason": "SuccessfulCreate", "regarding": {"kind": "Job"}})
    assert pod_control is not None
    assert event.rng_for({"reason": "Completed", "regarding": {"kind": "Job"}}) is None
    assert event.rng_for({"reason": "SuccessfulCreate", "regarding": {"kind": "JobSet"}}) is None
    before = cluster.server._rng.getstate()
    cluster.server.create({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                           "metadata": {"namespace": "default", "name": "j.1"}, "reason": "SuccessfulCreate",
                           "regarding": {"kind": "Job", "namespace": "default", "name": "j"}})
    assert cluster.server._rng.getstate() == before
