"""InOrder startup policy helpers: port of upstream ``pkg/controllers/startup_policy.go``.

``InOrder`` creates the Jobs of ReplicatedJob k+1 only once every Job of ReplicatedJob k has *started*
(ready, succeeded or failed; merely active or suspended Jobs do not count). The creation loop that uses
these helpers is ``reconcile_replicated_jobs`` in :mod:`jobset.controller.jobset_controller`, the resume
loop is
in :mod:`jobset.controller.suspend`.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import ConditionOpts, StatusUpdate, set_condition
from jobset.controller.events import EVENT_TYPE_NORMAL


def all_replicas_started(replicas: int, status: Obj | None) -> bool:
    """``allReplicasStarted``: ``replicas == failed + ready + succeeded`` of the ReplicatedJob status
    (:func:`~jobset.controller.spec.count` of each, written out: asked for every ReplicatedJob at each
    reconcile, the three calls cost more than the sum)."""
    if status is None:
        return replicas == 0
    get = status.get
    return replicas == int(get("failed") or 0) + int(get("ready") or 0) + int(get("succeeded") or 0)


def in_order_startup_policy(startup_policy: Obj | None) -> bool:
    """``inOrderStartupPolicy``: a nil policy behaves as ``AnyOrder``."""
    return startup_policy is not None and startup_policy.get("startupPolicyOrder") == api.IN_ORDER


_IN_PROGRESS = ConditionOpts(
    EVENT_TYPE_NORMAL,
    api.JOBSET_STARTUP_POLICY_IN_PROGRESS,
    "True",
    api.IN_ORDER_STARTUP_POLICY_IN_PROGRESS_REASON,
    api.IN_ORDER_STARTUP_POLICY_IN_PROGRESS_MESSAGE,
)
_COMPLETED = ConditionOpts(
    EVENT_TYPE_NORMAL,
    api.JOBSET_STARTUP_POLICY_COMPLETED,
    "True",
    api.IN_ORDER_STARTUP_POLICY_COMPLETED_REASON,
    api.IN_ORDER_STARTUP_POLICY_COMPLETED_MESSAGE,
)
"""Built once (a frozen dataclass is dear to build, and one of these is set at every InOrder reconcile)."""


def set_in_order_startup_policy_in_progress_condition(js: Obj, opts: StatusUpdate) -> None:
    """``setInOrderStartupPolicyInProgressCondition``."""
    set_condition(js, _IN_PROGRESS, opts)


def set_in_order_startup_policy_completed_condition(js: Obj, opts: StatusUpdate) -> None:
    """``setInOrderStartupPolicyCompletedCondition``: also flips ``StartupPolicyInProgress`` to False."""
    set_condition(js, _COMPLETED, opts)
