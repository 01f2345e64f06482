"""The lagging informer cache (fakecluster/client/informer.py) and what it does to the controllers: reads and
watch events trail the API server by the lag, writes do not, stale resourceVersions really conflict, a
restarted controller gets a fresh cache, and the Job controller's expectations keep pod counts right."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from fault_scenarios import final_jobset_status, play, play_collecting, write

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.apiserver.snapshots import SnapshotMutated
from fakecluster.client.informer import Informer, InformerClient
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.job import expectations as job_expectations
from fakecluster.scenario.runner import ScenarioOutcome
from fakecluster.scenario.trace import TraceEvent


def store(lag: float) -> tuple[Clock, ApiServer, Informer, InformerClient]:
    clock = Clock()
    server = ApiServer(clock, random.Random(0))
    register_builtin(server)
    informer = Informer(server, clock, lag)
    return clock, server, informer, InformerClient(LocalClient(server, "job-controller"), informer)


def pod(name: str, *, labels: dict[str, str] | None = None, owner: str | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": labels or {}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": owner,
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def at(clock: Clock, when: float, action: object, *args: object) -> None:
    clock.call_at(when, action, *args)  # type: ignore[arg-type]


def names(objs: list[Obj]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


# --------------------------------------------------------------------------- the cache


def test_reads_trail_the_server_by_the_lag() -> None:
    clock, server, _, client = store(lag=0.5)
    server.create(pod("a"))
    with pytest.raises(ApiError) as info:
        client.get("Pod", "default", "a")
    assert info.value.reason == "NotFound"
    assert client.list("Pod") == []
    clock.run(0.49)
    assert client.list("Pod") == []
    clock.run(0.5)
    assert client.get("Pod", "default", "a")["metadata"]["name"] == "a"
    at(clock, 1.0, lambda: server.patch("Pod", "default", "a", {"metadata": {"labels": {"v": "2"}}}))
    clock.run(1.4)
    assert client.get("Pod", "default", "a")["metadata"]["labels"] == {}
    clock.run(1.5)
    assert client.get("Pod", "default", "a")["metadata"]["labels"] == {"v": "2"}
    at(clock, 2.0, lambda: server.delete("Pod", "default", "a", grace_period_seconds=0))
    clock.run(2.4)
    assert names(client.list("Pod")) == ["a"]
    clock.run(2.5)
    assert client.list("Pod") == []


def test_handlers_get_every_event_in_order_lag_later_with_the_cache_at_that_event() -> None:
    clock, server, informer, client = store(lag=2.0)
    seen: list[tuple[float, str, str, str]] = []

    def handler(event: WatchEvent) -> None:
        meta = event.object["metadata"]
        try:
            cached = client.get("Pod", "default", meta["name"])["metadata"]["resourceVersion"]
        except ApiError:
            cached = "gone"
        seen.append((clock.now, event.type, meta["name"], cached))

    client.watch("Pod", handler)
    server.create(pod("a"))
    at(clock, 0.5, lambda: server.create(pod("b")))
    at(clock, 0.5, lambda: server.patch("Pod", "default", "a", {"metadata": {"labels": {"x": "1"}}}))
    at(clock, 1.0, lambda: server.delete("Pod", "default", "b", grace_period_seconds=0))
    clock.run(10)
    assert seen == [
        (2.0, "ADDED", "a", "1"),
        (2.5, "ADDED", "b", "2"),
        (2.5, "MODIFIED", "a", "3"),
        (3.0, "DELETED", "b", "gone"),
    ]
    assert informer.applied == 4


def test_reads_share_the_stored_snapshot_and_the_guard_watches_them() -> None:
    clock, server, _, client = store(lag=0.1)
    stored = server.create(pod("a"))
    clock.run(1)
    assert client.get("Pod", "default", "a") is stored
    assert client.list("Pod")[0] is stored
    if server.snapshots is not None:  # on in this suite (conftest.py)
        client.get("Pod", "default", "a")["metadata"]["labels"]["mutated"] = "yes"
        with pytest.raises(SnapshotMutated, match=r"metadata\.labels\.mutated"):
            server.create(pod("b"))


def test_list_filters_like_the_server_by_namespace_labels_and_owner() -> None:
    clock, server, _, client = store(lag=1.0)
    server.create(pod("c", labels={"app": "x"}, owner="u1"))
    server.create(pod("a", labels={"app": "y"}, owner="u1"))
    server.create(pod("b", labels={"app": "x"}, owner="u2"))
    other = pod("d", labels={"app": "x"})
    other["metadata"]["namespace"] = "other"
    server.create(other)
    clock.run(1)
    for kwargs in ({}, {"labels": {"app": "x"}}, {"labels": "app in (x,y)"}, {"owner_uid": "u1"},
                   {"owner_uid": "u1", "labels": {"app": "x"}}, {"owner_uid": "nobody"}):
        for namespace in (None, "", "default", "other"):
            assert names(client.list("Pod", namespace, **kwargs)) == names(
                server.list("Pod", namespace, kwargs.get("labels"), kwargs.get("owner_uid"))
            ), (namespace, kwargs)
    server.patch("Pod", "default", "a", {"metadata": {"ownerReferences": None}})
    server.delete("Pod", "default", "c", grace_period_seconds=0)
    assert names(client.list("Pod", "default", owner_uid="u1")) == ["a", "c"]  # not yet seen
    clock.run(2)
    assert client.list("Pod", "default", owner_uid="u1") == []


def test_writes_go_to_the_server_and_a_stale_resource_version_conflicts() -> None:
    clock, server, _, client = store(lag=1.0)
    server.create(pod("a"))
    clock.run(1)
    stale = clone(client.get("Pod", "default", "a"))
    server.patch("Pod", "default", "a", {"metadata": {"labels": {"by": "someone-else"}}})
    cached = client.get("Pod", "default", "a")
    assert cached["metadata"]["resourceVersion"] == stale["metadata"]["resourceVersion"]
    stale["metadata"]["labels"]["by"] = "me"
    with pytest.raises(ApiError) as info:
        client.update(stale)
    assert (info.value.code, info.value.reason) == (409, "Conflict")
    client.create(pod("b"))
    assert server.get("Pod", "default", "b")["metadata"]["name"] == "b"


def test_a_new_informer_starts_from_the_store_and_a_stopped_one_goes_silent() -> None:
    clock, server, informer, client = store(lag=1.0)
    server.create(pod("a"))
    late = Informer(server, clock, 1.0)
    assert names(late.list("Pod")) == ["a"]  # the initial List
    calls: list[str] = []
    client.watch("Pod", lambda e: calls.append(e.object["metadata"]["name"]))
    informer.stop()
    server.create(pod("b"))
    clock.run(5)
    assert calls == []
    assert client.list("Pod") == []
    assert names(late.list("Pod")) == ["a", "b"]
    assert clock.next_time() is None  # a stopped informer schedules nothing


# --------------------------------------------------------------------------- wiring


def test_only_the_controllers_read_through_an_informer_and_lag_0_means_none() -> None:
    cluster = Cluster(0, ClusterConfig(informer_lag=0.5))
    assert isinstance(cluster.client("jobset-controller"), InformerClient)
    assert isinstance(cluster.client("job-controller"), InformerClient)
    assert type(cluster.client("scenario")) is LocalClient
    assert type(cluster.client("system:node")) is LocalClient
    assert isinstance(cluster.job_controller._client, InformerClient)
    plain = Cluster(0, ClusterConfig(informer_lag=0.0))
    assert type(plain.client("jobset-controller")) is LocalClient


# --------------------------------------------------------------------------- controllers under lag


def first(outcome: ScenarioOutcome, kind: str, event: str, group: str) -> TraceEvent:
    return next(e for e in outcome.trace if e.kind == kind and e.event == event and e.replicated_job == group)


def test_informer_lag_delays_what_the_controllers_do_by_at_least_the_lag(tmp_path: Path) -> None:
    """Each controller in the chain reacts 500 ms late: the JobSet controller to the new JobSet, the Job
    controller to the new Job, and, for the second InOrder replicated job, the Job controller to the
    driver pod's readiness and then the JobSet controller to the driver Job's status."""
    fast, _ = play(write(tmp_path, name="fast"))
    slow, slow_run = play(write(tmp_path, "informerLag: 500ms\n", name="slow"))
    assert fast.passed, fast.report
    assert slow.passed, slow.report
    lag = 0.5

    def gaps(outcome: ScenarioOutcome) -> tuple[float, float, float, float]:
        job = first(outcome, "Job", "Created", "driver").time
        pod = first(outcome, "Pod", "Created", "driver").time
        ready = first(outcome, "Pod", "Ready", "driver").time
        workers = first(outcome, "Job", "Created", "workers").time
        return job, pod - job, workers - ready, workers

    slow_job, slow_pod, slow_workers, slow_at = gaps(slow)
    fast_job, fast_pod, fast_workers, fast_at = gaps(fast)
    assert slow_job >= fast_job + lag
    assert slow_pod >= fast_pod + lag
    assert slow_workers >= fast_workers + 2 * lag
    assert slow_at >= fast_at + lag
    assert slow_run.cluster.fault_stats.total_conflicts == 0


def test_stale_reads_produce_real_conflicts_that_the_controllers_survive(tmp_path: Path) -> None:
    """Worker pods becoming Ready within the 2 s lag of each other make the JobSet controller write its
    status, then reconcile again from a cache that predates that write: the server answers 409."""
    jitter = "  - match: {replicatedJob: workers}\n    jitter: 1s\n"
    outcome, run = play(write(tmp_path, "informerLag: 2s\n", pods=jitter))
    assert outcome.passed, outcome.report
    assert run.cluster.fault_stats.total_conflicts == 0  # nothing injected: these are the server's own
    errors = [*run.actions.controller.controller.stats.last_errors,
              *run.cluster.job_controller.controller.stats.last_errors]
    assert any("the object has been modified" in e for e in errors), errors
    _, base_run = play(write(tmp_path, name="baseline", pods=jitter))
    assert final_jobset_status(run) == final_jobset_status(base_run)


def pods_created_per_slot(outcome: ScenarioOutcome) -> Counter[tuple[str | None, int | None, int | None]]:
    return Counter((e.replicated_job, e.job_index, e.pod_index)
                   for e in outcome.trace if e.kind == "Pod" and e.event == "Created")


def test_pod_expectations_keep_a_lagging_job_controller_from_creating_pods_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a 2 s lag, a sync retried 1 s after a Conflict still sees no pods in its cache; only the
    creation expectations stop it from creating every pod again (as upstream's ``satisfiedExpectations``)."""
    path = write(tmp_path, "informerLag: 2s\nfaults: {conflictRate: 0.3}\n")
    outcome, run = play(path)
    assert outcome.passed, outcome.report
    assert run.cluster.fault_stats.conflicts.get("job-controller", 0) > 0
    assert set(pods_created_per_slot(outcome).values()) == {1}
    monkeypatch.setattr(job_expectations.PodExpectations, "satisfied", lambda self, job: True)
    unguarded, _ = play(path)
    assert max(pods_created_per_slot(unguarded).values()) > 1  # what the guard prevents


def test_a_restarted_controller_reads_through_a_fresh_informer_and_the_old_one_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    actions = "actions:\n  - {when: first workers jobs Created, after: 1s, restartController: jobset}\n"
    started, outcome, run = play_collecting(
        monkeypatch, Informer, write(tmp_path, "informerLag: 500ms\n", actions=actions)
    )
    assert outcome.passed, outcome.report
    job_controller, crashed, restarted = started  # cluster start, plugin install, the restart
    assert run.cluster.job_controller._client.informer is job_controller
    assert run.actions.controller.client.informer is restarted
    assert (job_controller.stopped, crashed.stopped, restarted.stopped) == (False, True, False)
    assert run.actions.controller.controller.stats.reconciles > 0
