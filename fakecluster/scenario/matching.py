"""Subset matching of expected YAML against wire-form objects, with one readable line per mismatch.

The rules follow the scenario format: a mapping matches when every key it gives matches; a list of
mappings keyed by ``name`` or ``type`` (``conditions``, ``replicatedJobsStatus``) matches item by item by
that key; any other list must match exactly; scalars compare as strings, because Kubernetes writes
``status: "True"`` and quantities as strings while a scenario author naturally types ``True`` or ``8``.

``{exactly: [...]}`` in place of a list asks for more: the object's list has exactly these items, in this
order, and nothing else; each item still matches as a subset (``conditions: {exactly: [{type:
Completed}]}``: one condition, of type Completed, whatever its reason). No Kubernetes field is called
``exactly``, so the form cannot be mistaken for an object.

Two leniencies mirror how Kubernetes serialises objects: a key that is absent from the object matches an
expected zero value (``0``, ``false``, ``""``, ``[]``, ``{}``, ``null``), because Go's ``omitempty``
drops zero values from the wire form (``status.restarts: 0`` is never written); and booleans compare
case-insensitively with their string forms (``True`` matches ``"True"`` and ``"true"``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["EXACTLY", "exact_equal", "exactly_items", "scalar_equal", "show", "subset_match"]

EXACTLY = "exactly"

_MISSING = object()


def show(value: Any) -> str:
    """Render a value for a mismatch line: strings quoted, containers as compact JSON."""
    if value is _MISSING:
        return "nothing (the key is absent)"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping | list):
        return json.dumps(value, sort_keys=True, default=str, separators=(", ", ": "))
    return str(value)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def scalar_equal(expected: Any, actual: Any) -> bool:
    """Compare scalars by their string forms (``0`` == ``"0"``, ``True`` == ``"True"``)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return _scalar_text(expected).lower() == _scalar_text(actual).lower()
    return _scalar_text(expected) == _scalar_text(actual)


def _is_zero(value: Any) -> bool:
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float):
        return value == 0
    return value is None or (isinstance(value, str | list | dict) and len(value) == 0)


def _list_key(items: list[Any]) -> str | None:
    """The key a list of mappings is matched by: ``name`` if every item has one, else ``type``, else
    ``hostname`` (format 1.1: EndpointSlice ``endpoints``, whose items have no name)."""
    if not items or not all(isinstance(item, Mapping) for item in items):
        return None
    for key in ("name", "type", "hostname"):
        if all(key in item for item in items):
            return key
    return None


def _key_text(value: Any) -> str:
    return _scalar_text(value) if not isinstance(value, Mapping | list) else show(value)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def exactly_items(expected: Any) -> list[Any] | None:
    """The items of an ``{exactly: [...]}`` form, or None if ``expected`` is not one."""
    if isinstance(expected, Mapping) and len(expected) == 1 and isinstance(expected.get(EXACTLY), list):
        items: list[Any] = expected[EXACTLY]
        return items
    return None


def subset_match(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Every way ``actual`` fails to contain ``expected``, one line each, prefixed by the field path."""
    prefix = f"{path}: " if path else ""
    exact = exactly_items(expected)
    if exact is not None:
        return _exact_list_match(exact, actual, path)
    if isinstance(expected, Mapping):
        if actual is _MISSING or actual is None:
            actual = {}
        if not isinstance(actual, Mapping):
            return [f"{prefix}expected a mapping, got {show(actual)}"]
        problems: list[str] = []
        for key, value in expected.items():
            problems.extend(subset_match(value, actual.get(key, _MISSING), _join(path, key)))
        return problems
    if isinstance(expected, list):
        if actual is _MISSING or actual is None:
            actual = []
        if not isinstance(actual, list):
            return [f"{prefix}expected a list, got {show(actual)}"]
        key = _list_key(expected)
        if key is not None:
            return _keyed_list_match(expected, actual, key, path)
        if not exact_equal(expected, actual):
            return [f"{prefix}expected {show(expected)}, got {show(actual)}"]
        return []
    if actual is _MISSING:
        return [] if _is_zero(expected) else [f"{prefix}expected {show(expected)}, got {show(actual)}"]
    if isinstance(actual, Mapping | list) or not scalar_equal(expected, actual):
        return [f"{prefix}expected {show(expected)}, got {show(actual)}"]
    return []


def _keyed_list_match(expected: list[Any], actual: list[Any], key: str, path: str) -> list[str]:
    """Match each expected item with the actual item of the same key; the n-th duplicate with the n-th."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    for item in expected:
        wanted = _key_text(item[key])
        occurrence = seen.get(wanted, 0)
        seen[wanted] = occurrence + 1
        candidates = [
            a for a in actual if isinstance(a, Mapping) and key in a and _key_text(a[key]) == wanted
        ]
        item_path = f"{path}[{key}={wanted}]"
        if occurrence >= len(candidates):
            have = ", ".join(_key_text(a.get(key)) for a in actual if isinstance(a, Mapping)) or "none"
            problems.append(f"{item_path}: expected an item with {key} {wanted!r}, got none (have: {have})")
            continue
        rest = {k: v for k, v in item.items() if k != key}
        problems.extend(subset_match(rest, candidates[occurrence], item_path))
    return problems


def _exact_list_match(expected: list[Any], actual: Any, path: str) -> list[str]:
    """``{exactly: [...]}``: the same number of items, in the same order, item i a subset of item i (a
    keyed list also checks each position's key, so the line says which item is out of place)."""
    prefix = f"{path}: " if path else ""
    if actual is _MISSING or actual is None:
        actual = []
    if not isinstance(actual, list):
        return [f"{prefix}expected a list, got {show(actual)}"]
    key = _list_key(expected)

    def names(items: list[Any]) -> str:
        if key is None:
            return show(items)
        shown = (_key_text(i.get(key)) if isinstance(i, Mapping) else show(i) for i in items)
        return "[" + ", ".join(shown) + "]"

    if len(actual) != len(expected):
        return [f"{prefix}expected exactly {len(expected)} item(s) {names(expected)}, "
                f"got {len(actual)}: {names(actual)}"]
    problems: list[str] = []
    for i, (want, have) in enumerate(zip(expected, actual, strict=True)):
        misplaced = not isinstance(have, Mapping) or _key_text(have.get(key)) != _key_text(want[key]) \
            if key is not None else False
        if misplaced and key is not None:
            problems.append(f"{path}[{i}]: expected {key} {_key_text(want[key])!r} here, got "
                            f"{names(actual)} in that order")
            continue
        problems.extend(subset_match(want, have, f"{path}[{i}]"))
    return problems


def exact_equal(expected: Any, actual: Any) -> bool:
    """Structural equality with the same lenient scalar comparison as :func:`subset_match`."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        by_text = {str(k): v for k, v in actual.items()}
        return set(map(str, expected)) == set(by_text) and all(
            exact_equal(v, by_text[str(k)]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(exact_equal(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if actual is _MISSING or isinstance(actual, Mapping | list):
        return False
    return scalar_equal(expected, actual)
