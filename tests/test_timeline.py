"""The failure report: the folded timeline and the header around it."""

from __future__ import annotations

import itertools
import re

from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.timeline import render_failure, render_timeline
from fakecluster.scenario.trace import Snapshot, TraceEvent
from fakecluster.workload_plugin import GroupShape

SHAPES = {"mpi": {"worker": GroupShape(2, 4), "launcher": GroupShape(1, 1)}}


def build_trace() -> list[TraceEvent]:
    """Two worker Jobs of four pods (one pod never Ready), a launcher whose pod is replaced, a restart."""
    seq = itertools.count()
    trace: list[TraceEvent] = []

    def add(
        time: float,
        kind: str,
        name: str,
        event: str,
        rj: str | None = None,
        *,
        ji: int = 0,
        pi: int = 0,
        a: int = 0,
    ) -> None:
        trace.append(
            TraceEvent(
                time,
                next(seq),
                kind,
                "default",
                name,
                event,
                jobset="mpi",
                replicated_job=rj,
                job_index=ji if rj else None,
                pod_index=pi if kind == "Pod" else None,
                attempt=a,
            )
        )

    add(0, "JobSet", "mpi", "StartupPolicyInProgress")
    for ji in range(2):
        add(0, "Job", f"mpi-worker-{ji}", "Created", "worker", ji=ji)
        for pi in range(4):
            pod = f"mpi-worker-{ji}-{pi}"
            add(0, "Pod", pod, "Created", "worker", ji=ji, pi=pi)
            add(2 + pi * 0.1, "Pod", pod, "Running", "worker", ji=ji, pi=pi)
            if (ji, pi) != (1, 3):
                add(3 + pi * 0.1, "Pod", pod, "Ready", "worker", ji=ji, pi=pi)
        add(3.4, "Job", f"mpi-worker-{ji}", "Ready", "worker", ji=ji)
    add(3.4, "JobSet", "mpi", "StartupPolicyCompleted")
    add(3.5, "Job", "mpi-launcher-0", "Created", "launcher")
    add(3.5, "Pod", "mpi-launcher-0-0-a", "Created", "launcher")
    add(5.0, "Pod", "mpi-launcher-0-0-a", "Failed", "launcher")
    add(5.0, "Pod", "mpi-launcher-0-0-b", "Created", "launcher")
    add(6.0, "Pod", "mpi-launcher-0-0-b", "Running", "launcher")
    add(33.0, "Pod", "mpi-launcher-0-0-b", "Succeeded", "launcher")
    add(33.1, "Job", "mpi-launcher-0", "Complete", "launcher")
    add(40.0, "JobSet", "mpi", "Restarted", a=1)
    add(40.5, "Job", "mpi-worker-0", "Created", "worker", a=1)
    add(41.0, "Pod", "mpi-worker-0-0-x", "Created", "worker", a=1)
    return trace


def squash(text: str) -> str:
    """Collapse column padding and spell the report's en dash and times sign in ASCII for assertions."""
    text = text.replace("\N{EN DASH}", "-").replace("\N{MULTIPLICATION SIGN}", "x")
    return re.sub(r" {2,}", "  ", text)


def test_timeline_has_one_job_line_and_one_pods_line_per_job() -> None:
    text = render_timeline(build_trace(), SHAPES, width=200)
    assert "running 2.0\N{EN DASH}2.3s" in text and "(2 jobs \N{MULTIPLICATION SIGN} 4 pods)" in text
    lines = [squash(line.strip()) for line in text.splitlines()]
    assert "JobSet default/mpi" in lines
    assert "worker  (2 jobs x 4 pods)" in lines
    assert "worker-0  job  created 0.0s  ready 3.4s" in lines
    assert "worker-0  pods 4/4  created 0.0s  running 2.0-2.3s  ready 3.0-3.3s" in lines
    assert "worker-1  pods 4/4  created 0.0s  running 2.0-2.3s  ready 3/4 3.0-3.2s" in lines
    assert "launcher-0  job  created 3.5s  complete 33.1s" in lines
    launcher_pods = next(line for line in lines if line.startswith("launcher-0  pods"))
    assert launcher_pods.startswith("launcher-0  pods 1/1 (+1 replaced)  created 3.5-5.0s")
    assert "succeeded 1/2 33.0s" in launcher_pods and "failed 1/2 5.0s" in launcher_pods


def test_jobset_transitions_are_listed_in_time_order() -> None:
    text = render_timeline(build_trace(), SHAPES, width=200)
    jobset_line = next(line for line in text.splitlines() if line.strip().startswith("jobset"))
    assert squash(jobset_line.strip()) == (
        "jobset  StartupPolicyInProgress 0.0s  ·  StartupPolicyCompleted 3.4s  ·  Restarted 40.0s (attempt 1)"
    )


