"""The features of the parallel branches meeting in one run: a seed override on a ``sweep`` file, limits and
the report's observer through the session-based runner, and ``--seeds`` with ``--report``/``--trace``
(one page and one trace block per seed, not one overwriting the other)."""

from __future__ import annotations

from pathlib import Path

from scenario_files import jobset_manifest, replicated_job

from fakecluster.cli import main
from fakecluster.report import run_for_report
from fakecluster.report.jsonl import read_traces
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
PLAIN = ROOT / "scenarios" / "startup" / "three-tier-inorder.yaml"

SWEEP = f"""\
seed: 10
sweep: {{seeds: 3}}
pods: [{{match: {{}}, schedule: 1s, start: 1s, exit: {{after: 10s}}, jitter: 0.2}}]
jobset:
{jobset_manifest(replicated_job(pods=2), indent=2)}expect:
  - happens: jobset Completed
    by: 60s
"""


def test_a_seed_override_on_a_sweep_file_sweeps_from_the_override(tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(SWEEP)
    own = run_scenario(path)
    moved = run_scenario(path, seed=11)
    assert own.passed and moved.passed
    assert own.sweep.record()["seeds"] == [10, 11, 12]
    assert moved.sweep.record()["seeds"] == [11, 12, 13]
    # the runs both sweeps share are the same runs, digest for digest
    assert own.sweep.record()["digests"][1:] == moved.sweep.record()["digests"][:2]


def test_limits_observe_and_seed_reach_the_session_based_runner() -> None:
    bounded = run_scenario(PLAIN, seed=7, limits=RunLimits(max_events=5))
    assert not bounded.passed and bounded.seed == 7
    assert "budget exhausted after 5 events" in bounded.failures[0]
    outcome, lifecycle = run_for_report(PLAIN, seed=7)
    assert outcome.passed and outcome.seed == 7 and lifecycle  # the report's observer saw pod edges
    assert outcome.digest == run_scenario(PLAIN, seed=7).digest  # observing changes nothing


def test_seeds_with_report_and_trace_keep_every_seed(tmp_path: Path) -> None:
    report, trace = tmp_path / "report", tmp_path / "trace.jsonl"
    status = main(["run", str(PLAIN), "--seeds", "2", "--report", str(report), "--trace", str(trace), "-q"])
    assert status == 0
    pages = sorted(p.name for p in report.glob("*.html") if p.name != "index.html")
    assert pages == ["startup--three-tier-inorder--seed-42.html", "startup--three-tier-inorder--seed-43.html"]
    names = [t.name for t in read_traces(trace)]
    assert len(names) == 2 and names[0].endswith(" seed 42") and names[1].endswith(" seed 43")
