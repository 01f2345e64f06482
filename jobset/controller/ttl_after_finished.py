"""``ttlSecondsAfterFinished``: port of upstream ``pkg/controllers/ttl_after_finished.go``.

It runs only in the "finished" branch of the reconcile, after the still-active Jobs are deleted. The
finish time is the ``lastTransitionTime`` of the first ``Completed``/``Failed`` condition with status True;
once ``finish + ttl`` has passed the JobSet is deleted with Foreground propagation, otherwise the
reconcile asks to be requeued for the remaining time.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock, parse_rfc3339
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.errors import ReconcileError
from jobset.controller.spec import jobset_marked_for_deletion, spec_of


def execute_ttl_after_finished_policy(client: Client, clock: Clock, js: Obj) -> float | None:
    """``executeTTLAfterFinishedPolicy``: delete the expired JobSet, or return the seconds left (None when
    there is no TTL or the JobSet was deleted)."""
    ttl = spec_of(js).get("ttlSecondsAfterFinished")
    if ttl is None:
        return None
    if check_if_ttl_expired(clock, js):
        meta = js["metadata"]
        client.delete("JobSet", meta.get("namespace", ""), meta["name"], propagation_policy="Foreground")
        return None
    remaining = requeue_jobset_after(js, clock.now)
    return remaining if remaining > 0 else None


def check_if_ttl_expired(clock: Clock, js: Obj) -> bool:
    """``checkIfTTLExpired``: False without a TTL or while the JobSet is already being deleted."""
    if spec_of(js).get("ttlSecondsAfterFinished") is None or jobset_marked_for_deletion(js):
        return False
    try:
        return requeue_jobset_after(js, clock.now) <= 0
    except ReconcileError as err:
        raise ReconcileError(f"error checking if ttl expired: {err.message}") from None


def jobset_finish_time(js: Obj) -> float:
    """``jobSetFinishTime``: virtual seconds of the finishing condition's ``lastTransitionTime``."""
    meta = js["metadata"]
    for cond in (js.get("status") or {}).get("conditions") or ():
        if cond.get("type") in (api.JOBSET_COMPLETED, api.JOBSET_FAILED) and cond.get("status") == "True":
            if not cond.get("lastTransitionTime"):
                raise ReconcileError(
                    f"unable to find the time when the JobSet {meta.get('namespace', '')}/"
                    f"{meta['name']} finished"
                )
            return parse_rfc3339(cond["lastTransitionTime"])
    raise ReconcileError(
        f"unable to find the status of the finished JobSet {meta.get('namespace', '')}/{meta['name']}"
    )


def requeue_jobset_after(js: Obj, now: float) -> float:
    """``requeueJobSetAfter``: ``finish + ttl - now`` in seconds (0 without a TTL)."""
    ttl = spec_of(js).get("ttlSecondsAfterFinished")
    if ttl is None:
        return 0.0
    return jobset_finish_time(js) + int(ttl) - now
