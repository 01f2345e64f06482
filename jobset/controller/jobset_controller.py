"""The JobSet reconcile loop: port of ``Reconcile`` / ``reconcile`` / ``reconcileReplicatedJobs`` /
``createJobs`` / ``deleteJobs`` / ``updateJobSetStatus`` / ``syncJobScaling`` and ``SetupWithManager`` of
upstream ``pkg/controllers/jobset_controller.go``.

Shape, as upstream: read the JobSet, classify its Jobs, converge, and write the status **once** at the
end; condition events are emitted only after that write succeeds, while creation-failure events are
emitted at once. An error anywhere skips the status write (and loses the queued events) and the work
queue retries with back-off. The controller holds no state between reconciles except its event cache,
so a restarted controller picks up from what the API server stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, clone, controller_of, owner_reference
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock
from fakecluster.runtime import Controller, NamespacedName
from jobset import features
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ChildJobs,
    calculate_replicated_job_statuses,
    construct_jobs_from_template,
    get_child_jobs,
    update_replicated_jobs_statuses,
)
from jobset.controller.child_jobs_cache import ChildJobsCache, owner_of
from jobset.controller.conditions import StatusUpdate, set_restarting_condition_false
from jobset.controller.depends_on import dependency_reached_status
from jobset.controller.errors import ReconcileError, join_errors
from jobset.controller.events import EVENT_TYPE_WARNING, EventRecorder
from jobset.controller.failure_policy import execute_failure_policy
from jobset.controller.job_facts import JobFactsCache
from jobset.controller.service import create_headless_svc_if_necessary
from jobset.controller.spec import (
    find_replicated_job_status,
    jobset_finished,
    jobset_marked_for_deletion,
    jobset_suspended,
    labels_of,
    managed_by_external_controller,
    replicas,
    replicated_jobs,
    spec_of,
)
from jobset.controller.startup_policy import (
    all_replicas_started,
    in_order_startup_policy,
    set_in_order_startup_policy_completed_condition,
    set_in_order_startup_policy_in_progress_condition,
)
from jobset.controller.success_policy import execute_success_policy
from jobset.controller.suspend import resume_jobs_if_necessary, suspend_jobs
from jobset.controller.ttl_after_finished import execute_ttl_after_finished_policy
from jobset.controller.volume_claim_policy import reconcile_volume_claim_policies

if TYPE_CHECKING:
    from jobset.features import FeatureGates

RECONCILING = "Reconciling"
"""The ``action`` of every event the JobSet controller records."""


class JobSetController:
    """The JobSet controller (``JobSetReconciler`` + its manager wiring) on a fakecluster work queue.

    Watches JobSets (key ``(namespace, name)``) and the Jobs and Services they control, like
    ``For(&JobSet{}).Owns(&Job{}).Owns(&Service{})``. Like an informer's initial List, construction
    enqueues every existing JobSet, so a controller restarted after a crash resumes where the API
    server's state says it should.
    """

    def __init__(
        self, client: Client, clock: Clock, *, gates: FeatureGates | None = None, latency: float = 0.0
    ) -> None:
        self.client = client
        self.clock = clock
        self.gates = gates
        self.recorder = EventRecorder(client, clock)
        self.job_facts = JobFactsCache()
        """What each reconcile reads of a child Job, per Job version (:mod:`jobset.controller.job_facts`)."""
        self.child_jobs = ChildJobsCache(self.job_facts)
        """Each JobSet's classified Jobs, patched per Job (:mod:`jobset.controller.child_jobs_cache`)."""
        self.controller = Controller(clock, "jobset-controller", self.reconcile, latency=latency)
        client.watch(api.KIND, self._on_jobset)
        client.watch("Job", self._on_job)
        client.watch("Service", self._on_owned)
        for js in client.list(api.KIND):
            self.controller.enqueue((js["metadata"].get("namespace", ""), js["metadata"]["name"]))

    def _gate(self, name: str) -> bool:
        """``features.Enabled(name)``; without gates every gate has its default (all alpha: off)."""
        return self.gates.enabled(name) if self.gates is not None else False

    @property
    def restart_job_enabled(self) -> bool:
        return self._gate(features.RESTART_JOB)

    def stop(self) -> None:
        """Drop queued work and the client's informer cache, if it has one: used to emulate a controller
        crash before a restart (the process's memory, cache included, is gone)."""
        self.controller.stop()
        self.job_facts.clear()
        self.child_jobs.clear()
        stop_client = getattr(self.client, "stop", None)
        if callable(stop_client):
            stop_client()

    # ------------------------------------------------------------------ watches
    def _on_jobset(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        self.controller.enqueue((meta.get("namespace", ""), meta["name"]))

    def _on_owned(self, event: WatchEvent, *, job: bool = False) -> None:
        """``handler.EnqueueRequestForOwner(..., OnlyControllerOwner())`` for the old and new object.

        ``job``: the object is a Job, whose name is also told to the child-Jobs cache as a hint of where
        the JobSet's next List may differ from its last (:meth:`ChildJobsCache.touched`)."""
        for obj in (event.object, event.old):
            if obj is None:
                continue
            ref = controller_of(obj)
            if (
                ref is not None
                and ref.get("kind") == api.KIND
                and str(ref.get("apiVersion", "")).split("/")[0] == api.GROUP
            ):
                meta = obj["metadata"]
                namespace = meta.get("namespace", "")
                self.controller.enqueue((namespace, ref["name"]))
                if job:
                    self.child_jobs.touched(namespace, ref["name"], meta["name"])

    def _on_job(self, event: WatchEvent) -> None:
        """:meth:`_on_owned` of a Job."""
        self._on_owned(event, job=True)

    # ------------------------------------------------------------------ reconcile
    def reconcile(self, key: NamespacedName) -> float | None:
        """``Reconcile``: returns the requeue-after seconds (TTL only) or None; errors propagate."""
        namespace, name = key
        try:
            js = reconcile_copy(self.client.get(api.KIND, namespace, name))
        except NotFound:
            self.child_jobs.forget(namespace, name)
            return None
        if jobset_marked_for_deletion(js):
            self.child_jobs.forget(namespace, name)
            return None
        opts = StatusUpdate(now=self.clock.timestamp())
        requeue_after = self._reconcile(js, opts)
        self._update_jobset_status(js, opts)
        return requeue_after

    def _reconcile(self, js: Obj, opts: StatusUpdate) -> float | None:
        """``JobSetReconciler.reconcile`` (``pkg/controllers/jobset_controller.go``), step by step."""
        if managed_by_external_controller(js) is not None:
            return None
        restart_job = self.restart_job_enabled
        owned = self._get_child_jobs(js, restart_job=restart_job)
        statuses = calculate_replicated_job_statuses(js, owned, restart_job=restart_job, facts=self.job_facts)
        update_replicated_jobs_statuses(js, statuses, opts)
        if jobset_finished(js):
            self.delete_jobs(owned.active)
            return execute_ttl_after_finished_policy(self.client, self.clock, js)
        self.delete_jobs(owned.previous)
        if not jobset_suspended(js) and all_jobs_ready(js, statuses):
            set_restarting_condition_false(
                js,
                api.RESTARTING_JOBSET_REASON_JOBS_READY,
                api.RESTARTING_JOBSET_REASON_JOBS_READY_MESSAGE,
                opts,
            )
        if owned.failed:
            execute_failure_policy(js, owned.failed, opts, restart_job=restart_job)
            return None
        counts = owned.summary.counts if owned.summary is not None else None  # the view's, if cached
        if owned.successful and execute_success_policy(js, owned.successful, opts, counts=counts):
            return None
        create_headless_svc_if_necessary(self.client, self.recorder, js)
        if spec_of(js).get("volumeClaimPolicies"):
            reconcile_volume_claim_policies(self.client, self.recorder, js)
        if self._gate(features.ELASTIC_JOBSET):
            self.sync_job_scaling(js, owned.active)
        self.reconcile_replicated_jobs(js, owned, statuses, opts)
        if jobset_suspended(js):
            suspend_jobs(self.client, js, owned.active, opts)
        else:
            resume_jobs_if_necessary(
                self.client, js, owned.suspended_active(self.job_facts), statuses, opts, facts=self.job_facts
            )
        # restartStrategy InPlaceRestart (alpha, gate InPlaceRestart) is not emulated: upstream only logs
        # when the gate is off, and with it on would reconcile pod restart attempts here.
        return None

    def _get_child_jobs(self, js: Obj, *, restart_job: bool) -> ChildJobs:
        """``getChildJobs``: List the Jobs, keep those of the owner-UID field index
        (``.metadata.controller``: the *controller* reference is this JobSet's UID, apiVersion and kind),
        classify them. Sorted by name, as the server lists them.

        Without the RestartJob gate the classification is the cached view of the previous List, patched
        where Jobs changed (:mod:`jobset.controller.child_jobs_cache`); with it, derived afresh."""
        uid = js["metadata"]["uid"]
        listed = self.client.list("Job", js["metadata"].get("namespace", ""), owner_uid=uid)
        if not restart_job:
            return self.child_jobs.child_jobs(js, listed)
        owner = owner_of(js)
        facts = self.job_facts
        owned = [job for job in listed if facts(job).controller == owner]
        return get_child_jobs(js, owned, restart_job=True, facts=facts)

    def _update_jobset_status(self, js: Obj, opts: StatusUpdate) -> None:
        """``updateJobSetStatus``: one status write, then the queued events in order."""
        if not opts.should_update:
            return
        js["status"] = wire_status(js.get("status") or {})
        updated = self.client.update_status(js)
        for event in opts.events:
            self.recorder.eventf(updated, None, event.event_type, event.reason, RECONCILING, event.message)

    def reconcile_replicated_jobs(
        self, js: Obj, owned: ChildJobs, statuses: list[Obj], opts: StatusUpdate
    ) -> None:
        """``reconcileReplicatedJobs``: create missing Jobs in spec order, honouring dependsOn and InOrder.

        With InOrder and not suspended, only one ReplicatedJob "wave" is created per pass and later ones
        wait until the previous one has fully started; while suspended, every eligible ReplicatedJob gets
        its (suspended) Jobs at once and no startup condition is set.
        """
        in_order = not jobset_suspended(js) and in_order_startup_policy(spec_of(js).get("startupPolicy"))
        rjob_replicas: dict[str, int] = {}
        for rjob in replicated_jobs(js):
            jobs = construct_jobs_from_template(js, rjob, owned, restart_job=self.restart_job_enabled)
            status = find_replicated_job_status(statuses, rjob.get("name", ""))
            rjob_replicas[rjob.get("name", "")] = replicas(rjob)
            if not dependency_reached_status(rjob, rjob_replicas, statuses):
                continue
            if in_order and all_replicas_started(replicas(rjob), status):
                continue
            try:
                self.create_jobs(js, jobs)
            except ReconcileError as err:
                self.recorder.eventf(
                    js, None, EVENT_TYPE_WARNING, api.JOB_CREATION_FAILED_REASON, RECONCILING, err.message
                )
                raise
            if in_order:
                set_in_order_startup_policy_in_progress_condition(js, opts)
                return
        if in_order:
            set_in_order_startup_policy_completed_condition(js, opts)

    def create_jobs(self, js: Obj, jobs: list[Obj]) -> None:
        """``createJobs``: create each Job with the JobSet as controller owner; failures are joined.

        Upstream creates up to 50 in parallel; here they are created in index order, and every creation
        is attempted even after a failure, as the parallel loop does.
        """
        errors = []
        for job in jobs:
            job["metadata"]["ownerReferences"] = [owner_reference(js)]
            try:
                self.client.create(job)
            except ApiError as err:
                errors.append(f'job "{job["metadata"]["name"]}" creation failed with error: {err.message}')
        if errors:
            raise ReconcileError(join_errors(errors))

    def delete_jobs(self, jobs: list[Obj]) -> None:
        """``deleteJobs``: foreground-delete each Job not already being deleted; NotFound is ignored."""
        errors = []
        for job in jobs:
            meta = job["metadata"]
            if meta.get("deletionTimestamp") is not None:
                continue
            try:
                self.client.delete(
                    "Job", meta.get("namespace", ""), meta["name"], propagation_policy="Foreground"
                )
            except NotFound:
                pass
            except ApiError as err:
                errors.append(err.message)
        if errors:
            raise ReconcileError(join_errors(errors))

    def sync_job_scaling(self, js: Obj, active: list[Obj]) -> None:
        """``syncJobScaling`` (gate ElasticJobSet): merge-patch drifted ``parallelism``/``completions`` of
        active Jobs to the template's, only when the template's two values are equal."""
        desired = {
            r.get("name", ""): (r.get("template") or {}).get("spec") or {} for r in replicated_jobs(js)
        }
        errors = []
        for job in active:
            rjob_name = labels_of(job).get(api.REPLICATED_JOB_NAME_KEY)
            if rjob_name is None or rjob_name not in desired:
                continue
            wanted = {k: desired[rjob_name].get(k) for k in ("parallelism", "completions")}
            if wanted["parallelism"] != wanted["completions"]:
                continue
            spec = job.get("spec") or {}
            changed = {k: v for k, v in wanted.items() if spec.get(k) != v}
            if not changed:
                continue
            meta = job["metadata"]
            patch = {"spec": changed}
            try:
                self.client.patch("Job", meta.get("namespace", ""), meta["name"], patch)
            except ApiError as err:
                errors.append(f'failed to patch job "{meta["name"]}" for scaling: {err.message}')
        if errors:
            raise ReconcileError(join_errors(errors))


def reconcile_copy(js: Obj) -> Obj:
    """The JobSet a reconcile works on: a private copy, as controller-runtime's cached Get deep-copies
    into the caller's struct, since the reconcile fills in the status it writes back.

    Only the top level, ``metadata`` and ``status`` are copied; the ``spec`` (the bulk: every pod
    template) is the stored snapshot's, shared read-only. Nothing in the reconcile writes to it (what it
    builds from templates, it clones), and the test suite's snapshot guard
    (:mod:`fakecluster.apiserver.snapshots`) would catch a write. The status is copied as deep as the
    reconcile writes into it (:func:`status_copy`)."""
    copy = dict(js)
    if "metadata" in copy:
        copy["metadata"] = clone(copy["metadata"])
    if "status" in copy:
        copy["status"] = status_copy(copy["status"])
    return copy


def status_copy(status: object) -> object:
    """A copy of a JobSet status that every write of the reconcile may go to: the status itself (its
    fields are set), its ``conditions`` list (:func:`~jobset.controller.conditions.update_condition`
    replaces and appends items, never changes one), its ``replicatedJobsStatus`` list
    (:func:`~jobset.controller.child_jobs.replicated_job_statuses_equal` sorts it in place) and that
    list's entries (the failure policy sets their ``jobRestarts`` lists, never changes one). The rest is
    the stored snapshot's, shared read-only, as the spec is (the snapshot guard would catch a write): a
    deep :func:`clone` of it all cost some 57k instructions per reconcile, 2% of a run of 500 small Jobs
    reconciled some 8 times each. Anything not of the expected shape is cloned."""
    if type(status) is not dict:
        return clone(status)
    copy = dict(status)
    conditions = copy.get("conditions")
    if conditions is not None:
        copy["conditions"] = list(conditions) if type(conditions) is list else clone(conditions)
    entries = copy.get("replicatedJobsStatus")
    if entries is not None:
        copy["replicatedJobsStatus"] = (
            [dict(entry) if type(entry) is dict else clone(entry) for entry in entries]
            if type(entries) is list else clone(entries)
        )
    return copy


def all_jobs_ready(js: Obj, statuses: list[Obj]) -> bool:
    """``allJobsReady``: Σ(ready + succeeded) over the statuses == Σ spec replicas (0 == 0 is true).
    Loops rather than sum() over generators, and :func:`~jobset.controller.spec.count` written out: this
    runs at every reconcile."""
    total = 0
    for rjob in replicated_jobs(js):
        total += replicas(rjob)
    started = 0
    for status in statuses:
        if status is not None:
            started += int(status.get("ready") or 0) + int(status.get("succeeded") or 0)
    return total == started


def wire_status(status: Obj) -> Obj:
    """``JobSetStatus`` as Go's ``encoding/json`` writes it: ``restarts`` always, the other fields only
    when non-empty, the ReplicatedJob counters always."""
    out: Obj = {}
    if status.get("conditions"):
        out["conditions"] = status["conditions"]
    out["restarts"] = int(status.get("restarts") or 0)
    if status.get("restartsCountTowardsMax"):
        out["restartsCountTowardsMax"] = int(status["restartsCountTowardsMax"])
    if status.get("terminalState"):
        out["terminalState"] = status["terminalState"]
    if status.get("replicatedJobsStatus"):
        out["replicatedJobsStatus"] = [_wire_rjob_status(s) for s in status["replicatedJobsStatus"]]
    for key in ("previousInPlaceRestartAttempt", "currentInPlaceRestartAttempt"):
        if status.get(key) is not None:
            out[key] = status[key]
    return out


def _wire_rjob_status(status: Obj) -> Obj:
    out: Obj = {"name": status.get("name", "")}
    for key in ("ready", "succeeded", "failed", "active", "suspended"):
        out[key] = int(status.get(key) or 0)
    for key in ("jobRestarts", "jobRestartsCountTowardsMax"):
        if status.get(key):
            out[key] = list(status[key])
    return out
