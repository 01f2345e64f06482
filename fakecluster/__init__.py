"""fakecluster: a deterministic, in-memory Kubernetes cluster on a virtual clock.

The public API is the names in ``__all__`` (guarded by ``tests/test_public_api.py``); everything else is
internal and may change. They are imported on first use (PEP 562), so ``import fakecluster`` — and the
``fakecluster --version`` command line — does not pay for pydantic and the whole cluster until a name is
touched. The cluster knows nothing about JobSet: workloads plug in their API types, admission and
controllers through :mod:`fakecluster.workload_plugin`. See README.md, "Drive a cluster from Python".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakecluster._lazy import lazy_attribute, lazy_dir

if TYPE_CHECKING:
    from fakecluster.api.errors import AlreadyExists, ApiError, Conflict, FieldError, Invalid, NotFound
    from fakecluster.clock import Clock
    from fakecluster.scenario.errors import ScenarioError, ScenarioProblems
    from fakecluster.scenario.loader import load_scenario
    from fakecluster.scenario.runner import ScenarioResult, run_scenario, validate_scenario
    from fakecluster.scenario.trace import TraceEvent
    from fakecluster.session import FakeCluster, MilestoneNotReached

__all__ = [
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

_HOME = {
    "AlreadyExists": "fakecluster.api.errors",
    "ApiError": "fakecluster.api.errors",
    "Conflict": "fakecluster.api.errors",
    "FieldError": "fakecluster.api.errors",
    "Invalid": "fakecluster.api.errors",
    "NotFound": "fakecluster.api.errors",
    "Clock": "fakecluster.clock",
    "FakeCluster": "fakecluster.session",
    "MilestoneNotReached": "fakecluster.session",
    "ScenarioError": "fakecluster.scenario.errors",
    "ScenarioProblems": "fakecluster.scenario.errors",
    "ScenarioResult": "fakecluster.scenario.runner",
    "run_scenario": "fakecluster.scenario.runner",
    "validate_scenario": "fakecluster.scenario.runner",
    "load_scenario": "fakecluster.scenario.loader",
    "TraceEvent": "fakecluster.scenario.trace",
}

_VERSION = {"__version__": "fakecluster._version"}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return lazy_attribute(__name__, _VERSION, globals(), name)
    return lazy_attribute(__name__, _HOME, globals(), name)


def __dir__() -> list[str]:
    return lazy_dir(globals(), __all__)
