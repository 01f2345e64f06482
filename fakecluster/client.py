"""The client protocol controllers use, and the in-process implementation behind it.

Like httpx's mock transport: a controller is written against :class:`Client` (get / list / create /
update / update_status / patch / delete / watch) and never reaches into the store. Reads return private
copies unless the caller asks for ``readonly`` snapshots, the equivalent of controller-runtime's cached
client with ``UnsafeDisableDeepCopy``: shared objects that must not be mutated, which is what lets the
hot per-pod paths avoid copying. Writes take the same flag for what they return: a controller that
does not use the written object back (the kubelet, the Job controller) asks for the shared snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fakecluster.apiserver.selectors import Selector
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.objects import Obj, clone

SelectorLike = Selector | dict[str, Any] | str | None


class Client(Protocol):
    """What a controller may do with the cluster."""

    def get(self, kind: str, namespace: str, name: str, *, readonly: bool = False) -> Obj: ...

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
        readonly: bool = False,
    ) -> list[Obj]: ...

    def create(
        self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False, donate: bool = False
    ) -> Obj: ...

    def update(self, obj: Obj, *, readonly: bool = False) -> Obj: ...

    def update_status(self, obj: Obj, *, readonly: bool = False, donate: bool = False) -> Obj: ...

    def patch(
        self,
        kind: str,
        namespace: str,
        name: str,
        patch: Obj,
        *,
        subresource: str | None = None,
        readonly: bool = False,
    ) -> Obj: ...

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Obj | None = None,
    ) -> None: ...

    def bind(self, namespace: str, name: str, node_name: str) -> None: ...

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None: ...

    def watch(self, kind: str | None, handler: Callable[[WatchEvent], None]) -> None: ...


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

    def update(self, obj: Obj, *, readonly: bool = False) -> Obj:
        stored = self.server.update(obj)
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

    def update(self, obj: Obj, *, readonly: bool = False) -> Obj:
        return self.inner.update(obj, readonly=readonly)

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
