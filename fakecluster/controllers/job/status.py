"""Job status vocabulary: conditions, reasons and messages, the pod-failure back-off record, and the
wire form of ``JobStatus``.

Reasons and messages are verbatim from ``pkg/controller/job/job_controller.go`` (1.31+, where
``CompletionsReached`` was added); JobSet matches on them (``onJobFailureReasons``). The back-off record
reproduces ``backoff_utils.go``: it lives in the controller's memory only, so a controller restart
forgets it, as upstream does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fakecluster.api.objects import Obj

# Condition types (batch/v1 JobConditionType).
SUSPENDED = "Suspended"
COMPLETE = "Complete"
FAILED = "Failed"
FAILURE_TARGET = "FailureTarget"
SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"

# Reasons and messages.
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
MAX_FAILED_INDEXES_EXCEEDED = ("MaxFailedIndexesExceeded",
                               "Job has exceeded the specified maximal number of failed indexes")
FAILED_INDEXES = ("FailedIndexes", "Job has failed indexes")
POD_FAILURE_POLICY = "PodFailurePolicy"
SUCCESS_POLICY = "SuccessPolicy"
COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
JOB_SUSPENDED = ("JobSuspended", "Job suspended")
JOB_RESUMED = ("JobResumed", "Job resumed")

DEFAULT_POD_FAILURE_BACKOFF = 10.0
"""``DefaultJobPodFailureBackOff``."""
MAX_POD_FAILURE_BACKOFF = 600.0
"""``MaxJobPodFailureBackOff`` (10 min; the docs' "six minutes" is the pre-1.28 cap)."""

_OMIT_WHEN_EMPTY = frozenset({"active", "succeeded", "failed", "conditions", "completedIndexes"})
"""``int32`` fields tagged ``omitempty`` (``ready`` and ``terminating`` are pointers and always written),
and the lists and strings dropped when empty."""


def new_condition(cond_type: str, status: str, reason: str, message: str, now: str) -> Obj:
    """``newCondition``: ``lastProbeTime`` and ``lastTransitionTime`` are both *now*."""
    return {"type": cond_type, "status": status, "lastProbeTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


def find_condition(conditions: Sequence[Obj] | None, cond_type: str) -> Obj | None:
    for cond in conditions or ():
        if cond.get("type") == cond_type:
            return cond
    return None


def condition_is_true(conditions: Sequence[Obj] | None, cond_type: str) -> bool:
    cond = find_condition(conditions, cond_type)
    return cond is not None and cond.get("status") == "True"


def is_finished(job: Obj) -> bool:
    """``util.IsJobFinished``: a ``Complete`` or ``Failed`` condition is ``True``."""
    conditions = (job.get("status") or {}).get("conditions")
    return condition_is_true(conditions, COMPLETE) or condition_is_true(conditions, FAILED)


def ensure_condition_status(
    conditions: list[Obj], cond_type: str, status: str, reason: str, message: str, *, now: str
) -> bool:
    """``ensureJobConditionStatus``: replace a differing condition of that type, or append one, but
    never append a ``False`` condition ("going from nothing to false is meaningless").

    ``conditions`` is the caller's own list; its elements may be shared snapshots, so a changed
    condition is replaced by a new dict rather than edited. Returns whether the list changed.
    """
    for i, cond in enumerate(conditions):
        if cond.get("type") == cond_type:
            if cond.get("status") != status or cond.get("reason") != reason or cond.get("message") != message:
                conditions[i] = new_condition(cond_type, status, reason, message, now)
                return True
            return False
    if status != "False":
        conditions.append(new_condition(cond_type, status, reason, message, now))
        return True
    return False


def wire_status(status: Obj) -> Obj:
    """The ``JobStatus`` as the API server would store it: zero ``omitempty`` fields dropped, empty
    lists dropped, ``uncountedTerminatedPods`` kept (as ``{}`` when empty) once the controller set it.

    A new dict, and so are ``conditions`` and ``uncountedTerminatedPods`` with its lists (copies): the
    caller may hand it over to the API server while it goes on changing ``status``; what else it holds
    (numbers, strings, conditions) is never changed, only replaced."""
    out = {k: v for k, v in status.items() if v is not None and (v or k not in _OMIT_WHEN_EMPTY)}
    conditions = out.get("conditions")
    if conditions is not None:
        out["conditions"] = list(conditions)
    uncounted = out.get("uncountedTerminatedPods")
    if uncounted is not None:
        out["uncountedTerminatedPods"] = {k: list(v) for k, v in uncounted.items() if v}
    return out


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """``backoffRecord``: consecutive failures since the last success and when the last one finished."""

    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def advanced(self, succeeded_times: Sequence[float], failed_times: Sequence[float]) -> BackoffRecord:
        """``newBackoffRecord``: fold in the finish times of newly terminated pods. A success resets the
        count to the failures that finished strictly after the latest success."""
        if not succeeded_times:
            if not failed_times:
                return self
            return BackoffRecord(self.failures_after_last_success + len(failed_times), max(failed_times))
        last_success = max(succeeded_times)
        later = sorted(t for t in failed_times if t > last_success)
        return BackoffRecord(len(later), later[-1] if later else None)

    def remaining(self, now: float) -> float:
        """``getRemainingTime``: ``10 s * 2^(n-1)`` capped at 10 min, minus the time since the last
        failure; 0 when it has elapsed."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        backoff = DEFAULT_POD_FAILURE_BACKOFF
        for _ in range(1, self.failures_after_last_success):
            backoff *= 2
            if backoff >= MAX_POD_FAILURE_BACKOFF:
                backoff = MAX_POD_FAILURE_BACKOFF
                break
        elapsed = now - self.last_failure_time
        return 0.0 if backoff < elapsed else backoff - elapsed


NO_BACKOFF = BackoffRecord()
"""The record of a Job without one (no failure since the last success): shared, as records are frozen,
rather than built for each sync of such a Job."""
