"""Tests for :mod:`jobset.controller.failure_policy`, mirroring upstream ``failure_policy_test.go``
(first failed job, rule matching, rule-and-job search, action appliers) plus ``executeFailurePolicy``."""

from __future__ import annotations

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.clock import rfc3339
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import StatusUpdate
from jobset.controller.failure_policy import (
    apply_failure_policy_rule_action,
    execute_failure_policy,
    find_first_failed_job,
    find_first_failed_policy_rule_and_job,
    rule_is_applicable,
)

NOW = "2025-01-01T12:00:00Z"
BACKOFF = "BackoffLimitExceeded"
DEADLINE = "DeadlineExceeded"
FAILED_INDEXES = "FailedIndexes"
RJ1, RJ2 = "test-replicated-job-1", "test-replicated-job-2"


def failed_job(
    name: str,
    hours_ago: float = 0,
    reason: str = "",
    rjob: str | None = None,
    *,
    message: str = "",
    index: int | None = None,
) -> Obj:
    """``jobWithFailedConditionAndOpts``: a Job whose Failed condition is ``hours_ago`` before noon."""
    labels: Obj = {}
    if rjob is not None:
        labels[api.REPLICATED_JOB_NAME_KEY] = rjob
    if index is not None:
        labels[api.JOB_INDEX_KEY] = str(index)
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": reason,
                    "message": message,
                    "lastTransitionTime": rfc3339(12 * 3600 - hours_ago * 3600),
                }
            ]
        },
    }


def jobset(
    failure_policy: Obj | None = None, status: Obj | None = None, rjobs: dict[str, int] | None = None
) -> Obj:
    spec: Obj = {
        "replicatedJobs": [{"name": n, "replicas": r, "template": {}} for n, r in (rjobs or {}).items()]
    }
    if failure_policy is not None:
        spec["failurePolicy"] = failure_policy
    return {"metadata": {"name": "test-js", "namespace": "default"}, "spec": spec, "status": status or {}}


def _names(jobs: list[Obj | None]) -> list[str | None]:
    return [None if j is None else j["metadata"]["name"] for j in jobs]


@pytest.mark.parametrize(
    ("jobs", "expected"),
    [
        pytest.param([], None, id="No failed jobs"),
        pytest.param([failed_job("job1", 1)], "job1", id="Single failed job"),
        pytest.param(
            [failed_job("job1", 3), failed_job("job2", 5)], "job2", id="Multiple failed jobs, earliest first"
        ),
        pytest.param(
            [{"metadata": {"name": "job1"}}, {"metadata": {"name": "job2"}}],
            None,
            id="Jobs without failed condition",
        ),
        pytest.param([failed_job("job1", 2), failed_job("job2", 2)], "job1", id="tie keeps list order"),
    ],
)
def test_find_first_failed_job(jobs: list[Obj], expected: str | None) -> None:
    assert _names([find_first_failed_job(jobs)]) == [expected]


def _rule(
    reasons: list[str] | None = None, targets: list[str] | None = None, patterns: list[str] | None = None
) -> Obj:
    rule: Obj = {"name": "r", "action": "RestartJobSet"}
    if reasons is not None:
        rule["onJobFailureReasons"] = reasons
    if targets is not None:
        rule["targetReplicatedJobs"] = targets
    if patterns is not None:
        rule["onJobFailureMessagePatterns"] = patterns
    return rule


@pytest.mark.parametrize(
    ("rule", "job_rjob", "reason", "message", "expected"),
    [
        pytest.param(_rule([], []), RJ1, BACKOFF, "", True, id="all parents, all reasons"),
        pytest.param(_rule([BACKOFF], []), RJ1, BACKOFF, "", True, id="all parents, matching reason"),
        pytest.param(_rule([BACKOFF], []), RJ1, DEADLINE, "", False, id="all parents, other reason"),
        pytest.param(_rule([], [RJ1]), RJ1, BACKOFF, "", True, id="matching parent, all reasons"),
        pytest.param(_rule([BACKOFF], [RJ1]), RJ1, BACKOFF, "", True, id="matching parent, matching reason"),
        pytest.param(_rule([BACKOFF], [RJ1]), RJ1, DEADLINE, "", False, id="matching parent, other reason"),
        pytest.param(_rule([], [RJ1]), RJ2, BACKOFF, "", False, id="other parent, all reasons"),
        pytest.param(_rule([BACKOFF], [RJ1]), RJ2, BACKOFF, "", False, id="other parent, matching reason"),
        pytest.param(_rule([BACKOFF], [RJ1]), RJ2, DEADLINE, "", False, id="other parent, other reason"),
        pytest.param(_rule(patterns=["^job failed because.*"]), RJ1, "", "job failed because of a bug", True,
                     id="matches the message pattern"),
        pytest.param(_rule(patterns=["^job failed because.*"]), RJ1, "", "another error message", False,
                     id="does not match the message pattern"),
        pytest.param(_rule([BACKOFF], patterns=[".*bug.*"]), RJ1, BACKOFF, "job failed because of a bug",
                     True, id="matches both reason and message pattern"),
        pytest.param(_rule([BACKOFF], patterns=[".*bug.*"]), RJ1, BACKOFF, "job failed due to something else",
                     False, id="matches reason but not message pattern"),
        pytest.param(_rule(patterns=["bug"]), RJ1, "", "a bug here", True, id="pattern search is unanchored"),
        pytest.param(
            _rule(patterns=["(", "bug"]), RJ1, "", "a bug here", True, id="invalid pattern is skipped"
        ),
        pytest.param(_rule(patterns=["("]), RJ1, "", "(", False, id="only an invalid pattern never matches"),
        pytest.param(
            _rule([], []), None, BACKOFF, "", False, id="job without a replicated job label never matches"
        ),
    ],
)
def test_rule_is_applicable(
    rule: Obj, job_rjob: str | None, reason: str, message: str, expected: bool
) -> None:
    assert rule_is_applicable(rule, failed_job("test-job", rjob=job_rjob), reason, message) is expected


