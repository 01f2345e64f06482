"""Whether a finished run ended *stuck*, and each run's measured times for ``distribution``.

Scenario format 1.1: a run is stuck when it ended with a JobSet neither Completed nor Failed, either
because nothing was left to happen (the clock's queue is empty), or at ``until`` with only unbounded
waiting left (retry loops, probe ticks, cache expiries). The second needs a look past ``until``: after
the run's trace, snapshot and digest are taken, the probe keeps the same cluster going for up to
:data:`LOOKAHEAD` more virtual seconds (at most :data:`LOOKAHEAD_EVENTS` clock events). If in that time
no milestone-worthy change of a pod, a Job or the JobSet happens (created, scheduled, running, Ready,
finished, deleted, a JobSet condition; EndpointSlice rewrites and connect attempts are not progress),
what was pending was only waiting, and the run is stuck; a pod that would have exited five minutes
after ``until`` makes it merely slow. Nothing from the look-ahead reaches the outcome but
that verdict: the trace, the snapshots and the digest were taken before it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster
from fakecluster.scenario import milestones
from fakecluster.scenario.diagnosis import ProgramState, describe_pending, describe_program, diagnose
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.milestones import Shapes
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.trace import Snapshot, TraceEvent
from fakecluster.workload_plugin import WorkloadPlugin

__all__ = ["LOOKAHEAD", "LOOKAHEAD_EVENTS", "PENDING_SHOWN", "StuckProbe", "measure_distributions"]

LOOKAHEAD = 3600.0
"""How far past ``until`` the probe looks for progress (virtual seconds)."""
LOOKAHEAD_EVENTS = 50_000
"""At most this many clock events in the look-ahead: a retry loop every 100 ms cannot make it slow."""
PENDING_SHOWN = 5
_STEP = 1.0
"""Virtual seconds per look-ahead step: the event budget is checked between steps."""


def _progress_events() -> frozenset[str]:
    """Trace events that are progress: every milestone event (read at call time, so milestones another
    component adds count too)."""
    return frozenset((*milestones.POD_EVENTS, *milestones.JOB_EVENTS, *milestones.JOBSET_MILESTONE_EVENTS))


class StuckProbe:
    """Judges one finished run; :meth:`judge` may advance the cluster past the end of the run."""

    def __init__(
        self,
        cluster: Cluster,
        recorder: TraceRecorder,
        plugin: WorkloadPlugin,
        shapes: Shapes,
        rule_note: ProgramState | None = None,
    ) -> None:
        self.cluster = cluster
        self.recorder = recorder
        self.plugin = plugin
        self.shapes = shapes
        self.rule_note = rule_note
        """Pod -> what the scenario's ``pods`` rules fix for it (``ready never``), if anything."""

    def judge(self, final: Snapshot, *, stopped_by_until: bool) -> tuple[bool, str]:
        """(stuck, diagnosis); the diagnosis is empty when the run is not stuck."""
        unfinished = [w for w in final.of_kind(self.plugin.kind) if not self.plugin.finished(w)]
        if not unfinished:
            return False, ""
        clock = self.cluster.clock
        pending = describe_pending(clock.upcoming(PENDING_SHOWN))
        # Read the programs now, like ``final`` and ``pending``: the look-ahead below plays on.
        program_state = self._program_state()
        ended = f"run ended at {format_seconds(clock.now)}"
        if stopped_by_until:
            if self._progress_after_until():
                return False, ""
            ended += ", at 'until', with only unbounded waiting left"
        else:
            ended += ", nothing left to happen"
        text = diagnose(
            final, self.plugin, self.shapes, ended=ended, pending=pending, program_state=program_state
        )
        return True, text

    def _program_state(self) -> ProgramState | None:
        """The pod rules' note and the network component's per-pod program description (when the
        cluster has one), joined; the programs as they are at the time of the call."""
        states = getattr(getattr(self.cluster, "network", None), "program_states", None)
        program: ProgramState | None = None
        if callable(states):
            # One pass over the network's read-only view (admission order, so the newest pod of a name
            # wins, as ``Network.program_state`` answers), not one scan of every pod per pod described.
            by_pod = {(s.namespace, s.pod): s for s in states()}

            def program(pod: Obj) -> str | None:
                meta = pod["metadata"]
                return describe_program(by_pod.get((meta.get("namespace", "default"), meta["name"])))

        sources = [f for f in (self.rule_note, program) if f is not None]
        if not sources:
            return None

        def state(pod: Obj) -> str | None:
            notes = [note for f in sources if (note := f(pod))]
            return "; ".join(notes) or None

        return state

    def _progress_after_until(self) -> bool:
        clock = self.cluster.clock
        trace = self.recorder.trace
        seen = len(trace)
        first_event = clock.events_run
        progress = _progress_events()
        kinds = ("Pod", "Job", self.plugin.kind)  # not EndpointSlice writes or connect attempts
        horizon = clock.now + LOOKAHEAD
        t = clock.now
        while t < horizon and clock.events_run - first_event < LOOKAHEAD_EVENTS:
            t = min(t + _STEP, horizon)
            more = self.cluster.run(t)
            if any(e.event in progress and e.kind in kinds for e in trace[seen:]):
                return True
            seen = len(trace)
            if not more:
                return False
        return False


def measure_distributions(
    scenario: Scenario, trace: Sequence[TraceEvent], shapes: Shapes
) -> dict[int, float | None]:
    """Per ``distribution`` expectation: this run's measured time (``to`` minus ``from``, or since the run
    started), or None when a milestone never happened."""
    values: dict[int, float | None] = {}
    for index, exp in enumerate(scenario.expect):
        if exp.distribution is None:
            continue
        span = exp.distribution.of
        end = span.to.find(trace, shapes)
        start = span.start.find(trace, shapes) if span.start is not None else None
        if end is None or (span.start is not None and start is None):
            values[index] = None
        else:
            values[index] = end.time - (start.time if start is not None else 0.0)
    return values
