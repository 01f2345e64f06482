"""``fakecluster diff``: equal runs match; another seed shows the first divergence and moved milestones."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from fakecluster.cli import main
from fakecluster.report import diff_traces, milestone_times, read_traces
from fakecluster.report.cli import run_diff

ROOT = Path(__file__).parents[2]
SCENARIO = ROOT / "scenarios/startup/three-tier-inorder.yaml"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("diff")
    other_seed = tmp / "three-tier-seed-99.yaml"
    text = SCENARIO.read_text()
    assert "\nseed: 42\n" in text
    other_seed.write_text(text.replace("\nseed: 42\n", "\nseed: 99\n"))
    a, a2, b = tmp / "a.jsonl", tmp / "a2.jsonl", tmp / "b.jsonl"
    assert main(["run", str(SCENARIO), "--trace", str(a), "-q"]) == 0
    assert main(["run", str(SCENARIO), "--trace", str(a2), "-q"]) == 0
    assert main(["run", str(other_seed), "--trace", str(b), "-q"]) == 0
    return a, a2, b


def test_same_seed_is_identical(traces: tuple[Path, Path, Path]) -> None:
    a, a2, _ = traces
    out = io.StringIO()
    assert run_diff(a, a2, out) == 0
    assert "identical" in out.getvalue()


def test_other_seed_shows_first_divergence_and_milestones(traces: tuple[Path, Path, Path]) -> None:
    a, _, b = traces
    (left,), (right,) = read_traces(a), read_traces(b)
    lines = diff_traces(left, right)
    assert lines[0].startswith("first divergence at event #")
    assert lines[1].startswith("  A: ") and lines[2].startswith("  B: ")
    assert lines[1] != lines[2]
    times_a, times_b = milestone_times(left.events), milestone_times(right.events)
    phrase = "jobset tf-ps-training Completed"
    assert times_a[phrase].first != times_b[phrase].first
    assert any(line.strip().startswith(phrase + ":") for line in lines)
    out = io.StringIO()
    assert run_diff(a, b, out) == 1
    assert "differs (seed 42 vs 99)" in out.getvalue()


def test_all_milestone_is_the_last_slot(traces: tuple[Path, Path, Path]) -> None:
    (trace,) = read_traces(traces[0])
    times = milestone_times(trace.events)
    ready = [e for e in trace.events
             if e.kind == "Pod" and e.event == "Ready" and e.replicated_job == "worker"]
    first = times["first tf-ps-training/worker pods Ready"]
    assert first.first == min(e.time for e in ready) and first.all == max(e.time for e in ready)
    assert first.count == len({e.pod_index for e in ready})


def test_unreadable_input_exits_2(tmp_path: Path, traces: tuple[Path, Path, Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert main(["diff", str(traces[0]), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f"{bad}:1" in err