RJOB = "test-replicatedJob"
JOB1 = failed_job("job1", 6, BACKOFF, RJOB)
JOB1_EARLIER = failed_job("job1DupEarlierFailure", 12, BACKOFF, RJOB)
JOB2 = failed_job("job2", 3, DEADLINE, RJOB)
JOB3 = failed_job("job3", 1, FAILED_INDEXES, RJOB)
RULE1, RULE2, RULE3 = (
    _rule([r]) | {"name": f"rule{i}"} for i, r in enumerate((BACKOFF, DEADLINE, FAILED_INDEXES), 1)
)
UNMATCHED = _rule(targets=["fakeReplicatedJobName"]) | {"name": "unmatched"}


@pytest.mark.parametrize(
    ("rules", "jobs", "expected_rule", "expected_job"),
    [
        pytest.param([], [], None, None, id="0 failed jobs, 0 rules"),
        pytest.param([], [JOB1], None, None, id="1 failed job, 0 rules"),
        pytest.param([RULE2], [JOB1], None, None, id="1 failed job, 1 non-matching rule"),
        pytest.param([RULE1, RULE2, RULE3], [JOB1], "rule1", "job1", id="matches the first rule"),
        pytest.param([RULE1, RULE2, RULE3], [JOB2], "rule2", "job2", id="matches the second rule"),
        pytest.param([RULE1, RULE2, RULE3], [JOB3], "rule3", "job3", id="matches the third rule"),
        pytest.param([], [JOB1, JOB2], None, None, id="2 failed jobs, 0 rules"),
        pytest.param([RULE2], [JOB1, JOB1_EARLIER], None, None, id="2 failed jobs, rule matches neither"),
        pytest.param(
            [RULE1],
            [JOB1, JOB1_EARLIER],
            "rule1",
            "job1DupEarlierFailure",
            id="rule matches both, earliest failure returned",
        ),
        pytest.param(
            [UNMATCHED, RULE1],
            [JOB1, JOB1_EARLIER],
            "rule1",
            "job1DupEarlierFailure",
            id="first rule matches none, second matches both",
        ),
        pytest.param(
            [RULE3, RULE1], [JOB1_EARLIER, JOB3], "rule3", "job3", id="rule order beats failure time"
        ),
    ],
)
def test_find_first_failed_policy_rule_and_job(
    rules: list[Obj], jobs: list[Obj], expected_rule: str | None, expected_job: str | None
) -> None:
    rule, job = find_first_failed_policy_rule_and_job(rules, jobs)
    assert (None if rule is None else rule["name"]) == expected_rule
    assert _names([job]) == [expected_job]


FAILED = failed_job("failed-job", 0)
FAILED_WITH_LABELS = failed_job("failed-job", 0, rjob="rjob", index=0)


def _rjs(restarts: list[int], counted: list[int]) -> list[Obj]:
    return [
        {
            "name": "rjob",
            "ready": 0,
            "succeeded": 0,
            "failed": 0,
            "active": 0,
            "suspended": 0,
            "jobRestarts": restarts,
            "jobRestartsCountTowardsMax": counted,
        }
    ]


def _at_max() -> Obj:
    """A JobSet status at its limit of two restarts, one of them a counted Job restart (each case mutates
    its own copy)."""
    return {"restarts": 1, "restartsCountTowardsMax": 1, "replicatedJobsStatus": _rjs([1], [1])}


