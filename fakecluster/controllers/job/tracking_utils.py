"""Job status tracking: ``trackJobStatusAndRemoveFinalizers`` and what it calls
(``flushUncountedAndRemoveFinalizers``, ``cleanUncountedPodsWithoutFinalizers``, ``enactJobFinished``,
``recordJobFinished``) from ``pkg/controller/job/job_controller.go``.

The order of writes is the observable part (KEP-2307): a terminated pod is first recorded in
``status.uncountedTerminatedPods`` (with any interim ``FailureTarget``/``SuccessCriteriaMet``
condition) and the status written; then its ``batch.kubernetes.io/job-tracking`` finalizer is removed;
then it moves into ``succeeded``/``failed`` and, once nothing is uncounted or terminating, the terminal
``Failed``/``Complete`` condition is added; the status is written again. At most 500 pods are staged per
sync (``MaxUncountedPods``), so a big Job converges over several syncs.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

from fakecluster.api.objects import Obj
from fakecluster.controllers.job import indexed_job_utils as indexes
from fakecluster.controllers.job.pod_control import PodControl
from fakecluster.controllers.job.pod_view import JobPodView, TrackedPod
from fakecluster.controllers.job.pods import match_pod_failure_policy
from fakecluster.controllers.job.status import (
    COMPLETE,
    FAILED,
    FAILURE_TARGET,
    SUCCESS_CRITERIA_MET,
    BackoffRecord,
    condition_is_true,
    ensure_condition_status,
    new_condition,
    wire_status,
)

if TYPE_CHECKING:
    from fakecluster.client.internal import InternalClient

MAX_UNCOUNTED_PODS = 500

EventRecorder = Callable[[Obj, str, str, str], None]
"""``(job, type, reason, message)``."""
BackoffSaver = Callable[[BackoffRecord], None]


class StatusTracking:
    """The status half of a sync; :class:`~fakecluster.controllers.job.sync.JobSync` fills these in."""

    __slots__ = ("called", "finished_condition", "rv", "stored_status", "succeeded_indexes")
    """The fields this half assigns; :class:`~fakecluster.controllers.job.sync.JobSync` slots the rest."""

    _client: InternalClient
    _pods: PodControl | None
    _save_backoff: BackoffSaver
    now: str
    job: Obj
    name: str
    namespace: str
    uid: str
    rv: str
    indexed: bool
    completions: int | None
    deleting: bool
    only_replace_failed: bool
    failure_policy: Obj | None
    stored_status: Obj
    status: Obj
    pod_view: JobPodView
    finished_tracked: list[TrackedPod]
    uncounted_succeeded: frozenset[str]
    uncounted_failed: frozenset[str]
    prev_succeeded_indexes: indexes.Intervals
    succeeded_indexes: indexes.Intervals
    failed_indexes: indexes.Intervals | None
    delayed: dict[int, Obj]
    finished_condition: Obj | None
    terminating: int
    backoff: BackoffRecord
    called: bool

    def _pod_control(self) -> PodControl:
        raise NotImplementedError

    def _record_event(self, job: Obj, event_type: str, reason: str, note: str) -> None:
        raise NotImplementedError

    def _track_status(self, needs_flush: bool) -> None:
        """``trackJobStatusAndRemoveFinalizers``: (1) record newly terminated pods in
        ``uncountedTerminatedPods`` together with any interim condition and write status, (2) remove
        their tracking finalizers, (3) move them into ``succeeded``/``failed`` and, when nothing is
        uncounted or terminating any more, add the terminal condition; write status again."""
        status, indexed = self.status, self.indexed
        uncounted = status["uncountedTerminatedPods"]
        finished = self.finished_condition
        remove_all = self.deleting or finished is not None
        # Without remove_all only terminated pods lose their finalizer: _observe collected those.
        tracked = self.pod_view.all_tracked_pods() if remove_all else self.finished_tracked
        if indexed and tracked:
            tracked = sorted(tracked, key=attrgetter("index"))
        if _count_uncounted_without_finalizer(status, self.pod_view.tracked_uids):
            needs_flush = True
        finishing_failed = finished is not None and finished["type"] != SUCCESS_CRITERIA_MET
        completions = self.completions or 0
        to_remove: list[Obj] = []
        new_indexes: list[int] = []
        reached_max = False
        delayed = self.delayed
        for ix, pod, uid, phase, failed in tracked:
            if delayed and not remove_all and phase != "Succeeded" and _is_delayed(delayed, ix, uid):
                continue
            to_remove.append(pod)
            valid = not indexed or 0 <= ix < completions
            if phase == "Succeeded" and uid not in self.uncounted_failed:
                if indexed:
                    if valid and not indexes.has_index(self.prev_succeeded_indexes, ix):
                        new_indexes.append(ix)
                        needs_flush = True
                elif uid not in self.uncounted_succeeded:
                    uncounted["succeeded"].append(uid)
                    needs_flush = True
            elif ((failed or finishing_failed) and valid and uid not in self.uncounted_failed
                  and match_pod_failure_policy(self.failure_policy, pod).counts):
                uncounted["failed"].append(uid)
                needs_flush = True
            staged = len(new_indexes) + len(uncounted["succeeded"]) + len(uncounted["failed"])
            if staged >= MAX_UNCOUNTED_PODS:
                reached_max = True
                break
        if indexed:
            if new_indexes:  # else it would be the same list: _observe's merge left it ordered and apart
                self.succeeded_indexes = indexes.with_ordered_indexes(self.succeeded_indexes, new_indexes)
            text = indexes.format_indexes(self.succeeded_indexes)
            needs_flush = needs_flush or text != status.get("completedIndexes", "")
            status["succeeded"] = indexes.total(self.succeeded_indexes)
            status["completedIndexes"] = text
            failed_text = None if self.failed_indexes is None else indexes.format_indexes(self.failed_indexes)
            if failed_text != status.get("failedIndexes"):
                status["failedIndexes"] = failed_text
                needs_flush = True
        needs_flush = self._stage_interim_condition() or needs_flush

        if needs_flush:
            self._write_status()
            self._save_backoff(self.backoff)
            needs_flush = False
        removed, failure = self._pod_control().remove_finalizers(to_remove) if to_remove else ([], None)
        # Without removals this would find nothing: the first pass above left only UIDs of pods with
        # the finalizer, and the loop added only such (tracked) pods' UIDs.
        if removed and _count_uncounted_without_finalizer(status, self.pod_view.tracked_uids, set(removed)):
            needs_flush = True
        if failure is not None:
            if needs_flush:
                self._write_status()
            raise failure
        finished_now = not reached_max and self._enact_finished()
        if finished_now or needs_flush:
            self._write_status()
        if finished_now:
            self._record_finished()

    def _stage_interim_condition(self) -> bool:
        """Append ``FailureTarget``/``SuccessCriteriaMet`` (written before any finalizer goes) and turn
        the pending condition into the terminal ``Failed``/``Complete`` with the same reason."""
        finished = self.finished_condition
        if finished is None:
            return False
        conditions = self.status["conditions"]
        changed = False
        if finished["type"] == FAILURE_TARGET:
            conditions.append(finished)
            changed = True
            finished = new_condition(FAILED, "True", finished["reason"], finished["message"], self.now)
        elif finished["type"] == SUCCESS_CRITERIA_MET:
            if not condition_is_true(conditions, SUCCESS_CRITERIA_MET):
                conditions.append(finished)
                changed = True
            finished = new_condition(COMPLETE, "True", finished.get("reason", ""),
                                     finished.get("message", ""), self.now)
        self.finished_condition = finished
        return changed

    def _enact_finished(self) -> bool:
        """``enactJobFinished``: the terminal condition waits (1.31+) until nothing is uncounted and no
        pod is terminating."""
        finished = self.finished_condition
        if finished is None:
            return False
        uncounted = self.status["uncountedTerminatedPods"]
        if uncounted["succeeded"] or uncounted["failed"] or self.terminating > 0:
            return False
        ensure_condition_status(self.status["conditions"], finished["type"], finished["status"],
                                finished["reason"], finished["message"], now=self.now)
        if finished["type"] == COMPLETE:
            self.status["completionTime"] = finished["lastTransitionTime"]
        return True

    def _record_finished(self) -> None:
        finished = self.finished_condition
        if finished is None:
            return
        if finished["type"] == COMPLETE:
            if self.completions is not None and self.status.get("succeeded", 0) > self.completions:
                self._record_event(self.job, "Warning", "TooManySucceededPods",
                                   "Too many succeeded pods running after completion count reached")
            self._record_event(self.job, "Normal", "Completed", "Job completed")
        else:
            self._record_event(self.job, "Warning", finished["reason"], finished["message"])

    def _write_status(self) -> None:
        """PUT ``/status`` with the resourceVersion read at the start of the sync (a concurrent writer
        makes it a Conflict, retried by the work queue); skipped when nothing changed.

        The status is handed over (``update_status_donated``: the API server stores it uncopied): its
        wire form shares nothing this sync may still change (:func:`wire_status`)."""
        wire = wire_status(self.status)
        if wire == self.stored_status:
            return
        self.called = True
        updated = self._client.update_status_donated({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": self.name, "namespace": self.namespace, "uid": self.uid,
                         "resourceVersion": self.rv},
            "status": wire,
        })  # only read back: the new resourceVersion and the status as stored
        self.rv = updated["metadata"]["resourceVersion"]
        self.stored_status = updated.get("status") or {}


def _is_delayed(delayed: dict[int, Obj], index: int, uid: str) -> bool:
    """``canRemoveFinalizer``'s per-index clause: the pod is its index's last failure, whose finalizer
    waits until a replacement carrying its failure count exists."""
    pod = delayed.get(index)
    return pod is not None and pod["metadata"]["uid"] == uid


def _count_uncounted_without_finalizer(status: Obj, with_finalizer: set[str],
                                       removed: set[str] | frozenset[str] = frozenset()) -> bool:
    """``cleanUncountedPodsWithoutFinalizers``: UIDs whose finalizer is gone (no longer among the Job's
    pods ``with_finalizer``, or ``removed`` by this sync) move into the counters."""
    uncounted = status["uncountedTerminatedPods"]
    changed = False
    for field in ("succeeded", "failed"):
        uids = uncounted[field]
        if not uids:
            continue
        keep = [uid for uid in uids if uid in with_finalizer and uid not in removed]
        if len(keep) != len(uids):
            status[field] = status.get(field, 0) + len(uids) - len(keep)
            uncounted[field] = keep
            changed = True
    return changed
