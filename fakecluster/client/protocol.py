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

from fakecluster.api.objects import Obj
from fakecluster.apiserver.selectors import Selector
from fakecluster.apiserver.server import WatchEvent

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

    def update(
        self, obj: Obj, *, readonly: bool = False, schema_valid: bool = False, donate: bool = False
    ) -> Obj: ...

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
