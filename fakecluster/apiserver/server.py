"""The fake API server: Kubernetes semantics over an in-memory store, as one façade over its parts.

Upstream: the generic registry of k8s.io/apiserver
(``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``) over etcd
(``staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go``). Each part has one job and its own module:

- :mod:`.storage`: the objects of every kind and the indexes reads use (etcd plus the watch cache's
  indexers);
- :mod:`.writes`: create, update (and the status subresource), merge patch, delete, pods/binding;
  :mod:`.object_meta` holds the metadata rules they apply, :mod:`.eviction` pods/eviction;
- :mod:`.watch_fanout`: watch events to every subscriber, in resourceVersion order;
- :mod:`.admission`: the mutating and validating webhooks per kind;
- :mod:`.resources` / :mod:`.builtin`: what each kind is and its strategy (defaulting, validation);
- :mod:`.snapshots`: the debug mode proving that nobody changes a read-only snapshot.

Reads return the stored objects themselves (read-only snapshots: the store is copy-on-write).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from fakecluster.api import errors
from fakecluster.api.objects import Obj
from fakecluster.api.selectors import Selector
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.admission import AdmissionChain, MutatingHook, ValidatingHook
from fakecluster.apiserver.eviction import evict_pod
from fakecluster.apiserver.metadata_checks import check_delete_options
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.snapshots import SnapshotGuard, enabled_by_environment
from fakecluster.apiserver.storage import Key, KindObjList, ObjList, Storage
from fakecluster.apiserver.watch_fanout import Handler, WatchFanOut
from fakecluster.apiserver.writes import FOREGROUND, ORPHAN, ValidatedSpec, WritePath
from fakecluster.clock import Clock

__all__ = ["FOREGROUND", "ORPHAN", "ApiServer", "Handler", "Key", "ValidatedSpec", "WatchEvent"]


class ApiServer:
    """In-memory API server. One per run; all randomness (uids, generated names) from ``rng``."""

    def __init__(self, clock: Clock, rng: random.Random, *, check_snapshots: bool | None = None) -> None:
        """``check_snapshots``: run with a :class:`~fakecluster.apiserver.snapshots.SnapshotGuard`
        (default: as :data:`~fakecluster.apiserver.snapshots.ENV_VAR` says)."""
        self.clock = clock
        if check_snapshots is None:
            check_snapshots = enabled_by_environment()
        self.snapshots: SnapshotGuard | None = SnapshotGuard() if check_snapshots else None
        self._types: dict[str, ResourceType] = {}
        self._storage = Storage()
        self._objects = self._storage.objects
        self._fanout = WatchFanOut(self.snapshots)
        self._admission = AdmissionChain()
        self._writes = WritePath(self._types, self._storage, fanout=self._fanout, admission=self._admission,
                                 clock=clock, rng=rng, snapshots=self.snapshots)

    @property
    def writes(self) -> int:
        """Persisted writes so far (each one bumped the resourceVersion)."""
        return self._writes.writes

    # ------------------------------------------------------------------ registration
    def register(self, rtype: ResourceType) -> None:
        self._types[rtype.kind] = rtype
        self._objects.setdefault(rtype.kind, {})

    def register_admission(
        self,
        kind: str,
        name: str,
        *,
        mutating: MutatingHook | None = None,
        validating: ValidatingHook | None = None,
        operations: Iterable[str] = ("CREATE", "UPDATE"),
        copies_on_write: bool = False,
        in_tree: bool = False,
    ) -> None:
        """See :meth:`AdmissionChain.register <fakecluster.apiserver.admission.AdmissionChain.register>`."""
        self._admission.register(kind, name, mutating=mutating, validating=validating, operations=operations,
                                 copies_on_write=copies_on_write, in_tree=in_tree)

    def resource(self, kind: str) -> ResourceType:
        try:
            return self._types[kind]
        except KeyError:
            raise errors.NotFound.with_message(
                f'the server could not find the requested resource (kind "{kind}")'
            ) from None

    def kinds(self) -> list[str]:
        return list(self._types)

    # ------------------------------------------------------------------ watch
    def watch(self, kind: str | None, handler: Handler) -> None:
        """Subscribe to every change of ``kind`` (None: all kinds), starting now."""
        self._fanout.watch(kind, handler)

    # ------------------------------------------------------------------ reads
    def get(self, kind: str, namespace: str, name: str) -> Obj:
        """The stored object (a read-only snapshot)."""
        rtype = self._types.get(kind)  # (the lookup of :meth:`resource`, without its call: every read)
        if rtype is None:
            rtype = self.resource(kind)  # raises NotFound
        obj = self._objects[kind].get((namespace if rtype.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        if self.snapshots is not None:
            self.snapshots.handed(obj)
        return obj

    def get_by_uid(self, uid: str) -> Obj | None:
        where = self._storage.by_uid.get(uid)
        return None if where is None else self._objects[where[0]].get(where[1])

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        selector: Selector | dict[str, Any] | str | None = None,
        owner_uid: str | None = None,
    ) -> ObjList:
        """Objects in key order (namespace, name), as etcd lists them. Read-only snapshots."""
        found = self._storage.select(self.resource(kind), namespace, selector, owner_uid)
        guard = self.snapshots
        if guard is not None:
            for obj in found:
                guard.handed(obj)
        return found

    def dependents(self, owner_uid: str) -> KindObjList:
        """Objects whose ownerReferences name ``owner_uid`` (the garbage collector's graph)."""
        return self._storage.dependents(owner_uid)

    def count(self, kind: str) -> int:
        return self._storage.count(kind)

    # ------------------------------------------------------------------ writes
    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        """See :meth:`WritePath.validated_spec <fakecluster.apiserver.writes.WritePath.validated_spec>`."""
        return self._writes.validated_spec(kind, spec, metadata)

    def create(self, obj: Obj, *, donate: bool = False, template: ValidatedSpec | None = None) -> Obj:
        """POST; see :meth:`WritePath.create <fakecluster.apiserver.writes.WritePath.create>`."""
        return self._writes.create(obj, donate=donate, template=template)

    def update(self, obj: Obj, *, subresource: str | None = None, donate: bool = False,
               kept_ends: tuple[int, int] | None = None) -> Obj:
        """PUT; see :meth:`WritePath.update <fakecluster.apiserver.writes.WritePath.update>`."""
        return self._writes.update(obj, subresource=subresource, donate=donate, kept_ends=kept_ends)

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        """JSON merge patch (RFC 7386). A resourceVersion in the patch acts as a precondition."""
        return self._writes.patch(kind, namespace, name, patch, subresource=subresource)

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Obj | None = None,
    ) -> Obj | None:
        """DELETE. Returns the object if it still exists (being finalized or terminating), else None."""
        return self._writes.delete(kind, namespace, name, propagation_policy=propagation_policy,
                                   grace_period_seconds=grace_period_seconds, preconditions=preconditions)

    def bind(self, namespace: str, name: str, node_name: str) -> Obj:
        """pods/binding: ``spec.nodeName`` and ``PodScheduled=True`` in one revision."""
        return self._writes.bind(namespace, name, node_name)

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None:
        """pods/eviction: ``DisruptionTarget`` (``EvictionByEvictionAPI``), then a graceful delete
        (:mod:`fakecluster.apiserver.eviction`; there are no PodDisruptionBudgets here). The delete options
        are checked first, so a refused eviction writes nothing (no ``DisruptionTarget`` left behind)."""
        if not isinstance(namespace, str) or not isinstance(name, str):
            raise errors.BadRequest("the namespace and name of a request are strings")
        check_delete_options(grace_period_seconds, None)
        evict_pod(self, namespace, name, grace_period_seconds)
