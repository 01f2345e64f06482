"""The failure policy: port of upstream ``pkg/controllers/failure_policy.go``.

It runs only when the current run has a failed Job. Without ``spec.failurePolicy`` the JobSet fails at
once (``FailedJobs``). With one, the rules are tried in order; a rule applies to a failed Job when its
``onJobFailureReasons`` contains the Job's ``Failed`` reason, one of its ``onJobFailureMessagePatterns``
matches the message (an unanchored search; invalid patterns are skipped), and its
``targetReplicatedJobs`` contains the Job's ReplicatedJob (empty lists match anything). The first rule
with a matching Job wins, with the earliest-failed such Job; if none matches, ``RestartJobSet`` applies
to the earliest-failed Job. A global restart only bumps ``status.restarts``: the next reconciles classify
the old Jobs as ``previous``, delete them and recreate the names.

Go's ``regexp`` is RE2 and Python's ``re`` is a backtracking engine: patterns valid in both (the usual
case) match identically; RE2-only syntax fails to compile here and is skipped as invalid.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from fakecluster.api.objects import Obj
from fakecluster.clock import parse_rfc3339
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import (
    ConditionOpts,
    EventParams,
    StatusUpdate,
    set_condition,
    set_restarting_condition_false,
)
from jobset.controller.errors import NIL_POINTER_PANIC, ReconcileError
from jobset.controller.events import EVENT_TYPE_WARNING
from jobset.controller.spec import failure_policy, labels_of, replicas, replicated_jobs, status_of

Applier = Callable[[Obj, Obj, Obj | None, StatusUpdate, bool], None]
"""``failurePolicyActionApplier``: (jobset, matched failed Job, matched rule or None, opts, RestartJob
gate)."""

DEFAULT_FAILURE_POLICY_RULE_ACTION = api.RESTART_JOBSET
"""``defaultFailurePolicyRuleAction``, from the Configurable Failure Policy KEP."""


def execute_failure_policy(
    js: Obj, failed: list[Obj], opts: StatusUpdate, *, restart_job: bool = False
) -> None:
    """``executeFailurePolicy`` (upstream passes all owned Jobs and reads ``ownedJobs.failed``)."""
    policy = failure_policy(js)
    if policy is None:
        first = find_first_failed_job(failed)
        message = message_with_first_failed_job(api.FAILED_JOBS_MESSAGE, _name(first))
        set_jobset_failed_condition(js, api.FAILED_JOBS_REASON, message, opts)
        return
    rule, job = find_first_failed_policy_rule_and_job(policy.get("rules") or [], failed)
    if rule is None:
        action = DEFAULT_FAILURE_POLICY_RULE_ACTION
        job = find_first_failed_job(failed)
    else:
        action = rule.get("action", "")
    apply_failure_policy_rule_action(js, job, rule, opts, action, restart_job=restart_job)


def _name(job: Obj | None) -> str:
    if job is None:
        raise ReconcileError(NIL_POINTER_PANIC)
    return job["metadata"]["name"]


def find_first_failed_policy_rule_and_job(
    rules: list[Obj], failed: list[Obj]
) -> tuple[Obj | None, Obj | None]:
    """``findFirstFailedPolicyRuleAndJob``: the first rule with an applicable failed Job, and the
    earliest-failed such Job (strictly earlier wins; ties keep list order). (None, None) if no rule
    applies."""
    for rule in rules:
        matched = _earliest_failed_job(failed, rule)
        if matched is not None:
            return rule, matched
    return None, None


def rule_is_applicable(rule: Obj, failed_job: Obj, reason: str, message: str) -> bool:
    """``ruleIsApplicable``: reason AND message pattern AND target ReplicatedJob (empty lists match all).

    A Job without a ReplicatedJob label never matches.
    """
    reasons = rule.get("onJobFailureReasons") or []
    if reasons and reason not in reasons:
        return False
    patterns = rule.get("onJobFailureMessagePatterns") or []
    if patterns and not any_match_found(patterns, message):
        return False
    parent = labels_of(failed_job).get(api.REPLICATED_JOB_NAME_KEY) or ""
    if not parent:
        return False
    targets = rule.get("targetReplicatedJobs") or []
    return not targets or parent in targets


@cache
def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # an invalid pattern is skipped silently here, logged upstream
    return options


def any_match_found(patterns: list[str], message: str) -> bool:
    """``anyMatchFound``: ``regexp.MatchString`` is an unanchored search; invalid patterns are skipped.

    Go's ``regexp`` is RE2, so we match with RE2 too (google-re2): POSIX classes such as ``[[:digit:]]``
    work and Perl-only syntax such as lookahead is invalid, exactly as upstream. google-re2 is imported
    here, by the first rule with message patterns: a run without one never needs it (9 M instructions
    of every run's start).
    """
    if not patterns:
        return False
    import re2

    for pattern in patterns:
        try:
            if re2.compile(pattern, _re2_options()).search(message) is not None:
                return True
        except re2.error:
            continue
    return False


def apply_failure_policy_rule_action(
    js: Obj, job: Obj | None, rule: Obj | None, opts: StatusUpdate, action: str, *, restart_job: bool = False
) -> None:
    """``applyFailurePolicyRuleAction``: dispatch to the action's applier."""
    applier = ACTION_APPLIERS.get(action)
    if applier is None:
        raise ReconcileError(
            f"failed to find a corresponding action for the FailurePolicyRuleAction {action}"
        )
    if job is None:
        raise ReconcileError(NIL_POINTER_PANIC)
    applier(js, job, rule, opts, restart_job)


def _max_restarts(js: Obj) -> int:
    return int((failure_policy(js) or {}).get("maxRestarts") or 0)


def _restarting_reason(rule: Obj | None) -> str:
    if rule is None:
        return api.RESTARTING_JOBSET_REASON_DEFAULT_FAILURE_POLICY
    return api.RESTARTING_JOBSET_REASON_FAILURE_POLICY_FORMAT % (rule.get("name") or "")


def fail_jobset_action_applier(
    js: Obj, job: Obj, rule: Obj | None, opts: StatusUpdate, restart_job: bool
) -> None:
    """``failJobSetActionApplier``."""
    message = message_with_first_failed_job(api.FAIL_JOBSET_ACTION_MESSAGE, _name(job))
    set_jobset_failed_condition(js, api.FAIL_JOBSET_ACTION_REASON, message, opts)


def _fail_at_max_restarts(js: Obj, job: Obj, opts: StatusUpdate) -> None:
    """The restart budget is used up: the JobSet fails with ``ReachedMaxRestarts``."""
    message = message_with_first_failed_job(api.REACHED_MAX_RESTARTS_MESSAGE, _name(job))
    set_jobset_failed_condition(js, api.REACHED_MAX_RESTARTS_REASON, message, opts)


def _require_restart_job_gate(action: str, restart_job: bool) -> None:
    if not restart_job:
        raise ReconcileError(
            f"{action} failure policy action cannot be used when the feature gate RestartJob is disabled"
        )


def restart_jobset_action_applier(
    js: Obj, job: Obj, rule: Obj | None, opts: StatusUpdate, restart_job: bool
) -> None:
    """``restartJobSetActionApplier``: fail with ``ReachedMaxRestarts`` once the budget is used up."""
    status = status_of(js)
    counted = int(status.get("restartsCountTowardsMax") or 0)
    if (
        restart_job and total_restarts_count_towards_max(js) >= _max_restarts(js)
    ) or counted >= _max_restarts(js):
        _fail_at_max_restarts(js, job, opts)
        return
    message = message_with_first_failed_job(api.RESTART_JOBSET_ACTION_MESSAGE, _name(job))
    event = EventParams(EVENT_TYPE_WARNING, api.RESTART_JOBSET_ACTION_REASON, message)
    failure_policy_recreate_all(js, True, opts, event, reason=_restarting_reason(rule), message=message)


def restart_jobset_and_ignore_max_restarts_action_applier(
    js: Obj, job: Obj, rule: Obj | None, opts: StatusUpdate, restart_job: bool
) -> None:
    """``restartJobSetAndIgnoreMaxRestartsActionApplier``: no budget check, not counted towards max."""
    message = message_with_first_failed_job(
        api.RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS_ACTION_MESSAGE, _name(job)
    )
    event = EventParams(EVENT_TYPE_WARNING, api.RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS_ACTION_REASON, message)
    failure_policy_recreate_all(js, False, opts, event, reason=_restarting_reason(rule), message=message)


def failure_policy_recreate_all(
    js: Obj, count_towards_max: bool, opts: StatusUpdate, event: EventParams, *, reason: str, message: str
) -> None:
    """``failurePolicyRecreateAll``: bump the restart counters, set ``RestartingJobSet=True`` (its own
    Warning event) and queue the action event."""
    status = status_of(js)
    status["restarts"] = int(status.get("restarts") or 0) + 1
    if count_towards_max:
        status["restartsCountTowardsMax"] = int(status.get("restartsCountTowardsMax") or 0) + 1
    opts.should_update = True
    set_condition(js, ConditionOpts(EVENT_TYPE_WARNING, api.JOBSET_RESTARTING, "True", reason, message), opts)
    opts.enqueue_event(event)


def restart_job_action_applier(
    js: Obj, job: Obj, rule: Obj | None, opts: StatusUpdate, restart_job: bool
) -> None:
    """``restartJobActionApplier`` (RestartJob gate): recreate only this Job, counted towards max."""
    _require_restart_job_gate(api.RESTART_JOB, restart_job)
    if total_restarts_count_towards_max(js) >= _max_restarts(js):
        _fail_at_max_restarts(js, job, opts)
        return
    message = message_with_first_failed_job(api.RESTART_JOB_ACTION_MESSAGE, _name(job))
    failure_policy_recreate_job(
        js, job, True, opts, EventParams(EVENT_TYPE_WARNING, api.RESTART_JOB_ACTION_REASON, message)
    )


def restart_job_and_ignore_max_restarts_action_applier(
    js: Obj, job: Obj, rule: Obj | None, opts: StatusUpdate, restart_job: bool
) -> None:
    """``restartJobAndIgnoreMaxRestartsActionApplier`` (RestartJob gate)."""
    _require_restart_job_gate(api.RESTART_JOB_AND_IGNORE_MAX_RESTARTS, restart_job)
    message = message_with_first_failed_job(
        api.RESTART_JOB_AND_IGNORE_MAX_RESTARTS_ACTION_MESSAGE, _name(job)
    )
    event = EventParams(EVENT_TYPE_WARNING, api.RESTART_JOB_AND_IGNORE_MAX_RESTARTS_ACTION_REASON, message)
    failure_policy_recreate_job(js, job, False, opts, event)


def failure_policy_recreate_job(
    js: Obj, job: Obj, count_towards_max: bool, opts: StatusUpdate, event: EventParams
) -> None:
    """``failurePolicyRecreateJob``: bump ``jobRestarts[idx]`` (and ``jobRestartsCountTowardsMax[idx]``)
    of the failed Job's ReplicatedJob. No ``RestartingJobSet`` condition."""
    name = job["metadata"]["name"]
    labels = labels_of(job)
    rjob_name = labels.get(api.REPLICATED_JOB_NAME_KEY)
    if rjob_name is None:
        raise ReconcileError(f"failed job {name} missing {api.REPLICATED_JOB_NAME_KEY} label")
    index_text = labels.get(api.JOB_INDEX_KEY)
    if index_text is None:
        raise ReconcileError(f"failed job {name} missing {api.JOB_INDEX_KEY} label")
    if not index_text.lstrip("+-").isdigit():
        raise ReconcileError(
            f"failed job {name} has invalid {api.JOB_INDEX_KEY} label: {index_text}: "
            f'strconv.Atoi: parsing "{index_text}": invalid syntax'
        )
    index = int(index_text)
    attempts = get_job_restarts(js, rjob_name)
    replicas = len(attempts)  # both messages give the length of jobRestarts as the replica count

    def bump(key: str, values: list[int]) -> None:
        if index >= len(values):
            raise ReconcileError(
                f"failed job {name} has index {index} out of bounds for replicated job {rjob_name} "
                f"(replicas: {replicas})"
            )
        values[index] += 1
        _set_status_list(js, rjob_name, key, values)

    bump("jobRestarts", attempts)
    if count_towards_max:
        bump("jobRestartsCountTowardsMax", get_job_restarts_count_towards_max(js, rjob_name))
    opts.should_update = True
    opts.enqueue_event(event)


ACTION_APPLIERS: dict[str, Applier] = {
    api.FAIL_JOBSET: fail_jobset_action_applier,
    api.RESTART_JOBSET: restart_jobset_action_applier,
    api.RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS: restart_jobset_and_ignore_max_restarts_action_applier,
    api.RESTART_JOB: restart_job_action_applier,
    api.RESTART_JOB_AND_IGNORE_MAX_RESTARTS: restart_job_and_ignore_max_restarts_action_applier,
}
"""``actionFunctionMap``."""


def set_jobset_failed_condition(js: Obj, reason: str, message: str, opts: StatusUpdate) -> None:
    """``setJobSetFailedCondition``: Failed=True (Warning), Restarting=False and ``terminalState``."""
    set_condition(js, ConditionOpts(EVENT_TYPE_WARNING, api.JOBSET_FAILED, "True", reason, message), opts)
    set_restarting_condition_false(
        js,
        api.RESTARTING_JOBSET_REASON_JOBSET_FAILED,
        api.RESTARTING_JOBSET_REASON_JOBSET_FAILED_MESSAGE,
        opts,
    )
    status_of(js)["terminalState"] = api.JOBSET_FAILED


def find_job_failure_condition(job: Obj | None) -> Obj | None:
    """``findJobFailureCondition``: the Job's ``Failed=True`` condition."""
    if job is None:
        return None
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Failed" and cond.get("status") == "True":
            return cond
    return None


def _time(condition: Obj) -> float:
    """``lastTransitionTime`` in virtual seconds; a missing time is Go's zero time, before everything."""
    value = condition.get("lastTransitionTime")
    return parse_rfc3339(value) if value else float("-inf")


def find_first_failed_job(failed: list[Obj]) -> Obj | None:
    """``findFirstFailedJob``: the Job whose ``Failed`` condition is oldest (strictly; ties keep list
    order)."""
    return _earliest_failed_job(failed, None)


def _earliest_failed_job(failed: list[Obj], rule: Obj | None) -> Obj | None:
    """The Job of ``failed`` whose ``Failed`` condition is oldest (strictly; ties keep list order), among
    those ``rule`` applies to if a rule is given (asked only of a Job that failed earlier than the best
    so far)."""
    first: Obj | None = None
    first_time = 0.0
    for job in failed:
        condition = find_job_failure_condition(job)
        if condition is None:
            continue
        failure_time = _time(condition)
        if (first is None or failure_time < first_time) and (
            rule is None
            or rule_is_applicable(rule, job, condition.get("reason", ""), condition.get("message", ""))
        ):
            first, first_time = job, failure_time
    return first


def message_with_first_failed_job(message: str, job_name: str) -> str:
    """``messageWithFirstFailedJob``."""
    return f"{message} (first failed job: {job_name})"


def _replicated_job_replicas(js: Obj, rjob_name: str) -> int:
    """``getReplicatedJobReplicas``."""
    return next((replicas(r) for r in replicated_jobs(js) if r.get("name") == rjob_name), 0)


def _status_list(js: Obj, rjob_name: str, key: str) -> list[int]:
    for entry in status_of(js).get("replicatedJobsStatus") or ():
        if entry.get("name") == rjob_name and entry.get(key):
            return [int(v) for v in entry[key]]
    return [0] * _replicated_job_replicas(js, rjob_name)


def _set_status_list(js: Obj, rjob_name: str, key: str, values: list[int]) -> None:
    for entry in status_of(js).get("replicatedJobsStatus") or ():
        if entry.get("name") == rjob_name:
            entry[key] = values
            return


def get_job_restarts(js: Obj, rjob_name: str) -> list[int]:
    """``getJobRestarts``: a copy of ``jobRestarts``, or ``replicas`` zeros when absent or empty."""
    return _status_list(js, rjob_name, "jobRestarts")


def get_job_restarts_count_towards_max(js: Obj, rjob_name: str) -> list[int]:
    """``getJobRestartsCountTowardsMax``."""
    return _status_list(js, rjob_name, "jobRestartsCountTowardsMax")


def total_restarts_count_towards_max(js: Obj) -> int:
    """``totalRestartsCountTowardsMax``: global plus individual restarts that count towards max."""
    status = status_of(js)
    individual = sum(
        int(v)
        for entry in status.get("replicatedJobsStatus") or ()
        for v in entry.get("jobRestartsCountTowardsMax") or ()
    )
    return int(status.get("restartsCountTowardsMax") or 0) + individual
