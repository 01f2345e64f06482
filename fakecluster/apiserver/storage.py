"""The fake API server's storage: the objects of every kind by (namespace, name), and the indexes the
reads and the garbage collector use (by uid, by owner uid, by label). What etcd plus the watch cache's
indexers are to a real API server; the write paths (:mod:`fakecluster.apiserver.writes`) decide what
goes in, this module only keeps it and answers queries, in key order as etcd lists."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakecluster.api.objects import Obj
from fakecluster.api.selectors import Selector, as_selector
from fakecluster.apiserver.resources import ResourceType

Key = tuple[str, str]  # (namespace, name)
ObjList = list[Obj]
KindObjList = list[tuple[str, Obj]]
"""(kind, object) pairs, under a name that ``ApiServer.list`` cannot shadow in annotations."""


class Storage:
    """Objects and indexes. Stored objects are never changed in place (copy-on-write)."""

    keep_from = 64
    """The fewest dependents an owner List must return for :attr:`owned_objects` to keep it: every write
    pays a check once any list is kept (some 150-400 instructions), and a short list costs little to
    look up afresh (some 100 per object)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[Key, Obj]] = {}
        self.by_uid: dict[str, tuple[str, Key]] = {}
        self.by_owner: dict[str, dict[tuple[str, Key], None]] = {}
        self.owned_in_order: dict[str, dict[tuple[str, str | None], list[Key]]] = {}
        """Per owner uid, per (kind, namespace filter): the dependents' keys in key order, as ``list`` by
        ``owner_uid`` returns them. A Job's sync lists its pods by owner every time while the set of
        pods rarely changes, so the sorted keys are kept until a dependent of that owner comes or goes."""
        self.owned_objects: dict[str, dict[tuple[str, str | None], list[Obj]]] = {}
        """Per owner uid, per (kind, namespace filter): the dependents themselves, aligned with
        :attr:`owned_in_order`, for an owner list asked for a third time with the same dependents. A
        JobSet's reconcile lists its Jobs at every change of any of them: instead of looking up hundreds
        of keys each time, :meth:`put` keeps the objects current (:attr:`listed_at`) and a List copies the
        list. Only for lists of at least :attr:`keep_from` objects, and not for the first two Lists, so a
        Job's pods (listed when its sync starts counting them and once more when it finishes) do not pay
        for it. Dropped with :attr:`owned_in_order`'s entry."""
        self.listed_at: dict[str, dict[str, list[tuple[list[Obj], int]]]] = {}
        """Per kind, per dependent uid: each :attr:`owned_objects` list it is in, and its index there. By
        kind first, so that a write of a kind no kept list holds (a pod's, mostly) costs one lookup; empty
        while no list is kept, so that a run without any costs one check per write."""
        self.owner_lists: dict[str, dict[tuple[str, str | None], int]] = {}
        """Per owner uid, per (kind, namespace filter): how many Lists :attr:`owned_in_order`'s entry has
        served (until :attr:`owned_objects` takes over); dropped with the entry."""
        self.label_index: dict[str, dict[tuple[str, str], dict[Key, None]]] = {}
        """Per kind, keys by ``(label, value)``: built the first time a kind is listed by a label
        selector, then kept current. Nothing in the cluster itself lists by label, so a run that never
        does skips the per-label bookkeeping on every create (a JobSet pod carries ~17 labels)."""
        self.valid_specs: dict[tuple[str, Key], Obj | None] = {}
        """For kinds whose stored objects always pass the schema (``ResourceType.stored_valid``): the
        spec object each stored object has, so a patch that keeps it validates only what it changes."""

    def select(
        self,
        rtype: ResourceType,
        namespace: str | None,
        selector: Selector | dict[str, Any] | str | None,
        owner_uid: str | None,
    ) -> ObjList:
        """Objects of ``rtype`` in key order (namespace, name), as etcd lists them."""
        kind = rtype.kind
        store = self.objects[kind]
        if owner_uid is not None and selector is None:
            return self.owned(owner_uid, kind, namespace, rtype)
        sel = as_selector(selector)
        if owner_uid is not None:
            keys: Iterable[Key] = [k for (kd, k) in self.by_owner.get(owner_uid, {}) if kd == kind]
        else:
            terms = sel.equality_terms() if selector is not None else []
            if terms:
                index = self.labels_of_kind(kind)
                buckets: list[dict[Key, None]] = [index.get(t, {}) for t in terms]
                smallest: dict[Key, None] = min(buckets, key=len)
                keys = smallest
            else:
                keys = store.keys()
        if namespace and rtype.namespaced:  # "" means all namespaces, as in client-go
            keys = [k for k in keys if k[0] == namespace]
        out = []
        for key in sorted(keys):
            obj = store[key]
            if selector is None or sel.matches(obj["metadata"].get("labels") or {}):
                out.append(obj)
        return out

    def labels_of_kind(self, kind: str) -> dict[tuple[str, str], dict[Key, None]]:
        index = self.label_index.get(kind)
        if index is None:
            index = self.label_index[kind] = {}
            for key, obj in self.objects[kind].items():
                for item in (obj["metadata"].get("labels") or {}).items():
                    index.setdefault(item, {})[key] = None
        return index

    def owned_keys(self, owner_uid: str, kind: str, namespace: str | None, rtype: ResourceType) -> list[Key]:
        """Keys of ``kind`` objects referencing ``owner_uid`` (in ``namespace``, if given), in key order."""
        ns_filter = namespace if namespace and rtype.namespaced else None
        cached = self.owned_in_order.setdefault(owner_uid, {})
        keys = cached.get((kind, ns_filter))
        if keys is None:
            keys = sorted(k for (kd, k) in self.by_owner.get(owner_uid, {})
                          if kd == kind and (ns_filter is None or k[0] == ns_filter))
            cached[(kind, ns_filter)] = keys
        return keys

    def owned(self, owner_uid: str, kind: str, namespace: str | None, rtype: ResourceType) -> ObjList:
        """The ``kind`` objects referencing ``owner_uid`` (in ``namespace``, if given), in key order: a new
        list, looked up by :meth:`owned_keys`, or copied from :attr:`owned_objects` from the third List on.
        """
        store = self.objects[kind]
        ns_filter = namespace if namespace and rtype.namespaced else None
        objects = self.owned_objects.get(owner_uid)
        if objects is not None:
            found = objects.get((kind, ns_filter))
            if found is not None:
                return list(found)
        keys = self.owned_keys(owner_uid, kind, namespace, rtype)
        served = self.owner_lists.setdefault(owner_uid, {})
        times = served.get((kind, ns_filter), 0)
        if times < 2 or len(keys) < self.keep_from:
            served[(kind, ns_filter)] = times + 1
            return list(map(store.__getitem__, keys))
        found = list(map(store.__getitem__, keys))
        self.owned_objects.setdefault(owner_uid, {})[(kind, ns_filter)] = found
        listed_at = self.listed_at.setdefault(kind, {})
        for index, obj in enumerate(found):
            listed_at.setdefault(obj["metadata"]["uid"], []).append((found, index))
        return list(found)

    def _forget_kept(self, owner_uid: str) -> None:
        """Drop what is kept of ``owner_uid``'s dependents besides :attr:`owned_in_order` (which the caller
        has just dropped): one of them came, went or changed owners."""
        self.owner_lists.pop(owner_uid, None)
        objects = self.owned_objects.pop(owner_uid, None)
        if objects is None:
            return
        for (kind, _), found in objects.items():
            listed_at = self.listed_at[kind]
            for obj in found:
                uid = obj["metadata"]["uid"]
                spots = [spot for spot in listed_at[uid] if spot[0] is not found]
                if spots:
                    listed_at[uid] = spots
                else:
                    del listed_at[uid]
            if not listed_at:
                del self.listed_at[kind]

    def dependents(self, owner_uid: str) -> list[tuple[str, Obj]]:
        """Objects whose ownerReferences name ``owner_uid`` (the garbage collector's graph)."""
        out = []
        for kind, key in list(self.by_owner.get(owner_uid, {})):
            obj = self.objects[kind].get(key)
            if obj is not None:
                out.append((kind, obj))
        return out

    def count(self, kind: str) -> int:
        return len(self.objects.get(kind, {}))

    def put(self, kind: str, key: Key, obj: Obj, old: Obj | None) -> None:
        """Store ``obj`` as the new version of ``key`` (``old``: the version it replaces) and update the
        indexes."""
        self.objects[kind][key] = obj
        meta = obj["metadata"]
        if self.listed_at and kind in self.listed_at:  # a run without long owner lists: one check
            spots = self.listed_at[kind].get(meta["uid"])
            if spots is not None:
                for found, position in spots:
                    found[position] = obj
        if old is None:
            # One (kind, key) tuple per object for every index that needs it (by_uid, by_owner, the
            # write path's valid_specs via kind_key), not one each.
            self.by_uid[meta["uid"]] = (kind, key)
        old_meta = old["metadata"] if old is not None else {}
        refs = meta.get("ownerReferences")
        old_refs = old_meta.get("ownerReferences")
        # Most writes share labels and references with the stored version (copy-on-write): skip comparing.
        if refs is not old_refs and refs != old_refs:
            for ref in old_refs or ():
                self.by_owner.get(ref.get("uid", ""), {}).pop((kind, key), None)
                if self.owned_in_order.pop(ref.get("uid", ""), None) is not None:
                    self._forget_kept(ref.get("uid", ""))
            kind_key = self.kind_key(meta["uid"], kind, key)
            for ref in refs or ():
                self.by_owner.setdefault(ref.get("uid", ""), {})[kind_key] = None
                if self.owned_in_order.pop(ref.get("uid", ""), None) is not None:
                    self._forget_kept(ref.get("uid", ""))
        index = self.label_index.get(kind)  # none in a run that never lists this kind by label
        if index is None:
            return
        labels = meta.get("labels")
        old_labels = old_meta.get("labels")
        if labels is not old_labels and labels != old_labels:
            for item in (old_labels or {}).items():
                bucket = index.get(item)
                if bucket is not None:
                    bucket.pop(key, None)
            for item in (labels or {}).items():
                index.setdefault(item, {})[key] = None

    def kind_key(self, uid: str, kind: str, key: Key) -> tuple[str, Key]:
        """``(kind, key)`` of the stored object ``uid``: the very tuple :attr:`by_uid` holds, when it is
        that object's (so the indexes keyed by it share one tuple per object)."""
        found = self.by_uid.get(uid)
        return found if found is not None and found[0] == kind and found[1] == key else (kind, key)

    def drop(self, kind: str, key: Key) -> Obj:
        """Remove ``key``; return the stored version, from which the indexes are cleaned (the object's final
        state may differ from it: one update can drop the last finalizer and change labels)."""
        stored = self.objects[kind].pop(key)
        self.valid_specs.pop((kind, key), None)
        stored_meta = stored["metadata"]
        self.by_uid.pop(stored_meta["uid"], None)
        for ref in stored_meta.get("ownerReferences") or ():
            self.by_owner.get(ref.get("uid", ""), {}).pop((kind, key), None)
            if self.owned_in_order.pop(ref.get("uid", ""), None) is not None:
                self._forget_kept(ref.get("uid", ""))
        index = self.label_index.get(kind)
        if index is not None:
            for item in (stored_meta.get("labels") or {}).items():
                bucket = index.get(item)
                if bucket is not None:
                    bucket.pop(key, None)
        return stored
