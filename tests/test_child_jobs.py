"""Child Jobs (jobset/controller/child_jobs.py) against upstream ``jobset_controller_test.go``:
``JobFinished``, Job construction from the ReplicatedJob template, the global and group index helpers,
``calculateReplicatedJobStatuses`` and ``updateReplicatedJobsStatuses``.
"""

from __future__ import annotations

import pytest
from jobset_harness import NS, T0, child, counts, jobset_keys, make_jobset, pod_template, rjob

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import (
    ChildJobs,
    calculate_replicated_job_statuses,
    construct_jobs_from_template,
    global_job_index,
    global_replicas,
    group_job_index,
    group_replicas,
    update_replicated_jobs_statuses,
)
from jobset.controller.conditions import (
    StatusUpdate,
)
from jobset.controller.job_facts import job_finished


# ------------------------------------------------------------------------------------------ JobFinished
@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([{"type": "Complete", "status": "True"}], (True, "Complete"), id="succeeded"),
        pytest.param([{"type": "Failed", "status": "True"}], (True, "Failed"), id="failed"),
        pytest.param([{"type": "", "status": "True"}], (False, ""), id="active"),
        pytest.param([{"type": "Suspended", "status": "True"}], (False, ""), id="suspended"),
        pytest.param([{"type": "FailureTarget", "status": "True"}], (False, ""), id="failure target"),
        pytest.param([{"type": "Failed", "status": "False"}], (False, ""), id="failed condition not true"),
    ],
)
def test_job_finished(conditions: list[Obj], expected: tuple[bool, str]) -> None:
    assert job_finished({"status": {"conditions": conditions}}) == expected


# ------------------------------------------------------------------------------------------ construction
def _names(jobs: list[Obj]) -> list[str]:
    return [j["metadata"]["name"] for j in jobs]


def _construct(js: Obj, owned: ChildJobs | None = None, *, restart_job: bool = False) -> list[Obj]:
    return [
        job
        for r in js["spec"]["replicatedJobs"]
        for job in construct_jobs_from_template(js, r, owned or ChildJobs(), restart_job=restart_job)
    ]


def test_construct_all_jobs_with_labels_annotations_on_job_and_pod_template() -> None:
    pod = pod_template()
    pod["metadata"] = {"labels": {"pod-label": "p"}, "annotations": {"pod-annotation": "p"}}
    js = make_jobset(rjob("a", 2, labels={"job-label": "j"}, annotations={"job-annotation": "j"}, pod=pod))
    jobs = _construct(js)
    assert _names(jobs) == ["js-a-0", "js-a-1"]
    keys = jobset_keys("a", 1, 2, total=2, global_idx=1)
    job = jobs[1]
    assert job["metadata"] == {
        "name": "js-a-1",
        "namespace": NS,
        "labels": {"job-label": "j", **keys},
        "annotations": {"job-annotation": "j", **keys},
    }
    assert job["spec"]["template"]["metadata"] == {
        "labels": {"pod-label": "p", **keys},
        "annotations": {"pod-annotation": "p", **keys},
    }
    assert job["spec"]["suspend"] is False
    assert job["spec"]["template"]["spec"] == pod_template()["spec"]
    assert "ownerReferences" not in job["metadata"]


@pytest.mark.parametrize("bucket", ["active", "successful", "failed", "previous"])
def test_construct_skips_names_held_by_any_owned_job(bucket: str) -> None:
    owned = ChildJobs()
    getattr(owned, bucket).append({"metadata": {"name": "js-a-0"}})
    assert _names(_construct(make_jobset(rjob("a", 2)), owned)) == ["js-a-1"]


def test_blocking_recreate_constructs_nothing_while_previous_jobs_exist() -> None:
    js = make_jobset(rjob("a", 2), failurePolicy={"restartStrategy": "BlockingRecreate"})
    assert _construct(js, ChildJobs(previous=[{"metadata": {"name": "js-a-0"}}])) == []
    assert _names(_construct(js)) == ["js-a-0", "js-a-1"]


