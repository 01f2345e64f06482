"""Keep stray wall-clock reads on virtual time, with freezegun — during runs, in the thread playing them.

Nothing in fakecluster reads the wall clock; third-party code called from a controller might. Starting a
freeze walks every loaded module for the real clocks it holds (:func:`_clock_attributes`), so it is
started once per process and then only steered: while a thread plays a scenario (:func:`virtual_time`),
every patched clock read *by that thread* gives the virtual instant, moved each time the virtual clock
advances. Every other read — outside a run, or by any other thread of the process — is answered by the
real clock itself (``time.monotonic`` by the real monotonic clock), so the host process (pytest,
subprocess time-outs, a benchmark's timer, a Dask worker's event loop) is never frozen and never sees a
clock jump.

That is why freezegun's own "real time?" rule is replaced (:func:`_use_real_time`), and replaced before
the freeze starts. freezegun decides by module name alone, and derives every frozen clock (``monotonic``,
``perf_counter``) from the factory's datetime. A Dask worker plays chunks in a pool thread while its
event loop runs in another, and under freezegun's rule that loop read, for ``time.monotonic()``, the
frozen instant while the freeze was starting (from the first chunk), wall seconds (~1.8e9) while a chunk
played and the real monotonic clock (seconds since boot) otherwise. A timer armed on the jumped clock —
among them the one that flushes "task finished" to the scheduler — lay years ahead of the real one, and
the campaign hung.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from threading import Lock, get_ident
from typing import Any

from fakecluster.clock import EPOCH

_EPOCH_NAIVE = EPOCH.replace(tzinfo=None)
_IGNORE = ("hypothesis", "_pytest", "pytest", "xdist", "execnet", "pluggy")
"""Test tooling keeps real time even inside a run: its deadlines and durations are about the host."""

# freezegun is imported where it is used (``import freezegun.api as freezegun_api``: the plain import of a
# loaded module, no from-list walk), not with this module: it brings asyncio, unittest, dateutil, sqlite3
# and uuid, which importing the package, the runner or the CLI without playing anything (``fakecluster
# list``, a pytest session that collects no scenario) need not pay. (``validate_scenario`` does start it:
# it plays admission in a scratch cluster.) Every run still has it: a run starts the freeze
# (:func:`virtual_time`), and ``fakecluster run`` starts it with its imports (``cli.import_for_good``).


def _real_utc_now() -> datetime:
    import freezegun.api as freezegun_api

    return freezegun_api.real_datetime.now(UTC).replace(tzinfo=None)  # wall-clock-ok


class _VirtualOrRealTime:
    """freezegun's time source: the virtual instant for a thread playing a scenario, the real UTC time
    for every other thread."""

    def __init__(self) -> None:
        self.runs: dict[int, float] = {}
        """Thread id -> the virtual instant of the scenario that thread plays, turned into a datetime
        only when something reads the clock (the virtual clock moves on nearly every event, a stray
        wall-clock read is rare). Per thread, so two scenarios played at once by two threads of one
        process (a Dask worker with several threads) each see their own instant."""

    def __call__(self) -> datetime:
        seconds = self.runs.get(get_ident())
        if seconds is None:
            return _real_utc_now()
        return _EPOCH_NAIVE + timedelta(seconds=seconds)


_source = _VirtualOrRealTime()
_depth = 0
"""How many freezegun freezes are on when ours is the innermost (0: ours has not started)."""
_started = False
_start_lock = Lock()


def _use_real_time() -> bool:
    """freezegun's ``_should_use_real_time``, asked by every patched clock function before it answers:
    True means "answer with the real clock".

    While ours is the innermost freeze, a thread that is not playing a scenario gets the real clock
    straight away. Otherwise (the playing thread, or a freeze someone started inside ours) freezegun's
    own rule applies: real time when a module on the caller's stack is on the innermost freeze's ignore
    list (ours: the test tooling in ``_IGNORE``). That rule is restated here rather than called: it walks
    a fixed number of frames up from itself, so calling it from here would look one frame short."""
    import freezegun.api as freezegun_api

    if len(freezegun_api.freeze_factories) == _depth and get_ident() not in _source.runs:
        return True
    if not freezegun_api.call_stack_inspection_limit:
        return False
    if not freezegun_api.ignore_lists:
        return True
    ignore = freezegun_api.ignore_lists[-1]
    if not ignore:
        return False
    frame = inspect.currentframe()  # this function; its caller, the patched clock; then that one's caller
    for _ in range(2):
        frame = frame.f_back if frame is not None else None
    for _ in range(freezegun_api.call_stack_inspection_limit):
        if frame is None:
            break
        module_name = frame.f_globals.get("__name__")
        if module_name and module_name.startswith(ignore):
            return True
        frame = frame.f_back
    return False


def _clock_attributes(module: object) -> list[tuple[str, Any]]:
    """The real clocks a loaded module holds (``from time import monotonic``, ``from datetime import
    datetime``...), as (name, value): what freezegun's ``_get_cached_module_attributes`` returns to the
    freeze's start, which swaps each for its fake.

    freezegun finds them by calling ``getattr`` for every name ``dir(module)`` lists, three ``dir`` calls
    a module, over the ~490 loaded modules: a tenth of a plain run's start-up. For a plain module (its
    type ``ModuleType``) ``getattr`` of a name in its namespace is that namespace's value, so one pass over
    ``vars(module)`` finds the same clocks. It only leaves out the names a module computes on first
    access (a module ``__getattr__``, listed by its ``__dir__``): freezegun's ``getattr`` of those
    imported some 35 modules nothing needs (``pydantic.type_adapter``, ``concurrent.futures.process``,
    ``unittest.async_case``...), and none of them is a real clock, which the time and datetime modules
    no longer hand out once the freeze's start has patched them, before this walk. Any other object in
    ``sys.modules`` goes to freezegun's own function."""
    import freezegun.api as freezegun_api

    if type(module) is not types.ModuleType:
        return _freezegun_clock_attributes()(module)  # type: ignore[arg-type]  # sys.modules may hold any object
    real = freezegun_api._real_time_object_ids
    return [(name, value) for name, value in list(vars(module).items()) if id(value) in real]


