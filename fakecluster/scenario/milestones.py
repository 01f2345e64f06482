"""Milestones (``all node pods Ready``, ``jobset Completed``) and pod references (``mpi/node[0/1]``).

A milestone names a *moment* of a run; expectations compare moments and ``when:`` actions fire at them.
They are parsed when the scenario is loaded, so a typo is reported with its file and line before anything
runs, and evaluated over the trace by :meth:`Milestone.find` (or, while the run records it, by a
:class:`MilestoneWatch`, which reads each event once). ``all`` needs the workload's shape (how many
Jobs and pods each replicated job has), which the runner derives from the manifests; it is passed in as a
plain mapping so this module stays independent of the JobSet types.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal

from fakecluster.scenario.trace import TraceEvent, TraceLog, in_trace_order

if TYPE_CHECKING:
    from fakecluster.workload_plugin import GroupShape

__all__ = [
    "JOBSET_CONDITIONS",
    "JOBSET_MILESTONE_EVENTS",
    "JOB_EVENTS",
    "POD_EVENTS",
    "JobRef",
    "Milestone",
    "MilestoneWatch",
    "PodRef",
    "Shapes",
    "parse_job_ref",
    "parse_milestone",
    "parse_pod_ref",
    "workload_shapes",
]

POD_EVENTS = ("Created", "Scheduled", "Running", "Ready", "Succeeded", "Failed", "Deleted",
              *("Listening", "Connected", "Working", "GaveUp", "Resolvable"))
"""Version 1's pod events, then format 1.1's program milestones (recorded by the network)."""
NETWORK_POD_EVENTS = ("Listening", "Connected", "Working", "GaveUp", "Resolvable")
JOB_EVENTS = ("Created", "Ready", "Complete", "Failed", "Suspended", "Resumed", "Deleted")
JOBSET_CONDITIONS = (
    "Completed",
    "Failed",
    "Suspended",
    "StartupPolicyInProgress",
    "StartupPolicyCompleted",
    "RestartingJobSet",
)
JOBSET_MILESTONE_EVENTS = (*JOBSET_CONDITIONS, "Restarted", "Finished")
"""``Finished``: the first of ``Completed`` and ``Failed`` (the JobSet reached a terminal state)."""

_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?"
_TARGET = re.compile(rf"(?:(?P<jobset>{_NAME})/)?(?P<rjob>{_NAME})(?:\[(?P<ji>\d+)(?:/(?P<pi>\d+))?\])?")
_JOB_REF = re.compile(rf"(?:(?P<jobset>{_NAME})/)?(?P<rjob>{_NAME})\[(?P<ji>\d+)\]")
_POD_REF = re.compile(rf"(?:(?P<jobset>{_NAME})/)?(?P<rjob>{_NAME})\[(?P<ji>\d+)/(?P<pi>\d+)\]")
_GRAMMAR = (
    "'<first|all> [<jobset>/]<replicatedJob>[<jobIndex>[/<podIndex>]] <pods|jobs> <Event> [attempt <n>]'"
    " or 'jobset [<name>] <ConditionType>'"
)


Shapes = Mapping[str, Mapping[str, "GroupShape"]]
"""JobSet name -> replicated job name -> shape."""


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close:
        close = [c for c in choices if c.lower() == word.lower()]
    return f" (did you mean '{close[0]}'?)" if close else ""


@dataclass(frozen=True, slots=True)
class Milestone:
    """One parsed milestone; ``kind`` is the trace kind its events have (Pod, Job or JobSet)."""

    text: str = field(compare=False)
    kind: Literal["Pod", "Job", "JobSet"]
    event: str
    quantifier: Literal["first", "all"] | None = None
    jobset: str | None = None
    replicated_job: str | None = None
    job_index: int | None = None
    pod_index: int | None = None
    attempt: int = 0
    fired_by: frozenset[str] = field(init=False, repr=False, compare=False)
    """The trace event names that can make it happen (its event; ``Finished``: also ``Completed`` and
    ``Failed``): the index :meth:`matches` and :class:`MilestoneWatch` look an event's name up in first,
    so that the events of every other name (nearly all of a run's) cost one set lookup each."""

    def __post_init__(self) -> None:
        finished = self.kind == "JobSet" and self.event == "Finished"
        names = (self.event, *_FINISHED_BY) if finished else (self.event,)
        object.__setattr__(self, "fired_by", frozenset(names))

    def __str__(self) -> str:
        return self.text

    def find(self, trace: Sequence[TraceEvent], shapes: Shapes) -> TraceEvent | None:
        """The trace event at which this milestone happens, or ``None`` if it never does.

        ``first``: the earliest matching event. ``all``: the event at which the last slot (every
        jobIndex, and for pods every completion index, narrowed by the indexes given) reaches the
        event; a replacement pod counts for its slot. A NonIndexed Job's pods have no slots of their
        own (their ``pod_index`` is an ordinal, :mod:`fakecluster.scenario.ordinals`): unless the
        milestone names one, its ``pods_per_job`` slots are filled by the first that many distinct pods
        to reach the event, whichever they are (``all w pods Succeeded``: as many pods succeeded as the
        Job needs). Events are taken in (time, seq) order.
        Raises ``ValueError`` if ``all`` names a replicated job that ``shapes`` does not know.
        """
        return MilestoneWatch(self).advance(in_trace_order(trace), shapes)

    def _non_indexed(self, shapes: Shapes) -> set[tuple[str | None, int | None]]:
        """(JobSet, job index) of NonIndexed Jobs whose pod slots any distinct pod fills."""
        if self.kind != "Pod" or self.pod_index is not None:
            return set()
        found: set[tuple[str | None, int | None]] = set()
        for js, rjobs in shapes.items():
            shape = rjobs.get(self.replicated_job or "")
            if shape is not None and not shape.indexed and self.jobset in (None, js):
                found.update((js, ji) for ji in range(shape.replicas))
        return found

    def matches(self, event: TraceEvent) -> bool:
        """Whether ``event`` is one this milestone counts: the only events at which it can happen, so
        whoever follows it (a ``when:`` action, ``run(milestone=...)``) need ask only after those."""
        # The name first: it rules out nearly every event of a run (:attr:`fired_by`).
        if event.event not in self.fired_by or event.kind != self.kind:
            return False
        if self.kind == "JobSet":
            return self.jobset is None or self.jobset in (event.name, event.jobset)
        return (
            (self.jobset is None or event.jobset == self.jobset)
            and event.replicated_job == self.replicated_job
            and (self.job_index is None or event.job_index == self.job_index)
            and (self.pod_index is None or event.pod_index == self.pod_index)
            and (event.attempt or 0) == self.attempt
        )

    def _slots(self, shapes: Shapes) -> set[tuple[str | None, int | None, int | None]]:
        owners = [js for js, rjobs in shapes.items() if self.replicated_job in rjobs]
        if self.jobset is not None:
            owners = [js for js in owners if js == self.jobset]
        if not owners:
            raise ValueError(
                f"milestone '{self.text}': no JobSet has a replicated job '{self.replicated_job}'"
            )
        slots: set[tuple[str | None, int | None, int | None]] = set()
        for js in owners:
            shape = shapes[js][self.replicated_job or ""]
            job_indexes = [self.job_index] if self.job_index is not None else range(shape.replicas)
            for ji in job_indexes:
                if self.kind == "Job":
                    slots.add((js, ji, None))
                    continue
                pod_indexes = [self.pod_index] if self.pod_index is not None else range(shape.pods_per_job)
                slots.update((js, ji, pi) for pi in pod_indexes)
        return slots


class MilestoneWatch:
    """One milestone followed through a trace as the run records it: :meth:`advance` answers what
    :meth:`Milestone.find` answers over the trace so far, reading only the events recorded since the last
    call. ``when:`` actions and ``run(milestone=...)`` ask after every event it counts
    (:meth:`Milestone.matches`);
    with ``find``, which reads the whole trace each time, that made a run quadratic in its pods (one
    ``when: all workers pods Running`` at 8,000 pods: 3.5 s became 93 s).

    ``find`` itself is a fresh watch over the ordered trace, so the two cannot disagree. The trace must
    be in (time, seq) order, as the recorder's is by construction (``find`` sorts one that is not); the
    watch starts over (re-reads the trace) when handed another trace list, a shorter one, or other
    shapes (a session that applies a JobSet mid-run), and leaves to ``find`` a trace whose new events
    start before the last one read."""

    __slots__ = ("_done", "_filled", "_hit", "_interchangeable", "_last", "_read", "_remaining",
                 "_shapes_key", "_trace", "milestone")

    def __init__(self, milestone: Milestone) -> None:
        self.milestone = milestone
        self._trace: Sequence[TraceEvent] | None = None
        self._shapes_key: tuple[Any, ...] | None = None
        self._read = 0
        self._last: TraceEvent | None = None
        self._hit: TraceEvent | None = None
        self._done = False
        """It has happened, or no event can make it happen (``all`` over no slots)."""
        self._remaining: set[tuple[str | None, int | None, int | None]] | None = None
        """The ``all`` slots still to reach the event; None for ``first`` and JobSet milestones."""
        self._interchangeable: set[tuple[str | None, int | None]] = set()
        self._filled: dict[tuple[str | None, int | None], set[int | None]] = {}

    def advance(self, trace: Sequence[TraceEvent], shapes: Shapes) -> TraceEvent | None:
        """The event of ``trace`` at which the milestone happens, or None (yet). Raises ``ValueError``, as
        ``find`` does, if ``all`` names a replicated job that ``shapes`` does not know."""
        key = tuple((name, tuple(groups.items())) for name, groups in shapes.items())
        if trace is not self._trace or key != self._shapes_key or len(trace) < self._read:
            self._start(trace, shapes, key)
        if self._done or self._read == len(trace):
            return self._hit
        first, last = trace[self._read], self._last
        if last is not None and (first.time, first.seq) < (last.time, last.seq):
            return self.milestone.find(trace, shapes)
        start, self._read, self._last = self._read, len(trace), trace[-1]
        matches = self.milestone.matches
        if self._remaining is None:  # first, or a JobSet milestone: the first match
            hit = next((e for e in self._named(trace, start) if matches(e)), None)
            self._hit, self._done = hit, hit is not None
            return hit
        remaining, interchangeable, filled = self._remaining, self._interchangeable, self._filled
        kind_is_pod = self.milestone.kind == "Pod"
        for event in [e for e in self._named(trace, start) if matches(e)]:
            slot = (event.jobset, event.job_index, event.pod_index if kind_is_pod else None)
            if slot[:2] in interchangeable:
                pods = filled.setdefault(slot[:2], set())
                if slot[2] in pods:
                    continue
                slot = (slot[0], slot[1], len(pods))
                pods.add(event.pod_index)
            remaining.discard(slot)
            if not remaining:
                self._hit, self._done = event, True
                return event
        return None

    def _named(self, trace: Sequence[TraceEvent], start: int) -> Iterable[TraceEvent]:
        """The events of ``trace`` from ``start`` on whose name can make the milestone happen
        (:attr:`Milestone.fired_by`), in trace order: picked by name at C speed (a recorded log, by its
        rows, before any event is built), so :meth:`Milestone.matches` runs for a few events, not for
        every one (a 2,000-pod run records some 20,000; a milestone counts a few thousand at most)."""
        names = self.milestone.fired_by
        if isinstance(trace, TraceLog):
            return trace.named(start, names)
        # Read twice below (names, then events): a list as it is, any other sequence sliced (once).
        new = trace if start == 0 and isinstance(trace, list) else trace[start:]
        return compress(new, map(names.__contains__, map(_EVENT_NAME, new)))

    def _start(self, trace: Sequence[TraceEvent], shapes: Shapes, key: tuple[Any, ...]) -> None:
        milestone = self.milestone
        if milestone.kind == "JobSet" or milestone.quantifier == "first":
            remaining: set[tuple[str | None, int | None, int | None]] | None = None
            interchangeable: set[tuple[str | None, int | None]] = set()
        else:  # before anything is kept: if this raises, the next call starts over and raises again
            remaining = milestone._slots(shapes)
            interchangeable = milestone._non_indexed(shapes)
        self._remaining, self._interchangeable, self._filled = remaining, interchangeable, {}
        self._done = remaining is not None and not remaining
        self._trace, self._shapes_key = trace, key
        self._read, self._last, self._hit = 0, None, None


_FINISHED_BY = ("Completed", "Failed")
"""The JobSet conditions whose first one is ``Finished``."""
_EVENT_NAME = attrgetter("event")


def parse_milestone(text: str) -> Milestone:
    """Parse a milestone phrase; ``ValueError`` names the word that does not fit the grammar."""
    if not isinstance(text, str):
        raise ValueError(
            f"expected a milestone phrase (a string) such as 'all node pods Ready', got {text!r}"
        )
    words = text.split()
    canonical = " ".join(words)
    if not words:
        raise ValueError(f"empty milestone; expected {_GRAMMAR}")
    if words[0] == "jobset":
        return _parse_jobset_milestone(canonical, words[1:])
    if words[0] not in ("first", "all"):
        hint = _suggest(words[0], ("first", "all", "jobset"))
        raise ValueError(
            f"milestone '{canonical}' must start with 'first', 'all' or 'jobset', not '{words[0]}'{hint}"
        )
    return _parse_object_milestone(canonical, words)


def _parse_jobset_milestone(text: str, rest: list[str]) -> Milestone:
    if not rest or len(rest) > 2:
        raise ValueError(f"milestone '{text}': expected 'jobset [<name>] <ConditionType>'")
    event = rest[-1]
    if event not in JOBSET_MILESTONE_EVENTS:
        raise ValueError(
            f"milestone '{text}': unknown JobSet condition '{event}'"
            f"{_suggest(event, JOBSET_MILESTONE_EVENTS)};"
            f" expected one of {', '.join(JOBSET_MILESTONE_EVENTS)}"
        )
    return Milestone(text=text, kind="JobSet", event=event, jobset=rest[0] if len(rest) == 2 else None)


def _parse_object_milestone(text: str, words: list[str]) -> Milestone:
    if len(words) not in (4, 6):
        raise ValueError(f"milestone '{text}' has {len(words)} words; expected {_GRAMMAR}")
    quantifier, target, noun, event = words[:4]
    match = _TARGET.fullmatch(target)
    if match is None:
        raise ValueError(
            f"milestone '{text}': cannot read '{target}'"
            " as [<jobset>/]<replicatedJob>[<jobIndex>[/<podIndex>]]"
        )
    if noun not in ("pods", "jobs"):
        raise ValueError(
            f"milestone '{text}': expected 'pods' or 'jobs' after '{target}', not '{noun}'"
            f"{_suggest(noun, ('pods', 'jobs'))}"
        )
    kind: Literal["Pod", "Job"] = "Pod" if noun == "pods" else "Job"
    allowed = POD_EVENTS if kind == "Pod" else JOB_EVENTS
    if event not in allowed:
        raise ValueError(
            f"milestone '{text}': unknown {kind.lower()} event '{event}'{_suggest(event, allowed)};"
            f" expected one of {', '.join(allowed)}"
        )
    if kind == "Job" and match.group("pi") is not None:
        raise ValueError(f"milestone '{text}': jobs take [<jobIndex>], not [<jobIndex>/<podIndex>]")
    attempt = 0
    if len(words) == 6:
        if words[4] != "attempt" or not words[5].isdigit():
            raise ValueError(
                f"milestone '{text}': expected 'attempt <n>' at the end, got '{words[4]} {words[5]}'"
            )
        attempt = int(words[5])
    return Milestone(
        text=text,
        kind=kind,
        event=event,
        quantifier="first" if quantifier == "first" else "all",
        jobset=match.group("jobset"),
        replicated_job=match.group("rjob"),
        job_index=_int_or_none(match.group("ji")),
        pod_index=_int_or_none(match.group("pi")),
        attempt=attempt,
    )


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text is not None else None


@dataclass(frozen=True, slots=True)
class PodRef:
    """``[<jobset>/]<replicatedJob>[<jobIndex>/<podIndex>]``: the current attempt's pod in that slot."""

    replicated_job: str
    job_index: int
    pod_index: int
    jobset: str | None = None

    def __str__(self) -> str:
        prefix = f"{self.jobset}/" if self.jobset else ""
        return f"{prefix}{self.replicated_job}[{self.job_index}/{self.pod_index}]"


def parse_pod_ref(text: str) -> PodRef:
    """Parse a pod reference such as ``node[0/1]`` or ``mpi/node[0/1]``."""
    if not isinstance(text, str):
        raise ValueError(f"expected a pod reference such as 'node[0/1]', got {text!r}")
    match = _POD_REF.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"cannot read {text!r} as a pod reference; expected '<replicatedJob>[<jobIndex>/<podIndex>]'"
            " such as 'node[0/1]', with several JobSets 'mpi/node[0/1]'"
        )
    return PodRef(
        replicated_job=match.group("rjob"),
        job_index=int(match.group("ji")),
        pod_index=int(match.group("pi")),
        jobset=match.group("jobset"),
    )


