"""``events`` expectations on a Job (``job:``), with ``count`` on an item and ``absent``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakecluster.scenario.runner import run_scenario
from tests.test_runner import assert_passed, scenario


def events_check(**check: Any) -> list[dict[str, Any]]:
    return [{"happens": "jobset Completed"}, {"events": check}]


def test_job_events_contains_count_and_absent_pass(tmp_path: Path) -> None:
    first = {"reason": "SuccessfulCreate", "message": "Created pod: js-w-0-0-", "count": 1}
    expect = events_check(job="js-w-0",
                          contains=[first,
                                    {"type": "Normal", "reason": "SuccessfulCreate", "message": "js-w-0-1-"},
                                    {"reason": "Completed", "note": "Job completed"}],
                          absent=[{"reason": "FailedCreate"}, {"reason": "SuccessfulDelete"}])
    assert_passed(run_scenario(scenario(tmp_path, expect=expect)))


def test_absent_and_count_fail_with_what_was_recorded(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path, expect=events_check(job="js-w-1", absent=[
        {"reason": "SuccessfulCreate"}])))
    assert not outcome.passed
    want = ('absent[0] {"reason": "SuccessfulCreate"} was recorded: '
            "Normal/SuccessfulCreate 'Created pod: js-w-1-")
    assert any(want in f for f in outcome.failures), outcome.failures
    outcome = run_scenario(scenario(tmp_path, name="t", expect=events_check(job="js-w-1", contains=[
        {"reason": "SuccessfulCreate", "count": 3}])))
    assert not outcome.passed


def test_jobset_events_are_still_the_default(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path, expect=events_check(absent=[{"reason": "SuccessfulCreate"}])))
    assert_passed(outcome)
