"""The recorder's compact trace (:class:`fakecluster.scenario.trace.TraceLog`): read, it is the list
of :class:`TraceEvent` s a list would hold, each ``seq`` its index."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakecluster.scenario.trace import (
    TraceEvent,
    TraceLog,
    _row_lines,
    canonical_lines,
    in_trace_order,
    trace_digest,
)
from tests.test_trace_lines import _reference_line

_coordinates = st.tuples(st.sampled_from([None, "js"]), st.sampled_from([None, "workers"]),
                         st.sampled_from([None, 0, 1]), st.sampled_from([None, 0, 7]),
                         st.sampled_from([None, 0, 2]))
_rows = st.lists(st.tuples(st.floats(0, 1e6, allow_nan=False),
                           st.sampled_from(["Pod", "Job", "EndpointSlice"]),
                           st.sampled_from(["", "default"]), st.text(min_size=1, max_size=5),
                           st.sampled_from(["Created", "Ready", "Updated"]), _coordinates,
                           st.text(max_size=5)),
                 max_size=30)


def _as_list(rows: list[tuple]) -> list[TraceEvent]:  # type: ignore[type-arg]
    return [TraceEvent(t, seq, kind, ns, name, event, c[0], c[1], c[2], c[3], c[4], detail)
            for seq, (t, kind, ns, name, event, c, detail) in enumerate(rows)]


@given(_rows, st.integers(0, 30), st.integers(-40, 40), st.integers(-40, 40),
       st.sampled_from([None, 1, 2, -1, 3]))
def test_a_trace_log_reads_as_the_list_of_its_events(rows: list[tuple], built: int,  # type: ignore[type-arg]
                                                     start: int, stop: int, step: int | None) -> None:
    """Read as rows, as events already built (``events()`` called after the first ``built`` rows),
    or both: the same events, each ``seq`` its index."""
    log = TraceLog()
    expected = _as_list(rows)
    for seq, row in enumerate(rows):
        if seq == built:
            assert log.events() == expected[:built]
        log.add_row(row)
        assert log[-1].seq == seq == len(log) - 1
    assert len(log) == len(expected)
    assert list(log) == log.events() == expected
    assert log[start:stop:step] == expected[start:stop:step]
    for index in range(-len(expected), len(expected)):
        assert log[index] == expected[index]
        assert type(log[index]) is TraceEvent
    assert trace_digest(log.events()) == trace_digest(expected)


def test_each_row_gets_the_next_seq_and_out_of_range_is_an_index_error() -> None:
    log = TraceLog()
    log.add_row((1.0, "Pod", "default", "p", "Created", (None,) * 5, ""))
    log.add_row((2.0, "Job", "default", "j", "Ready", ("js", "workers", 0, None, None), ""))
    log.add_row((3.0, "Pod", "default", "p", "Ready", ("js", "workers", 0, 1, 0), ""))
    assert [(e.seq, e.name, e.event) for e in log] == [
        (0, "p", "Created"), (1, "j", "Ready"), (2, "p", "Ready")]
    assert log[1] == TraceEvent(2.0, 1, "Job", "default", "j", "Ready", "js", "workers", 0)
    with pytest.raises(IndexError):
        log[3]
    with pytest.raises(IndexError):
        log[-4]


def test_a_pods_events_share_one_coordinates_tuple() -> None:
    """What makes the row small: the recorder hands every event of a pod the same slot tuple, and the log
    keeps that one object, not five fields per event."""
    log = TraceLog()
    slot = ("js", "workers", 0, 3, 0)
    log.add_row((1.0, "Pod", "default", "p", "Created", slot, ""))
    log.add_row((2.0, "Pod", "default", "p", "Ready", slot, ""))
    assert log._rows[0][5] is log._rows[1][5] is slot


def test_in_trace_order_hands_a_log_in_order_back_as_it_is_and_sorts_one_out_of_order() -> None:
    log = TraceLog()
    log.add_row((1.0, "Pod", "default", "p", "Created", (None,) * 5, ""))
    log.add_row((1.0, "Pod", "default", "p", "Scheduled", (None,) * 5, "node"))
    log.events()
    log.add_row((2.0, "Pod", "default", "p", "Ready", (None,) * 5, ""))
    assert log.in_order() and in_trace_order(log) is log
    log.add_row((1.5, "Pod", "default", "q", "Created", (None,) * 5, ""))  # no recorder does this: by hand
    assert not log.in_order()
    assert [(e.time, e.seq) for e in in_trace_order(log)] == [(1.0, 0), (1.0, 1), (1.5, 3), (2.0, 2)]


_details = st.sampled_from(["", "node", "exitCode=1", "a\\b", "two\nlines", "endpoints 3"])
_any_coordinates = st.tuples(st.sampled_from([None, "js"]), st.sampled_from([None, "workers"]),
                             st.sampled_from([None, 0, 1]), st.sampled_from([None, 0, 7]),
                             st.sampled_from([None, 0, 2]))
_times = st.lists(st.sampled_from([0.0, 1.0, 1.5, 2.25, 1e6]), min_size=1, max_size=40).map(sorted)
_ordered_rows = _times.flatmap(lambda times: st.tuples(*[
    st.tuples(st.just(t), st.sampled_from(["Pod", "Job", "EndpointSlice"]),
              st.sampled_from(["", "default"]), st.sampled_from(["a", "b", "scale-workers-0-1"]),
              st.sampled_from(["Created", "Ready", "Updated"]),
              _any_coordinates, _details)
    for t in times]).map(list))


@given(_ordered_rows, st.lists(st.integers(0, 40), max_size=4), st.integers(0, 41), st.integers(0, 40))
def test_a_compacted_log_reads_hashes_and_answers_as_the_list_of_its_events(
        rows: list[tuple], compact_at: list[int], built: int, start: int) -> None:  # type: ignore[type-arg]
    """Compacted into chunks at any points (and its events built part-way or not): every read of the
    log (items, slices, iteration, named, order, the digest hashed as it compacts) is that of the
    list of its events. Fails if a chunk or the running digest reads a row wrong."""
    log = TraceLog()
    expected = _as_list(rows)
    for seq, row in enumerate(rows):
        if seq == built:
            log.events()
        if seq in compact_at:
            log.compact()
        log.add_row(row)
        assert log[-1] == expected[seq]
    if len(rows) in compact_at:
        log.compact()
    assert len(log) == len(expected)
    assert list(log) == expected
    for index in range(-len(expected), len(expected)):
        assert log[index] == expected[index]
    assert log[start::3] == expected[start::3]
    assert log.in_order()
    names = {"Ready", "Updated"}
    assert log.named(start, names) == [e for e in expected[start:] if e.event in names]
    assert trace_digest(log) == trace_digest(expected) == trace_digest(list(log))
    assert log.events() == expected
    assert trace_digest(log) == trace_digest(expected)


@given(_ordered_rows)
def test_row_lines_are_the_canonical_lines_of_the_rows_events(rows: list[tuple]) -> None:  # type: ignore[type-arg]
    """The digest of a compacted log formats its rows' lines from the rows (no event built): each the
    reference line of the row's event, written field by field (every coordinate shape, escaped
    details, zero times), and the lines ``canonical_lines`` gives for the events."""
    events = _as_list(rows)
    assert _row_lines(rows) == [_reference_line(event) for event in events] == canonical_lines(events)


def test_a_chunk_keeps_the_rows_very_objects_and_shares_their_common_parts() -> None:
    """What makes a compacted row small: its time a double, its name and coordinates the row's objects,
    and the (kind, namespace, event, detail) of many rows one tuple. Read back, the rows of an instant
    share one time float again."""
    log = TraceLog()
    slot = ("js", "workers", 0, 3, 0)
    now = 1.0 + 0.5
    for name in ("p", "q", "r"):
        log.add_row((now, "Pod", "default", name, "Ready", slot, ""))
    log.compact()
    (chunk,) = log._chunks
    assert list(chunk.times) == [now] * 3 and chunk.coordinates[1] is slot
    events = chunk.events(0)
    assert events[0].time is events[1].time is events[2].time == now
    assert chunk.shared[0] is chunk.shared[1] is chunk.shared[2]
    assert log._rows == [] and log.add_row.__self__ is log._rows  # type: ignore[attr-defined]
    assert log[2] == TraceEvent(1.5, 2, "Pod", "default", "r", "Ready", "js", "workers", 0, 3, 0)


def test_a_run_builds_its_outcomes_trace_after_close_the_same_as_during_play() -> None:
    """``run_scenario`` plays with ``defer_trace``: the outcome's trace list is built once the cluster is
    taken apart (close() would otherwise empty the recorder's log). The same events and digest as a run
    that builds it in play()."""
    from fakecluster.scenario.loader import load_scenario
    from fakecluster.scenario.runner import ScenarioRun, run_scenario
    from fakecluster.workload_plugin import load_plugin

    path = Path(__file__).parent.parent / "scenarios" / "startup" / "three-tier-inorder.yaml"
    built_in_play = ScenarioRun(load_scenario(path), path, load_plugin()).play()
    deferred = run_scenario(path)
    assert type(deferred.trace) is list and deferred.trace
    assert deferred.trace == built_in_play.trace
    assert deferred.digest == built_in_play.digest
    assert trace_digest(deferred.trace) == trace_digest(built_in_play.trace)
