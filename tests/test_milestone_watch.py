"""A :class:`MilestoneWatch` fed a trace as it grows answers, after every event, what
:meth:`Milestone.find` answers over the trace so far, reads each event once, and starts over when the trace
or the shapes are replaced (a session that applies a JobSet mid-run)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.scenario.milestones import MilestoneWatch, parse_milestone
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import GroupShape

SHAPES = {"mpi": {"launcher": GroupShape(1, 1), "node": GroupShape(2, 3)},
          "etl": {"node": GroupShape(1, 2, indexed=False)}}
MILESTONES = ["all node pods Ready", "first node pods Running", "all mpi/node pods Ready",
              "all node jobs Complete", "all etl/node pods Succeeded", "all node[1] pods Ready",
              "all node[0/2] pods Ready attempt 1",
              "jobset Completed", "jobset mpi Finished", "first launcher pods Ready"]
EVENTS = {"Pod": ["Running", "Ready", "Succeeded"], "Job": ["Complete", "Ready"],
          "JobSet": ["Completed", "Failed", "Restarted"]}


@st.composite
def _traces(draw: st.DrawFn) -> list[TraceEvent]:
    events: list[TraceEvent] = []
    time = 0.0
    for seq in range(draw(st.integers(0, 40))):
        time += draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]))
        kind = draw(st.sampled_from(["Pod", "Pod", "Pod", "Job", "JobSet"]))
        js = draw(st.sampled_from(["mpi", "mpi", "etl"]))
        event = draw(st.sampled_from(EVENTS[kind]))
        if kind == "JobSet":
            events.append(TraceEvent(time, seq, kind, "default", js, event, jobset=js))
            continue
        rj = draw(st.sampled_from(["node", "node", "launcher"]))
        ji, pi = draw(st.integers(0, 1)), draw(st.integers(0, 3))
        attempt = draw(st.sampled_from([0, 0, 0, 1]))
        events.append(TraceEvent(time, seq, kind, "default", f"{js}-{rj}-{ji}-{pi}", event, jobset=js,
                                 replicated_job=rj, job_index=ji, pod_index=pi if kind == "Pod" else None,
                                 attempt=attempt))
    return events


def _answer(ask: Callable[[], TraceEvent | None]) -> object:
    """The answer, or the error: ``all`` over a replicated job no JobSet has yet raises, in both."""
    try:
        return ask()
    except ValueError as err:
        return str(err)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(_traces(), st.sampled_from(MILESTONES), st.integers(0, 40))
def test_fed_as_the_trace_grows_the_watch_answers_what_find_answers(
        events: list[TraceEvent], text: str, reshape_at: int) -> None:
    milestone = parse_milestone(text)
    watch = MilestoneWatch(milestone)
    trace: list[TraceEvent] = []
    shapes: dict[str, dict[str, GroupShape]] = {"mpi": dict(SHAPES["mpi"])}
    for at, event in enumerate(events):
        if at == reshape_at:  # a JobSet applied mid-run: slots change, the watch starts over
            shapes["etl"] = dict(SHAPES["etl"])
        trace.append(event)
        assert _answer(lambda: watch.advance(trace, shapes)) == _answer(lambda: milestone.find(trace, shapes))
    copy = list(trace)  # another list: read afresh
    assert _answer(lambda: watch.advance(copy, shapes)) == _answer(lambda: milestone.find(copy, shapes))


class _CountingTrace(Sequence[TraceEvent]):
    """A trace that counts the events read from it."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.reads = 0

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TraceEvent]: ...
    def __getitem__(self, index: Any) -> Any:
        self.reads += 1 if isinstance(index, int) else len(range(*index.indices(len(self.events))))
        return self.events[index]

    def __iter__(self) -> Iterator[TraceEvent]:
        self.reads += len(self.events)
        return iter(self.events)


def test_asked_after_every_event_the_watch_reads_each_event_once() -> None:
    """What keeps a ``when: all workers pods Running`` action from making a run quadratic: 600 pods, each
    Running event followed by the question, cost each event once plus the first and last of what is new
    at each call: 1,800 reads (``find`` each time would read 180,300)."""
    shapes = {"big": {"workers": GroupShape(6, 100)}}
    watch = MilestoneWatch(parse_milestone("all workers pods Running"))
    trace = _CountingTrace()
    hit = None
    for seq in range(600):
        ji, pi = divmod(seq, 100)
        trace.events.append(TraceEvent(float(seq), seq, "Pod", "default", f"big-workers-{ji}-{pi}", "Running",
                                       jobset="big", replicated_job="workers", job_index=ji, pod_index=pi,
                                       attempt=0))
        hit = watch.advance(trace, shapes)
    assert hit is not None and hit.seq == 599
    assert trace.reads == 3 * 600


def test_new_events_that_start_before_the_last_one_read_are_left_to_find() -> None:
    """Not a recorded trace (its events come in (time, seq) order): the answer is still find's."""
    shapes = {"mpi": {"node": GroupShape(1, 2)}}
    milestone = parse_milestone("all node pods Ready")
    late = TraceEvent(5.0, 1, "Pod", "default", "mpi-node-0-1", "Ready", jobset="mpi", replicated_job="node",
                      job_index=0, pod_index=1, attempt=0)
    early = TraceEvent(3.0, 0, "Pod", "default", "mpi-node-0-0", "Ready", jobset="mpi", replicated_job="node",
                       job_index=0, pod_index=0, attempt=0)
    watch = MilestoneWatch(milestone)
    trace = [late]
    assert watch.advance(trace, shapes) is None
    trace.append(early)
    assert watch.advance(trace, shapes) == milestone.find(trace, shapes) == late
