"""How the command line starts: ``run`` imports what it needs with the cyclic garbage collector paused and
then freezes those objects (``gc.freeze``), so neither later collections nor the one at exit rescan them;
the collector is on again for the run's own garbage; other commands leave it alone. Each case runs in a
fresh interpreter: freezing is a process-wide act."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scenario_files import ROOT

PROBE = """
import gc, json, sys
from fakecluster.cli import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "frozen": gc.get_freeze_count(), "enabled": gc.isenabled(),
                  "runner": "fakecluster.scenario.runner" in sys.modules,
                  "jobset": "jobset.workload" in sys.modules}))
"""


def _probe(*args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=False,
                          cwd=ROOT)
    last = done.stdout.strip().splitlines()[-1]
    result: dict[str, object] = json.loads(last)
    return result


def _scenario() -> Path:
    return sorted((ROOT / "scenarios" / "depends-on").glob("*.yaml"))[0]


def test_run_freezes_what_its_imports_built_and_collects_again_afterwards() -> None:
    result = _probe("run", str(_scenario()), "-q")
    assert result["status"] == 0
    checked = _probe("validate", str(_scenario()))  # loads what run loads, and starts the same way
    assert checked["status"] == 0 and isinstance(checked["frozen"], int) and checked["frozen"] > 50_000
    assert result["runner"] is True and result["jobset"] is True  # the plugin is loaded before the freeze
    assert isinstance(result["frozen"], int) and result["frozen"] > 50_000  # schemas, classes, tables
    assert result["enabled"] is True


def test_other_commands_leave_the_collector_alone() -> None:
    result = _probe("list", str(_scenario()))
    assert result["status"] == 0 and result["frozen"] == 0 and result["enabled"] is True


def test_a_failing_import_still_freezes_and_turns_the_collector_back_on() -> None:
    code = """
import gc, json
from fakecluster.cli import import_for_good
try:
    import_for_good(["fakecluster.no_such_module"])
except ModuleNotFoundError:
    print(json.dumps({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled()}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    result = json.loads(done.stdout)
    assert result["frozen"] > 0 and result["enabled"] is True
