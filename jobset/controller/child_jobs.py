"""Child Jobs: classification, ``replicatedJobsStatus``, and construction from the ReplicatedJob template.

Port of ``getChildJobs``, ``calculateReplicatedJobStatuses``, ``updateReplicatedJobsStatuses``,
``replicatedJobStatusesEqual``, ``constructJobsFromTemplate``, ``constructJob``, ``labelAndAnnotateObject``
and the index helpers of upstream ``pkg/controllers/jobset_controller.go``.

Jobs are plain wire dicts. The Job list comes from the API server sorted by name, so every list here is
in name order; the ReplicatedJob loops follow spec order.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from dataclasses import dataclass, field

from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import StatusUpdate
from jobset.controller.errors import ReconcileError
from jobset.controller.failure_policy import get_job_restarts
from jobset.controller.job_facts import FactsOf, JobFacts, atoi, derive
from jobset.controller.spec import (
    dns_hostnames_enabled,
    failure_policy,
    get_subdomain,
    group_name,
    jobset_suspended,
    labels_of,
    replicas,
    replicated_jobs,
    restarts,
    spec_of,
    status_of,
)
from jobset.controller.volume_claim_policy import add_volumes

_COUNTERS = ("ready", "succeeded", "failed", "active", "suspended")
"""The ``replicatedJobsStatus`` counters, in the order every count tuple here holds them."""

ACTIVE, SUCCESSFUL, FAILED, PREVIOUS = range(4)
"""The buckets of :func:`get_child_jobs`, as indexes into :meth:`ChildJobs.buckets`."""

_NO_COUNTS = (0,) * len(_COUNTERS)
_SUSPENDED = _COUNTERS.index("suspended")
SUCCEEDED = _COUNTERS.index("succeeded")
"""Where a count tuple holds the number of successful Jobs."""


@dataclass(frozen=True, slots=True)
class ChildJobsSummary:
    """What the reconcile derives from all of a :class:`ChildJobs`' Jobs, supplied precomputed by
    :class:`jobset.controller.child_jobs_cache.ChildJobsCache` (which keeps it current per Job version)."""

    names: frozenset[str]
    """The names of every owned Job."""
    counts: dict[str | None, tuple[int, ...]]
    """Per ``replicatedjob-name`` label: the Jobs' :func:`counts_of`, summed."""
    covered: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    """:meth:`ChildJobs.has_all` answers, by ``id`` of the names tuple (kept, so the id stays its own):
    ``names`` is the same for every summary of one cached view, and so is each answer."""


@dataclass(slots=True)
class ChildJobs:
    """``childJobs``: the current run's Jobs by state, and the Jobs of earlier restart attempts."""

    active: list[Obj] = field(default_factory=list)
    successful: list[Obj] = field(default_factory=list)
    failed: list[Obj] = field(default_factory=list)
    previous: list[Obj] = field(default_factory=list)
    summary: ChildJobsSummary | None = field(default=None, repr=False, compare=False)
    """Precomputed :meth:`names` and :meth:`counts`; without it they are derived from the lists."""

    def buckets(self) -> tuple[list[Obj], list[Obj], list[Obj], list[Obj]]:
        """The four lists, indexed by ``ACTIVE``, ``SUCCESSFUL``, ``FAILED`` and ``PREVIOUS``."""
        return self.active, self.successful, self.failed, self.previous

    def names(self) -> set[str] | frozenset[str]:
        """Names of every owned Job (membership only; never iterated)."""
        if self.summary is not None:
            return self.summary.names
        return {job["metadata"]["name"] for group in self.buckets() for job in group}

    def has_all(self, names: tuple[str, ...]) -> bool:
        """Whether every one of ``names`` is an owned Job's (``names().issuperset(names)``); with a summary,
        looked up once per names tuple: the names of a ReplicatedJob's Jobs are the same tuple at every
        reconcile (:func:`job_names`), and checking hundreds of them is most of what a reconcile spends
        on constructing Jobs when none is missing."""
        summary = self.summary
        if summary is None:
            return self.names().issuperset(names)
        known = summary.covered.get(id(names))
        if known is not None and known[0] is names:
            return known[1]
        covered = summary.names.issuperset(names)
        summary.covered[id(names)] = (names, covered)
        return covered

    def counts(self, facts: FactsOf = derive) -> dict[str | None, tuple[int, ...]]:
        """Per ``replicatedjob-name`` label, the summed :func:`counts_of` of the current run's Jobs."""
        if self.summary is not None:
            return self.summary.counts
        totals: dict[str | None, tuple[int, ...]] = {}
        for bucket, group in enumerate(self.buckets()):
            for job in group:
                add_counts(totals, facts(job), bucket)
        return totals

    def suspended_active(self, facts: FactsOf = derive) -> list[Obj]:
        """The active Jobs that are suspended, in name order (all that ``resumeJobsIfNecessary`` acts on):
        with a summary, none without a walk when its counters say there are none."""
        if self.summary is not None and not any(c[_SUSPENDED] for c in self.summary.counts.values()):
            return []
        return [job for job in self.active if facts(job).suspended]


