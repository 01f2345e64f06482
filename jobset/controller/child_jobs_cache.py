"""The reconcile's view of each JobSet's child Jobs, patched per changed Job instead of re-derived.

A JobSet reconciles on every status change of any of its Jobs, and every reconcile of upstream
``pkg/controllers/jobset_controller.go`` walks all of them: the owner filter of the List,
``getChildJobs``, ``calculateReplicatedJobStatuses``, the names ``constructJobsFromTemplate`` skips.
For a JobSet of hundreds of Jobs that is hundreds of steps per Job change, almost all on Jobs that did
not change, so the work of a run grows with the square of its Jobs.

The List returns the stored objects themselves, sorted by name, and a changed Job is a new object
(copy-on-write), so two consecutive Lists of one JobSet differ exactly where a Job changed, and only the
Jobs there are re-derived. Where that is, the controller's Job watch hints (:meth:`ChildJobsCache.
touched`: the Jobs whose events named the JobSet since its last List), and one ``list ==`` confirms
that the List equals the view's everywhere else (:func:`_hinted_changes`); when it does not (a change
no hint named), :func:`~fakecluster.api.objects.shared_ends` finds the window by identity (some 20
times the cost of the comparison: for a JobSet of 500 Jobs that scan was 6% of a whole run). A view is
patched only when nothing but those Jobs' contents changed: same JobSet UID and ``status.restarts``,
same number of Jobs, each changed Job keeping its name and its ownership (it may change bucket: finish).
Anything else (a Job created, deleted or re-owned, a restart) rebuilds the view from the list, as the
plain :func:`~jobset.controller.child_jobs.get_child_jobs` would. A view describes the list it was last
given and nothing else, so it is never stale: every reconcile passes it the fresh List, and the Jobs
it hands out are picked out of that List.

The RestartJob gate's per-index check reads ``status.replicatedJobsStatus``, which the view does not
key on: with that gate the controller uses the plain functions instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress

from fakecluster.api.objects import Obj, shared_ends
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ACTIVE,
    FAILED,
    PREVIOUS,
    SUCCESSFUL,
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


def _picked(bucket: int) -> property:
    """A :class:`_PickedChildJobs` bucket list: picked when first read, replaced when assigned (as the
    plain :class:`ChildJobs` field is)."""

    def get(self: _PickedChildJobs) -> list[Obj]:
        return self._group(bucket)

    def put(self: _PickedChildJobs, value: list[Obj]) -> None:
        self._groups[bucket] = value

    return property(get, put)


class _PickedChildJobs(ChildJobs):
    """A :class:`ChildJobs` whose bucket lists are picked out of a List when first read.

    Most reconciles only ask whether a bucket is empty (``owned.failed``, ``owned.previous``) or read
    its counts from the summary, and never the active Jobs themselves: picking those out of hundreds of
    Jobs (``itertools.compress``) at every reconcile cost more than the rest of the view's work. What it
    picks from never changes after it is made: the view replaces its List and copies a mask before
    changing it."""

    __slots__ = ("_groups", "_jobs", "_masks", "_sizes")

    def __init__(self, jobs: list[Obj], masks: tuple[list[bool], ...], sizes: tuple[int, ...],
                 summary: ChildJobsSummary) -> None:
        self._jobs = jobs
        self._masks = masks
        self._sizes = sizes
        self._groups: list[list[Obj] | None] = [None, None, None, None]
        self.summary = summary

    def _group(self, bucket: int) -> list[Obj]:
        group = self._groups[bucket]
        if group is None:
            size, jobs = self._sizes[bucket], self._jobs
            group = [] if size == 0 else list(jobs) if size == len(jobs) else list(
                compress(jobs, self._masks[bucket]))
            self._groups[bucket] = group
        return group

    active = _picked(ACTIVE)
    successful = _picked(SUCCESSFUL)
    failed = _picked(FAILED)
    previous = _picked(PREVIOUS)


@dataclass(slots=True)
class _View:
    """One JobSet's last List and everything derived from it.

    The Jobs of a bucket are not kept as lists: :meth:`child_jobs` picks them out of the List it was
    last given (``masks``), so what it hands out is always that List's very objects, in its order, even
    where a patch found a Job equal to, not identical with, the one it replaces (:func:`_hinted_changes`)."""

    owner: Owner
    restarts: int
    jobs: list[Obj]
    """The last List (a private copy), owned or not, in name order. Replaced, not changed, once handed out
    (:func:`_hinted_changes` probes it in place, and puts it back before anything can read it)."""
    facts: list[JobFacts]
    """Aligned with ``jobs`` (of a Job equal to ``jobs[i]``, if not of ``jobs[i]`` itself)."""
    buckets: list[int]
    """Aligned with ``jobs``: :data:`NOT_OWNED` or the index of the Job's group (``ChildJobs.buckets``)."""
    masks: list[list[bool]]
    """Per bucket, aligned with ``jobs``: whether the Job is in it (``buckets[i] == b``); copied before a
    change (a handed-out :class:`_PickedChildJobs` may still read the old one)."""
    sizes: list[int]
    """Per bucket: how many Jobs are in it."""
    counts: dict[str | None, tuple[int, ...]]
    names: frozenset[str]
    """The owned Jobs' names: a patch keeps every name and ownership, so this never changes."""
    index_of: dict[str, int]
    """Each listed Job's index in ``jobs``, by name: where a hinted Job is."""
    covered: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    """``ChildJobsSummary.covered`` of every summary of this view (valid as long as ``names``)."""

    def child_jobs(self) -> ChildJobs:
        """A :class:`ChildJobs` of ``jobs`` (the List the view was last given): new lists, each picked
        when first read."""
        summary = ChildJobsSummary(names=self.names, counts=dict(self.counts), covered=self.covered)
        return _PickedChildJobs(self.jobs, tuple(self.masks), tuple(self.sizes), summary)

    def put(self, index: int, job_facts: JobFacts, bucket: int) -> None:
        """Record newer facts for the Job at ``index`` (same name and ownership), now in ``bucket``."""
        old_bucket = self.buckets[index]
        if old_bucket != NOT_OWNED:
            add_counts(self.counts, self.facts[index], old_bucket, remove=True)
            add_counts(self.counts, job_facts, bucket)
            if bucket != old_bucket:
                self.buckets[index] = bucket
                for group, value in ((old_bucket, False), (bucket, True)):
                    mask = self.masks[group] = list(self.masks[group])
                    mask[index] = value
                self.sizes[old_bucket] -= 1
                self.sizes[bucket] += 1
        self.facts[index] = job_facts


