"""``backoffLimitPerIndex`` / ``maxFailedIndexes`` (KEP-3850, GA 1.33): per-index failure accounting.

A port of the per-index parts of ``pkg/controller/job/indexed_job_utils.go`` (``calculateFailedIndexes``,
``isIndexFailed``, ``getPodsWithDelayedDeletionPerIndex``, ``getNewIndexFailureCounts``,
``parseIndexFailureCountAnnotation``), of ``getRemainingTimePerIndex`` in ``backoff_utils.go`` and of
``getPodCreationInfoForIndependentIndexes`` in ``job_controller.go``.

How an Indexed Job with ``backoffLimitPerIndex`` counts failures, upstream and here:

- Every pod carries ``batch.kubernetes.io/job-index-failure-count`` (and, once non-zero,
  ``batch.kubernetes.io/job-index-ignored-failure-count``): the failures of its index before it was
  created. The replacement for index *i* copies the counts of the last failed pod of *i* and adds one
  to the failure count, or to the ignored count when the failure matched a podFailurePolicy ``Ignore``.
- An index fails for good when a failed pod's failure count is already ``>= backoffLimitPerIndex``
  (and the failure counts), or when the pod matches a ``FailIndex`` rule. Failed indexes go to
  ``status.failedIndexes`` and are never re-created.
- To carry the counts over, the last failed pod of an index that still needs a replacement keeps its
  tracking finalizer ("delayed deletion") until that replacement exists; only then is it counted in
  ``status.failed``.
- The pod-recreation back-off is per index: ``10 s * 2^(n-1)`` (10 min cap) with
  ``n = failure count + ignored count + 1`` of that last failed pod, measured from its finish time. The
  Job-wide back-off record is not used for such Jobs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fakecluster.api.batch_labels import (
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION,
)
from fakecluster.api.objects import Obj
from fakecluster.controllers.job import indexed_job_utils as indexes
from fakecluster.controllers.job.pods import finished_time, match_pod_failure_policy
from fakecluster.controllers.job.status import BackoffRecord

FAIL_INDEX = "FailIndex"

_MAX_INT32 = 2**31 - 1
_GO_ATOI = re.compile(r"[+-]?\d+")


def _annotation_int32(pod: Obj, key: str) -> int:
    """``parseInt32``: the annotation as an int32; 0 when absent, unparsable, negative or too big."""
    value = (pod["metadata"].get("annotations") or {}).get(key)
    if not isinstance(value, str) or _GO_ATOI.fullmatch(value) is None:
        return 0
    number = int(value)
    return number if 0 <= number <= _MAX_INT32 else 0


def index_failure_count(pod: Obj) -> int:
    """``getIndexFailureCount``."""
    return _annotation_int32(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION)


def index_ignored_failure_count(pod: Obj) -> int:
    return _annotation_int32(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION)


def absolute_failure_count(pod: Obj) -> int:
    """``getIndexAbsoluteFailureCount``: counted plus ignored failures of the index before ``pod``."""
    return index_failure_count(pod) + index_ignored_failure_count(pod)


def is_index_failed(policy: Obj | None, backoff_limit_per_index: int, pod: Obj) -> bool:
    """``isIndexFailed`` for a pod already known to be failed (``isPodFailed``): a ``FailIndex`` rule
    fails the index at once; otherwise a counted failure fails it once the pod's failure count has
    reached ``backoffLimitPerIndex``."""
    if policy is not None:
        match = match_pod_failure_policy(policy, pod)
        if match.action == FAIL_INDEX:
            return True
        if not match.counts:
            return False
    return index_failure_count(pod) >= backoff_limit_per_index


def failed_indexes(
    previous: str | None, completions: int, failed_pods: Iterable[tuple[int, Obj]],
    policy: Obj | None, backoff_limit_per_index: int,
) -> indexes.Intervals:
    """``calculateFailedIndexes``: ``status.failedIndexes`` plus the indexes of the failed pods (valid
    index, tracking finalizer still on) that fail their index."""
    newly = sorted({ix for ix, pod in failed_pods if is_index_failed(policy, backoff_limit_per_index, pod)})
    return indexes.with_ordered_indexes(indexes.parse_indexes(previous, completions), newly)


def pods_with_delayed_deletion(
    failed_pods: Sequence[tuple[int, Obj]], succeeded: indexes.Intervals, failed: indexes.Intervals,
    active_indexes: Iterable[int],
) -> dict[int, Obj]:
    """``getPodsWithDelayedDeletionPerIndex``: for each index that still needs a replacement (not
    succeeded, not failed, no active pod), its last failed pod: highest absolute failure count, and the
    latest finish time among equals. Its finalizer stays until the replacement exists."""
    if not failed_pods:
        return {}
    active = set(active_indexes)
    delayed: dict[int, Obj] = {}
    for ix, pod in failed_pods:
        if ix in active or indexes.has_index(succeeded, ix) or indexes.has_index(failed, ix):
            continue
        last = delayed.get(ix)
        if last is None or (absolute_failure_count(last) <= absolute_failure_count(pod)
                            and finished_time(pod) >= finished_time(last)):
            delayed[ix] = pod
    return delayed


def replacement_annotations(policy: Obj | None, replaced: Obj | None) -> dict[str, str]:
    """``addIndexFailureCountAnnotation`` / ``getNewIndexFailureCounts``: the counts for the pod that
    replaces ``replaced`` (``None``: the index never failed, both counts 0)."""
    if replaced is None:
        return {JOB_INDEX_FAILURE_COUNT_ANNOTATION: "0"}
    failures, ignored = index_failure_count(replaced), index_ignored_failure_count(replaced)
    if match_pod_failure_policy(policy, replaced).counts:
        failures += 1
    else:
        ignored += 1
    out = {JOB_INDEX_FAILURE_COUNT_ANNOTATION: str(failures)}
    if ignored > 0:
        out[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
    return out


def remaining_backoff(last_failed: Obj | None, now: float) -> float:
    """``getRemainingTimePerIndex``: back-off left before index of ``last_failed`` may get a new pod."""
    if last_failed is None:
        return 0.0
    record = BackoffRecord(absolute_failure_count(last_failed) + 1, finished_time(last_failed))
    return record.remaining(now)


def creatable_now(pending: Sequence[int], delayed: dict[int, Obj], now: float) -> tuple[list[int], float]:
    """``getPodCreationInfoForIndependentIndexes``: the pending indexes whose back-off has elapsed; if
    there are none, the shortest remaining back-off (the caller requeues after it)."""
    ready: list[int] = []
    shortest: float | None = None
    for ix in pending:
        left = remaining_backoff(delayed.get(ix), now)
        if left == 0:
            ready.append(ix)
        elif shortest is None or left < shortest:
            shortest = left
    if ready:
        return ready, 0.0
    return ready, shortest or 0.0
