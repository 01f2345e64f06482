"""``scripts/campaign.sh``: an exploration campaign of the real controller at the lowest priority, its log
kept beside the findings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_small_campaign_runs_and_keeps_its_log(tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    env = {k: v for k, v in os.environ.items() if k != "FAKECLUSTER_CHECK_SNAPSHOTS"}
    env["PYTHON"] = sys.executable
    proc = subprocess.run(["sh", str(ROOT / "scripts/campaign.sh"), "25", "1", str(out), "--workers", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "25 scenarios in 1 chunks, 0 findings" in proc.stdout
    assert "0 findings" in (out / "campaign.log").read_text()
    assert [p.name for p in out.iterdir()] == ["campaign.log"]
