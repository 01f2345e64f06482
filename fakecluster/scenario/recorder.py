"""Turns the API server's watch stream into the run's trace of milestones-worthy moments.

The recorder is a pure observer: it watches Pods, Jobs, Events and the workload's kind and appends
:class:`TraceEvent` records when an object crosses a lifecycle edge (a pod becomes Ready, a Job
Complete, a JobSet condition turns True). It never writes to the cluster. Every watch event also feeds a
running hash of (type, kind, name, resourceVersion), so the digest covers every write of the run, not
only the milestones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

from fakecluster.api.objects import Obj, condition_true
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster
from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.trace import Row, TraceEvent, TraceLog
from fakecluster.workload_plugin import Slot, WorkloadPlugin


class SlotFields(NamedTuple):
    """A trace event's workload coordinates (:class:`~fakecluster.scenario.trace.TraceEvent` fields)."""

    jobset: str | None
    replicated_job: str | None
    job_index: int | None
    pod_index: int | None
    attempt: int | None


class _SlotCacheEntry(NamedTuple):
    """:meth:`TraceRecorder._slot_of`'s memo for one labels object."""

    labels: dict[str, str]
    kind: object
    fields: SlotFields


_NO_SLOT = SlotFields(None, None, None, None, None)
_POD_PHASE_EVENTS = {"Running": "Running", "Succeeded": "Succeeded", "Failed": "Failed"}
_JOB_CONDITIONS = ("Complete", "Failed")
_ADDED_OR_DELETED = {"ADDED": "Created", "DELETED": "Deleted"}


def _job_ready(job: Obj) -> bool:
    """ready + succeeded >= min(parallelism, completions): JobSet's notion of a ready Job."""
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    want = spec.get("parallelism", 1)
    completions = spec.get("completions")
    if completions is not None and completions < want:
        want = completions
    return (status.get("ready") or 0) + (status.get("succeeded") or 0) >= want


def _pod_ready(pod: Obj) -> bool:
    return condition_true(pod, "Ready")


