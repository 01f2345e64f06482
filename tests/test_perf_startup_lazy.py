"""What importing fakecluster leaves for later, and that later it is all there (the start-up pass of
issue 11, beside ``tests/test_startup_cost.py``, which looks at a plain run).

- freezegun (with asyncio, unittest, dateutil, sqlite3 and uuid) is imported by the first freeze's start
  or real-clock read (:mod:`fakecluster.wallclock_freeze`), not by importing the runner; every run still
  starts the freeze, and ``fakecluster run`` before its first scenario.
- :mod:`fakecluster.scenario` and :mod:`fakecluster.api` name their modules' names on first use, so
  reading scenario files (the pytest plugin's collection) imports neither pydantic nor the cluster, and
  loading one builds no API model.
- The pytest plugin, loaded by every pytest run of an environment with fakecluster installed, imports
  nothing heavy until a scenario item runs or the fixture is used.

Each case runs in a fresh interpreter, as a user's process starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scenario_files import ROOT

SCENARIO = "scenarios/driver-first/spark-driver-first.yaml"


def _fresh(code: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_importing_the_runner_and_the_cli_does_not_import_freezegun() -> None:
    result = _fresh("""
import json, sys
import fakecluster.cli, fakecluster.scenario.runner, fakecluster.cluster, jobset.workload, fakecluster.session
heavy = ("freezegun", "asyncio", "dateutil", "sqlite3")
print(json.dumps({"loaded": [m for m in heavy if m in sys.modules]}))
""")
    assert result["loaded"] == []


def test_a_run_still_freezes_stray_clock_reads_on_virtual_time() -> None:
    """The first run imports freezegun and starts the freeze; a clock read in a run sees the virtual
    instant (the epoch plus virtual seconds), and outside it the real clock."""
    result = _fresh(f"""
import datetime, json, sys, time
from fakecluster import wallclock_freeze
from fakecluster.scenario.runner import run_scenario
assert "freezegun" not in sys.modules
started = wallclock_freeze.real_perf_counter()
outcome = run_scenario("{SCENARIO}")
with wallclock_freeze.virtual_time():  # what a run does around its play
    wallclock_freeze.move_to(90.0)
    inside = datetime.datetime.now(datetime.UTC).isoformat()
print(json.dumps({{"passed": outcome.passed, "started": wallclock_freeze._started, "inside": inside,
                  "outside": datetime.datetime.now(datetime.UTC).year,
                  "real": wallclock_freeze.real_perf_counter() >= started,
                  "freezegun": "freezegun.api" in sys.modules}}))
""")
    assert result["passed"] and result["started"] and result["freezegun"] and result["real"]
    assert result["inside"] == "2025-01-01T00:01:30+00:00"  # fakecluster.clock.EPOCH + 90 s
    assert result["outside"] != 2025


def test_the_command_line_starts_the_freeze_before_its_first_run() -> None:
    """``fakecluster run`` starts the freeze with its imports (``cli.import_for_good``), before a worker
    pool would fork, so no run or worker pays the walk of the loaded modules."""
    result = _fresh("""
import json, sys
from fakecluster import cli, wallclock_freeze
before = "freezegun" in sys.modules
cli.import_for_good()
print(json.dumps({"before": before, "after": wallclock_freeze._started and "freezegun.api" in sys.modules}))
""")
    assert result == {"before": False, "after": True}


def test_a_module_like_object_goes_to_freezegun_s_own_walk_on_the_first_start() -> None:
    """freezegun's own walk is kept before the start swaps ours in (with freezegun imported by that start):
    taken during the swap it would be ours, and a module-like object in ``sys.modules`` would recurse."""
    result = _fresh("""
import json, sys, time, types
class ModuleLike(types.ModuleType):
    pass
holder = ModuleLike("tests_fake_module_like")
holder.clock = time.monotonic
sys.modules[holder.__name__] = holder
from fakecluster import wallclock_freeze
assert "freezegun" not in sys.modules
wallclock_freeze.freeze_once()
import freezegun.api
print(json.dumps({"swapped": holder.clock is not freezegun.api.real_monotonic,
                  "fake": getattr(holder.clock, "__module__", "") == "freezegun.api"}))
