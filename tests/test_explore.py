"""``fakecluster explore``: the real controller passes, mutated controllers are caught and shrunk, and
every executor (in-process, process pool, a real Dask cluster) gives the same campaign.

A mutation is applied to a copy of one JobSet controller module, compiled from its source with one
fragment replaced, and swapped in for the run (the same process: the explorer runs serially here), so the
explorer is shown to find bugs it was never told about: only invariants and the drawn files' liveness
expectation judge.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

import jobset.controller
from fakecluster.explore.campaign import campaign, signature_of
from fakecluster.explore.executors import local_executor

ROOT = Path(__file__).resolve().parents[1]
CONTROLLER = "jobset.controller.jobset_controller"


@pytest.fixture(autouse=True)
def _no_snapshot_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A campaign plays (and shrinks) hundreds of drawn scenarios; the snapshot guard's fingerprint of
    every stored write (``FAKECLUSTER_CHECK_SNAPSHOTS``, on in the root conftest) makes that minutes.
    The scenarios' own code paths run with the guard in the scenario suite; here it is off (also for
    the process-pool and Dask workers, which inherit the environment)."""
    monkeypatch.delenv("FAKECLUSTER_CHECK_SNAPSHOTS", raising=False)


def _mutant(monkeypatch: pytest.MonkeyPatch, module_name: str, old: str, new: str) -> None:
    """Swap in a copy of ``module_name`` with ``old`` replaced by ``new``, then a fresh copy of the
    controller module (which imports names from it) and the controller class the plugin starts."""
    for name, replace in ((module_name, (old, new)), (CONTROLLER, None)):
        if replace is None and module_name == CONTROLLER:
            continue
        original = importlib.import_module(name)
        source = inspect.getsource(original)
        if replace is not None:
            assert replace[0] in source, f"mutation target not found in {name}"
            source = source.replace(replace[0], replace[1], 1)
        copy = types.ModuleType(name)
        copy.__file__ = original.__file__
        monkeypatch.setitem(sys.modules, name, copy)
        exec(compile(source, f"<mutant {name}>", "exec"), copy.__dict__)
    monkeypatch.setattr(jobset.controller, "JobSetController", sys.modules[CONTROLLER].JobSetController)


MUTATIONS = {
    "inorder-does-not-wait": (
        CONTROLLER,
        "                set_in_order_startup_policy_in_progress_condition(js, opts)\n"
        "                return\n",
        "                set_in_order_startup_policy_in_progress_condition(js, opts)\n",
        "invariant inOrderStartup",
    ),
    "depends-on-ignored": (
        "jobset.controller.depends_on",
        "def dependency_reached_status(rjob: Obj, rjob_replicas: dict[str, int], statuses: list[Obj] | None)"
        " -> bool:\n",
        "def dependency_reached_status(rjob: Obj, rjob_replicas: dict[str, int], statuses: list[Obj] | None)"
        " -> bool:\n    return True\n",
        "invariant dependsOnRespected",
    ),
    "restarts-not-counted": (
        "jobset.controller.failure_policy",
        'status["restartsCountTowardsMax"] = int(status.get("restartsCountTowardsMax") or 0) + 1',
        'status["restartsCountTowardsMax"] = int(status.get("restartsCountTowardsMax") or 0)',
        "expectation 'jobset Finished' never happened",
    ),
}


def test_the_real_controller_has_no_findings() -> None:
    result = campaign(150, base_seed=11)
    assert result.examples_run == 150
    assert result.findings == [], [f.failures for f in result.findings]


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_mutated_controller_is_caught_and_shrunk_to_a_small_reproducer(
    mutation: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    module, old, new, expected = MUTATIONS[mutation]
    _mutant(monkeypatch, module, old, new)
    result = campaign(200, base_seed=5, max_findings=1, shrink_runs=40)
    assert result.findings, f"{mutation}: not found in 200 drawn scenarios"
    finding = result.findings[0]
    assert finding.signature.startswith(expected), finding.failures
    assert len(finding.scenario["jobset"]["spec"]["replicatedJobs"]) <= 2
    # the written file is a scenario that fails the same way when run by the ordinary runner
    path = result.write(tmp_path)[0]
    data = yaml.safe_load(path.read_text())
    assert "explore" in data["tags"] and "fails with" in data["description"]
    from fakecluster.scenario.runner import run_scenario

    rerun = run_scenario(path)
    assert not rerun.passed
    assert signature_of(rerun.failures) == finding.signature


def test_same_seed_same_findings_and_a_different_seed_draws_differently() -> None:
    first, again, other = campaign(30, base_seed=2), campaign(30, base_seed=2), campaign(30, base_seed=3)
    assert first.fingerprint == again.fingerprint
    assert first.fingerprint != other.fingerprint


def test_a_process_pool_gives_the_same_campaign_as_one_process() -> None:
    serial = campaign(60, base_seed=4)
    with local_executor(2) as pool:
        pooled = campaign(60, base_seed=4, executor=pool)
    assert pooled.fingerprint == serial.fingerprint
    assert pooled.examples_run == serial.examples_run == 60


def test_the_command_line_writes_nothing_and_exits_0_when_nothing_is_found(tmp_path: Path) -> None:
    out = tmp_path / "findings"
    proc = subprocess.run(
        [sys.executable, "-m", "fakecluster", "explore", "--seeds", "25", "--seed", "1", "--workers", "1",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "25 scenarios in 1 chunks, 0 findings" in proc.stdout
    assert not out.exists() or not list(out.iterdir())
