"""The reconcile's view of each JobSet's child Jobs, patched per changed Job instead of re-derived.

A JobSet reconciles on every status change of any of its Jobs, and every reconcile of upstream
``pkg/controllers/jobset_controller.go`` walks all of them: the owner filter of the List,
``getChildJobs``, ``calculateReplicatedJobStatuses``, the names ``constructJobsFromTemplate`` skips.
For a JobSet of hundreds of Jobs that is hundreds of steps per Job change, almost all on Jobs that did
not change, so the work of a run grows with the square of its Jobs.

The List returns the stored objects themselves, sorted by name, and a changed Job is a new object
(copy-on-write), so two consecutive Lists of one JobSet differ exactly where a Job changed:
:func:`~fakecluster.api.objects.shared_ends` finds that window by identity at C speed, and only the Jobs
in it are re-derived. A view is patched only when nothing but those Jobs' contents changed: same JobSet
UID and ``status.restarts``, same number of Jobs, and each changed Job keeps its name and its bucket.
Anything else (a Job created, deleted, finished or re-owned, a restart) rebuilds the view from the list,
as the plain :func:`~jobset.controller.child_jobs.get_child_jobs` would. A view describes the list it was
last given and nothing else, so it is never stale: every reconcile passes it the fresh List.

The RestartJob gate's per-index check reads ``status.replicatedJobsStatus``, which the view does not
key on: with that gate the controller uses the plain functions instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakecluster.api.objects import Obj, shared_ends
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ChildJobs,
    ChildJobsSummary,
    add_counts,
    job_bucket,
)
from jobset.controller.errors import ReconcileError
from jobset.controller.job_facts import FactsOf, JobFacts
from jobset.controller.spec import restarts

NOT_OWNED = -1
"""The bucket of a listed Job whose controller reference is not this JobSet (the List's owner index
matches any owner reference; the field index upstream matches only the controller)."""

Owner = tuple[object, object, object]


def owner_of(js: Obj) -> Owner:
    """The controller reference a child Job carries, as :attr:`JobFacts.controller` holds it."""
    return (js["metadata"]["uid"], api.KIND, api.API_VERSION)


def bucket_of(job_facts: JobFacts, owner: Owner, current_restarts: int) -> int:
    """:data:`NOT_OWNED`, or the Job's :func:`~jobset.controller.child_jobs.job_bucket` (which raises on
    an unparsable ``restart-attempt`` label)."""
    if job_facts.controller != owner:
        return NOT_OWNED
    return job_bucket(job_facts, current_restarts)


@dataclass(slots=True)
class _View:
    """One JobSet's last List and everything derived from it.

    Invariant: ``groups[b]`` is exactly the Jobs ``jobs[i]`` with ``buckets[i] == b``, in list order, so
    a Job's index in its group is the number of earlier Jobs of its bucket."""

    owner: Owner
    restarts: int
    jobs: list[Obj]
    """The List, as given (owned or not), in name order."""
    facts: list[JobFacts]
    """Aligned with ``jobs``."""
    buckets: list[int]
    """Aligned with ``jobs``: :data:`NOT_OWNED` or the index of the Job's group."""
    groups: tuple[list[Obj], list[Obj], list[Obj], list[Obj]]
    """The owned Jobs by bucket (``ChildJobs.buckets`` order)."""
    counts: dict[str | None, tuple[int, ...]]
    names: frozenset[str]
    """The owned Jobs' names: a patch keeps every name and ownership, so this never changes."""
    covered: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    """``ChildJobsSummary.covered`` of every summary of this view (valid as long as ``names``)."""

    def child_jobs(self) -> ChildJobs:
        """A :class:`ChildJobs` of private copies (the view patches its own lists in place)."""
        active, successful, failed, previous = (list(group) for group in self.groups)
        summary = ChildJobsSummary(names=self.names, counts=dict(self.counts), covered=self.covered)
        return ChildJobs(active, successful, failed, previous, summary=summary)

    def replace(self, index: int, job: Obj, job_facts: JobFacts, bucket: int) -> None:
        """Put a newer version of the Job at ``index`` (same name and ownership) in ``bucket``."""
        old_bucket = self.buckets[index]
        if old_bucket != NOT_OWNED:
            slot = self.buckets[:index].count(old_bucket)  # C speed
            add_counts(self.counts, self.facts[index], old_bucket, remove=True)
            add_counts(self.counts, job_facts, bucket)
            if bucket == old_bucket:
                self.groups[bucket][slot] = job
            else:
                del self.groups[old_bucket][slot]
                self.buckets[index] = bucket
                self.groups[bucket].insert(self.buckets[:index].count(bucket), job)
        self.jobs[index] = job
        self.facts[index] = job_facts


