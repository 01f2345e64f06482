"""One run of ``syncJob`` (``pkg/controller/job/job_controller.go``) for one Job.

:class:`JobSync` holds what upstream keeps in ``syncJobCtx`` plus the status being built, and its
methods follow the upstream functions of the same names: :meth:`_observe` (``getPodsForJob`` and the
counting at the top of ``syncJob``), :meth:`_evaluate_finish` (the terminal-condition cascade),
:meth:`_manage_job` (``manageJob``), :meth:`_track_status` (``trackJobStatusAndRemoveFinalizers``,
``flushUncountedAndRemoveFinalizers``, ``enactJobFinished``).

Deliberate differences from upstream, all unobservable in a synchronous in-process cluster:

- No ``ControllerExpectations``/``finalizerExpectations``: every write is visible to the next read at
  once, which is exactly the state expectations exist to wait for.
- No adoption/release of pods by selector (``PodControllerRefManager``): pods are listed through the
  owner index, which only ever holds pods created with this Job as controller.
- While pod creation waits for the failure back-off, ``status.active`` keeps the real count. Upstream
  returned 0 there until kubernetes#139457 (a 2026 regression fix, back-ported to 1.33+), which made the
  API server reject the status write (``ready > active``).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING

from fakecluster.apiserver.errors import ApiError
from fakecluster.clock import Clock, parse_rfc3339
from fakecluster.controllers import indexes
from fakecluster.controllers.job_pods import (
    TRACKING_FINALIZER,
    UNKNOWN_INDEX,
    PodFactory,
    completion_index,
    finished_time,
    has_tracking_finalizer,
    is_controlled_by,
    is_pod_failed,
    is_pod_ready,
    match_pod_failure_policy,
    pods_for_removal,
    restart_count,
)
from fakecluster.controllers.job_status import (
    BACKOFF_LIMIT_EXCEEDED,
    COMPLETE,
    COMPLETIONS_REACHED,
    DEADLINE_EXCEEDED,
    FAILED,
    FAILURE_TARGET,
    JOB_RESUMED,
    JOB_SUSPENDED,
    POD_FAILURE_POLICY,
    SUCCESS_CRITERIA_MET,
    SUCCESS_POLICY,
    SUSPENDED,
    BackoffRecord,
    condition_is_true,
    ensure_condition_status,
    find_condition,
    new_condition,
    wire_status,
)
from fakecluster.objects import Obj

if TYPE_CHECKING:
    from fakecluster.client import LocalClient

MAX_POD_CREATE_DELETE_PER_SYNC = 500
MAX_UNCOUNTED_PODS = 500
SLOW_START_INITIAL_BATCH_SIZE = 1
SYNC_JOB_BATCH_PERIOD = 1.0
"""``syncJobBatchPeriod``; also the floor of a back-off requeue (``enqueueSyncJobWithDelay``)."""

EventRecorder = Callable[[Obj, str, str, str], None]
"""``(job, type, reason, message)``."""
BackoffSaver = Callable[[BackoffRecord], None]


class JobSync:
    """State and steps of a single ``syncJob`` call. Create, :meth:`run`, discard."""

    def __init__(self, client: LocalClient, clock: Clock, job: Obj, backoff: BackoffRecord, *,
                 save_backoff: BackoffSaver, record_event: EventRecorder) -> None:
        self._client = client
        self._clock = clock
        self._save_backoff = save_backoff
        self._record_event = record_event
        self.now = clock.timestamp()
        self.job = job
        meta = job["metadata"]
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta["name"]
        self.uid: str = meta["uid"]
        self.rv: str = meta.get("resourceVersion", "")
        self.spec: Obj = job["spec"]
        self.indexed = self.spec.get("completionMode") == "Indexed"
        self.completions: int | None = self.spec.get("completions")
        self.suspended = bool(self.spec.get("suspend"))
        self.deleting = meta.get("deletionTimestamp") is not None
        self.failure_policy: Obj | None = self.spec.get("podFailurePolicy")
        self.only_replace_failed = (self.spec.get("podReplacementPolicy") == "Failed"
                                    or self.failure_policy is not None)
        self.stored_status: Obj = job.get("status") or {}
        self.backoff = backoff
        self.requeue: float | None = None
        self.error: ApiError | None = None
        self.finished_condition: Obj | None = None

    # ------------------------------------------------------------------ syncJob
    def run(self) -> float | None:
        """Returns the requeue delay (back-off or ``activeDeadlineSeconds``); raises the first API
        error after status tracking has been flushed, so the work queue retries with back-off."""
        self._observe()
        if self.stored_status.get("startTime") is None and not self.suspended:
            self.status["startTime"] = self.now
        self._evaluate_finish()
        suspend_changed = False
        if self.finished_condition is not None:
            deleted_ready, deleted = self._delete_pods(self.active_pods, keep_finalizers=True)
            if deleted != self.active:
                self.finished_condition = None
            self.active -= deleted
            self.terminating += deleted
            self.ready -= deleted_ready
        else:
            suspend_changed = self._manage()
        stored = self.stored_status
        needs_flush = (suspend_changed or self.active != stored.get("active", 0)
                       or self.ready != stored.get("ready") or self.terminating != stored.get("terminating"))
        self.status["active"] = self.active
        self.status["ready"] = self.ready
        self.status["terminating"] = self.terminating
        self._track_status(needs_flush)
        if self.error is not None:
            raise self.error
        return self.requeue

    def _requeue_after(self, delay: float) -> None:
        self.requeue = delay if self.requeue is None else min(self.requeue, delay)

    # ------------------------------------------------------------------ observe
    def _observe(self) -> None:
        """List the Job's pods once and derive every count from that one O(pods) pass."""
        stored = self.stored_status
        uncounted = stored.get("uncountedTerminatedPods") or {}
        self.uncounted_succeeded = set(uncounted.get("succeeded") or ())
        self.uncounted_failed = set(uncounted.get("failed") or ())
        status = dict(stored)
        status["conditions"] = list(stored.get("conditions") or ())
        status["uncountedTerminatedPods"] = {"succeeded": list(uncounted.get("succeeded") or ()),
                                             "failed": list(uncounted.get("failed") or ())}
        self.status = status

        pods = self._client.list("Pod", self.namespace, owner_uid=self.uid, readonly=True)
        uid = self.uid
        indexed, completions = self.indexed, self.completions or 0
        only_replace_failed, policy = self.only_replace_failed, self.failure_policy
        count_restarts = (self.spec.get("template") or {}).get("spec", {}).get("restartPolicy") == "OnFailure"
        active: list[Obj] = []
        terminating: list[Obj] = []
        tracked: list[tuple[int, Obj]] = []
        new_succeeded: list[Obj] = []
        new_failed: list[Obj] = []
        succeeded_ix: set[int] = set()
        ready = restarts = 0
        self.fail_job_message: str | None = None
        for pod in pods:
            meta = pod["metadata"]
            if not is_controlled_by(pod, uid):
                continue
            phase = (pod.get("status") or {}).get("phase")
            deleting = meta.get("deletionTimestamp") is not None
            if phase not in ("Succeeded", "Failed"):
                if deleting:
                    terminating.append(pod)
                else:
                    active.append(pod)
                    if is_pod_ready(pod):
                        ready += 1
                if count_restarts and phase in ("Pending", "Running"):
                    restarts += restart_count(pod)
            failed = phase == "Failed" or (deleting and not only_replace_failed and phase != "Succeeded")
            if failed and policy is not None and self.fail_job_message is None:
                self.fail_job_message = match_pod_failure_policy(policy, pod)[0]
            if TRACKING_FINALIZER not in (meta.get("finalizers") or ()):
                continue
            ix = completion_index(pod) if indexed else UNKNOWN_INDEX
            tracked.append((ix, pod))
            if indexed and not 0 <= ix < completions:
                continue
            if phase == "Succeeded":
                if indexed:
                    succeeded_ix.add(ix)
                if meta["uid"] not in self.uncounted_succeeded:
                    new_succeeded.append(pod)
            elif failed and meta["uid"] not in self.uncounted_failed:
                new_failed.append(pod)
        self.active_pods, self.terminating_pods, self.tracked = active, terminating, tracked
        self.active, self.ready, self.terminating = len(active), ready, len(terminating)
        self.restarts = restarts
        counted_failures = len(new_failed)
        if policy is not None:
            counted_failures = sum(1 for p in new_failed if match_pod_failure_policy(policy, p)[1])
        self.succeeded = stored.get("succeeded", 0) + len(new_succeeded) + len(self.uncounted_succeeded)
        self.failed = stored.get("failed", 0) + counted_failures + len(self.uncounted_failed)
        if indexed:
            self.prev_succeeded_indexes = indexes.parse_indexes(stored.get("completedIndexes"), completions)
            self.succeeded_indexes = indexes.with_ordered_indexes(self.prev_succeeded_indexes,
                                                                  sorted(succeeded_ix))
            self.succeeded = indexes.total(self.succeeded_indexes)
        if new_failed:
            self.backoff = self.backoff.advanced([finished_time(p) for p in new_succeeded],
                                                 [finished_time(p) for p in new_failed])
        elif new_succeeded:
            self.backoff = BackoffRecord()

    # ------------------------------------------------------------------ terminal conditions
    def _evaluate_finish(self) -> None:
        """The cascade at the heart of ``syncJob``: an existing ``SuccessCriteriaMet`` wins, then an
        existing ``FailureTarget``, podFailurePolicy ``FailJob``, backoff limit, active deadline, then
        (Indexed) successPolicy. Completion by count is decided after ``manageJob``."""
        conditions = self.status["conditions"]
        now = self.now
        existing_success = find_condition(conditions, SUCCESS_CRITERIA_MET)
        if existing_success is not None and existing_success.get("status") == "True":
            self.finished_condition = existing_success
        else:
            target = find_condition(conditions, FAILURE_TARGET)
            if target is not None and target.get("status") == "True":
                self.finished_condition = new_condition(FAILED, "True", target.get("reason", ""),
                                                        target.get("message", ""), now)
            elif self.fail_job_message is not None:
                self.finished_condition = new_condition(FAILURE_TARGET, "True", POD_FAILURE_POLICY,
                                                        self.fail_job_message, now)
        if self.finished_condition is None:
            if self.failed > self.spec.get("backoffLimit", 6) or self._past_backoff_limit_on_failure():
                self.finished_condition = new_condition(FAILURE_TARGET, "True", *BACKOFF_LIMIT_EXCEEDED, now)
            else:
                deadline = self.spec.get("activeDeadlineSeconds")
                start = self.status.get("startTime")
                if deadline is not None and start is not None and not self.suspended:
                    left = deadline - (self._clock.now - parse_rfc3339(start))
                    if left <= 0:
                        self.finished_condition = new_condition(FAILURE_TARGET, "True", *DEADLINE_EXCEEDED,
                                                                now)
                    else:
                        self._requeue_after(left)
        if self.indexed and self.finished_condition is None:
            message = indexes.match_success_policy(self.spec.get("successPolicy"), self.completions or 0,
                                                   self.succeeded_indexes)
            if message is not None:
                self.finished_condition = new_condition(SUCCESS_CRITERIA_MET, "True", SUCCESS_POLICY, message,
                                                        now)

    def _past_backoff_limit_on_failure(self) -> bool:
        """``pastBackoffLimitOnFailure``: with ``restartPolicy: OnFailure`` pods restart in place, so
        container restarts of Pending/Running pods count against the limit instead."""
        if (self.spec.get("template") or {}).get("spec", {}).get("restartPolicy") != "OnFailure":
            return False
        limit = self.spec.get("backoffLimit", 6)
        return self.restarts > 0 if limit == 0 else self.restarts >= limit

    # ------------------------------------------------------------------ manageJob
    def _manage(self) -> bool:
        """``manageJob`` unless the Job is being deleted, then the completion check and the Suspended
        condition. Returns whether the Suspended condition changed."""
        manage_called = False
        if not self.deleting:
            self.active = self._manage_job()
            manage_called = True
        if self.completions is None:
            complete = self.succeeded > 0 and self.active == 0
        else:
            complete = self.succeeded >= self.completions and self.active == 0
        if complete:
            self.finished_condition = new_condition(SUCCESS_CRITERIA_MET, "True", *COMPLETIONS_REACHED,
                                                    self.now)
            return False
        if not manage_called:
            return False
        conditions = self.status["conditions"]
        if self.suspended:
            changed = ensure_condition_status(conditions, SUSPENDED, "True", *JOB_SUSPENDED, now=self.now)
            if changed:
                self._record_event(self.job, "Normal", "Suspended", "Job suspended")
            return changed
        changed = ensure_condition_status(conditions, SUSPENDED, "False", *JOB_RESUMED, now=self.now)
        if changed:
            self._record_event(self.job, "Normal", "Resumed", "Job resumed")
            self.status["startTime"] = self.now
        return changed

    def _manage_job(self) -> int:
        """Delete surplus pods *or* create missing ones (never both in one sync); returns ``active``."""
        active = len(self.active_pods)
        if self.suspended:
            return active - self._delete_surplus(pods_for_removal(self.active_pods, self.completions,
                                                                  self.indexed, active))
        parallelism = self.spec.get("parallelism", 1)
        if self.completions is None:
            want = active if self.succeeded > 0 else parallelism
        else:
            want = max(min(self.completions - self.succeeded, parallelism), 0)
        surplus = pods_for_removal(self.active_pods, self.completions, self.indexed, max(active - want, 0))
        if surplus:
            return active - self._delete_surplus(surplus[:MAX_POD_CREATE_DELETE_PER_SYNC])
        diff = want - (self.terminating if self.only_replace_failed else 0) - active
        if diff <= 0:
            return active
        remaining = self.backoff.remaining(self._clock.now)
        if remaining > 0:
            self._requeue_after(max(remaining, SYNC_JOB_BATCH_PERIOD))
            return active
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        pending: list[int] = []
        if self.indexed:
            non_pending = indexes.with_ordered_indexes(self.succeeded_indexes, _indexes_of(self.active_pods))
            if self.only_replace_failed:
                non_pending = indexes.with_ordered_indexes(non_pending, _indexes_of(self.terminating_pods))
            pending = indexes.first_pending_indexes(non_pending, diff, self.completions or 0)
            diff = len(pending)
        return active + self._create_pods(diff, pending)

    def _delete_surplus(self, pods: list[Obj]) -> int:
        ready, removed = self._delete_pods(pods, keep_finalizers=False)
        self.terminating += removed
        self.ready -= ready
        return removed

    def _create_pods(self, count: int, pending: list[int]) -> int:
        """Slow start: batches of 1, 2, 4, ...; a batch with a failed create abandons the rest, which
        a later sync retries. Returns how many pods were created."""
        factory = PodFactory(self.job, self.indexed)
        created = position = 0
        batch = min(count, SLOW_START_INITIAL_BATCH_SIZE)
        while count > 0:
            failed = False
            for _ in range(batch):
                index = pending[position] if pending else UNKNOWN_INDEX
                position += 1
                try:
                    self._client.create(factory.pod(index))
                    created += 1
                except ApiError as err:
                    self.error = self.error or err
                    failed = True
            count -= batch
            if failed:
                break
            batch = min(2 * batch, count)
        return created

    def _delete_pods(self, pods: list[Obj], *, keep_finalizers: bool) -> tuple[int, int]:
        """``deleteActivePods`` (finishing Job: finalizers kept, so the pods are counted as failed) or
        ``deleteJobPods`` (suspend/scale-down: finalizer removed first, so they are not counted).
        Returns (ready pods deleted, pods deleted)."""
        deleted_ready = deleted = 0
        for pod in pods:
            meta = pod["metadata"]
            try:
                if not keep_finalizers:
                    self._remove_tracking_finalizer(pod)
                self._client.delete("Pod", self.namespace, meta["name"])
            except ApiError as err:
                if err.reason != "NotFound":
                    self.error = self.error or err
                    continue
            deleted += 1
            if is_pod_ready(pod):
                deleted_ready += 1
        return deleted_ready, deleted

    def _remove_tracking_finalizer(self, pod: Obj) -> None:
        """The strategic-merge ``$deleteFromPrimitiveList/finalizers`` patch, as a merge patch computed
        from the live object (the snapshot in hand may predate another finalizer change)."""
        meta = pod["metadata"]
        try:
            live = self._client.get("Pod", self.namespace, meta["name"], readonly=True)
        except ApiError as err:
            if err.reason == "NotFound":
                return
            raise
        if live["metadata"]["uid"] != meta["uid"] or not has_tracking_finalizer(live):
            return
        remaining = [f for f in live["metadata"].get("finalizers") or () if f != TRACKING_FINALIZER]
        patch = {"metadata": {"finalizers": remaining or None}}
        self._client.patch("Pod", self.namespace, meta["name"], patch)

    # ------------------------------------------------------------------ status tracking
    def _track_status(self, needs_flush: bool) -> None:
        """``trackJobStatusAndRemoveFinalizers``: (1) record newly terminated pods in
        ``uncountedTerminatedPods`` together with any interim condition and write status, (2) remove
        their tracking finalizers, (3) move them into ``succeeded``/``failed`` and, when nothing is
        uncounted or terminating any more, add the terminal condition; write status again."""
        status, indexed = self.status, self.indexed
        uncounted = status["uncountedTerminatedPods"]
        tracked = sorted(self.tracked, key=itemgetter(0)) if indexed else self.tracked
        with_finalizer = {pod["metadata"]["uid"] for _, pod in tracked}
        if _count_uncounted_without_finalizer(status, with_finalizer):
            needs_flush = True
        finished = self.finished_condition
        remove_all = self.deleting or finished is not None
        finishing_failed = finished is not None and finished["type"] != SUCCESS_CRITERIA_MET
        completions = self.completions or 0
        to_remove: list[Obj] = []
        new_indexes: list[int] = []
        reached_max = False
        for ix, pod in tracked:
            uid = pod["metadata"]["uid"]
            phase = (pod.get("status") or {}).get("phase")
            failed = is_pod_failed(pod, self.only_replace_failed)
            if not (remove_all or phase == "Succeeded" or failed):
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
                  and match_pod_failure_policy(self.failure_policy, pod)[1]):
                uncounted["failed"].append(uid)
                needs_flush = True
            staged = len(new_indexes) + len(uncounted["succeeded"]) + len(uncounted["failed"])
            if staged >= MAX_UNCOUNTED_PODS:
                reached_max = True
                break
        if indexed:
            self.succeeded_indexes = indexes.with_ordered_indexes(self.succeeded_indexes, new_indexes)
            text = indexes.format_indexes(self.succeeded_indexes)
            needs_flush = needs_flush or text != status.get("completedIndexes", "")
            status["succeeded"] = indexes.total(self.succeeded_indexes)
            status["completedIndexes"] = text
        needs_flush = self._stage_interim_condition() or needs_flush

        if needs_flush:
            self._write_status()
            self._save_backoff(self.backoff)
            needs_flush = False
        failure: ApiError | None = None
        for pod in to_remove:
            try:
                self._remove_tracking_finalizer(pod)
                with_finalizer.discard(pod["metadata"]["uid"])
            except ApiError as err:
                failure = failure or err
        if _count_uncounted_without_finalizer(status, with_finalizer):
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
        makes it a Conflict, retried by the work queue); skipped when nothing changed."""
        wire = wire_status(self.status)
        if wire == self.stored_status:
            return
        updated = self._client.update_status({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": self.name, "namespace": self.namespace, "uid": self.uid,
                         "resourceVersion": self.rv},
            "status": wire,
        })
        self.rv = updated["metadata"]["resourceVersion"]
        self.stored_status = updated.get("status") or {}


def _indexes_of(pods: list[Obj]) -> list[int]:
    """``getIndexes``: the distinct valid completion indexes of ``pods``, ascending."""
    return sorted({ix for ix in map(completion_index, pods) if ix >= 0})


def _count_uncounted_without_finalizer(status: Obj, with_finalizer: set[str]) -> bool:
    """``cleanUncountedPodsWithoutFinalizers``: UIDs whose finalizer is gone move into the counters."""
    uncounted = status["uncountedTerminatedPods"]
    changed = False
    for field in ("succeeded", "failed"):
        uids = uncounted[field]
        if not uids:
            continue
        keep = [uid for uid in uids if uid in with_finalizer]
        if len(keep) != len(uids):
            status[field] = status.get(field, 0) + len(uids) - len(keep)
            uncounted[field] = keep
            changed = True
    return changed
