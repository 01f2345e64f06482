"""The plain check in front of the schema validator (:func:`fakecluster.api.validation.plain_check`) only
ever accepts what pydantic accepts, so :func:`~fakecluster.api.validation.is_valid` answers exactly as
the validator does: random values built from each model's own fields (valid ones, wrong types, unknown
keys, Python names instead of wire names, missing required fields, ``str`` subclasses, nulls) go through
both, for every model of :mod:`fakecluster.api` that has a plain check."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import fakecluster.api
from fakecluster.api.discovery import Endpoint, EndpointSlice
from fakecluster.api.validation import _WIRE_NAMES_ONLY, is_valid, item_model, plain_check


class _Text(str):
    """A ``str`` subclass: the plain check leaves it to the validator."""


def _models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.iter_modules(fakecluster.api.__path__):
        module = importlib.import_module(f"fakecluster.api.{info.name}")
        for name, obj in sorted(vars(module).items()):
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
    return [found[k] for k in sorted(found)]


CHECKED = [m for m in _models() if plain_check(m) is not None]

_junk = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False) | st.text(max_size=3)
    | st.builds(_Text, st.text(max_size=2)),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4,
)


def _values(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    """Mostly values ``annotation`` takes, sometimes anything."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _values(typing.get_args(annotation)[0], depth)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([_values(a, depth) for a in typing.get_args(annotation)])
    if annotation is type(None):
        return st.none()
    if origin is list:
        return st.lists(_values(typing.get_args(annotation)[0], depth), max_size=3) | _junk
    if origin is dict:
        keys = st.text(max_size=3) | st.builds(_Text, st.just("k")) | st.integers(0, 1)
        return st.dictionaries(keys, _values(typing.get_args(annotation)[1], depth), max_size=2) | _junk
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return _objects(annotation, depth + 1) if depth < 4 else _junk
    simple = {str: st.text(max_size=3), bool: st.booleans(), int: st.integers(-3, 3)}
    base = simple.get(annotation, st.nothing())
    return st.one_of(base, base, base, base, base, _junk)


def _objects(model: type[BaseModel], depth: int = 0) -> st.SearchStrategy[Any]:
    @st.composite
    def build(draw: st.DrawFn) -> Any:
        obj: dict[Any, Any] = {}
        for name, info in model.model_fields.items():
            if draw(st.integers(0, 19)) < (19 if info.is_required() else 10):
                key = name if draw(st.integers(0, 19)) == 0 else (info.alias or name)
                obj[key] = draw(_values(info.annotation, depth))
        if draw(st.integers(0, 9)) == 0:
            obj[draw(st.sampled_from(["extra", "kind", "addresses", "name", 1]))] = draw(_junk)
        return obj

    return build() | _junk if depth else build()


def _pydantic_accepts(model: type[BaseModel], obj: Any) -> bool:
    try:
        model.__pydantic_validator__.validate_python(obj, **_WIRE_NAMES_ONLY)
    except ValidationError:
        return False
    return True


def test_the_endpoint_and_its_parts_have_a_plain_check() -> None:
    """Else the short update's endpoint check would silently be the validator again."""
    assert item_model(EndpointSlice, "endpoints") is Endpoint
    check = plain_check(Endpoint)
    assert check is not None
    endpoint = {"addresses": ["10.0.0.7"],
                "conditions": {"ready": True, "serving": True, "terminating": False},
                "hostname": "w-0", "targetRef": {"kind": "Pod", "namespace": "ns", "name": "w-0", "uid": "u"},
                "nodeName": "node-1", "zone": None, "hints": {"forZones": [{"name": "z"}]},
                "deprecatedTopology": {"a": "b"}}
    assert check(endpoint, None)


@pytest.mark.parametrize("model", CHECKED, ids=lambda m: m.__name__)
def test_the_plain_check_accepts_only_what_the_validator_accepts(model: type[BaseModel]) -> None:
    check = plain_check(model)
    assert check is not None

    @settings(max_examples=300 if model is Endpoint else 60, deadline=None, derandomize=True)
    @given(_objects(model))
    def play(obj: Any) -> None:
        verdict = _pydantic_accepts(model, obj)
        if check(obj, None):
            assert verdict, obj
        assert is_valid(model, obj) is verdict if type(obj) is dict else True

    play()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.data())
def test_an_endpoint_sharing_values_with_a_valid_one_gets_the_validators_verdict(data: st.DataObject) -> None:
    """``like``: values of a valid endpoint are taken on trust only where the new one holds the very
    same objects; everything else is checked."""
    optional = st.none() | st.text(max_size=2)
    flag = st.none() | st.booleans()
    conditions = st.fixed_dictionaries({}, optional=dict.fromkeys(("ready", "serving", "terminating"), flag))
    target = st.fixed_dictionaries({}, optional=dict.fromkeys(("kind", "namespace", "name", "uid"), optional))
    like = data.draw(st.fixed_dictionaries(
        {"addresses": st.lists(st.text(max_size=2), max_size=2)},
        optional={"conditions": st.none() | conditions, "hostname": optional, "nodeName": optional,
                  "targetRef": st.none() | target}))
    assert _pydantic_accepts(Endpoint, like)
    obj = data.draw(_objects(Endpoint))
    if type(obj) is dict:
        for key in list(like):
            if data.draw(st.booleans()):
                obj[key] = like[key]
        assert is_valid(Endpoint, obj, like) is _pydantic_accepts(Endpoint, obj)
