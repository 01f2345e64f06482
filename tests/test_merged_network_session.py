"""The network branch's additions where the usability branch moved the runner's set-up: bad program
targets are listed with every other problem of the file (not the first one alone), and a Python
``FakeCluster`` takes ``network``/``dns`` and runs ``program`` rules templated per JobSet, as a file does."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster import FakeCluster, ScenarioError, validate_scenario

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "torch"},
    "spec": {
        "network": {"enableDNSHostnames": True},
        "replicatedJobs": [{
            "name": "trainer",
            "template": {"spec": {
                "completions": 2, "parallelism": 2, "backoffLimit": 0,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 29500}]}],
                }},
            }},
        }],
    },
}  # fmt: skip

BAD = """\
seed: 1
pods:
  - match: {replicatedJob: trainer}
    program:
      connect: [{replicatedJob: nosuch, port: 22}, {replicatedJob: alsonot, port: 22}]
jobset:
  apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata: {name: torch}
  spec:
    replicatedJobs:
      - name: trainer
        template:
          spec:
            template:
              spec:
                restartPolicy: Never
                containers: [{name: c, image: busybox}]
expect:
  - happens: all missing pods Running
"""


def test_bad_connect_targets_are_listed_with_every_other_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    problems = [str(p) for p in validate_scenario(path)]
    assert len(problems) == 3, problems
    assert any("pods[0].program.connect[0].replicatedJob" in p and "'nosuch'" in p for p in problems)
    assert any("pods[0].program.connect[1].replicatedJob" in p and "'alsonot'" in p for p in problems)
    assert any("expect[0]" in p and "missing" in p for p in problems)


def test_a_python_cluster_runs_programs_templated_by_its_jobset() -> None:
    fc = FakeCluster(
        seed=3,
        network={"synRetries": 2, "synLoss": "perConnection"},
        dns={"profile": "kubeadm"},
        latency={"endpointSlice": "1s"},
        pods=[
            {"match": {"replicatedJob": "trainer", "podIndex": 0},
             "program": {"listen": [29500], "waitFor": {"peers": 1}, "work": "30s"}},
            {"match": {"replicatedJob": "trainer"},
             "program": {"connect": ["{jobset}-trainer-0-0.{subdomain}:29500"], "waitFor": "targetsWorking",
                         "work": "30s"}},
        ],
    )  # fmt: skip
    assert fc.cluster.config.network.syn_retries == 2
    assert fc.cluster.config.network.syn_loss == "perConnection"
    assert fc.cluster.config.endpoint_slice_latency == 1.0
    fc.apply(JOBSET)
    connected = fc.run(milestone="all trainer[0/1] pods Connected", until="5m")
    working = fc.run(milestone="all trainer pods Working", until="5m")
    assert connected <= working
    done = fc.run(milestone="jobset Completed", until="10m")
    assert done >= working + 30.0
    states = {s.pod: s for s in fc.cluster.network.program_states()}
    assert any(s.pod.startswith("torch-trainer-0-1") for s in states.values())


def test_a_program_milestone_without_a_program_rule_is_refused_by_name() -> None:
    fc = FakeCluster(seed=1)
    fc.apply(JOBSET)
    with pytest.raises(ScenarioError, match="'Connected' needs a program with connect targets"):
        fc.milestone("all trainer pods Connected")