def build_view(js: Obj, jobs: list[Obj], facts: FactsOf) -> _View:
    """Derive the view of ``jobs`` from scratch; raises where ``getChildJobs`` would (the first owned Job,
    in name order, whose ``restart-attempt`` label does not parse)."""
    owner = owner_of(js)
    current_restarts = restarts(js)
    view = _View(owner, current_restarts, list(jobs), [], [], [[], [], [], []], [0, 0, 0, 0], {},
                 frozenset(), {})
    for index, job in enumerate(jobs):
        job_facts = facts(job)
        bucket = bucket_of(job_facts, owner, current_restarts)
        view.facts.append(job_facts)
        view.buckets.append(bucket)
        for group, mask in enumerate(view.masks):
            mask.append(group == bucket)
        view.index_of[job["metadata"]["name"]] = index
        if bucket != NOT_OWNED:
            view.sizes[bucket] += 1
            add_counts(view.counts, job_facts, bucket)
    view.names = frozenset(
        job["metadata"]["name"] for job, bucket in zip(jobs, view.buckets, strict=True) if bucket != NOT_OWNED
    )
    return view


def _hinted_changes(view: _View, jobs: list[Obj], hints: Iterable[str]) -> list[int] | None:
    """The indexes of the hinted Jobs, if everywhere else ``jobs`` equals the view's List (``==``: the
    very objects, as a rule, or equal ones); None if it does not, or a hinted name is not listed.

    ``list ==`` skips identical items at C speed, some 20 times faster than the identity scan of
    :func:`~fakecluster.api.objects.shared_ends`, and the hints (the Jobs whose watch events named this
    JobSet since its last List) say where to look, so the comparison needs no scan of its own. An equal
    Job that is not the same object has the same facts (they are derived from its contents alone), so
    only the hinted ones are re-derived; and :meth:`_View.child_jobs` hands out the List's own objects."""
    index_of = view.index_of
    indexes = []
    for name in hints:
        index = index_of.get(name)
        if index is None:
            return None  # created, or the view keyed it under another Job's name: rebuild or scan
        indexes.append(index)
    indexes.sort()
    listed = view.jobs
    kept = [listed[index] for index in indexes]
    for index in indexes:
        listed[index] = jobs[index]
    same = listed == jobs
    for index, job in zip(indexes, kept, strict=True):
        listed[index] = job
    return indexes if same else None


