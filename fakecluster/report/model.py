"""The timeline a report draws, as plain data: lanes, rows and phase segments built from the trace.

Folding follows how a person debugging startup order reads a JobSet: one lane per replicated job, one
row per Job (per restart attempt: a JobSet restart recreates its Jobs with ``jobset.sigs.k8s.io/restart-
attempt`` raised, so each attempt gets its own rows), and under each Job one row per pod. A pod's phases
are derived from its trace edges (``Created``, ``Scheduled``, ``Running``, ``Ready``, ``Succeeded``,
``Failed``, ``Deleted``) plus the report-only edges of :mod:`fakecluster.report.lifecycle` (admission
opens ``ContainerCreating``; ``deletionTimestamp`` opens termination). Events the renderer does not know
that name a pod (a ``network`` program's ``Listening``/``Connecting``/``Connected``/``Working`` and its
connection attempts) become a program band and ticks under that pod, so new event kinds show without
renderer changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fakecluster.report.lifecycle import ADMITTED, CONTAINER_RESTARTED, TERMINATING
from fakecluster.scenario.trace import TraceEvent, in_trace_order

__all__ = [
    "PHASES",
    "PROGRAM_STATES",
    "JobRow",
    "Lane",
    "Marker",
    "PodRow",
    "Segment",
    "Tick",
    "Timeline",
    "build_timeline",
]

PHASES = ("pending", "creating", "running", "ready", "terminating", "succeeded", "failed")
"""Pod phase bands, in lifecycle order: Pending (scheduling), ContainerCreating (pulling), Running not
Ready, Ready, terminating (deletionTimestamp set), Succeeded, Failed."""
JOB_STATES = ("active", "ready", "suspended", "complete", "failed")
PROGRAM_STATES = {"Listening": "listening", "Connecting": "connecting", "Connected": "connected",
                  "Working": "working", "GaveUp": "gaveup"}
"""Pod events that open a program state (scenario format 1.1 milestones ``Listening``, ``Connected``,
``Working``, ``GaveUp``; ``Connecting`` if a trace records it); other pod events (``Resolvable``, connection
attempts) become ticks. A ``Connected`` with no program state before it opens ``connecting`` from the
moment the container started, since that is when the program began to connect."""

_POD_EDGES = {
    "Created": "pending",
    "Scheduled": "pending",
    ADMITTED: "creating",
    "Running": "running",
    "Ready": "ready",
    TERMINATING: "terminating",
    "Succeeded": "succeeded",
    "Failed": "failed",
}
_TERMINAL = ("succeeded", "failed")
_JOB_EDGES = {"Created": "active", "Ready": "ready", "Suspended": "suspended", "Resumed": "active",
              "Complete": "complete", "Failed": "failed"}
_KNOWN_POD_EVENTS = {*_POD_EDGES, "Deleted", CONTAINER_RESTARTED}


@dataclass(slots=True)
class Segment:
    start: float
    end: float
    state: str


@dataclass(slots=True)
class Tick:
    """A point event drawn on a row: a connection attempt, a container restart, an unknown event."""

    time: float
    event: str
    detail: str


@dataclass(slots=True)
class PodRow:
    name: str
    pod_index: int | None
    segments: list[Segment] = field(default_factory=list)
    program: list[Segment] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    node: str = ""


@dataclass(slots=True)
class JobRow:
    name: str
    job_index: int | None
    attempt: int
    segments: list[Segment] = field(default_factory=list)
    pods: list[PodRow] = field(default_factory=list)


@dataclass(slots=True)
class Lane:
    """One replicated job of one JobSet."""

    jobset: str
    replicated_job: str
    jobs: list[JobRow] = field(default_factory=list)

    @property
    def pod_count(self) -> int:
        return sum(len(j.pods) for j in self.jobs)


@dataclass(slots=True)
class Marker:
    """A vertical line across every lane: a JobSet condition, a restart, an action, a milestone."""

    time: float
    label: str
    category: str  # "condition", "action", "milestone"
    detail: str = ""


@dataclass(slots=True)
class Timeline:
    end: float
    lanes: list[Lane]
    markers: list[Marker] = field(default_factory=list)
    other: list[TraceEvent] = field(default_factory=list)


class _Track:
    """Turns one object's edges into segments: each edge closes the open segment and opens the next."""

    __slots__ = ("open", "segments")

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.open: Segment | None = None

    def enter(self, time: float, state: str) -> None:
        if self.open is not None:
            if self.open.state == state:
                return
            self.open.end = time
            if self.open.end > self.open.start or not self.segments:
                self.segments.append(self.open)
        self.open = Segment(time, time, state)

    def close(self, time: float) -> None:
        if self.open is not None:
            self.open.end = time
            self.segments.append(self.open)
            self.open = None


