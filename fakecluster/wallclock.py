"""Keep stray wall-clock reads on virtual time, with freezegun.

Nothing in fakecluster reads the wall clock; third-party code called from a controller might. Starting a
freeze costs ~2 ms (freezegun patches every loaded module), so it is started once per process and then
only moved: each time the virtual clock advances we set the frozen instant.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fakecluster.clock import EPOCH

_factory: Any = None
_freezer: Any = None

_IGNORE = ("hypothesis", "_pytest", "pytest", "xdist", "execnet", "pluggy")
"""Test tooling keeps real time: its deadlines and durations are about the host, not the scenario."""


def freeze_once() -> None:
    """Start the process-wide freeze at the virtual epoch (idempotent)."""
    global _factory, _freezer  # noqa: PLW0603 - one freeze per process is the point
    if _factory is None:
        import atexit

        from freezegun import freeze_time

        _freezer = freeze_time(EPOCH.replace(tzinfo=None), ignore=list(_IGNORE))
        _factory = _freezer.start()
        atexit.register(_freezer.stop)


def move_to(virtual_seconds: float) -> None:
    """Point the frozen clock at a virtual instant. Cheap: one attribute write."""
    if _factory is not None:
        _factory.time_to_freeze = EPOCH.replace(tzinfo=None) + timedelta(seconds=virtual_seconds)


def real_perf_counter() -> float:
    """Wall-clock seconds for reporting how long a run took (never used to drive the cluster)."""
    from freezegun.api import real_perf_counter as _real  # type: ignore[attr-defined]

    return float(_real())  # wall-clock-ok
