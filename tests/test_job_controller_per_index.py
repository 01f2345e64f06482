"""``backoffLimitPerIndex`` / ``maxFailedIndexes`` and the podFailurePolicy ``FailIndex`` action (KEP-3850).

Three layers, as in ``fakecluster/controllers/job/backoff_per_index.py``:

- the one-sync cases of upstream ``TestSyncJobWithJobBackoffLimitPerIndex`` (job_controller_test.go):
  hand-made pods that failed long ago, one sync at t=100, then the status, the created pods and their
  annotations;
- the helpers against ``TestGetPodCreationInfoForIndependentIndexes`` and the ``isIndexFailed`` /
  ``getNewIndexFailureCounts`` / ``parseIndexFailureCountAnnotation`` cases of indexed_job_utils_test.go;
- timelines on the virtual clock: per-index back-off (10 s, 20 s, 40 s from each pod's own finish), the
  delayed finalizer removal, independence of indexes, and two runs through the real kubelet.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_job_controller import NS, TRACKING, Harness, condition, condition_types, events, ts

from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.job.backoff_per_index import (
    creatable_now,
    index_failure_count,
    is_index_failed,
    pods_with_delayed_deletion,
    replacement_annotations,
)
from fakecluster.controllers.job.indexed_job_utils import parse_indexes
from fakecluster.kubelet.pod_timings import PodTimings

INDEX = "batch.kubernetes.io/job-completion-index"
FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"
IGNORED_COUNT = "batch.kubernetes.io/job-index-ignored-failure-count"
MAX_INT32 = 2**31 - 1
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
MAX_FAILED_INDEXES = ("MaxFailedIndexesExceeded",
                      "Job has exceeded the specified maximal number of failed indexes")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
SYNC_AT = 100.0


# ---------------------------------------------------------------------- helpers
def per_index_job(h: Harness, **spec: Any) -> Obj:
    spec = {"completions": 2, "parallelism": 2, "completionMode": "Indexed", "backoffLimitPerIndex": 1,
            **spec}
    return h.create_job(**spec)


def add_pod(h: Harness, job: Obj, name: str, index: int, phase: str, *, failure_count: str | None = "0",
            exit_code: int | None = None, container: str = "c") -> None:
    """A hand-made pod with the per-index failure count annotation; a terminated one finished at 0."""
    annotations = {} if failure_count is None else {FAILURE_COUNT: failure_count}
    h.add_pod(job, name, phase, index=index, annotations=annotations, exit_code=exit_code,
              container=container)


def sync_with(h: Harness, *pods: tuple[str, int, str, str], **spec: Any) -> Obj:
    """A per-index Job (``spec`` over :func:`per_index_job`'s) with hand-made ``pods`` (name, completion
    index, phase, failure count), synced once."""
    job = per_index_job(h, **spec)
    for name, index, phase, failure_count in pods:
        add_pod(h, job, name, index, phase, failure_count=failure_count)
    return sync_once(h)


def sync_once(h: Harness) -> Obj:
    h.run_until(SYNC_AT)
    return h.status()


def counters(status: Obj) -> tuple[int, int, int, int, str | None, str]:
    """(active, failed, succeeded, terminating, failedIndexes, completedIndexes), zeros included."""
    return (status.get("active", 0), status.get("failed", 0), status.get("succeeded", 0),
            status["terminating"], status.get("failedIndexes"), status.get("completedIndexes", ""))


def new_pods(h: Harness) -> dict[int, dict[str, str]]:
    """Completion index → annotations of the pods the controller created (named ``j-<i>-xxxxx``)."""
    return {int(p["metadata"]["annotations"][INDEX]): p["metadata"]["annotations"] for p in h.pods()
            if p["metadata"]["name"].startswith("j-")}


def unfinished(h: Harness) -> Obj:
    """The one pod of a single-index Job that has not failed yet."""
    [pod] = [p for p in h.pods() if p["status"].get("phase") != "Failed"]
    return pod


def has_finalizer(h: Harness, name: str) -> bool:
    return TRACKING in (h.api.get("Pod", NS, name)["metadata"].get("finalizers") or ())


def reason_message(status: Obj, cond_type: str) -> tuple[str, str]:
    cond = condition(status, cond_type)
    assert cond is not None, status.get("conditions")
    return cond["reason"], cond["message"]


@pytest.fixture
def h() -> Harness:
    harness = Harness()
    harness.clock.advance_to(SYNC_AT)
    return harness


# ---------------------------------------------------------- upstream TestSyncJobWithJobBackoffLimitPerIndex
def test_successful_job_after_a_single_failure_within_index(h: Harness) -> None:
    status = sync_with(h, ("a1", 0, "Failed", "0"), ("a2", 0, "Succeeded", "1"), ("b", 1, "Succeeded", "0"))
    assert counters(status) == (0, 1, 2, 0, "", "0,1")
    assert condition_types(status) == ["SuccessCriteriaMet", "Complete"]
    assert not has_finalizer(h, "a1")  # its index succeeded: nothing to wait for


def test_single_failed_pod_is_not_counted_while_its_replacement_is_pending(h: Harness) -> None:
    status = sync_with(h, ("a", 0, "Failed", "0"))
    assert counters(status) == (2, 0, 0, 0, "", "")
    assert "failed" not in status
    assert has_finalizer(h, "a")  # delayed: the replacement must copy its failure count first
    assert new_pods(h) == {0: {INDEX: "0", FAILURE_COUNT: "1"}, 1: {INDEX: "1", FAILURE_COUNT: "0"}}
    h.run_until(SYNC_AT + 1)  # the next sync sees index 0 active again
    assert not has_finalizer(h, "a")
    assert h.status()["failed"] == 1


def test_single_failed_pod_replaced_already(h: Harness) -> None:
    status = sync_with(h, ("a", 0, "Failed", "0"), ("b", 0, "Pending", "1"))
    assert counters(status) == (2, 1, 0, 0, "", "")
    assert new_pods(h) == {1: {INDEX: "1", FAILURE_COUNT: "0"}}


def test_single_failed_index_due_to_exceeding_the_backoff_limit_per_index(h: Harness) -> None:
    status = sync_with(h, ("a", 0, "Failed", "1"))
    assert counters(status) == (1, 1, 0, 0, "0", "")
    assert condition_types(status) == []  # the Job goes on with index 1
    assert new_pods(h) == {1: {INDEX: "1", FAILURE_COUNT: "0"}}  # a failed index is never re-created


def test_single_failed_index_due_to_fail_index_action(h: Harness) -> None:
    job = per_index_job(h, podFailurePolicy={"rules": [
        {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]})
    add_pod(h, job, "a", 0, "Failed", failure_count="0", exit_code=3)
    status = sync_once(h)
    assert counters(status) == (1, 1, 0, 0, "0", "")
    assert new_pods(h) == {1: {INDEX: "1", FAILURE_COUNT: "0"}}


def test_fail_job_action_wins_over_the_per_index_limit(h: Harness) -> None:
    job = per_index_job(h, backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]})
    add_pod(h, job, "mypod-0", 0, "Failed", failure_count="0", exit_code=3, container="x")
    status = sync_once(h)
    assert counters(status) == (0, 1, 0, 0, "", "")
    assert condition_types(status) == ["FailureTarget", "Failed"]
    message = "Container x for pod default/mypod-0 failed with exit code 3 matching FailJob rule at index 0"
    assert reason_message(status, "Failed") == ("PodFailurePolicy", message)
    assert new_pods(h) == {}


def test_ignored_failure_is_not_counted_and_bumps_the_ignored_count(h: Harness) -> None:
    job = per_index_job(h, backoffLimit=6, podFailurePolicy={"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]})
    add_pod(h, job, "a", 0, "Failed", failure_count="0", exit_code=3)
    status = sync_once(h)
    assert counters(status) == (2, 0, 0, 0, "", "")
    assert new_pods(h)[0] == {INDEX: "0", FAILURE_COUNT: "0", IGNORED_COUNT: "1"}
    h.run_until(SYNC_AT + 1)
    assert not has_finalizer(h, "a")
    assert "failed" not in h.status()


def test_job_fails_on_the_global_backoff_limit_before_the_per_index_one(h: Harness) -> None:
    status = sync_with(h, ("a", 0, "Failed", "0"), ("b", 1, "Failed", "0"), backoffLimit=1)
    assert counters(status) == (0, 2, 0, 0, "", "")
    assert reason_message(status, "Failed") == BACKOFF_LIMIT_EXCEEDED


def test_job_fails_with_failed_indexes_once_every_index_finished(h: Harness) -> None:
    status = sync_with(h, ("a", 0, "Failed", "1"), ("b", 1, "Succeeded", "0"))
    assert counters(status) == (0, 1, 1, 0, "0", "1")
    assert condition_types(status) == ["FailureTarget", "Failed"]
    for cond in status["conditions"]:
        assert (cond["reason"], cond["message"]) == FAILED_INDEXES
        assert cond["lastTransitionTime"] == ts(SYNC_AT)
    assert "completionTime" not in status
    assert events(h) == [("Warning", *FAILED_INDEXES)]


def test_job_fails_when_failed_indexes_exceed_max_failed_indexes(h: Harness) -> None:
    status = sync_with(
        h,
        ("a", 0, "Failed", "1"),
        ("b", 1, "Succeeded", "0"),
        ("c", 2, "Failed", "1"),
        ("d", 3, "Running", "0"),
        completions=4, parallelism=4, maxFailedIndexes=1,
    )
    assert counters(status) == (0, 3, 1, 1, "0,2", "1")  # the running pod is deleted and counted
    assert condition_types(status) == ["FailureTarget"]  # Failed waits for the terminating pod
    assert reason_message(status, "FailureTarget") == MAX_FAILED_INDEXES
    h.run_until(SYNC_AT + 3)  # the stand-in kubelet stops it at +2, the next sync is at +3
    status = h.status()
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert reason_message(status, "Failed") == MAX_FAILED_INDEXES
    assert condition(status, "Failed")["lastTransitionTime"] == ts(SYNC_AT + 3)  # type: ignore[index]
    assert counters(status) == (0, 3, 1, 0, "0,2", "1")


def test_max_failed_indexes_not_exceeded_keeps_the_job_running(h: Harness) -> None:
    status = sync_with(
        h,
        ("a", 0, "Failed", "1"),
        ("c", 2, "Failed", "1"),
        completions=4, parallelism=4, maxFailedIndexes=2,
    )
    assert counters(status) == (2, 2, 0, 0, "0,2", "")
    assert condition_types(status) == []
    assert sorted(new_pods(h)) == [1, 3]


def test_indexed_job_without_per_index_limit_has_no_failed_indexes(h: Harness) -> None:
    job = h.create_job(completions=2, parallelism=2, completionMode="Indexed")
    add_pod(h, job, "a", 0, "Failed", failure_count=None)
    status = sync_once(h)
    assert "failedIndexes" not in status
    assert status["failed"] == 1
    assert all(FAILURE_COUNT not in a for a in new_pods(h).values())


# ---------------------------------------------------------------------- helpers against upstream unit tests
def failed_pod(failure_count: str | None = None, ignored: str | None = None, *, deleted_at: float = 0.0,
               exit_code: int = 1) -> Obj:
    annotations = {}
    if failure_count is not None:
        annotations[FAILURE_COUNT] = failure_count
    if ignored is not None:
        annotations[IGNORED_COUNT] = ignored
    return {"metadata": {"name": "p", "namespace": NS, "annotations": annotations,
                         "deletionTimestamp": ts(deleted_at), "deletionGracePeriodSeconds": 0},
            "status": {"phase": "Failed", "containerStatuses": [
                {"name": "c", "state": {"terminated": {"exitCode": exit_code}}}]}}


@pytest.mark.parametrize(("pending", "delayed", "want"), [
    ([1, 3], {}, ([1, 3], 0.0)),  # simple index creation
    ([1, 3], {1: failed_pod("0", deleted_at=100)}, ([3], 0.0)),  # subset can be recreated now
    ([1, 3], {1: failed_pod("0", deleted_at=100), 3: failed_pod("0", deleted_at=90)}, ([3], 0.0)),
    ([1, 2, 3], {1: failed_pod("1", deleted_at=100), 2: failed_pod("0", deleted_at=100),
                 3: failed_pod("2", deleted_at=100)}, ([], 10.0)),  # the shortest: 10 s
    ([1, 2, 3], {1: failed_pod("1", deleted_at=99), 2: failed_pod("0", deleted_at=99),
                 3: failed_pod("2", deleted_at=99)}, ([], 9.0)),  # 1 s already passed
    ([0], {0: failed_pod("1", "2", deleted_at=60)}, ([], 40.0)),  # ignored failures count too: 2^3 x 10 s
    ([0], {0: failed_pod("30", deleted_at=0)}, ([], 500.0)),  # capped at 10 min
])
def test_get_pod_creation_info_for_independent_indexes(
    pending: list[int], delayed: dict[int, Obj], want: tuple[list[int], float]
) -> None:
    assert creatable_now(pending, delayed, now=100.0) == want


FAIL_INDEX_ON_3 = {"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}]}
IGNORE_ON_3 = {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}


@pytest.mark.parametrize(("policy", "limit", "pod", "want"), [
    (None, 0, failed_pod("0"), True),  # backoffLimitPerIndex=0: the first failure fails the index
    (None, 1, failed_pod("0"), False),
    (None, 1, failed_pod("1"), True),
    (None, 1, failed_pod(None), False),  # no annotation counts as 0
    (FAIL_INDEX_ON_3, 6, failed_pod("0", exit_code=3), True),
    (FAIL_INDEX_ON_3, 6, failed_pod("0", exit_code=4), False),
    (IGNORE_ON_3, 0, failed_pod("5", exit_code=3), False),  # an ignored failure never fails the index
])
def test_is_index_failed(policy: Obj | None, limit: int, pod: Obj, want: bool) -> None:
    assert is_index_failed(policy, limit, pod) is want


@pytest.mark.parametrize(("policy", "replaced", "want"), [
    (None, None, {FAILURE_COUNT: "0"}),
    (None, failed_pod("2"), {FAILURE_COUNT: "3"}),
    (None, failed_pod("2", "4"), {FAILURE_COUNT: "3", IGNORED_COUNT: "4"}),
    (IGNORE_ON_3, failed_pod("2", exit_code=3), {FAILURE_COUNT: "2", IGNORED_COUNT: "1"}),
    (IGNORE_ON_3, failed_pod("2", exit_code=1), {FAILURE_COUNT: "3"}),
])
def test_new_index_failure_counts(policy: Obj | None, replaced: Obj | None, want: dict[str, str]) -> None:
    assert replacement_annotations(policy, replaced) == want


def test_pods_with_delayed_deletion_keeps_each_unfinished_index_last_failure() -> None:
    first, second = failed_pod("0", deleted_at=10), failed_pod("1", deleted_at=5)
    older, newer = failed_pod("2", deleted_at=10), failed_pod("2", deleted_at=20)
    done, gone, running = failed_pod("0"), failed_pod("0"), failed_pod("0")
    candidates = [(0, second), (0, first), (1, newer), (1, older), (2, done), (3, gone), (4, running)]
    delayed = pods_with_delayed_deletion(candidates, succeeded=parse_indexes("2", 5),
                                         failed=parse_indexes("3", 5), active_indexes=[4])
    assert delayed == {0: second, 1: newer}  # highest count first, then the latest finish


@pytest.mark.parametrize(("value", "want"), [
    ("7", 7), ("+7", 7), ("-1", 0), ("2147483648", 0), ("2147483647", MAX_INT32), ("x", 0), (" 1", 0)])
def test_index_failure_count_annotation_parsing(value: str, want: int) -> None:
    assert index_failure_count({"metadata": {"annotations": {FAILURE_COUNT: value}}}) == want


# ---------------------------------------------------------------------- timelines
def test_per_index_backoff_doubles_from_each_pods_finish_then_the_index_and_job_fail() -> None:
    h = Harness()
    h.create_job(completions=1, parallelism=1, completionMode="Indexed", backoffLimitPerIndex=3)
    h.run_until(0)
    created: list[tuple[str, str]] = []
    for fail_at in (5, 20, 45, 90):
        h.run_until(fail_at)
        meta = unfinished(h)["metadata"]
        created.append((meta["creationTimestamp"], meta["annotations"][FAILURE_COUNT]))
        h.run_pod(meta["name"])
        h.finish_pod(meta["name"], exit_code=1)
        if fail_at == 5:
            h.run_until(14.999)  # 10 s from the finish at 5
            assert len(h.pods()) == 1
            assert has_finalizer(h, meta["name"])  # kept until the replacement exists
            assert "failed" not in h.status()
            h.run_until(16)
            assert not has_finalizer(h, meta["name"])
            assert h.status()["failed"] == 1
    assert created == [(ts(0), "0"), (ts(15), "1"), (ts(40), "2"), (ts(85), "3")]  # +10 s, +20 s, +40 s
    h.run_until(91)
    status = h.status()
    assert counters(status) == (0, 4, 0, 0, "0", "")
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert reason_message(status, "Failed") == FAILED_INDEXES
    assert condition(status, "Failed")["lastTransitionTime"] == ts(91)  # type: ignore[index]
    h.run_until(300)
    assert len(h.pods()) == 4


def test_indexes_back_off_independently() -> None:
    """Two failures 3 s apart: each index is retried 10 s after its own failure; the Job-wide back-off
    would have held the second replacement for 20 s."""
    h = Harness()
    h.create_job(completions=2, parallelism=2, completionMode="Indexed", backoffLimitPerIndex=1)
    h.run_until(0)
    h.run_all()
    h.finish_pod(h.pod_by_index(0)["metadata"]["name"], exit_code=1)  # at 0
    h.run_until(3)
    h.finish_pod(h.pod_by_index(1)["metadata"]["name"], exit_code=1)
    h.run_until(30)
    replacements = {int(p["metadata"]["annotations"][INDEX]): p["metadata"]["creationTimestamp"]
                    for p in h.pods() if p["metadata"]["annotations"][FAILURE_COUNT] == "1"}
    assert replacements == {0: ts(10), 1: ts(13)}
    assert h.status()["failed"] == 2


def test_ignored_failures_do_not_count_but_lengthen_the_backoff() -> None:
    h = Harness(terminate_after=None)
    ignore_disruptions = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    h.create_job(completions=1, parallelism=1, completionMode="Indexed", backoffLimitPerIndex=1,
                 podFailurePolicy={"rules": [ignore_disruptions]})
    h.run_until(0)
    first = h.pod_names()[0]
    h.run_pod(first)
    h.finish_pod(first, exit_code=137, conditions=({"type": "DisruptionTarget", "status": "True"},))
    h.run_until(30)
    second = unfinished(h)["metadata"]
    assert (second["creationTimestamp"], second["annotations"][FAILURE_COUNT],
            second["annotations"][IGNORED_COUNT]) == (ts(10), "0", "1")
    assert "failed" not in h.status()
    h.run_pod(second["name"])
    h.finish_pod(second["name"], exit_code=1)  # at 30: counted, 1 < backoffLimitPerIndex... retried
    h.run_until(100)
    third = unfinished(h)["metadata"]
    # absolute count 0 + 1 ignored, so the second retry waits 2 x 10 s
    assert (third["creationTimestamp"], third["annotations"][FAILURE_COUNT],
            third["annotations"][IGNORED_COUNT]) == (ts(50), "1", "1")
    status = h.status()
    assert (status["failed"], status["failedIndexes"], condition_types(status)) == (1, "", [])


def cluster_with(rules: dict[str, PodTimings]) -> Cluster:
    """Each pod behaves by its completion index (the scenario ``pods:`` rules in miniature)."""
    def behaviour(pod: Obj) -> PodTimings:
        return rules[pod["metadata"]["annotations"][INDEX]]
    return Cluster(seed=0, config=ClusterConfig(behaviour=behaviour))


def create_indexed(c: Cluster, **spec: Any) -> None:
    c.client().create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
                       "spec": {"completionMode": "Indexed", **spec, "template": {"spec": {
                           "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})


def test_cluster_fail_index_action_fails_the_index_without_retry() -> None:
    c = cluster_with({"0": PodTimings(exit_after=2.0, exit_code=42), "1": PodTimings(exit_after=5.0)})
    create_indexed(c, completions=2, parallelism=2, backoffLimitPerIndex=6, podFailurePolicy={"rules": [
        {"action": "FailIndex", "onExitCodes": {"containerName": "c", "operator": "In", "values": [42]}}]})
    c.run(3)
    status = c.client().get("Job", NS, "j")["status"]
    assert (status["failedIndexes"], status["failed"], status["active"]) == ("0", 1, 1)
    c.run(100)
    status = c.client().get("Job", NS, "j")["status"]
    assert counters(status) == (0, 1, 1, 0, "0", "1")
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert reason_message(status, "Failed") == FAILED_INDEXES
    assert condition(status, "Failed")["lastTransitionTime"] == ts(6)  # type: ignore[index]
    assert len(c.client().list("Pod", NS)) == 2  # index 0 was never retried


def test_cluster_max_failed_indexes_exceeded_deletes_the_rest_then_fails() -> None:
    never = PodTimings()
    c = cluster_with({"0": PodTimings(exit_after=2.0, exit_code=1), "1": never,
                      "2": PodTimings(exit_after=4.0, exit_code=1), "3": never})
    create_indexed(c, completions=4, parallelism=4, backoffLimitPerIndex=0, maxFailedIndexes=1)
    c.run(3)
    job = c.client().get("Job", NS, "j")
    assert (job["spec"]["backoffLimit"], job["status"]["failedIndexes"]) == (MAX_INT32, "0")
    c.run(5)
    status = c.client().get("Job", NS, "j")["status"]
    assert condition_types(status) == ["FailureTarget"]
    assert reason_message(status, "FailureTarget") == MAX_FAILED_INDEXES
    assert condition(status, "FailureTarget")["lastTransitionTime"] == ts(5)  # type: ignore[index]
    c.run(100)
    status = c.client().get("Job", NS, "j")["status"]
    assert counters(status) == (0, 4, 0, 0, "0,2", "")
    assert condition_types(status) == ["FailureTarget", "Failed"]
    assert condition(status, "Failed")["lastTransitionTime"] == ts(6)  # type: ignore[index]
