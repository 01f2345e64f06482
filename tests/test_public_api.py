"""The public names of ``fakecluster`` are a promise: this list changes only on purpose (as trio and httpx
guard theirs). Importing the package stays cheap: the names load on first use."""

from __future__ import annotations

import subprocess
import sys

import fakecluster

PUBLIC = [
    "AlreadyExists",
    "ApiError",
    "Clock",
    "Conflict",
    "FakeCluster",
    "FieldError",
    "Invalid",
    "MilestoneNotReached",
    "NotFound",
    "ScenarioError",
    "ScenarioProblems",
    "ScenarioResult",
    "TraceEvent",
    "__version__",
    "load_scenario",
    "run_scenario",
    "validate_scenario",
]


def test_the_public_names_are_exactly_these() -> None:
    assert sorted(fakecluster.__all__) == PUBLIC


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in fakecluster.__all__:
        value = getattr(fakecluster, name)
        if name != "__version__":
            assert value.__doc__, f"{name} has no docstring"
    assert fakecluster.__version__ == "0.1.0"
    assert set(fakecluster.__all__) <= set(dir(fakecluster))


def test_public_objects_come_from_their_homes() -> None:
    from fakecluster.scenario.runner import ScenarioResult, run_scenario
    from fakecluster.session import FakeCluster

    assert fakecluster.FakeCluster is FakeCluster
    assert fakecluster.run_scenario is run_scenario
    assert fakecluster.ScenarioResult is ScenarioResult


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        fakecluster.Cluster  # noqa: B018 - internal, not exported
    except AttributeError as err:
        assert "Cluster" in str(err)
    else:
        raise AssertionError("fakecluster.Cluster should not be public")


def test_importing_the_package_does_not_load_the_cluster() -> None:
    heavy = "('pydantic', 'yaml', 'fakecluster.cluster')"
    code = f"import sys, fakecluster; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_package_ships_its_type_information() -> None:
    from importlib.resources import files

    assert files("fakecluster").joinpath("py.typed").is_file()