def test_multiple_replicated_jobs_and_groups_get_global_and_group_indexes() -> None:
    js = make_jobset(rjob("a", 1, group="g1"), rjob("b", 2, group="g2"), rjob("c", 2, group="g1"))
    jobs = {j["metadata"]["name"]: j["metadata"]["labels"] for j in _construct(js)}
    assert jobs["js-c-1"] == jobset_keys(
        "c", 1, 2, total=5, global_idx=4, group="g1", group_total=3, group_idx=2
    )
    assert jobs["js-b-0"] == jobset_keys(
        "b", 0, 2, total=5, global_idx=1, group="g2", group_total=2, group_idx=0
    )


def test_exclusive_placement_node_selector_strategy_and_dns_and_coordinator() -> None:
    exclusive = {api.EXCLUSIVE_KEY: "zone", api.NODE_SELECTOR_STRATEGY_KEY: "true"}
    js = make_jobset(
        rjob("a", 1, annotations=exclusive),
        rjob("b", 1),
        network={"enableDNSHostnames": True, "subdomain": "sub"},
        coordinator={"replicatedJob": "a", "jobIndex": 0, "podIndex": 0},
        suspend=True,
    )
    a0, b0 = _construct(js)
    assert a0["metadata"]["annotations"][api.EXCLUSIVE_KEY] == "zone"
    assert api.EXCLUSIVE_KEY not in a0["metadata"]["labels"]
    assert a0["spec"]["template"]["spec"]["nodeSelector"] == {api.NAMESPACED_JOB_KEY: f"{NS}_js-a-0"}
    assert a0["spec"]["template"]["spec"]["tolerations"] == [
        {"key": api.NO_SCHEDULE_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert api.EXCLUSIVE_KEY not in b0["metadata"]["annotations"]
    assert "nodeSelector" not in b0["spec"]["template"]["spec"]
    for job in (a0, b0):
        assert job["spec"]["template"]["spec"]["subdomain"] == "sub"
        assert job["spec"]["suspend"] is True
        assert job["metadata"]["labels"][api.COORDINATOR_KEY] == "js-a-0-0.sub"
        assert job["spec"]["template"]["metadata"]["annotations"][api.COORDINATOR_KEY] == "js-a-0-0.sub"


def test_jobset_level_exclusive_annotation_is_copied_to_every_job() -> None:
    js = make_jobset(rjob("a"), rjob("b"))
    js["metadata"]["annotations"] = {api.EXCLUSIVE_KEY: "rack"}
    for job in _construct(js):
        assert job["metadata"]["annotations"][api.EXCLUSIVE_KEY] == "rack"
        assert api.NODE_SELECTOR_STRATEGY_KEY not in job["metadata"]["annotations"]
        assert "tolerations" not in job["spec"]["template"]["spec"]


@pytest.mark.parametrize(("gate", "expected"), [(True, ["1", "0"]), (False, [None, None])])
def test_job_restart_attempt_label_only_with_the_gate(gate: bool, expected: list[str | None]) -> None:
    js = make_jobset(rjob("a", 2))
    js["status"] = {"restarts": 3, "replicatedJobsStatus": [{"name": "a", "jobRestarts": [1, 0]}]}
    jobs = _construct(js, restart_job=gate)
    assert [j["metadata"]["labels"].get(api.JOB_RESTART_ATTEMPT_KEY) for j in jobs] == expected
    assert [j["metadata"]["annotations"].get(api.JOB_RESTART_ATTEMPT_KEY) for j in jobs] == expected
    assert {j["metadata"]["labels"][api.RESTARTS_KEY] for j in jobs} == {"3"}


@pytest.mark.parametrize(
    ("rjobs", "args", "expected"),
    [
        pytest.param([("rjob", 3)], ("rjob", 1), "1", id="single replicated job"),
        pytest.param(
            [("rjob1", 2), ("rjob2", 4), ("rjob3", 1)], ("rjob2", 3), "5", id="multiple replicated jobs"
        ),
        pytest.param([("rjob1", 2)], ("rjob2", 0), "", id="replicated job not found"),
    ],
)
def test_global_job_index(rjobs: list[tuple[str, int]], args: tuple[str, int], expected: str) -> None:
    assert global_job_index(make_jobset(*(rjob(n, r) for n, r in rjobs)), *args) == expected


def test_global_and_group_replicas_and_group_index() -> None:
    assert global_replicas(make_jobset()) == "0"
    js = make_jobset(
        rjob("rjob1", 1, group="groupA"), rjob("rjob2", 2, group="groupB"), rjob("rjob3", 3, group="groupA")
    )
    assert global_replicas(js) == "6"
    assert (group_replicas(js, "groupA"), group_replicas(js, "groupB"), group_replicas(js, "none")) == (
        "4",
        "2",
        "0",
    )
    assert group_job_index(js, "groupA", "rjob3", 1) == "2"
    assert group_job_index(js, "groupB", "rjob2", 1) == "1"
    assert group_job_index(js, "groupB", "rjob3", 0) == ""


# ------------------------------------------------------------------------------------------ statuses
def test_calculate_replicated_job_statuses() -> None:
    js = make_jobset(rjob("replicated-job-1", 1), rjob("replicated-job-2", 3))
    owned = ChildJobs(
        active=[
            child("j1", "replicated-job-1", parallelism=1, completions=2, ready=1, succeeded=1),
            child("j2", "replicated-job-2", parallelism=5, completions=None, ready=2, succeeded=3),
            child("j3", "replicated-job-2", parallelism=3, completions=2, ready=1, succeeded=1),
            child("j4", "replicated-job-2", parallelism=2, completions=3, ready=2, succeeded=1, active=2),
            child("j5", "replicated-job-2", parallelism=4, completions=5, ready=2, succeeded=1, suspend=True),
            child("j6", "not-in-spec", ready=1),
            {"metadata": {"name": "j7"}, "spec": {"parallelism": 1}, "status": {"ready": 1}},
        ],
        successful=[child("s1", "replicated-job-1")],
        failed=[child("f1", "replicated-job-2"), child("f2", "replicated-job-2")],
        previous=[child("p1", "replicated-job-1", ready=1)],
    )
    statuses = calculate_replicated_job_statuses(js, owned)
    assert counts(statuses) == {"replicated-job-1": (1, 1, 0, 0, 0), "replicated-job-2": (3, 0, 2, 1, 1)}


def test_no_jobs_still_gives_one_zero_entry_per_replicated_job() -> None:
    statuses = calculate_replicated_job_statuses(make_jobset(rjob("a"), rjob("b", 3)), ChildJobs())
    assert statuses == [
        {"name": n, "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0} for n in ("a", "b")
    ]


def test_replicated_jobs_status_is_stored_in_descending_name_order_and_compared_semantically() -> None:
    js = make_jobset(rjob("a"), rjob("c"), rjob("b"))
    opts = StatusUpdate(now=T0)
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, ChildJobs()), opts)
    assert [s["name"] for s in js["status"]["replicatedJobsStatus"]] == ["c", "b", "a"]
    assert opts.should_update

    again = StatusUpdate(now=T0)
    js["status"]["replicatedJobsStatus"].reverse()
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, ChildJobs()), again)
    assert not again.should_update
    assert [s["name"] for s in js["status"]["replicatedJobsStatus"]] == ["c", "b", "a"]

    changed = StatusUpdate(now=T0)
    owned = ChildJobs(successful=[child("js-b-0", "b")])
    update_replicated_jobs_statuses(js, calculate_replicated_job_statuses(js, owned), changed)
    assert changed.should_update
    assert counts(js["status"]["replicatedJobsStatus"])["b"] == (0, 1, 0, 0, 0)


def test_restart_arrays_are_carried_over_only_with_the_gate() -> None:
    js = make_jobset(rjob("a", 2))
    js["status"] = {
        "replicatedJobsStatus": [{"name": "a", "jobRestarts": [1, 0], "jobRestartsCountTowardsMax": [1, 0]}]
    }
    (with_gate,) = calculate_replicated_job_statuses(js, ChildJobs(), restart_job=True)
    (without,) = calculate_replicated_job_statuses(js, ChildJobs())
    assert (with_gate["jobRestarts"], with_gate["jobRestartsCountTowardsMax"]) == ([1, 0], [1, 0])
    assert "jobRestarts" not in without
