"""The batch/v1 Job controller emulator (``pkg/controller/job/job_controller.go``, 1.31+ default gates).

It has the shape of every controller here (watch → de-duplicating work queue → level-based reconcile)
and reproduces the timing JobSet can observe:

- Job add, delete and spec (generation) changes sync at once; Job status-only changes and every pod
  event sync after the 1 s ``syncJobBatchPeriod``, so ``status.active/ready/succeeded/failed`` lag the
  pods by about a second. A pod that gets a ``deletionTimestamp`` counts as a deletion at that moment
  (a replacement is created on the next sync, not when the kubelet finally removes it).
- Pod-failure back-off requeues after the remaining back-off; ``activeDeadlineSeconds`` requeues at
  ``startTime + activeDeadlineSeconds``.

The reconcile itself is :class:`fakecluster.controllers.job.sync.JobSync`. This module also runs the
orphan-pod worker (``syncOrphanPod``): pods that still carry ``batch.kubernetes.io/job-tracking`` but
whose Job is gone, finished or no longer their controller get the finalizer removed, which is what lets
an orphaning or background deletion of a Job finish.
"""

from __future__ import annotations

from dataclasses import dataclass

from fakecluster.api.batch_labels import JOB_CONTROLLER_NAME, JOB_TRACKING_FINALIZER
from fakecluster.api.errors import NotFound
from fakecluster.api.objects import Obj, controller_of
from fakecluster.api.watch import WatchEvent
from fakecluster.client.internal import InternalClient
from fakecluster.clock import Clock, parse_rfc3339
from fakecluster.controllers.job.events import JobEventRecorder
from fakecluster.controllers.job.expectations import PodExpectations
from fakecluster.controllers.job.pod_control import remove_tracking_finalizer
from fakecluster.controllers.job.pod_view import JobPodView, JobPodViews, ViewParams
from fakecluster.controllers.job.pods import has_tracking_finalizer
from fakecluster.controllers.job.status import NO_BACKOFF, BackoffRecord, is_finished
from fakecluster.controllers.job.sync import SYNC_JOB_BATCH_PERIOD, JobShape, JobSync
from fakecluster.runtime import Controller

COMPONENT = "job-controller"
DEFAULT_JOB_API_BACKOFF = 1.0
MAX_JOB_API_BACKOFF = 60.0
"""``DefaultJobApiBackOff``/``MaxJobApiBackOff``: a sync that fails with an API error (a Conflict on the
status write, say) is retried after 1 s, doubling up to 1 min, for both the Job and the orphan-pod
queue, not after controller-runtime's 5 ms."""


JobKey = tuple[str, str]
"""``(namespace, name)`` of a Job."""


