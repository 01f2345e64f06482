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


def freeze_once() -> None:
    """Start the process-wide freeze at the virtual epoch (idempotent)."""
    global _factory  # noqa: PLW0603 - one freeze per process is the point
    if _factory is None:
        from freezegun import freeze_time

        _factory = freeze_time(EPOCH.replace(tzinfo=None)).start()


def move_to(virtual_seconds: float) -> None:
    """Point the frozen clock at a virtual instant. Cheap: one attribute write."""
    if _factory is not None:
        _factory.time_to_freeze = EPOCH.replace(tzinfo=None) + timedelta(seconds=virtual_seconds)


def real_perf_counter() -> float:
    """Wall-clock seconds for reporting how long a run took (never used to drive the cluster)."""
    from freezegun.api import real_perf_counter as _real  # type: ignore[attr-defined]

    return float(_real())  # wall-clock-ok
