"""What a Job sync reads from its pods, kept up to date from the pod watch instead of re-read per sync.

Every sync of a Job needs what ``getPodsForJob`` and the counting at the top of ``syncJob`` derive from
all of the Job's pods: how many are active, Ready, terminating, and which terminated ones still carry
the tracking finalizer. A Job syncs about once per ``syncJobBatchPeriod`` while its pods move, so listing
and classifying every pod on every sync made each sync O(pods): at thousands of pods the Job
controller's main cost, most of it memory traffic (every pod object touched on every sync).

Instead the controller keeps one :class:`JobPodView` per Job:

- the Job's first sync lists its pods through the controller's client, exactly the list a sync used to
  read (the pods of the Job's namespace with an ownerReference to the Job's uid), and classifies each;
- from then on, the controller's pod watch (same client, so the same cache and the same order) hands
  every written or removed pod to the view, which keeps the pod's latest version;
- each sync starts with :meth:`JobPodView.catch_up`: every pod written since the last one is classified
  once, against the version last classified, and moved between the counts and sets it belongs to. A pod
  the kubelet wrote several times in between (its status writes come about a second apart, a sync at
  most once per ``syncJobBatchPeriod``) is classified once, not once per write.

So at the start of a sync the view holds exactly what a fresh list and a full pass would: the same pod
objects, counts and sets (a pod's classification depends on that pod alone). The sync's own writes wait
for the next sync like any other, so what the sync reads stays one consistent snapshot, as the list it
used to take did. Lists that need key order (the active pods to delete, the
terminated pods whose finalizers go) are sorted when a sync asks for them; those are small or rare.
Stored objects never change in place (the API server is copy-on-write), so a pod object classified once
needs no second look.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fakecluster.api.batch_labels import JOB_TRACKING_FINALIZER
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.controllers.job.pods import (
    UNKNOWN_INDEX,
    completion_index,
    is_controlled_by,
    is_pod_ready,
    restart_count,
)

Key = tuple[str, str]
"""``(namespace, name)`` of a pod."""

_new = tuple.__new__
"""Builds the named tuples below on the per-pod-write path: ``_new(PodFacts, (...))`` skips the generated
``__new__`` (a Python function) and costs half a keyword-less constructor call; the result is the same."""


class PodFacts(NamedTuple):
    """What a sync needs from one pod version (a tuple: one is built for nearly every pod write; equal
    ones are shared, :data:`_FACTS`)."""

    controlled: bool
    """The Job is the pod's controller (``metav1.IsControlledBy``)."""
    phase: str | None
    deleting: bool
    """``deletionTimestamp`` is set."""
    index: int  # type: ignore[assignment]  # shadows tuple.index, never called
    """Completion index (:data:`UNKNOWN_INDEX` for NonIndexed Jobs or an unparsable annotation)."""
    ready: bool
    restarts: int
    """Σ ``restartCount`` over the pod's containers."""
    has_finalizer: bool
    """Carries the Job tracking finalizer."""


class PodClass(NamedTuple):
    """Where ``syncJob``'s pass over the pods counts a pod."""

    state: int
    """:data:`OTHER`, :data:`ACTIVE`, :data:`TERMINATING` or :data:`TERMINATED`."""
    index: int  # type: ignore[assignment]  # shadows tuple.index, never called
    ready: bool
    """Ready and active."""
    restarts: int
    """Restarts counted: not terminated, phase Pending or Running (else 0)."""
    failed: bool
    """``isPodFailed``."""
    tracked: bool
    """Carries the tracking finalizer."""
    finished_tracked: bool
    """Tracked and Succeeded or failed: its finalizer goes next."""


OTHER, ACTIVE, TERMINATING, TERMINATED = 0, 1, 2, 3
_UNCOUNTED = PodClass(OTHER, UNKNOWN_INDEX, False, 0, False, False, False)
"""A pod the Job does not control (the owner index also lists plain references), or no pod."""

_CLASSES: dict[PodClass, PodClass] = {_UNCOUNTED: _UNCOUNTED}
"""Every :class:`PodClass` :func:`pod_class` has built, each its own key: the view keeps one per pod all
run, and they take few distinct values (a state, a completion index, a few flags), the same ones in every
Job, so a pod's is the one tuple all equal classes share (they are immutable) rather than 112 bytes of its
own. Bounded by :data:`_MAX_CLASSES`, past which new values are returned unshared."""
_MAX_CLASSES = 1 << 16

