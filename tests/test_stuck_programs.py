"""The stuck diagnosis of a real run whose pods run programs: runner11's diagnosis reads the network's
read-only view (``cluster.network.program_states()``), so a pod waiting on the network says what its
program waits for and which target it keeps failing to reach."""

from __future__ import annotations

from pathlib import Path

from tests.network_helpers import SERVER, play


def test_stuck_diagnosis_names_each_pods_program_state(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "waitFor": {"peers": 3}}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER, "js-nobody-0-0.js:1"], "retry": {"interval": "5s"}}}],
        expect=[{"stuck": {"contains": ["waiting for 1/3 peers"]}}], until="12s", name="stuck")
    assert outcome.passed, outcome.failures
    assert outcome.stuck
    text = outcome.diagnosis
    assert "program waiting, listening on :8050, waiting for 1/3 peers" in text
    assert "waiting for targets connected 1/2, connected to js-server-0-0.js:8050" in text
    assert "connecting to js-nobody-0-0.js:1 attempt 3, last error NXDOMAIN" in text


def test_a_run_without_programs_has_no_program_line(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "ready": "never", "exit": "never"}],
                   expect=[{"stuck": True}], until="1m", name="plain")
    assert outcome.passed, outcome.failures
    assert "pods rule: ready never" in outcome.diagnosis and "program" not in outcome.diagnosis
