"""Completion-index interval sets: ``status.completedIndexes`` and the Indexed-Job index arithmetic.

A port of the ``orderedIntervals`` helpers in ``pkg/controller/job/indexed_job_utils.go`` and of
``matchSuccessPolicy`` in ``pkg/controller/job/success_policy.go``. Indexes are kept as sorted, disjoint,
non-adjacent inclusive intervals so that a Job with thousands of completed indexes costs a few tuples,
and ``"0-7999"`` round-trips without materialising 8,000 integers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from fakecluster.api.objects import Obj

Interval = tuple[int, int]
"""``(first, last)``, both inclusive."""

Intervals = list[Interval]


def parse_indexes(text: str | None, completions: int) -> Intervals:
    """``parseIndexesFromString``: ``"1,3-5,7"`` → intervals, dropping indexes ``>= completions``.

    Corrupted parts are skipped, as upstream logs and ignores them; adjacent parts are joined.
    """
    result: Intervals = []
    if not text:
        return result
    for part in text.split(","):
        bounds = part.split("-")
        if not bounds[0].isdigit():
            continue
        first = int(bounds[0])
        if first >= completions:
            break
        if len(bounds) > 1:
            if not bounds[1].isdigit():
                continue
            last = min(int(bounds[1]), completions - 1)
        else:
            last = first
        if result and result[-1][1] == first - 1:
            result[-1] = (result[-1][0], last)
        else:
            result.append((first, last))
    return result


def merge(left: Sequence[Interval], right: Sequence[Interval]) -> Intervals:
    """``orderedIntervals.merge``: union of two ordered interval lists, joining overlaps and neighbours.

    Upstream's ``appendOrMergeWithLastInterval`` is written out in the one loop (it runs two or three
    times per Indexed Job sync; a nested function built per call cost more than the merge)."""
    result: Intervals = []
    i = j = 0
    n, m = len(left), len(right)
    while i < n or j < m:
        if j >= m or (i < n and left[i][0] < right[j][0]):
            item = left[i]
            i += 1
        else:
            item = right[j]
            j += 1
        if not result or item[0] > result[-1][1] + 1:
            result.append(item)
        elif result[-1][1] < item[1]:
            result[-1] = (result[-1][0], item[1])
    return result


def with_ordered_indexes(intervals: Sequence[Interval], new_indexes: Iterable[int]) -> Intervals:
    """``orderedIntervals.withOrderedIndexes``; ``new_indexes`` must be in increasing order. Runs of
    consecutive indexes are folded first, so 8,000 active indexes merge as one interval."""
    runs: Intervals = []
    for ix in new_indexes:
        if runs and ix <= runs[-1][1] + 1:
            if ix > runs[-1][1]:
                runs[-1] = (runs[-1][0], ix)
        else:
            runs.append((ix, ix))
    return merge(intervals, runs)


def total(intervals: Iterable[Interval]) -> int:
    return sum(last - first + 1 for first, last in intervals)


def format_indexes(intervals: Iterable[Interval]) -> str:
    """``orderedIntervals.String``: exactly two consecutive indexes print as ``"3,4"``, three or more as
    ``"3-5"`` (the rule ``status.completedIndexes`` readers such as JobSet's tests rely on)."""
    parts = []
    for first, last in intervals:
        if last == first:
            parts.append(str(first))
        elif last == first + 1:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}")
    return ",".join(parts)


def has_index(intervals: Sequence[Interval], index: int) -> bool:
    """``orderedIntervals.has``: binary search on the interval ends."""
    pos = bisect_left(intervals, index, key=lambda iv: iv[1])
    return pos < len(intervals) and intervals[pos][0] <= index


def first_pending_indexes(non_pending: Sequence[Interval], count: int, completions: int) -> list[int]:
    """``firstPendingIndexes``: the ``count`` lowest indexes ``< completions`` outside ``non_pending``
    (succeeded, active and, with ``onlyReplaceFailedPods``, terminating indexes). Bounded by
    ``len(non_pending) + count``, never by ``completions``."""
    result: list[int] = []
    candidate = 0
    for first, last in non_pending:
        while candidate < completions and len(result) < count and candidate < first:
            result.append(candidate)
            candidate += 1
        candidate = max(candidate, last + 1)
    while candidate < completions and len(result) < count:
        result.append(candidate)
        candidate += 1
    return result


def _match_succeeded_indexes_rule(
    rule_indexes: Sequence[Interval], succeeded: Sequence[Interval], succeeded_count: int | None
) -> bool:
    contains = rule_pos = succeeded_pos = 0
    while rule_pos < len(rule_indexes) and succeeded_pos < len(succeeded):
        rule_iv, done_iv = rule_indexes[rule_pos], succeeded[succeeded_pos]
        overlap = min(rule_iv[1], done_iv[1]) - max(rule_iv[0], done_iv[0]) + 1
        if overlap > 0:
            contains += overlap
        if done_iv[1] < rule_iv[1]:
            succeeded_pos += 1
        elif done_iv[1] > rule_iv[1]:
            rule_pos += 1
        else:
            succeeded_pos += 1
            rule_pos += 1
    return contains == total(rule_indexes) or (succeeded_count is not None and contains >= succeeded_count)


def match_success_policy(policy: Obj | None, completions: int, succeeded: Sequence[Interval]) -> str | None:
    """``matchSuccessPolicy``: the ``SuccessCriteriaMet`` message of the first matching rule, if any."""
    if not policy or not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or ()):
        if rule.get("succeededIndexes") is not None:
            required = parse_indexes(rule["succeededIndexes"], completions)
            if required and _match_succeeded_indexes_rule(required, succeeded, rule.get("succeededCount")):
                return f"Matched rules at index {index}"
        elif rule.get("succeededCount") is not None and total(succeeded) >= rule["succeededCount"]:
            return f"Matched rules at index {index}"
    return None