# (RestartJob gate, JobSet, failed Job, matched rule, action, status after, conditions after)
APPLY_CASES = [
    pytest.param(False, jobset({}), FAILED, None, "FailJobSet", {"terminalState": "Failed"},
                 [("Failed", "True", "FailJobSetFailurePolicyAction")], id="FailJobSet"),
    pytest.param(True, jobset({"maxRestarts": 5}, {"restarts": 1, "restartsCountTowardsMax": 1}), FAILED,
                 None, "RestartJobSet", {"restarts": 2, "restartsCountTowardsMax": 2},
                 [("RestartingJobSet", "True", "DefaultFailurePolicy")], id="RestartJobSet under max"),
    pytest.param(True, jobset({"maxRestarts": 5}, {"restarts": 1, "restartsCountTowardsMax": 1}), FAILED,
                 {"name": "Rule1", "action": "RestartJobSet"}, "RestartJobSet",
                 {"restarts": 2, "restartsCountTowardsMax": 2},
                 [("RestartingJobSet", "True", "FailurePolicy_Rule1")], id="RestartJobSet with rule reason"),
    pytest.param(True, jobset({"maxRestarts": 2}, {"restarts": 2, "restartsCountTowardsMax": 2}), FAILED,
                 None, "RestartJobSet",
                 {"restarts": 2, "restartsCountTowardsMax": 2, "terminalState": "Failed"},
                 [("Failed", "True", "ReachedMaxRestarts")], id="RestartJobSet at max fails"),
    pytest.param(True, jobset({"maxRestarts": 1}, {"restarts": 1, "restartsCountTowardsMax": 1}), FAILED,
                 None, "RestartJobSetAndIgnoreMaxRestarts", {"restarts": 2, "restartsCountTowardsMax": 1},
                 [("RestartingJobSet", "True", "DefaultFailurePolicy")], id="IgnoreMaxRestarts not counted"),
    pytest.param(True, jobset({"maxRestarts": 5}, {"replicatedJobsStatus": _rjs([0], [0])}, {"rjob": 1}),
                 FAILED_WITH_LABELS, None, "RestartJob", {"replicatedJobsStatus": _rjs([1], [1])}, [],
                 id="RestartJob under max"),
    *(
        pytest.param(True, jobset({"maxRestarts": 2}, _at_max(), {"rjob": 1}), FAILED_WITH_LABELS, None,
                     action, {**_at_max(), "terminalState": "Failed"},
                     [("Failed", "True", "ReachedMaxRestarts")], id=name)
        for action, name in [
            ("RestartJob", "RestartJob at max"),
            ("RestartJobSet", "RestartJobSet counts individual restarts with the gate"),
        ]
    ),
    pytest.param(True, jobset({"maxRestarts": 1}, {"replicatedJobsStatus": _rjs([1], [0])}, {"rjob": 1}),
                 FAILED_WITH_LABELS, None, "RestartJobAndIgnoreMaxRestarts",
                 {"replicatedJobsStatus": _rjs([2], [0])}, [], id="RestartJobAndIgnoreMaxRestarts"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("gate", "js", "job", "rule", "action", "expected_status", "expected_conditions"), APPLY_CASES
)
def test_apply_failure_policy_rule_action(  # noqa: PLR0917 - one argument per column of the upstream table
    gate: bool,
    js: Obj,
    job: Obj,
    rule: Obj | None,
    action: str,
    expected_status: Obj,
    expected_conditions: list[tuple[str, str, str]],
) -> None:
    opts = StatusUpdate(now=NOW)
    apply_failure_policy_rule_action(js, job, rule, opts, action, restart_job=gate)
    assert opts.should_update
    status = dict(js["status"])
    conditions = status.pop("conditions", [])
    assert status == expected_status
    assert sorted((c["type"], c["status"], c["reason"]) for c in conditions) == expected_conditions


def test_without_policy_fails_naming_the_earliest_failed_job() -> None:
    js = jobset(
        None,
        {
            "conditions": [
                {
                    "type": "RestartingJobSet",
                    "status": "True",
                    "lastTransitionTime": NOW,
                    "reason": "DefaultFailurePolicy",
                    "message": "m",
                }
            ]
        },
    )
    opts = StatusUpdate(now=NOW)
    execute_failure_policy(js, [failed_job("js-a-0", 1), failed_job("js-a-1", 2)], opts)
    assert js["status"]["terminalState"] == "Failed"
    assert js["status"]["conditions"] == [
        {
            "type": "RestartingJobSet",
            "status": "False",
            "lastTransitionTime": NOW,
            "reason": "JobSetFailed",
            "message": "jobset failed",
        },
        {
            "type": "Failed",
            "status": "True",
            "lastTransitionTime": NOW,
            "reason": "FailedJobs",
            "message": "jobset failed due to one or more job failures (first failed job: js-a-1)",
        },
    ]
    assert [(e.event_type, e.reason) for e in opts.events] == [
        ("Warning", "FailedJobs"),
        ("Normal", "JobSetFailed"),
    ]


def test_no_matching_rule_restarts_with_the_earliest_failed_job_and_queues_both_events() -> None:
    js = jobset({"maxRestarts": 3, "rules": [_rule([DEADLINE]) | {"action": "FailJobSet"}]})
    opts = StatusUpdate(now=NOW)
    execute_failure_policy(
        js, [failed_job("js-a-0", 1, BACKOFF, "a"), failed_job("js-b-0", 2, BACKOFF, "b")], opts
    )
    message = "applying RestartJobSet failure policy action (first failed job: js-b-0)"
    assert js["status"] == {
        "restarts": 1,
        "restartsCountTowardsMax": 1,
        "conditions": [
            {
                "type": "RestartingJobSet",
                "status": "True",
                "lastTransitionTime": NOW,
                "reason": "DefaultFailurePolicy",
                "message": message,
            }
        ],
    }
    assert [(e.event_type, e.reason, e.message) for e in opts.events] == [
        ("Warning", "DefaultFailurePolicy", message),
        ("Warning", "RestartJobSetFailurePolicyAction", message),
    ]


def test_matching_rule_actions_name_the_rule_and_the_matched_job() -> None:
    rules = [
        _rule(["PodFailurePolicy"]) | {"name": "fatal", "action": "FailJobSet"},
        _rule(targets=["b"]) | {"name": "retry", "action": "RestartJobSetAndIgnoreMaxRestarts"},
    ]
    js = jobset({"rules": rules})
    opts = StatusUpdate(now=NOW)
    execute_failure_policy(
        js, [failed_job("js-a-0", 3, BACKOFF, "a"), failed_job("js-b-0", 1, BACKOFF, "b")], opts
    )
    message = "applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: js-b-0)"
    assert js["status"]["restarts"] == 1
    assert "restartsCountTowardsMax" not in js["status"]
    assert [(e.reason, e.message) for e in opts.events] == [
        ("FailurePolicy_retry", message),
        ("RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction", message),
    ]

    fatal = jobset({"rules": rules})
    execute_failure_policy(fatal, [failed_job("js-a-0", 3, "PodFailurePolicy", "a")], StatusUpdate(now=NOW))
    assert fatal["status"]["conditions"][0]["message"] == (
        "applying FailJobSet failure policy action (first failed job: js-a-0)"
    )


def test_empty_failure_policy_means_zero_restarts() -> None:
    js = jobset({})
    opts = StatusUpdate(now=NOW)
    execute_failure_policy(js, [failed_job("js-a-0", 1, BACKOFF, "a")], opts)
    assert js["status"]["conditions"][-1]["reason"] == "ReachedMaxRestarts"
    assert js["status"]["conditions"][-1]["message"] == (
        "jobset failed due to reaching max number of restarts (first failed job: js-a-0)"
    )


@pytest.mark.parametrize("action", ["RestartJob", "RestartJobAndIgnoreMaxRestarts"])
def test_restart_job_actions_need_the_gate(action: str) -> None:
    js = jobset({"maxRestarts": 3, "rules": [{"name": "r", "action": action}]})
    with pytest.raises(ApiError) as err:
        execute_failure_policy(js, [failed_job("js-a-0", 1, BACKOFF, "a", index=0)], StatusUpdate(now=NOW))
    assert err.value.message == (
        f"{action} failure policy action cannot be used when the feature gate RestartJob is disabled"
    )
    assert js["status"] == {}


def test_restart_job_creates_the_restart_arrays_from_replicas() -> None:
    js = jobset({"maxRestarts": 3, "rules": [{"name": "r", "action": "RestartJob"}]}, rjobs={"a": 3})
    js["status"]["replicatedJobsStatus"] = [
        {"name": "a", "ready": 0, "succeeded": 0, "failed": 1, "active": 0, "suspended": 0}
    ]
    opts = StatusUpdate(now=NOW)
    execute_failure_policy(js, [failed_job("js-a-2", 1, BACKOFF, "a", index=2)], opts, restart_job=True)
    entry = js["status"]["replicatedJobsStatus"][0]
    assert (entry["jobRestarts"], entry["jobRestartsCountTowardsMax"]) == ([0, 0, 1], [0, 0, 1])
    assert "conditions" not in js["status"]
    assert [(e.reason, e.message) for e in opts.events] == [
        (
            "RestartJobFailurePolicyAction",
            "applying RestartJob failure policy action (first failed job: js-a-2)",
        )
    ]