""")
    assert result == {"swapped": True, "fake": True}


# ---------------------------------------------------------------- the scenario package

def test_reading_scenario_files_imports_neither_pydantic_nor_the_cluster() -> None:
    """What the pytest plugin's collection and ``fakecluster list``'s selection import (finding files,
    peeking at their top level, seeds, tags), and :mod:`~fakecluster.scenario.errors`: the package's
    names wait for their first use (PEP 562)."""
    result = _fresh(f"""
import json, sys
from pathlib import Path
from fakecluster.scenario.discovery import manifest_kind, peek
from fakecluster.scenario.selection import sweep_seeds
from fakecluster.scenario.errors import ScenarioError
data = peek(Path("{SCENARIO}"))
heavy = ("pydantic", "fakecluster.cluster", "fakecluster.scenario.format", "fakecluster.api")
print(json.dumps({{"kind": manifest_kind(data), "name": data["name"],
                  "loaded": [m for m in heavy if m in sys.modules]}}))
""")
    assert result["kind"] is None and result["loaded"] == []
    assert str(result["name"]).startswith("spark driver Ready before executors")


def test_loading_a_scenario_does_not_import_the_cluster() -> None:
    """The loader (and ``fakecluster list``) validates the file and reads the JobSets' shapes; the
    shape type comes with the workload plugin, and with it the cluster, when a shape is first built."""
    result = _fresh(f"""
import json, sys
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.milestones import workload_shapes
scenario = load_scenario("{SCENARIO}")
before = "fakecluster.cluster" in sys.modules
shapes = workload_shapes(scenario.manifests())
from fakecluster.workload_plugin import GroupShape
print(json.dumps({{"before": before, "shapes": {{js: {{rj: [type(s) is GroupShape, s.replicas, s.pods_per_job]
                  for rj, s in g.items()}} for js, g in shapes.items()}}}}))
""")
    assert result["before"] is False
    shapes = result["shapes"]
    assert isinstance(shapes, dict) and shapes
    assert all(kind for group in shapes.values() for kind, *_ in group.values())


PACKAGE_NAMES = """
import importlib, json
import {package} as package
from {package} import *  # noqa: F403
from {package} import {submodule}
same = {{name: getattr(package, name) is globals()[name]
        is getattr(importlib.import_module(home), name.removeprefix("EventsV1"))
        for name, home in package._HOME.items()}}
try:
    package.no_such_name
    unknown = "no error"
except AttributeError as err:
    unknown = str(err)
print(json.dumps({{"same": same, "all": sorted(package.__all__), "home": sorted(package._HOME),
                  "dir": set(package.__all__) <= set(dir(package)), "unknown": unknown,
                  "submodule": {submodule}.__name__}}))
"""


def _package_names(package: str, submodule: str) -> dict[str, object]:
    """``from <package> import *`` and attribute access give each name of ``__all__`` from its module, as
    eager imports did; an unknown name is an AttributeError, and submodules import."""
    result = _fresh(PACKAGE_NAMES.format(package=package, submodule=submodule))
    assert result["all"] == result["home"]
    assert isinstance(result["same"], dict) and all(result["same"].values())
    assert result["dir"] is True and result["submodule"] == f"{package}.{submodule}"
    assert result["unknown"] == f"module {package!r} has no attribute 'no_such_name'"
    return result


def test_the_scenario_package_names_are_those_of_their_modules() -> None:
    _package_names("fakecluster.scenario", "runner")


# ---------------------------------------------------------------- the API package

def test_a_run_does_not_import_the_events_v1_models_and_the_api_still_names_them() -> None:
    """events.k8s.io/v1 ``Event`` and ``EventSeries``: the API server stores that kind without a model,
    so :mod:`fakecluster.api` imports them on first use; they are the same classes, in ``*`` and ``dir``."""
    result = _fresh(f"""
