"""``fakecluster export SCENARIO DIR``: the scenario for a real cluster with KWOK and the real JobSet.

Writes ``manifests/`` (the scenario's JobSets, content unchanged), ``nodes.yaml`` (one KWOK-managed Node
per node of each pool, with the pool's labels, taints and capacity), ``stages.yaml`` (KWOK Stage chains
reproducing each pod group's timings and exit codes, selected by the JobSet labels of its pods; see
:mod:`.stages`), ``expectations.json`` and ``check_watch.py`` (the ``order:`` expectations and a
standard-library checker over ``kubectl get --watch``), ``run.sh`` (apply everything, watch, check) and
``NOT-EXPORTED.md`` (what the export could not carry over, scenario by scenario). Every Stage is
validated against KWOK's Stage schema (:mod:`.stage_types`) before it is written.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from fakecluster.kubelet.commands import command_outcome
from fakecluster.report.kwok.stage_types import Stage
from fakecluster.report.kwok.stages import StageTimings, pod_stages
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.format import PodIdentity, Scenario, resolve_pod_rule
from fakecluster.scenario.loader import load_scenario
from fakecluster.workload_plugin import WorkloadPlugin, load_plugin

__all__ = ["KWOK_NODE_ANNOTATION", "ExportError", "export_scenario"]

KWOK_NODE_ANNOTATION = {"kwok.x-k8s.io/node": "fake"}
"""Run kwok with ``--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake``."""
_DEFAULT_CAPACITY = {"cpu": "1k", "memory": "1Ti", "pods": "10k"}


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (status templates, scripts) as ``|`` blocks, so the YAML reads like KWOK's own."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump_all(objects: list[dict[str, Any]]) -> str:
    return yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, width=1000)


class ExportError(Exception):
    """The scenario cannot be exported; the message names the file."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:50] or "x"


def _timings(scenario: Scenario, identity: PodIdentity, template: Mapping[str, Any]) -> StageTimings:
    rule = resolve_pod_rule(scenario.pods, identity)
    exit_after, exit_code = math.inf, 0
    if rule.exit is not None:
        exit_after, exit_code = rule.exit.after, rule.exit.code
    else:
        containers = (template.get("spec") or {}).get("containers") or []
        outcome = command_outcome(containers[0]) if containers else None
        if outcome is not None:
            exit_after, exit_code = outcome.seconds, outcome.exit_code
    return StageTimings(
        creating=(rule.pull or 0.0) + (rule.start or 0.0),
        ready=0.0 if rule.ready is None else rule.ready,
        exit_after=exit_after,
        exit_code=exit_code,
        terminate=rule.terminate or 0.0,
        jitter=rule.jitter or 0.0,
    )


def _group_stages(
    scenario: Scenario, plugin: WorkloadPlugin, manifest: dict[str, Any]
) -> list[dict[str, Any]]:
    name, groups = plugin.shapes(manifest)
    templates = plugin.pod_templates(manifest)
    stages: list[dict[str, Any]] = []
    for group, shape in groups.items():
        template = templates.get(group) or {}
        template_labels = dict(((template.get("metadata") or {}).get("labels")) or {})
        by_slot: dict[tuple[int, int], StageTimings] = {}
        for job_index in range(shape.replicas):
            for pod_index in range(shape.pods_per_job):
                labels = {**template_labels, **plugin.slot_labels(name, group, job_index, pod_index)}
                identity = PodIdentity(name, group, job_index, pod_index, 0, labels)
                by_slot[(job_index, pod_index)] = _timings(scenario, identity, template)
        distinct = list(dict.fromkeys(by_slot.values()))
        if len(distinct) <= 1:
            if distinct:
                stages += pod_stages(f"{_slug(name)}-{_slug(group)}",
                                     plugin.slot_labels(name, group, None, None), distinct[0])
            continue
        for (job_index, pod_index), timings in by_slot.items():
            stages += pod_stages(f"{_slug(name)}-{_slug(group)}-{job_index}-{pod_index}",
                                 plugin.slot_labels(name, group, job_index, pod_index), timings)
    return stages


