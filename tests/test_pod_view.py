"""The Job controller's per-Job pod view (fakecluster/controllers/job/pod_view.py): kept current from the
pod watch, at each sync it must equal a view built afresh from a list of the Job's pods, and it must
not move between two syncs."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock
from fakecluster.controllers.job.pod_view import JobPodView, JobPodViews, ViewParams

JOB_UID = "job-uid"
OTHER_UID = "other-uid"
NS = "default"
TRACKING = "batch.kubernetes.io/job-tracking"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
OTHER_FINALIZER = "example.com/other"


def snapshot(view: JobPodView) -> dict[str, Any]:
    """Everything a sync can read from a view."""
    return {
        "counts": (view.active, view.ready, view.terminating, view.restarts, view.tracked),
        "active_indexes": dict(view.active_indexes),
        "terminating_indexes": dict(view.terminating_indexes),
        "active_out_of_range": view.active_out_of_range,
        "distinct": view.active_indexes_distinct_in_range(),
        "active_pods": view.active_pods(),
        "failed": view.failed_pods(),
        "finished_tracked": view.finished_tracked_pods(),
        "all_tracked": view.all_tracked_pods(),
        "tracked_uids": set(view.tracked_uids),
    }


def fresh(server: ApiServer, params: ViewParams) -> JobPodView:
    return JobPodView(JOB_UID, NS, params, server.list("Pod", NS, owner_uid=JOB_UID))


def random_pod(rng: random.Random, name: str) -> Obj:
    refs = []
    if rng.random() < 0.9:
        refs.append({"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": JOB_UID,
                     "controller": rng.random() < 0.85})
    if rng.random() < 0.2:
        refs.append({"apiVersion": "batch/v1", "kind": "Job", "name": "o", "uid": OTHER_UID,
                     "controller": False})
    meta: Obj = {"name": name, "namespace": rng.choice([NS, NS, NS, "elsewhere"]), "ownerReferences": refs}
    if rng.random() < 0.8:
        meta["finalizers"] = [TRACKING]
    if rng.random() < 0.9:
        meta["annotations"] = {INDEX_KEY: str(rng.randrange(-1, 6))}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}


def random_status(rng: random.Random) -> Obj:
    return {
        "phase": rng.choice(["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
        "conditions": [{"type": "Ready", "status": rng.choice(["True", "False"])}],
        "containerStatuses": [{"name": "main", "restartCount": rng.randrange(3)}],
    }


def random_write(rng: random.Random, server: ApiServer, names: list[str]) -> None:
    name = rng.choice(names)
    op = rng.random()
    try:
        if op < 0.25:
            server.create(random_pod(rng, name))
            return
        live = server.list("Pod", "", owner_uid=None)
        target = next((p for p in live if p["metadata"]["name"] == name), None)
        if target is None:
            return
        ns = target["metadata"]["namespace"]
        if op < 0.45:
            server.patch("Pod", ns, name, {"status": random_status(rng)}, subresource="status")
        elif op < 0.5:  # the rest of the status shared with the stored one (merge patch), as the kubelet does
            phase = rng.choice(["Pending", "Running", "Succeeded", "Failed"])
            server.patch("Pod", ns, name, {"status": {"phase": phase}}, subresource="status")
        elif op < 0.55:  # init container restarts: the regular containers' statuses shared
            init = [{"name": "init", "restartCount": rng.randrange(3)}]
            server.patch("Pod", ns, name, {"status": {"initContainerStatuses": init}}, subresource="status")
        elif op < 0.65:
            finalizers = rng.choice([None, [TRACKING], [OTHER_FINALIZER], [OTHER_FINALIZER, TRACKING]])
            server.patch("Pod", ns, name, {"metadata": {"finalizers": finalizers}})
        elif op < 0.75:
            refs = random_pod(rng, name)["metadata"]["ownerReferences"]
            server.patch("Pod", ns, name, {"metadata": {"ownerReferences": refs or None}})
        elif op < 0.85 and not target["spec"].get("nodeName"):
            server.bind(ns, name, "node-1")
        else:
            server.delete("Pod", ns, name)
    except ApiError:
        pass  # an invalid or conflicting random write changes nothing


@pytest.mark.parametrize("seed", range(6))
def test_view_fed_by_the_watch_equals_a_fresh_view_of_the_listed_pods(seed: int) -> None:
    rng = random.Random(seed)
    server = ApiServer(Clock(), random.Random(seed))
    register_builtin(server)
    params = ViewParams(indexed=rng.random() < 0.7, completions=4, only_replace_failed=rng.random() < 0.5)
    names = [f"p{i}" for i in range(12)]
    for _ in range(20):
        random_write(rng, server, names)
    views = JobPodViews()
    server.watch("Pod", views.on_pod_event)
    assert views.hold(JOB_UID, NS, params) is None
    view = views.start(JOB_UID, NS, params, server.list("Pod", NS, owner_uid=JOB_UID))
    for step in range(400):
        before = snapshot(view)
        for _ in range(rng.randrange(1, 6)):  # a sync's writes, or the pods' between two syncs
            random_write(rng, server, names)
        assert snapshot(view) == before, "a held view moved"
        assert views.hold(JOB_UID, NS, params) is view
        assert snapshot(view) == snapshot(fresh(server, params)), f"seed {seed}, step {step}"


def test_a_view_is_rebuilt_when_the_parameters_change() -> None:
    server = ApiServer(Clock(), random.Random(0))
    register_builtin(server)
    views = JobPodViews()
    views.start(JOB_UID, NS, ViewParams(True, 4, False), [])
    assert views.hold(JOB_UID, NS, ViewParams(True, 5, False)) is None
    views.forget(JOB_UID)
    assert views.hold(JOB_UID, NS, ViewParams(True, 4, False)) is None
