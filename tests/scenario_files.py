"""The minimal JobSet the scenario tests share: as the YAML text the command-line, loader and plugin tests
(``test_cli*.py``, ``test_hostile_*.py``, ``test_loader_problems.py``, ``test_merged_fronts.py``,
``test_pytest_plugin.py``, ``test_user_project.py``) write to disk, and as the object the runner, session,
sweep, recorder and model tests build on; plus the command line run in a subprocess as a user runs it.

The texts are the exact YAML a user writes, line for line: several tests expect an error at a given line
of a written file, so a change to the layout here moves those lines.
"""

from __future__ import annotations

import copy
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def replicated_job(
    name: str = "w", *, replicas: int = 1, pods: int = 1, container: str = "c", image: str = "busybox"
) -> str:
    """One ``replicatedJobs`` entry at column 0: ``replicas`` Jobs of ``pods`` pods that never restart."""
    return f"""\
- name: {name}
  replicas: {replicas}
  template:
    spec:
      parallelism: {pods}
      completions: {pods}
      template:
        spec:
          restartPolicy: Never
          containers: [{{name: {container}, image: {image}}}]
"""


def jobset_manifest(*rjobs: str, name: str = "js", spec: str = "", indent: int = 0) -> str:
    """A JobSet manifest of the given replicated jobs (one ``w`` Job of one pod if none), shifted right by
    ``indent`` columns (2 puts it under a scenario's ``jobset:`` key); ``spec`` is YAML for the lines of
    ``spec`` before ``replicatedJobs``, at column 2."""
    jobs = "".join(rjobs) or replicated_job()
    text = (
        f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: {name}}}\nspec:\n{spec}"
        f"  replicatedJobs:\n{textwrap.indent(jobs, '    ')}"
    )
    return textwrap.indent(text, " " * indent)


def pods_rule(exit_after: str = "10s", jitter: str = "") -> str:
    """A ``pods:`` block of one rule for every pod: bound at 1 s, started 1 s later, exits 0 ``exit_after``
    after that (each phase ``jitter``-ed if given)."""
    rule = f"pods:\n  - match: {{}}\n    schedule: 1s\n    start: 1s\n    exit: {{after: {exit_after}}}\n"
    return rule + (f"    jitter: {jitter}\n" if jitter else "")


# One Job of one pod that exits 0 after 10 s; the scenario expects the JobSet to complete.
BASIC = f"""\
seed: 1
pods:
  - match: {{}}
    exit: {{after: 10s}}
jobset:
{jobset_manifest(indent=2)}expect:
  - happens: jobset Completed
"""


# A pod that never restarts, with one busybox container.
POD_SPEC: dict[str, Any] = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}


def rjob_object(
    name: str = "w", *, replicas: int = 1, pod_spec: dict[str, Any] | None = None, **job_spec: Any
) -> dict[str, Any]:
    """One ``replicatedJobs`` entry: ``replicas`` Jobs of ``job_spec`` (Kubernetes' defaults where empty)
    whose pods are ``pod_spec`` (:data:`POD_SPEC` if not given)."""
    pod = copy.deepcopy(POD_SPEC if pod_spec is None else pod_spec)
    return {"name": name, "replicas": replicas, "template": {"spec": {**job_spec, "template": {"spec": pod}}}}


def jobset_object(*rjobs: dict[str, Any], name: str = "js") -> dict[str, Any]:
    """A JobSet of the given replicated jobs (one ``w`` Job of one pod if none)."""
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": list(rjobs) or [rjob_object()]},
    }


def run_cli(*args: str | Path, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m fakecluster ARGS...`` in a subprocess, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "fakecluster", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def interruptible() -> None:
    """``preexec_fn`` for a command a test interrupts with SIGINT: the signal's default action, as a
    command started at a terminal has. A test run started in the background by a non-interactive shell
    (``cmd &``, ``nohup``) inherits SIGINT ignored, Python then keeps ignoring it, and so would the
    command the test starts: its Ctrl-C would be lost and the test would time out."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
