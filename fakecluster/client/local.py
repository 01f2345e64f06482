"""The in-process :class:`~fakecluster.client.protocol.Client`: every call goes straight to the API server."""

from __future__ import annotations

from collections.abc import Callable

from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.client.protocol import SelectorLike


class LocalClient:
    """:class:`Client` backed by an in-process :class:`ApiServer`."""

    def __init__(self, server: ApiServer, user: str = "admin") -> None:
        self.server = server
        self.user = user

    def get(self, kind: str, namespace: str, name: str, *, readonly: bool = False) -> Obj:
        obj = self.server.get(kind, namespace, name)
        return obj if readonly else clone(obj)

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
        readonly: bool = False,
    ) -> list[Obj]:
        items = self.server.list(kind, namespace, labels, owner_uid)
        return items if readonly else [clone(o) for o in items]

    def create(
        self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False, donate: bool = False
    ) -> Obj:
        """``schema_valid``, ``donate``: see :meth:`ApiServer.create` (the cluster's own controllers)."""
        stored = self.server.create(obj, schema_valid=schema_valid, donate=donate)
        return stored if readonly else clone(stored)

    def update(self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False,
               donate: bool = False) -> Obj:
        """``schema_valid``, ``donate``: see :meth:`ApiServer.update` (the cluster's own controllers)."""
        stored = self.server.update(obj, schema_valid=schema_valid, donate=donate)
        return stored if readonly else clone(stored)

    def update_status(self, obj: Obj, *, readonly: bool = False, donate: bool = False) -> Obj:
        """``donate=True``: the caller never touches ``obj['status']`` again, so it is stored uncopied."""
        stored = self.server.update(obj, subresource="status", donate=donate)
        return stored if readonly else clone(stored)

    def patch(
        self,
        kind: str,
        namespace: str,
        name: str,
        patch: Obj,
        *,
        subresource: str | None = None,
        readonly: bool = False,
    ) -> Obj:
        stored = self.server.patch(kind, namespace, name, patch, subresource=subresource)
        return stored if readonly else clone(stored)

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Obj | None = None,
    ) -> None:
        self.server.delete(
            kind,
            namespace,
            name,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )

    def bind(self, namespace: str, name: str, node_name: str) -> None:
        """pods/binding: what a scheduler calls to place a pod."""
        self.server.bind(namespace, name, node_name)

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None:
        """pods/eviction: mark the pod ``DisruptionTarget`` (``EvictionByEvictionAPI``) and delete it
        gracefully (no PodDisruptionBudgets here, so an eviction is never refused)."""
        self.server.evict(namespace, name, grace_period_seconds=grace_period_seconds)

    def watch(self, kind: str | None, handler: Callable[[WatchEvent], None]) -> None:
        self.server.watch(kind, handler)
