"""JobSet condition bookkeeping and the status-update options of one reconcile.

Port of ``setCondition`` / ``updateCondition`` / ``exclusiveConditions`` and the condition builders of
upstream ``pkg/controllers/jobset_controller.go``. The rules:

- a condition of a new type is appended only when its status is True, so every "False" condition the
  controller writes only flips an existing one;
- same type, other status: replaced whole, with a new ``lastTransitionTime``;
- same type and status, other reason or message: replaced, keeping the old ``lastTransitionTime``;
- ``StartupPolicyInProgress`` and ``StartupPolicyCompleted`` exclude each other: setting one True flips
  the other, if True, to False (only ``.status`` changes).

Every change queues one event (type from the caller, reason and message from the condition) that is
emitted only after the status write succeeds, as ``statusUpdateOpts`` does upstream.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.events import EVENT_TYPE_NORMAL
from jobset.controller.spec import status_of


@dataclass(frozen=True, slots=True)
class EventParams:
    """``eventParams``: an event queued until the status write succeeds (``object`` is always the JobSet)."""

    event_type: str
    reason: str
    message: str


@dataclass(slots=True)
class StatusUpdate:
    """``statusUpdateOpts``: whether to write the status at the end of the reconcile, and the events to
    emit once it is written.

    ``now`` is the reconcile's virtual time in ``metav1.Time`` form: upstream calls ``metav1.Now()`` in each
    setter, and a whole reconcile runs at one virtual instant.
    """

    now: str
    should_update: bool = False
    events: list[EventParams] = field(default_factory=list)

    def enqueue_event(self, event: EventParams) -> None:
        """``enqueueEvent``."""
        self.events.append(event)


@dataclass(frozen=True, slots=True)
class ConditionOpts:
    """``conditionOpts``: the condition to set and the type of the event its change emits."""

    event_type: str
    type: str
    status: str
    reason: str
    message: str


def set_condition(js: Obj, cond: ConditionOpts | None, opts: StatusUpdate) -> None:
    """``setCondition``: apply ``cond``; on a change, mark the status for update and queue its event."""
    if cond is None or not update_condition(js, cond, opts.now):
        return
    opts.should_update = True
    opts.enqueue_event(EventParams(cond.event_type, cond.reason, cond.message))


def update_condition(js: Obj, cond: ConditionOpts | None, now: str) -> bool:
    """``updateCondition``: mutate ``js.status.conditions`` in place; True if anything changed."""
    if cond is None:
        return False
    new: Obj = {
        "type": cond.type,
        "status": cond.status,
        "lastTransitionTime": now,
        "reason": cond.reason,
        "message": cond.message,
    }
    status = status_of(js)
    conditions: list[Obj] = status.get("conditions") or []
    found = False
    changed = False
    for i, current in enumerate(conditions):
        if current.get("type") == new["type"]:
            if current.get("status") != new["status"]:
                conditions[i] = dict(new)
                changed = True
            elif current.get("reason") != new["reason"] or current.get("message") != new["message"]:
                new["lastTransitionTime"] = current.get("lastTransitionTime")
                conditions[i] = dict(new)
                changed = True
            found = True
        elif (
            exclusive_conditions(current, new) and current.get("status") == "True" and new["status"] == "True"
        ):
            conditions[i] = dict(current, status="False")
            changed = True
    if not found and new["status"] == "True":
        conditions.append(new)
        changed = True
    if changed:
        status["conditions"] = conditions
    return changed


def exclusive_conditions(cond1: Obj, cond2: Obj) -> bool:
    """``exclusiveConditions``: the startup-policy pair, in either order."""
    pair = {cond1.get("type"), cond2.get("type")}
    return pair == {api.JOBSET_STARTUP_POLICY_IN_PROGRESS, api.JOBSET_STARTUP_POLICY_COMPLETED}


_COMPLETED = ConditionOpts(
    EVENT_TYPE_NORMAL, api.JOBSET_COMPLETED, "True", api.ALL_JOBS_COMPLETED_REASON,
    api.ALL_JOBS_COMPLETED_MESSAGE,
)
_SUSPENDED = ConditionOpts(
    EVENT_TYPE_NORMAL, api.JOBSET_SUSPENDED, "True", api.JOBSET_SUSPENDED_REASON, api.JOBSET_SUSPENDED_MESSAGE
)
_RESUMED = ConditionOpts(
    EVENT_TYPE_NORMAL, api.JOBSET_SUSPENDED, "False", api.JOBSET_RESUMED_REASON, api.JOBSET_RESUMED_MESSAGE
)
"""The fixed conditions, built once: a frozen dataclass's construction (``object.__setattr__`` per field)
cost as much as the ``updateCondition`` that reads it, and one is set two or three times a reconcile."""


def make_completed_condition_opts() -> ConditionOpts:
    """``makeCompletedConditionsOpts``."""
    return _COMPLETED


def make_suspended_condition_opts() -> ConditionOpts:
    """``makeSuspendedConditionOpts``."""
    return _SUSPENDED


def make_resumed_condition_opts() -> ConditionOpts:
    """``makeResumedConditionOpts``: flips an existing ``Suspended`` condition to False."""
    return _RESUMED


@functools.lru_cache(maxsize=64)
def restarting_condition_false(reason: str, message: str) -> ConditionOpts:
    """The ``RestartingJobSet=False`` condition of ``setRestartingConditionFalse`` (built once per reason and
    message: the callers pass constants)."""
    return ConditionOpts(EVENT_TYPE_NORMAL, api.JOBSET_RESTARTING, "False", reason, message)


def set_restarting_condition_false(js: Obj, reason: str, message: str, opts: StatusUpdate) -> None:
    """``setRestartingConditionFalse``: only ever flips an existing ``RestartingJobSet`` condition."""
    set_condition(js, restarting_condition_false(reason, message), opts)


def set_jobset_completed_condition(js: Obj, opts: StatusUpdate) -> None:
    """``setJobSetCompletedCondition``: Completed=True, Restarting=False and ``terminalState``."""
    set_condition(js, make_completed_condition_opts(), opts)
    set_restarting_condition_false(
        js, api.RESTARTING_JOBSET_REASON_JOBSET_COMPLETED, api.ALL_JOBS_COMPLETED_MESSAGE, opts
    )
    status_of(js)["terminalState"] = api.JOBSET_COMPLETED


def set_jobset_suspended_condition(js: Obj, opts: StatusUpdate) -> None:
    """``setJobSetSuspendedCondition``."""
    set_condition(js, make_suspended_condition_opts(), opts)
    set_restarting_condition_false(
        js, api.RESTARTING_JOBSET_REASON_JOBSET_SUSPENDED, api.JOBSET_SUSPENDED_MESSAGE, opts
    )


def set_jobset_resumed_condition(js: Obj, opts: StatusUpdate) -> None:
    """``setJobSetResumedCondition``."""
    set_condition(js, make_resumed_condition_opts(), opts)