_FACTS: dict[PodFacts, PodFacts] = {}
"""Every :class:`PodFacts` built, each its own key, as :data:`_CLASSES` (and bounded by the same
count): the facts hold no pod's identity (its uid is its record's pod's), so the pods of one completion
index in the same state share them across Jobs, not 104 bytes each. Both caches are read with one
``setdefault`` written out where a value is built: a helper call for it, at every pod write, cost 39 M
instructions at 10,000 pods (0.14%)."""


_CLASS_OF: tuple[dict[PodFacts, PodClass], dict[PodFacts, PodClass]] = ({}, {})
""":func:`pod_class` by facts, for ``only_replace_failed`` False and True: a pure function of few
distinct values, looked up (one hash of the facts) rather than derived again at each pod write whose
facts changed. Bounded by :data:`_MAX_CLASSES`, as :data:`_CLASSES`."""


class TrackedPod(NamedTuple):
    """A pod that still carries the tracking finalizer."""

    index: int  # type: ignore[assignment]  # shadows tuple.index, never called
    pod: Obj
    uid: str
    phase: str | None
    failed: bool


class ActivePods(NamedTuple):
    """The active pods, in key order, and their completion indexes (same order)."""

    pods: list[Obj]
    indexes: list[int]


class ViewParams(NamedTuple):
    """The Job fields a classification depends on. If one changes (an elastic Indexed Job scaled), the
    view is rebuilt."""

    indexed: bool
    completions: int
    """``spec.completions``, 0 if unset."""
    only_replace_failed: bool
    """``podReplacementPolicy: Failed``."""


class _Record:
    """A pod version, and its facts and class, derived from it.

    A slotted class rather than a named tuple: one is built for every pod a view counts and updated in
    place as the pod is rewritten, and its fields are read several times each; slots are cheap to build,
    to set and to read.
    The next version is compared with ``pod`` itself (its metadata parts and status, by identity): a
    copy of those inputs beside it would be some 100 bytes per pod for as long as its Job lives."""

    __slots__ = ("cls", "facts", "pod")

    def __init__(self, pod: Obj, facts: PodFacts, cls: PodClass) -> None:
        self.pod = pod
        self.facts = facts
        self.cls = cls


def pod_facts(pod: Obj, job_uid: str, indexed: bool) -> PodFacts:
    """Derive a pod version's :class:`PodFacts` for the Job ``job_uid``."""
    meta = pod["metadata"]
    refs = meta.get("ownerReferences")
    usual = bool(refs) and refs[0].get("uid") == job_uid and refs[0].get("controller")
    controlled = bool(usual) or is_controlled_by(pod, job_uid)
    phase = (pod.get("status") or {}).get("phase")
    facts = _new(PodFacts, (
        controlled,
        phase,
        meta.get("deletionTimestamp") is not None,
        completion_index(pod) if indexed else UNKNOWN_INDEX,
        is_pod_ready(pod),
        restart_count(pod),
        JOB_TRACKING_FINALIZER in (meta.get("finalizers") or ()),
    ))
    return _FACTS.setdefault(facts, facts) if len(_FACTS) < _MAX_CLASSES else _FACTS.get(facts, facts)


def pod_class(facts: PodFacts, only_replace_failed: bool) -> PodClass:
    """Where ``syncJob``'s pass over the pods counts a pod with these facts."""
    controlled, phase, deleting, index, ready, restarts, has_finalizer = facts
    if not controlled:
        return _UNCOUNTED
    terminated = phase in ("Succeeded", "Failed")
    state = TERMINATED if terminated else TERMINATING if deleting else ACTIVE
    failed = phase == "Failed" or (deleting and not only_replace_failed and phase != "Succeeded")
    cls: PodClass = _new(PodClass, (
        state,
        index,
        ready and state == ACTIVE,
        restarts if not terminated and phase in ("Pending", "Running") else 0,
        failed,
        has_finalizer,
        has_finalizer and (failed or phase == "Succeeded"),
    ))
    return _CLASSES.setdefault(cls, cls) if len(_CLASSES) < _MAX_CLASSES else _CLASSES.get(cls, cls)


def _with_finalizers(facts: PodFacts, finalizers: Any) -> PodFacts:
    """``facts`` after a write that replaced, of the metadata the facts depend on, only the finalizers
    list; the very same tuple if the tracking finalizer stayed as it was.

    That write is the Job controller's own removal of the tracking finalizer from each finished pod it
    has counted (``removeTrackingFinalizerFromPods`` in ``pkg/controller/job/job_controller.go``): one
    per pod, changing nothing else, so the other facts (controller, completion index, readiness,
    restarts) are the previous version's."""
    has_finalizer = JOB_TRACKING_FINALIZER in (finalizers or ())
    if has_finalizer == facts.has_finalizer:
        return facts
    controlled, phase, deleting, index, ready, restarts, _ = facts
    facts = _new(PodFacts, (controlled, phase, deleting, index, ready, restarts, has_finalizer))
    return _FACTS.setdefault(facts, facts) if len(_FACTS) < _MAX_CLASSES else _FACTS.get(facts, facts)