@functools.cache
def _freezegun_clock_attributes() -> Callable[[types.ModuleType], list[tuple[str, Any]]]:
    """freezegun's own walk of one module (``_get_cached_module_attributes``); asked for before the
    freeze's start swaps :func:`_clock_attributes` in, so it is always freezegun's."""
    import freezegun.api as freezegun_api

    return freezegun_api._get_cached_module_attributes


def freeze_once() -> None:
    """Start the process-wide freeze (idempotent, thread-safe). Until a thread starts a run, every clock
    reads real time — also while the freeze is being started, when other threads (a Dask worker's event
    loop) are already running."""
    global _depth, _started  # noqa: PLW0603 - one freeze per process is the point
    if _started:
        return
    with _start_lock:
        if _started:
            return
        import freezegun.api as freezegun_api

        if not hasattr(freezegun_api, "_should_use_real_time"):  # replacing a missing name would do nothing
            raise RuntimeError("this freezegun has no _should_use_real_time; fakecluster cannot steer it")
        # the rule first, so that no clock read of another thread sees the freeze half started; the frozen
        # instant is the real one because datetime.now() of other threads reads it until _source replaces it
        _depth = len(freezegun_api.freeze_factories) + 1
        freezegun_api._should_use_real_time = _use_real_time
        freezer = freezegun_api.freeze_time(_real_utc_now(), ignore=list(_IGNORE))
        theirs = _freezegun_clock_attributes()
        freezegun_api._get_cached_module_attributes = _clock_attributes
        try:
            freezer.start()
        finally:
            freezegun_api._get_cached_module_attributes = theirs  # type: ignore[assignment]  # the same function
        freezegun_api.freeze_factories[-1] = _source  # type: ignore[call-overload]  # any callable will do
        freezegun_api.ignore_lists[-1] = _IGNORE  # without freezegun's defaults: as before, only the tooling
        atexit.register(freezer.stop)
        _started = True


@contextmanager
def virtual_time() -> Iterator[None]:
    """Within the block, stray clock reads by this thread see the virtual instant (see :func:`move_to`).

    Re-entrant: the Python API (:mod:`fakecluster.session`) enters it per call, the runner around a whole
    play; only a thread's outermost block switches it back to real time."""
    freeze_once()
    ident = get_ident()
    if ident in _source.runs:
        yield
        return
    _source.runs[ident] = 0.0
    try:
        yield
    finally:
        del _source.runs[ident]


def move_to(virtual_seconds: float) -> None:
    """Point this thread's frozen clock at a virtual instant (a no-op outside a run). Cheap: a lookup
    and a dict write."""
    ident = get_ident()
    if ident in _source.runs:
        _source.runs[ident] = virtual_seconds


def real_perf_counter() -> float:
    """Wall-clock seconds for reporting how long a run took and for ending a run past its wall-clock
    budget (:mod:`fakecluster.scenario.limits`); never used to drive the cluster."""
    import freezegun.api as freezegun_api

    return float(freezegun_api.real_perf_counter())  # wall-clock-ok
