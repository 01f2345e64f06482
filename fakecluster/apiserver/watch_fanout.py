"""Watch fan-out: every change of the store goes to the watchers of its kind, then to the all-kinds
watchers, in resourceVersion order for every watcher, even when a handler writes (its events are queued
behind the one being delivered), as the watch cache delivers them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.snapshots import SnapshotGuard

Handler = Callable[[WatchEvent], None]


class WatchFanOut:
    """Subscriptions per kind and the queue of events not yet delivered."""

    def __init__(self, snapshots: SnapshotGuard | None) -> None:
        self._snapshots = snapshots
        self._watchers: dict[str, list[Handler]] = {}
        self._all_watchers: list[Handler] = []
        self._targets: dict[str, tuple[Handler, ...]] = {}
        """Per kind, the handlers an event is delivered to (the kind's, then the all-kinds ones), built
        once instead of per event; :meth:`watch` drops it."""
        self._pending: deque[tuple[tuple[Handler, ...], WatchEvent]] = deque()
        self._dispatching = False

    def watch(self, kind: str | None, handler: Handler) -> None:
        """Subscribe to every change of ``kind`` (None: all kinds), starting now."""
        if kind is None:
            self._all_watchers.append(handler)
        else:
            self._watchers.setdefault(kind, []).append(handler)
        self._targets.clear()

    def notify(self, etype: str, kind: str, obj: Obj, old: Obj | None,
               shared_items: tuple[int, int] | None = None) -> None:
        targets = self._targets.get(kind)
        if targets is None:
            targets = self._targets[kind] = (*self._watchers.get(kind, ()), *self._all_watchers)
        if not targets:
            return
        event = WatchEvent(etype, kind, obj, old, shared_items)
        if self._snapshots is not None:
            self._snapshots.handed(obj)
            self._snapshots.handed(old)
        if self._dispatching:
            # Delivered after the current event, keeping resourceVersion order for every watcher.
            self._pending.append((targets, event))
            return
        self._dispatching = True
        try:
            if self._pending:  # left behind by a handler that raised: those go first
                self._pending.append((targets, event))
            else:
                for handler in targets:
                    handler(event)
            while self._pending:
                targets, event = self._pending.popleft()
                for handler in targets:
                    handler(event)
        finally:
            self._dispatching = False
