"""Injected API faults: a seeded fraction of controller writes fail with 409 Conflict.

On a real cluster a write loses the optimistic-concurrency race whenever someone else wrote the object
since it was read (``OptimisticLockErrorMsg`` in
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``), and a controller must survive
that by letting its work queue retry the key with back-off and re-reading. In the fake cluster a
controller is usually the only writer of its objects, so those paths never run.
:class:`ConflictInjectingClient` makes them run: on each eligible write it draws from its own seeded
stream and, on a hit, raises the API server's Conflict *instead of* performing the write, exactly as if
the object had changed under it.

What is eligible, and why:

- only the users in :data:`CONTROLLER_USERS` — the controllers, whose :class:`~fakecluster.runtime.
  Controller` work queues retry a failed reconcile. The scenario's own client, the kubelet and the
  scheduler issue each write once and do not retry (a lost kubelet status write would be a lost pod
  transition), so faulting them would test the emulator, not the controller;
- only ``update``, ``update_status`` and ``patch``: the writes that carry (or are checked against) a
  resourceVersion. ``create`` and ``delete`` never conflict that way on a real server;
- never :data:`EXEMPT_KINDS` (Events): client-go's event broadcaster writes through its own sink with
  its own retries and never fails the reconcile; the recorder here swallows errors, so a faulted event
  patch would silently lose a series count rather than exercise any controller path.

Every injected conflict is counted in :class:`FaultStats` (per user, across controller restarts), so a
test can prove the faults really happened. The draw sequence is a pure function of the seed and the
order of writes, so a run with faults is exactly as reproducible as one without.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from fakecluster.api import errors
from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.forwarding import ForwardingClient
from fakecluster.client.internal import InternalClient

CONTROLLER_USERS: tuple[str, ...] = ("jobset-controller", "job-controller")
"""Client users (``Cluster.client(user)``) whose writes get injected Conflicts: the JobSet controller
and the Job controller. Informer lag (``ClusterConfig.informer_lag``) applies to the same users."""

EXEMPT_KINDS: frozenset[str] = frozenset({"Event"})
"""Kinds whose writes are never faulted (see the module docstring)."""


@dataclass(slots=True)
class FaultStats:
    """Injected faults so far, per client user."""

    conflicts: dict[str, int] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    """``"<user> <verb> <Kind> <name>"`` of the first faults, for a failing test to show."""

    @property
    def total_conflicts(self) -> int:
        return sum(self.conflicts.values())

    def record(self, user: str, verb: str, kind: str, name: str) -> None:
        self.conflicts[user] = self.conflicts.get(user, 0) + 1
        if len(self.log) < 100:
            self.log.append(f"{user} {verb} {kind} {name}")


class ConflictInjectingClient(ForwardingClient):
    """Wraps a controller's client; fails ``rate`` of its eligible writes with 409 Conflict."""

    def __init__(
        self,
        inner: InternalClient,
        server: ApiServer,
        *,
        user: str,
        rate: float,
        rng: random.Random,
        stats: FaultStats,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"conflict rate must be within [0, 1], got {rate}")
        self.inner = inner
        self.user = user
        self.rate = rate
        self.conflicts = 0
        """Conflicts this wrapper injected (``stats`` also counts those of earlier processes)."""
        self._server = server
        self._rng = rng
        self._stats = stats

    def _maybe_conflict(self, verb: str, kind: object, name: object) -> None:
        """One draw per eligible write; on a hit raise the server's own Conflict for that object."""
        if not isinstance(kind, str) or kind in EXEMPT_KINDS:
            return
        try:
            rtype = self._server.resource(kind)
        except ApiError:
            return  # unknown kind: let the real write report it
        if self._rng.random() >= self.rate:
            return
        self.conflicts += 1
        self._stats.record(self.user, verb, kind, str(name))
        raise errors.Conflict(rtype.plural, rtype.group, str(name))

    # ------------------------------------------------------------------ faulted writes
    def update(self, obj: Obj) -> Obj:
        self._maybe_conflict("update", obj.get("kind"), (obj.get("metadata") or {}).get("name", ""))
        return self.inner.update(obj)

    def update_donated(self, obj: Obj, *, kept_ends: tuple[int, int] | None = None) -> Obj:
        self._maybe_conflict("update", obj.get("kind"), (obj.get("metadata") or {}).get("name", ""))
        return self.inner.update_donated(obj, kept_ends=kept_ends)

    def update_status(self, obj: Obj) -> Obj:
        self._maybe_conflict("update_status", obj.get("kind"), (obj.get("metadata") or {}).get("name", ""))
        return self.inner.update_status(obj)

    def update_status_donated(self, obj: Obj) -> Obj:
        self._maybe_conflict("update_status", obj.get("kind"), (obj.get("metadata") or {}).get("name", ""))
        return self.inner.update_status_donated(obj)

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        self._maybe_conflict("patch", kind, name)
        return self.inner.patch(kind, namespace, name, patch, subresource=subresource)