def job_bucket(job_facts: JobFacts, current_restarts: int) -> int:
    """The bucket ``getChildJobs`` puts a Job in, before the RestartJob gate's per-index check: raises
    (as upstream's ``strconv.Atoi``) if the ``restart-attempt`` label does not parse."""
    if job_facts.restart_attempt_value() < current_restarts:
        return PREVIOUS
    if job_facts.finished == "Failed":
        return FAILED
    if job_facts.finished == "Complete":
        return SUCCESSFUL
    return ACTIVE


def counts_of(job_facts: JobFacts, bucket: int) -> tuple[int, ...]:
    """What one Job adds to its ReplicatedJob's counters (``calculateReplicatedJobStatuses``): an active
    Job counts as ready, active and suspended as its facts say, a finished one as succeeded or failed,
    a previous-run one not at all."""
    if bucket == ACTIVE:
        return (int(job_facts.ready), 0, 0, int(job_facts.active), int(job_facts.suspended))
    if bucket == SUCCESSFUL:
        return (0, 1, 0, 0, 0)
    if bucket == FAILED:
        return (0, 0, 1, 0, 0)
    return _NO_COUNTS


def add_counts(
    totals: dict[str | None, tuple[int, ...]], job_facts: JobFacts, bucket: int, *, remove: bool = False
) -> None:
    """Add (or remove) one Job's :func:`counts_of` to ``totals``, under its label."""
    contribution = counts_of(job_facts, bucket)
    if contribution is _NO_COUNTS:
        return
    label = job_facts.replicated_job
    totals[label] = tuple(map(operator.sub if remove else operator.add, totals.get(label, _NO_COUNTS),
                              contribution))


def get_child_jobs(js: Obj, jobs: list[Obj], *, restart_job: bool = False,
                   facts: FactsOf = derive) -> ChildJobs:
    """``getChildJobs`` after the List: classify the owned Jobs (``pkg/controllers/jobset_controller.go``).

    A Job whose ``restart-attempt`` label is below ``status.restarts`` belongs to a previous run; with the
    RestartJob gate, so does one whose ``job-restart-attempt`` is below its index's ``jobRestarts``. An
    unparsable label aborts the reconcile, exactly as upstream (the Job is never deleted). ``facts``: how
    each Job's labels and conditions are read (:mod:`jobset.controller.job_facts`).
    """
    owned = ChildJobs()
    buckets = owned.buckets()
    current_restarts = restarts(js)
    for job in jobs:
        bucket = job_bucket(facts(job), current_restarts)
        if restart_job and bucket != PREVIOUS and _previous_individual_attempt(js, job):
            bucket = PREVIOUS
        buckets[bucket].append(job)
    return owned


