"""The client protocol controllers use: the Kubernetes verbs, and nothing else.

Like httpx's mock transport: a controller is written against :class:`Client` (get / list / create /
update / update_status / patch / delete / watch, plus the ``pods/binding`` and ``pods/eviction``
subresources as verbs) and never reaches into the store. It is what a controller built on
controller-runtime has: reads come from a shared cache, so **everything a call returns is a shared
read-only snapshot** (the object the store holds, or the informer cache's), the equivalent of
``client.Reader`` with ``UnsafeDisableDeepCopy``; a caller that wants to change an object copies it
first (:func:`~fakecluster.api.objects.clone`). The test suite runs with the snapshot guard on
(:mod:`fakecluster.apiserver.snapshots`), which fails any run in which a caller changes one.

Writes are checked by the API server in full (schema, strategy, admission) whoever calls them. The
cluster's own kubelet and Job controller have a few extra, performance-only verbs
(:mod:`fakecluster.client.internal`); the JobSet controller never sees them.

This module imports only the API types, so the JobSet controller can depend on it without depending
on the API server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fakecluster.api.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
)
from fakecluster.api.objects import Obj
from fakecluster.api.selectors import Selector
from fakecluster.api.watch import WatchEvent

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "SelectorLike",
    "WatchEvent",
    "WatchHandler",
]

SelectorLike = Selector | dict[str, Any] | str | None
"""A label selector: parsed, a ``metav1.LabelSelector`` object, or its string form (``labels.Parse``)."""

WatchHandler = Callable[[WatchEvent], None]

ObjList = list[Obj]
"""``list[Obj]`` under a name that the ``list`` verb below cannot shadow in annotations."""


class Client(Protocol):
    """What a controller may do with the cluster. Every returned object is a read-only snapshot."""

    def get(self, kind: str, namespace: str, name: str) -> Obj: ...

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
    ) -> ObjList:
        """Objects in (namespace, name) order. ``owner_uid``: only dependents of that owner, the field
        index controller-runtime users register on ``metadata.ownerReferences``."""
        ...

    def create(self, obj: Obj) -> Obj: ...

    def update(self, obj: Obj) -> Obj: ...

    def update_status(self, obj: Obj) -> Obj: ...

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        """JSON merge patch (RFC 7386)."""
        ...

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

    def bind(self, namespace: str, name: str, node_name: str) -> None:
        """``pods/binding``."""
        ...

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None:
        """``pods/eviction``."""
        ...

    def watch(self, kind: str | None, handler: WatchHandler) -> None:
        """Subscribe to every change of ``kind`` (None: all kinds) from now on."""
        ...
