"""A small two-role JobSet (``server`` and ``clients``) for network tests, written into ``tmp_path`` and
played by the real runner, plus trace look-ups by replicated job."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fakecluster.scenario.runner import ScenarioOutcome, run_scenario
from fakecluster.scenario.trace import TraceEvent


def jobset(clients: int = 1, *, server_job: dict[str, Any] | None = None,
           client_job: dict[str, Any] | None = None, network: dict[str, Any] | None = None,
           **spec: Any) -> dict[str, Any]:
    def rjob(name: str, pods: int, extra: dict[str, Any] | None) -> dict[str, Any]:
        job_spec: dict[str, Any] = {"completions": pods, "parallelism": pods, "backoffLimit": 0,
                                    "template": {"spec": {"containers": [{"name": name, "image": "x"}]}}}
        job_spec.update(extra or {})
        return {"name": name, "template": {"spec": job_spec}}

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
        "spec": {"network": network or {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                 "successPolicy": {"operator": "All", "targetReplicatedJobs": ["clients"]},
                 "replicatedJobs": [rjob("server", 1, server_job), rjob("clients", clients, client_job)],
                 **spec},
    }


SERVER = "js-server-0-0.js:8050"


def play(tmp_path: Path, pods: list[dict[str, Any]], *, expect: list[Any] | None = None,
         cluster: dict[str, Any] | None = None, js: dict[str, Any] | None = None,
         until: str = "10m", name: str = "net") -> ScenarioOutcome:
    body: dict[str, Any] = {"name": name, "seed": 1, "until": until, "pods": pods,
                            "jobset": js or jobset(),
                            "expect": expect or [{"happens": "first server pods Created"}]}
    if cluster:
        body["cluster"] = cluster
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return run_scenario(path)


def times(outcome: ScenarioOutcome, rjob: str, event: str, kind: str = "Pod") -> list[float]:
    return [e.time for e in outcome.trace if e.kind == kind and e.replicated_job == rjob and e.event == event]


def steps(outcome: ScenarioOutcome, rjob: str) -> list[tuple[float, str]]:
    """Connect steps of the pods of ``rjob``: (time, outcome)."""
    return [(round(e.time, 6), e.event) for e in outcome.trace
            if e.kind == "Connect" and e.replicated_job == rjob]


def events_of(outcome: ScenarioOutcome, rjob: str) -> list[TraceEvent]:
    return [e for e in outcome.trace if e.replicated_job == rjob]
