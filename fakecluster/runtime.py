"""The controller shape every emulator shares: watch → de-duplicating work queue → level-based reconcile.

Follows controller-runtime: a key is queued at most once at a time; ``enqueue(key, after=d)`` keeps the
earliest due time (client-go's ``AddAfter``); a reconcile reads current state and converges, returns an
optional requeue-after, and on an API error is retried with per-key exponential back-off (controller-
runtime's default rate limiter: 5 ms doubling to 1000 s). ``latency`` models the time from a watch
event to the reconcile running (informer delivery plus queue pick-up).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from fakecluster.api.errors import ApiError
from fakecluster.clock import Clock, Timer

K = TypeVar("K", bound=Hashable)
"""A controller's work-queue key type."""

NamespacedName = tuple[str, str]
"""``types.NamespacedName``: the usual key, (namespace, name)."""

Reconcile = Callable[[K], float | None]
"""Reconcile one key; the optional requeue-after seconds."""

BACKOFF_BASE = 0.005
BACKOFF_MAX = 1000.0


def capped_backoff(base: float, failures: int, cap: float) -> float:
    """``base * 2**failures`` limited to ``cap``, computed without overflowing.

    client-go's ``ItemExponentialFailureRateLimiter.When`` (``util/workqueue/default_rate_limiters.go``)
    checks ``exp > 62`` / ``backoff > MaxInt64`` before multiplying for the same reason: after ~1,024
    consecutive failures (``conflictRate: 1.0`` over a long run) ``2**failures`` no longer fits a float.
    """
    if base <= 0 or failures < 0:
        return min(max(base, 0.0), cap)
    if failures >= 64 or base * (2**failures) >= cap:
        return cap
    return base * (2**failures)


@dataclass(slots=True)
class ReconcileStats:
    reconciles: int = 0
    errors: int = 0
    last_errors: list[str] = field(default_factory=list)


class Controller(Generic[K]):
    """A named work queue bound to a reconcile function, driven by the virtual clock; generic over the
    key type, which the reconcile function's parameter fixes."""

    def __init__(
        self,
        clock: Clock,
        name: str,
        reconcile: Reconcile[K],
        *,
        latency: float = 0.0,
        backoff_base: float = BACKOFF_BASE,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self.clock = clock
        self.name = name
        self._reconcile = reconcile
        self.latency = latency
        self.backoff_base = backoff_base
        """First retry delay after an error; doubles per consecutive failure up to ``backoff_max``
        (controllers built on client-go's own work queue, like the Job controller, use other values)."""
        self.backoff_max = backoff_max
        self._run_key = self._run
        """The bound method every timer of this queue calls, made once rather than per enqueue."""
        self._due: dict[K, Timer] = {}
        self._failures: dict[K, int] = {}
        self.stats = ReconcileStats()
        self.stopped = False

    def enqueue(self, key: K, after: float = 0.0) -> None:
        """Queue ``key`` to reconcile ``latency + after`` seconds from now, unless due sooner already."""
        if self.stopped:
            return
        clock = self.clock
        when = clock.now + self.latency + after
        due = self._due
        timer = due.get(key)
        if timer is not None:
            if timer.when <= when:
                return
            timer.cancel()
        due[key] = clock.call_at(when, self._run_key, key)

    def _run(self, key: K) -> None:
        self._due.pop(key, None)
        if self.stopped:
            return
        self.stats.reconciles += 1
        try:
            requeue_after = self._reconcile(key)
        except ApiError as err:
            self.stats.errors += 1
            if len(self.stats.last_errors) < 20:
                self.stats.last_errors.append(f"{self.clock.now:.3f}s {key}: {err.message}")
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
            delay = capped_backoff(self.backoff_base, failures, self.backoff_max)
            self.enqueue(key, after=delay - self.latency)
            return
        if self._failures:  # nearly always empty: no lookup then
            self._failures.pop(key, None)
        if requeue_after is not None and requeue_after >= 0:
            self.enqueue(key, after=max(requeue_after - self.latency, 0.0))

    def stop(self) -> None:
        """Drop all queued work (a crashed controller process loses its queue)."""
        self.stopped = True
        for timer in self._due.values():
            timer.cancel()
        self._due.clear()
        self._failures.clear()
