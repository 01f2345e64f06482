"""The JobSet pod controller (``jobset/controller/pod_controller.py``), after upstream
``pod_controller_test.go`` (``TestValidatePodPlacements``, ``TestReconcileDeletesMismatchedFollowerPods``,
``TestDeleteFollowerPods``, ``TestListPodsForJob``): followers pinned to another domain than their
leader's node are deleted, each first marked ``DisruptionTarget``/``ExclusivePlacementViolation``; valid
placements, other Jobs' pods and pods of other owners are left alone; an unknown leader domain is retried."""

from __future__ import annotations

import random

import pytest

from fakecluster.api.objects import Obj, get_condition
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.server import ApiServer
from fakecluster.client import LocalClient
from fakecluster.clock import Clock
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.pod_controller import PodController, update_pod_condition

KEY = "cloud.google.com/gke-nodepool"
INDEX = "batch.kubernetes.io/job-completion-index"


def setup() -> tuple[ApiServer, PodController]:
    clock = Clock()
    srv = ApiServer(clock, random.Random(0))
    register_builtin(srv)  # no pod webhook: these tests place pods by hand
    for name, labels in (("node-a", {KEY: "pool-a"}), ("node-x", {})):
        srv.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
    return srv, PodController(LocalClient(srv, "jobset-controller"), clock)


def make_pod(srv: ApiServer, index: int, *, node: str | None = None, selector: dict[str, str] | None = None,
             job: str = "0", owner: str = "uid-0") -> Obj:
    labels = {api.JOB_KEY: f"hash-{job}", INDEX: str(index)}
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    if selector is not None:
        spec["nodeSelector"] = selector
    return srv.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"js-rjob-{job}-{index}-{owner[-1]}bcde", "namespace": "default", "labels": labels,
        "annotations": {api.EXCLUSIVE_KEY: KEY, INDEX: str(index)},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": f"js-rjob-{job}", "uid": owner,
                             "controller": True}]}, "spec": spec})


def names(srv: ApiServer) -> list[str]:
    return [p["metadata"]["name"] for p in srv.list("Pod")]


def test_valid_placements_delete_nothing() -> None:
    srv, _ = setup()
    make_pod(srv, 1, selector={KEY: "pool-a"})
    make_pod(srv, 0, node="node-a")
    srv.clock.run(1)
    assert len(names(srv)) == 2


def test_mismatched_or_missing_selectors_delete_every_follower_of_that_job_only() -> None:
    srv, _ = setup()
    make_pod(srv, 1, selector={KEY: "pool-b"})
    make_pod(srv, 2, selector={KEY: "pool-a"})
    make_pod(srv, 1, selector={}, job="1")  # another Job: its own leader decides
    make_pod(srv, 3, selector={KEY: "pool-z"}, owner="uid-9")  # same job key, other owner: left alone
    deleted: list[Obj] = []
    srv.watch("Pod", lambda e: deleted.append(e.old) if e.type == "DELETED" and e.old else None)
    make_pod(srv, 0, node="node-a")
    srv.clock.run(1)
    assert sorted(names(srv)) == ["js-rjob-0-0-0bcde", "js-rjob-0-3-9bcde", "js-rjob-1-1-0bcde"]
    assert sorted(p["metadata"]["name"] for p in deleted) == ["js-rjob-0-1-0bcde", "js-rjob-0-2-0bcde"]
    for pod in deleted:
        condition = get_condition(pod, "DisruptionTarget")
        assert condition is not None
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True", "ExclusivePlacementViolation", "Pod violated JobSet exclusive placement policy")


def test_leader_on_a_node_without_the_topology_label_or_unscheduled_is_left_alone() -> None:
    srv, _ = setup()
    make_pod(srv, 1, selector={KEY: "pool-b"})
    make_pod(srv, 0, node="node-x")
    make_pod(srv, 1, selector={KEY: "pool-b"}, job="1")
    make_pod(srv, 0, job="1")  # not scheduled: filtered out
    srv.clock.run(1)
    assert len(names(srv)) == 4


def test_leader_on_a_missing_node_is_retried_not_acted_on() -> None:
    srv, controller = setup()
    make_pod(srv, 1, selector={KEY: "pool-a"})
    make_pod(srv, 0, node="node-gone")
    with pytest.raises(ApiError, match=r"leader topology is unknown \(node not found\)"):
        controller.reconcile(("default", "js-rjob-0-0-0bcde"))
    srv.clock.run(1)
    assert len(names(srv)) == 2
    assert controller.controller.stats.errors >= 1


def test_update_pod_condition_like_upstream() -> None:
    condition = {"type": "DisruptionTarget", "status": "True", "reason": "R", "message": "M"}
    status: Obj = {}
    assert update_pod_condition(status, condition, "t1")
    assert status["conditions"][0]["lastTransitionTime"] == "t1"
    assert not update_pod_condition(status, {**condition, "reason": "Other"}, "t2")  # same status: no update
    false = {**condition, "status": "False"}
    assert update_pod_condition(status, false, "t3") and status["conditions"][0]["status"] == "False"
    assert not update_pod_condition({}, false, "t4")  # a False condition is never appended
