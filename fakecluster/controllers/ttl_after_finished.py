"""The TTL-after-finished controller (``pkg/controller/ttlafterfinished/ttlafterfinished_controller.go``).

It deletes a Job ``spec.ttlSecondsAfterFinished`` seconds after it finished: the expiry is the
``lastTransitionTime`` of the Job's ``Complete`` or ``Failed`` condition plus the TTL (``timeLeft``,
``jobFinishTime``). Job adds and updates enqueue finished Jobs that have a TTL and no
``deletionTimestamp``; a reconcile before the expiry requeues at the expiry (``enqueueAfter``), so a
TTL edited later is honoured when it comes due or on the update event, whichever is sooner. At expiry
the controller re-reads the Job, checks the TTL once more against the fresh copy, then deletes it
with ``propagationPolicy: Foreground`` and a UID precondition (so a same-named replacement is never
deleted by mistake). The Job controller then removes the pods' tracking finalizers and the garbage
collector deletes the pods before the Job itself goes.

Upstream records no event on deletion, and neither does this emulation.
"""

from __future__ import annotations

import contextlib

from fakecluster.api.errors import NotFound
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock, parse_rfc3339
from fakecluster.controllers.job.status import COMPLETE, FAILED, is_finished
from fakecluster.runtime import Controller, NamespacedName

COMPONENT = "ttl-after-finished-controller"


def needs_cleanup(job: Obj) -> bool:
    """``needsCleanup``: the Job has a TTL and is finished."""
    return (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and is_finished(job)


def expires_at(job: Obj) -> float | None:
    """``getFinishAndExpireTime``: the finish time (the first true ``Complete``/``Failed`` condition's
    ``lastTransitionTime``) plus the TTL, in virtual seconds; None when no finish time is recorded."""
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in (COMPLETE, FAILED) and cond.get("status") == "True":
            finished = cond.get("lastTransitionTime")
            if not finished:
                return None
            return parse_rfc3339(finished) + job["spec"]["ttlSecondsAfterFinished"]
    return None


class TTLAfterFinishedController:
    """Deletes finished Jobs once their ``ttlSecondsAfterFinished`` has passed."""

    def __init__(self, client: Client, clock: Clock) -> None:
        self._clock = clock
        self._client = client
        self.controller = Controller(clock, COMPONENT, self._process_job)
        self._client.watch("Job", self._on_job_event)

    def _on_job_event(self, event: WatchEvent) -> None:
        """``addJob``/``updateJob``; deletions are not watched upstream either."""
        if event.type == "DELETED":
            return
        job = event.object
        meta = job["metadata"]
        if meta.get("deletionTimestamp") is None and needs_cleanup(job):
            self.controller.enqueue((meta.get("namespace", ""), meta["name"]))

    def _process_job(self, key: NamespacedName) -> float | None:
        """``processJob``: requeue at the expiry, or, once expired, re-check a fresh copy and delete it.
        Returns the requeue delay."""
        namespace, name = key
        job = self._get(namespace, name)
        if job is None:
            return None
        left = self._time_left(job)
        if left is None or left > 0:
            return left
        fresh = self._get(namespace, name)
        if fresh is None:
            return None
        left = self._time_left(fresh)
        if left is None or left > 0:
            return left
        with contextlib.suppress(NotFound):
            self._client.delete("Job", namespace, name, propagation_policy="Foreground",
                                preconditions={"uid": fresh["metadata"]["uid"]})
        return None

    def _time_left(self, job: Obj) -> float | None:
        """``processTTL``: None for Jobs being deleted or not due for clean-up, else the seconds until
        the TTL expires (``<= 0``: expired)."""
        if job["metadata"].get("deletionTimestamp") is not None or not needs_cleanup(job):
            return None
        expiry = expires_at(job)
        if expiry is None:
            return None
        return expiry - self._clock.now

    def _get(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._client.get("Job", namespace, name)
        except NotFound:
            return None
