"""When a Job's pods count as failed and get replaced: ``podReplacementPolicy`` (KEP-3939) and
``restartPolicy: OnFailure`` (``pkg/controller/job/job_controller.go``, ``backoff_utils.go``; the
kubelet's restart back-off in ``pkg/kubelet/kuberuntime/kuberuntime_manager.go``).

- ``TerminatingOrFailed`` (the default without a podFailurePolicy): a pod with a ``deletionTimestamp``
  counts as failed at once and is replaced (after the pod-failure back-off) while it still terminates.
- ``Failed``: a terminating pod counts in ``status.terminating`` only; it is neither counted nor
  replaced until it reaches phase ``Failed``, and the back-off runs from its real finish time.
- ``OnFailure``: containers restart in place, so pods never reach ``Failed``; the Job fails when the
  restart counts of its Pending/Running pods add up to ``backoffLimit`` (any restart when the limit is
  0). The upstream table ``TestJobBackoffForOnFailure`` (job_controller_test.go) runs on hand-made
  pods; the other tests drive the real kubelet.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_job_controller import NS, TRACKING, Harness, condition, condition_types, ts

from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.kubelet.pod_timings import PodTimings

BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")


def counts(status: Obj) -> tuple[int, int, int]:
    """(active, terminating, failed), zeros included."""
    return status.get("active", 0), status["terminating"], status.get("failed", 0)


def creation_times(h: Harness) -> list[str]:
    return sorted(p["metadata"]["creationTimestamp"] for p in h.pods())


# ---------------------------------------------------------------------- podReplacementPolicy
def delete_a_pod_at_10s(policy: str, *, terminate_after: float) -> tuple[Harness, str]:
    """A Job of two pods under ``podReplacementPolicy: policy``, one of them deleted at 10 s (its pods
    take ``terminate_after`` to stop); the harness is run to 11 s."""
    h = Harness(terminate_after=terminate_after)
    h.create_job(completions=2, parallelism=2, podReplacementPolicy=policy)
    h.run_until(0)
    h.run_all()
    victim = h.pod_names()[0]
    h.run_until(10)
    h.api.delete("Pod", NS, victim)
    h.run_until(11)
    return h, victim


def test_terminating_or_failed_counts_a_deleted_pod_at_once_and_replaces_it_while_it_terminates() -> None:
    h, victim = delete_a_pod_at_10s("TerminatingOrFailed", terminate_after=30)
    assert counts(h.status()) == (1, 1, 1)
    assert TRACKING not in (h.api.get("Pod", NS, victim)["metadata"].get("finalizers") or ())
    h.run_until(19.999)
    assert creation_times(h) == [ts(0), ts(0)]  # the 10 s back-off from the deletion
    h.run_until(21)
    assert creation_times(h) == [ts(0), ts(0), ts(20)]
    assert counts(h.status()) == (2, 1, 1)  # the replacement runs beside the terminating pod
    h.run_until(41)  # the victim stopped at 40
    assert counts(h.status()) == (2, 0, 1)
    assert victim not in h.pod_names()


def test_failed_policy_waits_for_the_failed_phase_before_counting_and_replacing() -> None:
    h, victim = delete_a_pod_at_10s("Failed", terminate_after=5)
    assert counts(h.status()) == (1, 1, 0)
    assert TRACKING in h.api.get("Pod", NS, victim)["metadata"]["finalizers"]
    h.run_until(15.999)
    assert counts(h.status()) == (1, 1, 0)
    h.run_until(16)  # Failed at 15, seen one batch period later
    assert counts(h.status()) == (1, 0, 1)
    h.run_until(24.999)
    assert creation_times(h) == [ts(0)]
    h.run_until(25)  # 10 s after it finished, not after it was deleted
    assert creation_times(h) == [ts(0), ts(25)]


@pytest.mark.parametrize(("policy", "replaced_at"), [("TerminatingOrFailed", 20), ("Failed", 50)])
def test_indexed_replacement_of_a_terminating_index(policy: str, replaced_at: float) -> None:
    """The terminating pod of index 0 stops at 40: ``Failed`` re-creates index 0 only after that (at
    40 + 10 s); ``TerminatingOrFailed`` at once after the back-off, two pods of index 0 coexisting."""
    h = Harness(terminate_after=30)
    h.create_job(completions=2, parallelism=2, completionMode="Indexed", podReplacementPolicy=policy)
    h.run_until(0)
    h.run_all()
    h.run_until(10)
    h.api.delete("Pod", NS, h.pod_by_index(0)["metadata"]["name"])
    h.run_until(replaced_at - 0.001)
    assert [p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in h.pods()
            if p["metadata"]["creationTimestamp"] != ts(0)] == []
    h.run_until(replaced_at)
    replacement = h.pod_by_index(0)
    assert replacement["metadata"]["creationTimestamp"] == ts(replaced_at)
    assert replacement["spec"]["hostname"] == "j-0"
    assert h.status()["failed"] == 1


def test_failed_policy_skips_terminating_indexes_when_choosing_what_to_create() -> None:
    """Index 1 succeeds while index 0 terminates (until 40): the free slot goes to index 2 at once; index
    0 comes back only after its pod failed (40 + 10 s back-off)."""
    h = Harness(terminate_after=30)
    h.create_job(completions=3, parallelism=2, completionMode="Indexed", podReplacementPolicy="Failed")
    h.run_until(0)
    h.run_all()
    h.run_until(10)
    h.api.delete("Pod", NS, h.pod_by_index(0)["metadata"]["name"])
    h.finish_pod(h.pod_by_index(1)["metadata"]["name"])

    def created() -> list[tuple[str, str]]:
        return sorted((p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"],
                       p["metadata"]["creationTimestamp"]) for p in h.pods())

    h.run_until(39)
    assert created() == [("0", ts(0)), ("1", ts(0)), ("2", ts(11))]
    assert h.status()["terminating"] == 1
    h.run_until(49.999)
    assert created() == [("1", ts(0)), ("2", ts(11))]  # the old pod of index 0 is gone
    h.run_until(50)
    assert created() == [("0", ts(50)), ("1", ts(0)), ("2", ts(11))]


def test_failed_policy_subtracts_terminating_pods_from_the_creation_budget() -> None:
    h = Harness(terminate_after=None)
    h.create_job(completions=3, parallelism=3, podReplacementPolicy="Failed")
    h.run_until(0)
    h.run_all()
    doomed = h.pod_names()[:2]
    for name in doomed:
        h.api.delete("Pod", NS, name)
    h.run_until(100)
    assert counts(h.status()) == (1, 2, 0)
    assert len(h.pods()) == 3  # nothing new while they terminate, whatever the back-off
    h.finish_pod(doomed[0], exit_code=137)
    h.run_until(111)  # one stopped at 100: one replacement, 10 s later
    assert counts(h.status()) == (2, 1, 1)
    assert creation_times(h) == [ts(0), ts(0), ts(0), ts(110)]


def test_default_policy_is_failed_with_a_pod_failure_policy() -> None:
    h = Harness(terminate_after=None)
    job = h.create_job(podFailurePolicy={"rules": [
        {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]}]})
    assert job["spec"]["podReplacementPolicy"] == "Failed"
    assert h.create_job("k")["spec"]["podReplacementPolicy"] == "TerminatingOrFailed"
    h.run_until(0)
    h.run_pod(h.pod_names()[0])
    h.api.delete("Pod", NS, h.pod_names()[0])
    h.run_until(60)
    assert counts(h.status()) == (0, 1, 0)
    assert len(h.pods()) == 1


# ---------------------------------------------------------------------- OnFailure: TestJobBackoffForOnFailure
@pytest.mark.parametrize(("job_spec", "restarts", "phase", "want"), [
    ((1, 1, 0), [0], "Running", (1, 0, None)),  # backoffLimit 0 should have 1 pod active
    ((1, 1, 1), [0], "Running", (1, 0, None)),  # backoffLimit 1 with restartCount 0
    ((1, 1, 1), [1], "Running", (0, 1, "BackoffLimitExceeded")),
    ((1, 1, 1), [1], "Pending", (0, 1, "BackoffLimitExceeded")),
    ((1, 5, 2), [2], "Running", (0, 1, "BackoffLimitExceeded")),  # too many failures, single pod
    ((1, 5, 2), [2], "Pending", (0, 1, "BackoffLimitExceeded")),
    ((2, 5, 2), [1, 1], "Running", (0, 2, "BackoffLimitExceeded")),  # too many failures, multiple pods
    ((2, 5, 2), [1, 1], "Pending", (0, 2, "BackoffLimitExceeded")),
    ((2, 5, 3), [1, 1], "Running", (2, 0, None)),  # not enough failures
    ((1, 1, 0), [1], "Running", (0, 1, "BackoffLimitExceeded")),  # limit 0: any restart
])
def test_job_backoff_for_on_failure(job_spec: tuple[int, int, int], restarts: list[int], phase: str,
                                    want: tuple[int, int, str | None]) -> None:
    """``job_spec`` is (parallelism, completions, backoffLimit); ``want`` (active, failed, reason)."""
    parallelism, completions, backoff_limit = job_spec
    h = Harness()
    h.clock.advance_to(100)
    job = h.create_job(parallelism=parallelism, completions=completions, backoffLimit=backoff_limit,
                       template_spec={"restartPolicy": "OnFailure",
                                      "containers": [{"name": "c", "image": "busybox"}]})
    for i, count in enumerate(restarts):
        h.add_pod(job, f"mypod-{i}", phase, restarts=count)
    h.run_until(100)
    status = h.status()
    assert (status.get("active", 0), status.get("failed", 0)) == want[:2]
    target = condition(status, "FailureTarget")
    assert (None if target is None else target["reason"]) == want[2]
    if target is not None:
        assert (target["reason"], target["message"]) == BACKOFF_LIMIT_EXCEEDED
        assert status["terminating"] == len(restarts)  # deleted, so Failed comes later
        assert condition(status, "Failed") is None
    else:
        assert condition_types(status) == []


# ---------------------------------------------------------------------- OnFailure with the kubelet
def on_failure_cluster(timings: PodTimings, backoff_limit: int, parallelism: int = 1,
                       **pod_spec: Any) -> tuple[Cluster, list[tuple[float, str, int, bool]]]:
    """A cluster running one OnFailure Job; returns it and a log of (time, phase, Σ restartCount,
    deleting) for every pod write."""
    c = Cluster(seed=0, config=ClusterConfig(behaviour=lambda _pod: timings))
    spec = {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}], **pod_spec}
    c.client().create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
                       "spec": {"backoffLimit": backoff_limit, "parallelism": parallelism,
                                "completions": parallelism, "template": {"spec": spec}}})
    log: list[tuple[float, str, int, bool]] = []

    def record(event: Any) -> None:
        status = event.object.get("status") or {}
        restarts = sum(cs.get("restartCount") or 0 for group in ("initContainerStatuses", "containerStatuses")
                       for cs in status.get(group) or ())
        deleting = event.object["metadata"].get("deletionTimestamp") is not None
        log.append((c.clock.now, status.get("phase", ""), restarts, deleting))

    c.server.watch("Pod", record)
    return c, log


def job_status(c: Cluster) -> Obj:
    return c.client().get("Job", NS, "j")["status"]


def test_on_failure_restarts_in_place_until_the_restart_sum_reaches_the_backoff_limit() -> None:
    """Exit 1 after 5 s: restarted at once (restartCount 1 at 5), then CrashLoopBackOff 10 s
    (restartCount 2 at 20); the sync one batch period later fails the Job."""
    c, log = on_failure_cluster(PodTimings(exit_after=5.0, exit_code=1), backoff_limit=2)
    c.run(20.999)
    status = job_status(c)
    assert condition_types(status) == []
    assert "failed" not in status
    [pod] = c.client().list("Pod", NS)
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 2
    c.run(21)
    status = job_status(c)
    target = condition(status, "FailureTarget")
    assert target is not None
    assert (target["reason"], target["message"]) == BACKOFF_LIMIT_EXCEEDED
    assert target["lastTransitionTime"] == ts(21)
    c.run(100)
    status = job_status(c)
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert condition(status, "Failed")["lastTransitionTime"] == ts(22)  # type: ignore[index]
    assert (status.get("active", 0), status["terminating"], status["failed"]) == (0, 0, 1)
    # one pod, never replaced; Failed only once the Job had deleted it
    assert {phase for _, phase, _, deleting in log if not deleting} == {"Pending", "Running"}
    assert [(t, phase) for t, phase, _, deleting in log if phase == "Failed"] == [(21.0, "Failed")] * 2
    assert sorted({(t, n) for t, _, n, _ in log}) == [(0.0, 0), (5.0, 1), (10.0, 1), (20.0, 2), (21.0, 2)]


@pytest.mark.parametrize(("parallelism", "backoff_limit", "fails_at"), [
    (1, 0, 6),  # limit 0: the first restart (at 5) is enough
    (1, 1, 6),
    (2, 2, 6),  # two pods restarting once each add up
    (2, 3, 21),  # 2 at 5, 4 at 20
    (1, 2, 21),
])
def test_on_failure_restart_sum_over_pods(parallelism: int, backoff_limit: int, fails_at: float) -> None:
    c, _ = on_failure_cluster(PodTimings(exit_after=5.0, exit_code=1), backoff_limit, parallelism)
    c.run(fails_at - 0.001)
    assert condition_types(job_status(c)) == []
    c.run(200)
    status = job_status(c)
    assert [(x["type"], x["reason"], x["lastTransitionTime"]) for x in status["conditions"]] == [
        ("FailureTarget", "BackoffLimitExceeded", ts(fails_at)),
        ("Failed", "BackoffLimitExceeded", ts(fails_at + 1)),
    ]
    assert status["failed"] == parallelism  # only the pods the Job deleted


def test_on_failure_counts_init_container_restarts_of_pending_pods() -> None:
    """An init container failing after 2 s restarts in place (at 2, then after a 10 s back-off at 14);
    the pod stays Pending and its init restarts reach the limit."""
    init = {"name": "init", "image": "busybox", "command": ["sh", "-c", "sleep 2; exit 1"]}
    c, log = on_failure_cluster(PodTimings(), backoff_limit=2, initContainers=[init])
    c.run(200)
    status = job_status(c)
    assert [(x["type"], x["lastTransitionTime"]) for x in status["conditions"]] == [
        ("FailureTarget", ts(15)), ("Failed", ts(16))]
    assert {phase for _, phase, _, deleting in log if not deleting} == {"Pending"}
    assert sorted({(t, n) for t, _, n, _ in log}) == [(0.0, 0), (2.0, 1), (4.0, 1), (14.0, 2), (15.0, 2)]


def test_on_failure_pod_that_succeeds_after_restarts_completes_the_job() -> None:
    """Restarts below the limit leave no trace in ``status.failed`` once the pod succeeds."""
    c, _ = on_failure_cluster(PodTimings(exit_after=5.0, exit_code=1), backoff_limit=3)
    c.run(6)
    [pod] = c.client().list("Pod", NS)
    c.kubelet.fail_container(NS, pod["metadata"]["name"], 0)  # the restarted run now exits 0
    c.run(100)
    status = job_status(c)
    assert condition_types(status) == ["SuccessCriteriaMet", "Complete"]
    assert (status["succeeded"], "failed" in status) == (1, False)
