"""What a run leaves for its expectations (:class:`RunResult`) and what a broken one reports
(:class:`Failure`): the types the checks (:mod:`.expectations`, :mod:`.expectations_v11`) and the failure
timeline (:mod:`.timeline`) share, in a module of their own so none of them imports another to name them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.trace import Snapshot, TraceEvent
from fakecluster.workload_plugin import WorkloadPlugin

__all__ = ["Failure", "RunResult"]


@dataclass(slots=True)
class RunResult:
    """Everything a run leaves behind that expectations may look at."""

    trace: Sequence[TraceEvent]
    """The run's events in trace order: the recorder's compact log (:class:`~fakecluster.scenario.trace.
    TraceLog`) during the checks of a run, or a list."""
    final: Snapshot
    snapshots: dict[float, Snapshot]
    events: list[dict[str, Any]]
    rejection: str | None
    virtual_end: float
    seed: int
    stuck: bool = False
    """The run ended with a JobSet neither Completed nor Failed and nothing but unbounded waiting left."""
    diagnosis: str = ""
    """What each unfinished replicated job waits for (:mod:`fakecluster.scenario.diagnosis`)."""
    plugin: WorkloadPlugin | None = None
    """Resolves pod references of object assertions (slots and the current attempt)."""
    job_events: list[dict[str, Any]] = field(default_factory=list)
    pod_events: list[dict[str, Any]] = field(default_factory=list)
    """Events regarding Pods (kubelet, scheduler), recorded when the run asked for them."""
    ordinals: PodOrdinals | None = None
    """NonIndexed pods' ordinals, for pod references in object assertions."""


@dataclass(slots=True)
class Failure:
    """One broken expectation; ``index`` is its position in ``expect`` (-1: an unexpected rejection)."""

    index: int
    summary: str
    related: list[str] = field(default_factory=list)
