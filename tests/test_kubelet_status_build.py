"""The kubelet's incremental status build against a full one, over many pod states.

:func:`~fakecluster.kubelet.pod_worker.build_status` edits only what changed: it reuses the container
statuses and conditions it built last, skips the counters of ``getPhase`` for a pod with one container,
and takes short ways for the usual shapes. :func:`full_status` here builds the same ``PodStatus`` the
long way, from nothing but the worker's state and the stored status, as ``generateAPIPodStatus``
(``pkg/kubelet/kubelet_pods.go``), ``getPhase`` and the condition generators of
``pkg/kubelet/status/generate.go`` do. Hypothesis drives a worker through random container and pod
states (and other writers' edits of the stored status); after every step the two must serialize to the
very same JSON: same keys, same order, same values.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj, clone
from fakecluster.kubelet.pod_timings import NO_JITTER, PodTimings
from fakecluster.kubelet.pod_worker import (
    INIT,
    KUBELET_CONDITIONS,
    RUNNING,
    SIDECAR,
    TERMINAL_PHASES,
    TERMINATED,
    WAITING,
    ContainerRun,
    PodWorker,
    build_status,
    image_id,
)

STAMPS = [f"2025-01-01T00:00:{s:02d}Z" for s in range(60)]


# ---------------------------------------------------------------------------------------------- full build
def full_phase(worker: PodWorker) -> str:
    """``getPhase`` over every container, with all its counters: the worker's general path, which the
    lone-container short way must agree with."""
    if worker.failed_reason is not None:
        return "Failed"
    return worker._counted_phase()


def _names(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


def full_owned_conditions(worker: PodWorker, phase: str, api_conditions: list[Obj]) -> list[tuple[Any, ...]]:
    """(type, status, reason, message) of the kubelet's four conditions, in the order it writes them."""
    terminal = phase in TERMINAL_PHASES
    out: list[tuple[Any, ...]] = [
        ("PodReadyToStartContainers", worker.sandbox_ready and not terminal, None, None)]
    if phase == "Succeeded":
        out.append(("Initialized", True, "PodCompleted", None))
    else:
        incomplete = [c.name for c in worker.init_containers
                      if not (c.started if c.role == SIDECAR else c.state == TERMINATED and c.exit_code == 0)]
        if incomplete and not any(c.ever_ran for c in worker.containers):
            out.append(("Initialized", False, "ContainersNotInitialized",
                        f"containers with incomplete status: {_names(incomplete)}"))
        else:
            out.append(("Initialized", True, None, None))
    if terminal:
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        return [*out, ("Ready", False, reason, None), ("ContainersReady", False, reason, None)]
    unready = [c.name for c in worker.init_containers if c.role == SIDECAR and not c.ready]
    unready += [c.name for c in worker.containers if not c.ready]
    if unready:
        message = f"containers with unready status: {_names(unready)}"
        return [*out, ("Ready", False, "ContainersNotReady", message),
                ("ContainersReady", False, "ContainersNotReady", message)]
    messages = []
    for gate in worker.readiness_gates:
        found = [c for c in api_conditions if c.get("type") == gate]
        if not found:
            messages.append(f'corresponding condition of pod readiness gate "{gate}" does not exist.')
        elif found[0].get("status") != "True":
            messages.append(
                f'the status of pod readiness gate "{gate}" is not "True", but {found[0].get("status")}')
    ready = (("Ready", False, "ReadinessGatesNotReady", ", ".join(messages)) if messages
             else ("Ready", True, None, None))
    return [*out, ready, ("ContainersReady", True, None, None)]


def full_conditions(worker: PodWorker, phase: str, old_conditions: list[Obj], stamp: str) -> list[Obj]:
    """Every kubelet-owned condition built afresh (its ``lastTransitionTime`` kept while its status is
    the previous one's), then the other owners' ones, in order."""
    previous = {c.get("type"): c for c in old_conditions}
    out = []
    for cond_type, status, reason, message in full_owned_conditions(worker, phase, old_conditions):
        text = "True" if status else "False"
        before = previous.get(cond_type)
        condition: Obj = {"type": cond_type, "status": text, "lastProbeTime": None}
        if reason:
            condition["reason"] = reason
        if message:
            condition["message"] = message
        condition["lastTransitionTime"] = (before.get("lastTransitionTime")
                                           if before is not None and before.get("status") == text else stamp)
        out.append(condition)
    return out + [clone(c) for c in old_conditions if c.get("type") not in KUBELET_CONDITIONS]


