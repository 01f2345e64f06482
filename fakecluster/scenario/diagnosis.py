"""The stuck diagnosis: for every unfinished replicated job, what it waits for, down to pods and programs.

A run that ends with a JobSet neither Completed nor Failed is *stuck* (scenario format 1.1, ``stuck``).
The timeline says when things happened; this says why nothing more will: a replicated job whose Jobs
were never created names the gate (InOrder predecessor, ``dependsOn`` target, suspension) and that
target's state (``broker pods Ready 0/1``); a Job that exists names its counts and conditions; each pod
that is not finished says why (Unschedulable with the scheduler's message, a waiting container's reason,
a readiness probe that never succeeds, restarts and the last exit code, and, when the network component
can tell, what its program is doing). Then the next pending events of the clock, the evidence that only
waiting is left.

It reads only the final snapshot (wire-form objects), the workload plugin (slots, attempts, creation
gates) and, optionally, a per-pod program-state callback, so it is a pure function unit tests can feed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from fakecluster.api.objects import Obj, condition_true, get_condition
from fakecluster.clock import Timer
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.milestones import Shapes
from fakecluster.scenario.trace import Snapshot
from fakecluster.workload_plugin import GroupShape, GroupWait, WorkloadPlugin

__all__ = ["ProgramState", "describe_pending", "describe_pod", "describe_program", "diagnose"]

ProgramState = Callable[[Obj], "str | None"]
"""Pod -> a one-line state of its program (``connecting to x:8050, attempt 4, last error refused``)."""

_MAX_NAMES = 3
_JOB_CONDITIONS = ("Suspended", "FailureTarget", "SuccessCriteriaMet", "Failed", "Complete")


def diagnose(
    snapshot: Snapshot,
    plugin: WorkloadPlugin,
    shapes: Shapes,
    *,
    ended: str,
    pending: Sequence[str] = (),
    program_state: ProgramState | None = None,
) -> str:
    """The diagnosis text of a stuck run (empty if every workload object finished)."""
    lines: list[str] = []
    for workload in snapshot.of_kind(plugin.kind):
        if plugin.finished(workload):
            continue
        lines.extend(_workload(workload, snapshot, plugin, shapes, ended, program_state))
    if not lines:
        return ""
    if pending:
        lines.append("next pending events:")
        lines.extend(f"  {event}" for event in pending)
    else:
        lines.append("no pending events: nothing was left to happen")
    return "\n".join(lines)


def _workload(  # noqa: PLR0917 -- one private call site; the pieces are what the diagnosis reads
    workload: Obj,
    snapshot: Snapshot,
    plugin: WorkloadPlugin,
    shapes: Shapes,
    ended: str,
    program_state: ProgramState | None,
) -> list[str]:
    meta = workload["metadata"]
    name = meta["name"]
    true = [
        c["type"] for c in (workload.get("status") or {}).get("conditions") or () if c.get("status") == "True"
    ]
    lines = [
        f"{plugin.kind} {meta.get('namespace', 'default')}/{name} is neither Completed nor Failed ({ended})"
    ]
    if true:
        lines[-1] += f"; conditions True: {', '.join(true)}"
    if meta.get("deletionTimestamp"):
        lines.append("  it is being deleted")
    attempt = plugin.current_attempt(workload)
    children = _children(snapshot, plugin, name, attempt)
    waits = plugin.creation_waits(workload)
    for group, shape in (shapes.get(name) or {}).items():
        jobs, pods = children.get(group, ([], []))
        if len(jobs) == shape.replicas and all(condition_true(j, "Complete") for j in jobs):
            continue
        lines.append(f"  replicated job {group} ({_shape(shape)}):")
        if not jobs:
            lines.append(
                f"    no Job created: {_gates(waits.get(group, []), children, shapes.get(name) or {})}"
            )
            continue
        lines.extend(_jobs(jobs, pods, shape, program_state))
    return lines


def _shape(shape: GroupShape) -> str:
    return f"{shape.replicas} job{'s' if shape.replicas != 1 else ''} x {shape.pods_per_job} pod" + (
        "s" if shape.pods_per_job != 1 else ""
    )


def _children(
    snapshot: Snapshot, plugin: WorkloadPlugin, owner: str, attempt: int
) -> dict[str, tuple[list[Obj], list[Obj]]]:
    """Group -> (Jobs, pods) of the current attempt, in store (creation) order."""
    out: dict[str, tuple[list[Obj], list[Obj]]] = {}
    for kind, position in (("Job", 0), ("Pod", 1)):
        for obj in snapshot.of_kind(kind):
            slot = plugin.slot_of(obj)
            if slot is None or slot.owner != owner or (slot.attempt or 0) != attempt:
                continue
            out.setdefault(slot.group, ([], []))[position].append(obj)
    return out


def _gates(
    waits: Iterable[GroupWait],
    children: Mapping[str, tuple[list[Obj], list[Obj]]],
    shapes: Mapping[str, GroupShape],
) -> str:
    parts: list[str] = []
    for wait in waits:
        if wait.policy == "suspend":
            parts.append("the JobSet is suspended")
            continue
        target = f"{wait.policy} waits for {wait.target} {wait.state}"
        shape = shapes.get(wait.target)
        if shape is not None:
            jobs, pods = children.get(wait.target, ([], []))
            target += f"; {_target_state(wait, shape, jobs, pods)}"
        parts.append(target)
    return "; ".join(parts) if parts else "no gate is closed (the controller has not created it yet)"


def _target_state(wait: GroupWait, shape: GroupShape, jobs: list[Obj], pods: list[Obj]) -> str:
    """``broker pods Ready 0/1`` (or ``Succeeded`` for a Complete gate) over the target's pod slots."""
    slots = shape.replicas * shape.pods_per_job
    if wait.state == "Complete":
        done = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        complete = sum(1 for j in jobs if condition_true(j, "Complete"))
        jobs_done = f"jobs Complete {complete}/{shape.replicas}"
        return f"{wait.target} pods Succeeded {min(done, slots)}/{slots}, {jobs_done}"
    ready = sum(1 for p in pods if condition_true(p, "Ready") and not p["metadata"].get("deletionTimestamp"))
    return f"{wait.target} pods Ready {min(ready, slots)}/{slots}"