class JobController:
    """Watches Jobs and Pods and keeps each Job's pods and status converged.

    Work-queue keys are ``("Job", namespace, name)`` for ``syncJob`` and ``("Pod", namespace, name)``
    for the orphan-pod worker (upstream's second queue); both share one :class:`Controller` so a
    scenario sees a single ``job-controller`` queue.
    """

    def __init__(self, client: InternalClient, clock: Clock, *, latency: float = 0.0) -> None:
        """``client``: its API access (user ``job-controller``), with the pod-creation verbs of
        :class:`~fakecluster.client.internal.InternalClient`; ``latency``: the watch-to-sync delay on top
        of the upstream pod-event batching."""
        self._clock = clock
        self._client = client
        self._backoff: dict[JobKey, BackoffRecord] = {}
        self._expectations = PodExpectations(clock)
        self._events = JobEventRecorder(client, clock)
        self._pod_views = JobPodViews()
        """Per Job: its pods as its syncs count them, kept current from the pod watch (see job_pod_view)."""
        self._views_by_uid = self._pod_views.by_uid
        self._quiet: dict[JobKey, QuietSync] = {}
        """Per Job: its last sync, if it was quiet (see :class:`QuietSync`)."""
        self._shapes: dict[JobKey, JobShape] = {}
        """Per Job: what its syncs read from its spec (:class:`JobShape`), while the spec object stays."""
        self.controller = Controller(clock, COMPONENT, self._sync, latency=latency,
                                     backoff_base=DEFAULT_JOB_API_BACKOFF, backoff_max=MAX_JOB_API_BACKOFF)
        self._client.watch("Job", self._on_job_event)
        self._client.watch("Pod", self._on_pod_event)

    # ------------------------------------------------------------------ reconcile
    def _sync(self, key: tuple[str, str, str]) -> float | None:
        kind, namespace, name = key
        if kind == "Pod":
            self._sync_orphan_pod(namespace, name)
            return None
        return self._sync_job(namespace, name)

    def _sync_job(self, namespace: str, name: str) -> float | None:
        """``syncJob``: skip Jobs that are gone, managed elsewhere, finished or of an unknown completion
        mode (dropping their back-off record), else run one :class:`JobSync`, unless the last one was
        quiet and would be again (:class:`QuietSync`)."""
        key = (namespace, name)
        job = self._get_job(namespace, name)
        quiet = self._quiet.pop(key, None)
        if job is None:
            self._backoff.pop(key, None)
            self._expectations.forget(key)
            self._shapes.pop(key, None)
            return None
        backoff = self._backoff.get(key)
        satisfied = self._expectations.satisfied(key)
        # Before the checks below: a quiet sync had this very Job object, and it passed them then.
        if quiet is not None and self._still_quiet(quiet, job, backoff, satisfied):
            self._quiet[key] = quiet
            return None
        spec = job.get("spec") or {}
        if _managed_elsewhere(job):
            return None
        if is_finished(job):
            self._backoff.pop(key, None)
            return None
        if spec.get("completionMode", "NonIndexed") not in ("NonIndexed", "Indexed"):
            self._record_event(job, "Warning", "UnknownCompletionMode",
                               "Skipped Job sync because completion mode is unknown")
            return None

        def save_backoff(record: BackoffRecord) -> None:
            self._backoff[key] = record

        sync = JobSync(self._client, self._clock, job, NO_BACKOFF if backoff is None else backoff,
                       save_backoff=save_backoff, record_event=self._record_event,
                       expectations=self._expectations, pod_views=self._pod_views,
                       shape=self._shapes.get(key), satisfied=satisfied)
        self._shapes[key] = sync.shape
        requeue = sync.run()
        if sync.quiet:
            view = sync.pod_view
            self._quiet[key] = QuietSync(job, backoff, satisfied, sync.uid, sync.shape.view_params, view,
                                         view.moves)
        return requeue

    def _still_quiet(self, quiet: QuietSync, job: Obj, backoff: BackoffRecord | None,
                     satisfied: bool) -> bool:
        """Whether a sync of ``job`` would do what the quiet one before it did, nothing (see
        :class:`QuietSync`); catches the Job's view up."""
        if quiet.job is not job or quiet.backoff is not backoff or quiet.satisfied != satisfied:
            return False
        view = self._pod_views.hold(quiet.uid, quiet.view.namespace, quiet.params)
        return view is quiet.view and view.moves == quiet.moves

    def _sync_orphan_pod(self, namespace: str, name: str) -> None:
        """``syncOrphanPod``: remove the tracking finalizer unless a live, unfinished batch/v1 Job (or an
        externally managed one) still controls the pod."""
        try:
            pod = self._client.get("Pod", namespace, name)
        except NotFound:
            return
        if not has_tracking_finalizer(pod):
            return
        ref = controller_of(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self._resolve(namespace, ref)
            if job is not None and (_managed_elsewhere(job) or not is_finished(job)):
                return
        remove_tracking_finalizer(self._client, namespace, pod)

    # ------------------------------------------------------------------ watch handlers
    def _on_job_event(self, event: WatchEvent) -> None:
        """``addJob``/``updateJob``/``deleteJob``."""
        job = event.object
        meta = job["metadata"]
        key = ("Job", meta.get("namespace", ""), meta["name"])
        if event.type == "ADDED":
            self.controller.enqueue(key)
            return
        if event.type == "DELETED":
            self._pod_views.forget(meta["uid"])
            self._quiet.pop(key[1:], None)
            self._shapes.pop(key[1:], None)
            # kubernetes#132109 (fixes #132042): a Job recreated under the same name (JobSet's restarts)
            # must not inherit the deleted one's pod back-off or expectations, so they go with the
            # DELETED event, not only at a sync that finds the key gone (which may never happen).
            self._backoff.pop(key[1:], None)
            self._expectations.forget(key[1:])
            self.controller.enqueue(key)
            self._enqueue_tracked_pods(job)
            return
        old = event.old or {}
        if meta.get("generation") == (old.get("metadata") or {}).get("generation"):
            self.controller.enqueue(key, after=SYNC_JOB_BATCH_PERIOD)
        else:
            self.controller.enqueue(key)
        if is_finished(job):
            self._enqueue_tracked_pods(job)
        self._requeue_for_new_deadline(key, job, old)

    def _requeue_for_new_deadline(self, key: tuple[str, str, str], job: Obj, old: Obj) -> None:
        """A changed ``activeDeadlineSeconds`` on a started Job needs a sync at the new deadline."""
        start = (job.get("status") or {}).get("startTime")
        deadline = (job.get("spec") or {}).get("activeDeadlineSeconds")
        old_deadline = (old.get("spec") or {}).get("activeDeadlineSeconds")
        if start is None or deadline is None or deadline == old_deadline:
            return
        self.controller.enqueue(key, after=max(deadline - (self._clock.now - parse_rfc3339(start)), 0.0))

    def _on_pod_event(self, event: WatchEvent) -> None:
        """``addPod``/``updatePod``/``deletePod``: wake the controlling Job after the batch period.

        This runs for every pod write in the cluster, so it only looks at metadata and resolves the Job
        only on the deletion path, where the Job's finished state decides between syncing the Job and
        cleaning up an orphan. It also hands the pod to its Jobs' views (see job_pod_view), which is
        what spares each sync a pass over all of a Job's pods.

        Nearly every delivery is an update of a live pod that kept its owners: the very
        ``ownerReferences`` list of the old version, as the store shares what a write did not replace
        (the scheduler's binding, the kubelet's status writes, the tracking finalizer's removal). Those
        take a short path: :meth:`_on_pod_event_general` without the parts that cannot apply to them
        (no expectation is observed, upstream's ``updatePod`` goes to ``deletePod`` only for a pod with
        a ``deletionTimestamp``, and the controller reference did not change); the same views are
        fed and the same key is queued (tests/test_job_pod_events.py compares the two).
        """
        pod = event.object
        meta = pod["metadata"]
        old = event.old
        refs = meta.get("ownerReferences")
        if (event.type != "MODIFIED" or old is None or refs is not old["metadata"].get("ownerReferences")
                or meta.get("deletionTimestamp") is not None):
            self._on_pod_event_general(event)
            return
        if refs:
            namespace = meta.get("namespace", "")
            # JobPodViews.on_pod_event for an update that kept the very owner list: the pod goes to the
            # views of those owners, and to no other (it left none). Written out here, the views' dict
            # and their ``written`` feed read directly: two method calls per pod write cost more.
            views = self._views_by_uid
            for ref in refs:
                view = views.get(ref.get("uid", ""))
                if view is not None and (not view.namespace or view.namespace == namespace):
                    view.written[(namespace, meta["name"])] = pod
            for ref in refs:
                if ref.get("controller"):  # metav1.GetControllerOf
                    if ref.get("kind") == "Job":
                        self.controller.enqueue(("Job", namespace, ref["name"]), SYNC_JOB_BATCH_PERIOD)
                    return
        if JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()):
            self.controller.enqueue(("Pod", meta.get("namespace", ""), meta["name"]))

    def _on_pod_event_general(self, event: WatchEvent) -> None:
        """:meth:`_on_pod_event` for any delivery."""
        self._pod_views.on_pod_event(event)
        pod = event.object
        meta = pod["metadata"]
        ref = controller_of(pod)
        deleting = event.type == "DELETED" or meta.get("deletionTimestamp") is not None
        if deleting or event.type == "ADDED":
            self._observe_expectations(event, ref)
        if deleting:
            if event.type == "MODIFIED" and event.old is not None \
                    and event.old["metadata"].get("resourceVersion") == meta.get("resourceVersion"):
                return
            self._on_pod_deleted(pod)
            return
        old = event.old
        if event.type == "MODIFIED" and old is not None \
                and old["metadata"].get("ownerReferences") is not meta.get("ownerReferences"):
            old_ref = controller_of(old)
            if old_ref is not None and old_ref != ref and old_ref.get("kind") == "Job":
                self._enqueue_batched(meta.get("namespace", ""), old_ref["name"])
        if ref is not None:
            if ref.get("kind") == "Job":
                self._enqueue_batched(meta.get("namespace", ""), ref["name"])
        elif JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()):
            self.controller.enqueue(("Pod", meta.get("namespace", ""), meta["name"]))

    def _observe_expectations(self, event: WatchEvent, ref: Obj | None) -> None:
        """``CreationObserved`` on a pod's ADDED, ``DeletionObserved`` once it is terminating or gone,
        for the Job named by ``ref``, the pod's controller reference."""
        meta = event.object["metadata"]
        if ref is None or ref.get("kind") != "Job":
            return
        job_key = (meta.get("namespace", ""), ref["name"])
        if event.type == "DELETED" or meta.get("deletionTimestamp") is not None:
            self._expectations.deletion_observed(job_key, meta["name"])
        elif event.type == "ADDED":
            self._expectations.creation_observed(job_key)

    def _on_pod_deleted(self, pod: Obj) -> None:
        meta = pod["metadata"]
        namespace = meta.get("namespace", "")
        ref = controller_of(pod)
        tracked = JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ())
        job = self._resolve(namespace, ref) if ref is not None and ref.get("kind") == "Job" else None
        if job is None or is_finished(job):
            if tracked and (ref is None or ref.get("kind") == "Job"):
                self.controller.enqueue(("Pod", namespace, meta["name"]))
            return
        self._enqueue_batched(namespace, job["metadata"]["name"])

    def _enqueue_batched(self, namespace: str, name: str) -> None:
        self.controller.enqueue(("Job", namespace, name), after=SYNC_JOB_BATCH_PERIOD)

    def _enqueue_tracked_pods(self, job: Obj) -> None:
        """``cleanupPodFinalizers``: hand pods of a deleted or finished Job that still carry the tracking
        finalizer to the orphan worker."""
        meta = job["metadata"]
        namespace = meta.get("namespace", "")
        for pod in self._client.list("Pod", namespace, owner_uid=meta["uid"]):
            if has_tracking_finalizer(pod):
                ref = controller_of(pod)
                if ref is not None and ref.get("uid") == meta["uid"]:
                    self.controller.enqueue(("Pod", namespace, pod["metadata"]["name"]))

    # ------------------------------------------------------------------ helpers
    def _get_job(self, namespace: str, name: str) -> Obj | None:
        try:
            return self._client.get("Job", namespace, name)
        except NotFound:
            return None

    def _resolve(self, namespace: str, ref: Obj) -> Obj | None:
        """``resolveControllerRef``: the Job named by the reference, if its UID still matches."""
        if ref.get("kind") != "Job":
            return None
        job = self._get_job(namespace, ref["name"])
        if job is None or job["metadata"]["uid"] != ref.get("uid"):
            return None
        return job

    def _record_event(self, job: Obj, event_type: str, reason: str, note: str) -> None:
        """An event on the Job through the correlating recorder (:mod:`.events`); a cluster that does not
        serve Events answers the writes NotFound, which, like any other failure, drops the event."""
        self._events.event(job, event_type, reason, note)


