"""Checks for the version 1.1 expectation kinds: ``gap``, ``stuck`` and object assertions.

Pure functions of the expectation and the run's :class:`~fakecluster.scenario.expectations.RunResult`,
like the version-1 checks in :mod:`fakecluster.scenario.expectations` (which dispatches here). Object
assertions address pods by pod reference (``workers[0/1]``: the current attempt's pod in that slot, as
actions do), Jobs and Services by name, and EndpointSlices by the name of their Service (its first slice,
the oldest, through the ``kubernetes.io/service-name`` label that ``pkg/controller/endpointslice`` sets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fakecluster.api.objects import Obj
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.format import OBJECT_CHECK_KINDS
from fakecluster.scenario.format_v11 import Gap, Stuck
from fakecluster.scenario.matching import subset_match
from fakecluster.scenario.milestones import Shapes, parse_pod_ref
from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.results import Failure, RunResult
from fakecluster.scenario.trace import Snapshot

if TYPE_CHECKING:
    from fakecluster.workload_plugin import WorkloadPlugin

__all__ = ["SERVICE_NAME_LABEL", "check_gap", "check_stuck", "find_pod", "object_problems"]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"
"""``discovery.LabelServiceName``: the label tying an EndpointSlice to its Service."""


def check_gap(index: int, head: str, gap: Gap, result: RunResult, shapes: Shapes) -> Failure | None:
    related = [gap.from_.text, gap.to.text]
    start, end = gap.from_.find(result.trace, shapes), gap.to.find(result.trace, shapes)
    missing = [f"'{m}'" for m, e in ((gap.from_, start), (gap.to, end)) if e is None]
    if missing or start is None or end is None:
        ended = format_seconds(result.virtual_end)
        return Failure(index, f"{head}: {', '.join(missing)} never happened (run ended at {ended})", related)
    between = end.time - start.time
    span = (
        f"'{gap.from_}' at {format_seconds(start.time)}, '{gap.to}' at {format_seconds(end.time)}:"
        f" gap {format_seconds(between)}"
    )
    if between < gap.min:
        return Failure(index, f"{head}: {span}, less than the minimum {format_seconds(gap.min)}", related)
    if gap.max is not None and between > gap.max:
        return Failure(index, f"{head}: {span}, more than the maximum {format_seconds(gap.max)}", related)
    return None


def check_stuck(index: int, head: str, stuck: Stuck, result: RunResult) -> Failure | None:
    if not result.stuck:
        ended = format_seconds(result.virtual_end)
        return Failure(index, f"{head}: the run did not end stuck (every JobSet finished; ended at {ended})")
    missing = [item for item in stuck.contains if item not in result.diagnosis]
    if missing:
        shown = ", ".join(repr(m) for m in missing)
        return Failure(index, f"{head}: the stuck diagnosis does not contain {shown} (it is printed below)")
    return None


def object_problems(
    key: str, by_name: Mapping[str, Mapping[str, Any]], snapshot: Snapshot, plugin: WorkloadPlugin | None,
    ordinals: PodOrdinals | None = None,
) -> list[str]:
    """One line per mismatch of the ``pods``/``jobs``/``services``/``endpointslices`` assertions."""
    problems: list[str] = []
    for name, subset in by_name.items():
        target, missing = _target(key, name, snapshot, plugin, ordinals)
        if target is None:
            problems.append(f"{key}.{name}: {missing}")
            continue
        problems.extend(f"{key}.{name}: {p}" for p in subset_match(dict(subset), target))
    return problems


def _target(
    key: str, name: str, snapshot: Snapshot, plugin: WorkloadPlugin | None, ordinals: PodOrdinals | None
) -> tuple[Obj | None, str]:
    if key == "pods":
        return _pod(name, snapshot, plugin, ordinals)
    if key == "endpointslices":
        slices = [
            s for s in snapshot.of_kind("EndpointSlice")
            if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name
        ]  # fmt: skip
        return (slices[0], "") if slices else (None, f"Service '{name}' has no EndpointSlice")
    kind = OBJECT_CHECK_KINDS[key]
    target = snapshot.get(kind, name)
    if target is not None:
        return target, ""
    have = ", ".join(str((o.get("metadata") or {}).get("name")) for o in snapshot.of_kind(kind)) or "none"
    return None, f"no {kind} named '{name}' exists (have: {have})"


def _pod(
    name: str, snapshot: Snapshot, plugin: WorkloadPlugin | None, ordinals: PodOrdinals | None
) -> tuple[Obj | None, str]:
    """A pod reference resolves to its slot's pod; anything else is taken as a pod's own name."""
    if "[" not in name or plugin is None:
        pod = snapshot.get("Pod", name)
        return pod, "" if pod is not None else f"no pod named '{name}' exists"
    pod = find_pod(snapshot, plugin, name, ordinals)
    return pod, "" if pod is not None else "no pod exists in that slot"


def find_pod(
    snapshot: Snapshot, plugin: WorkloadPlugin, reference: str, ordinals: PodOrdinals | None = None
) -> Obj | None:
    """The pod in a slot: the current attempt's (its JobSet's ``status.restarts``; the latest attempt
    seen if the JobSet is gone), preferring a live pod, then the newest (store order is creation order).
    A NonIndexed pod's slot is its ordinal (``ordinals``)."""
    ref = parse_pod_ref(reference)
    slot_of = ordinals.slot if ordinals is not None else plugin.slot_of
    in_slot: list[tuple[int, Obj]] = []
    for pod in snapshot.of_kind("Pod"):
        slot = slot_of(pod)
        if (
            slot is not None
            and (ref.jobset is None or slot.owner == ref.jobset)
            and slot.group == ref.replicated_job
            and slot.job_index == ref.job_index
            and slot.pod_index == ref.pod_index
        ):
            in_slot.append((slot.attempt or 0, pod))
    if not in_slot:
        return None
    owner = plugin.slot_of(in_slot[0][1])
    workload = snapshot.get(plugin.kind, owner.owner) if owner is not None else None
    attempt = plugin.current_attempt(workload) if workload is not None else max(a for a, _ in in_slot)
    pods = [p for a, p in in_slot if a == attempt]
    live = [p for p in pods if not _finished(p)]
    chosen = live or pods
    return chosen[-1] if chosen else None


def _finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or bool(
        pod["metadata"].get("deletionTimestamp")
    )
