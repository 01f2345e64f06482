"""Scenario files: the format, loading with located errors, milestones, expectations and the report.

This package is the workload-agnostic layer between a YAML file and a run: it parses and checks files,
and judges a finished run from its trace and snapshots. Playing a scenario on the cluster is the
runner's job (:mod:`fakecluster.scenario.runner`).
"""

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