def _jobs(
    jobs: list[Obj], pods: list[Obj], shape: GroupShape, program_state: ProgramState | None
) -> list[str]:
    lines: list[str] = []
    if len(jobs) < shape.replicas:
        lines.append(f"    {len(jobs)} of {shape.replicas} Jobs exist")
    for job in jobs:
        if condition_true(job, "Complete"):
            continue
        job_name = job["metadata"]["name"]
        status = job.get("status") or {}
        counts = ", ".join(f"{k} {status.get(k) or 0}" for k in ("active", "ready", "succeeded", "failed"))
        line = f"    Job {job_name}: {counts}"
        conditions = [c for c in _JOB_CONDITIONS if condition_true(job, c)]
        if conditions:
            reason = (get_condition(job, conditions[0]) or {}).get("reason")
            line += f"; {', '.join(conditions)}" + (f" ({reason})" if reason else "")
        lines.append(line)
        own = [p for p in pods if _owned_by(p, job_name)]
        unfinished = [p for p in own if (p.get("status") or {}).get("phase") != "Succeeded"]
        if not own and status.get("active"):
            lines.append("      its pods are not in the snapshot")
        lines.extend(_grouped(unfinished, program_state))
    return lines


def _owned_by(pod: Obj, job_name: str) -> bool:
    return any(
        o.get("kind") == "Job" and o.get("name") == job_name
        for o in pod["metadata"].get("ownerReferences") or ()
    )


def _grouped(pods: list[Obj], program_state: ProgramState | None) -> list[str]:
    """One line per distinct description, naming up to three pods."""
    by_text: dict[str, list[str]] = {}
    for pod in pods:
        by_text.setdefault(describe_pod(pod, program_state), []).append(pod["metadata"]["name"])
    lines = []
    for text, names in by_text.items():
        shown = ", ".join(names[:_MAX_NAMES]) + (
            f" (+{len(names) - _MAX_NAMES} more)" if len(names) > _MAX_NAMES else ""
        )
        lines.append(f"      pod{'s' if len(names) > 1 else ''} {shown}: {text}")
    return lines


