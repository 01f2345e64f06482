"""Milestone grammar and evaluation over a trace: first/all, slots, replacements, attempts, ties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakecluster.scenario.milestones import (
    JOB_EVENTS,
    JOBSET_MILESTONE_EVENTS,
    POD_EVENTS,
    Milestone,
    PodRef,
    parse_milestone,
    parse_pod_ref,
)
from fakecluster.scenario.trace import TraceEvent, trace_digest
from fakecluster.workload_plugin import GroupShape

SHAPES = {"mpi": {"launcher": GroupShape(1, 1), "node": GroupShape(2, 2)}}
_seq = itertools.count()


def _event(kind: str, time: float, event: str, name: str, seq: int | None, **coords: object) -> TraceEvent:
    return TraceEvent(time=time, seq=next(_seq) if seq is None else seq, kind=kind, namespace="default",
                      name=name, event=event, **coords)  # type: ignore[arg-type]


def pod(
    time: float,
    event: str,
    *,
    rj: str = "node",
    ji: int = 0,
    pi: int = 0,
    attempt: int = 0,
    name: str = "",
    seq: int | None = None,
    jobset: str = "mpi",
) -> TraceEvent:
    return _event("Pod", time, event, name or f"{jobset}-{rj}-{ji}-{pi}-a{attempt}", seq, jobset=jobset,
                  replicated_job=rj, job_index=ji, pod_index=pi, attempt=attempt)


def job(
    time: float, event: str, *, rj: str = "node", ji: int = 0, attempt: int = 0, seq: int | None = None
) -> TraceEvent:
    return _event("Job", time, event, f"mpi-{rj}-{ji}", seq, jobset="mpi", replicated_job=rj, job_index=ji,
                  attempt=attempt)


def jobset(time: float, event: str, name: str = "mpi", attempt: int | None = None) -> TraceEvent:
    return TraceEvent(time, next(_seq), "JobSet", "default", name, event, jobset=name, attempt=attempt)


def all_node_pods(event: str, times: list[float], attempt: int = 0) -> list[TraceEvent]:
    """One event per node slot (2 jobs x 2 pods), in slot order, at the given times."""
    slots = [(0, 0), (0, 1), (1, 0), (1, 1)]
    return [pod(t, event, ji=ji, pi=pi, attempt=attempt) for t, (ji, pi) in zip(times, slots, strict=True)]


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("all node pods Ready", Milestone("", "Pod", "Ready", "all", None, "node")),
        ("first launcher pods Created", Milestone("", "Pod", "Created", "first", None, "launcher")),
        ("all workers jobs Complete", Milestone("", "Job", "Complete", "all", None, "workers")),
        ("first driver[0/0] pods Running", Milestone("", "Pod", "Running", "first", None, "driver", 0, 0)),
        ("all node[1] pods Ready", Milestone("", "Pod", "Ready", "all", None, "node", 1)),
        ("all mpi/node[1] jobs Ready", Milestone("", "Job", "Ready", "all", "mpi", "node", 1)),
        ("all node pods Ready attempt 2", Milestone("", "Pod", "Ready", "all", None, "node", attempt=2)),
        ("jobset Completed", Milestone("", "JobSet", "Completed")),
        (
            "jobset mpi StartupPolicyCompleted",
            Milestone("", "JobSet", "StartupPolicyCompleted", jobset="mpi"),
        ),
        ("jobset Restarted", Milestone("", "JobSet", "Restarted")),
        ("  all   node  pods   Ready ", Milestone("", "Pod", "Ready", "all", None, "node")),
    ],
)
def test_parse_valid_milestones(text: str, expected: Milestone) -> None:
    parsed = parse_milestone(text)
    assert parsed == expected
    assert str(parsed) == " ".join(text.split())


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty milestone"),
        ("some node pods Ready", "must start with 'first', 'all' or 'jobset'"),
        ("frist node pods Ready", "did you mean 'first'"),
        ("all node pods", "has 3 words"),
        ("all node pods Ready now", "has 5 words"),
        ("all node pods Readyy", "unknown pod event 'Readyy' (did you mean 'Ready'?)"),
        ("all node pods Complete", "unknown pod event 'Complete'"),
        ("all node jobs Running", "unknown job event 'Running'"),
        ("all node pod Ready", "expected 'pods' or 'jobs'"),
        ("all node[x] pods Ready", "cannot read 'node[x]'"),
        ("all node[0/1/2] pods Ready", "cannot read"),
        ("all node[0/1] jobs Ready", "jobs take [<jobIndex>]"),
        ("all node pods Ready attempt -1", "expected 'attempt <n>'"),
        ("all node pods Ready try 1", "expected 'attempt <n>'"),
        ("jobset", "expected 'jobset [<name>] <ConditionType>'"),
        ("jobset Done", "unknown JobSet condition 'Done'"),
        ("jobset mpi Complete", "did you mean 'Completed'"),
        ("jobset a b Completed", "expected 'jobset [<name>] <ConditionType>'"),
    ],
)
def test_parse_invalid_milestones(text: str, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_milestone(text)
    assert fragment in str(info.value)


def test_every_documented_event_parses() -> None:
    for event in POD_EVENTS:
        assert parse_milestone(f"first x pods {event}").event == event
    for event in JOB_EVENTS:
        assert parse_milestone(f"first x jobs {event}").event == event
    for event in JOBSET_MILESTONE_EVENTS:
        assert parse_milestone(f"jobset {event}").event == event


@given(
    st.sampled_from(["first", "all"]),
    st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True),
    st.one_of(st.none(), st.integers(0, 99)),
    st.sampled_from(POD_EVENTS),
    st.integers(0, 9),
)
def test_parse_round_trips_generated_pod_milestones(
    quantifier: str, rjob: str, job_index: int | None, event: str, attempt: int
) -> None:
    target = rjob if job_index is None else f"{rjob}[{job_index}]"
    text = f"{quantifier} {target} pods {event} attempt {attempt}"
    parsed = parse_milestone(text)
    assert (parsed.quantifier, parsed.replicated_job, parsed.job_index, parsed.event, parsed.attempt) == (
        quantifier,
        rjob,
        job_index,
        event,
        attempt,
    )


def test_pod_refs() -> None:
    assert parse_pod_ref("node[0/1]") == PodRef("node", 0, 1)
    assert parse_pod_ref("mpi/node[2/3]") == PodRef("node", 2, 3, jobset="mpi")
    assert str(PodRef("node", 2, 3, jobset="mpi")) == "mpi/node[2/3]"
    for bad in ("node", "node[0]", "node[a/b]", "/node[0/1]", 5):
        with pytest.raises(ValueError, match="pod reference"):
            parse_pod_ref(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- find


def test_first_is_the_earliest_matching_event() -> None:
    trace = [pod(1.0, "Created", rj="launcher"), *all_node_pods("Ready", [5.0, 3.0, 4.0, 6.0])]
    trace.sort(key=lambda e: e.time)
    hit = parse_milestone("first node pods Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 3.0
    assert parse_milestone("first launcher pods Ready").find(trace, SHAPES) is None


def test_all_is_the_moment_the_last_slot_arrives() -> None:
    trace = all_node_pods("Ready", [1.0, 2.0, 3.0, 9.0])
    hit = parse_milestone("all node pods Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 9.0
    hit = parse_milestone("all node[0] pods Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 2.0
    hit = parse_milestone("all node[1/0] pods Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 3.0


def test_all_never_happens_while_a_slot_is_missing() -> None:
    trace = all_node_pods("Ready", [1.0, 2.0, 3.0, 9.0])[:3]
    trace += [pod(4.0, "Ready", ji=0, pi=0, name="again")]  # the same slot twice does not fill another
    assert parse_milestone("all node pods Ready").find(trace, SHAPES) is None


def test_replacement_pod_counts_for_its_slot() -> None:
    trace = [
        pod(1.0, "Ready", ji=0, pi=0),
        pod(1.5, "Failed", ji=0, pi=1, name="first-try"),
        pod(2.0, "Ready", ji=1, pi=0),
        pod(2.5, "Ready", ji=1, pi=1),
        pod(7.0, "Ready", ji=0, pi=1, name="replacement"),
    ]
    hit = parse_milestone("all node pods Ready").find(trace, SHAPES)
    assert hit is not None and hit.name == "replacement" and hit.time == 7.0


def test_attempt_defaults_to_zero_and_filters() -> None:
    first_run = all_node_pods("Running", [1.0, 1.0, 1.0, 1.0])
    second_run = all_node_pods("Running", [20.0, 21.0, 22.0, 23.0], attempt=1)
    trace = first_run + second_run
    hit0 = parse_milestone("all node pods Running").find(trace, SHAPES)
    hit1 = parse_milestone("all node pods Running attempt 1").find(trace, SHAPES)
    assert hit0 is not None and hit0.time == 1.0
    assert hit1 is not None and hit1.time == 23.0
    assert parse_milestone("first node pods Running attempt 2").find(trace, SHAPES) is None
    assert parse_milestone("first node pods Running attempt 1").find(second_run, SHAPES) is not None
    assert parse_milestone("first node pods Running").find(second_run, SHAPES) is None


def test_all_jobs_uses_job_indexes_as_slots() -> None:
    trace = [job(1.0, "Ready", ji=1), job(1.0, "Ready", rj="launcher"), job(4.0, "Ready", ji=0)]
    hit = parse_milestone("all node jobs Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 4.0 and hit.job_index == 0
    assert parse_milestone("all node jobs Complete").find(trace, SHAPES) is None
    hit = parse_milestone("all node[1] jobs Ready").find(trace, SHAPES)
    assert hit is not None and hit.time == 1.0


def test_equal_times_are_ordered_by_seq_not_list_position() -> None:
    later = pod(5.0, "Ready", ji=0, pi=0, seq=10_001, name="later")
    earlier = pod(5.0, "Ready", ji=0, pi=1, seq=10_000, name="earlier")
    hit = parse_milestone("first node pods Ready").find([later, earlier], SHAPES)
    assert hit is not None and hit.name == "earlier"


def test_jobset_milestones() -> None:
    trace = [
        jobset(0.0, "Created"),
        jobset(0.0, "StartupPolicyInProgress"),
        jobset(3.0, "StartupPolicyCompleted"),
        jobset(9.0, "Restarted", attempt=1),
        jobset(12.0, "Completed", name="other"),
        jobset(15.0, "Completed"),
    ]
    assert (m := parse_milestone("jobset StartupPolicyCompleted").find(trace, SHAPES)) and m.time == 3.0
    assert (m := parse_milestone("jobset Restarted").find(trace, SHAPES)) and m.time == 9.0
    assert (m := parse_milestone("jobset mpi Completed").find(trace, SHAPES)) and m.time == 15.0
    assert (m := parse_milestone("jobset other Completed").find(trace, SHAPES)) and m.time == 12.0
    assert (m := parse_milestone("jobset Completed").find(trace, SHAPES)) and m.time == 12.0
    assert parse_milestone("jobset Failed").find(trace, SHAPES) is None


def test_jobset_prefix_restricts_to_that_jobset() -> None:
    shapes = {"a": {"node": GroupShape(1, 1)}, "b": {"node": GroupShape(1, 1)}}
    trace = [pod(1.0, "Ready", jobset="a"), pod(5.0, "Ready", jobset="b")]
    assert (m := parse_milestone("first b/node pods Ready").find(trace, shapes)) and m.time == 5.0
    assert (m := parse_milestone("all a/node pods Ready").find(trace, shapes)) and m.time == 1.0
    assert (m := parse_milestone("all node pods Ready").find(trace, shapes)) and m.time == 5.0


def test_all_with_an_unknown_replicated_job_is_an_error_not_a_silent_none() -> None:
    with pytest.raises(ValueError, match="no JobSet has a replicated job 'ghost'"):
        parse_milestone("all ghost pods Ready").find([], SHAPES)


def test_trace_digest_changes_with_any_field() -> None:
    base = [pod(1.0, "Ready", seq=1, name="p"), job(2.0, "Complete", seq=2)]
    same = [pod(1.0, "Ready", seq=1, name="p"), job(2.0, "Complete", seq=2)]
    assert trace_digest(base) == trace_digest(same)
    changed = [pod(1.0, "Ready", seq=1, name="p", attempt=1), job(2.0, "Complete", seq=2)]
    assert trace_digest(base) != trace_digest(changed)
    assert trace_digest(base) != trace_digest(base[::-1])
    assert base[0].key() == "1.000000 Pod default/p Ready js=mpi rj=node ji=0 pi=0 a=0"
    assert "\n" not in TraceEvent(0, 0, "Pod", "ns", "n", "Failed", detail="a\nb").key()
