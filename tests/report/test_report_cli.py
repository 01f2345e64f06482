"""``run --report DIR`` and ``pytest --fakecluster-report DIR``: a page per scenario, an index, links."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakecluster.cli import main

ROOT = Path(__file__).parents[2]
GOOD = ROOT / "scenarios/driver-first/spark-driver-first.yaml"


def _suite(tmp_path: Path) -> Path:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    shutil.copy(GOOD, scenarios / "good.yaml")
    (scenarios / "broken.yaml").write_text("name: broken\nseed: 3\nexpect: []\njobset: {kind: JobSet}\n")
    return scenarios


def test_run_report_writes_pages_and_an_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenarios = _suite(tmp_path)
    report = tmp_path / "report"
    assert main(["run", str(scenarios), "--report", str(report), "-q"]) == 1
    out = capsys.readouterr().out
    assert f"report: {report / 'index.html'}" in out
    assert sorted(p.name for p in report.glob("*.html")) == ["broken.html", "good.html", "index.html"]
    index = (report / "index.html").read_text()
    assert index.count("<tr data-passed=") == 2
    assert '<tr data-passed="false"><td class="fail">FAIL</td><td><a href="broken.html">' in index
    broken = (report / "broken.html").read_text()
    assert "broken.yaml:3: expect: needs at least 1 item" in broken  # the one-line load error
    assert 'class="row lane"' in (report / "good.html").read_text()


def test_pytest_option_links_failing_items_to_their_page(tmp_path: Path) -> None:
    _suite(tmp_path)
    report = tmp_path / "report"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",  # plugin: pytest11
         "--fakecluster-report", str(report), "scenarios"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"report: {(report / 'broken.html').resolve().as_uri()}" in run.stdout
    assert (report / "good.html").exists() and (report / "index.html").exists()
    assert "good.html" in (report / "index.html").read_text()


def test_a_new_run_starts_a_new_index(tmp_path: Path) -> None:
    scenarios = _suite(tmp_path)
    report = tmp_path / "report"
    main(["run", str(scenarios), "--report", str(report), "-q"])
    (scenarios / "broken.yaml").unlink()
    assert main(["run", str(scenarios), "--report", str(report), "-q"]) == 0
    index = (report / "index.html").read_text()
    assert index.count("<tr data-passed=") == 1 and "broken.html" not in index


def test_same_seed_draws_the_same_page(tmp_path: Path) -> None:
    from fakecluster.report import run_for_report, write_page

    pages = []
    for attempt in ("a", "b"):
        outcome, lifecycle = run_for_report(GOOD)
        outcome.wall_seconds = 0.0
        pages.append(write_page(tmp_path / attempt, outcome, lifecycle).read_text())
    assert pages[0] == pages[1]