def full_container_status(c: ContainerRun) -> Obj:
    if c.state == RUNNING:
        state: Obj = {"running": {"startedAt": c.started_at}}
    elif c.state == TERMINATED:
        state = {"terminated": clone(c.terminated)}
    else:
        waiting: Obj = {"reason": c.waiting_reason}
        if c.waiting_message:
            waiting["message"] = c.waiting_message
        state = {"waiting": waiting}
    out: Obj = {"name": c.name, "image": c.image, "imageID": image_id(c.image) if c.ever_ran else "",
                "ready": c.ready, "started": c.started, "restartCount": c.restart_count, "state": state,
                "lastState": {} if c.last_terminated is None else {"terminated": clone(c.last_terminated)}}
    if c.container_id:
        out["containerID"] = c.container_id
    return out


def full_status(worker: PodWorker, old: Obj, stamp: str) -> Obj:
    """``generateAPIPodStatus``: every field the kubelet owns built afresh onto a copy of ``old``."""
    status = clone(old)
    phase = old.get("phase") if old.get("phase") in TERMINAL_PHASES else full_phase(worker)
    status["phase"] = phase
    status["conditions"] = full_conditions(worker, phase, old.get("conditions") or [], stamp)
    if worker.pod_ips is not None:
        status.update(hostIP=worker.host_ip, hostIPs=[{"ip": worker.host_ip}], podIP=worker.pod_ip,
                      podIPs=[{"ip": worker.pod_ip}], startTime=worker.start_time)
    if worker.failed_reason is not None:
        status["reason"], status["message"] = worker.failed_reason
    if worker.init_containers:
        status["initContainerStatuses"] = [full_container_status(c) for c in worker.init_containers]
    regular = sorted(worker.containers, key=lambda c: c.name)
    status["containerStatuses"] = [full_container_status(c) for c in regular]
    return status


# ---------------------------------------------------------------------------------------------- states
def make_worker(data: st.DataObject) -> tuple[PodWorker, Obj]:
    """A worker of a drawn shape (most draws: the usual pod, one container, nothing else) and its pod."""
    shape = data.draw(st.sampled_from(["lone", "lone", "lone", "any"]))
    if shape == "lone":
        inits: list[Obj] = []
        regular = [{"name": "main", "image": "busybox:1.36"}]
        gates: list[str] = []
    else:
        inits = [{"name": f"init-{i}", "image": "busybox:1.36",
                  **({"restartPolicy": "Always"} if data.draw(st.booleans()) else {})}
                 for i in range(data.draw(st.integers(0, 2)))]
        regular = [{"name": name, "image": f"img-{name}:1"}
                   for name in data.draw(st.lists(st.sampled_from(["b", "a", "c"]), min_size=1, max_size=3))]
        gates = data.draw(st.lists(st.sampled_from(["gate-x", "gate-y"]), max_size=2, unique=True))
    spec: Obj = {"nodeName": "node", "containers": regular,
                 "restartPolicy": data.draw(st.sampled_from(["Always", "OnFailure", "Never"]))}
    if inits:
        spec["initContainers"] = inits
    if gates:
        spec["readinessGates"] = [{"conditionType": g} for g in gates]
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": spec,
                "status": {"phase": "Pending", "qosClass": "BestEffort",
                           "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                           "lastTransitionTime": STAMPS[0]}]}}
    return PodWorker(pod, PodTimings(), NO_JITTER), pod


def change_container(data: st.DataObject, c: ContainerRun, stamp: str) -> None:
    """One thing the runtime or the prober does to a container (a start, an exit, a restart wait, a
    readiness flip, ...)."""
    move = data.draw(st.sampled_from(["start", "ready", "unready", "started", "exit", "wait", "pull"]))
    if move == "start":
        c.restart_count += c.ever_ran
        c.ever_ran, c.state, c.started_at, c.terminated = True, RUNNING, stamp, None
        c.waiting_message, c.ready, c.started = None, False, data.draw(st.booleans())
        c.container_id = f"containerd://{c.name}-{c.restart_count}"
    elif move in ("ready", "unready"):
        c.ready = move == "ready"
    elif move == "started":
        c.started = True
    elif move == "exit":
        code = data.draw(st.sampled_from([0, 1, 137]))
        c.state, c.ready, c.started = TERMINATED, c.role == INIT and code == 0, False
        c.terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                        "startedAt": c.started_at, "finishedAt": stamp, "containerID": c.container_id}
    elif move == "wait":
        if c.terminated is not None:
            c.last_terminated = c.terminated
        c.terminated, c.state, c.waiting_reason = None, WAITING, "CrashLoopBackOff"
        c.waiting_message = data.draw(st.sampled_from([None, "back-off 10s restarting failed container"]))
    else:
        c.waiting_reason = data.draw(st.sampled_from(["ErrImagePull", "ImagePullBackOff",
                                                      "ContainerCreating"]))
        c.waiting_message = data.draw(st.sampled_from([None, "", "not found"]))


