"""The recorder's compact trace (:class:`fakecluster.scenario.trace.TraceLog`): read, it is the list
of :class:`TraceEvent` s a list would hold, each ``seq`` its index."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakecluster.scenario.trace import TraceEvent, TraceLog, in_trace_order, trace_digest

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