def _with_status(facts: PodFacts, status: Obj | None, seen_status: Obj | None) -> PodFacts:
    """``facts`` with the status-derived ones (phase, readiness, restarts) taken from a pod's new
    ``status``; the very same tuple if none of them changed, so the caller knows the class
    did not either. ``seen_status``: the status ``facts`` were derived from; its conditions or container
    statuses, where ``status`` holds the very same list (the kubelet keeps what did not change, the
    store never changes it), give the same readiness or restarts without another look."""
    controlled, seen_phase, deleting, index, seen_ready, seen_restarts, has_finalizer = facts
    status, seen_status = status or {}, seen_status or {}
    phase = status.get("phase")
    conditions = status.get("conditions")
    if conditions is seen_status.get("conditions"):
        ready = seen_ready
    else:  # is_pod_ready, on the list at hand
        ready = False
        for cond in conditions or ():
            if cond.get("type") == "Ready":
                ready = cond.get("status") == "True"
                break
    statuses, init_statuses = status.get("containerStatuses"), status.get("initContainerStatuses")
    if (statuses is seen_status.get("containerStatuses")
            and init_statuses is seen_status.get("initContainerStatuses")):
        restarts = seen_restarts
    else:  # restart_count, on the lists at hand
        restarts = 0
        for cs in init_statuses or ():
            restarts += cs.get("restartCount") or 0
        for cs in statuses or ():
            restarts += cs.get("restartCount") or 0
    if phase == seen_phase and ready == seen_ready and restarts == seen_restarts:
        return facts
    facts = _new(PodFacts, (controlled, phase, deleting, index, ready, restarts, has_finalizer))
    return _FACTS.setdefault(facts, facts) if len(_FACTS) < _MAX_CLASSES else _FACTS.get(facts, facts)


