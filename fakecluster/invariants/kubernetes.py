"""Invariants of the API server and the built-in controllers, each a small class citing its rule.

They know nothing of any workload: the JobSet ones live in ``jobset/invariants.py`` and come in through
the workload plugin.
"""

from __future__ import annotations

from collections.abc import Iterator

from fakecluster.api.objects import Obj, condition_true
from fakecluster.api.watch import WatchEvent
from fakecluster.invariants.monitor import BaseInvariant, ClusterView, Invariant, Report

JOB_TERMINAL_CONDITIONS = ("Complete", "Failed")


def _where(event: WatchEvent) -> str:
    meta = event.object["metadata"]
    namespace = meta.get("namespace")
    name = f"{namespace}/{meta['name']}" if namespace else meta["name"]
    return f"{event.type} {event.kind} {name}"


def _named(kind: str, obj: Obj) -> str:
    """``Kind namespace/name`` (``Kind /name`` for a cluster-scoped object)."""
    meta = obj["metadata"]
    return f"{kind} {meta.get('namespace', '')}/{meta['name']}"


def _stored(view: ClusterView, kinds: tuple[str, ...]) -> Iterator[tuple[str, Obj]]:
    """(kind, object) for every stored object of ``kinds``, kind by kind."""
    for kind in kinds:
        for obj in view.list(kind):
            yield kind, obj


def _status(obj: Obj | None) -> Obj:
    return (obj or {}).get("status") or {}


class ResourceVersionIncreases(BaseInvariant):
    """Every write gets a resourceVersion greater than any before it, and the watch stream delivers writes
    in that order (etcd's one revision counter: ``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go``;
    watch ordering: ``staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go``)."""

    name = "resourceVersionIncreases"

    def __init__(self) -> None:
        self.last = 0

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        rv = int(event.object["metadata"]["resourceVersion"])
        if rv <= self.last:
            report(f"{_where(event)}: resourceVersion {rv} after {self.last}")
        self.last = max(rv, self.last)


class JobCountersNeverDecrease(BaseInvariant):
    """``status.succeeded`` and ``status.failed`` of a Job only grow: with pod tracking finalizers a
    finished pod is counted once and never uncounted (``pkg/controller/job/tracking_utils.go``,
    ``job_controller.go`` ``trackJobStatusAndRemoveFinalizers``)."""

    name = "jobCountersNeverDecrease"
    kinds = ("Job",)

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != "Job" or event.type != "MODIFIED" or event.old is None:
            return
        new, old = _status(event.object), _status(event.old)
        for counter in ("succeeded", "failed"):
            if (new.get(counter) or 0) < (old.get(counter) or 0):
                report(f"{_where(event)}: status.{counter} {old.get(counter)} -> {new.get(counter)}")


class JobReadyNotAboveActive(BaseInvariant):
    """``status.ready`` counts active pods that are Ready, so it never exceeds ``status.active``
    (``pkg/controller/job/job_controller.go``: ``ready = countReadyPods(activePods)``)."""

    name = "jobReadyNotAboveActive"
    kinds = ("Job",)

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != "Job" or event.type == "DELETED":
            return
        status = _status(event.object)
        ready, active = status.get("ready") or 0, status.get("active") or 0
        if ready > active:
            report(f"{_where(event)}: status.ready {ready} > status.active {active}")


class JobTerminalConditionsNeverRevert(BaseInvariant):
    """A Job with ``Complete`` or ``Failed`` True is finished for good: its conditions never turn back
    (``pkg/controller/job/job_controller.go``: ``IsJobFinished`` stops every sync)."""

    name = "jobTerminalConditionsNeverRevert"
    kinds = ("Job",)

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if event.kind != "Job" or event.type != "MODIFIED" or event.old is None:
            return
        for cond in JOB_TERMINAL_CONDITIONS:
            if condition_true(event.old, cond) and not condition_true(event.object, cond):
                report(f"{_where(event)}: condition {cond}=True was lost")


