"""The report's timeline model and page: phases per pod, attempts as rows, program bands, density bands."""

from __future__ import annotations

import re
from pathlib import Path

from report_synthetic import many_pods

from fakecluster.report import run_for_report, write_index, write_page
from fakecluster.report.lifecycle import ADMITTED, TERMINATING
from fakecluster.report.model import build_timeline
from fakecluster.report.page import MAX_POD_ROWS, PageData, render_page
from fakecluster.report.svg import density
from fakecluster.scenario.trace import TraceEvent

ROOT = Path(__file__).parents[2]


def _pod(t: float, seq: int, name: str, event: str, *, ji: int = 0, pi: int = 0, attempt: int = 0,
         rjob: str = "workers", detail: str = "", kind: str = "Pod") -> TraceEvent:
    return TraceEvent(t, seq, kind, "default", name, event, "js", rjob, ji, pi, attempt, detail)


def _job(t: float, seq: int, name: str, event: str, *, ji: int = 0, attempt: int = 0) -> TraceEvent:
    return TraceEvent(t, seq, "Job", "default", name, event, "js", "workers", ji, None, attempt, "")


def test_pod_phases_follow_its_edges() -> None:
    trace = [
        _job(0, 0, "js-workers-0", "Created"),
        _pod(0, 1, "p", "Created"), _pod(2, 2, "p", "Scheduled", detail="node-1"),
        _pod(5, 3, "p", "Running"), _pod(7, 4, "p", "Ready"), _pod(20, 5, "p", "Succeeded"),
        _pod(25, 6, "p", "Deleted"),
    ]
    lifecycle = [_pod(2.5, 0, "p", ADMITTED), _pod(22, 1, "p", TERMINATING)]
    timeline = build_timeline(trace, lifecycle, end=30)
    (lane,) = timeline.lanes
    (job,) = lane.jobs
    (pod,) = job.pods
    assert [(s.state, s.start, s.end) for s in pod.segments] == [
        ("pending", 0, 2.5), ("creating", 2.5, 5), ("running", 5, 7), ("ready", 7, 20), ("succeeded", 20, 25),
    ]
    assert pod.node == "node-1"
    assert [(s.state, s.start, s.end) for s in job.segments] == [("active", 0, 30)]


def test_termination_of_a_ready_pod_then_failure() -> None:
    trace = [_pod(0, 0, "p", "Created"), _pod(1, 1, "p", "Running"), _pod(1, 2, "p", "Ready"),
             _pod(9, 3, "p", "Failed", detail="exitCode=143")]
    timeline = build_timeline(trace, [_pod(4, 0, "p", TERMINATING)], end=10)
    states = [(s.state, s.start, s.end) for s in timeline.lanes[0].jobs[0].pods[0].segments]
    # Running and Ready at the same instant: the empty running segment is left out
    assert states == [("pending", 0, 1), ("ready", 1, 4), ("terminating", 4, 9), ("failed", 9, 10)]


def test_restart_attempts_are_separate_rows_and_jobset_events_are_markers() -> None:
    trace = [
        _job(0, 0, "js-workers-0", "Created"), _pod(0, 1, "a", "Created"),
        TraceEvent(5, 2, "JobSet", "default", "js", "Restarted", "js", None, None, None, None, "1"),
        _job(6, 3, "js-workers-0", "Created", attempt=1), _pod(6, 4, "b", "Created", attempt=1),
    ]
    timeline = build_timeline(trace, end=10)
    assert [(j.attempt, [p.name for p in j.pods]) for j in timeline.lanes[0].jobs] == [(0, ["a"]), (1, ["b"])]
    assert [(m.time, m.label, m.category) for m in timeline.markers] == [(5, "js Restarted", "condition")]


def test_program_events_become_a_band_and_coloured_ticks() -> None:
    trace = [
        _pod(0, 0, "p", "Created"), _pod(1, 1, "p", "Running"),
        _pod(1, 2, "p", "Listening", kind="Program"), _pod(2, 3, "p", "Connecting", kind="Program"),
        _pod(2.5, 4, "p", "ConnectAttempt", kind="Program", detail="outcome=refused"),
        _pod(3, 5, "p", "Connected", kind="Program"), _pod(4, 6, "p", "Working", kind="Program"),
    ]
    timeline = build_timeline(trace, end=6)
    pod = timeline.lanes[0].jobs[0].pods[0]
    assert [(s.state, s.start, s.end) for s in pod.program] == [
        ("listening", 1, 2), ("connecting", 2, 3), ("connected", 3, 4), ("working", 4, 6),
    ]
    assert [(t.event, t.detail) for t in pod.ticks] == [("ConnectAttempt", "outcome=refused")]
    html = render_page(PageData(name="n", path="p", passed=True, seed=0, virtual_end=6, wall_seconds=0,
                                digest="d", events=0, failures=[], timeline=timeline))
    assert 'class="tick"' in html and "#c0392b" in html  # refused is red
    assert 'data-state="connecting"' in html


