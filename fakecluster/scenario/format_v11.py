"""Version 1.1 expectation kinds and the ``sweep`` key, as pydantic models (scenario format 1.1).

Kept apart from :mod:`fakecluster.scenario.format` so the version-1 contract module stays readable; the
models follow the same rules there: unknown keys are errors, camelCase spelling, durations and milestones
parsed at load time so a typo is reported with its file, line and field path.

- ``gap: {from: M1, to: M2, min:, max:}``: both milestones happen, the second ``min``..``max`` after the
  first (virtual times only).
- ``stuck: {contains: [...]}`` (or ``stuck: true``): the run ended with a JobSet neither Completed nor
  Failed; every ``contains`` item is a substring of the runner's stuck diagnosis.
- ``distribution: {of:, mean:, sd:, min:, median:, max:, slow:, modes:, modeGap:, slowModeOffset:}``:
  figures over the runs of a ``sweep`` (see :mod:`fakecluster.scenario.sweep`).
- ``sweep: {seeds: N}``: the scenario is played for seeds ``seed .. seed + N - 1``.
"""

import math
from dataclasses import dataclass
from typing import Annotated, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, Strict, model_validator
from pydantic.alias_generators import to_camel

from fakecluster.scenario.durations import parse_duration
from fakecluster.scenario.errors import FieldProblem
from fakecluster.scenario.factories import empty_list
from fakecluster.scenario.milestones import Milestone, parse_milestone

__all__ = [
    "Bounds", "CountBounds", "Distribution", "Fraction", "Gap", "MinMax", "Slow", "Span", "Stuck", "Sweep",
]

DEFAULT_MODE_GAP = 5.0
"""Sorted run times further apart than this start a new mode (``modeGap`` overrides it)."""

MAX_SWEEP_SEEDS = 10_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


def unit_fraction(value: object) -> float:
    """A number within [0, 1]: a share of runs (``0.25``) or a rate (``cluster.faults.conflictRate``);
    anything else names the allowed range."""
    # NaN is a float's only (math.isnan of an int above a float's range raises OverflowError)
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and math.isnan(value)):
        raise ValueError(f"expected a number within [0, 1], got {value!r}")
    if not 0 <= value <= 1:
        raise ValueError(f"must be within [0, 1], got {value!r}")
    return float(value)


_Duration = Annotated[float, PlainValidator(parse_duration)]
_Milestone = Annotated[Milestone, PlainValidator(parse_milestone), PlainSerializer(str)]
_Fraction = Annotated[float, PlainValidator(unit_fraction)]
_Int = Annotated[int, Strict(), Field(ge=0)]


class Gap(_Model, defer_build=True):
    """``to`` happens at least ``min`` (default 0s) and at most ``max`` after ``from``."""

    from_: _Milestone = Field(alias="from")
    to: _Milestone
    min: _Duration = 0.0
    max: _Duration | None = None

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min < 0:
            raise FieldProblem("must be 0s or more", "min")
        if self.max is not None and self.max < self.min:
            raise FieldProblem("'max' is smaller than 'min': nothing can satisfy both", "max")
        return self


class Stuck(_Model):
    """The run ended stuck; ``contains`` are case-sensitive substrings of the diagnosis."""

    contains: list[str] = Field(default_factory=empty_list)


def _stuck(value: object) -> Stuck:
    """``stuck: true`` and ``stuck: {}`` both mean "stuck, whatever the diagnosis says"."""
    if value is True or value is None:
        return Stuck()
    if value is False:
        raise ValueError("'stuck: false' checks nothing; use 'happens: jobset Completed' instead")
    if isinstance(value, Stuck):
        return value
    if isinstance(value, dict):
        return Stuck.model_validate(value)
    raise ValueError(f"expected true or {{contains: [...]}}, got {value!r}")


StuckField = Annotated[Stuck, PlainValidator(_stuck)]


_Bound = TypeVar("_Bound", bound=float)


class MinMax(_Model, Generic[_Bound], defer_build=True):
    """``{min:, max:}``: at least one bound, and ``max`` not below ``min``."""

    min: _Bound | None = None
    max: _Bound | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> Self:
        if self.min is None and self.max is None:
            raise ValueError("give min, max or both")
        if self.min is not None and self.max is not None and self.max < self.min:
            raise FieldProblem("'max' is smaller than 'min': nothing can satisfy both", "max")
        return self


# Named classes, not bare ``MinMax[...]`` aliases: pydantic names a parametrized model after its
# arguments, and two Annotated floats print alike, so ``MinMax[_Duration]`` and ``MinMax[_Fraction]`` had
# one module-level name and pickle (a result sent back from a worker process) found the wrong class.


class Bounds(MinMax[_Duration], defer_build=True):
    """Bounds on a duration figure (seconds)."""


class Fraction(MinMax[_Fraction], defer_build=True):
    """Bounds on a share of runs, numbers within [0, 1]."""


class CountBounds(MinMax[_Int], defer_build=True):
    """Bounds on a count (the number of modes)."""


class Slow(_Model, defer_build=True):
    """The share of runs whose time is strictly above ``above``."""

    above: _Duration
    fraction: Fraction


@dataclass(frozen=True, slots=True)
class Span:
    """What a distribution measures: ``to``'s time, minus ``start``'s when given (else since run start)."""

    to: Milestone
    start: Milestone | None = None

    def __str__(self) -> str:
        return str(self.to) if self.start is None else f"from '{self.start}' to '{self.to}'"


class _SpanModel(_Model, defer_build=True):
    from_: _Milestone = Field(alias="from")
    to: _Milestone


def _span(value: object) -> Span:
    if isinstance(value, Span):
        return value
    if isinstance(value, str):
        return Span(parse_milestone(value))
    if isinstance(value, dict):
        model = _SpanModel.model_validate(value)
        return Span(model.to, model.from_)
    raise ValueError(f"expected a milestone or {{from: <milestone>, to: <milestone>}}, got {value!r}")


class Distribution(_Model, defer_build=True):
    """Bounds on the figures of one measured time over every run of a sweep."""

    of: Annotated[Span, PlainValidator(_span), PlainSerializer(str)]
    mean: Bounds | None = None
    sd: Bounds | None = None
    min: Bounds | None = None
    median: Bounds | None = None
    max: Bounds | None = None
    slow: Slow | None = None
    modes: CountBounds | None = None
    mode_gap: _Duration = DEFAULT_MODE_GAP
    slow_mode_offset: Bounds | None = None
    """The slowest mode's median minus the fastest mode's (0 with one mode): "the slow mode sits N s
    above the fast one", whatever the base time of the runs."""

    @model_validator(mode="after")
    def _positive_gap(self) -> Self:
        if self.mode_gap <= 0:
            raise FieldProblem("must be greater than 0s", "modeGap")
        return self

    def bounds(self) -> list[tuple[str, Bounds]]:
        """The duration figures bounded, in the order the report prints them."""
        named = (("mean", self.mean), ("sd", self.sd), ("min", self.min), ("median", self.median),
                 ("max", self.max))  # fmt: skip
        return [(name, b) for name, b in named if b is not None]


class Sweep(_Model, defer_build=True):
    """``seeds: N`` runs the scenario with seeds ``seed`` .. ``seed + N - 1``."""

    seeds: Annotated[int, Strict(), Field(ge=1, le=MAX_SWEEP_SEEDS)]


def sweep_seeds(base: int, sweep: Sweep | None) -> list[int]:
    """The seeds a scenario is played with, in order."""
    return [base] if sweep is None else [base + i for i in range(sweep.seeds)]