def build_timeline(trace: Iterable[TraceEvent], lifecycle: Iterable[TraceEvent] = (), *,
                   end: float, workload_kind: str = "JobSet") -> Timeline:
    """Lanes in first-seen order of replicated jobs; Jobs by (attempt, index); pods by index, then age."""
    events = in_trace_order(trace)
    merged = _merge(events, list(lifecycle))
    lanes: dict[tuple[str, str], Lane] = {}
    jobs: dict[str, tuple[JobRow, _Track]] = {}
    pods: dict[str, tuple[PodRow, _Track, _Track]] = {}
    markers: list[Marker] = []
    other: list[TraceEvent] = []
    for e in merged:
        if e.kind == workload_kind:
            markers.append(Marker(e.time, f"{e.name} {e.event}", "condition", e.detail))
            continue
        if e.replicated_job is None:
            other.append(e)
            continue
        lane = lanes.get((e.jobset or "", e.replicated_job))
        if lane is None:
            lane = lanes[(e.jobset or "", e.replicated_job)] = Lane(e.jobset or "", e.replicated_job)
        if e.kind == "Job":
            _job_edge(lane, jobs, e)
        elif e.kind == "Pod" and e.event in _KNOWN_POD_EVENTS:
            _pod_edge(lane, jobs, pods, e)
        else:
            _program_edge(lane, jobs, pods, e)
    for row, track in jobs.values():
        track.close(end)
        row.segments = track.segments
    for pod, track, program in pods.values():
        track.close(end)
        program.close(end)
        pod.segments, pod.program = track.segments, program.segments
    for lane in lanes.values():
        lane.jobs.sort(key=lambda j: (j.attempt, j.job_index if j.job_index is not None else -1, j.name))
        for job in lane.jobs:
            job.pods.sort(key=lambda p: (p.pod_index if p.pod_index is not None else -1,
                                         p.segments[0].start if p.segments else 0.0, p.name))
    return Timeline(end, list(lanes.values()), markers, other)


def _merge(trace: Sequence[TraceEvent], extra: list[TraceEvent]) -> list[TraceEvent]:
    """Trace events and report-only edges in time order; at equal times the trace's edge goes first."""
    if not extra:
        return list(trace)
    keyed = [(e.time, 0, i, e) for i, e in enumerate(trace)]
    keyed.extend((e.time, 1, i, e) for i, e in enumerate(extra))
    keyed.sort(key=lambda k: (k[0], k[1], k[2]))
    return [k[3] for k in keyed]


def _job_for(lane: Lane, jobs: dict[str, tuple[JobRow, _Track]], name: str, e: TraceEvent) -> JobRow:
    entry = jobs.get(name)
    if entry is None:
        row = JobRow(name, e.job_index, e.attempt or 0)
        lane.jobs.append(row)
        entry = jobs[name] = (row, _Track())
    return entry[0]


def _job_name_of_pod(e: TraceEvent) -> str:
    """Pods of a Job are grouped under a synthetic key when the Job's own events are not in the trace."""
    return f"{e.jobset}/{e.replicated_job}/{e.job_index}/{e.attempt or 0}"


def _job_edge(lane: Lane, jobs: dict[str, tuple[JobRow, _Track]], e: TraceEvent) -> None:
    key = _job_name_of_pod(e)
    row = _job_for(lane, jobs, key, e)
    row.name = e.name
    track = jobs[key][1]
    if e.event == "Deleted":
        track.close(e.time)
    elif e.event in _JOB_EDGES:
        track.enter(e.time, _JOB_EDGES[e.event])


def _pod_for(lane: Lane, jobs: dict[str, tuple[JobRow, _Track]],
             pods: dict[str, tuple[PodRow, _Track, _Track]], e: TraceEvent) -> tuple[PodRow, _Track, _Track]:
    entry = pods.get(e.name)
    if entry is None:
        job = _job_for(lane, jobs, _job_name_of_pod(e), e)
        row = PodRow(e.name, e.pod_index)
        job.pods.append(row)
        entry = pods[e.name] = (row, _Track(), _Track())
    return entry


def _pod_edge(lane: Lane, jobs: dict[str, tuple[JobRow, _Track]],
              pods: dict[str, tuple[PodRow, _Track, _Track]], e: TraceEvent) -> None:
    row, track, program = _pod_for(lane, jobs, pods, e)
    if e.event == "Deleted":
        track.close(e.time)
        program.close(e.time)
        return
    if e.event == CONTAINER_RESTARTED:
        row.ticks.append(Tick(e.time, e.event, e.detail))
        return
    if e.event == "Scheduled":
        row.node = e.detail
    state = _POD_EDGES[e.event]
    current = track.open.state if track.open is not None else None
    if current in _TERMINAL and state == "terminating":
        return  # deleting a finished pod: it stays Succeeded/Failed until it is gone
    track.enter(e.time, state)
    if state in _TERMINAL:
        program.close(e.time)


def _program_edge(lane: Lane, jobs: dict[str, tuple[JobRow, _Track]],
                  pods: dict[str, tuple[PodRow, _Track, _Track]], e: TraceEvent) -> None:
    if e.pod_index is None and e.kind != "Pod":
        return
    row, track, program = _pod_for(lane, jobs, pods, e)
    state = PROGRAM_STATES.get(e.event)
    if state == "connected" and program.open is None and not program.segments:
        started = next((s.start for s in [*track.segments, *([track.open] if track.open else [])]
                        if s.state in ("running", "ready")), None)
        if started is not None and started < e.time:
            program.enter(started, "connecting")
    if state is not None:
        program.enter(e.time, state)
    else:
        row.ticks.append(Tick(e.time, e.event, e.detail))
