"""A client that forwards every call: the base of the fault and informer wrappers."""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.client.internal import InternalClient, ValidatedSpec
from fakecluster.client.protocol import ObjList, SelectorLike, WatchHandler


class ForwardingClient:
    """An :class:`~fakecluster.client.internal.InternalClient` that passes every call to ``inner``.

    Fault and cache wrappers (``conflicts.py``, ``informer.py``) subclass it and override only the calls
    they change, so a new client verb is forwarded everywhere by adding it here once.
    """

    def __init__(self, inner: InternalClient) -> None:
        self.inner = inner

    def get(self, kind: str, namespace: str, name: str) -> Obj:
        return self.inner.get(kind, namespace, name)

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
    ) -> ObjList:
        return self.inner.list(kind, namespace, labels=labels, owner_uid=owner_uid)

    def create(self, obj: Obj) -> Obj:
        return self.inner.create(obj)

    def update(self, obj: Obj) -> Obj:
        return self.inner.update(obj)

    def update_status(self, obj: Obj) -> Obj:
        return self.inner.update_status(obj)

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        return self.inner.patch(kind, namespace, name, patch, subresource=subresource)

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
        self.inner.delete(
            kind,
            namespace,
            name,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )

    def bind(self, namespace: str, name: str, node_name: str) -> None:
        self.inner.bind(namespace, name, node_name)

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None:
        self.inner.evict(namespace, name, grace_period_seconds=grace_period_seconds)

    def watch(self, kind: str | None, handler: WatchHandler) -> None:
        self.inner.watch(kind, handler)

    def update_status_donated(self, obj: Obj) -> Obj:
        return self.inner.update_status_donated(obj)

    def update_donated(self, obj: Obj, *, kept_ends: tuple[int, int] | None = None) -> Obj:
        return self.inner.update_donated(obj, kept_ends=kept_ends)

    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        return self.inner.validated_spec(kind, spec, metadata)

    def create_donated(self, obj: Obj, *, template: ValidatedSpec | None = None) -> Obj:
        return self.inner.create_donated(obj, template=template)

    def stop(self) -> None:
        """Forward a process stop to the wrapped client (an informer, if any)."""
        stop = getattr(self.inner, "stop", None)
        if callable(stop):
            stop()
