"""Injected 409 Conflicts (fakecluster/client/conflicts.py): what is faulted, determinism per seed, and
that the
JobSet and Job controllers still converge when 30 % of their writes fail."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from fault_scenarios import final_jobset_status, play, write

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import clone
from fakecluster.client.conflicts import CONTROLLER_USERS, ConflictInjectingClient, FaultStats
from fakecluster.client.informer import InformerClient
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.job.job_controller import DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF
from fakecluster.runtime import Controller


def node_patch(client: object) -> None:
    client.patch("Node", "", "node", {"metadata": {"labels": {"touched": "yes"}}})  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- the wrapper


def wrapped(rate: float, seed: int = 0) -> tuple[Cluster, ConflictInjectingClient, FaultStats]:
    cluster = Cluster(seed)
    stats = FaultStats()
    client = ConflictInjectingClient(
        LocalClient(cluster.server, "job-controller"), cluster.server, user="job-controller", rate=rate,
        rng=cluster.rng("test"), stats=stats,
    )
    return cluster, client, stats


def test_an_injected_conflict_is_the_servers_409_and_replaces_the_write() -> None:
    cluster, client, stats = wrapped(rate=1.0)
    node = clone(client.get("Node", "", "node"))
    before = node["metadata"]["resourceVersion"]
    node["metadata"].setdefault("labels", {})["touched"] = "yes"
    attempts = [
        lambda: client.update(node),
        lambda: client.update_status(node),
        lambda: client.patch("Node", "", "node", {"metadata": {"labels": {"touched": "yes"}}}),
    ]
    for attempt in attempts:
        with pytest.raises(ApiError) as info:
            attempt()
        assert (info.value.code, info.value.reason) == (409, "Conflict")
        assert info.value.message == (
            'Operation cannot be fulfilled on nodes "node": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )
    stored = cluster.server.get("Node", "", "node")
    assert stored["metadata"]["resourceVersion"] == before
    assert "touched" not in (stored["metadata"].get("labels") or {})
    assert client.conflicts == 3
    assert stats.conflicts == {"job-controller": 3}
    assert stats.log == ["job-controller update Node node", "job-controller update_status Node node",
                         "job-controller patch Node node"]


def test_creates_deletes_reads_and_event_writes_are_never_faulted() -> None:
    _, client, stats = wrapped(rate=1.0)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    client.create(pod)
    assert client.get("Pod", "default", "p")["metadata"]["name"] == "p"
    assert [p["metadata"]["name"] for p in client.list("Pod", "default")] == ["p"]
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
             "metadata": {"name": "e", "namespace": "default"}, "eventTime": "2025-01-01T00:00:00.000000Z",
             "reportingController": "x", "reportingInstance": "x", "action": "A", "reason": "R",
             "type": "Normal", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}}
    client.create(event)
    series = {"count": 2, "lastObservedTime": "2025-01-01T00:00:01.000000Z"}
    assert client.patch("Event", "default", "e", {"series": series})["series"] == series
    client.delete("Pod", "default", "p", grace_period_seconds=0)
    assert stats.conflicts == {}
    assert client.conflicts == 0


def test_draws_are_deterministic_per_seed_and_differ_between_seeds() -> None:
    def outcomes(seed: int) -> list[bool]:
        cluster = Cluster(seed, ClusterConfig(conflict_rate=0.5))
        client = cluster.client("jobset-controller")
        results = []
        for _ in range(40):
            try:
                node_patch(client)
                results.append(True)
            except ApiError:
                results.append(False)
        assert cluster.fault_stats.conflicts["jobset-controller"] == results.count(False)
        return results

    first = outcomes(3)
    assert first == outcomes(3)
    assert 5 < first.count(False) < 35
    assert outcomes(4) != first


def test_only_the_controllers_clients_are_faulted() -> None:
    assert CONTROLLER_USERS == ("jobset-controller", "job-controller")
    cluster = Cluster(0, ClusterConfig(conflict_rate=1.0))
    for user in ("scenario", "admin", "system:node", "system:kube-scheduler"):
        client = cluster.client(user)
        assert type(client) is LocalClient
        node_patch(client)  # never faulted
    for user in CONTROLLER_USERS:
        assert isinstance(cluster.client(user), ConflictInjectingClient)
    plain = Cluster(0, ClusterConfig(conflict_rate=0.0, informer_lag=0.0))
    assert all(type(plain.client(user)) is LocalClient for user in CONTROLLER_USERS)


def test_a_users_fault_stream_survives_a_new_client() -> None:
    """A restarted controller continues its user's stream instead of replaying the same draws."""
    cluster = Cluster(1, ClusterConfig(conflict_rate=0.5))
    reference = Cluster(1, ClusterConfig(conflict_rate=0.5)).client("jobset-controller")

    def draw(client: object) -> bool:
        try:
            node_patch(client)
            return True
        except ApiError:
            return False

    expected = [draw(reference) for _ in range(20)]
    got = [draw(cluster.client("jobset-controller")) for _ in range(20)]  # a new client every write
    assert got == expected


