"""Tests for :mod:`jobset.controller.success_policy`, mirroring upstream ``success_policy_test.go`` plus
``executeSuccessPolicy``'s effect on the status."""

from __future__ import annotations

from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import StatusUpdate
from jobset.controller.success_policy import (
    execute_success_policy,
    job_matches_success_policy,
    num_jobs_expected_to_succeed,
    num_jobs_matching_success_policy,
    replicated_job_matches_success_policy,
)

RJ1, RJ2, RJ3, RJ4 = (f"test-replicated-job-{i}" for i in range(1, 5))


def _js(
    operator: str = "All", targets: list[str] | None = None, replicas: dict[str, int] | None = None
) -> Obj:
    policy: Obj = {"operator": operator}
    if targets is not None:
        policy["targetReplicatedJobs"] = targets
    return {
        "metadata": {"name": "test-jobset", "namespace": "default"},
        "spec": {
            "successPolicy": policy,
            "replicatedJobs": [
                {"name": n, "replicas": r, "template": {}} for n, r in (replicas or {}).items()
            ],
        },
    }


def _job(rjob: str) -> Obj:
    return {"metadata": {"name": "test-job", "labels": {api.REPLICATED_JOB_NAME_KEY: rjob}}}


def _match_cases(*ids: str) -> list[Any]:
    """The three cases both matchers' upstream tests run, under each test's own names."""
    cases = [([], RJ1, True), ([RJ1, RJ2], RJ1, True), ([RJ1, RJ2], RJ3, False)]
    return [pytest.param(*case, id=name) for case, name in zip(cases, ids, strict=True)]


@pytest.mark.parametrize(
    ("targets", "rjob", "expected"),
    _match_cases(
        "jobset's TargetReplicatedJobs is empty",
        "job matches one of the TargetReplicatedJobs",
        "job does not match any of the TargetReplicatedJobs",
    ),
)
def test_job_matches_success_policy(targets: list[str], rjob: str, expected: bool) -> None:
    assert job_matches_success_policy(_js(targets=targets), _job(rjob)) is expected


@pytest.mark.parametrize(
    ("targets", "rjob", "expected"),
    _match_cases("jobset's TargetReplicatedJobs is empty", "matching case", "non-matching case"),
)
def test_replicated_job_matches_success_policy(targets: list[str], rjob: str, expected: bool) -> None:
    assert replicated_job_matches_success_policy(_js(targets=targets), {"name": rjob}) is expected


@pytest.mark.parametrize(
    ("targets", "job_rjobs", "expected"),
    [
        pytest.param([RJ1, RJ2], [RJ1, RJ3], 1, id="one job matches the success policy"),
        pytest.param([RJ1, RJ2], [RJ1, RJ2], 2, id="all jobs matches the success policy"),
        pytest.param([RJ1, RJ2], [RJ3, RJ4], 0, id="no jobs match the success policy"),
        pytest.param(
            [], [RJ1, RJ2], 2, id="empty target replicated jobs, all job matches the success policy"
        ),
    ],
)
def test_num_jobs_matching_success_policy(targets: list[str], job_rjobs: list[str], expected: int) -> None:
    assert num_jobs_matching_success_policy(_js(targets=targets), [_job(r) for r in job_rjobs]) == expected


@pytest.mark.parametrize(
    ("js", "expected"),
    [
        pytest.param(_js("Any"), 1, id="any job completion fulfills success policy"),
        pytest.param(
            _js("All", [RJ1, RJ2], {RJ1: 1, RJ2: 2}), 3, id="all replicated jobs match success policy"
        ),
        pytest.param(
            _js("All", [RJ1, RJ3], {RJ1: 1, RJ2: 2, RJ3: 3}),
            4,
            id="some replicated jobs don't match success policy",
        ),
        pytest.param(_js("All", None, {RJ1: 1, RJ2: 2}), 3, id="no targets means every replicated job"),
    ],
)
def test_num_jobs_expected_to_succeed(js: Obj, expected: int) -> None:
    assert num_jobs_expected_to_succeed(js) == expected


def test_execute_success_policy_completes_when_enough_targets_succeeded() -> None:
    js = _js("All", [RJ2], {RJ1: 1, RJ2: 2})
    opts = StatusUpdate(now="2025-01-01T00:00:07Z")
    assert execute_success_policy(js, [_job(RJ1), _job(RJ2)], opts) is False
    assert opts.should_update is False
    assert "conditions" not in js.get("status", {})

    assert execute_success_policy(js, [_job(RJ2), _job(RJ2)], opts) is True
    assert js["status"]["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "lastTransitionTime": "2025-01-01T00:00:07Z",
            "reason": "AllJobsCompleted",
            "message": "jobset completed successfully",
        }
    ]
    assert js["status"]["terminalState"] == "Completed"
    assert [(e.event_type, e.reason, e.message) for e in opts.events] == [
        ("Normal", "AllJobsCompleted", "jobset completed successfully")
    ]


def test_execute_success_policy_flips_an_existing_restarting_condition() -> None:
    js = _js("Any", None, {RJ1: 1})
    js["status"] = {
        "conditions": [
            {
                "type": "RestartingJobSet",
                "status": "True",
                "lastTransitionTime": "x",
                "reason": "DefaultFailurePolicy",
                "message": "m",
            }
        ]
    }
    opts = StatusUpdate(now="2025-01-01T00:00:07Z")
    assert execute_success_policy(js, [_job(RJ1)], opts)
    restarting = js["status"]["conditions"][0]
    assert (restarting["status"], restarting["reason"], restarting["message"]) == (
        "False",
        "JobSetCompleted",
        "jobset completed successfully",
    )
    assert [e.reason for e in opts.events] == ["AllJobsCompleted", "JobSetCompleted"]


def test_all_with_zero_target_replicas_completes_on_any_success() -> None:
    js = _js("All", [RJ2], {RJ1: 1, RJ2: 0})
    assert execute_success_policy(js, [_job(RJ1)], StatusUpdate(now="t"))


def test_nil_success_policy_is_the_recovered_nil_pointer_panic() -> None:
    js = _js()
    del js["spec"]["successPolicy"]
    with pytest.raises(ApiError, match="nil pointer dereference"):
        execute_success_policy(js, [_job(RJ1)], StatusUpdate(now="t"))