def build_view(js: Obj, jobs: list[Obj], facts: FactsOf) -> _View:
    """Derive the view of ``jobs`` from scratch; raises where ``getChildJobs`` would (the first owned Job,
    in name order, whose ``restart-attempt`` label does not parse)."""
    owner = owner_of(js)
    current_restarts = restarts(js)
    view = _View(owner, current_restarts, list(jobs), [], [], ([], [], [], []), {}, frozenset())
    for job in jobs:
        job_facts = facts(job)
        bucket = bucket_of(job_facts, owner, current_restarts)
        view.facts.append(job_facts)
        view.buckets.append(bucket)
        if bucket != NOT_OWNED:
            view.groups[bucket].append(job)
            add_counts(view.counts, job_facts, bucket)
    view.names = frozenset(job["metadata"]["name"] for group in view.groups for job in group)
    return view


def patch_view(view: _View, js: Obj, jobs: list[Obj], facts: FactsOf) -> bool:
    """Bring ``view`` to ``jobs`` if the same Jobs are listed and only their contents changed (a Job may
    change bucket, not ownership); False, view untouched, if it must be rebuilt instead."""
    if view.owner != owner_of(js) or view.restarts != restarts(js) or len(view.jobs) != len(jobs):
        return False
    head, tail = shared_ends(view.jobs, jobs)
    changes: list[tuple[int, Obj, JobFacts, int]] = []
    for index in range(head, len(jobs) - tail):
        job, old = jobs[index], view.jobs[index]
        if job is old:
            continue
        if job["metadata"]["name"] != old["metadata"]["name"]:
            return False
        job_facts = facts(job)
        try:
            bucket = bucket_of(job_facts, view.owner, view.restarts)
        except ReconcileError:
            return False  # the rebuild raises it, in list order
        if (bucket == NOT_OWNED) != (view.buckets[index] == NOT_OWNED):
            return False
        changes.append((index, job, job_facts, bucket))
    for change in changes:
        view.replace(*change)
    return True


class ChildJobsCache:
    """Per JobSet (namespace, name): the view of its last List. Held by one controller."""

    __slots__ = ("_facts", "_views")

    def __init__(self, facts: FactsOf) -> None:
        self._facts = facts
        """How each Job's facts are read: the controller's ``JobFactsCache``."""
        self._views: dict[tuple[str, str], _View] = {}

    def child_jobs(self, js: Obj, jobs: list[Obj]) -> ChildJobs:
        """``getChildJobs`` of the listed ``jobs`` (owned or not), with their names and counts."""
        meta = js["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        view = self._views.get(key)
        if view is None or not patch_view(view, js, jobs, self._facts):
            self._views.pop(key, None)  # a raising rebuild leaves no view behind
            view = self._views[key] = build_view(js, jobs, self._facts)
        return view.child_jobs()

    def forget(self, namespace: str, name: str) -> None:
        """Drop a JobSet's view (it is gone, or going)."""
        self._views.pop((namespace, name), None)

    def clear(self) -> None:
        """Forget everything (a controller restart loses its memory)."""
        self._views.clear()
