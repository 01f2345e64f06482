"""Every benchmark script refuses a count below one (runs, rounds, pairs, pods) as a one-line usage
error naming the option, exit status 2, before any work: no traceback from the median of no rounds or
a division by zero, and no scale run of no pods reported as a failed scenario."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from tests.test_network_cost_benchmark import BENCHMARKS, _load

CASES = [
    ("floor.py", "--pods"), ("floor.py", "--repeat"),
    ("network_cost.py", "--pairs"), ("network_cost.py", "--pods"),
    ("scale.py", "--sizes"), ("scale.py", "--pods-per-job"),
    ("whole_process.py", "--runs"), ("suite.py", "--runs"),
    ("report_scale.py", "--workers"), ("report_scale.py", "--pods-per-job"),
]


@pytest.mark.parametrize(("script", "option"), CASES)
@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_count_below_one_is_a_usage_error(script: str, option: str, value: str) -> None:
    out = subprocess.run([sys.executable, str(BENCHMARKS / script), f"{option}={value}"],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    last = out.stderr.strip().splitlines()[-1]
    assert last == f"{script}: error: argument {option}: must be a whole number of at least 1, not '{value}'"
    assert "Traceback" not in out.stderr


def test_at_least_one_takes_whole_numbers_from_one() -> None:
    at_least_one = _load("arguments").at_least_one
    assert at_least_one("1") == 1
    assert at_least_one("10000") == 10_000
    for text in ("0", "-1", "1.5", "ten", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="must be a whole number of at least 1"):
            at_least_one(text)
