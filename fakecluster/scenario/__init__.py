"""Scenario files: the format, loading with located errors, milestones, expectations and the report.

This package is the workload-agnostic layer between a YAML file and a run: it parses and checks files,
and judges a finished run from its trace and snapshots. Playing a scenario on the cluster is the
runner's job (:mod:`fakecluster.scenario.runner`).

The names below are imported on first use (PEP 562), as :mod:`fakecluster`'s are: importing any module
of this package imports the package first, and what only reads files (:mod:`~.discovery`, the pytest
plugin's collection, ``fakecluster list``) or reports them (:mod:`~.errors`) should not pay for the
expectations, the timeline and, through them, the whole cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakecluster._lazy import lazy_attribute, lazy_dir

if TYPE_CHECKING:
    from fakecluster.scenario.durations import format_duration, parse_duration
    from fakecluster.scenario.errors import ScenarioError
    from fakecluster.scenario.expectations import Failure, RunResult, check
    from fakecluster.scenario.format import Scenario
    from fakecluster.scenario.loader import load_scenario, validate_against_workload
    from fakecluster.scenario.matching import subset_match
    from fakecluster.scenario.milestones import Milestone, PodRef, parse_milestone, parse_pod_ref
    from fakecluster.scenario.timeline import render_failure, render_timeline
    from fakecluster.scenario.trace import Snapshot, TraceEvent, trace_digest
    from fakecluster.workload_plugin import GroupShape

__all__ = [
    "Failure",
    "GroupShape",
    "Milestone",
    "PodRef",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "Snapshot",
    "TraceEvent",
    "check",
    "format_duration",
    "load_scenario",
    "parse_duration",
    "parse_milestone",
    "parse_pod_ref",
    "render_failure",
    "render_timeline",
    "subset_match",
    "trace_digest",
    "validate_against_workload",
]

_HOME = {
    "format_duration": "fakecluster.scenario.durations",
    "parse_duration": "fakecluster.scenario.durations",
    "ScenarioError": "fakecluster.scenario.errors",
    "Failure": "fakecluster.scenario.expectations",
    "RunResult": "fakecluster.scenario.expectations",
    "check": "fakecluster.scenario.expectations",
    "Scenario": "fakecluster.scenario.format",
    "load_scenario": "fakecluster.scenario.loader",
    "validate_against_workload": "fakecluster.scenario.loader",
    "subset_match": "fakecluster.scenario.matching",
    "Milestone": "fakecluster.scenario.milestones",
    "PodRef": "fakecluster.scenario.milestones",
    "parse_milestone": "fakecluster.scenario.milestones",
    "parse_pod_ref": "fakecluster.scenario.milestones",
    "render_failure": "fakecluster.scenario.timeline",
    "render_timeline": "fakecluster.scenario.timeline",
    "Snapshot": "fakecluster.scenario.trace",
    "TraceEvent": "fakecluster.scenario.trace",
    "trace_digest": "fakecluster.scenario.trace",
    "GroupShape": "fakecluster.workload_plugin",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOME, globals(), name)


def __dir__() -> list[str]:
    return lazy_dir(globals(), __all__)
