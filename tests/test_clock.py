"""Virtual clock: ordering, cancellation and the ``run(until)`` contract (fakecluster/clock.py)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import UTC, datetime

from fakecluster.clock import EPOCH, Clock, TieShufflingClock, Timer, parse_rfc3339, rfc3339


def _recording_clock() -> tuple[Clock, list[tuple[float, str]], Callable[[str], None]]:
    """A new clock, a log, and a callback that logs (the clock's time, its label)."""
    clock = Clock()
    log: list[tuple[float, str]] = []

    def record(label: str) -> None:
        log.append((clock.now, label))

    return clock, log, record


def test_equal_times_run_in_scheduling_order() -> None:
    clock, log, record = _recording_clock()
    clock.call_at(2.0, record, "a")
    clock.call_at(1.0, record, "first")
    clock.call_at(2.0, record, "b")
    clock.call_at(2.0, record, "c")
    clock.run(10)
    assert log == [(1.0, "first"), (2.0, "a"), (2.0, "b"), (2.0, "c")]


def test_event_scheduled_during_callback_at_same_instant_runs_after_queued_peers() -> None:
    clock, log, record = _recording_clock()

    def spawn() -> None:
        record("spawn")
        clock.call_soon(record, "child")
        clock.call_at(clock.now, record, "child2")

    clock.call_at(3.0, spawn)
    clock.call_at(3.0, record, "peer")
    clock.call_at(4.0, record, "later")
    assert clock.run(3.0) is True
    assert log == [(3.0, "spawn"), (3.0, "peer"), (3.0, "child"), (3.0, "child2")]
    assert clock.now == 3.0


def test_call_at_in_the_past_runs_now_not_before() -> None:
    clock, log, record = _recording_clock()

    def late() -> None:
        clock.call_at(1.0, record, "past")
        clock.call_later(-5, record, "negative-delay")

    clock.call_at(5.0, late)
    clock.run(100)
    assert log == [(5.0, "past"), (5.0, "negative-delay")]
    assert clock.now == 5.0


def test_cancel_skips_callback_and_pending_counts_only_live_timers() -> None:
    clock, log, record = _recording_clock()
    t1 = clock.call_at(1.0, record, "cancelled")
    clock.call_at(2.0, record, "kept")
    assert clock.pending() == 2
    t1.cancel()
    assert clock.pending() == 1
    assert clock.next_time() == 2.0
    assert clock.run(10) is False
    assert log == [(2.0, "kept")]
    assert clock.events_run == 1


def test_cancel_from_inside_a_callback_at_the_same_instant() -> None:
    clock, log, record = _recording_clock()
    victim = clock.call_at(1.0, record, "victim")
    clock.call_at(0.5, victim.cancel)
    clock.run(10)
    assert log == []
    assert clock.now == 0.5


def test_run_until_is_inclusive_and_reports_remaining_work() -> None:
    clock, log, record = _recording_clock()
    clock.call_at(5.0, record, "at-limit")
    clock.call_at(5.000001, record, "just-after")
    assert clock.run(5.0) is True
    assert log == [(5.0, "at-limit")]
    assert clock.run(6.0) is False
    assert log[-1] == (5.000001, "just-after")


def test_time_is_left_at_last_event_not_advanced_to_until() -> None:
    clock = Clock()
    clock.call_at(2.5, lambda: None)
    assert clock.run(100.0) is False
    assert clock.now == 2.5
    assert clock.run(200.0) is False
    assert clock.now == 2.5
    clock.call_at(300.0, lambda: None)
    assert clock.run(250.0) is True
    assert clock.now == 2.5


def test_advance_to_never_moves_backwards_and_runs_nothing() -> None:
    clock = Clock()
    ran: list[float] = []
    clock.call_at(10.0, lambda: ran.append(clock.now))
    clock.advance_to(7.0)
    assert clock.now == 7.0
    clock.advance_to(3.0)
    assert clock.now == 7.0
    assert ran == []
    clock.run(20)
    assert ran == [10.0]


def test_on_advance_reports_forward_moves_only() -> None:
    clock = Clock()
    seen: list[float] = []
    clock.on_advance = seen.append
    clock.call_at(0.0, lambda: None)
    clock.call_at(1.0, lambda: None)
    clock.call_at(1.0, lambda: None)
    clock.call_at(4.0, lambda: None)
    clock.run(10)
    clock.advance_to(6.0)
    clock.advance_to(5.0)
    assert seen == [1.0, 4.0, 6.0]


def test_stop_returns_after_current_event() -> None:
    clock, log, record = _recording_clock()

    def stopper() -> None:
        record("stopper")
        clock.stop()

    clock.call_at(1.0, stopper)
    clock.call_at(1.0, record, "same-instant")
    clock.call_at(2.0, record, "later")
    assert clock.run(10) is True
    assert log == [(1.0, "stopper")]
    assert clock.run(10) is False  # a new run clears the stop flag
    assert [label for _, label in log] == ["stopper", "same-instant", "later"]


def test_callback_arguments_are_passed() -> None:
    clock = Clock()
    got: list[tuple[int, str]] = []
    clock.call_later(1.0, lambda a, b: got.append((a, b)), 7, "x")
    clock.run(1.0)
    assert got == [(7, "x")]


def test_timestamps_are_second_precision_rfc3339() -> None:
    clock = Clock()
    assert clock.timestamp() == "2025-01-01T00:00:00Z"
    clock.advance_to(61.999)
    assert clock.timestamp() == "2025-01-01T00:01:01Z"
    assert clock.micro_timestamp() == "2025-01-01T00:01:01.999000Z"
    assert clock.datetime() == datetime(2025, 1, 1, 0, 1, 1, 999000, tzinfo=UTC)
    assert datetime(2025, 1, 1, tzinfo=UTC) == EPOCH


def test_rfc3339_round_trip() -> None:
    assert rfc3339(3600.7) == "2025-01-01T01:00:00Z"
    assert parse_rfc3339("2025-01-01T01:00:00Z") == 3600.0
    assert parse_rfc3339("2025-01-01T00:00:01.250000Z") == 1.25
    assert parse_rfc3339(rfc3339(86400 * 3 + 5)) == 86400 * 3 + 5


def test_identical_schedules_produce_identical_traces() -> None:
    def trace() -> list[tuple[float, str]]:
        clock, log, record = _recording_clock()

        def fan_out(n: int) -> None:
            record(f"fan{n}")
            if n < 5:
                clock.call_later(0.0 if n % 2 else 0.25, fan_out, n + 1)
                clock.call_soon(record, f"soon{n}")

        clock.call_at(1.0, fan_out, 0)
        clock.call_at(1.0, record, "peer")
        clock.run(10)
        return log

    first = trace()
    assert first == trace()
    assert first[:3] == [(1.0, "fan0"), (1.0, "peer"), (1.0, "soon0")]


def _general_call_later(clock: Clock, delay: float, callback: Callable[..., object], *args: object) -> Timer:
    """The general form :meth:`Clock.call_later` writes out."""
    return clock.call_at(clock.now + max(delay, 0.0), callback, *args)


def test_call_later_and_call_soon_schedule_as_call_at() -> None:
    """The written-out ``call_later`` / ``call_soon`` give the same times, heap keys and run order as
    ``call_at(now + max(delay, 0.0))`` / ``call_at(now)``, for every kind of delay."""
    delays = [-5.0, -1e-300, -0.0, 0.0, 1e-300, 0.001, 0.5, 3.0, 1e9, math.inf, math.nan]
    for now in (0.0, 0.1, 7.25, 1e6):
        fast, general = Clock(), Clock()
        fast.advance_to(now)
        general.advance_to(now)
        for i, delay in enumerate(delays):
            got = fast.call_later(delay, print, i, "later")
            want = _general_call_later(general, delay, print, i, "later")
            assert repr(got.when) == repr(want.when) and got.args == want.args and got.callback is print
            soon, soon_general = fast.call_soon(print, i), general.call_at(general.now, print, i)
            assert (soon.when, soon.args) == (soon_general.when, soon_general.args)
        assert [(repr(w), s, t.args) for w, s, t in fast._heap] == \
               [(repr(w), s, t.args) for w, s, t in general._heap]


def test_tie_shuffling_clock_call_later_goes_through_its_call_at() -> None:
    """:class:`TieShufflingClock` keys every timer by generation and draw: its ``call_later`` /
    ``call_soon`` must not take the plain clock's written-out path."""
    clock = TieShufflingClock(random.Random(1))
    clock.call_later(1.0, print)
    clock.call_soon(print)
    assert all(key > clock._seq for _, key, _ in clock._heap)  # a draw above the sequence bits


def test_every_way_of_scheduling_fills_all_four_timer_slots() -> None:
    """:class:`Timer` has no ``__init__``: each of the clocks' scheduling methods sets its slots."""
    for clock in (Clock(), TieShufflingClock(random.Random(3))):
        clock.advance_to(2.0)
        timers = [clock.call_at(5.0, print, 1), clock.call_at(1.0, print, 2),
                  clock.call_later(0.5, print, 3), clock.call_soon(print, 4, 5)]
        assert [(t.when, t.callback, t.args, t.cancelled) for t in timers] == [
            (5.0, print, (1,), False), (2.0, print, (2,), False), (2.5, print, (3,), False),
            (2.0, print, (4, 5), False)]
