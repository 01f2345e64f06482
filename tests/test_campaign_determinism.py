"""A campaign is a function of its seed alone, not of what the process imported before it.

Hypothesis mixes constants mined from every local module in ``sys.modules`` into its draws; without
``fakecluster.explore.campaign._without_local_constants`` the command line (which imports
``fakecluster.cli``), a Python session, a pytest worker and a Dask worker drew different scenarios from
one seed. Each run here is a fresh process, so nothing else it imported leaks in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = """
import sys
{before}
from fakecluster.explore.campaign import campaign
print(campaign(50, base_seed=9).fingerprint)
"""


def _fingerprint(before: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "FAKECLUSTER_CHECK_SNAPSHOTS"}
    proc = subprocess.run([sys.executable, "-c", PROGRAM.format(before=before)], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_the_same_seed_draws_the_same_whatever_was_imported_first() -> None:
    plain = _fingerprint("")
    assert plain == _fingerprint("import fakecluster.cli, fakecluster.report, fakecluster.session")
    assert plain == _fingerprint("import jobset.explore, fakecluster.scenario.sweep")
