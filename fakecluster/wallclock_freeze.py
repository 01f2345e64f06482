"""Keep stray wall-clock reads on virtual time, with freezegun — during runs only.

Nothing in fakecluster reads the wall clock; third-party code called from a controller might. Starting a
freeze costs ~2 ms (freezegun patches every loaded module), so it is started once per process and then
only steered: while a scenario plays (:func:`virtual_time`), every patched clock reads the virtual
instant, moved each time the virtual clock advances; outside a run the same patched clocks read the real
time, so the host process (pytest, subprocess time-outs, a benchmark's timer) is never left frozen.
"""

from __future__ import annotations

import atexit
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from threading import get_ident
from typing import Any

from freezegun import api as freezegun_api
from freezegun import freeze_time

from fakecluster.clock import EPOCH

_EPOCH_NAIVE = EPOCH.replace(tzinfo=None)
_IGNORE = ("hypothesis", "_pytest", "pytest", "xdist", "execnet", "pluggy")
"""Test tooling keeps real time even inside a run: its deadlines and durations are about the host."""
_EVERYTHING = ("",)
"""An ignore prefix every module name starts with: outside runs, time functions answer real time."""


class _VirtualOrRealTime:
    """freezegun's time source: the virtual instant during a run, the real UTC time otherwise."""

    def __init__(self) -> None:
        self.virtual_seconds = 0.0
        """The virtual instant, turned into a datetime only when something reads the clock: the
        virtual clock moves on nearly every event, a stray wall-clock read is rare."""
        self.active = False
        self.thread = 0
        """The thread playing the scenario. Other threads of the host process (a Dask worker's event
        loop and heartbeats, an executor's bookkeeping) keep real time even during a run: their timers
        are about the host, and virtual time jumping under them stalls them."""

    @property
    def virtual(self) -> datetime:
        return _EPOCH_NAIVE + timedelta(seconds=self.virtual_seconds)

    def __call__(self) -> datetime:
        if self.active and get_ident() == self.thread:
            return self.virtual
        return freezegun_api.real_datetime.now(UTC).replace(tzinfo=None)  # wall-clock-ok


_source: _VirtualOrRealTime | None = None
_freezer: Any = None


def freeze_once() -> None:
    """Start the process-wide freeze (idempotent). Until a run starts, it reports real time."""
    global _source, _freezer  # noqa: PLW0603 - one freeze per process is the point
    if _source is not None:
        return
    _freezer = freeze_time(_EPOCH_NAIVE, ignore=list(_IGNORE))
    _freezer.start()
    _source = _VirtualOrRealTime()
    # freezegun types its factory stack by its own factory classes; ours answers the same call.
    freezegun_api.freeze_factories[-1] = _source  # type: ignore[call-overload]
    freezegun_api.ignore_lists[-1] = _EVERYTHING
    atexit.register(_freezer.stop)


@contextmanager
def virtual_time() -> Iterator[None]:
    """Within the block, stray clock reads see the virtual instant (see :func:`move_to`).

    Re-entrant: the Python API (:mod:`fakecluster.session`) enters it per call, the runner around a whole
    play; only the outermost block switches back to real time."""
    freeze_once()
    assert _source is not None
    if _source.active:
        yield
        return
    _source.active = True
    _source.thread = get_ident()
    freezegun_api.ignore_lists[-1] = _IGNORE
    try:
        yield
    finally:
        _source.active = False
        freezegun_api.ignore_lists[-1] = _EVERYTHING


def move_to(virtual_seconds: float) -> None:
    """Point the frozen clock at a virtual instant. Cheap: one attribute write."""
    if _source is not None:
        _source.virtual_seconds = virtual_seconds


def real_perf_counter() -> float:
    """Wall-clock seconds for reporting how long a run took and for ending a run past its wall-clock
    budget (:mod:`fakecluster.scenario.limits`); never used to drive the cluster."""
    return float(freezegun_api.real_perf_counter())  # wall-clock-ok
