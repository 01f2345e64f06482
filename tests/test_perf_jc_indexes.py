"""``indexed_job_utils.merge`` written as one loop must give what the helper-based form (upstream's
``appendOrMergeWithLastInterval`` per item, kept here as the reference) gives, for any interval lists,
ordered or not (a stored ``completedIndexes`` may have been written by anyone); and the facts the Job
sync's shortcuts rest on."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj
from fakecluster.controllers.job.indexed_job_utils import Interval, Intervals, merge, with_ordered_indexes
from fakecluster.controllers.job.status import ensure_condition_status


def reference_merge(left: Sequence[Interval], right: Sequence[Interval]) -> Intervals:
    result: Intervals = []

    def push(item: Interval) -> None:
        if not result or item[0] > result[-1][1] + 1:
            result.append(item)
        elif result[-1][1] < item[1]:
            result[-1] = (result[-1][0], item[1])

    i = j = 0
    while i < len(left) and j < len(right):
        if left[i][0] < right[j][0]:
            push(left[i])
            i += 1
        else:
            push(right[j])
            j += 1
    for item in left[i:]:
        push(item)
    for item in right[j:]:
        push(item)
    return result


intervals = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=8)


@settings(max_examples=400)
@given(intervals, intervals)
def test_merge_matches_the_reference(left: Intervals, right: Intervals) -> None:
    assert merge(left, right) == reference_merge(left, right)


@given(intervals, st.lists(st.integers(0, 40), max_size=10).map(sorted))
def test_with_ordered_indexes_matches_the_reference(left: Intervals, new: list[int]) -> None:
    runs = [(ix, ix) for ix in new]
    assert with_ordered_indexes(left, new) == reference_merge(left, reference_merge([], runs))


@given(intervals, intervals)
def test_merging_nothing_into_a_merge_result_changes_nothing(left: Intervals, right: Intervals) -> None:
    """Why _track_status keeps ``succeeded_indexes`` as _observe's merge left it when no index is new."""
    merged = merge(left, right)
    assert with_ordered_indexes(merged, []) == merged


def test_a_false_condition_is_never_added_to_no_conditions() -> None:
    """Why _manage skips ensure_condition_status(..., "False", ...) on a Job without conditions."""
    conditions: list[Obj] = []
    assert not ensure_condition_status(conditions, "Suspended", "False", "JobResumed", "Job resumed",
                                       now="2025-01-01T00:00:00Z")
    assert conditions == []