def _previous_individual_attempt(js: Obj, job: Obj) -> bool:
    """The RestartJob-gate branch of ``getChildJobs``: is this Job's individual attempt outdated?"""
    labels = labels_of(job)
    rjob_name = labels.get(api.REPLICATED_JOB_NAME_KEY)
    if rjob_name is None:
        raise ReconcileError(f"missing label {api.REPLICATED_JOB_NAME_KEY}")
    if api.JOB_INDEX_KEY not in labels:
        raise ReconcileError(f"missing label {api.JOB_INDEX_KEY}")
    job_index = atoi(labels[api.JOB_INDEX_KEY])
    if api.JOB_RESTART_ATTEMPT_KEY not in labels:
        return False  # logged only upstream, for Jobs created before the gate existed
    individual = atoi(labels[api.JOB_RESTART_ATTEMPT_KEY])
    targets = get_job_restarts(js, rjob_name)
    if job_index >= len(targets):
        raise ReconcileError(f"job index {job_index} is out of bounds for replicated job {rjob_name}")
    return individual < targets[job_index]


def calculate_replicated_job_statuses(js: Obj, owned: ChildJobs, *, restart_job: bool = False,
                                      facts: FactsOf = derive) -> list[Obj]:
    """``calculateReplicatedJobStatuses``: one entry per spec ReplicatedJob, counting current-run Jobs.

    ``ready`` counts unfinished Jobs whose ``succeeded + ready`` pods reach ``min(parallelism,
    completions)``; previous-run Jobs are ignored. With the RestartJob gate the per-index restart arrays
    are carried over from the current status (the failure policy may change them later).
    """
    counts = owned.counts(facts)
    current = status_of(js).get("replicatedJobsStatus")  # status_of: creates an absent status, as it did
    existing = {s.get("name"): s for s in current or ()} if restart_job else {}
    result = []
    for name in dict.fromkeys(r.get("name", "") for r in replicated_jobs(js)):
        # unlabelled Jobs count nowhere; a literal, not a dict of zip(_COUNTERS, ...): a third of the cost
        ready, succeeded, failed, active, suspended = counts.get(name, _NO_COUNTS) if name else _NO_COUNTS
        item: Obj = {"name": name, "ready": ready, "succeeded": succeeded, "failed": failed, "active": active,
                     "suspended": suspended}
        if name in existing:
            for key in ("jobRestarts", "jobRestartsCountTowardsMax"):
                if existing[name].get(key):
                    item[key] = list(existing[name][key])
        result.append(item)
    return result


def _normalized(status: Obj) -> Obj:
    out: Obj = {"name": status.get("name", "")}
    out.update({k: int(status.get(k) or 0) for k in _COUNTERS})
    for key in ("jobRestarts", "jobRestartsCountTowardsMax"):
        if status.get(key):
            out[key] = [int(v) for v in status[key]]
    return out


def replicated_job_statuses_equal(old: list[Obj], new: list[Obj]) -> bool:
    """``replicatedJobStatusesEqual``: sorts *both lists in place* by name descending, then compares.

    The in-place sort is observable upstream: the stored list ends up in descending name order.
    """
    old.sort(key=lambda s: s.get("name", ""), reverse=True)
    new.sort(key=lambda s: s.get("name", ""), reverse=True)
    if old == new:  # the common case (the stored list is a write of the same counts): equal entries
        return True  # normalize equally, so the comparison below would say the same
    return [_normalized(s) for s in old] == [_normalized(s) for s in new]


def update_replicated_jobs_statuses(js: Obj, statuses: list[Obj], opts: StatusUpdate) -> None:
    """``updateReplicatedJobsStatuses``: replace the status list if it changed semantically."""
    status = status_of(js)
    current = status.get("replicatedJobsStatus") or []
    if replicated_job_statuses_equal(current, statuses):
        return
    status["replicatedJobsStatus"] = statuses
    opts.should_update = True


# ---------------------------------------------------------------------------------------------- construction
def gen_job_name(jobset_name: str, rjob_name: str, job_index: int) -> str:
    """``placement.GenJobName``: ``<jobset>-<rjob>-<index>``."""
    return f"{jobset_name}-{rjob_name}-{job_index}"


