"""Sweep scenarios in the report: a strip plot and histogram per distribution over every seed's value."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

from fakecluster.cli import main
from fakecluster.report import read_traces, run_for_report, write_page
from fakecluster.report.charts import distribution_chart
from fakecluster.report.writer import sweep_distributions

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
        "parallelism": 2, "completions": 2, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}]},
}


def _sweep(tmp_path: Path, seeds: int = 12) -> Path:
    data = {
        "seed": 100, "sweep": {"seeds": seeds},
        "pods": [{"match": {}, "pull": "2s", "jitter": "4s", "exit": {"after": "5s"}}],
        "jobset": JOBSET,
        "expect": [{"distribution": {"of": "all w pods Ready", "mean": {"max": "1h"}}}],
    }
    path = tmp_path / "scenarios" / "sweep.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_chart_has_one_dot_per_seed_and_a_histogram_that_counts_them() -> None:
    values = [1.0, 1.5, 2.0, 30.0, 31.0, math.nan]
    svg = distribution_chart("gap", {"fast": values[:3], "slow": values[3:]})
    strips = re.findall(r'<g class="strip" data-config="([^"]+)">(.*?)</g>', svg)
    assert [(name, body.count("<circle")) for name, body in strips] == [("fast", 3), ("slow", 2)]
    assert "(n=2, 1 never)" in svg
    hist = dict(re.findall(r'<g class="histogram" data-config="([^"]+)">(.*?)</g>', svg))
    counts = [int(c) for c in re.findall(r': (\d+)"/>', hist["fast"])]
    assert sum(counts) == 3
    with pytest.raises(ValueError, match="no configurations"):
        distribution_chart("empty", {})


def test_sweep_page_charts_every_seed(tmp_path: Path) -> None:
    outcome, lifecycle = run_for_report(_sweep(tmp_path))
    assert outcome.passed and outcome.sweep is not None
    charts = sweep_distributions(outcome)
    (title,) = charts
    assert title == "expect[0] distribution of all w pods Ready"
    (values,) = charts[title].values()
    assert values == [outcome.sweep.distributions[0].values[s] for s in outcome.sweep.seeds]
    assert len(set(values)) > 1  # jitter: the seeds differ
    html = write_page(tmp_path / "report", outcome, lifecycle).read_text()
    assert html.count("<circle") == 12
    assert "(timeline: seed 100)" in html and 'class="row lane"' in html


def test_trace_of_a_sweep_has_one_block_per_seed(tmp_path: Path) -> None:
    trace = tmp_path / "sweep.jsonl"
    assert main(["run", str(_sweep(tmp_path, seeds=3)), "--trace", str(trace), "-q"]) == 0
    blocks = read_traces(trace)
    assert [b.header["seed"] for b in blocks] == [100, 101, 102]
    assert all(b.events for b in blocks) and blocks[0].name.endswith("seed 100")


def test_library_sweep_page_names_gap_and_distribution_milestones(tmp_path: Path) -> None:
    scenario = Path(__file__).parents[2] / "scenarios/sweeps/spark-inorder-pull-jitter-sweep.yaml"
    outcome, lifecycle = run_for_report(scenario)
    html = write_page(tmp_path, outcome, lifecycle).read_text()
    assert "gap: from all driver pods Ready to all executors jobs Created max 1s" in html
    assert html.count('<g class="strip"') == 2 and html.count("<circle") == 2 * len(outcome.sweep.seeds)