def test_with_informer_lag_the_fault_wrapper_sits_outside_the_informer() -> None:
    cluster = Cluster(0, ClusterConfig(conflict_rate=0.2, informer_lag=1.0))
    client = cluster.client("job-controller")
    assert isinstance(client, ConflictInjectingClient)
    assert isinstance(client.inner, InformerClient)


# --------------------------------------------------------------------------- controllers survive


def test_a_jobset_still_completes_when_30_percent_of_controller_writes_conflict(tmp_path: Path) -> None:
    outcome, run = play(write(tmp_path, "faults: {conflictRate: 0.3}\n"))
    assert outcome.passed, outcome.report
    conflicts = run.cluster.fault_stats.conflicts
    assert conflicts.get("jobset-controller", 0) >= 1, conflicts
    assert conflicts.get("job-controller", 0) >= 3, conflicts
    assert run.actions.controller.controller.stats.errors >= conflicts["jobset-controller"]
    assert run.cluster.job_controller.controller.stats.errors >= conflicts["job-controller"]
    baseline, base_run = play(write(tmp_path, name="baseline"))
    assert final_jobset_status(run) == final_jobset_status(base_run)
    assert outcome.digest != baseline.digest  # the faults really changed the run


def test_conflict_injection_is_reproducible_from_the_seed(tmp_path: Path) -> None:
    path = write(tmp_path, "faults: {conflictRate: 0.3}\n")
    (first, first_run), (second, second_run) = play(path), play(path)
    assert first.digest == second.digest
    assert first_run.cluster.fault_stats.log == second_run.cluster.fault_stats.log
    assert first_run.cluster.fault_stats.total_conflicts > 0
    other, other_run = play(write(tmp_path, "faults: {conflictRate: 0.3}\n", name="other", seed=8))
    assert other.passed, other.report
    assert other_run.cluster.fault_stats.log != first_run.cluster.fault_stats.log


# --------------------------------------------------------------------------- the Job controller's retry


def test_job_controller_retries_an_api_error_after_1s_doubling_up_to_a_minute() -> None:
    """Upstream's Job queue uses ``NewTypedItemExponentialFailureRateLimiter(1s, 1m)``, not
    controller-runtime's 5 ms: a suspended Job whose every status write conflicts is retried at 1, 3, 7,
    15, 31, 63, 123, 183 s (no watch event wakes it sooner: nothing about it changes)."""
    assert (DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF) == (1.0, 60.0)
    cluster = Cluster(0, ClusterConfig(conflict_rate=1.0))
    assert cluster.job_controller.controller.backoff_base == DEFAULT_JOB_API_BACKOFF
    admin = cluster.client("admin")
    admin.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
        "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never",
                                                        "containers": [{"name": "c", "image": "busybox"}]}}},
    })
    seen = []
    for t in (0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5, 123.5, 183.5):
        cluster.run(t)
        seen.append(cluster.fault_stats.conflicts.get("job-controller", 0))
    assert seen == [1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_runtime_backoff_parameters_shape_the_retry_gaps() -> None:
    clock = Clock()
    calls: list[float] = []

    def failing(key: object) -> float | None:
        calls.append(clock.now)
        raise ApiError(409, "Conflict", "x")

    controller = Controller(clock, "t", failing, backoff_base=1.0, backoff_max=60.0)
    controller.enqueue("k")
    clock.run(400)
    gaps = [round(b - a, 6) for a, b in itertools.pairwise(calls)]
    assert gaps[:8] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