@dataclass(frozen=True, slots=True)
class JobRef:
    """``[<jobset>/]<replicatedJob>[<jobIndex>]``: the Job of that slot (every attempt shares its name)."""

    replicated_job: str
    job_index: int
    jobset: str | None = None

    def __str__(self) -> str:
        prefix = f"{self.jobset}/" if self.jobset else ""
        return f"{prefix}{self.replicated_job}[{self.job_index}]"


def parse_job_ref(text: str) -> JobRef:
    """Parse a job reference such as ``workers[0]`` or ``mpi/workers[0]``."""
    match = _JOB_REF.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(
            f"cannot read {text!r} as a job reference; expected '<replicatedJob>[<jobIndex>]' such as"
            " 'workers[0]', with several JobSets 'mpi/workers[0]' (or give the Job's name)"
        )
    return JobRef(replicated_job=match.group("rjob"), job_index=int(match.group("ji")),
                  jobset=match.group("jobset"))


def workload_shapes(manifests: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, GroupShape]]:
    """Shapes of JobSet manifests as written (before defaulting): replicas default 1; pods per Job are
    ``completions``, else ``parallelism``, else 1, as the Job API defaults them for Indexed Jobs.

    Malformed parts are skipped: the JobSet webhook, not this helper, reports invalid manifests.
    """
    shapes: dict[str, dict[str, GroupShape]] = {}
    for manifest in manifests:
        metadata = manifest.get("metadata")
        spec = manifest.get("spec")
        if not isinstance(metadata, Mapping) or not isinstance(spec, Mapping):
            continue
        name = metadata.get("name")
        rjobs = spec.get("replicatedJobs")
        if not isinstance(name, str) or not isinstance(rjobs, list):
            continue
        shapes[name] = {}
        for rjob in rjobs:
            if isinstance(rjob, Mapping) and isinstance(rjob.get("name"), str):
                shapes[name][rjob["name"]] = _rjob_shape(rjob)
    return shapes


def _rjob_shape(rjob: Mapping[str, Any]) -> GroupShape:
    from fakecluster.workload_plugin import GroupShape  # with the cluster: reading a file needs neither

    replicas = rjob.get("replicas", 1)
    template = rjob.get("template")
    job_spec = template.get("spec") if isinstance(template, Mapping) else None
    pods = 1
    indexed = not (isinstance(job_spec, Mapping) and job_spec.get("completionMode") == "NonIndexed")
    if isinstance(job_spec, Mapping):
        for key in ("completions", "parallelism"):
            value = job_spec.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                pods = value
                break
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        replicas = 1
    return GroupShape(replicas=replicas, pods_per_job=pods, indexed=indexed)
