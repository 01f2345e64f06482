"""The milestone index (:attr:`Milestone.fired_by`, :meth:`TraceLog.named`) changes no answer: over
any trace, a recorded log (in rows, partly built or not) or a list, a watch and ``find`` answer what a
linear scan that asks every event, field by field as :meth:`Milestone.matches` did before the index,
answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.scenario.milestones import Milestone, MilestoneWatch, parse_milestone
from fakecluster.scenario.trace import TraceEvent, TraceLog
from fakecluster.workload_plugin import GroupShape

SHAPES = {"mpi": {"launcher": GroupShape(1, 1), "node": GroupShape(2, 3)},
          "etl": {"node": GroupShape(1, 2, indexed=False)}}
MILESTONES = ["all node pods Ready", "first node pods Running", "all mpi/node pods Failed",
              "all node jobs Complete", "all etl/node pods Succeeded", "first node[1] pods Failed",
              "all node[0/2] pods Ready attempt 1", "first launcher jobs Failed",
              "jobset Completed", "jobset mpi Finished", "jobset Finished", "jobset etl Failed"]
EVENTS = {"Pod": ["Created", "Running", "Ready", "Succeeded", "Failed", "Finished"],
          "Job": ["Complete", "Ready", "Failed"],
          "JobSet": ["Completed", "Failed", "Restarted", "Finished"],
          "EndpointSlice": ["Created", "Updated"]}


def _reference_matches(m: Milestone, event: TraceEvent) -> bool:
    """:meth:`Milestone.matches` as it read before the index: kind, then name, then coordinates."""
    if event.kind != m.kind:
        return False
    if event.event != m.event and not (
        m.event == "Finished" and event.kind == "JobSet" and event.event in ("Completed", "Failed")
    ):
        return False
    if m.kind == "JobSet":
        return m.jobset is None or m.jobset in (event.name, event.jobset)
    return ((m.jobset is None or event.jobset == m.jobset) and event.replicated_job == m.replicated_job
            and (m.job_index is None or event.job_index == m.job_index)
            and (m.pod_index is None or event.pod_index == m.pod_index)
            and (event.attempt or 0) == m.attempt)


def _reference_find(m: Milestone, events: list[TraceEvent]) -> TraceEvent | None:
    """Every event asked in turn (the trace is in order): the first match, or the last slot filled."""
    if m.kind == "JobSet" or m.quantifier == "first":
        return next((e for e in events if _reference_matches(m, e)), None)
    remaining, interchangeable = m._slots(SHAPES), m._non_indexed(SHAPES)
    filled: dict[tuple[str | None, int | None], set[int | None]] = {}
    for event in events:
        if not remaining or not _reference_matches(m, event):
            continue
        slot = (event.jobset, event.job_index, event.pod_index if m.kind == "Pod" else None)
        if slot[:2] in interchangeable:
            pods = filled.setdefault(slot[:2], set())
            if slot[2] in pods:
                continue
            slot = (slot[0], slot[1], len(pods))
            pods.add(event.pod_index)
        remaining.discard(slot)
        if not remaining:
            return event
    return None


@st.composite
def _traces(draw: st.DrawFn) -> list[TraceEvent]:
    events: list[TraceEvent] = []
    time = 0.0
    for seq in range(draw(st.integers(0, 60))):
        time += draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]))
        kind = draw(st.sampled_from(["Pod", "Pod", "Pod", "Job", "JobSet", "EndpointSlice"]))
        js = draw(st.sampled_from(["mpi", "mpi", "etl"]))
        event = draw(st.sampled_from(EVENTS[kind]))
        if kind in ("JobSet", "EndpointSlice"):
            jobset = js if kind == "JobSet" else None
            events.append(TraceEvent(time, seq, kind, "default", js, event, jobset=jobset))
            continue
        rj = draw(st.sampled_from(["node", "node", "launcher"]))
        ji, pi = draw(st.integers(0, 1)), draw(st.integers(0, 3))
        attempt = draw(st.sampled_from([0, 0, 0, 1, None]))
        events.append(TraceEvent(time, seq, kind, "default", f"{js}-{rj}-{ji}-{pi}", event, jobset=js,
                                 replicated_job=rj, job_index=ji, pod_index=pi if kind == "Pod" else None,
                                 attempt=attempt))
    return events


def _recorded(events: list[TraceEvent], built_up_to: int) -> TraceLog:
    """``events`` as the recorder keeps them: rows, the first ``built_up_to`` of them built already."""
    log = TraceLog()
    for at, e in enumerate(events):
        if at == built_up_to:
            log.events()
        log.add_row((e.time, e.kind, e.namespace, e.name, e.event,
                     (e.jobset, e.replicated_job, e.job_index, e.pod_index, e.attempt), e.detail))
    return log


@settings(max_examples=400, deadline=None, derandomize=True)
@given(_traces(), st.sampled_from(MILESTONES), st.integers(0, 60))
def test_indexed_answers_equal_a_linear_scan(events: list[TraceEvent], text: str, built_up_to: int) -> None:
    milestone = parse_milestone(text)
    for event in events:
        assert milestone.matches(event) == _reference_matches(milestone, event)
    expected = _reference_find(milestone, events)
    assert milestone.find(events, SHAPES) == expected
    assert milestone.find(_recorded(events, built_up_to), SHAPES) == expected
    watch, log = MilestoneWatch(milestone), TraceLog()
    answers = []
    for at, e in enumerate(events):  # fed as the recorder records, the log built part-way through
        if at == built_up_to:
            log.events()
        log.add_row((e.time, e.kind, e.namespace, e.name, e.event,
                     (e.jobset, e.replicated_job, e.job_index, e.pod_index, e.attempt), e.detail))
        answers.append(watch.advance(log, SHAPES))
    assert answers == [_reference_find(milestone, events[:n]) for n in range(1, len(events) + 1)]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(_traces(), st.integers(0, 60), st.integers(0, 70),
       st.frozensets(st.sampled_from(["Ready", "Failed", "Completed", "Created", "Nope"])))
def test_named_picks_the_events_of_those_names_from_start_on(
        events: list[TraceEvent], built_up_to: int, start: int, names: frozenset[str]) -> None:
    expected = [e for e in events[start:] if e.event in names]
    assert _recorded(events, built_up_to).named(start, names) == expected


def test_the_last_event_is_built_from_the_row_just_added() -> None:
    log = TraceLog()
    rows = [(1.0, "Pod", "default", "a", "Created", ("js", "rj", 0, 1, 0), ""),
            (2.0, "EndpointSlice", "default", "s", "Updated", (None, None, None, None, None), "endpoints 1")]
    for at, row in enumerate(rows):
        log.add_row(row)
        assert log.last(row) == log[at] == log[-1]
    log.events()
    log.add_row(rows[0])
    assert log.last(rows[0]) == log[-1] and log[-1].seq == 2
