"""The seam between the workload-agnostic cluster/scenario layers and a workload such as JobSet.

A workload plugin is found through the ``fakecluster.workloads`` entry point (JobSet registers
``jobset.workload:plugin``). It supplies its API kind, admission and controller, and tells the scenario
layer how its pods and Jobs group into replicated jobs and slots — the only workload knowledge the
runner, milestones and timeline need.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol

from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster
from fakecluster.invariants import Invariant


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a pod or Job sits in its workload: the coordinates milestones and pod references use."""

    owner: str  # workload object name (the JobSet)
    group: str  # replicated job
    job_index: int | None
    pod_index: int | None
    attempt: int | None


@dataclass(frozen=True, slots=True)
class GroupShape:
    """Size of one group (a JobSet replicated job): how many Jobs (``replicas``) and how many pod slots
    (completion indexes) per Job. The one shape type: the plugin reports it, and the scenario layer
    (milestones, pod references, the timeline) reads it as is."""

    replicas: int
    pods_per_job: int
    indexed: bool = True
    """``completionMode: Indexed`` (JobSet's default). A NonIndexed group's pods have no completion
    index; the scenario layer addresses them by ordinal (:mod:`fakecluster.scenario.ordinals`)."""


@dataclass(frozen=True, slots=True)
class GroupWait:
    """An unmet gate a group's Jobs wait on before they are created: ``policy`` (``InOrder``,
    ``dependsOn``, ``suspend``), the ``target`` group and the state it must reach (``Ready``,
    ``Complete``); used by the stuck diagnosis."""

    policy: str
    target: str
    state: str


class WorkloadPlugin(Protocol):
    kind: str
    """The workload's top-level kind (``JobSet``)."""

    def install(self, cluster: Cluster, feature_gates: dict[str, bool], *, latency: float = 0.0) -> Any:
        """Register the kind, its admission chain and start its controller (reconciling ``latency``
        seconds after a watch event); returns the controller."""
        ...

    def restart_controller(self, cluster: Cluster, controller: Any) -> Any:
        """Crash the controller (drop all in-memory state) and start a fresh one."""
        ...

    def shapes(self, manifest: Obj) -> tuple[str, dict[str, GroupShape]]:
        """Object name and the shape of every group, read from a (not yet defaulted) manifest."""
        ...

    def slot_of(self, obj: Obj) -> Slot | None:
        """Slot of a Pod or Job created for the workload, from its labels; None if not the workload's."""
        ...

    def slot_labels(
        self, owner: str, group: str, job_index: int | None, pod_index: int | None
    ) -> dict[str, str]:
        """Labels that select a slot's pods on a real cluster (for exports such as KWOK stages)."""
        ...

    def pod_templates(self, manifest: Obj) -> dict[str, Obj]:
        """Each group's pod template, read from a (not yet defaulted) manifest."""
        ...

    def current_attempt(self, workload_obj: Obj) -> int:
        """Restart attempt whose pods a pod reference addresses (JobSet: ``status.restarts``)."""
        ...

    def invariants(self) -> list[Invariant]:
        """A fresh set of the workload's own invariants, checked in every run beside the cluster's."""
        ...

    def creation_waits(self, workload_obj: Obj) -> dict[str, list[GroupWait]]:
        """Group -> the unmet gates its Jobs' creation waits on (the stuck diagnosis asks)."""
        ...

    def finished(self, workload_obj: Obj) -> bool:
        """Whether the object reached a terminal state (JobSet: Completed or Failed is True)."""
        ...


_LOADED: dict[str, WorkloadPlugin] = {}
"""Plugins found so far, by name: looking entry points up reads every installed distribution's metadata
(1.3 ms each time here, and it was done once per scenario run and per sweep seed), and a loaded entry
point is a module attribute, the same object whenever it is loaded. A name not found is looked up again
next time."""


def load_plugin(name: str = "jobset") -> WorkloadPlugin:
    """The installed plugin called ``name`` (entry points only: the cluster never imports a workload)."""
    plugin = _LOADED.get(name)
    if plugin is not None:
        return plugin
    for ep in entry_points(group="fakecluster.workloads"):
        if ep.name == name:
            plugin = _LOADED[name] = ep.load()
            return plugin
    raise LookupError(
        f"no fakecluster workload plugin named {name!r} is installed "
        "(run `pip install -e .` in the project root)"
    )
