"""The Python API (:class:`fakecluster.FakeCluster`, :func:`fakecluster.run_scenario`): the same cluster
a scenario file gets, driven step by step; and the runner really stands on it (same trace)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from scenario_files import jobset_object, rjob_object

from fakecluster import (
    ApiError,
    FakeCluster,
    MilestoneNotReached,
    ScenarioError,
    ScenarioResult,
    run_scenario,
)
from fakecluster.scenario.trace import trace_digest

JOBSET: dict[str, Any] = jobset_object(
    rjob_object(replicas=2, parallelism=2, completions=2, backoffLimit=0)
)
PODS = [{"match": {}, "schedule": "1s", "start": "1s", "exit": {"after": "20s"}, "jitter": "500ms"}]


def test_run_to_jobset_finished_stops_at_the_event_that_makes_it_happen() -> None:
    """``jobset Finished`` happens at the JobSet's Completed (or Failed) event, which is not named
    Finished: the run stops there, as for any other milestone, not at the end of the work."""
    cluster = FakeCluster(seed=4, pods=PODS, nodes=[{"name": "n", "count": 2}])
    cluster.apply({**JOBSET, "spec": {**JOBSET["spec"], "ttlSecondsAfterFinished": 60}})
    finished = cluster.run(milestone="jobset Finished")
    assert cluster.now == finished == cluster.milestone("jobset Completed")
    assert cluster.get("JobSet", "js") is not None  # its TTL (60 s on) has not run out


def test_build_apply_run_and_read() -> None:
    cluster = FakeCluster(seed=4, pods=PODS, nodes=[{"name": "n", "count": 2}])
    created = cluster.apply(JOBSET)
    assert created["metadata"]["name"] == "js" and created["metadata"]["uid"]
    assert [n["metadata"]["name"] for n in cluster.list("Node")] == ["n-0", "n-1"]
    ready = cluster.run(milestone="all w pods Running")
    assert 2.0 <= ready <= 4.0
    assert cluster.now == ready
    assert len(cluster.list("Pod", labels={"jobset.sigs.k8s.io/replicatedjob-name": "w"})) == 4
    done = cluster.run(milestone="jobset Completed")
    assert done > 22.0
    jobset = cluster.get("JobSet", "js")
    assert any(c["type"] == "Completed" and c["status"] == "True" for c in jobset["status"]["conditions"])
    assert cluster.milestone("first w pods Succeeded") is not None
    assert cluster.happened("all w pods Succeeded")
    assert not cluster.happened("first w pods Failed")
    assert "JobSet default/js" in cluster.timeline() and "w-0" in cluster.timeline()
    assert any(e.kind == "JobSet" and e.event == "Completed" for e in cluster.trace)


def test_reads_are_copies() -> None:
    cluster = FakeCluster()
    cluster.apply(JOBSET)
    cluster.get("JobSet", "js")["spec"]["suspend"] = True
    assert not cluster.get("JobSet", "js")["spec"].get("suspend")


def test_run_until_a_time() -> None:
    cluster = FakeCluster(pods=PODS)
    cluster.apply(JOBSET)
    assert cluster.run("10s") == 10.0  # work is left: the run ends at `until`
    assert cluster.happened("all w pods Running") and not cluster.happened("jobset Completed")
    end = cluster.run("2h")
    assert 20.0 < end < 7200.0  # nothing left to do: the run ends at the last event
    with pytest.raises(TypeError):
        cluster.run()


def test_a_milestone_that_does_not_happen_raises_with_the_timeline() -> None:
    cluster = FakeCluster(pods=[{"match": {}, "ready": "never"}])
    cluster.apply(JOBSET)
    with pytest.raises(MilestoneNotReached) as info:
        cluster.run("5m", milestone="all w pods Ready")
    assert "'all w pods Ready' did not happen by 5m" in str(info.value)
    assert "timeline" in str(info.value) and "w-0" in str(info.value)
    assert isinstance(info.value, AssertionError)


def test_yaml_text_with_several_documents() -> None:
    other = copy.deepcopy(JOBSET)
    other["metadata"]["name"] = "other"
    import yaml

    cluster = FakeCluster()
    created = cluster.apply(yaml.safe_dump(JOBSET) + "---\n" + yaml.safe_dump(other))
    assert [o["metadata"]["name"] for o in created] == ["js", "other"]
    assert cluster.run(milestone="all other/w pods Created") == 0.0


def test_rejections_are_api_errors() -> None:
    cluster = FakeCluster()
    cluster.apply(JOBSET)
    with pytest.raises(ApiError) as info:
        cluster.apply(JOBSET)
    assert info.value.reason == "AlreadyExists"
    bad = copy.deepcopy(JOBSET)
    bad["metadata"]["name"] = "bad"
    bad["spec"]["replicatedJobs"][0]["replicas"] = -1
    with pytest.raises(ApiError) as invalid:
        cluster.apply(bad)
    assert invalid.value.reason == "Invalid" and "spec.replicatedJobs[0].replicas" in invalid.value.message


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"pods": [{"schedul": "1s"}]}, "pods[0].schedul: unknown key 'schedul' (did you mean 'schedule'?)"),
        ({"nodes": [{"name": "n", "count": -1}]}, "cluster.nodes[0].count: must be >= 0"),
        ({"latency": {"jobset": "soon"}}, "cluster.latency.jobset: cannot read 'soon'"),
        ({"faults": {"conflictRate": 2}}, "cluster.faults.conflictRate: must be within [0, 1]"),
        ({"seed": "x"}, "seed: expected an integer"),
    ],
)
def test_bad_keyword_arguments_name_the_field(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ScenarioError) as info:
        FakeCluster(**kwargs)
    assert fragment in str(info.value)


def test_from_dict_refuses_keys_it_does_not_take() -> None:
    with pytest.raises(ScenarioError) as info:
        FakeCluster.from_dict({"seed": 1, "expect": []})
    assert "expect: unknown key 'expect'" in str(info.value)


def test_milestones_are_checked_against_the_workload() -> None:
    cluster = FakeCluster()
    cluster.apply(JOBSET)
    with pytest.raises(ScenarioError) as info:
        cluster.milestone("all workers pods Ready")
    assert "no replicated job 'workers'" in str(info.value) and "(have: w)" in str(info.value)
    with pytest.raises(ScenarioError):
        cluster.run(milestone="all w pods Exploded")


def test_actions_use_the_scenario_vocabulary() -> None:
    cluster = FakeCluster(pods=[{"match": {}, "schedule": "1s", "start": "1s", "exit": "never"}])
    restartable = copy.deepcopy(JOBSET)
    restartable["spec"]["failurePolicy"] = {"maxRestarts": 1}
    cluster.apply(restartable)
    cluster.run(milestone="all w pods Running")
    cluster.act({"failPod": {"pod": "w[0/1]", "exitCode": 3}})
    cluster.run(milestone="first w pods Failed")
    restarted = cluster.run(milestone="all w pods Running attempt 1")
    assert cluster.get("JobSet", "js")["status"]["restarts"] == 1
    cluster.act({"at": restarted + 5, "suspend": True})
    cluster.run(restarted + 30)
    assert cluster.get("JobSet", "js")["spec"]["suspend"] is True
    with pytest.raises(ScenarioError) as info:
        cluster.act({"failPod": {"pod": "w[9/0]"}})
    assert "job index 9 is out of range" in str(info.value)


def test_same_seed_same_trace_other_seed_other_trace() -> None:
    def digest(seed: int) -> str:
        cluster = FakeCluster(seed=seed, pods=PODS)
        cluster.apply(JOBSET)
        cluster.run(milestone="jobset Completed")
        return trace_digest(cluster.trace)

    assert digest(1) == digest(1) != digest(2)


# ---------------------------------------------------------------- run_scenario, and the runner on the API


def scenario(**extra: Any) -> dict[str, Any]:
    return {
        "seed": 9,
        "pods": copy.deepcopy(PODS),
        "jobset": copy.deepcopy(JOBSET),
        "expect": [{"happens": "jobset Completed", "by": "60s"}, {"never": "first w pods Failed"}],
        **extra,
    }


def test_run_scenario_from_a_dict_gives_a_typed_result() -> None:
    result = run_scenario(scenario())
    assert isinstance(result, ScenarioResult)
    assert result.passed and result.failures == [] and result.path is None
    assert len(result.digest) == 64 and result.seed == 9
    assert set(result.milestones) == {"jobset Completed", "first w pods Failed"}
    completed = result.milestones["jobset Completed"]
    assert completed is not None and 20.0 < completed < 60.0
    assert result.milestones["first w pods Failed"] is None
    assert "JobSet default/js" in result.timeline


def test_run_scenario_failures_and_bad_input_are_results() -> None:
    late = run_scenario(scenario(expect=[{"happens": "jobset Completed", "by": "5s"}]))
    assert not late.passed and late.failures[0].startswith("expect[0] happens: 'jobset Completed'")
    broken = run_scenario({"seed": "x", "until": "y", "expect": []})
    assert not broken.passed
    assert any(f.startswith("seed: expected an integer") for f in broken.failures)
    assert any(f.startswith("until: cannot read 'y'") for f in broken.failures)


def test_seed_override() -> None:
    own, other = run_scenario(scenario()), run_scenario(scenario(), seed=10)
    assert other.seed == 10 and other.digest != own.digest
    assert run_scenario(scenario(seed=10)).digest == other.digest


def test_the_runner_plays_on_the_python_api() -> None:
    """A file's run and the same steps through FakeCluster give the same trace, event for event."""
    played = run_scenario(scenario(until="90s"))
    cluster = FakeCluster.from_dict({"seed": 9, "pods": copy.deepcopy(PODS)})
    cluster.apply(JOBSET)
    cluster.run("90s")
    assert cluster.trace == played.trace
    assert cluster.now == played.virtual_end


def test_an_action_the_cluster_refuses_raises_now_or_is_recorded_later() -> None:
    cluster = FakeCluster(pods=[{"match": {}, "schedule": "10s"}])
    cluster.apply(JOBSET)
    with pytest.raises(LookupError) as info:
        cluster.act({"failPod": {"pod": "w[0/0]"}})  # still Pending: nothing running to fail
    assert "w[0/0]" in str(info.value)
    cluster.act({"at": 1, "failPod": {"pod": "w[1/1]"}})
    cluster.run("5s")
    (error,) = cluster.action_errors
    assert error.startswith("FakeCluster: actions[0] failPod at 1s: pod ") and "no running container" in error