def construct_jobs_from_template(
    js: Obj, rjob: Obj, owned: ChildJobs, *, restart_job: bool = False
) -> list[Obj]:
    """``constructJobsFromTemplate``: the missing Jobs of one ReplicatedJob.

    A name still held by any owned Job (even one of a previous run being deleted) is skipped, which is the
    ``Recreate`` strategy; ``BlockingRecreate`` creates nothing while any previous-run Job exists.
    """
    policy = failure_policy(js)
    if owned.previous and policy is not None and policy.get("restartStrategy") == api.BLOCKING_RECREATE:
        return []
    names = job_names(js["metadata"]["name"], rjob.get("name", ""), replicas(rjob))
    if owned.has_all(names):  # the common case
        return []
    existing = owned.names()
    return [
        construct_job(js, rjob, job_index, restart_job=restart_job)
        for job_index, name in enumerate(names)
        if name not in existing
    ]


@functools.lru_cache(maxsize=256)
def job_names(jobset_name: str, rjob_name: str, count: int) -> tuple[str, ...]:
    """The names of a ReplicatedJob's Jobs (:func:`gen_job_name`), index order. Memoized: every
    reconcile checks all of them, and their strings (hash included) are the same each time."""
    return tuple(gen_job_name(jobset_name, rjob_name, job_index) for job_index in range(count))


