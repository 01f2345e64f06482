"""JobSet invariants, checked in every run through the workload plugin (``fakecluster.invariants``).

Each is a small class whose docstring cites the upstream rule (kubernetes-sigs/jobset). They judge what
the cluster holds, written independently of the controller port: an invariant that called the port's own
helpers would agree with any bug in them.

"Started" and "complete" are judged per attempt (the ``jobset.sigs.k8s.io/restart-attempt`` label) and as
*ever observed*: the controller acts on its informer's view, which may trail the store, so a replicated
job that was started at any instant before a Job of the next one was created justifies that creation.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj, condition_true
from fakecluster.api.watch import WatchEvent
from fakecluster.invariants import BaseInvariant, ClusterView, Invariant, Report
from jobset.api.v1alpha2 import jobset_types as api

DEFAULT_MANAGED_BY = "jobset.sigs.k8s.io/jobset-controller"

JobKey = tuple[str, str, str, str]
"""(JobSet name, namespace, restart attempt, replicated job)."""


def _labels(obj: Obj) -> dict[str, str]:
    return obj["metadata"].get("labels") or {}


def _pods_count(job: Obj) -> int:
    """``podsCount`` of ``calculateReplicatedJobStatuses`` (``pkg/controllers/jobset_controller.go``):
    parallelism, lowered to completions when that is smaller."""
    spec = job.get("spec") or {}
    count = spec.get("parallelism", 1)
    completions = spec.get("completions")
    if completions is not None and completions < count:
        count = completions
    return int(count)


def _job_started(job: Obj) -> bool:
    """Counted by ``allReplicasStarted`` (``pkg/controllers/startup_policy.go``): failed, succeeded, or
    ready (succeeded + ready pods >= podsCount)."""
    if condition_true(job, "Complete") or condition_true(job, "Failed"):
        return True
    status = job.get("status") or {}
    return (status.get("succeeded") or 0) + (status.get("ready") or 0) >= _pods_count(job)


def _spec_of(view: ClusterView, job: Obj) -> Obj | None:
    for ref in job["metadata"].get("ownerReferences") or ():
        if ref.get("kind") == api.KIND and ref.get("controller"):
            owner = view.get_by_uid(ref.get("uid", ""))
            return None if owner is None else owner.get("spec") or {}
    return None


class _StartTracker(BaseInvariant):
    """Remembers, per attempt and replicated job, which Job indexes were ever started or complete."""

    kinds = ("Job",)

    def __init__(self) -> None:
        self.started: dict[JobKey, set[str]] = {}
        self.complete: dict[JobKey, set[str]] = {}

    @staticmethod
    def key(job: Obj, rjob: str | None = None) -> JobKey:
        labels = _labels(job)
        return (
            labels.get(api.JOBSET_NAME_KEY, ""),
            job["metadata"].get("namespace", ""),
            labels.get(api.RESTARTS_KEY, "0"),
            rjob if rjob is not None else labels.get(api.REPLICATED_JOB_NAME_KEY, ""),
        )

    def track(self, job: Obj) -> None:
        key = self.key(job)
        index = _labels(job).get(api.JOB_INDEX_KEY, "")
        if _job_started(job):
            self.started.setdefault(key, set()).add(index)
        if condition_true(job, "Complete"):
            self.complete.setdefault(key, set()).add(index)

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != "Job" or api.JOBSET_NAME_KEY not in _labels(event.object):
            return
        self.track(event.object)
        if event.type == "DELETED":
            return
        spec = _spec_of(view, event.object)
        if spec is None:
            return
        was_suspended = event.old is not None and bool((event.old.get("spec") or {}).get("suspend"))
        now_suspended = bool((event.object.get("spec") or {}).get("suspend"))
        self.check(event, spec, created=event.type == "ADDED", resumed=was_suspended and not now_suspended,
                   suspended=now_suspended, report=report)

    def check(self, event: WatchEvent, spec: Obj, *, created: bool, resumed: bool, suspended: bool,
              report: Report) -> None:
        raise NotImplementedError

    def _replicas(self, spec: Obj, rjob: str) -> int | None:
        for entry in spec.get("replicatedJobs") or ():
            if entry.get("name") == rjob:
                return int(entry.get("replicas", 1))
        return None


class InOrderStartup(_StartTracker):
    """With ``startupPolicyOrder: InOrder`` and the JobSet not suspended, no Job of replicated job k+1 is
    created (or resumed) in an attempt before every Job of replicated job k is started in that attempt
    (``pkg/controllers/jobset_controller.go`` ``reconcileReplicatedJobs``, ``resumeJobsIfNecessary``;
    ``pkg/controllers/startup_policy.go`` ``allReplicasStarted``)."""

    name = "inOrderStartup"

    def check(self, event: WatchEvent, spec: Obj, *, created: bool, resumed: bool, suspended: bool,
              report: Report) -> None:
        if (spec.get("startupPolicy") or {}).get("startupPolicyOrder") != api.IN_ORDER:
            return
        if suspended or not (created or resumed):
            return
        rjobs = [r.get("name") for r in spec.get("replicatedJobs") or ()]
        rjob = _labels(event.object).get(api.REPLICATED_JOB_NAME_KEY)
        if rjob not in rjobs or rjobs.index(rjob) == 0:
            return
        previous = rjobs[rjobs.index(rjob) - 1]
        replicas = self._replicas(spec, previous) or 0
        started = len(self.started.get(self.key(event.object, previous), ()))
        if started < replicas:
            verb = "created" if created else "resumed"
            report(f"Job {event.object['metadata']['name']} of replicated job {rjob} {verb} while only "
                   f"{started} of {replicas} Jobs of {previous} had started")


class DependsOnRespected(_StartTracker):
    """A replicated job with ``dependsOn`` gets no Job in an attempt (even a suspended one) before every
    dependency reached its status in that attempt: ``Ready`` = all its Jobs started, ``Complete`` = all
    succeeded (``pkg/controllers/depends_on.go`` ``dependencyReachedStatus``)."""

    name = "dependsOnRespected"

    def check(self, event: WatchEvent, spec: Obj, *, created: bool, resumed: bool, suspended: bool,
              report: Report) -> None:
        if not created:
            return
        rjob = _labels(event.object).get(api.REPLICATED_JOB_NAME_KEY)
        entry = next((r for r in spec.get("replicatedJobs") or () if r.get("name") == rjob), None)
        for dep in (entry or {}).get("dependsOn") or ():
            replicas = self._replicas(spec, dep.get("name", "")) or 0
            seen = self.complete if dep.get("status") == "Complete" else self.started
            reached = len(seen.get(self.key(event.object, dep.get("name", "")), ()))
            if reached < replicas:
                report(f"Job {event.object['metadata']['name']} of {rjob} created while {dep.get('name')} "
                       f"had {reached} of {replicas} Jobs {dep.get('status')}")


class OneJobPerSlot(BaseInvariant):
    """At most one live Job per (JobSet, replicated job, job index, restart attempt): the controller
    creates a Job only for names no owned Job holds (``pkg/controllers/jobset_controller.go``
    ``constructJobsFromTemplate``)."""

    name = "oneJobPerSlot"
    kinds = ("Job",)

    def __init__(self) -> None:
        self.live: dict[tuple[str, str, str, str, str], str] = {}

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != "Job":
            return
        labels = _labels(event.object)
        if api.JOBSET_NAME_KEY not in labels:
            return
        slot = (
            event.object["metadata"].get("namespace", ""),
            labels[api.JOBSET_NAME_KEY],
            labels.get(api.REPLICATED_JOB_NAME_KEY, ""),
            labels.get(api.JOB_INDEX_KEY, ""),
            labels.get(api.RESTARTS_KEY, ""),
        )
        uid = event.object["metadata"]["uid"]
        if event.type == "DELETED":
            if self.live.get(slot) == uid:
                del self.live[slot]
            return
        other = self.live.get(slot)
        if other is not None and other != uid:
            report(f"two live Jobs for {slot[1]}/{slot[2]} index {slot[3]} attempt {slot[4]}")
        self.live[slot] = uid


class JobSetStatusRules(BaseInvariant):
    """Rules on every written JobSet status: a finished JobSet stays finished (``Completed``/``Failed``
    never revert, ``terminalState`` never changes and is set with its condition); ``restarts`` never
    decreases; ``restartsCountTowardsMax`` never exceeds ``maxRestarts`` (the JobSet fails first);
    ``replicatedJobsStatus`` is kept sorted by name, descending (``pkg/controllers/jobset_controller.go``:
    ``updateJobSetStatus``, ``calculateReplicatedJobStatuses``; ``pkg/controllers/failure_policy.go``)."""

    name = "jobSetStatusRules"
    kinds = (api.KIND,)

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != api.KIND or event.type == "DELETED":
            return
        js, old = event.object, event.old
        name = js["metadata"]["name"]
        spec, status = js.get("spec") or {}, js.get("status") or {}
        finished = [c for c in (api.JOBSET_COMPLETED, api.JOBSET_FAILED) if condition_true(js, c)]
        if len(finished) > 1 or status.get("terminalState", "") != "".join(finished):
            report(f"JobSet {name}: terminalState {status.get('terminalState')!r} with conditions {finished}")
        counted = status.get("restartsCountTowardsMax") or 0
        budget = (spec.get("failurePolicy") or {}).get("maxRestarts") or 0
        if counted > budget:
            report(f"JobSet {name}: restartsCountTowardsMax {counted} > maxRestarts {budget}")
        names = [s.get("name") for s in status.get("replicatedJobsStatus") or ()]
        if names != sorted(names, reverse=True):
            report(f"JobSet {name}: replicatedJobsStatus order {names}")
        if old is None:
            return
        for cond in (api.JOBSET_COMPLETED, api.JOBSET_FAILED):
            if condition_true(old, cond) and not condition_true(js, cond):
                report(f"JobSet {name}: condition {cond}=True was lost")
        old_status = old.get("status") or {}
        if old_status.get("terminalState") and status.get("terminalState") != old_status["terminalState"]:
            report(f"JobSet {name}: terminalState {old_status['terminalState']} changed")
        if (status.get("restarts") or 0) < (old_status.get("restarts") or 0):
            report(f"JobSet {name}: status.restarts {old_status.get('restarts')} -> {status.get('restarts')}")


class StatusMatchesJobs(BaseInvariant):
    """At quiescence, an unfinished, unsuspended JobSet's ``replicatedJobsStatus`` equals a recomputation
    from its Jobs of the current attempt (``pkg/controllers/jobset_controller.go``
    ``calculateReplicatedJobStatuses``: ready / succeeded / failed / active / suspended per replicated
    job; Jobs of earlier attempts ignored)."""

    name = "statusMatchesJobs"
    COUNTERS = ("ready", "succeeded", "failed", "active", "suspended")

    def quiet(self, view: ClusterView, report: Report) -> None:
        jobs_by_owner: dict[str, list[Obj]] = {}
        for job in view.list("Job"):
            for ref in job["metadata"].get("ownerReferences") or ():
                if ref.get("kind") == api.KIND and ref.get("controller"):
                    jobs_by_owner.setdefault(ref.get("uid", ""), []).append(job)
        for js in view.list(api.KIND):
            spec, status = js.get("spec") or {}, js.get("status") or {}
            if (js["metadata"].get("deletionTimestamp") or spec.get("suspend") or status.get("terminalState")
                    or spec.get("managedBy") not in (None, DEFAULT_MANAGED_BY)):
                continue
            expected = self.recompute(spec, status, jobs_by_owner.get(js["metadata"]["uid"], []))
            written = {
                s.get("name"): {c: s.get(c) or 0 for c in self.COUNTERS}
                for s in status.get("replicatedJobsStatus") or ()
            }
            if written and written != expected:
                report(f"JobSet {js['metadata']['name']}: status {written} but its Jobs give {expected}")

    def recompute(self, spec: Obj, status: Obj, jobs: list[Obj]) -> dict[str, dict[str, int]]:
        attempt = str(status.get("restarts") or 0)
        out = {r.get("name"): dict.fromkeys(self.COUNTERS, 0) for r in spec.get("replicatedJobs") or ()}
        for job in jobs:
            labels = _labels(job)
            entry = out.get(labels.get(api.REPLICATED_JOB_NAME_KEY))
            if entry is None or labels.get(api.RESTARTS_KEY) != attempt:
                continue
            if condition_true(job, "Complete"):
                entry["succeeded"] += 1
            elif condition_true(job, "Failed"):
                entry["failed"] += 1
            else:
                job_status = job.get("status") or {}
                ready = (job_status.get("succeeded") or 0) + (job_status.get("ready") or 0)
                entry["ready"] += ready >= _pods_count(job)
                entry["active"] += (job_status.get("active") or 0) > 0
                entry["suspended"] += bool((job.get("spec") or {}).get("suspend"))
        return out


def jobset_invariants() -> list[Invariant]:
    """A fresh set (they keep per-run state) of every JobSet invariant."""
    return [InOrderStartup(), DependsOnRespected(), OneJobPerSlot(), JobSetStatusRules(), StatusMatchesJobs()]
