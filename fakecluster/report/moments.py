"""The moments a scenario's expectations and actions refer to, found in a finished run's trace.

A report highlights every milestone named in ``expect:`` (and in actions' ``when:``) and links each
failed expectation to the moment it is about, so this module answers "when did that happen" with the
same :meth:`Milestone.find` the checks use; a milestone that never happened has no time and is listed
as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakecluster.scenario.format import Expectation, Scenario
from fakecluster.scenario.milestones import Milestone, Shapes
from fakecluster.scenario.trace import TraceEvent

__all__ = ["Moment", "action_moments", "expectation_moments"]


@dataclass(frozen=True, slots=True)
class Moment:
    """A named point in virtual time (``None``: the milestone never happened)."""

    label: str
    time: float | None
    kind: str = "milestone"  # "milestone", "deadline", "check"


def _find(milestone: Milestone, trace: Sequence[TraceEvent], shapes: Shapes) -> float | None:
    try:
        hit = milestone.find(trace, shapes)
    except ValueError:
        return None
    return hit.time if hit is not None else None


def _of(exp: Expectation, trace: Sequence[TraceEvent], shapes: Shapes, end: float) -> list[Moment]:
    if exp.order is not None:
        return [Moment(str(m), _find(m, trace, shapes)) for m in exp.order]
    if exp.happens is not None:
        moments = [Moment(str(exp.happens), _find(exp.happens, trace, shapes))]
        if exp.after is not None:
            moments.append(Moment(f"not before {exp.after:g}s", exp.after, "deadline"))
        if exp.by is not None:
            moments.append(Moment(f"by {exp.by:g}s", exp.by, "deadline"))
        return moments
    if exp.never is not None:
        return [Moment(str(exp.never), _find(exp.never, trace, shapes))]
    gap = getattr(exp, "gap", None)
    if gap is not None:
        return [Moment(str(m), _find(m, trace, shapes)) for m in (gap.from_, gap.to)]
    distribution = getattr(exp, "distribution", None)
    if distribution is not None:
        span = distribution.of
        ends = [span.to] if span.start is None else [span.start, span.to]
        return [Moment(str(m), _find(m, trace, shapes)) for m in ends]
    if exp.at is not None:
        return [Moment(f"state at {exp.at:g}s", exp.at, "check")]
    if exp.final is not None:
        return [Moment("final state", end, "check")]
    return []


def expectation_moments(scenario: Scenario, trace: Sequence[TraceEvent], shapes: Shapes,
                        end: float) -> list[list[Moment]]:
    """Per ``expect`` entry (same index), the moments it names."""
    return [_of(exp, trace, shapes, end) for exp in scenario.expect]


def action_moments(scenario: Scenario, trace: Sequence[TraceEvent], shapes: Shapes) -> list[Moment]:
    """When each action fired: its ``at``, or its ``when`` milestone plus ``after`` (as the runner does)."""
    moments = []
    for index, action in enumerate(scenario.actions):
        label = f"actions[{index}] {action.verb}"
        if action.at is not None:
            moments.append(Moment(label, action.at, "action"))
        elif action.when is not None:
            hit = _find(action.when, trace, shapes)
            moments.append(Moment(f"{label} (when {action.when})",
                                  None if hit is None else hit + (action.after or 0.0), "action"))
    return moments
