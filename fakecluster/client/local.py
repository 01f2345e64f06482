"""The in-process client: every call goes straight to the API server."""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import ApiServer, ValidatedSpec
from fakecluster.client.protocol import ObjList, SelectorLike, WatchHandler


class LocalClient:
    """:class:`~fakecluster.client.internal.InternalClient` (hence :class:`~fakecluster.client.protocol.
    Client`) backed by an in-process :class:`ApiServer`. What it returns is the store's own objects: read-only
    snapshots (the server's snapshot guard, when on, proves no caller changes one)."""

    def __init__(self, server: ApiServer, user: str = "admin") -> None:
        self.server = server
        self.user = user

    def get(self, kind: str, namespace: str, name: str) -> Obj:
        return self.server.get(kind, namespace, name)

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
    ) -> ObjList:
        return self.server.list(kind, namespace, labels, owner_uid)

    def create(self, obj: Obj) -> Obj:
        return self.server.create(obj)

    def update(self, obj: Obj) -> Obj:
        return self.server.update(obj)

    def update_status(self, obj: Obj) -> Obj:
        return self.server.update(obj, subresource="status")

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        return self.server.patch(kind, namespace, name, patch, subresource=subresource)

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

    def watch(self, kind: str | None, handler: WatchHandler) -> None:
        self.server.watch(kind, handler)

    # ------------------------------------------------------------------ InternalClient
    def update_status_donated(self, obj: Obj) -> Obj:
        return self.server.update(obj, subresource="status", donate=True)

    def update_donated(self, obj: Obj, *, kept_ends: tuple[int, int] | None = None) -> Obj:
        return self.server.update(obj, donate=True, kept_ends=kept_ends)

    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        return self.server.validated_spec(kind, spec, metadata)

    def create_donated(self, obj: Obj, *, template: ValidatedSpec | None = None) -> Obj:
        return self.server.create(obj, donate=True, template=template)
