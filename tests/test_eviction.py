"""The pods/eviction subresource (``pkg/registry/core/pod/storage/eviction.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from cluster_harness import PodWrites, run_to

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone, get_condition
from fakecluster.clock import rfc3339
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.kubelet.pod_timings import PodTimings

NS = "default"
DISRUPTION_TARGET = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                     "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}


def make_cluster(timings: PodTimings | None = None, **config: Any) -> Cluster:
    behaviour = timings or PodTimings()
    return Cluster(seed=0, config=ClusterConfig(behaviour=lambda _pod: behaviour, **config))


def make_pod(name: str = "p", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}],
                     **spec}}


def make_job(name: str = "j", **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}]}}, **spec}}


def job_pods(cluster: Cluster) -> list[Obj]:
    return clone(cluster.client().list("Pod", NS, labels={"batch.kubernetes.io/job-name": "j"}))


def test_eviction_adds_the_condition_then_deletes_with_the_pods_grace_period() -> None:
    cluster = make_cluster(PodTimings(terminate=5))
    api = cluster.client()
    api.create(make_pod(terminationGracePeriodSeconds=45))
    run_to(cluster, 10)
    writes = PodWrites(cluster)
    api.evict(NS, "p")
    marked, deleting = [obj for _, _, obj in writes.of("p")][:2]
    expected = {**DISRUPTION_TARGET, "lastTransitionTime": rfc3339(10)}
    assert get_condition(marked, "DisruptionTarget") == expected
    assert "deletionTimestamp" not in marked["metadata"]  # first the status write, then the delete
    assert deleting["metadata"]["deletionTimestamp"] == rfc3339(55)
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 45
    run_to(cluster, 15)
    final = [obj for _, etype, obj in writes.of("p") if etype == "DELETED"]
    assert len(final) == 1 and [t for t, etype, _ in writes.of("p") if etype == "DELETED"] == [15]
    assert final[0]["status"]["phase"] == "Failed"  # the kubelet kept the condition when it ended the pod
    assert get_condition(final[0], "DisruptionTarget") == expected


def test_eviction_grace_period_comes_from_the_delete_options() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_pod())
    run_to(cluster, 10)
    writes = PodWrites(cluster)
    api.evict(NS, "p", grace_period_seconds=7)
    deleting = writes.of("p")[1][2]
    assert (deleting["metadata"]["deletionTimestamp"], deleting["metadata"]["deletionGracePeriodSeconds"]) \
        == (rfc3339(17), 7)


def test_evicting_an_unscheduled_pod_deletes_it_at_once_with_the_condition() -> None:
    cluster = make_cluster()
    api = cluster.client()
    api.create(make_pod(schedulerName="nobody"))
    writes = PodWrites(cluster)
    api.evict(NS, "p")
    types = [etype for _, etype, _ in writes.of("p")]
    assert types == ["MODIFIED", "DELETED"]
    assert get_condition(writes.of("p")[1][2], "DisruptionTarget")["reason"] == "EvictionByEvictionAPI"  # type: ignore[index]


def test_evicting_a_terminal_pod_still_adds_the_condition_as_upstream_does() -> None:
    """Since PodDisruptionConditions the ``canIgnorePDB`` path also goes through addConditionAndDeletePod."""
    cluster = make_cluster(PodTimings(exit_after=1, exit_code=0))
    api = cluster.client()
    api.create(make_pod())
    run_to(cluster, 10)
    assert api.get("Pod", NS, "p")["status"]["phase"] == "Succeeded"
    writes = PodWrites(cluster)
    api.evict(NS, "p")
    assert [etype for _, etype, _ in writes.of("p")] == ["MODIFIED", "DELETED"]  # grace 0: terminal pod
    assert get_condition(writes.of("p")[1][2], "DisruptionTarget") == {**DISRUPTION_TARGET,
                                                                      "lastTransitionTime": rfc3339(10)}


def test_evicting_a_missing_pod_is_not_found() -> None:
    cluster = make_cluster()
    with pytest.raises(ApiError) as err:
        cluster.client().evict(NS, "nope")
    assert (err.value.code, err.value.reason, err.value.message) == (404, "NotFound", 'pods "nope" not found')


def test_evicting_twice_keeps_the_first_transition_time_and_deadline() -> None:
    cluster = make_cluster(PodTimings(terminate=100))
    api = cluster.client()
    api.create(make_pod())
    run_to(cluster, 10)
    api.evict(NS, "p")
    run_to(cluster, 20)
    api.evict(NS, "p")
    pod = clone(api.get("Pod", NS, "p"))
    assert get_condition(pod, "DisruptionTarget")["lastTransitionTime"] == rfc3339(10)  # type: ignore[index]
    assert pod["metadata"]["deletionTimestamp"] == rfc3339(40)


def test_controller_clients_pass_evictions_through() -> None:
    cluster = make_cluster(informer_lag=0.5, conflict_rate=1.0)
    cluster.client().create(make_pod())
    run_to(cluster, 10)
    cluster.client("job-controller").evict(NS, "p")  # never faulted: it is not a resourceVersion write
    assert get_condition(cluster.client().get("Pod", NS, "p"), "DisruptionTarget") is not None


def remove_its_pod_at_10s(job: Obj, *, evict: bool) -> tuple[Cluster, Obj]:
    """Job ``job`` (one pod, 5 s to terminate) whose pod is evicted, or deleted, at 10 s; and that pod."""
    cluster = make_cluster(PodTimings(terminate=5))
    api = cluster.client()
    api.create(job)
    run_to(cluster, 10)
    [victim] = job_pods(cluster)
    if evict:
        api.evict(NS, victim["metadata"]["name"])
    else:
        api.delete("Pod", NS, victim["metadata"]["name"])
    return cluster, victim


def test_job_replaces_an_evicted_pod_and_counts_the_failure() -> None:
    cluster, victim = remove_its_pod_at_10s(make_job(), evict=True)
    api = cluster.client()
    run_to(cluster, 11)  # TerminatingOrFailed: the terminating pod counts at once (1 s pod-event batching)
    status = api.get("Job", NS, "j")["status"]
    assert (status.get("failed"), status.get("terminating")) == (1, 1)
    run_to(cluster, 19.9)
    assert job_pods(cluster) == []  # the evicted pod is gone at 15; the replacement waits out the back-off
    run_to(cluster, 20)  # 10 s after the failure (DefaultJobPodFailureBackOff, job_controller.go)
    [replacement] = job_pods(cluster)
    assert replacement["metadata"]["uid"] != victim["metadata"]["uid"]
    assert get_condition(replacement, "DisruptionTarget") is None
    run_to(cluster, 25)
    status = api.get("Job", NS, "j")["status"]
    assert (status.get("failed"), status.get("active"), status.get("terminating", 0)) == (1, 1, 0)


def pod_failure_policy_job(name: str = "j") -> Obj:
    return make_job(name, backoffLimit=0, podFailurePolicy={"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]})


def test_pod_failure_policy_ignores_an_evicted_pod() -> None:
    cluster, victim = remove_its_pod_at_10s(pod_failure_policy_job(), evict=True)
    api = cluster.client()
    run_to(cluster, 14)  # podFailurePolicy: a terminating pod is neither counted nor replaced
    assert len(job_pods(cluster)) == 1
    run_to(cluster, 30)
    status = api.get("Job", NS, "j")["status"]
    assert "failed" not in status  # Ignore: the Failed pod with DisruptionTarget is not counted
    assert status.get("active") == 1
    assert not any(c["type"] in ("Failed", "FailureTarget") for c in status.get("conditions") or ())
    [replacement] = job_pods(cluster)
    assert replacement["metadata"]["uid"] != victim["metadata"]["uid"]


def test_a_plain_delete_under_the_same_policy_fails_the_job() -> None:
    """The control for the test above: without the eviction's condition the failure counts."""
    cluster, _ = remove_its_pod_at_10s(pod_failure_policy_job(), evict=False)
    api = cluster.client()
    run_to(cluster, 30)
    status = api.get("Job", NS, "j")["status"]
    assert status.get("failed") == 1
    assert any(c["type"] == "Failed" and c["reason"] == "BackoffLimitExceeded" for c in status["conditions"])
