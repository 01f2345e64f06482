"""Synthetic traces for report tests: many pods without running a cluster of that size."""

from __future__ import annotations

from fakecluster.scenario.trace import TraceEvent


def _pod(t: float, seq: int, name: str, event: str, *, ji: int, pi: int) -> TraceEvent:
    return TraceEvent(t, seq, "Pod", "default", name, event, "js", "workers", ji, pi, 0, "")


def many_pods(jobs: int, pods_per_job: int) -> list[TraceEvent]:
    """``jobs`` Jobs of one replicated job, pods created over ~10s, Running 3s and Ready 8s later."""
    trace: list[TraceEvent] = []
    for ji in range(jobs):
        trace.append(TraceEvent(0, len(trace), "Job", "default", f"js-workers-{ji}", "Created", "js",
                                "workers", ji, None, 0, ""))
        for pi in range(pods_per_job):
            name = f"js-workers-{ji}-{pi}"
            start = (ji * pods_per_job + pi) % 97 / 10
            trace.append(_pod(start, len(trace), name, "Created", ji=ji, pi=pi))
            trace.append(_pod(start + 3, len(trace), name, "Running", ji=ji, pi=pi))
            trace.append(_pod(start + 8, len(trace), name, "Ready", ji=ji, pi=pi))
    trace.sort(key=lambda e: (e.time, e.seq))
    return trace
