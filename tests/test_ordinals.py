"""NonIndexed Job pods addressed by ordinal (``fakecluster/scenario/ordinals.py``): the order their Job
created them in, counting replacements, in the trace, pod references, pods rules and object assertions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import ScenarioRun, run_scenario
from fakecluster.workload_plugin import load_plugin
from tests.test_runner import JOBSET, assert_passed, events, scenario


def non_indexed(**job_spec: Any) -> dict[str, Any]:
    js = copy.deepcopy(JOBSET)
    rjob = js["spec"]["replicatedJobs"][0]
    rjob["replicas"] = 1
    rjob["template"]["spec"].update({"completionMode": "NonIndexed", "parallelism": 3, "completions": 3,
                                     **job_spec})
    return js


def test_ordinals_follow_creation_order_and_replacements_get_the_next(tmp_path: Path) -> None:
    pods = [{"match": {"replicatedJob": "w", "podIndex": 1}, "exit": {"after": "5s", "code": 1}},
            {"match": {}, "exit": {"after": "30s"}}]
    outcome = run_scenario(scenario(tmp_path, jobset=non_indexed(), pods=pods, expect=[
        {"happens": "first w[0/1] pods Failed", "by": "5s"},
        {"happens": "first w[0/3] pods Created"},
        {"never": "first w[0/3] pods Failed"},
        {"happens": "all w pods Succeeded"},   # three distinct pods succeeded: 0, 2 and the replacement
        {"happens": "jobset Completed"},
        {"final": {"pods": {"w[0/1]": {"status": {"phase": "Failed"}},
                            "w[0/3]": {"status": {"phase": "Succeeded"}}}}}]))
    assert_passed(outcome)
    created = events(outcome, "Pod", "Created")
    assert [e.pod_index for e in created] == [0, 1, 2, 3]
    assert len({e.name for e in created}) == 4


def test_fail_pod_by_ordinal(tmp_path: Path) -> None:
    path = scenario(tmp_path, jobset=non_indexed(backoffLimit=0), pods=[{"match": {}, "exit": "never"}],
                    actions=[{"at": "10s", "failPod": {"pod": "w[0/2]", "exitCode": 7}}],
                    expect=[{"happens": "jobset Failed"},
                            {"happens": "first w[0/2] pods Failed", "by": "10s"},
                            {"happens": "first w[0/0] pods Failed", "after": "11s"},  # deleted by then
                            {"final": {"pods": {"w[0/2]": {"status": {"containerStatuses": [
                                {"name": "c", "state": {"terminated": {"exitCode": 7}}}]}}}}}])
    assert_passed(run_scenario(path))


def test_all_pods_of_a_non_indexed_job_counts_distinct_pods(tmp_path: Path) -> None:
    # parallelism 1, completions 3: the three pods run one after the other; 'all w pods Running' is the
    # third one running, and names no slot a Job of this shape does not fill
    pods = [{"match": {}, "exit": {"after": "10s"}}]
    path = scenario(tmp_path, jobset=non_indexed(parallelism=1), pods=pods,
                    expect=[{"happens": "all w pods Running", "after": "20s"},
                            {"order": ["first w[0/1] pods Running", "first w[0/2] pods Running",
                                       "all w pods Succeeded"]}])
    assert_passed(run_scenario(path))


def test_indexed_pods_keep_their_completion_index(tmp_path: Path) -> None:
    outcome = run_scenario(scenario(tmp_path))
    assert sorted(e.pod_index for e in events(outcome, "Pod", "Created")) == [0, 0, 1, 1]


def test_loader_bounds_indexed_slots_but_not_ordinals(tmp_path: Path) -> None:
    expect = [{"happens": "first w[0/5] pods Created"}]
    load_scenario(scenario(tmp_path, name="ni", jobset=non_indexed(), expect=expect))
    with pytest.raises(ScenarioError, match="pod index 5 is out of range"):
        load_and_check(scenario(tmp_path, name="ix", expect=expect))


def load_and_check(path: Path) -> None:
    ScenarioRun(load_scenario(path), path, load_plugin())


def test_pods_rule_match_by_ordinal(tmp_path: Path) -> None:
    pods = [{"match": {"replicatedJob": "w", "podIndex": 0}, "ready": "7s"}, {"match": {}, "exit": "never"}]
    outcome = run_scenario(scenario(tmp_path, jobset=non_indexed(), pods=pods, until="1m",
                                    expect=[{"happens": "first w[0/0] pods Ready", "after": "7s", "by": "7s"},
                                            {"happens": "first w[0/1] pods Ready", "by": "0s"}]))
    assert_passed(outcome)
