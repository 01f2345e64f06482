"""From a ``program:`` rule to the concrete :class:`~fakecluster.network.program.ProgramSpec` of one pod.

This is where workload knowledge meets the cluster's network: ``{jobset}``, ``{subdomain}`` and the other
placeholders are filled in with the pod's own coordinates, and a ``{replicatedJob: <name>, port: <n>}``
target becomes one ``<job name>-<completion index>.<subdomain>:<port>`` target per slot of that
replicated job in the same JobSet (every job index by completion index, fixed when the program starts),
which is the hostname JobSet gives its Indexed Jobs' pods (``jobset_types.go``: the pod's hostname is
``<jobset>-<replicatedJob>-<jobIndex>-<completionIndex>``, its subdomain the JobSet's
``network.subdomain``, default the JobSet's name).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fakecluster.network.program import FOREVER, UNTIL_DISCONNECTED, ProgramSpec, RetrySpec, WaitSpec
from fakecluster.scenario.errors import ScenarioError, combine
from fakecluster.scenario.format import PodIdentity, Scenario
from fakecluster.scenario.format_network import ProgramModel
from fakecluster.workload_plugin import GroupShape


@dataclass(frozen=True, slots=True)
class JobSetNetwork:
    """What templating needs to know of one JobSet manifest."""

    name: str
    namespace: str
    subdomain: str
    shapes: Mapping[str, GroupShape]
    indexed: Mapping[str, bool]


def jobset_network(manifest: Mapping[str, Any], shapes: Mapping[str, GroupShape]) -> JobSetNetwork:
    meta = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    name = meta.get("name") or meta.get("generateName") or ""
    network = spec.get("network") or {}
    indexed: dict[str, bool] = {}
    for rjob in spec.get("replicatedJobs") or ():
        if isinstance(rjob, Mapping):
            job_spec = ((rjob.get("template") or {}).get("spec") or {})
            indexed[str(rjob.get("name"))] = (job_spec.get("completionMode") or "Indexed") == "Indexed"
    return JobSetNetwork(name=name, namespace=meta.get("namespace") or "default",
                         subdomain=network.get("subdomain") or name, shapes=shapes, indexed=indexed)


def fill(host: str, pod: PodIdentity, js: JobSetNetwork) -> str:
    values = {
        "jobset": js.name, "namespace": js.namespace, "subdomain": js.subdomain,
        "replicatedJob": pod.replicated_job or "", "jobIndex": pod.job_index, "podIndex": pod.pod_index,
        "attempt": pod.attempt,
    }
    out = host
    for key, value in values.items():
        out = out.replace("{" + key + "}", "" if value is None else str(value))
    return out


def program_spec(model: ProgramModel, pod: PodIdentity, js: JobSetNetwork | None) -> ProgramSpec:
    """The program of one pod. ``js`` is None for a pod outside any JobSet (no templating)."""
    targets: list[tuple[str, int]] = []
    for target in model.connect:
        if target.host is not None:
            targets.append((fill(target.host, pod, js) if js is not None else target.host, target.port))
            continue
        if js is None or target.replicated_job not in js.shapes:
            continue
        shape = js.shapes[target.replicated_job or ""]
        for ji in range(shape.replicas):
            for pi in range(shape.pods_per_job):
                if target.exclude_self and (pod.replicated_job, pod.job_index, pod.pod_index) == (
                        target.replicated_job, ji, pi):
                    continue
                targets.append((f"{js.name}-{target.replicated_job}-{ji}-{pi}.{js.subdomain}", target.port))
    retry = model.retry
    wait = model.wait_for
    work = model.work
    return ProgramSpec(
        container=model.container,
        listen=tuple(model.listen),
        startup=model.startup,
        targets=tuple(targets),
        retry=RetrySpec(interval=retry.interval, backoff=retry.backoff, max_interval=retry.max_interval,
                        timeout=retry.timeout, attempts=retry.attempts, give_up_after=retry.give_up_after,
                        exit_code=retry.exit_code),
        wait=None if wait is None else WaitSpec(connected=wait.connected, peers=wait.peers,
                                                targets_working=wait.targets_working, timeout=wait.timeout,
                                                exit_code=wait.exit_code),
        work=FOREVER if work == "forever" else UNTIL_DISCONNECTED if work == "untilDisconnected"
        else float(work),
        exit_code=model.exit_code,
        disconnect_exit_code=model.disconnect_exit_code,
        ready=model.ready,
    )


def check_targets(scenario: Scenario, networks: Mapping[str, JobSetNetwork]) -> None:
    """Load-time checks of ``{replicatedJob: ...}`` targets: the replicated job exists in some JobSet the
    rule can apply to, and its Jobs are Indexed (NonIndexed pods have no stable hostname). Every bad
    target is reported at once, as one error (:func:`~fakecluster.scenario.errors.combine`)."""
    problems: list[ScenarioError] = []
    for i, rule in enumerate(scenario.pods):
        if rule.program is None:
            continue
        owners = [js for name, js in networks.items() if rule.match.jobset in (None, name)]
        for j, target in enumerate(rule.program.connect):
            if target.replicated_job is None:
                continue
            path = f"pods[{i}].program.connect[{j}].replicatedJob"
            having = [js for js in owners if target.replicated_job in js.shapes]
            if not having:
                problems.append(ScenarioError(f"no JobSet has a replicated job '{target.replicated_job}'",
                                              file=scenario.source, field_path=path,
                                              line=scenario.line_of(path)))
            for js in having:
                if not js.indexed.get(target.replicated_job, True):
                    problems.append(ScenarioError(
                        f"replicated job '{target.replicated_job}' of JobSet '{js.name}' is NonIndexed: its"
                        " pods have no stable hostname to connect to (use completionMode: Indexed)",
                        file=scenario.source, field_path=path, line=scenario.line_of(path)))
                    break
    if problems:
        raise combine(problems)