import json, sys
from fakecluster.cli import main
status = main(["run", "{SCENARIO}", "-q"])
during = "fakecluster.api.events" in sys.modules
import fakecluster.api as api
from fakecluster.api import *  # noqa: F403
from fakecluster.api import events
print(json.dumps({{"status": status, "during": during,
                  "same": [EventsV1Event is events.Event is api.EventsV1Event,
                           EventsV1EventSeries is events.EventSeries],
                  "dir": {{"EventsV1Event", "EventsV1EventSeries"}} <= set(dir(api))}}))
""")
    assert result == {"status": 0, "during": False, "same": [True, True], "dir": True}


def test_the_api_package_names_are_those_of_their_modules() -> None:
    _package_names("fakecluster.api", "validation")


def test_loading_a_scenario_builds_no_api_model() -> None:
    """The scenario format uses :mod:`fakecluster.api.validation`'s name and label checks, not the
    models: ``fakecluster list`` and the loader import no model module of :mod:`fakecluster.api`."""
    result = _fresh(f"""
import json, sys
from fakecluster.scenario.loader import load_scenario
scenario = load_scenario("{SCENARIO}")
models = ("fakecluster.api.core", "fakecluster.api.batch", "fakecluster.api.meta", "jobset")
print(json.dumps({{"name": scenario.name, "loaded": [m for m in models if m in sys.modules]}}))
""")
    assert result["loaded"] == [] and str(result["name"]).startswith("spark driver")


# ---------------------------------------------------------------- the pytest plugin

HEAVY = ("pydantic", "yaml", "freezegun", "fakecluster.api", "fakecluster.cluster",
         "fakecluster.scenario.runner", "fakecluster.session", "jobset")

RECORDER = """
import json, sys

def pytest_sessionfinish(session):
    heavy = {heavy!r}
    loaded = sorted(m for m in sys.modules if m.startswith(heavy))
    with open("loaded.json", "w") as out:
        json.dump({{"loaded": loaded, "plugin": "fakecluster.pytest_plugin" in sys.modules}}, out)
"""


def _pytest_session(tmp_path: Path, *args: str) -> dict[str, object]:
    """Run pytest in ``tmp_path`` (its own rootdir, the plugin loaded by its entry point) and return what
    was imported by the end of the session."""
    (tmp_path / "conftest.py").write_text(RECORDER.format(heavy=HEAVY))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, object] = json.loads((tmp_path / "loaded.json").read_text())
    result["stdout"] = done.stdout
    return result


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    """Every pytest run of an environment with fakecluster installed loads the plugin (a ``pytest11``
    entry point)."""
    result = _fresh(f"""
import json, sys
import pytest
import fakecluster.pytest_plugin
heavy = {HEAVY!r}
print(json.dumps({{"loaded": sorted(m for m in sys.modules if m.startswith(heavy)),
                  "fakecluster": sorted(m for m in sys.modules if m.startswith("fakecluster"))}}))
""")
    assert result == {"loaded": [],
                      "fakecluster": ["fakecluster", "fakecluster._lazy", "fakecluster.pytest_plugin"]}


def test_a_user_session_without_scenarios_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert 1 + 1 == 2\n")
    result = _pytest_session(tmp_path)
    assert result["plugin"] is True and result["loaded"] == []
    assert "1 passed" in str(result["stdout"])


def test_collecting_scenario_files_reads_them_without_the_cluster(tmp_path: Path) -> None:
    """Collection (``--collect-only``, an IDE's test discovery, ``-k`` that deselects them) only peeks at
    each file's top level: pydantic, the models and the cluster wait for the first scenario item that
    runs."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "one.yaml").write_text((ROOT / SCENARIO).read_text())
    collected = _pytest_session(tmp_path, "--collect-only")
    loaded = collected["loaded"]
    assert isinstance(loaded, list) and "yaml" in loaded  # the peek reads YAML, and nothing else heavy
    assert [m for m in loaded if not m.startswith("yaml")] == []
    assert "scenarios/one.yaml::one" in str(collected["stdout"])
    ran = _pytest_session(tmp_path)
    loaded = ran["loaded"]
    assert "1 passed" in str(ran["stdout"]) and isinstance(loaded, list)
    assert "fakecluster.scenario.runner" in loaded and "pydantic" in loaded
