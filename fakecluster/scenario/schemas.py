"""Expected keys under ``final``/``at`` checked against the API kind's schema, at load time.

Subset matching treats a key that is absent from an object as matching any zero value, because Go's
``omitempty`` drops zero values from the wire (``status.restarts: 0`` is never written). The price is
that a misspelt key whose expected value is zero (``status: {restart: 0}``) can never fail: the object
never has that key, so the expectation passes silently. Checking every expected key against the schema
of the kind (the same pydantic models the API server validates writes with, see
:class:`fakecluster.apiserver.resources.ResourceType`) before the run closes that hole: a key the kind
does not have is a load error with file, line, field path and "did you mean".

The schemas come from the API server's own registry (a scratch cluster with the workload plugin
installed, built once per process), so a kind added by another component, or by the workload, is
checked by the same code without this module knowing it.
"""

from __future__ import annotations

import difflib
import functools
import types
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin

from pydantic import BaseModel

from fakecluster.scenario.errors import ScenarioError, join_path
from fakecluster.scenario.format import OBJECT_CHECK_KINDS, Scenario, StateCheck
from fakecluster.scenario.matching import EXACTLY, exactly_items

__all__ = ["KeyProblem", "check_state_keys", "kind_schemas", "unknown_keys"]

Schemas = Mapping[str, "type[BaseModel] | None"]


class KeyProblem(NamedTuple):
    """A key the schema does not have: where, which, and the keys the schema has at that place."""

    field_path: str
    key: str
    known: list[str]


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    """Wire name -> annotation of every field of ``model``."""
    return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of a type: ``X | None`` -> [X], ``Annotated[X, ...]`` -> [X]."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _unwrap(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [alt for arg in get_args(annotation) if arg is not type(None) for alt in _unwrap(arg)]
    return [annotation]


def unknown_keys(expected: Any, annotation: Any, path: str) -> Iterator[KeyProblem]:
    """Every key in ``expected`` (a YAML subset) that the type ``annotation`` has no field for.

    Mappings are checked against models field by field, lists item by item against the item type,
    ``dict[str, X]`` values against ``X``; anything typed ``Any`` (free-form) is not looked into."""
    for alt in _unwrap(annotation):
        if isinstance(alt, type) and issubclass(alt, BaseModel):
            if isinstance(expected, Mapping):
                yield from _model_keys(expected, alt, path)
                return
            continue
        origin = get_origin(alt)
        exact = exactly_items(expected)
        if origin is list and exact is not None:  # {exactly: [...]} stands for the list
            yield from unknown_keys(exact, alt, join_path(path, EXACTLY))
            return
        if origin is list and isinstance(expected, list):
            (item,) = get_args(alt) or (Any,)
            for i, value in enumerate(expected):
                yield from unknown_keys(value, item, join_path(path, i))
            return
        if origin is dict and isinstance(expected, Mapping):
            args = get_args(alt)
            value_type = args[1] if len(args) == 2 else Any
            for key, value in expected.items():
                yield from unknown_keys(value, value_type, join_path(path, str(key)))
            return


def _model_keys(expected: Mapping[str, Any], model: type[BaseModel], path: str) -> Iterator[KeyProblem]:
    fields = _fields(model)
    for key, value in expected.items():
        child = join_path(path, str(key))
        if key not in fields:
            yield KeyProblem(child, str(key), sorted(fields))
            continue
        yield from unknown_keys(value, fields[key], child)


def _suggestion(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if not close:
        close = [k for k in known if k.lower() == key.lower()]
    return f" (did you mean '{close[0]}'?)" if close else ""


@functools.lru_cache(maxsize=8)
def _registry(plugin: Any) -> dict[str, type[BaseModel] | None]:
    from fakecluster.cluster import Cluster, ClusterConfig

    scratch = Cluster(0, ClusterConfig(nodes=[]))
    plugin.install(scratch, {})
    return {kind: scratch.server.resource(kind).model for kind in scratch.server.kinds()}


def kind_schemas(plugin: Any) -> dict[str, type[BaseModel] | None]:
    """Kind -> the schema model the API server checks its objects with (``None``: no schema)."""
    return dict(_registry(plugin))


def check_state_keys(scenario: Scenario, schemas: Schemas, workload_kind: str) -> None:
    """Raise :class:`ScenarioError` at the first expected key under ``final``/``at`` that its kind lacks."""
    for i, exp in enumerate(scenario.expect):
        state = exp.state
        if state is None:
            continue
        base = f"expect[{i}].final" if exp.final is not None else f"expect[{i}]"
        for path, subset, kind in _subsets(state, base, workload_kind):
            model = schemas.get(kind)
            if model is None:
                continue
            for problem in unknown_keys(subset, model, path):
                field_path, key, known = problem
                raise ScenarioError(
                    f"unknown key '{key}' for kind {kind}{_suggestion(key, known)}",
                    file=scenario.source,
                    field_path=field_path,
                    line=scenario.line_of(field_path),
                )


def _subsets(state: StateCheck, base: str, workload_kind: str) -> Iterator[tuple[str, Any, str]]:
    """(field path, expected subset, kind) of every object subset a state check gives."""
    if state.jobset is not None:
        yield join_path(base, "jobset"), {k: v for k, v in state.jobset.items() if k != "name"}, workload_kind
    for name, subset in (state.jobsets or {}).items():
        yield join_path(join_path(base, "jobsets"), name), subset, workload_kind
    for key, by_name in state.objects():
        for name, subset in by_name.items():
            yield join_path(join_path(base, key), name), subset, OBJECT_CHECK_KINDS[key]