@dataclass(slots=True, eq=False)
class QuietSync:
    """A Job's last sync, which was quiet (:attr:`JobSync.quiet`): no API call, no requeue, not
    finishing the Job, and nothing of its pods read but their counts and classes.

    Such a sync is a function of the Job object, the pod-failure back-off record, whether the pod
    expectations were satisfied, and the view's counts and classes; the clock it reads only where it
    writes (a start time, a condition, a Suspended change) or requeues (deadline, back-off), which it
    did not. Its own effects were none. So the next sync of the Job, if it finds the very same Job object
    (the store never changes one), the same back-off record, expectations as satisfied as then and a view
    whose pods have not moved between counts or classes since (:attr:`JobPodView.moves`), would do again
    exactly nothing: ``syncJob`` (``pkg/controller/job/job_controller.go``) with nothing to write; it is
    skipped once the view is caught up (tests/test_perf_jc_quiet_sync.py runs the full sync beside each
    skip). The many pod writes that change no count (binding, image pulls, container starts) wake a
    Job's sync this way."""

    job: Obj
    backoff: BackoffRecord | None
    satisfied: bool
    uid: str
    params: ViewParams
    view: JobPodView
    moves: int
    """``view.moves`` when the sync ran."""


def _managed_elsewhere(job: Obj) -> bool:
    """``managedByExternalController``: ``spec.managedBy`` set to anything but the built-in name."""
    managed_by = (job.get("spec") or {}).get("managedBy")
    return managed_by is not None and managed_by != JOB_CONTROLLER_NAME