def change_pod(data: st.DataObject, worker: PodWorker, pod: Obj, stamp: str) -> Obj:
    """One step: a container change, a pod-level change, or another writer's edit of the stored status;
    the pod, as stored after it."""
    move = data.draw(st.sampled_from(["container"] * 6 + ["sandbox", "terminal", "deadline", "others",
                                                           "copy", "gate", "regular"]))
    runs = [*worker.init_containers, *worker.containers]
    if move == "container":
        change_container(data, data.draw(st.sampled_from(runs)), stamp)
    elif move == "sandbox":
        worker.sandbox_ready = not worker.sandbox_ready
    elif move == "terminal":
        worker.terminal = True
    elif move == "deadline":
        worker.failed_reason = ("DeadlineExceeded",
                                "Pod was active on the node longer than the specified deadline")
    elif move == "regular":
        worker.regular_started = data.draw(st.booleans())
    else:
        status = dict(pod["status"])
        conditions = list(status.get("conditions") or [])
        if move == "others":  # an evictor's DisruptionTarget, the node controller's Ready=False, ...
            kind = data.draw(st.sampled_from(["DisruptionTarget", "Ready", "ContainersReady"]))
            conditions = [c for c in conditions if c.get("type") != kind]
            conditions.insert(data.draw(st.integers(0, len(conditions))),
                              {"type": kind, "status": "False", "lastProbeTime": None,
                               "lastTransitionTime": stamp, "reason": "NodeLost"})
        elif move == "gate":
            gate = data.draw(st.sampled_from(["gate-x", "gate-y"]))
            conditions = [c for c in conditions if c.get("type") != gate]
            conditions.append({"type": gate, "status": data.draw(st.sampled_from(["True", "False"])),
                               "lastProbeTime": None, "lastTransitionTime": stamp})
        else:  # a writer that sends back an equal copy: nothing shared with what the kubelet built
            status = clone(status)
            conditions = status.get("conditions") or []
        status["conditions"] = conditions
        pod = dict(pod, status=status)
    return pod


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_incremental_status_is_the_full_build(data: st.DataObject) -> None:
    """Checked to fail when a short way is broken: a lone container's phase ``Running`` once it exited;
    its ``Ready`` true while it is unready but not started; its stored status kept when only the name
    matches."""
    worker, pod = make_worker(data)
    if data.draw(st.booleans()):
        worker.admitted(STAMPS[1], "172.18.0.2", "10.244.0.2")
    for second in range(2, 2 + data.draw(st.integers(1, 25))):
        stamp = STAMPS[second]
        for _ in range(data.draw(st.integers(1, 3))):
            pod = change_pod(data, worker, pod, stamp)
        assert worker.phase() == full_phase(worker)
        expected = full_status(worker, pod["status"], stamp)
        before = json.dumps(pod["status"])
        status = build_status(worker, pod, stamp)
        assert json.dumps(pod["status"]) == before  # the stored status is never touched
        assert json.dumps(status) == json.dumps(expected)
        if status != pod["status"]:
            pod = dict(pod, status=status)  # the write the status manager makes (an equal one: none)