def test_connected_without_a_connecting_edge_connects_from_container_start() -> None:
    trace = [_pod(0, 0, "p", "Created"), _pod(2, 1, "p", "Running"), _pod(9, 2, "p", "Connected"),
             _pod(9.5, 3, "p", "Resolvable"), _pod(10, 4, "p", "GaveUp")]
    pod = build_timeline(trace, end=12).lanes[0].jobs[0].pods[0]
    assert [(s.state, s.start, s.end) for s in pod.program] == [
        ("connecting", 2, 9), ("connected", 9, 10), ("gaveup", 10, 12)]
    assert [t.event for t in pod.ticks] == ["Resolvable"]


def test_density_counts_pods_per_phase() -> None:
    timeline = build_timeline(many_pods(1, 100), end=40)
    pods = timeline.lanes[0].jobs[0].pods
    counts = density(pods, 40, bins=40)
    # at t=39.5 every pod is Ready; at t=0.5 only pods created by then are pending
    assert counts["ready"][-1] == 100
    assert counts["pending"][0] == sum(1 for p in pods if p.segments[0].start <= 0.5)


def test_ten_thousand_pods_fold_into_density_bands() -> None:
    timeline = build_timeline(many_pods(10, 1000), end=40)
    html = render_page(PageData(name="big", path="p", passed=True, seed=0, virtual_end=40, wall_seconds=0,
                                digest="d", events=0, failures=[], timeline=timeline))
    assert html.count('class="row pod') == 0  # 1,000 pods per Job: no per-pod rows
    assert html.count('class="row job') == 10
    assert html.count("<polygon") <= 11 * 7
    assert len(html) < 1_500_000
    small = render_page(PageData(name="s", path="p", passed=True, seed=0, virtual_end=40, wall_seconds=0,
                                 digest="d", events=0, failures=[],
                                 timeline=build_timeline(many_pods(2, MAX_POD_ROWS), end=40)))
    assert small.count('class="row pod') == 2 * MAX_POD_ROWS


def test_page_is_self_contained_and_links_failures(tmp_path: Path) -> None:
    broken = tmp_path / "scenarios" / "late.yaml"
    broken.parent.mkdir()
    text = (ROOT / "scenarios/driver-first/ray-head-first-inorder.yaml").read_text()
    assert "after: 280s\n    by: 420s" in text
    broken.write_text(text.replace("after: 280s\n    by: 420s", "by: 100s"))
    outcome, lifecycle = run_for_report(broken)
    assert not outcome.passed
    page = write_page(tmp_path / "report", outcome, lifecycle)
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched from anywhere
    failed = html[html.index('id="failures"'):html.index("</ul>", html.index('id="failures"'))]
    # 312.655 s: the prober ticks on periodSeconds from admission (fidelity); 312.21 s before
    assert "expect[5]" in failed and 'class="goto" data-t="312.65' in failed
    assert 'class="marker milestone"' in html
    assert len(lifecycle) > 0 and 'data-state="creating"' in html
    index = write_index(tmp_path / "report").read_text()
    assert 'href="late.html"' in index and ">FAIL<" in index and str(outcome.seed) in index
    assert outcome.digest[:16] in index


def test_objects_outside_replicated_jobs_get_a_folded_lane_of_ticks() -> None:
    trace = [_pod(0, 0, "p", "Created"),
             TraceEvent(1, 1, "EndpointSlice", "default", "svc-abc", "Updated", detail="ready 1/2")]
    timeline = build_timeline(trace, end=5)
    html = render_page(PageData(name="n", path="p", passed=True, seed=0, virtual_end=5, wall_seconds=0,
                                digest="d", events=0, failures=[], timeline=timeline))
    assert 'class="row lane folded"' in html and "other objects \N{MIDDLE DOT} 1" in html
    assert 'title="EndpointSlice svc-abc"' in html
    assert "Updated ready 1/2 at 1.0s" in html
