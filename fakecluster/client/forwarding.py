"""A client that forwards every call: the base of the fault and informer wrappers."""

from __future__ import annotations

from collections.abc import Callable

from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import WatchEvent
from fakecluster.client.protocol import Client, SelectorLike


class ForwardingClient:
    """A :class:`Client` that passes every call to ``inner``.

    Fault and cache wrappers (``faults.py``, ``informer.py``) subclass it and override only the calls
    they change, so a new client verb is forwarded everywhere by adding it here once.
    """

    def __init__(self, inner: Client) -> None:
        self.inner = inner

    def get(self, kind: str, namespace: str, name: str, *, readonly: bool = False) -> Obj:
        return self.inner.get(kind, namespace, name, readonly=readonly)

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
        readonly: bool = False,
    ) -> list[Obj]:
        return self.inner.list(kind, namespace, labels=labels, owner_uid=owner_uid, readonly=readonly)

    def create(
        self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False, donate: bool = False
    ) -> Obj:
        return self.inner.create(obj, readonly=readonly, schema_valid=schema_valid, donate=donate)

    def update(
        self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False, donate: bool = False
    ) -> Obj:
        return self.inner.update(obj, readonly=readonly, schema_valid=schema_valid, donate=donate)

    def update_status(self, obj: Obj, *, readonly: bool = False, donate: bool = False) -> Obj:
        return self.inner.update_status(obj, readonly=readonly, donate=donate)

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
        return self.inner.patch(kind, namespace, name, patch, subresource=subresource, readonly=readonly)

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

    def watch(self, kind: str | None, handler: Callable[[WatchEvent], None]) -> None:
        self.inner.watch(kind, handler)

    def stop(self) -> None:
        """Forward a process stop to the wrapped client (an informer, if any)."""
        stop = getattr(self.inner, "stop", None)
        if callable(stop):
            stop()
