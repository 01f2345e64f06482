"""The scenario the fault tests share: an InOrder JobSet (a driver Job, then two worker Jobs of two pods,
all succeeding after 60 s), helpers to write it with extra ``cluster:`` keys or actions and play it, and a
hook on the construction of the cluster's parts (to catch the ones a run builds)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fakecluster.api.objects import Obj
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioOutcome, ScenarioRun
from fakecluster.workload_plugin import load_plugin

T = TypeVar("T")

INORDER = """\
seed: 7
until: 30m
pods:
  - match: {}
    schedule: 1s
    start: 2s
    ready: 1s
    exit: {after: 60s, code: 0}
    terminate: 1s
jobset:
  apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata: {name: js}
  spec:
    startupPolicy: {startupPolicyOrder: InOrder}
    replicatedJobs:
      - name: driver
        template:
          spec:
            parallelism: 1
            completions: 1
            backoffLimit: 0
            template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
      - name: workers
        replicas: 2
        template:
          spec:
            parallelism: 2
            completions: 2
            backoffLimit: 0
            template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}
expect:
  - happens: jobset Completed
  - order:
      - all driver pods Ready
      - first workers jobs Created
      - jobset StartupPolicyCompleted
      - jobset Completed
  - final:
      jobset:
        status:
          restarts: 0
          terminalState: Completed
          replicatedJobsStatus: [{name: driver, succeeded: 1}, {name: workers, succeeded: 2}]
      count: {jobs: 3, pods: 5}
"""
"""One driver Job, then (InOrder) two worker Jobs of two pods; everything succeeds after 60 s."""


def write(
    tmp_path: Path,
    cluster: str = "",
    name: str = "case",
    *,
    seed: int | None = None,
    actions: str = "",
    pods: str = "",
) -> Path:
    """The scenario plus ``cluster`` (YAML for under ``cluster:``), an ``actions:`` block and ``pods``
    (rules put before the catch-all one)."""
    body = INORDER.replace("pods:\n", "pods:\n" + pods, 1)
    body += (f"cluster:\n{textwrap.indent(cluster, '  ')}" if cluster else "") + actions
    if seed is not None:
        body = body.replace("seed: 7", f"seed: {seed}")
    path = tmp_path / f"{name}.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def play(path: Path) -> tuple[ScenarioOutcome, ScenarioRun]:
    """Play keeping the run, to inspect the cluster and the controllers afterwards."""
    run = ScenarioRun(load_scenario(path), path, load_plugin())
    return run.play(), run


def final_jobset_status(run: ScenarioRun) -> Obj:
    """The JobSet status without timestamps (which move when faults delay things)."""
    status = dict(run.cluster.server.get("JobSet", "default", "js")["status"])
    status["conditions"] = [
        {k: v for k, v in c.items() if k != "lastTransitionTime"} for c in status.get("conditions") or ()
    ]
    return status


def after_init(monkeypatch: pytest.MonkeyPatch, cls: type[T], hook: Callable[[T], Any]) -> None:
    """For the rest of the test, call ``hook`` with every new ``cls`` right after its ``__init__``."""
    original = cls.__init__

    def init(self: T, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        hook(self)

    monkeypatch.setattr(cls, "__init__", init)


def play_collecting(
    monkeypatch: pytest.MonkeyPatch, cls: type[T], path: Path
) -> tuple[list[T], ScenarioOutcome, ScenarioRun]:
    """Play ``path`` (as :func:`play`), collecting every ``cls`` built meanwhile, in order."""
    built: list[T] = []
    after_init(monkeypatch, cls, built.append)
    return built, *play(path)
