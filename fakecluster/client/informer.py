"""An informer cache that trails the API server: what a controller built on client-go really reads.

A real controller never reads the API server directly. It reads a local cache that a watch keeps up
to date, and its event handlers run when that cache, not the store, changes; under load the cache is
hundreds of milliseconds behind. Code that works only because "every write is visible to the next
read at once" (create twice, update with a stale resourceVersion, count pods that are already gone)
fails on a real cluster, and an emulated cluster hides it unless reads lag too.

:class:`Informer` mirrors every kind of the store (one cache per kind, with the owner-UID index the
controllers list by). Each watch event the server sends is applied to the cache, and then handed to the
controller's handlers, ``lag`` seconds of virtual time later, strictly in the order the server sent
them. Because one ordered stream feeds every kind, the cache is always exactly the store as it was
``lag`` seconds ago (or, for ``lag`` after start, as it was at start): a consistent snapshot. That is a
little kinder than client-go, whose per-kind informers can be mutually out of step; it keeps the
emulated Job controller's status bookkeeping, which relies on pods and Jobs agreeing, meaningful.

:class:`InformerClient` is the :class:`~fakecluster.client.Client` a controller gets: ``get``/``list``
come from the cache (shared read-only snapshots, like everything a client returns),
``watch`` registers a handler on the informer, and every write goes straight to the server, so a write
based on a stale read gets the server's real 409 Conflict. Each process owns its informer: a restarted
controller starts a new one (an initial List of the store as it is now) and :meth:`Informer.stop`
silences the old one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from fakecluster.api import errors
from fakecluster.api.objects import Obj
from fakecluster.api.selectors import as_selector
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.forwarding import ForwardingClient
from fakecluster.client.internal import InternalClient
from fakecluster.client.protocol import ObjList, SelectorLike

if TYPE_CHECKING:
    from fakecluster.clock import Clock, Timer

Key = tuple[str, str]
Handler = Callable[[WatchEvent], None]


class Informer:
    """Per-kind caches of the whole store, fed by one server watch and applied ``lag`` seconds late."""

    def __init__(self, server: ApiServer, clock: Clock, lag: float) -> None:
        if lag < 0:
            raise ValueError(f"informer lag must be >= 0, got {lag}")
        self.server = server
        self.clock = clock
        self.lag = lag
        self.stopped = False
        self.applied = 0
        """Watch events applied to the cache so far (tests use it to see the pipeline move)."""
        self._stores: dict[str, dict[Key, Obj]] = {}
        self._owners: dict[str, dict[str, dict[Key, None]]] = {}
        self._handlers: dict[str | None, list[Handler]] = {}
        self._pending: deque[tuple[float, WatchEvent]] = deque()
        self._timer: Timer | None = None
        for kind in server.kinds():  # the initial List: the store as it is when the process starts
            for obj in server.list(kind):
                self._put(kind, obj, None)
        server.watch(None, self._on_server_event)

    # ------------------------------------------------------------------ feed
    def _on_server_event(self, event: WatchEvent) -> None:
        if self.stopped:
            return
        self._pending.append((self.clock.now + self.lag, event))
        if self._timer is None:
            self._timer = self.clock.call_at(self.clock.now + self.lag, self._deliver)

    def _deliver(self) -> None:
        """Apply, then hand to the handlers, every event that is due, one at a time and in order (a
        handler reading the cache sees exactly the state up to its own event, as with client-go)."""
        self._timer = None
        pending, now = self._pending, self.clock.now
        while pending and pending[0][0] <= now and not self.stopped:
            _, event = pending.popleft()
            self._apply(event)
            for handler in (*self._handlers.get(event.kind, ()), *self._handlers.get(None, ())):
                handler(event)
        if pending and not self.stopped:
            self._timer = self.clock.call_at(pending[0][0], self._deliver)

    def _apply(self, event: WatchEvent) -> None:
        self.applied += 1
        meta = event.object["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        store = self._stores.setdefault(event.kind, {})
        old = store.get(key)
        if event.type == "DELETED":
            if old is not None:
                del store[key]
                self._index_owners(event.kind, key, old, None)
            return
        self._put(event.kind, event.object, old)

    def _put(self, kind: str, obj: Obj, old: Obj | None) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        self._stores.setdefault(kind, {})[key] = obj
        self._index_owners(kind, key, old, obj)

    def _index_owners(self, kind: str, key: Key, old: Obj | None, new: Obj | None) -> None:
        """The owner-UID index (every ownerReference, as the server's ``owner_uid`` list uses)."""
        old_refs = old["metadata"].get("ownerReferences") if old is not None else None
        new_refs = new["metadata"].get("ownerReferences") if new is not None else None
        if old is not None and new is not None and old_refs == new_refs:
            return
        owners = self._owners.setdefault(kind, {})
        for ref in old_refs or ():
            owners.get(ref.get("uid", ""), {}).pop(key, None)
        for ref in new_refs or ():
            owners.setdefault(ref.get("uid", ""), {})[key] = None

    def stop(self) -> None:
        """The process is gone: stop applying and delivering (the server keeps the dead subscription,
        which now returns at once)."""
        self.stopped = True
        self._pending.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def add_handler(self, kind: str | None, handler: Handler) -> None:
        """Subscribe to the cache's changes of ``kind`` (None: every kind), from now on."""
        self._handlers.setdefault(kind, []).append(handler)

    # ------------------------------------------------------------------ reads
    def get(self, kind: str, namespace: str, name: str) -> Obj:
        """The cached object (read-only), or the server's NotFound for the cached state."""
        rtype = self.server.resource(kind)
        obj = self._stores.get(kind, {}).get((namespace if rtype.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        return obj

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
    ) -> list[Obj]:
        """Cached objects in (namespace, name) order, filtered like :meth:`ApiServer.list`."""
        rtype = self.server.resource(kind)
        store = self._stores.get(kind, {})
        keys = list(self._owners.get(kind, {}).get(owner_uid, {})) if owner_uid is not None else list(store)
        if namespace and rtype.namespaced:
            keys = [k for k in keys if k[0] == namespace]
        selector = as_selector(labels) if labels is not None else None
        out = []
        for key in sorted(keys):
            obj = store[key]
            if selector is None or selector.matches(obj["metadata"].get("labels") or {}):
                out.append(obj)
        return out


class InformerClient(ForwardingClient):
    """A controller's client: reads and watches through an :class:`Informer`, writes to the server."""

    def __init__(self, inner: InternalClient, informer: Informer) -> None:
        super().__init__(inner)
        self.informer = informer

    def get(self, kind: str, namespace: str, name: str) -> Obj:
        obj = self.informer.get(kind, namespace, name)
        guard = self.informer.server.snapshots
        if guard is not None:
            guard.handed(obj)
        return obj

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        labels: SelectorLike = None,
        owner_uid: str | None = None,
    ) -> ObjList:
        items = self.informer.list(kind, namespace, labels, owner_uid)
        guard = self.informer.server.snapshots
        if guard is not None:
            for obj in items:
                guard.handed(obj)
        return items

    def watch(self, kind: str | None, handler: Handler) -> None:
        """Handlers run when the *cache* changes, ``lag`` after the server did."""
        self.informer.add_handler(kind, handler)

    def stop(self) -> None:
        """Stop this process's informer (a crashed controller takes its cache with it)."""
        self.informer.stop()