def patch_view(view: _View, js: Obj, jobs: list[Obj], facts: FactsOf, hints: Iterable[str] = ()) -> bool:
    """Bring ``view`` to ``jobs`` if the same Jobs are listed and only their contents changed (a Job may
    change bucket, not ownership); False, view untouched, if it must be rebuilt instead.

    ``hints``: names of Jobs that may have changed since the view's List (a hint that is wrong or
    incomplete costs the identity scan, never a wrong view)."""
    if view.owner != owner_of(js) or view.restarts != restarts(js) or len(view.jobs) != len(jobs):
        return False
    indexes: Iterable[int] | None = _hinted_changes(view, jobs, hints)
    if indexes is None:
        head, tail = shared_ends(view.jobs, jobs)
        indexes = range(head, len(jobs) - tail)
    changes: list[tuple[int, JobFacts, int]] = []
    for index in indexes:
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
        changes.append((index, job_facts, bucket))
    for change in changes:
        view.put(*change)
    view.jobs = list(jobs)
    return True


class ChildJobsCache:
    """Per JobSet (namespace, name): the view of its last List. Held by one controller."""

    __slots__ = ("_facts", "_hints", "_views")

    def __init__(self, facts: FactsOf) -> None:
        self._facts = facts
        """How each Job's facts are read: the controller's ``JobFactsCache``."""
        self._views: dict[tuple[str, str], _View] = {}
        self._hints: dict[tuple[str, str], dict[str, None]] = {}
        """Per JobSet: the names of the Jobs whose watch events named it since its last List, in the
        order they came (a dict, as an ordered set)."""

    def touched(self, namespace: str, jobset_name: str, job_name: str) -> None:
        """A watch event of Job ``job_name`` named JobSet ``jobset_name`` as its controller."""
        hints = self._hints.get((namespace, jobset_name))
        if hints is None:
            self._hints[(namespace, jobset_name)] = {job_name: None}
        else:
            hints[job_name] = None

    def child_jobs(self, js: Obj, jobs: list[Obj]) -> ChildJobs:
        """``getChildJobs`` of the listed ``jobs`` (owned or not), with their names and counts."""
        meta = js["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        hints = self._hints.pop(key, ())
        view = self._views.get(key)
        if view is None or not patch_view(view, js, jobs, self._facts, hints):
            self._views.pop(key, None)  # a raising rebuild leaves no view behind
            view = self._views[key] = build_view(js, jobs, self._facts)
        return view.child_jobs()

    def forget(self, namespace: str, name: str) -> None:
        """Drop a JobSet's view (it is gone, or going)."""
        self._views.pop((namespace, name), None)
        self._hints.pop((namespace, name), None)

    def clear(self) -> None:
        """Forget everything (a controller restart loses its memory)."""
        self._views.clear()
        self._hints.clear()