class JobPodView:
    """One Job's pods, classified as ``syncJob`` counts them.

    Counts: ``active`` (not terminated, no ``deletionTimestamp``) and ``ready`` of those,
    ``terminating``, ``restarts`` (Σ restartCount of the not terminated pods in phase Pending or
    Running) and ``tracked``; completion indexes of the active and the terminating pods; keys of the
    ``failed`` pods and of the ``finished_tracked`` ones; ``tracked_uids``.
    """

    def __init__(self, job_uid: str, namespace: str, params: ViewParams, pods: list[Obj]) -> None:
        self.job_uid = job_uid
        self.namespace = namespace
        self.params = params
        self._only_replace_failed = params.only_replace_failed
        self._class_of = _CLASS_OF[params.only_replace_failed]
        self.pods: dict[Key, _Record] = {}
        self.active = self.terminating = self.tracked = self.ready = self.restarts = 0
        self.active_indexes: dict[int, int] = {}
        self.terminating_indexes: dict[int, int] = {}
        """Completion index → how many pods have it."""
        self.active_out_of_range = 0
        """Active pods whose completion index is unknown or >= completions."""
        self.failed: dict[Key, None] = {}
        self.finished_tracked: dict[Key, None] = {}
        self.tracked_uids: set[str] = set()
        self.written: dict[Key, Obj | None] = {}
        """Pods written (their latest version) or gone (None) since the last :meth:`catch_up`. Fed by
        :meth:`pod_changed`, or set directly by the Job controller's pod watch on its short path
        (job_controller's ``_on_pod_event``: a method call per pod write cost more than the rest)."""
        self.moves = 0
        """How many times a pod moved between the counts and sets (:meth:`_count`): while it stays the
        same, so do all of them, the pods' classes and their uids; only the pod objects may be newer."""
        self.pods_read = False
        """Whether the sync holding the view was handed a pod object (failed, tracked or active pods);
        reset by :meth:`JobPodViews.hold`. A sync that was not handed one read nothing of the view but
        the counts and classes, which :attr:`moves` covers (see job_controller's ``QuietSync``)."""
        for pod in pods:
            meta = pod["metadata"]
            self._classify((meta.get("namespace", ""), meta["name"]), pod)

    # ------------------------------------------------------------------ feed
    def pod_changed(self, key: Key, pod: Obj | None) -> None:
        """The pod at ``key`` is now ``pod`` (None: it is gone or no longer references the Job); counted
        so from the next :meth:`catch_up`."""
        self.written[key] = pod

    def catch_up(self) -> None:
        """Count the pods written since the last call as they are now: a sync reads the view from now
        on, and it stays as it is (whatever the sync writes) until the next sync calls this again."""
        classify = self._classify
        for key, pod in self.written.items():
            classify(key, pod)
        self.written.clear()

    def _classify(self, key: Key, pod: Obj | None) -> None:
        """Count the pod at ``key`` as ``pod`` (None: not at all)."""
        seen = self.pods.get(key)
        if pod is None or seen is None:
            self._apply(key, None if pod is None else self._classified(pod), seen)
            return
        facts = self._facts_after(pod, seen)
        if facts is None:
            self._apply(key, self._classified(pod), seen)
            return
        # The same pod rewritten: its record is updated in place rather than replaced (a new record per
        # pod write cost more than the rest of this method), and moved between the counts only if its
        # class changed, as _apply would.
        if facts is not seen.facts:
            cls = self._class_of.get(facts) or self._new_class(facts)
            if cls is not seen.cls and cls != seen.cls:
                self._count(key, seen, cls, seen.pod["metadata"]["uid"])
            seen.facts = facts
            seen.cls = cls
        seen.pod = pod

    @staticmethod
    def _facts_after(pod: Obj, previous: _Record) -> PodFacts | None:
        """``pod``'s facts, derived from ``previous`` (the pod's last version here): only those whose
        inputs the write replaced are derived again, the status-derived ones if the status is another
        object, the finalizer if, of the metadata, only the finalizers list is (the tracking finalizer's
        removal); the very tuple ``previous.facts`` if none changed. None if another metadata input
        changed (or it is another pod under the same name): then everything is derived anew."""
        meta, seen = pod["metadata"], previous.pod
        seen_meta = seen["metadata"]
        if (meta.get("ownerReferences") is not seen_meta.get("ownerReferences")
                or meta.get("annotations") is not seen_meta.get("annotations")
                or meta.get("deletionTimestamp") != seen_meta.get("deletionTimestamp")
                or meta["uid"] != seen_meta["uid"]):
            return None
        facts = previous.facts
        finalizers = meta.get("finalizers")
        if finalizers is not seen_meta.get("finalizers"):
            facts = _with_finalizers(facts, finalizers)
        status, seen_status = pod.get("status"), seen.get("status")
        if status is not seen_status:
            facts = _with_status(facts, status, seen_status)
        return facts

    def _classified(self, pod: Obj) -> _Record:
        """A pod's record derived from the pod alone."""
        facts = pod_facts(pod, self.job_uid, self.params.indexed)
        return _Record(pod, facts, self._class_of.get(facts) or self._new_class(facts))

    def _new_class(self, facts: PodFacts) -> PodClass:
        """:func:`pod_class` of facts not met before, remembered (up to :data:`_MAX_CLASSES`)."""
        cls = pod_class(facts, self._only_replace_failed)
        if len(self._class_of) < _MAX_CLASSES:
            self._class_of[facts] = cls
        return cls

    def _apply(self, key: Key, record: _Record | None, seen: _Record | None) -> None:
        if record is None:
            if seen is not None:
                del self.pods[key]
                self._count(key, seen, _UNCOUNTED, None)
            return
        self.pods[key] = record
        cls, uid = record.cls, record.pod["metadata"]["uid"]
        if seen is None:
            self._count(key, None, cls, uid)
        elif seen.pod["metadata"]["uid"] != uid:  # another pod under the same name
            self._count(key, seen, _UNCOUNTED, None)
            self._count(key, None, cls, uid)
        elif seen.cls is not cls and seen.cls != cls:
            self._count(key, seen, cls, uid)

    def _count(self, key: Key, seen: _Record | None, new: PodClass, uid: str | None) -> None:
        """Move a pod from where ``seen`` counted it to where ``new`` does."""
        self.moves += 1
        old = _UNCOUNTED if seen is None else seen.cls
        # Unpacked once: named-tuple attribute reads cost several times an unpacking, per pod write.
        old_state, old_index, old_ready, old_restarts, old_failed, old_tracked, old_finished = old
        state, index, ready, restarts, failed, tracked, finished = new
        if old_state != state or old_index != index:
            self._move(old_state, old_index, -1)
            self._move(state, index, 1)
        self.ready += ready - old_ready
        self.restarts += restarts - old_restarts
        if old_failed != failed:
            if failed:
                self.failed[key] = None
            else:
                del self.failed[key]
        if old_tracked != tracked:
            self.tracked += 1 if tracked else -1
            if tracked:
                self.tracked_uids.add(uid)  # type: ignore[arg-type]
            else:
                self.tracked_uids.discard(seen.pod["metadata"]["uid"])  # type: ignore[union-attr]
        if old_finished != finished:
            if finished:
                self.finished_tracked[key] = None
            else:
                del self.finished_tracked[key]

    def _move(self, state: int, ix: int, delta: int) -> None:
        if state == ACTIVE:
            self.active += delta
            _tally(self.active_indexes, ix, delta)
            if not 0 <= ix < self.params.completions:
                self.active_out_of_range += delta
        elif state == TERMINATING:
            self.terminating += delta
            _tally(self.terminating_indexes, ix, delta)

    # ------------------------------------------------------------------ what a sync reads
    def active_pods(self) -> ActivePods:
        """Active pods in key order and their completion indexes."""
        keys = sorted(k for k, record in self.pods.items() if record.cls.state == ACTIVE)
        if keys:
            self.pods_read = True
        return ActivePods([self.pods[k].pod for k in keys], [self.pods[k].cls.index for k in keys])

    def active_indexes_distinct_in_range(self) -> bool:
        """Every active pod has its own completion index, within ``[0, completions)``."""
        return len(self.active_indexes) == self.active and self.active_out_of_range == 0

    def failed_pods(self) -> list[Obj]:
        """Failed pods (tracked or not) in key order."""
        if self.failed:
            self.pods_read = True
        return [self.pods[k].pod for k in sorted(self.failed)]

    def finished_tracked_pods(self) -> list[TrackedPod]:
        """Succeeded or failed pods still carrying the tracking finalizer, in key order."""
        return [self._tracked(k) for k in sorted(self.finished_tracked)]

    def all_tracked_pods(self) -> list[TrackedPod]:
        """Every pod carrying the tracking finalizer, in key order."""
        return [self._tracked(k) for k in sorted(k for k, record in self.pods.items() if record.cls.tracked)]

    def _tracked(self, key: Key) -> TrackedPod:
        self.pods_read = True
        record = self.pods[key]
        facts, cls = record.facts, record.cls
        return TrackedPod(cls.index, record.pod, record.pod["metadata"]["uid"], facts.phase, cls.failed)


