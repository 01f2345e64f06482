"""The Job controller's pod watch handler (fakecluster/controllers/job/job_controller.py): its short path
for updates that kept the pod's owners must do exactly what the general handler does, over many random
pod transitions: the same Jobs and orphan pods queued at the same times, the same expectations observed,
the same views fed."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from fakecluster.controllers.job.job_controller import JobController
from fakecluster.controllers.job.pod_view import ViewParams
from tests.test_pod_view import snapshot

NS = "default"
TRACKING = "batch.kubernetes.io/job-tracking"
OTHER_FINALIZER = "example.com/other"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
JOBS = ("live", "done")
"""A running Job and a finished one (whose pods the orphan worker cleans up)."""


class GeneralJobController(JobController):
    """Takes every pod delivery down the general path."""

    def _on_pod_event(self, event: WatchEvent) -> None:
        self._on_pod_event_general(event)


def make_job(server: ApiServer, name: str) -> Obj:
    job = server.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "c", "image": "busybox"}]}}},
    })
    if name == "done":
        status = {"conditions": [{"type": "Complete", "status": "True"}]}
        job = server.patch("Job", NS, name, {"status": status}, subresource="status")
    return job


def random_refs(rng: random.Random, jobs: dict[str, Obj]) -> list[Obj]:
    refs = []
    for name, job in jobs.items():
        if rng.random() < 0.45:
            refs.append({"apiVersion": "batch/v1", "kind": "Job", "name": name,
                         "uid": job["metadata"]["uid"] if rng.random() < 0.9 else "stale-uid",
                         "controller": rng.random() < 0.7})
    if rng.random() < 0.1:
        refs.insert(0, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid",
                        "controller": rng.random() < 0.5})
    return refs


def random_status(rng: random.Random) -> Obj:
    """A status merge patch: what it leaves out stays the stored status's very lists, as the kubelet's
    writes keep what did not change."""
    status: Obj = {}
    if rng.random() < 0.7:
        status["phase"] = rng.choice(["Pending", "Running", "Succeeded", "Failed"])
    if rng.random() < 0.5:
        status["conditions"] = [{"type": "Ready", "status": rng.choice(["True", "False"])}]
    if rng.random() < 0.5:
        status["containerStatuses"] = [{"name": "c", "restartCount": rng.randrange(3)}]
    if rng.random() < 0.2:
        status["initContainerStatuses"] = [{"name": "i", "restartCount": rng.randrange(3)}]
    return status


def random_write(rng: random.Random, server: ApiServer, jobs: dict[str, Obj], names: list[str]) -> None:
    name = rng.choice(names)
    op = rng.random()
    try:
        if op < 0.15:
            meta: Obj = {"name": name, "namespace": NS, "ownerReferences": random_refs(rng, jobs)}
            if rng.random() < 0.8:
                meta["finalizers"] = [TRACKING]
            if rng.random() < 0.5:
                meta["annotations"] = {INDEX_KEY: str(rng.randrange(3))}
            server.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
            return
        pod = server.get("Pod", NS, name)
        if op < 0.5:
            server.patch("Pod", NS, name, {"status": random_status(rng)}, subresource="status")
        elif op < 0.6:
            finalizers = rng.choice([None, [TRACKING], [OTHER_FINALIZER], [OTHER_FINALIZER, TRACKING]])
            server.patch("Pod", NS, name, {"metadata": {"finalizers": finalizers}})
        elif op < 0.7:
            server.patch("Pod", NS, name, {"metadata": {"labels": {"step": str(rng.randrange(9))}}})
        elif op < 0.8:
            server.patch("Pod", NS, name, {"metadata": {"ownerReferences": random_refs(rng, jobs) or None}})
        elif op < 0.85 and not pod["spec"].get("nodeName"):
            server.bind(NS, name, "node-1")
        else:
            server.delete("Pod", NS, name)
    except ApiError:
        pass  # an invalid or conflicting random write changes nothing


class Recorder:
    """What a pod delivery makes a controller do: each enqueue (key and delay), and each sync its queue
    then runs (when, key; the syncs themselves are not run, they would write), beside the expectations
    and views it leaves."""

    def __init__(self, controller: JobController, clock: Clock) -> None:
        self.controller = controller
        self.calls: list[tuple[Any, ...]] = []
        queue = controller.controller
        enqueue = queue.enqueue

        def recorded_enqueue(key: tuple[str, str, str], after: float = 0.0) -> None:
            self.calls.append(("enqueue", clock.now, key, after))
            enqueue(key, after)

        def recorded_sync(key: tuple[str, str, str]) -> None:
            self.calls.append(("sync", clock.now, key))

        queue.enqueue = recorded_enqueue  # type: ignore[method-assign]
        queue._reconcile = recorded_sync  # type: ignore[assignment]

    def state(self, jobs: dict[str, Obj]) -> dict[str, Any]:
        views = {}
        for job in jobs.values():
            view = self.controller._pod_views.by_uid.get(job["metadata"]["uid"])
            if view is not None:
                views[job["metadata"]["name"]] = (snapshot(view), list(view.written.items()))
        expectations = self.controller._expectations._by_job
        return {
            "calls": self.calls,
            "expectations": {key: (exp.adds, list(exp.deletes)) for key, exp in expectations.items()},
            "views": views,
        }


@pytest.mark.parametrize("seed", range(8))
def test_the_short_path_for_updates_does_what_the_general_path_does(seed: int) -> None:
    rng = random.Random(seed)
    clock = Clock()
    server = ApiServer(clock, random.Random(seed))
    register_builtin(server)
    jobs = {name: make_job(server, name) for name in JOBS}
    names = [f"p{i}" for i in range(10)]
    controllers = (JobController(LocalClient(server, "job-controller"), clock),
                   GeneralJobController(LocalClient(server, "job-controller"), clock))
    fast, general = (Recorder(controller, clock) for controller in controllers)
    params = ViewParams(indexed=rng.random() < 0.5, completions=3, only_replace_failed=rng.random() < 0.5)
    for job in jobs.values():
        for controller in controllers:
            controller._pod_views.start(job["metadata"]["uid"], NS, params, [])
    for step in range(300):
        clock.run(clock.now + rng.choice([0.0, 0.3, 1.1]))
        if rng.random() < 0.1:
            key, pods = (NS, rng.choice(JOBS)), rng.sample(names, 2)
            for controller in controllers:
                controller._expectations.expect_deletions(key, pods)
        if rng.random() < 0.05:
            key = (NS, rng.choice(JOBS))
            for controller in controllers:
                controller._expectations.expect_creations(key, 2)
        for _ in range(rng.randrange(1, 4)):
            random_write(rng, server, jobs, names)
        if rng.random() < 0.5:  # a sync takes the views
            for controller in controllers:
                for job in jobs.values():
                    controller._pod_views.hold(job["metadata"]["uid"], NS, params)
        assert fast.state(jobs) == general.state(jobs), f"seed {seed}, step {step}"
    assert sum(call[0] == "sync" for call in fast.calls) > 20