def describe_pod(pod: Obj, program_state: ProgramState | None = None) -> str:
    """Why a pod is not Ready/finished, in the words ``kubectl describe pod`` would use."""
    status = pod.get("status") or {}
    phase = status.get("phase") or "Pending"
    parts = [phase]
    if pod["metadata"].get("deletionTimestamp"):
        parts.append("terminating")
    scheduled = get_condition(pod, "PodScheduled")
    if phase == "Pending" and scheduled is not None and scheduled.get("status") == "False":
        parts.append(
            f"{scheduled.get('reason', 'not scheduled')}: {scheduled.get('message', '')}".rstrip(": ")
        )
    elif phase == "Pending" and not (pod.get("spec") or {}).get("nodeName"):
        parts.append("not scheduled yet")
    parts.extend(_container_states(status))
    if phase == "Running":
        parts.append("Ready" if condition_true(pod, "Ready") else f"not Ready: {_readiness(pod)}")
    text = ", ".join(parts)
    state = program_state(pod) if program_state is not None else None
    if state:
        text += f"; {state}"
    return text


def _container_states(status: Obj) -> list[str]:
    parts: list[str] = []
    for cs in status.get("containerStatuses") or ():
        state = cs.get("state") or {}
        waiting = state.get("waiting")
        if waiting:
            parts.append(f"container {cs.get('name')} waiting ({waiting.get('reason', 'unknown')})")
        restarts = cs.get("restartCount") or 0
        if restarts:
            last = ((cs.get("lastState") or {}).get("terminated") or {}).get("exitCode")
            parts.append(
                f"{cs.get('name')} restarted {restarts}x"
                + (f", last exit code {last}" if last is not None else "")
            )
    return parts


def _readiness(pod: Obj) -> str:
    """The probes that decide readiness, as written in the pod spec."""
    probes = []
    for container in (pod.get("spec") or {}).get("containers") or ():
        for key in ("startupProbe", "readinessProbe"):
            probe = container.get(key)
            if isinstance(probe, Mapping):
                probes.append(f"{key} {_probe(probe)}")
    return "; ".join(probes) if probes else "no readiness probe"


def _probe(probe: Mapping[str, Any]) -> str:
    period = probe.get("periodSeconds", 10)
    if isinstance(probe.get("tcpSocket"), Mapping):
        what = f"tcpSocket :{probe['tcpSocket'].get('port')}"
    elif isinstance(probe.get("httpGet"), Mapping):
        what = f"httpGet {probe['httpGet'].get('path', '/')} :{probe['httpGet'].get('port')}"
    elif isinstance(probe.get("exec"), Mapping):
        what = f"exec {' '.join(str(c) for c in probe['exec'].get('command') or ())}"
    elif isinstance(probe.get("grpc"), Mapping):
        what = f"grpc :{probe['grpc'].get('port')}"
    else:
        what = "(no handler)"
    return f"{what} every {period}s"


def describe_program(state: Any) -> str | None:
    """One line for a pod's program from the network's read-only view
    (:class:`fakecluster.network.network.ProgramState`): its state, the ports it listens on, what its
    ``waitFor`` still lacks, and per connect target the attempt and the last error."""
    if state is None:
        return None
    ports = ", ".join(f":{p}" for p in state.listening) or "nothing"
    parts = [f"program {state.state}, listening on {ports}"]
    if state.waiting_for:
        parts.append(f"waiting for {state.waiting_for}")
    for target in state.targets:
        if target.connected:
            parts.append(f"connected to {target.target}")
        elif target.gave_up:
            parts.append(f"gave up on {target.target} after attempt {target.attempt}")
        else:
            text = f"connecting to {target.target} attempt {target.attempt}"
            parts.append(text + (f", last error {target.last_error}" if target.last_error else ""))
    if state.gave_up:
        parts.append(f"gave up: {state.gave_up}")
    return ", ".join(parts)


def describe_pending(timers: Sequence[Timer]) -> list[str]:
    """``<time>  <callback>(<args>)`` for each of the next clock events."""
    return [
        f"{format_seconds(t.when):>9}  {_callable(t.callback)}({', '.join(_arg(a) for a in t.args[:3])})"
        for t in timers
    ]


def _callable(callback: Any) -> str:
    name = getattr(callback, "__qualname__", None) or getattr(
        getattr(callback, "func", None), "__qualname__", None
    )
    return str(name or type(callback).__name__)


def _arg(value: Any) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("metadata"), Mapping):
        return f"{value.get('kind', 'object')} {value['metadata'].get('name')}"
    if isinstance(value, str | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    for attr in ("name", "key"):
        inner = getattr(value, attr, None)
        if isinstance(inner, str):
            return f"{type(value).__name__} {inner}"
    return type(value).__name__