class TraceRecorder:
    """Collects the trace, the workload's Events and the write-log digest of one run."""

    def __init__(self, cluster: Cluster, plugin: WorkloadPlugin, ordinals: PodOrdinals | None = None) -> None:
        self.cluster = cluster
        self.plugin = plugin
        self.ordinals = ordinals if ordinals is not None else PodOrdinals(plugin)
        """NonIndexed pods' ordinals: their ``pod_index`` in the trace (:mod:`.ordinals`)."""
        self.trace = TraceLog()
        """The events so far (compact rows, read as :class:`TraceEvent` s)."""
        self._add_row = self.trace.add_row
        self.events: list[Obj] = []
        self._event_index: dict[str, int] = {}
        self.job_events: list[Obj] = []
        """Events regarding Jobs (the Job controller's), in creation order, each its latest version."""
        self._job_event_index: dict[str, int] = {}
        self.pod_events: list[Obj] = []
        """Events regarding Pods (the kubelet's and the scheduler's, when the cluster records them)."""
        self._pod_event_index: dict[str, int] = {}
        self._writes = hashlib.sha256()
        self._write_log: list[str] = []
        """Lines not hashed yet: hashing in batches costs a fraction of one ``update`` per write."""
        self._slots: dict[int, _SlotCacheEntry] = {}
        self.listeners: list[Callable[[TraceEvent], None]] = []
        server = cluster.server
        server.watch("Pod", self._on_pod)
        server.watch("Job", self._on_job)
        server.watch(plugin.kind, self._on_workload)
        if "Event" in server.kinds():
            server.watch("Event", self._on_event)
        server.watch("EndpointSlice", self._on_endpoint_slice)
        cluster.network.listeners.append(self._on_network)

    def write_digest(self) -> str:
        self._flush_write_log()
        return self._writes.hexdigest()

    def _flush_write_log(self) -> None:
        """Hash the buffered lines: SHA-256 over their concatenation equals one update per line."""
        if self._write_log:
            self._writes.update("".join(self._write_log).encode())
            self._write_log.clear()

    def _emit(self, obj: Obj, kind: str, event: str, detail: str = "", *, own_name: bool = False) -> None:
        meta = obj["metadata"]
        name = meta["name"]
        # The workload's own events carry its name as their jobset; a pod's share its slot tuple.
        coordinates = SlotFields(name, None, None, None, None) if own_name else self._slot_of(obj)
        row = (self.cluster.clock.now, kind, meta.get("namespace", ""), name, event, coordinates, detail)
        self._add_row(row)
        if self.listeners:
            self._tell_listeners(row)

    def _slot_of(self, obj: Obj) -> SlotFields:
        """``plugin.slot_of`` as trace fields, remembered per labels *object* (the plugin reads only the
        kind and the labels): the store is copy-on-write, so the versions of one pod share their labels
        dict and a pod's several trace events cost one lookup. The entry holds the dict, so its id is
        never reused."""
        labels = obj["metadata"].get("labels")
        if labels is None:
            return _slot_fields(self.plugin.slot_of(obj))
        kind = obj.get("kind")
        hit = self._slots.get(id(labels))
        if hit is not None:
            cached_labels, cached_kind, fields = hit  # unpacked: cheaper than three attribute reads
            if cached_labels is labels and cached_kind == kind:
                return fields if fields[3] is not None or kind != "Pod" else self._with_ordinal(obj, fields)
        fields = _slot_fields(self.plugin.slot_of(obj))
        self._slots[id(labels)] = _SlotCacheEntry(labels, kind, fields)
        return fields if fields[3] is not None or kind != "Pod" else self._with_ordinal(obj, fields)

    def _forget_slot(self, pod: Obj) -> None:
        """Drop a finished or deleted pod's :meth:`_slot_of` entry: its trace events are (nearly) all
        recorded, and an entry per pod kept all run costs some 200 bytes each. A later event of the pod
        (its deletion) looks its slot up again: the same fields, from the same labels."""
        labels = pod["metadata"].get("labels")
        if labels is not None:
            self._slots.pop(id(labels), None)

    def _with_ordinal(self, pod: Obj, fields: SlotFields) -> SlotFields:
        """A workload pod without a completion index (NonIndexed Job) is placed by its ordinal; the
        cache above is per labels object, so the ordinal (per pod) is looked up after it."""
        if fields.replicated_job is None:
            return fields
        ordinal = self.ordinals.ordinal(pod)
        return fields if ordinal is None else fields._replace(pod_index=ordinal)

    def _log_write(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        log = self._write_log
        log.append(f"{event.type} {event.kind} {meta.get('namespace', '')}/{meta['name']} "
                   f"{meta.get('resourceVersion')}\n")
        if len(log) >= 4096:
            self._flush_write_log()
            # The trace's rows since the last flush (some as many as the writes) kept as columns: a
            # row costs some 136 bytes until the run ends, a compacted one some 46 (TraceLog.compact).
            self.trace.compact()

    def _added_or_deleted(self, event: WatchEvent, kind: str, *, own_name: bool = False) -> bool:
        """Log the write; an added or deleted object is its ``Created`` or ``Deleted`` moment and nothing
        more (True), a modified one is for the caller to compare with its old version (False)."""
        self._log_write(event)
        moment = _ADDED_OR_DELETED.get(event.type)
        if moment is None:
            return False
        self._emit(event.object, kind, moment, own_name=own_name)
        return True

    def _on_pod(self, event: WatchEvent) -> None:
        pod, old = event.object, event.old
        if self._added_or_deleted(event, "Pod"):
            if event.type == "DELETED":
                self._forget_slot(pod)
            return
        assert old is not None
        # Copy-on-write: a part of the pod that is the very object it was before has not changed.
        spec = pod["spec"]
        if spec is not old["spec"] and spec.get("nodeName") and not old["spec"].get("nodeName"):
            self._emit(pod, "Pod", "Scheduled", spec["nodeName"])
        status, old_status = pod.get("status") or {}, old.get("status") or {}
        if status is old_status:
            return  # a metadata-only write (finalizers, deletion): phase and readiness are unchanged
        phase = status.get("phase")
        if phase != old_status.get("phase") and phase in _POD_PHASE_EVENTS:
            self._emit(pod, "Pod", _POD_PHASE_EVENTS[phase], _exit_detail(pod) if phase == "Failed" else "")
            if phase != "Running":
                self._forget_slot(pod)
        if status.get("conditions") is not old_status.get("conditions") and _pod_ready(pod) \
                and not _pod_ready(old):
            self._emit(pod, "Pod", "Ready")

    def _on_job(self, event: WatchEvent) -> None:
        job, old = event.object, event.old
        if self._added_or_deleted(event, "Job"):
            return
        assert old is not None
        if _job_ready(job) and not _job_ready(old):
            self._emit(job, "Job", "Ready")
        for cond in _JOB_CONDITIONS:
            if condition_true(job, cond) and not condition_true(old, cond):
                conditions = job["status"]["conditions"]
                reason = next(c.get("reason", "") for c in conditions if c.get("type") == cond)
                self._emit(job, "Job", cond, reason)
        if condition_true(job, "Suspended") and not condition_true(old, "Suspended"):
            self._emit(job, "Job", "Suspended")
        elif condition_true(old, "Suspended") and not condition_true(job, "Suspended"):
            self._emit(job, "Job", "Resumed")

    def _on_workload(self, event: WatchEvent) -> None:
        obj, old = event.object, event.old
        kind = self.plugin.kind
        if self._added_or_deleted(event, kind, own_name=True):
            return
        assert old is not None
        for cond in (obj.get("status") or {}).get("conditions") or ():
            if cond.get("status") == "True" and not condition_true(old, cond["type"]):
                self._emit(obj, kind, cond["type"], cond.get("reason", ""), own_name=True)
        restarts = (obj.get("status") or {}).get("restarts") or 0
        if restarts > ((old.get("status") or {}).get("restarts") or 0):
            self._emit(obj, kind, "Restarted", str(restarts), own_name=True)

    def _on_network(self, kind: str, pod: Obj, event: str, detail: str) -> None:
        """Program milestones (``Pod`` events) and each step of a connect attempt (``Connect``)."""
        self._emit(pod, kind, event, detail)

    def _on_endpoint_slice(self, event: WatchEvent) -> None:
        """Slices are in the trace (format 1.1): created, updated, deleted, with how many endpoints
        they list (``endpoints 4``)."""
        self._log_write(event)  # the one place the write digest's line is formatted
        obj = event.object
        meta = obj["metadata"]
        namespace, name, etype = meta.get("namespace", ""), meta["name"], event.type
        endpoints = obj.get("endpoints") or ()
        row = (self.cluster.clock.now, "EndpointSlice", namespace, name, _SLICE_VERBS[etype], _NO_SLOT,
               _endpoints_detail(len(endpoints)))
        self._add_row(row)
        if self.listeners:
            self._tell_listeners(row)

    def _tell_listeners(self, row: Row) -> None:
        """Hand the event just recorded (``row``, the last) to every listener (the ``when:`` actions'
        milestone watch): built from its row here, not read back through the log's indexing."""
        record = self.trace.last(row)
        for listener in self.listeners:
            listener(record)

    def _on_event(self, event: WatchEvent) -> None:
        self._log_write(event)
        if event.type == "DELETED":
            return
        obj = event.object
        regarding = obj.get("regarding") or obj.get("involvedObject") or {}
        kind = regarding.get("kind")
        if kind == self.plugin.kind:
            events, index = self.events, self._event_index
        elif kind == "Job":
            events, index = self.job_events, self._job_event_index
        elif kind == "Pod":
            events, index = self.pod_events, self._pod_event_index
        else:
            return
        name = obj["metadata"]["name"]
        if name in index:
            events[index[name]] = obj
        else:
            index[name] = len(events)
            events.append(obj)


_SLICE_VERBS = {"ADDED": "Created", "MODIFIED": "Updated", "DELETED": "Deleted"}


@lru_cache(maxsize=4096)
def _endpoints_detail(count: int) -> str:
    """``endpoints <count>``, one string per count: a slice is written some three times per pod, and
    each trace record would otherwise hold its own copy for the rest of the run."""
    return f"endpoints {count}"


def _slot_fields(slot: Slot | None) -> SlotFields:
    if slot is None:
        return _NO_SLOT
    return SlotFields(slot.owner, slot.group, slot.job_index, slot.pod_index, slot.attempt)


def _exit_detail(pod: Obj) -> str:
    for status in (pod.get("status") or {}).get("containerStatuses") or ():
        terminated = (status.get("state") or {}).get("terminated")
        if terminated and terminated.get("exitCode"):
            return f"exitCode={terminated['exitCode']}"
    return (pod.get("status") or {}).get("reason", "")
