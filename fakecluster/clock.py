"""Virtual time and the discrete-event queue every component runs on.

Modelled on trio's ``MockClock``: one object owns time, nothing reads the wall clock. Events at equal
virtual times run in the order they were scheduled (a global sequence number breaks ties), so a run is
a pure function of its inputs and seed. The loop is single-threaded; a callback may schedule more events,
including at the current instant.

:class:`TieShufflingClock` (``cluster.shuffleTies``, ``--shuffle-ties``) orders equal times by a seeded
draw instead, to expose code that depends on the order of same-instant events; the plain :class:`Clock`
keeps the hot path free of it.
"""

from __future__ import annotations

import functools
import heapq
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
"""Virtual time zero. Fixed, so timestamps in objects are identical across runs and machines."""


class Timer:
    """Handle to a scheduled callback; ``cancel()`` makes the loop skip it. ``cancelled`` is also set
    when the callback runs, so a timer that is not ``cancelled`` is one still to run (what the kubelet's
    :meth:`~fakecluster.kubelet.kubelet.Kubelet.stop_node` saves for the node's restart). A timer that
    has run holds no ``args`` any more: whoever keeps the handle (the kubelet, a pod's fired timers,
    until the pod stops) does not keep what the callback was given."""

    __slots__ = ("args", "callback", "cancelled", "when")

    # No __init__: the clock makes a timer with ``Timer()`` and sets its four slots itself. A Python
    # __init__ runs in a frame of its own, entered from C (type_call -> slot_tp_init), some 900
    # instructions more per event in CPython 3.11 (16,000 events at 2,000 pods).
    when: float
    callback: Callable[..., Any]
    args: tuple[Any, ...]
    cancelled: bool

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    """The single source of time for a run, and its event queue."""

    __slots__ = (
        "_heap", "_seq", "_stopped", "events_run", "next_checkpoint", "now", "on_advance", "on_checkpoint",
    )  # fmt: skip

    def __init__(self) -> None:
        self.now = 0.0
        """Virtual seconds since :data:`EPOCH`. Read-only for everyone but the clock's own loop. A plain
        slot, not a property: it is read several times per event by every component (the trace recorder
        once per row), and a property read is a Python call (some 600 instructions in CPython 3.11)."""
        self._seq = 0
        self._heap: list[tuple[float, int, Timer]] = []
        self._stopped = False
        self.events_run = 0
        self.on_advance: Callable[[float], None] | None = None
        """Called whenever virtual time moves forward (used to keep freezegun on virtual time)."""
        self.next_checkpoint = sys.maxsize
        self.on_checkpoint: Callable[[], None] | None = None
        """Called before the event that would make ``events_run`` pass ``next_checkpoint`` (the runner's
        budget, :mod:`fakecluster.scenario.limits`: it may raise to end the run, or move the mark on)."""

    def datetime(self) -> datetime:
        return EPOCH + timedelta(seconds=self.now)

    def timestamp(self) -> str:
        """``metav1.Time`` wire form: RFC3339 with second precision, as the API server serializes it."""
        return rfc3339(self.now)

    def micro_timestamp(self) -> str:
        """``metav1.MicroTime`` wire form (events.k8s.io eventTime)."""
        return (EPOCH + timedelta(seconds=self.now)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer:
        if when < self.now:  # noqa: PLR1730 -- max() is a builtin call: some 1,200 instructions more per event
            when = self.now
        timer = Timer()
        timer.when = when
        timer.callback = callback
        timer.args = args
        timer.cancelled = False
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, timer))
        return timer

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Timer:
        """``call_at(now + max(delay, 0), ...)``, with :meth:`call_at`'s body written out: passing
        ``*args`` on to another function is a call through ``CALL_FUNCTION_EX`` plus a tuple unpacked
        and packed again, some 2,700 instructions an event in CPython 3.11 (8,000 events at 2,000 pods).
        ``max(delay, 0.0)`` is 0.0 exactly when ``delay < 0.0`` (NaN and -0.0 are kept, as by max).
        :class:`TieShufflingClock` goes back to the general form (its :meth:`call_at` differs)."""
        if delay < 0.0:  # noqa: PLR1730 -- max() is a builtin call
            delay = 0.0
        when = self.now + delay  # never before now: delay is >= 0 (or NaN, which call_at keeps too)
        timer = Timer()
        timer.when = when
        timer.callback = callback
        timer.args = args
        timer.cancelled = False
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, timer))
        return timer

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> Timer:
        """``call_at(now, ...)``, written out as :meth:`call_later` is."""
        when = self.now
        timer = Timer()
        timer.when = when
        timer.callback = callback
        timer.args = args
        timer.cancelled = False
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, timer))
        return timer

    def pending(self) -> int:
        return sum(1 for _, _, t in self._heap if not t.cancelled)

    def next_time(self) -> float | None:
        """Time of the next live event, dropping cancelled ones from the head of the queue."""
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def upcoming(self, limit: int) -> list[Timer]:
        """The next ``limit`` live timers in the order they will run (for the stuck diagnosis; a scan
        of the whole queue, so never call it per event)."""
        live = [entry for entry in self._heap if not entry[2].cancelled]
        return [timer for _, _, timer in heapq.nsmallest(limit, live)]

    def stop(self) -> None:
        """Make :meth:`run` return after the current event."""
        self._stopped = True

    def run(self, until: float) -> bool:
        """Run every event with time <= ``until`` (including ones scheduled meanwhile).

        Returns True when events remain after ``until`` (the run is not quiescent). Time is left at the
        last event run, not advanced to ``until``: "end of run" is when the last thing happened.
        """
        heap = self._heap
        pop = heapq.heappop
        self._stopped = False
        while heap:
            when, _, timer = heap[0]
            if timer.cancelled:
                pop(heap)
                continue
            if when > until:
                return True
            if self.events_run >= self.next_checkpoint and self.on_checkpoint is not None:
                self.on_checkpoint()
            pop(heap)
            if when > self.now:
                self.now = when
                if self.on_advance is not None:
                    self.on_advance(when)
            self.events_run += 1
            timer.cancelled = True  # it has run: it cannot run again (a saved copy must not either)
            timer.callback(*timer.args)
            timer.args = ()
            if self._stopped:
                return bool(heap)
        return False

    def advance_to(self, when: float) -> None:
        """Move time forward without running anything (used for snapshots between events)."""
        if when > self.now:
            self.now = when
            if self.on_advance is not None:
                self.on_advance(when)