def test_restart_attempts_get_their_own_group() -> None:
    lines = [squash(line.strip()) for line in render_timeline(build_trace(), SHAPES).splitlines()]
    first, second = lines.index("attempt 0"), lines.index("attempt 1")
    assert first < lines.index("worker-0  job  created 0.0s  ready 3.4s") < second
    assert lines[second + 1 : second + 3] == [
        "worker-0  job  created 40.5s",
        "worker-0  pods 1/4  created 41.0s",
    ]


def test_columns_are_aligned_within_a_replicated_job() -> None:
    text = render_timeline(build_trace(), SHAPES)
    worker_rows = [
        line for line in text.splitlines() if line.strip().startswith("worker-") and "pods 4/4" in line
    ]
    assert len(worker_rows) == 2
    assert len({row.index("running") for row in worker_rows}) == 1
    assert len({row.index("ready") for row in worker_rows}) == 1
    job_row = next(line for line in text.splitlines() if line.strip().startswith("worker-0  job"))
    assert job_row.index("ready") == worker_rows[0].index("ready")  # a Job's Ready sits under its pods' Ready


def test_replicated_jobs_are_sorted_by_first_event_and_lines_fit_the_width() -> None:
    text = render_timeline(build_trace(), SHAPES, width=80)
    assert text.index("  worker  (") < text.index("  launcher  (")
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "ready 3/4 3.0-3.2s" in squash(text)  # wrapped between cells, never inside one


def test_related_restricts_to_the_named_replicated_jobs() -> None:
    text = render_timeline(build_trace(), SHAPES, related=["first launcher pods Running"])
    assert "launcher-0  job" in squash(text)
    assert "worker-0" not in text
    assert "(1 other replicated job not shown)" in text
    assert "StartupPolicyCompleted" in text
    everything = render_timeline(build_trace(), SHAPES, related=["no-such-thing"])
    assert "worker-0" in everything and "launcher-0" in everything


def test_replicated_job_without_events_is_listed() -> None:
    shapes = {"mpi": {**SHAPES["mpi"], "driver": GroupShape(1, 1)}}
    lines = [squash(line.strip()) for line in render_timeline(build_trace(), shapes).splitlines()]
    assert lines[lines.index("driver  (1 job x 1 pod)") + 1] == "no events"


def test_events_outside_replicated_jobs_and_empty_trace() -> None:
    stray = TraceEvent(1.0, 0, "Pod", "default", "stray", "Created")
    assert "Pod default/stray Created" in render_timeline([stray], {})
    assert render_timeline([], {}) == "(the trace is empty)"


def test_render_failure_shows_seed_failures_and_related_timeline() -> None:
    scenario = Scenario.model_validate(
        {
            "name": "workers first",
            "jobset": {"metadata": {"name": "mpi"}},
            "expect": [{"order": ["first launcher pods Running", "all worker pods Ready"]}],
        }
    )
    trace = build_trace()
    result = RunResult(trace, Snapshot(41.0, {}), {}, [], None, 41.0, seed=11)
    failures = check(scenario, result, SHAPES)
    report = render_failure(scenario, result, failures, SHAPES)
    lines = report.splitlines()
    assert (
        lines[0]
        == f"scenario 'workers first' failed (seed 11; run ended at 41.0s after {len(trace)} trace events)"
    )
    assert lines[1] == "1 failed expectation:"
    assert lines[2] == "  - expect[0] order: 'all worker pods Ready' never happened (run ended at 41.0s)"
    assert "timeline (related: first launcher pods Running, all worker pods Ready):" in lines
    assert "worker-1  pods 4/4" in squash(report) and "launcher-0  pods" in squash(report)
    assert all(len(line) <= 100 for line in lines)
    assert "seed 11" in lines[-1]


def test_render_failure_shows_everything_when_a_failure_names_nothing() -> None:
    scenario = Scenario.model_validate(
        {
            "jobset": {"metadata": {"name": "mpi"}},
            "expect": [{"never": "first launcher pods Failed"}, {"final": {"count": {"pods": 0}}}],
        }
    )
    result = RunResult(build_trace(), Snapshot(41.0, {"Pod": [{}]}), {}, [], "denied: bad spec", 41.0, seed=0)
    failures = check(scenario, result, SHAPES)
    assert [f.index for f in failures] == [-1, 0, 1]
    report = render_failure(scenario, result, failures, SHAPES)
    assert "manifest rejected: denied: bad spec" in report
    assert "  - expect[1] final: count.pods: expected 0, got 1" in report
    assert "timeline:" in report and "worker-0" in report and "launcher-0" in report