class NoDeletedObjectWithoutFinalizers(BaseInvariant):
    """An object whose deletionTimestamp is set and whose finalizers are all gone is removed from the
    store in the same write (``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``,
    ``deletionFinalization``). Pods are the exception: graceful deletion keeps them until the kubelet
    confirms (``pkg/registry/core/pod/strategy.go`` ``CheckGracefulDelete``), so they are not checked.

    The stream says which objects are in that state (the latest event of each: not DELETED, deletion
    timestamp, no finalizers), so a caught-up check looks at those few, not at every stored object."""

    name = "noDeletedObjectWithoutFinalizers"

    def __init__(self, kinds: tuple[str, ...] = ("Job", "Service", "Node")) -> None:
        self.kinds = kinds
        self.unfinalized: dict[str, tuple[str, str, str]] = {}
        """uid -> (kind, namespace, name) of each object whose latest event shows it deleted, without
        finalizers and still stored."""

    def on_event(self, event: WatchEvent, view: ClusterView, report: Report) -> None:
        if self.kinds is not None and event.kind not in self.kinds:
            return
        meta = event.object["metadata"]
        uid = meta.get("uid", "")
        if event.type != "DELETED" and meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self.unfinalized[uid] = (event.kind, meta.get("namespace", ""), meta["name"])
        else:
            self.unfinalized.pop(uid, None)

    def caught_up(self, view: ClusterView, report: Report) -> None:
        for kind, namespace, name in self.unfinalized.values():
            report(f"{kind} {namespace}/{name}: deletionTimestamp set, no finalizers, still stored")


class OwnerReferencesResolve(BaseInvariant):
    """Once the garbage collector has settled, every ownerReference names an object that exists: a
    dependent of a deleted owner is deleted (Background/Foreground) or un-referenced (Orphan)
    (``pkg/controller/garbagecollector/garbagecollector.go``)."""

    name = "ownerReferencesResolve"

    def __init__(self, scanned: tuple[str, ...] = ("Job", "Pod", "Service")) -> None:
        self.scanned = scanned

    def quiet(self, view: ClusterView, report: Report) -> None:
        for kind, obj in _stored(view, self.scanned):
            for ref in obj["metadata"].get("ownerReferences") or ():
                if view.get_by_uid(ref.get("uid", "")) is None:
                    report(f"{_named(kind, obj)}: owner {ref.get('kind')} {ref.get('name')} "
                           f"({ref.get('uid')}) does not exist")


def _pod_active(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not pod["metadata"].get(
        "deletionTimestamp"
    )


class JobActiveCountMatchesPods(BaseInvariant):
    """Once the Job controller has synced (quiet), an unfinished, unsuspended Job's ``status.active`` equals
    the number of its pods that are neither finished nor terminating
    (``pkg/controller/job/job_controller.go``: ``active = int32(len(activePods))``, with ``FilterActivePods``
    from ``pkg/controller/controller_utils.go``)."""

    name = "jobActiveCountMatchesPods"

    def quiet(self, view: ClusterView, report: Report) -> None:
        active: dict[str, int] = {}
        for pod in view.list("Pod"):
            for ref in pod["metadata"].get("ownerReferences") or ():
                if ref.get("controller") and ref.get("kind") == "Job" and _pod_active(pod):
                    active[ref["uid"]] = active.get(ref["uid"], 0) + 1
        for job in view.list("Job"):
            meta = job["metadata"]
            if meta.get("deletionTimestamp") or any(condition_true(job, c) for c in JOB_TERMINAL_CONDITIONS):
                continue
            if (job.get("spec") or {}).get("managedBy") not in (None, "kubernetes.io/job-controller"):
                continue
            counted = _status(job).get("active") or 0
            actual = active.get(meta["uid"], 0)
            if counted != actual:
                report(f"{_named('Job', job)}: status.active {counted}, {actual} active pods")


def kubernetes_invariants() -> list[Invariant]:
    """A fresh set (they keep per-run state) of every built-in invariant."""
    return [
        ResourceVersionIncreases(),
        JobCountersNeverDecrease(),
        JobReadyNotAboveActive(),
        JobTerminalConditionsNeverRevert(),
        NoDeletedObjectWithoutFinalizers(),
        OwnerReferencesResolve(),
        JobActiveCountMatchesPods(),
    ]