class TieShufflingClock(Clock):
    """A clock that runs the events due at the same instant in a seeded random order, as trio's scheduler
    does under test (``trio/_core/_run.py``, ``unrolled_run``: with ``_ALLOW_DETERMINISTIC_SCHEDULING``
    each batch of runnable tasks is ``_r.shuffle``-d with the module's seeded ``random.Random``).

    Batches as trio's: the events already due at an instant form generation 0 and run in a random order;
    an event scheduled *at* the instant by one of generation g joins generation g + 1, which runs after
    all of generation g (as a task woken during a batch runs in the next one). So a shuffle never runs a
    reaction before its cause, nor a zero-delay follow-up before what was already due; it only reorders
    events that a real cluster's independent components could deliver in any order. Same ``rng`` seed:
    same order, same trace.

    A separate class so that the plain :class:`Clock`'s ``call_at`` and ``run`` stay as cheap as they
    are: the heap key here packs (generation, random draw, sequence) into one integer after the time."""

    __slots__ = ("_generation", "_rng")

    _SEQ_BITS = 64
    _DRAW_BITS = 64

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self._rng = rng
        self._generation = 0
        """Generation of the event running (or last run) at the current instant; 0 when time moved."""

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> Timer:
        if when <= self.now:
            when = self.now
            generation = self._generation + 1
        else:
            generation = 0
        timer = Timer()
        timer.when = when
        timer.callback = callback
        timer.args = args
        timer.cancelled = False
        self._seq += 1
        key = (((generation << self._DRAW_BITS) | self._rng.getrandbits(self._DRAW_BITS)) << self._SEQ_BITS) \
            | self._seq
        heapq.heappush(self._heap, (when, key, timer))
        return timer

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> Timer:
        """Through this class's :meth:`call_at` (:meth:`Clock.call_later` writes the plain one out)."""
        return self.call_at(self.now + max(delay, 0.0), callback, *args)

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now, callback, *args)

    def run(self, until: float) -> bool:
        """:meth:`Clock.run`, noting each event's generation for the events it schedules."""
        heap = self._heap
        pop = heapq.heappop
        shift = self._DRAW_BITS + self._SEQ_BITS
        self._stopped = False
        while heap:
            when, key, timer = heap[0]
            if timer.cancelled:
                pop(heap)
                continue
            if when > until:
                return True
            if self.events_run >= self.next_checkpoint and self.on_checkpoint is not None:
                self.on_checkpoint()
            pop(heap)
            if when > self.now:
                self.now = when
                if self.on_advance is not None:
                    self.on_advance(when)
            self._generation = key >> shift
            self.events_run += 1
            timer.cancelled = True  # it has run: it cannot run again (a saved copy must not either)
            timer.callback(*timer.args)
            timer.args = ()
            if self._stopped:
                return bool(heap)
        return False

    def advance_to(self, when: float) -> None:
        if when > self.now:
            self._generation = 0
        super().advance_to(when)


def rfc3339(seconds: float) -> str:
    """Virtual seconds → ``metav1.Time`` string (second precision, truncated like Go's formatting)."""
    return _rfc3339_second(int(seconds))


@functools.lru_cache(maxsize=4096)
def _rfc3339_second(second: int) -> str:
    """Formatting is pure but costs microseconds (``strftime``, through freezegun's wrapper), and every
    write stamps the current second, so each second is formatted once."""
    return (EPOCH + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(value: str) -> float:
    """``metav1.Time``/``MicroTime`` string → virtual seconds."""
    text = value.rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    parsed = datetime.strptime(text, fmt).replace(tzinfo=UTC)
    return (parsed - EPOCH).total_seconds()