def _nodes(scenario: Scenario) -> list[dict[str, Any]]:
    pools = scenario.cluster.nodes
    specs: list[tuple[str, dict[str, Any], dict[str, str], list[dict[str, Any]]]] = []
    if pools is None:
        specs.append(("node", dict(_DEFAULT_CAPACITY), {}, []))
    else:
        for pool in pools:
            capacity = {k: str(v) for k, v in pool.capacity.items()} or dict(_DEFAULT_CAPACITY)
            taints = [t.model_dump(by_alias=True, exclude_none=True) for t in pool.taints]
            for node_name in pool.node_names():
                specs.append((node_name, capacity, dict(pool.labels), taints))
    nodes = []
    for node_name, capacity, labels, taints in specs:
        node: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": node_name,
                "annotations": {**KWOK_NODE_ANNOTATION, "node.alpha.kubernetes.io/ttl": "0"},
                "labels": {"kubernetes.io/hostname": node_name, "kubernetes.io/os": "linux",
                           "kubernetes.io/arch": "amd64", "type": "kwok", **labels},
            },
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": capacity, "allocatable": capacity},
        }
        nodes.append(node)
    return nodes


def not_exported(scenario: Scenario, raw: Mapping[str, Any], *, probes: bool = False) -> list[str]:
    """What the real-cluster run will not reproduce, each with the reason."""
    notes = []
    if any(rule.schedule for rule in scenario.pods):
        notes.append("`schedule:` delays: the real kube-scheduler binds pods as fast as it can")
    if probes:
        notes.append("readiness/startup probes: KWOK runs no probes; pods without a `ready:` delay turn "
                     "Ready as soon as they run")
    if any(rule.match.attempt is not None for rule in scenario.pods):
        notes.append("rules matching `attempt:`: stage selectors do not tell restart attempts apart")
    latency = scenario.cluster.latency
    if any(getattr(latency, f) for f in ("job_controller", "scheduler", "garbage_collector", "jobset")):
        notes.append("`cluster.latency`: the real controllers run at their own speed")
    if scenario.cluster.faults.conflict_rate or scenario.cluster.informer_lag:
        notes.append("fault knobs (`cluster.faults.conflictRate`, `cluster.informerLag`): nothing injects "
                     "409s or informer lag on a real API server")
    if scenario.actions:
        verbs = sorted({a.verb for a in scenario.actions})
        notes.append(f"actions ({', '.join(verbs)}): not replayed; do them by hand with kubectl at the "
                     "times the scenario says")
    cluster = raw.get("cluster") if isinstance(raw.get("cluster"), dict) else {}
    extra = [f"cluster.{k}" for k in ("network", "dns") if k in cluster]
    extra += sorted({"pods[].program" for rule in raw.get("pods") or () if isinstance(rule, dict)
                     and "program" in rule})
    if extra:
        notes.append(f"programs and DNS effects ({', '.join(extra)}): KWOK runs no containers, so nothing "
                     "listens, connects or retries, and kwokctl clusters have no CoreDNS")
    rules = [rule for rule in raw.get("pods") or () if isinstance(rule, dict)]
    if any("probes" in rule for rule in rules):
        notes.append("`pods[].probes` (failFor): KWOK runs no probes, so no probe fails, restarts or kills")
    if any("pullFailures" in rule for rule in rules):
        notes.append("`pods[].pullFailures`: KWOK pulls no images (no ErrImagePull, no ImagePullBackOff)")
    if any(isinstance(rule.get("exit"), list) for rule in rules):
        notes.append("`pods[].exit` as a list: only the first entry is staged, for every run")
    if "sweep" in raw:
        notes.append("`sweep`: one real run is one seed; repeat run.sh for a distribution")
    non_order = sorted({e.kind for e in scenario.expect if e.kind != "order"})
    if non_order:
        notes.append(f"expectations other than `order:` ({', '.join(non_order)}): check_watch.py checks "
                     "orderings only")
    return notes


