"""What a plain scenario run does not pay for at start-up (issue 11: every user's one-scenario run, every
pytest run and every worker process of the main job pays start-up).

Each rule here is a measured saving (instruction counts in the commit that made it): a model no scenario
run validates on its own is not built at import (``defer_build``, :mod:`fakecluster.api.base`), and a
module a plain run never uses is imported where it is first needed. Each case plays a scenario in a fresh
interpreter, as ``fakecluster run`` does, and looks at what the process built and imported."""

from __future__ import annotations

import json
import subprocess
import sys

from scenario_files import ROOT

PROBE = """
import json, sys
from pydantic import BaseModel
from fakecluster.cli import main
status = main(["run", "scenarios/startup/three-tier-inorder.yaml", "-q"])
def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)
built = sorted({f"{m.__module__}.{m.__qualname__}" for m in subclasses(BaseModel) if m.__pydantic_complete__})
tokenize = sys.modules.get("tokenize")
compiled = tokenize._compile.cache_info().currsize if tokenize is not None else 0
print(json.dumps({"status": status, "built": built, "modules": sorted(sys.modules), "tokenize": compiled}))
"""


def _plain_run() -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == 0
    return result


def test_a_plain_run_does_not_build_what_only_the_python_api_validates() -> None:
    built = _plain_run()["built"]
    assert isinstance(built, list)
    for name in ("fakecluster.session._Setup", "fakecluster.scenario.format.Action"):
        assert name not in built, name
    assert not [name for name in built if name.startswith("fakecluster.scenario.format_v11.MinMax[")]
    assert "fakecluster.scenario.format.Scenario" in built  # what a run validates is built at import


def test_the_python_api_builds_them_on_first_use() -> None:
    code = """
from fakecluster import FakeCluster
from fakecluster.scenario.format import Action
from fakecluster.session import _Setup
assert not _Setup.__pydantic_complete__ and not Action.__pydantic_complete__
cluster = FakeCluster(seed=3, pods=[{"match": {"replicatedJob": "workers"}, "pull": "5s"}])
action = Action.model_validate({"at": "1s", "suspend": None})
assert _Setup.__pydantic_complete__ and Action.__pydantic_complete__ and action.verb == "suspend"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "ok"


def test_a_plain_run_never_tokenizes_a_signature() -> None:
    """pydantic reads every default factory's signature; a built-in's (``list``) is parsed by tokenize,
    whose first use compiles a large regex (:mod:`fakecluster.scenario.factories`)."""
    assert _plain_run()["tokenize"] == 0


def test_a_plain_run_does_not_import_what_only_sweeps_pools_and_patterns_need() -> None:
    """The sweep's figures (:mod:`fakecluster.scenario.sweep`, with :mod:`statistics`) are imported by a
    sweep's run or by a pool before it forks (:func:`fakecluster.workers.play_in_plan_order`); google-re2
    by the first failure-policy rule with message patterns
    (:func:`jobset.controller.failure_policy.any_match_found`)."""
    modules = _plain_run()["modules"]
    assert isinstance(modules, list) and "fakecluster.workers" in modules
    for name in ("fakecluster.scenario.sweep", "statistics", "multiprocessing", "concurrent.futures.process",
                 "re2"):
        assert name not in modules, name
