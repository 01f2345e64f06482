"""The wall-clock freeze's walk of the loaded modules (:func:`fakecluster.wallclock_freeze._clock_attributes`)
finds the very real clocks freezegun's own walk finds, without its ``getattr`` of every listed name."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from freezegun import api as freezegun_api

from fakecluster import wallclock_freeze

REAL_CLOCKS = [
    ("monotonic", freezegun_api.real_monotonic),
    ("datetime", freezegun_api.real_datetime),
    ("date", freezegun_api.real_date),
    ("now", freezegun_api.real_time),
    ("perf_counter_ns", freezegun_api.real_perf_counter_ns),
]


def _freezegun(module: object) -> set[tuple[str, int]]:
    found: list[tuple[str, Any]] = freezegun_api._get_cached_module_attributes(module)  # type: ignore[arg-type]
    return {(name, id(value)) for name, value in found}


def _ours(module: object) -> set[tuple[str, int]]:
    return {(name, id(value)) for name, value in wallclock_freeze._clock_attributes(module)}


def _module(name: str, **namespace: object) -> types.ModuleType:
    module = types.ModuleType(name)
    vars(module).update(namespace)
    return module


def test_a_plain_module_gives_the_real_clocks_freezegun_finds() -> None:
    module = _module("tests_fake_clock_user", other=len, text="x", **dict(REAL_CLOCKS))
    assert _ours(module) == _freezegun(module) == {(name, id(value)) for name, value in REAL_CLOCKS}
    assert _ours(_module("tests_fake_no_clock", other=len)) == set()


def test_names_computed_on_access_are_not_computed() -> None:
    touched: list[str] = []

    def lazy(name: str) -> object:
        touched.append(name)
        return object()

    module = _module("tests_fake_lazy", __getattr__=lazy, __dir__=lambda: ["later", "datetime"],
                     datetime=freezegun_api.real_datetime)
    assert _ours(module) == _freezegun(module) == {("datetime", id(freezegun_api.real_datetime))}
    touched.clear()
    wallclock_freeze._clock_attributes(module)
    assert touched == []  # freezegun's getattr imported a module's lazy parts; ours leaves them be


def test_other_objects_in_sys_modules_go_to_freezegun() -> None:
    class ModuleLike(types.ModuleType):
        @property
        def clock(self) -> object:  # hides the namespace's value: only getattr sees the real clock
            return freezegun_api.real_monotonic

    module = ModuleLike("tests_fake_module_like")
    vars(module)["clock"] = len
    assert _ours(module) == _freezegun(module) == {("clock", id(freezegun_api.real_monotonic))}


@pytest.mark.filterwarnings("ignore")  # freezegun's getattr of every name touches deprecated ones
def test_every_loaded_module_gives_what_freezegun_finds_in_its_namespace() -> None:
    for module in list(sys.modules.values()):
        if module is None:
            continue
        namespace = vars(module) if type(module) is types.ModuleType else None
        expected = {(name, ident) for name, ident in _freezegun(module)
                    if namespace is None or name in namespace}
        assert _ours(module) == expected, getattr(module, "__name__", module)
