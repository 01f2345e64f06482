"""Garbage collector: owner references, deletion propagation and the ``orphan``/``foregroundDeletion``
finalizers (kube-controller-manager's garbagecollector, reduced to its observable behaviour).

- An object whose owners are all gone is deleted (Background); a dangling reference next to a live owner
  is removed from ``ownerReferences``.
- An owner being deleted in the foreground keeps ``foregroundDeletion`` until every dependent with
  ``blockOwnerDeletion: true`` is really gone; its dependents are deleted, cascading foreground to
  dependents that have dependents of their own (for a leaf such as a pod the two policies differ only by
  a transient finalizer, which we skip to keep the per-pod path short).
- An owner deleted with ``Orphan`` has its reference stripped from every dependent, then loses ``orphan``.
"""

from __future__ import annotations

import contextlib

from fakecluster.api.errors import NotFound
from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import FOREGROUND, ORPHAN, ApiServer, WatchEvent
from fakecluster.clock import Clock
from fakecluster.runtime import Controller

_NO_METADATA: Obj = {}
"""The metadata of the missing old version of an ADDED event (never written to)."""


class GarbageCollector:
    def __init__(self, clock: Clock, server: ApiServer, *, latency: float = 0.0) -> None:
        self.server = server
        self.controller = Controller(clock, "garbage-collector", self._reconcile, latency=latency)
        server.watch(None, self._on_event)

    def _on_event(self, event: WatchEvent) -> None:
        # Every write of every kind comes here: operators before method calls, and no empty dict made
        # for an event without an old version, on the way to the common "references unchanged".
        meta = event.object["metadata"]
        old = event.old
        old_meta = old["metadata"] if old is not None else _NO_METADATA
        if event.type == "DELETED":
            self.controller.enqueue(meta["uid"])
            for ref in [*(meta.get("ownerReferences") or ()), *(old_meta.get("ownerReferences") or ())]:
                self.controller.enqueue(ref["uid"])
            return
        if "deletionTimestamp" in meta and meta["deletionTimestamp"] is not None:
            finalizers = meta.get("finalizers") or ()
            if FOREGROUND in finalizers or ORPHAN in finalizers:
                self.controller.enqueue(meta["uid"])
        if meta.get("ownerReferences") is old_meta.get("ownerReferences"):
            return  # most writes share the stored version's references
        refs = list(meta.get("ownerReferences") or ())
        old_refs = list(old_meta.get("ownerReferences") or ())
        if refs != old_refs:
            # A released owner may be waiting in the foreground for this dependent; a reference to an owner
            # that does not exist (at create or added later) makes this object garbage.
            kept = {ref["uid"] for ref in refs}
            for ref in old_refs:
                if ref["uid"] not in kept:
                    self.controller.enqueue(ref["uid"])
            for ref in refs:
                if self.server.get_by_uid(ref["uid"]) is None:
                    self.controller.enqueue(ref["uid"])

    def _reconcile(self, uid: str) -> None:
        owner = self.server.get_by_uid(uid)
        if owner is None:
            self._collect_orphans(uid)
            return
        finalizers = owner["metadata"].get("finalizers") or ()
        if owner["metadata"].get("deletionTimestamp") is None:
            return
        if ORPHAN in finalizers:
            self._orphan_dependents(owner)
        elif FOREGROUND in finalizers:
            self._delete_in_foreground(owner)

    def _collect_orphans(self, uid: str) -> None:
        for kind, dep in self.server.dependents(uid):
            meta = dep["metadata"]
            refs = meta.get("ownerReferences") or []
            live = [r for r in refs if r["uid"] != uid and self.server.get_by_uid(r["uid"]) is not None]
            try:
                if live:
                    self.server.patch(
                        kind,
                        meta.get("namespace", ""),
                        meta["name"],
                        {"metadata": {"ownerReferences": [r for r in refs if r["uid"] != uid]}},
                    )
                elif meta.get("deletionTimestamp") is None:
                    self.server.delete(
                        kind, meta.get("namespace", ""), meta["name"], propagation_policy="Background"
                    )
            except NotFound:
                pass

    def _orphan_dependents(self, owner: Obj) -> None:
        uid = owner["metadata"]["uid"]
        for kind, dep in self.server.dependents(uid):
            meta = dep["metadata"]
            refs = [r for r in meta.get("ownerReferences") or [] if r["uid"] != uid]
            self.server.patch(
                kind, meta.get("namespace", ""), meta["name"], {"metadata": {"ownerReferences": refs or None}}
            )
        self._drop_finalizer(owner, ORPHAN)

    def _delete_in_foreground(self, owner: Obj) -> None:
        uid = owner["metadata"]["uid"]
        blocking = 0
        for kind, dep in self.server.dependents(uid):
            meta = dep["metadata"]
            ref = next(r for r in meta.get("ownerReferences") or [] if r["uid"] == uid)
            if ref.get("blockOwnerDeletion"):
                blocking += 1
            if meta.get("deletionTimestamp") is None:
                policy = "Foreground" if self.server.dependents(meta["uid"]) else "Background"
                with contextlib.suppress(NotFound):
                    self.server.delete(
                        kind, meta.get("namespace", ""), meta["name"], propagation_policy=policy
                    )
        if blocking == 0:
            self._drop_finalizer(owner, FOREGROUND)

    def _drop_finalizer(self, owner: Obj, finalizer: str) -> None:
        meta = owner["metadata"]
        remaining = [f for f in meta.get("finalizers") or () if f != finalizer]
        kind = owner["kind"]
        self.server.patch(
            kind, meta.get("namespace", ""), meta["name"], {"metadata": {"finalizers": remaining or None}}
        )
