"""How the API and scenario-format models are built at import (see :mod:`fakecluster.api.base`, the two
rules at the end of its docstring): what a run needs is built as before, and the rest waits."""

from __future__ import annotations
import __future__

import importlib
import pkgutil
from types import ModuleType

import pytest
from pydantic import BaseModel

import fakecluster.api
import jobset.api.v1alpha2

FORMAT_MODULES = ["fakecluster.scenario.format", "fakecluster.scenario.format_v11",
                  "fakecluster.scenario.format_network"]


def _model_modules() -> list[ModuleType]:
    names = [f"{package.__name__}.{info.name}" for package in (fakecluster.api, jobset.api.v1alpha2)
             for info in pkgutil.iter_modules(package.__path__)] + FORMAT_MODULES
    modules = [importlib.import_module(name) for name in names]
    return [m for m in modules if any(isinstance(v, type) and issubclass(v, BaseModel)
                                      and v.__module__ == m.__name__ for v in vars(m).values())]


def _models(module: ModuleType) -> list[type[BaseModel]]:
    return [v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == module.__name__]


@pytest.mark.parametrize("module", _model_modules(), ids=lambda m: m.__name__)
def test_model_modules_keep_their_annotations_as_objects(module: ModuleType) -> None:
    assert vars(module).get("annotations") is not __future__.annotations


def test_deferred_models_build_on_first_use_as_the_others_did() -> None:
    from fakecluster.api.core_events import Event
    from fakecluster.scenario.format import PodRule

    assert not Event.__pydantic_complete__ or Event.__pydantic_validator__ is not None
    event = Event.model_validate({"involvedObject": {"kind": "Pod"}, "count": 2})
    assert Event.__pydantic_complete__ and event.count == 2
    rule = PodRule.model_validate({"match": {"replicatedJob": "workers"}, "pull": "5s"})
    assert rule.match is not None


@pytest.mark.parametrize("module", _model_modules(), ids=lambda m: m.__name__)
def test_every_model_builds(module: ModuleType) -> None:
    for model in _models(module):
        if not model.__pydantic_complete__:
            assert model.model_rebuild() is True
        assert model.__pydantic_complete__, model


@pytest.mark.parametrize("module", [*_model_modules(), importlib.import_module("fakecluster.session")],
                         ids=lambda m: m.__name__)
def test_no_default_factory_is_a_builtin(module: ModuleType) -> None:
    """``list``/``dict`` as a default factory cost a tokenize pass each time pydantic reads its signature
    (:mod:`fakecluster.scenario.factories`): the Python functions there give the same defaults."""
    for model in _models(module):
        factories = [(name, info.default_factory) for name, info in model.model_fields.items()]
        factories += [(name, attr.default_factory) for name, attr in model.__private_attributes__.items()]
        for name, factory in factories:
            assert getattr(factory, "__module__", None) != "builtins", f"{model.__name__}.{name}"
