"""``events`` expectations on a Job (``job:``), with ``count`` on an item and ``absent``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakecluster.scenario.runner import run_scenario
from tests.test_runner import JOBSET, assert_passed, scenario


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


def test_job_reference_and_exactly(tmp_path: Path) -> None:
    creates = [{"reason": "SuccessfulCreate", "message": f"Created pod: js-w-0-{i}-"} for i in (0, 1)]
    expect = events_check(job="w[0]", exactly=[*creates, {"reason": "Completed"}])
    assert_passed(run_scenario(scenario(tmp_path, expect=expect)))
    outcome = run_scenario(scenario(tmp_path, name="t", expect=events_check(job="w[1]", exactly=creates)))
    assert not outcome.passed
    assert any("expected exactly 2 event(s), got 3: Normal/SuccessfulCreate, Normal/SuccessfulCreate, "
               "Normal/Completed" in f for f in outcome.failures), outcome.failures


def test_pod_events_by_reference_and_attempt(tmp_path: Path) -> None:
    # the JobSet restarts once (maxRestarts 1): attempt 0's pod of w[0/0] failed, attempt 1's succeeded
    pods = [{"match": {"attempt": 0, "jobIndex": 0, "podIndex": 0}, "exit": {"after": "5s", "code": 1}},
            {"match": {}, "exit": {"after": "20s"}}]
    jobset = {**JOBSET, "spec": {**JOBSET["spec"], "failurePolicy": {"maxRestarts": 1}}}
    jobset["spec"]["replicatedJobs"] = [{**JOBSET["spec"]["replicatedJobs"][0]}]
    jobset["spec"]["replicatedJobs"][0]["template"] = {"spec": {
        **JOBSET["spec"]["replicatedJobs"][0]["template"]["spec"], "backoffLimit": 0}}
    expect = [{"happens": "jobset Completed"},
              {"events": {"pod": "w[0/0]", "attempt": 0, "contains": [{"reason": "Started"}],
                          "absent": [{"reason": "Pulled", "count": 2}]}},
              {"events": {"pod": "w[0/0]", "exactly": [
                  {"reason": r} for r in ("Scheduled", "Pulling", "Pulled", "Created", "Started")]}}]
    assert_passed(run_scenario(scenario(tmp_path, jobset=jobset, pods=pods, expect=expect)))


def test_pod_and_job_references_are_checked_at_load(tmp_path: Path) -> None:
    for check, message in (({"pod": "w[0/9]", "absent": [{"reason": "x"}]}, "pod index 9 is out of range"),
                           ({"job": "w[4]", "absent": [{"reason": "x"}]}, "job index 4 is out of range"),
                           ({"job": "nope[0]", "absent": [{"reason": "x"}]}, "no replicated job 'nope'"),
                           ({"job": "w[0", "absent": [{"reason": "x"}]}, "cannot read 'w[0' as a job"),
                           ({"attempt": 1, "absent": [{"reason": "x"}]}, "'attempt' goes with a pod"),
                           ({"job": "w[0]", "pod": "w[0/0]", "absent": [{}]}, "give 'job' or 'pod'")):
        outcome = run_scenario(scenario(tmp_path, name="bad", expect=[{"events": check}]))
        assert not outcome.passed and message in outcome.failures[0], (check, outcome.failures)


def test_event_count_bounds(tmp_path: Path) -> None:
    ok = events_check(job="w[0]", contains=[{"reason": "SuccessfulCreate", "count": {"min": 1, "max": 1}}])
    assert_passed(run_scenario(scenario(tmp_path, expect=ok)))
    too_few = events_check(job="w[0]", contains=[{"reason": "SuccessfulCreate", "count": {"min": 2}}])
    assert not run_scenario(scenario(tmp_path, name="few", expect=too_few)).passed
    bad = events_check(job="w[0]", contains=[{"reason": "SuccessfulCreate", "count": {"least": 2}}])
    outcome = run_scenario(scenario(tmp_path, name="bad", expect=bad))
    assert not outcome.passed and "contains[0].count: expected a count such as 3" in outcome.failures[0]