def _tally(counts: dict[int, int], ix: int, delta: int) -> None:
    left = counts.get(ix, 0) + delta
    if left:
        counts[ix] = left
    else:
        del counts[ix]


def valid_indexes(counts: dict[int, int]) -> list[int]:
    """``getIndexes``: the distinct known completion indexes, ascending."""
    return sorted(ix for ix in counts if ix >= 0)


class JobPodViews:
    """The Job controller's views, by Job uid, fed from its pod watch."""

    def __init__(self) -> None:
        self.by_uid: dict[str, JobPodView] = {}
        """The views by Job uid; read directly by the Job controller's pod watch on its short path."""

    def hold(self, job_uid: str, namespace: str, params: ViewParams) -> JobPodView | None:
        """The Job's view, caught up for a sync; None if it has none yet (or its parameters changed):
        then the caller lists the pods and :meth:`start` s one."""
        view = self.by_uid.get(job_uid)
        if view is None or view.params != params or view.namespace != namespace:
            return None
        view.catch_up()
        view.pods_read = False
        return view

    def start(self, job_uid: str, namespace: str, params: ViewParams, pods: list[Obj]) -> JobPodView:
        """A new view from ``pods`` (the list a sync just read), for that sync."""
        view = self.by_uid[job_uid] = JobPodView(job_uid, namespace, params, pods)
        return view

    def forget(self, job_uid: str) -> None:
        """The Job is gone."""
        self.by_uid.pop(job_uid, None)

    def on_pod_event(self, event: WatchEvent) -> None:
        """Hand the pod's new state to the view of every Job it references now or referenced before."""
        if not self.by_uid:
            return
        pod = event.object
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        now = None if event.type == "DELETED" else pod
        refs = meta.get("ownerReferences") or ()
        for ref in refs:
            view = self.by_uid.get(ref.get("uid", ""))
            if view is not None and (not view.namespace or view.namespace == key[0]):
                view.pod_changed(key, now)
        old_refs = (event.old["metadata"].get("ownerReferences") or ()) if event.old is not None else ()
        if old_refs is refs or not old_refs:
            return
        still = {ref.get("uid", "") for ref in refs}
        for ref in old_refs:
            uid = ref.get("uid", "")
            view = self.by_uid.get(uid)
            if view is not None and uid not in still and (not view.namespace or view.namespace == key[0]):
                view.pod_changed(key, None)
