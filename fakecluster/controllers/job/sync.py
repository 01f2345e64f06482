"""One run of ``syncJob`` (``pkg/controller/job/job_controller.go``) for one Job.

:class:`JobSync` holds what upstream keeps in ``syncJobCtx`` plus the status being built, and its
methods follow the upstream functions of the same names: :meth:`_observe` (``getPodsForJob`` and the
counting at the top of ``syncJob``), :meth:`_evaluate_finish` (the terminal-condition cascade),
:meth:`_manage_job` (``manageJob``), :meth:`_track_status` (``trackJobStatusAndRemoveFinalizers``,
``flushUncountedAndRemoveFinalizers``, ``enactJobFinished``). With ``backoffLimitPerIndex`` the
per-index accounting of :mod:`fakecluster.controllers.job.backoff_per_index` joins in: failed indexes are
evaluated after the active deadline, the Job-wide pod-failure back-off gives way to the per-index one,
and each unfinished index's last failed pod keeps its finalizer until it has been replaced.

Deliberate differences from upstream:

- Pod creation/deletion expectations (:mod:`fakecluster.controllers.job.expectations`) are kept, since
  with ``informerLag`` the pod cache trails the writes; ``finalizerExpectations`` are not: the informer
  cache is one consistent snapshot, so a Job status read with the finalizer removals' effects always
  comes with the pods that show them, and a stale Job status write is a Conflict anyway.
- No adoption/release of pods by selector (``PodControllerRefManager``): pods are listed through the
  owner index and kept if this Job is their controller. Nothing here creates orphans that match a
  Job's generated ``controller-uid`` selector, so adoption would never happen anyway.
- While pod creation waits for the failure back-off, ``status.active`` keeps the real count. Upstream
  returned 0 there until kubernetes#139457 (a 2026 regression fix, back-ported to 1.33+), which made the
  API server reject the status write (``ready > active``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakecluster.api.objects import Obj
from fakecluster.clock import Clock, parse_rfc3339
from fakecluster.controllers.job import indexed_job_utils as indexes
from fakecluster.controllers.job.backoff_per_index import (
    creatable_now,
    failed_indexes,
    pods_with_delayed_deletion,
    replacement_annotations,
)
from fakecluster.controllers.job.pod_control import PodControl
from fakecluster.controllers.job.pod_view import (
    JobPodView,
    JobPodViews,
    TrackedPod,
    ViewParams,
    valid_indexes,
)
from fakecluster.controllers.job.pods import (
    PodFactory,
    finished_time,
    match_pod_failure_policy,
    pods_for_removal,
)
from fakecluster.controllers.job.status import (
    BACKOFF_LIMIT_EXCEEDED,
    COMPLETIONS_REACHED,
    DEADLINE_EXCEEDED,
    FAILED,
    FAILED_INDEXES,
    FAILURE_TARGET,
    JOB_RESUMED,
    JOB_SUSPENDED,
    MAX_FAILED_INDEXES_EXCEEDED,
    POD_FAILURE_POLICY,
    SUCCESS_CRITERIA_MET,
    SUCCESS_POLICY,
    SUSPENDED,
    BackoffRecord,
    ensure_condition_status,
    find_condition,
    new_condition,
)
from fakecluster.controllers.job.tracking_utils import BackoffSaver, EventRecorder, StatusTracking

if TYPE_CHECKING:
    from fakecluster.client.internal import InternalClient
    from fakecluster.controllers.job.expectations import PodExpectations

MAX_POD_CREATE_DELETE_PER_SYNC = 500
SYNC_JOB_BATCH_PERIOD = 1.0
"""``syncJobBatchPeriod``; also the floor of a back-off requeue (``enqueueSyncJobWithDelay``)."""
_NO_UIDS: frozenset[str] = frozenset()
"""The uncounted UIDs of a Job that has none (most syncs), shared."""


class JobShape:
    """What a sync reads from a Job's ``spec`` over and over, derived once per spec object: the store
    shares a Job's spec between its versions until the spec itself is written (every status write
    keeps it), so the Job controller keeps one per Job and builds another only when the spec object
    changes."""

    __slots__ = ("completions", "failure_policy", "indexed", "on_failure", "only_replace_failed",
                 "per_index_limit", "spec", "suspended", "view_params")

    def __init__(self, spec: Obj) -> None:
        self.spec = spec
        self.indexed = spec.get("completionMode") == "Indexed"
        self.completions: int | None = spec.get("completions")
        self.suspended = bool(spec.get("suspend"))
        self.failure_policy: Obj | None = spec.get("podFailurePolicy")
        self.only_replace_failed = (spec.get("podReplacementPolicy") == "Failed"
                                    or self.failure_policy is not None)
        self.per_index_limit: int | None = spec.get("backoffLimitPerIndex") if self.indexed else None
        """``backoffLimitPerIndex`` (Indexed only, as validation demands); None: the Job-wide limit only."""
        self.on_failure = (spec.get("template") or {}).get("spec", {}).get("restartPolicy") == "OnFailure"
        """``restartPolicy: OnFailure``: container restarts count against the back-off limit."""
        self.view_params = ViewParams(self.indexed, self.completions or 0, self.only_replace_failed)


class JobSync(StatusTracking):
    """State and steps of a single ``syncJob`` call. Create, :meth:`run`, discard.

    Slotted: one is built per sync with some forty fields, which an instance dict would grow into
    through several resizes."""

    __slots__ = ("_client", "_clock", "_event_sink", "_expectations", "_pod_views", "_pods",
                 "_save_backoff", "active", "backoff", "completions", "delayed", "deleting",
                 "expectations_satisfied", "fail_job_message", "failed", "failed_indexes",
                 "failed_tracked", "failure_policy", "finished_tracked", "indexed", "job", "name",
                 "namespace", "now", "only_replace_failed", "per_index_limit", "pod_view",
                 "prev_succeeded_indexes", "ready", "requeue", "restarts", "shape", "spec", "status",
                 "succeeded", "suspended", "terminating", "uid", "uncounted_failed", "uncounted_succeeded")

    def __init__(self, client: InternalClient, clock: Clock, job: Obj, backoff: BackoffRecord, *,
                 save_backoff: BackoffSaver, record_event: EventRecorder,
                 expectations: PodExpectations | None = None,
                 pod_views: JobPodViews | None = None, shape: JobShape | None = None,
                 satisfied: bool | None = None) -> None:
        """``shape``: the Job's :class:`JobShape` if the caller keeps one (built here if it is None or of
        another spec); ``satisfied``: ``expectations.satisfied`` for the Job, if the caller just asked."""
        self._client = client
        self._pod_views = pod_views if pod_views is not None else JobPodViews()
        self._clock = clock
        self._save_backoff = save_backoff
        self._event_sink = record_event
        self.called = False
        """Whether this sync made an API call of its own (the first sync's pod list, a status write, an
        event); it asked for pod writes if it built its :class:`PodControl`."""
        self.now = clock.timestamp()
        self.job = job
        meta = job["metadata"]
        self.namespace: str = meta.get("namespace", "")
        self.name: str = meta["name"]
        self.uid: str = meta["uid"]
        self.rv: str = meta.get("resourceVersion", "")
        self.spec: Obj = job["spec"]
        if shape is None or shape.spec is not self.spec:
            shape = JobShape(self.spec)
        self.shape = shape
        self.indexed = shape.indexed
        self.completions: int | None = shape.completions
        self.suspended = shape.suspended
        self.deleting = meta.get("deletionTimestamp") is not None
        self.failure_policy: Obj | None = shape.failure_policy
        self.only_replace_failed = shape.only_replace_failed
        self.per_index_limit: int | None = shape.per_index_limit
        self.failed_indexes: indexes.Intervals | None = None
        self.failed_tracked: list[tuple[int, Obj]] = []
        """Failed pods (valid index, tracking finalizer on), collected only with ``backoffLimitPerIndex``."""
        self.delayed: dict[int, Obj] = {}
        """``podsWithDelayedDeletionPerIndex``: index → last failed pod, kept until it is replaced."""
        self.stored_status: Obj = job.get("status") or {}
        self.backoff = backoff
        self.requeue: float | None = None
        self._expectations = expectations
        self._pods: PodControl | None = None
        """Built when the sync first writes a pod (:meth:`_pod_control`); most syncs write none."""
        if satisfied is None:
            satisfied = expectations is None or expectations.satisfied((self.namespace, self.name))
        self.expectations_satisfied = satisfied
        """``satisfiedExpectations``: while pod writes of an earlier sync are not yet observed, skip
        ``manageJob`` (only track status), so a lagging pod cache cannot cause double creates/deletes."""
        self.finished_condition: Obj | None = None

    # ------------------------------------------------------------------ syncJob
    def run(self) -> float | None:
        """Returns the requeue delay (back-off or ``activeDeadlineSeconds``); raises the first API
        error after status tracking has been flushed, so the work queue retries with back-off."""
        self.pod_view = self._hold_pod_view()
        return self._sync()

    def _pod_control(self) -> PodControl:
        """The sync's pod writes, built at the first."""
        pods = self._pods
        if pods is None:
            job, record_event = self.job, self._event_sink
            pods = self._pods = PodControl(
                self._client, self.namespace, expectations=self._expectations, job_name=self.name,
                record_event=lambda kind, reason, note: record_event(job, kind, reason, note))
        return pods

    def _hold_pod_view(self) -> JobPodView:
        """The Job's pods as of now, unchanged by this sync's own writes (the next sync counts them)."""
        params = self.shape.view_params
        view = self._pod_views.hold(self.uid, self.namespace, params)
        if view is None:
            self.called = True
            pods = self._client.list("Pod", self.namespace, owner_uid=self.uid)
            view = self._pod_views.start(self.uid, self.namespace, params, pods)
        return view

    def _sync(self) -> float | None:
        self._observe()
        if self.stored_status.get("startTime") is None and not self.suspended:
            self.status["startTime"] = self.now
        self._evaluate_finish()
        suspend_changed = False
        if self.finished_condition is not None:
            active_pods = self.pod_view.active_pods().pods
            deleted_ready, deleted = self._pod_control().delete_pods(active_pods, keep_finalizers=True)
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
        if self._pods is not None and self._pods.error is not None:
            raise self._pods.error
        return self.requeue

    @property
    def quiet(self) -> bool:
        """The sync (run) made no API call, asked for no requeue, found the Job unfinished and read of
        its pods only their counts and classes (nothing of a pod object): what it did depended on no
        more than the Job object, the back-off record, whether expectations were satisfied and the
        view's counts and classes (see job_controller's ``QuietSync``)."""
        return not (self.called or self._pods is not None or self.pod_view.pods_read) \
            and self.requeue is None and self.finished_condition is None

    def _record_event(self, job: Obj, event_type: str, reason: str, note: str) -> None:
        """An event on the Job (a method, not the recorder stored on the sync: a bound method of its
        own kept there would be a reference cycle, and with the cyclic GC off every sync would leak)."""
        self.called = True
        self._event_sink(job, event_type, reason, note)

    def _requeue_after(self, delay: float) -> None:
        self.requeue = delay if self.requeue is None else min(self.requeue, delay)

    # ------------------------------------------------------------------ observe
    def _observe(self) -> None:
        """Count the Job's pods (see :mod:`~fakecluster.controllers.job.pod_view`: the pods changed since
        the last sync are reclassified, the rest keep their place) and stage the new status."""
        stored = self.stored_status
        uncounted = stored.get("uncountedTerminatedPods") or {}
        succeeded_uids = uncounted.get("succeeded") or ()
        failed_uids = uncounted.get("failed") or ()
        self.uncounted_succeeded = frozenset(succeeded_uids) if succeeded_uids else _NO_UIDS
        self.uncounted_failed = frozenset(failed_uids) if failed_uids else _NO_UIDS
        status = dict(stored)
        status["conditions"] = list(stored.get("conditions") or ())
        status["uncountedTerminatedPods"] = {"succeeded": list(succeeded_uids), "failed": list(failed_uids)}
        self.status = status

        indexed, completions = self.indexed, self.completions or 0
        view = self.pod_view
        policy = self.failure_policy
        count_restarts = self.shape.on_failure
        self.active, self.ready, self.terminating = view.active, view.ready, view.terminating
        self.restarts = view.restarts if count_restarts else 0
        self.fail_job_message: str | None = None
        if policy is not None:
            for pod in view.failed_pods():
                self.fail_job_message = match_pod_failure_policy(policy, pod).message
                if self.fail_job_message is not None:
                    break
        finished: list[TrackedPod] = view.finished_tracked_pods() if view.finished_tracked else []
        self.finished_tracked = finished
        new_succeeded: list[Obj] = []
        new_failed: list[Obj] = []
        succeeded_ix: set[int] = set()
        per_index = self.per_index_limit is not None
        failed_tracked: list[tuple[int, Obj]] = []
        for ix, pod, pod_uid, phase, failed in self.finished_tracked:
            if indexed and not 0 <= ix < completions:
                continue
            if failed and per_index:
                failed_tracked.append((ix, pod))
            if phase == "Succeeded":
                if indexed:
                    succeeded_ix.add(ix)
                if pod_uid not in self.uncounted_succeeded:
                    new_succeeded.append(pod)
            elif failed and pod_uid not in self.uncounted_failed:
                new_failed.append(pod)
        counted_failures = len(new_failed)
        if policy is not None:
            counted_failures = sum(1 for p in new_failed if match_pod_failure_policy(policy, p).counts)
        self.succeeded = stored.get("succeeded", 0) + len(new_succeeded) + len(self.uncounted_succeeded)
        self.failed = stored.get("failed", 0) + counted_failures + len(self.uncounted_failed)
        if indexed:
            self.prev_succeeded_indexes = indexes.parse_indexes(stored.get("completedIndexes"), completions)
            self.succeeded_indexes = indexes.with_ordered_indexes(self.prev_succeeded_indexes,
                                                                  sorted(succeeded_ix))
            self.succeeded = indexes.total(self.succeeded_indexes)
            if self.per_index_limit is not None:
                self.failed_tracked = failed_tracked
                self.failed_indexes = failed_indexes(stored.get("failedIndexes"), completions, failed_tracked,
                                                     policy, self.per_index_limit)
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
        if self.failed_indexes is not None:
            self._evaluate_failed_indexes(self.failed_indexes)
        if self.indexed and self.finished_condition is None:
            message = indexes.match_success_policy(self.spec.get("successPolicy"), self.completions or 0,
                                                   self.succeeded_indexes)
            if message is not None:
                self.finished_condition = new_condition(SUCCESS_CRITERIA_MET, "True", SUCCESS_POLICY, message,
                                                        now)

    def _evaluate_failed_indexes(self, failed: indexes.Intervals) -> None:
        """With ``backoffLimitPerIndex``: fail the Job once more indexes failed than ``maxFailedIndexes``
        allows, or once every index finished and one of them failed; then pick each unfinished index's
        last failed pod, whose finalizer waits for its replacement."""
        if self.finished_condition is None:
            failed_total = indexes.total(failed)
            finished_total = failed_total + indexes.total(self.succeeded_indexes)
            max_failed = self.spec.get("maxFailedIndexes")
            reason: tuple[str, str] | None = None
            if max_failed is not None and failed_total > max_failed:
                reason = MAX_FAILED_INDEXES_EXCEEDED
            elif failed_total > 0 and finished_total >= (self.completions or 0):
                reason = FAILED_INDEXES
            if reason is not None:
                self.finished_condition = new_condition(FAILURE_TARGET, "True", *reason, self.now)
        self.delayed = pods_with_delayed_deletion(self.failed_tracked, self.succeeded_indexes, failed,
                                                  self.pod_view.active_pods().indexes)

    def _past_backoff_limit_on_failure(self) -> bool:
        """``pastBackoffLimitOnFailure``: with ``restartPolicy: OnFailure`` pods restart in place, so
        container restarts of Pending/Running pods count against the limit instead."""
        if not self.shape.on_failure:
            return False
        limit = self.spec.get("backoffLimit", 6)
        return self.restarts > 0 if limit == 0 else self.restarts >= limit

    # ------------------------------------------------------------------ manageJob
    def _manage(self) -> bool:
        """``manageJob`` unless the Job is being deleted, then the completion check and the Suspended
        condition. Returns whether the Suspended condition changed."""
        manage_called = False
        if not self.deleting and self.expectations_satisfied:
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
        # A False condition is never added: without conditions, nothing changes.
        changed = bool(conditions) and ensure_condition_status(conditions, SUSPENDED, "False", *JOB_RESUMED,
                                                               now=self.now)
        if changed:
            self._record_event(self.job, "Normal", "Resumed", "Job resumed")
            self.status["startTime"] = self.now
        return changed

    def _manage_job(self) -> int:
        """Delete surplus pods *or* create missing ones (never both in one sync); returns ``active``."""
        active = self.pod_view.active
        if self.suspended:
            return active - self._delete_surplus(self._pods_for_removal(active))
        parallelism = self.spec.get("parallelism", 1)
        if self.completions is None:
            want = active if self.succeeded > 0 else parallelism
        else:
            # max(min(completions - succeeded, parallelism), 0) without the builtin calls (integers)
            left = self.completions - self.succeeded
            want = left if left < parallelism else parallelism
            if want < 0:  # noqa: PLR1730 -- max() is a builtin call, some 1,200 instructions
                want = 0
        surplus = self._pods_for_removal(active - want if active > want else 0)
        if surplus:
            return active - self._delete_surplus(surplus[:MAX_POD_CREATE_DELETE_PER_SYNC])
        diff = want - (self.terminating if self.only_replace_failed else 0) - active
        if diff <= 0:
            return active
        per_index = self.per_index_limit is not None
        remaining = 0.0 if per_index else self.backoff.remaining(self._clock.now)
        if remaining > 0:
            self._requeue_after(max(remaining, SYNC_JOB_BATCH_PERIOD))
            return active
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        pending: list[int] = []
        if self.indexed:
            non_pending = indexes.with_ordered_indexes(self.succeeded_indexes,
                                                       valid_indexes(self.pod_view.active_indexes))
            if self.only_replace_failed:
                non_pending = indexes.with_ordered_indexes(non_pending,
                                                           valid_indexes(self.pod_view.terminating_indexes))
            if self.failed_indexes is not None:
                non_pending = indexes.merge(non_pending, self.failed_indexes)
            pending = indexes.first_pending_indexes(non_pending, diff, self.completions or 0)
            if per_index:
                pending, remaining = creatable_now(pending, self.delayed, self._clock.now)
                if remaining > 0:
                    self._requeue_after(max(remaining, SYNC_JOB_BATCH_PERIOD))
                    return active
            diff = len(pending)
        factory = PodFactory(self.job, self.indexed, self._index_failure_counts if per_index else None)
        return active + self._pod_control().create_pods(factory, diff, pending)

    def _index_failure_counts(self, index: int) -> dict[str, str]:
        return replacement_annotations(self.failure_policy, self.delayed.get(index))

    def _pods_for_removal(self, at_least: int) -> list[Obj]:
        """``activePodsForRemoval``; the common case, nothing to remove, is answered from the view's
        counts without listing the active pods."""
        if at_least == 0 and (not self.indexed or self.pod_view.active_indexes_distinct_in_range()):
            return []
        active, active_indexes = self.pod_view.active_pods()
        return pods_for_removal(active, active_indexes if self.indexed else None, self.completions or 0,
                                at_least)

    def _delete_surplus(self, pods: list[Obj]) -> int:
        ready, removed = self._pod_control().delete_pods(pods, keep_finalizers=False)
        self.terminating += removed
        self.ready -= ready
        return removed

