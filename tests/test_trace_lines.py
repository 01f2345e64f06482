"""The digest's canonical lines (:func:`fakecluster.scenario.trace.canonical_lines`): the line format,
and the time formatted once per instant giving what formatting each event on its own gives."""

from __future__ import annotations

import hashlib
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.scenario import trace as trace_module
from fakecluster.scenario.trace import TraceEvent, canonical_lines, in_trace_order, trace_digest


def test_the_line_format_is_pinned() -> None:
    event = TraceEvent(12.5, 7, "Pod", "default", "js-w-0-1-abcde", "Ready", "js", "w", 0, 1, 2, 'a\\b\nc')
    assert event.key() == '12.500000 Pod default/js-w-0-1-abcde Ready js=js rj=w ji=0 pi=1 a=2 a\\\\b\\nc'
    bare = TraceEvent(0.0, 0, "EndpointSlice", "default", "svc-x", "Updated")
    assert bare.key() == "0.000000 EndpointSlice default/svc-x Updated"


@pytest.mark.parametrize(("detail", "written"), [("endpoints 4", "endpoints 4"), ("a\\b", "a\\\\b"),
                                                 ("a\nb", "a\\nb"), ("\n\\", "\\n\\\\")])
def test_a_detail_is_escaped_when_it_holds_a_backslash_or_a_newline_and_only_then(detail: str,
                                                                                    written: str) -> None:
    """A detail is escaped only when there is something to escape (checked first, as most have
    nothing): a backslash alone, a newline alone, or both."""
    event = TraceEvent(1.0, 0, "EndpointSlice", "ns", "s", "Updated", detail=detail)
    assert canonical_lines([event]) == [f"1.000000 EndpointSlice ns/s Updated {written}"]


_optional_text = st.none() | st.text(max_size=4)
_optional_int = st.none() | st.integers(0, 3)
_events = st.builds(
    TraceEvent,
    st.sampled_from([0.0, -0.0, 1.0, 1.0000004, 2.5, 1e9 + 0.1234567]), st.integers(0, 9),
    st.sampled_from(["Pod", "Job"]), st.text(max_size=3), st.text(max_size=3),
    st.sampled_from(["Ready", "X"]),
    _optional_text, _optional_text, _optional_int, _optional_int, _optional_int,
    st.text(alphabet="ab\\\n", max_size=4))


def _reference_line(event: TraceEvent) -> str:
    """The line format written out field by field, independently of :func:`canonical_lines` (whose
    usual shapes, every coordinate or none, are built in one piece)."""
    line = f"{event.time:.6f} {event.kind} {event.namespace}/{event.name} {event.event}"
    for label, value in (("js", event.jobset), ("rj", event.replicated_job), ("ji", event.job_index),
                         ("pi", event.pod_index), ("a", event.attempt)):
        if value is not None:
            line += f" {label}={value}"
    if event.detail:
        line += " " + event.detail.replace("\\", "\\\\").replace("\n", "\\n")
    return line


@settings(max_examples=300)
@given(st.lists(_events, max_size=12))
def test_every_line_reads_as_written_field_by_field(trace: list[TraceEvent]) -> None:
    """Whatever coordinates an event has (all, none, or some), its line is the reference format."""
    assert canonical_lines(trace) == [_reference_line(event) for event in trace]


@settings(max_examples=300)
@given(st.lists(_events, max_size=12))
def test_lines_of_a_whole_trace_are_each_events_own_line(trace: list[TraceEvent]) -> None:
    """Runs of one instant (repeated times, zeros of either sign) share the formatted time; each line
    is still exactly the event's own ``key()``."""
    assert canonical_lines(trace) == [event.key() for event in trace]
    assert trace_digest(trace) == trace_digest(list(trace))
    for event in trace:
        assert event.key().startswith(f"{event.time:.6f} ")


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.5]), st.integers(0, 4)), max_size=10))
def test_in_trace_order_is_time_then_seq_and_keeps_an_ordered_trace_as_it_is(
        stamps: list[tuple[float, int]]) -> None:
    trace = [TraceEvent(t, s, "Pod", "ns", f"p{i}", "Ready") for i, (t, s) in enumerate(stamps)]
    ordered = in_trace_order(trace)
    assert ordered == sorted(trace, key=lambda e: (e.time, e.seq))
    if all(a.time < b.time or (a.time == b.time and a.seq <= b.seq) for a, b in pairwise(trace)):
        assert all(x is y for x, y in zip(ordered, trace, strict=True))  # no sort: the events as they came


def _one_piece_digest(trace: list[TraceEvent]) -> str:
    return hashlib.sha256("\n".join(event.key() for event in trace).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("events", [0, 1, 2, 3, 4, 5, 7, 8, 9])
def test_the_digest_hashed_chunk_by_chunk_is_the_digest_of_all_lines_joined(
        events: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 4 events, traces of up to two chunks and one event more: every boundary case (empty,
    a partial chunk, a chunk exactly, one past it) gives the digest of the whole trace's lines joined
    by newlines, as it was computed in one piece before."""
    monkeypatch.setattr(trace_module, "DIGEST_CHUNK", 4)
    trace = [TraceEvent(float(i // 3), i, "Pod", "ns", f"p{i}", "Ready", detail="x" * (i % 2))
             for i in range(events)]
    assert trace_digest(trace) == _one_piece_digest(trace)
    assert trace_digest(iter(trace)) == _one_piece_digest(trace)  # any iterable, read once


def test_the_digest_of_a_trace_longer_than_a_chunk_at_the_real_chunk_size() -> None:
    events = 2 * trace_module.DIGEST_CHUNK + 1
    trace = [TraceEvent(i * 0.5, i, "Pod", "ns", f"p{i}", "Ready") for i in range(events)]
    assert trace_digest(trace) == _one_piece_digest(trace)