_RUN = """#!/usr/bin/env bash
# Replays {name} on a real cluster. Needs the JobSet controller and KWOK running with
# --enable-crds=Stage and --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake, with KWOK's node
# stages but none of its pod stages (these replace them). NOT-EXPORTED.md says what differs from the fake.
set -euo pipefail
cd "$(dirname "$0")"
KUBECTL=${{KUBECTL:-kubectl}}
"$KUBECTL" apply -f nodes.yaml
"$KUBECTL" apply -f stages.yaml
python3 check_watch.py expectations.json --kubectl "$KUBECTL" --save watch.jsonl \
  --timeout "${{TIMEOUT:-900}}" &
checker=$!
sleep 2  # let the watches list before anything is created
"$KUBECTL" create namespace {namespace} --dry-run=client -o yaml | "$KUBECTL" apply -f -
"$KUBECTL" apply --server-side -n {namespace} -f manifests/
wait "$checker"
"""


def export_scenario(path: Path, directory: Path, plugin: WorkloadPlugin | None = None) -> list[Path]:
    """Write the export for one scenario file; the paths written, in order."""
    try:
        scenario = load_scenario(path)
    except ScenarioError as err:
        raise ExportError(str(err)) from None
    plugin = plugin or load_plugin()
    raw = yaml.safe_load(path.read_text()) or {}
    manifests = scenario.manifests()
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifests").mkdir(exist_ok=True)
    written: list[Path] = []
    stages: list[dict[str, Any]] = []
    shapes: dict[str, dict[str, list[int]]] = {}
    namespace = "default"
    probes = False
    for index, manifest in enumerate(manifests):
        name, groups = plugin.shapes(manifest)
        namespace = (manifest.get("metadata") or {}).get("namespace") or namespace
        shapes[name] = {g: [s.replicas, s.pods_per_job] for g, s in groups.items()}
        file = directory / "manifests" / f"{index:02d}-{_slug(name)}.yaml"
        file.write_text(yaml.safe_dump(manifest, sort_keys=False))
        written.append(file)
        stages += _group_stages(scenario, plugin, manifest)
        probes = probes or any(
            "readinessProbe" in c or "startupProbe" in c
            for t in plugin.pod_templates(manifest).values()
            for c in (t.get("spec") or {}).get("containers") or ()
        )
    for stage in stages:
        try:
            Stage.model_validate(stage)
        except ValidationError as err:  # a bug here, not bad input: say which stage
            name = stage["metadata"]["name"]
            raise ExportError(f"{path}: stage {name} is not a valid KWOK Stage: {err}") from None
    notes = not_exported(scenario, raw, probes=probes) or ["nothing"]
    outputs = {
        "nodes.yaml": _dump_all(_nodes(scenario)),
        "stages.yaml": _dump_all(stages),
        "expectations.json": json.dumps({
            "scenario": scenario.name, "namespace": namespace, "shapes": shapes,
            "orders": [{"index": i, "order": [str(m) for m in e.order]}
                       for i, e in enumerate(scenario.expect) if e.order is not None],
        }, indent=2) + "\n",
        "run.sh": _RUN.format(name=scenario.name.replace("\n", " "), namespace=namespace),
        "NOT-EXPORTED.md": f"# {scenario.name}: not exported\n\n" + "".join(f"- {n}\n" for n in notes),
    }
    for file_name, text in outputs.items():
        file = directory / file_name
        file.write_text(text)
        written.append(file)
    (directory / "run.sh").chmod(0o755)
    checker = directory / "check_watch.py"
    shutil.copyfile(Path(__file__).with_name("watch_check.py"), checker)
    checker.chmod(0o755)
    written.append(checker)
    return written