def construct_job(js: Obj, rjob: Obj, job_index: int, *, restart_job: bool = False) -> Obj:
    """``constructJob``: the Job for index ``job_index`` (the owner reference is added by ``createJobs``)."""
    template = rjob.get("template") or {}
    template_meta = template.get("metadata") or {}
    meta: Obj = {
        "name": gen_job_name(js["metadata"]["name"], rjob.get("name", ""), job_index),
        "namespace": js["metadata"].get("namespace", ""),
        "labels": dict(template_meta.get("labels") or {}),
        "annotations": dict(template_meta.get("annotations") or {}),
    }
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": clone(template.get("spec") or {}),
    }
    pod_template = job["spec"].setdefault("template", {})
    label_and_annotate_object(meta, js, rjob, job_index, restart_job=restart_job)
    label_and_annotate_object(
        pod_template.setdefault("metadata", {}), js, rjob, job_index, restart_job=restart_job
    )
    pod_spec = pod_template.setdefault("spec", {})
    if dns_hostnames_enabled(js):
        pod_spec["subdomain"] = get_subdomain(js)
    if api.EXCLUSIVE_KEY in meta["annotations"] and api.NODE_SELECTOR_STRATEGY_KEY in meta["annotations"]:
        node_selector = pod_spec.get("nodeSelector") or {}
        node_selector[api.NAMESPACED_JOB_KEY] = f"{meta['namespace']}_{meta['name']}"
        pod_spec["nodeSelector"] = node_selector
        pod_spec["tolerations"] = [
            *(pod_spec.get("tolerations") or ()),
            {"key": api.NO_SCHEDULE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
        ]
    job["spec"]["suspend"] = jobset_suspended(js)
    if spec_of(js).get("volumeClaimPolicies"):
        add_volumes(job, js)
    return job


def label_and_annotate_object(
    meta: Obj, js: Obj, rjob: Obj, job_index: int, *, restart_job: bool = False
) -> None:
    """``labelAndAnnotateObject``: the jobset keys as labels *and* annotations, merged over ``meta``'s own.

    The exclusive-placement keys are copied as annotations only: the JobSet's, then the ReplicatedJob
    template's (which win).
    """
    rjob_name = rjob.get("name", "")
    jobset_name = js["metadata"]["name"]
    namespace = js["metadata"].get("namespace", "")
    group = group_name(rjob)
    values: list[tuple[str, str]] = [
        (api.JOBSET_NAME_KEY, jobset_name),
        (api.JOBSET_UID_KEY, js["metadata"].get("uid", "")),
        (api.REPLICATED_JOB_NAME_KEY, rjob_name),
        (api.RESTARTS_KEY, str(restarts(js))),
    ]
    if restart_job:
        attempts = get_job_restarts(js, rjob_name)
        if job_index >= len(attempts):
            raise ReconcileError(
                f"panic: runtime error: index out of range [{job_index}] with length "
                f"{len(attempts)} [recovered]"
            )
        values.append((api.JOB_RESTART_ATTEMPT_KEY, str(attempts[job_index])))
    values += [
        (api.REPLICATED_JOB_REPLICAS, str(replicas(rjob))),
        (api.GLOBAL_REPLICAS_KEY, global_replicas(js)),
        (api.JOB_INDEX_KEY, str(job_index)),
        (api.JOB_KEY, job_hash_key(namespace, gen_job_name(jobset_name, rjob_name, job_index))),
        (api.JOB_GLOBAL_INDEX_KEY, global_job_index(js, rjob_name, job_index)),
        (api.GROUP_NAME_KEY, group),
        (api.GROUP_REPLICAS_KEY, group_replicas(js, group)),
        (api.JOB_GROUP_INDEX_KEY, group_job_index(js, group, rjob_name, job_index)),
    ]
    coordinator = spec_of(js).get("coordinator")
    if coordinator is not None:
        values.append((api.COORDINATOR_KEY, coordinator_endpoint(js)))
    labels = dict(meta.get("labels") or {})
    labels.update(values)
    annotations = dict(meta.get("annotations") or {})
    annotations.update(values)
    for source in (
        (js.get("metadata") or {}).get("annotations") or {},
        ((rjob.get("template") or {}).get("metadata") or {}).get("annotations") or {},
    ):
        if api.EXCLUSIVE_KEY in source:
            annotations[api.EXCLUSIVE_KEY] = source[api.EXCLUSIVE_KEY]
            if api.NODE_SELECTOR_STRATEGY_KEY in source:
                annotations[api.NODE_SELECTOR_STRATEGY_KEY] = source[api.NODE_SELECTOR_STRATEGY_KEY]
    meta["labels"] = labels
    meta["annotations"] = annotations


def job_hash_key(namespace: str, job_name: str) -> str:
    """``jobHashKey``: SHA1 hex of ``<namespace>/<jobName>`` (the types file says SHA256; the code uses
    SHA1)."""
    return hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest()


def coordinator_endpoint(js: Obj) -> str:
    """``CoordinatorEndpoint``: ``<js>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``."""
    coordinator = spec_of(js)["coordinator"]
    return (
        f"{js['metadata']['name']}-{coordinator.get('replicatedJob', '')}-{coordinator.get('jobIndex') or 0}"
        f"-{coordinator.get('podIndex') or 0}.{get_subdomain(js)}"
    )


def global_job_index(js: Obj, rjob_name: str, job_index: int) -> str:
    """``globalJobIndex``: replicas of earlier ReplicatedJobs (spec order) + ``job_index``; "" if unknown."""
    total = 0
    for rjob in replicated_jobs(js):
        if rjob.get("name") == rjob_name:
            return str(total + job_index)
        total += replicas(rjob)
    return ""


def global_replicas(js: Obj) -> str:
    """``globalReplicas``: Σ replicas of every ReplicatedJob."""
    return str(sum(replicas(rjob) for rjob in replicated_jobs(js)))


def group_job_index(js: Obj, group: str, rjob_name: str, job_index: int) -> str:
    """``groupJobIndex``: like the global index, counting only ReplicatedJobs of ``group``."""
    total = 0
    for rjob in replicated_jobs(js):
        if group_name(rjob) == group:
            if rjob.get("name") == rjob_name:
                return str(total + job_index)
            total += replicas(rjob)
    return ""


def group_replicas(js: Obj, group: str) -> str:
    """``groupReplicas``: Σ replicas of the ReplicatedJobs in ``group``."""
    return str(sum(replicas(rjob) for rjob in replicated_jobs(js) if group_name(rjob) == group))
