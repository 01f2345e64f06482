"""The shared controller work queue (fakecluster/runtime.py)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from itertools import pairwise

import pytest

from fakecluster.api import errors
from fakecluster.clock import Clock
from fakecluster.runtime import BACKOFF_BASE, BACKOFF_MAX, Controller


class Log:
    """A reconcile that records (time, key) and returns scripted results."""

    def __init__(self, clock: Clock, results: Callable[[Hashable, int], float | None] | None = None) -> None:
        self.clock = clock
        self.calls: list[tuple[float, Hashable]] = []
        self.results = results

    def __call__(self, key: Hashable) -> float | None:
        self.calls.append((self.clock.now, key))
        if self.results is None:
            return None
        return self.results(key, len(self.calls))


def queue_with_a(
    results: Callable[[Hashable, int], float | None] | None = None, *, latency: float = 0.0
) -> tuple[Clock, Controller, Log]:
    """A controller whose reconcile is a :class:`Log` of ``results``, key ``a`` enqueued at 0 s."""
    clock = Clock()
    log = Log(clock, results)
    controller = Controller(clock, "test", log, latency=latency)
    controller.enqueue("a")
    return clock, controller, log


def approx_calls(calls: list[tuple[float, Hashable]]) -> list[tuple[float, Hashable]]:
    return [(round(t, 9), k) for t, k in calls]


def test_enqueue_deduplicates_pending_keys() -> None:
    clock = Clock()
    log = Log(clock)
    controller = Controller(clock, "test", log)
    for _ in range(3):
        controller.enqueue("a")
    controller.enqueue("b")
    controller.enqueue("a")
    clock.run(10)
    assert log.calls == [(0.0, "a"), (0.0, "b")]
    assert controller.stats.reconciles == 2


def test_enqueue_after_keeps_the_earliest_due_time() -> None:
    clock = Clock()
    log = Log(clock)
    controller = Controller(clock, "test", log)
    controller.enqueue("late-then-early", after=5.0)
    controller.enqueue("late-then-early", after=2.0)
    controller.enqueue("early-then-late", after=1.0)
    controller.enqueue("early-then-late", after=4.0)
    clock.run(100)
    assert log.calls == [(1.0, "early-then-late"), (2.0, "late-then-early")]
    assert clock.pending() == 0


def test_latency_is_added_to_every_enqueue() -> None:
    clock = Clock()
    log = Log(clock)
    controller = Controller(clock, "test", log, latency=0.5)
    clock.advance_to(3.0)
    controller.enqueue("a")
    controller.enqueue("b", after=1.0)
    clock.run(100)
    assert log.calls == [(3.5, "a"), (4.5, "b")]


def test_key_enqueued_during_its_own_reconcile_runs_again() -> None:
    clock, controller, log = queue_with_a(lambda key, n: controller.enqueue(key) if n == 1 else None)
    clock.run(10)
    assert log.calls == [(0.0, "a"), (0.0, "a")]


def test_requeue_after() -> None:
    clock, _, log = queue_with_a(lambda key, n: 2.5 if n < 3 else None, latency=0.5)
    clock.run(100)
    assert log.calls == [(0.5, "a"), (3.0, "a"), (5.5, "a")]


def test_requeue_after_does_not_postpone_an_earlier_enqueue() -> None:
    def results(key: Hashable, n: int) -> float:
        if n == 1:
            controller.enqueue(key, after=1.0)
        return 10.0 if n < 3 else -1.0

    clock, controller, log = queue_with_a(results)
    clock.run(100)
    assert log.calls == [(0.0, "a"), (1.0, "a"), (11.0, "a")]


def test_api_error_backs_off_exponentially_from_5ms() -> None:
    def results(key: Hashable, n: int) -> None:
        if n <= 4:
            raise errors.Conflict("jobs", "batch", "x")

    clock, controller, log = queue_with_a(results)
    clock.run(100)
    times = [t for t, _ in log.calls]
    assert times == pytest.approx([0.0, 0.005, 0.015, 0.035, 0.075])
    assert BACKOFF_BASE == 0.005
    assert controller.stats.errors == 4
    assert controller.stats.reconciles == 5
    assert controller.stats.last_errors[0].startswith("0.000s a: Operation cannot be fulfilled on jobs.batch")


def test_back_off_is_per_key_and_resets_after_success() -> None:
    clock = Clock()
    failures = {"a": 2, "b": 0}

    def reconcile(key: Hashable) -> float | None:
        calls.append((clock.now, key))
        assert isinstance(key, str)
        if failures[key] > 0:
            failures[key] -= 1
            raise errors.NotFound("pods", "", key)
        return None

    calls: list[tuple[float, Hashable]] = []
    controller = Controller(clock, "test", reconcile)
    controller.enqueue("a")
    controller.enqueue("b")
    clock.run(1)
    assert approx_calls(calls) == [(0.0, "a"), (0.0, "b"), (0.005, "a"), (0.015, "a")]
    failures["a"] = 1
    clock.advance_to(5.0)
    controller.enqueue("a")
    clock.run(10)
    assert approx_calls(calls[4:]) == [(5.0, "a"), (5.005, "a")]  # back to the base delay


def test_back_off_with_latency_is_not_added_twice() -> None:
    def results(key: Hashable, n: int) -> None:
        if n == 1:
            raise errors.Conflict("jobs", "batch", "x")

    clock, _, log = queue_with_a(results, latency=0.002)
    clock.run(10)
    assert [t for t, _ in log.calls] == pytest.approx([0.002, 0.007])


def test_back_off_doubles_until_capped_at_1000s() -> None:
    def always_conflict(key: Hashable, n: int) -> None:
        raise errors.Conflict("jobs", "batch", "x")

    clock, _, log = queue_with_a(always_conflict)
    clock.run(6000)
    times = [t for t, _ in log.calls]
    gaps = [b - a for a, b in pairwise(times)]
    capped = next(i for i, gap in enumerate(gaps) if gap > BACKOFF_MAX * 0.999)
    assert gaps[:capped] == pytest.approx([BACKOFF_BASE * 2**i for i in range(capped)])
    assert BACKOFF_BASE * 2**capped > BACKOFF_MAX
    assert gaps[capped:] == pytest.approx([BACKOFF_MAX] * len(gaps[capped:]))
    assert len(gaps[capped:]) >= 3


def test_other_exceptions_propagate() -> None:
    clock = Clock()

    def broken(key: Hashable) -> None:
        raise RuntimeError("bug")

    controller = Controller(clock, "test", broken)
    controller.enqueue("a")
    with pytest.raises(RuntimeError, match="bug"):
        clock.run(10)


def test_stop_drops_queued_work_and_ignores_new_keys() -> None:
    clock = Clock()
    log = Log(clock)
    controller = Controller(clock, "test", log)
    controller.enqueue("a", after=1.0)
    controller.stop()
    controller.enqueue("b")
    clock.run(10)
    assert log.calls == []
    assert clock.pending() == 0


def test_reconcile_order_is_enqueue_order_at_equal_times() -> None:
    clock = Clock()
    log = Log(clock)
    controller = Controller(clock, "test", log)
    for key in ("c", "a", "b"):
        controller.enqueue(key)
    clock.run(1)
    assert [k for _, k in log.calls] == ["c", "a", "b"]
