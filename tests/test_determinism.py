"""Same scenario + same seed = same trace, whatever the hash seed or process.

Every scenario is run in two fresh interpreters with different ``PYTHONHASHSEED`` values (so any
iteration over hash-ordered sets or dicts keyed by strings would show up), and once in this process;
the trace digests must be identical. A changed seed must change the trace of a jittered scenario.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fakecluster.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


def _run_all(hash_seed: str, out: Path, *extra: str) -> dict[str, str]:
    """Digest per scenario path from ``python -m fakecluster run scenarios/ --json out``; if the CLI
    wrote no readable report, the test fails with the CLI's own exit status, stdout and stderr."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(
        [sys.executable, "-m", "fakecluster", "run", str(SCENARIOS), "--json", str(out), "-q", *extra],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    try:
        records = json.loads(out.read_text())
    except (OSError, ValueError) as err:
        pytest.fail(
            f"`fakecluster run` (PYTHONHASHSEED={hash_seed}) exited {proc.returncode} "
            f"without a readable JSON report ({err})\n"
            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}",
            pytrace=False,
        )
    return {r["path"]: r["digest"] for r in records}


def test_a_failing_cli_run_fails_with_its_own_output(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        _run_all("1", tmp_path / "none.json", "--no-such-option")
    message = str(failed.value)
    assert "exited 2 without a readable JSON report" in message
    assert "unrecognized arguments: --no-such-option" in message  # argparse's own stderr


def test_every_scenario_has_the_same_digest_under_different_hash_seeds(tmp_path: Path) -> None:
    first = _run_all("1", tmp_path / "a.json")
    second = _run_all("4242", tmp_path / "b.json")
    assert len(first) >= 12
    assert first == second
    assert all(len(d) == 64 for d in first.values())


def test_in_process_digest_equals_subprocess_digest(tmp_path: Path) -> None:
    path = next(iter(sorted(SCENARIOS.rglob("*.yaml"))))
    subprocess_digests = _run_all("7", tmp_path / "c.json")
    assert run_scenario(path).digest == subprocess_digests[str(path)]


def test_a_different_seed_changes_a_jittered_trace(tmp_path: Path) -> None:
    source = next(p for p in sorted(SCENARIOS.rglob("*.yaml")) if "jitter" in p.read_text())
    data = yaml.safe_load(source.read_text())
    digests = set()
    for seed in (1, 2):
        data["seed"] = seed
        copy = tmp_path / f"seed-{seed}.yaml"
        for manifest in [data["jobset"]] if "jobset" in data else data["jobsets"]:
            if isinstance(manifest, dict) and set(manifest) == {"file"}:
                manifest["file"] = str((source.parent / manifest["file"]).resolve())
        copy.write_text(yaml.safe_dump(data))
        digests.add(run_scenario(copy).digest)
    assert len(digests) == 2


def test_a_sweep_gives_the_same_per_seed_digests_under_different_hash_seeds(tmp_path: Path) -> None:
    """Scenario format 1.1 ``sweep``: every seed's digest, not only their combined one, is stable."""
    source = next(p for p in sorted(SCENARIOS.rglob("*.yaml")) if "jitter" in p.read_text())
    data = yaml.safe_load(source.read_text())
    data["sweep"] = {"seeds": 4}
    for manifest in [data["jobset"]] if "jobset" in data else data["jobsets"]:
        if isinstance(manifest, dict) and set(manifest) == {"file"}:
            manifest["file"] = str((source.parent / manifest["file"]).resolve())
    swept = tmp_path / "sweep.yaml"
    swept.write_text(yaml.safe_dump(data))
    runs = []
    for hash_seed in ("3", "999"):
        out = tmp_path / f"sweep-{hash_seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-m", "fakecluster", "run", str(swept), "--json", str(out), "-q"],
                       cwd=ROOT, env=env, check=False, capture_output=True, text=True)  # fmt: skip
        (record,) = json.loads(out.read_text())
        runs.append((record["digest"], record["digests"]))
    assert runs[0] == runs[1]
    assert len(set(runs[0][1])) == 4
