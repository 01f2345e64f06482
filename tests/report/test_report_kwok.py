"""``fakecluster export``: KWOK Stages that validate against KWOK's schema and carry the scenario's timings,
Nodes for the pools, the manifests unchanged, and a watch checker that agrees with the fake cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from fakecluster.cli import main
from fakecluster.cluster import Cluster
from fakecluster.report.kwok import watch_check
from fakecluster.report.kwok.export import export_scenario
from fakecluster.report.kwok.stage_types import Stage
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import run_scenario
from fakecluster.workload_plugin import WorkloadPlugin

ROOT = Path(__file__).parents[2]
THREE_TIER = ROOT / "scenarios/startup/three-tier-inorder.yaml"
FIRST_MATCH = ROOT / "scenarios/failure-policy/first-match-wins.yaml"


def _stages(directory: Path) -> dict[str, dict[str, Any]]:
    docs = list(yaml.safe_load_all((directory / "stages.yaml").read_text()))
    return {d["metadata"]["name"]: d for d in docs}


def test_every_stage_is_a_valid_kwok_stage(tmp_path: Path) -> None:
    for scenario in (THREE_TIER, FIRST_MATCH, ROOT / "scenarios/driver-first/spark-driver-first.yaml"):
        export_scenario(scenario, tmp_path / scenario.stem)
        for stage in _stages(tmp_path / scenario.stem).values():
            Stage.model_validate(stage)


def test_stage_delays_follow_the_pod_rules(tmp_path: Path) -> None:
    export_scenario(THREE_TIER, tmp_path)
    stages = _stages(tmp_path)
    # db: pull 12s + start 1s (from the catch-all rule), jitter 1s; never exits; terminate 10s
    running = stages["tf-ps-training-db-running"]["spec"]
    assert running["delay"] == {"durationMilliseconds": 13000, "jitterDurationMilliseconds": 14000}
    assert running["selector"]["matchLabels"] == {"jobset.sigs.k8s.io/jobset-name": "tf-ps-training",
                                                  "jobset.sigs.k8s.io/replicatedjob-name": "db"}
    assert "tf-ps-training-db-exit" not in stages
    assert stages["tf-ps-training-db-terminate"]["spec"]["delay"]["durationMilliseconds"] == 10000
    # worker: exits 0 after 120s of running, i.e. 120s after the (instant) Ready
    worker_exit = stages["tf-ps-training-worker-exit"]["spec"]
    assert worker_exit["delay"]["durationMilliseconds"] == 120000
    assert "phase: Succeeded" in worker_exit["next"]["statusTemplate"]
    assert "exitCode: 0" in worker_exit["next"]["statusTemplate"]


def test_exit_codes_and_what_cannot_be_exported(tmp_path: Path) -> None:
    export_scenario(FIRST_MATCH, tmp_path)
    leader_exit = [s for name, s in _stages(tmp_path).items() if "leader" in name and name.endswith("-exit")]
    assert leader_exit
    template = leader_exit[0]["spec"]["next"]["statusTemplate"]
    assert "exitCode: 10" in template and "phase: Failed" in template
    notes = (tmp_path / "NOT-EXPORTED.md").read_text()
    assert "`attempt:`" in notes and "`schedule:`" in notes


def test_manifests_unchanged_and_nodes_for_the_pools(tmp_path: Path) -> None:
    written = export_scenario(THREE_TIER, tmp_path)
    scenario = load_scenario(THREE_TIER)
    (manifest_file,) = sorted((tmp_path / "manifests").iterdir())
    assert yaml.safe_load(manifest_file.read_text()) == scenario.manifests()[0]
    nodes = list(yaml.safe_load_all((tmp_path / "nodes.yaml").read_text()))
    expected = sum(p.count for p in scenario.cluster.nodes) if scenario.cluster.nodes else 1
    assert len(nodes) == expected
    assert all(n["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake" for n in nodes)
    assert tmp_path / "run.sh" in written and (tmp_path / "run.sh").stat().st_mode & 0o100
    run = (tmp_path / "run.sh").read_text()
    assert "check_watch.py" in run and "apply -f stages.yaml" in run


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["spec"].update(weight=-1), "greater than or equal to 0"),
        (lambda s: s["spec"].update(surprise=1), "Extra inputs are not permitted"),
        (lambda s: s["spec"]["selector"]["matchExpressions"].append({"key": "k", "operator": "Near"}),
         "Near"),
        (lambda s: s["spec"]["selector"]["matchExpressions"].append({"key": "k", "operator": "In"}),
         "needs a non-empty values list"),
        (lambda s: s["spec"].update(delay={"durationMilliseconds": "5s"}), "durationMilliseconds"),
        (lambda s: s["spec"].pop("next"), "next"),
    ],
)
def test_the_stage_model_rejects_what_kwok_would(tmp_path: Path, change: Any, message: str) -> None:
    export_scenario(THREE_TIER, tmp_path)
    stage = _stages(tmp_path)["tf-ps-training-db-running"]
    Stage.model_validate(stage)
    change(stage)
    with pytest.raises(ValidationError) as err:
        Stage.model_validate(stage)
    assert message in str(err.value)


def _watch_stream(scenario: Path, out: Path) -> None:
    """What ``kubectl get --watch --output-watch-events -o json`` would have shown, stamped, from a run."""
    lines: list[str] = []

    def observe(cluster: Cluster, plugin: WorkloadPlugin) -> None:
        for kind in ("Pod", "Job", plugin.kind):
            def on(event: Any, kind: str = kind) -> None:
                lines.append(json.dumps({"t": cluster.clock.now, "kind": kind, "type": event.type,
                                         "object": event.object}))
            cluster.server.watch(kind, on)

    assert run_scenario(scenario, observe=observe).passed
    out.write_text("\n".join(lines) + "\n")


def test_watch_checker_agrees_with_the_fake_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export_scenario(THREE_TIER, tmp_path)
    stream = tmp_path / "watch.jsonl"
    _watch_stream(THREE_TIER, stream)
    expectations = tmp_path / "expectations.json"
    assert watch_check.main([str(expectations), "--replay", str(stream)]) == 0
    assert "3 of 3 order expectations hold" in capsys.readouterr().out
    spec = json.loads(expectations.read_text())
    spec["orders"][0]["order"].reverse()
    expectations.write_text(json.dumps(spec))
    assert watch_check.main([str(expectations), "--replay", str(stream)]) == 1
    assert "FAIL expect[1] order: 'jobset Completed'" in capsys.readouterr().out


def test_cli_export_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(THREE_TIER), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "stages.yaml").exists()
    missing = tmp_path / "nope.yaml"
    assert main(["export", str(missing), str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and str(missing) in err and "\n" not in err


FAKE_KUBECTL = '''#!{python}
"""Stands in for `kubectl get <resource> -n NS --watch --output-watch-events -o json`: pretty-printed
watch events, written in small chunks (objects split across reads), then it waits to be terminated."""
import json, sys, time
kind = {{"pods": "Pod", "jobs": "Job", "jobsets": "JobSet"}}[sys.argv[2]]
out = sys.stdout
for line in open({stream!r}):
    record = json.loads(line)
    if record["kind"] == kind:
        text = json.dumps({{"type": record["type"], "object": record["object"]}}, indent=4) + "\\n"
        for i in range(0, len(text), 700):
            out.write(text[i:i + 700])
            out.flush()
time.sleep(60)
'''


def test_live_watch_reads_kubectl_streams_until_the_jobset_finishes(tmp_path: Path) -> None:
    import sys

    stream = tmp_path / "watch.jsonl"
    _watch_stream(THREE_TIER, stream)
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL.format(python=sys.executable, stream=str(stream)))
    kubectl.chmod(0o755)
    saved = tmp_path / "saved.jsonl"
    spec = json.loads((_export(tmp_path) / "expectations.json").read_text())
    live = watch_check.watch(str(kubectl), "default", timeout=60, save=str(saved),
                             done=lambda trace: watch_check.all_found(spec, trace))
    assert watch_check.all_found(spec, live)

    def edges(trace: watch_check.Trace) -> set[tuple[str, str, str]]:
        return {(kind, name, event) for _t, _s, kind, name, event, _slot in trace.events}

    assert edges(live) <= edges(watch_check.replay(str(stream)))
    assert edges(watch_check.replay(str(saved))) == edges(live)


def _export(tmp_path: Path) -> Path:
    directory = tmp_path / "export"
    export_scenario(THREE_TIER, directory)
    return directory


def test_programs_dns_faults_and_actions_are_listed_as_not_exported(tmp_path: Path) -> None:
    from fakecluster.report.kwok.export import not_exported

    data = yaml.safe_load(THREE_TIER.read_text())
    data["cluster"] = {**(data.get("cluster") or {}), "faults": {"conflictRate": 0.1}}
    data["actions"] = [{"at": "50s", "deletePod": {"pod": "db[0/0]"}}]
    path = tmp_path / "knobs.yaml"
    path.write_text(yaml.safe_dump(data))
    export_scenario(path, tmp_path / "out")
    notes = (tmp_path / "out" / "NOT-EXPORTED.md").read_text()
    assert "fault knobs" in notes and "actions (deletePod)" in notes
    # format-1.1 network keys (read from the raw file, whichever loader version accepts them)
    raw = {**data, "cluster": {"network": {"synRetries": 6}, "dns": {"profile": "kubeadm"}},
           "pods": [{"match": {}, "program": {"listen": [5432]}}], "sweep": {"seeds": 5}}
    lines = not_exported(load_scenario(path), raw)
    assert any(line.startswith("programs and DNS effects (cluster.network, cluster.dns, pods[].program)")
               for line in lines)
    assert any(line.startswith("`sweep`") for line in lines)


def test_fidelity_pod_rule_keys_are_listed_as_not_exported(tmp_path: Path) -> None:
    """probes failFor, pullFailures and per-run exit lists (the fidelity scenario keys) are not staged."""
    from fakecluster.report.kwok.export import not_exported

    data = yaml.safe_load(THREE_TIER.read_text())
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump(data))
    raw = {**data, "pods": [{"match": {}, "probes": {"readiness": {"failFor": "30s"}}, "pullFailures": 2,
                             "exit": [{"after": "5s", "code": 1}, {"after": "9s", "code": 0}]}]}
    lines = not_exported(load_scenario(path), raw)
    assert not any("pods[].probes" in line or "pullFailures" in line for line in not_exported(
        load_scenario(path), data))
    assert any(line.startswith("`pods[].probes`") for line in lines)
    assert any(line.startswith("`pods[].pullFailures`") for line in lines)
    assert any(line.startswith("`pods[].exit` as a list") for line in lines)
