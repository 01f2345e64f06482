"""Format 1.1's program keys under the hostile-input rules version 1 already follows: exit codes 0..255,
counts within int32, strict booleans, ASCII port digits, finite back-off, bounded durations. Each is a
one-line load error naming the field, never a silently accepted value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.network_helpers import SERVER, play

CASES: list[tuple[dict[str, Any], str, str]] = [
    ({"connect": [SERVER], "exitCode": 256}, "pods[0].program.exitCode", "must be <= 255"),
    ({"connect": [SERVER], "disconnectExitCode": -1}, "pods[0].program.disconnectExitCode", ">= 0"),
    ({"connect": [SERVER], "retry": {"exitCode": 300}}, "pods[0].program.retry.exitCode", "<= 255"),
    ({"connect": [SERVER], "waitFor": {"connected": True, "exitCode": 999}},
     "pods[0].program.waitFor.exitCode", "<= 255"),
    ({"connect": [SERVER], "retry": {"attempts": 2**31}}, "pods[0].program.retry.attempts", "<= 2147483647"),
    ({"listen": [1], "waitFor": {"peers": 2**40}}, "pods[0].program.waitFor.peers", "<= 2147483647"),
    ({"connect": [SERVER], "waitFor": {"connected": "yes"}}, "pods[0].program.waitFor.connected",
     "expected true or false"),
    ({"connect": [{"replicatedJob": "server", "port": 1, "excludeSelf": 1}]},
     "pods[0].program.connect[0].excludeSelf", "expected true or false"),
    ({"connect": ["js-server-0-0.js:٨٠٥٠"]}, "pods[0].program.connect[0]", "expected 'host:port'"),
    ({"connect": [SERVER], "retry": {"backoff": float("inf")}}, "pods[0].program.retry.backoff", "finite"),
    ({"connect": [SERVER], "retry": {"giveUpAfter": "100000h"}}, "pods[0].program.retry.giveUpAfter",
     "longer than 10 years"),
]


@pytest.mark.parametrize(("program", "field", "message"), CASES, ids=[c[1] + ":" + c[2] for c in CASES])
def test_program_values_out_of_bounds_are_load_errors(
    tmp_path: Path, program: dict[str, Any], field: str, message: str
) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "clients"}, "program": program}], name="bad")
    assert not outcome.passed and len(outcome.failures) == 1
    line = outcome.failures[0]
    assert "\n" not in line and f"{field}:" in line and message in line, line


def test_microsecond_durations_keep_the_bound_and_round_half_even() -> None:
    from fakecluster.scenario.durations import parse_duration

    assert parse_duration("1.0000005s") == 1.0 and parse_duration("1.0000015s") == 1.000002
    assert parse_duration(0.1234564) == 0.123456 and parse_duration("87600h") == 87600 * 3600.0
    with pytest.raises(ValueError, match="longer than 10 years"):
        parse_duration(87600 * 3600 + 0.5)
