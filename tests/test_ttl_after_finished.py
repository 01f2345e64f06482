"""The TTL-after-finished controller (``pkg/controller/ttlafterfinished``) in a whole fake cluster.

Pods exit 0 (or 1) after 5 s, so a Job finishes at 6 (the Job controller's 1 s batching); its expiry
is the finished condition's ``lastTransitionTime`` plus ``ttlSecondsAfterFinished``. Every test watches
the Job to see the exact virtual time and shape of the deletion: ``propagationPolicy: Foreground``
shows as the ``foregroundDeletion`` finalizer on the Job, whose pods the garbage collector then removes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from test_job_controller import NS, condition

from fakecluster.api.objects import Obj, clone
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.controllers.ttl_after_finished import TTLAfterFinishedController, expires_at
from fakecluster.kubelet.pod_timings import PodTimings


class JobLog:
    """When the Job got its ``deletionTimestamp`` (with which finalizers) and when it was removed."""

    def __init__(self, c: Cluster) -> None:
        self.clock = c.clock
        self.deleting: list[tuple[float, list[str]]] = []
        self.removed: list[float] = []
        self.finalizers: list[tuple[float, list[str]]] = []
        """Every change of the Job's finalizers."""
        c.server.watch("Job", self._on_job)

    def _on_job(self, event: WatchEvent) -> None:
        meta = event.object["metadata"]
        if event.type == "DELETED":
            self.removed.append(self.clock.now)
            return
        finalizers = list(meta.get("finalizers") or ())
        if finalizers != list((event.old or {}).get("metadata", {}).get("finalizers") or ()):
            self.finalizers.append((self.clock.now, finalizers))
        was_deleting = (event.old or {}).get("metadata", {}).get("deletionTimestamp")
        if meta.get("deletionTimestamp") and not was_deleting:
            self.deleting.append((self.clock.now, list(meta.get("finalizers") or ())))


def start(exit_code: int = 0, **spec: Any) -> tuple[Cluster, JobLog]:
    timings = PodTimings(exit_after=5.0, exit_code=exit_code)
    c = Cluster(seed=0, config=ClusterConfig(behaviour=lambda _pod: timings))
    log = JobLog(c)
    c.client().create(job_manifest(backoffLimit=0, **spec))
    return c, log


def job_manifest(**spec: Any) -> Obj:
    """Job ``j``: one busybox pod that never restarts."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {**spec, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}


def edit_job_at(c: Cluster, when: float, edit: Callable[[Obj], object]) -> None:
    """Run to ``when`` and write Job ``j`` back there with ``edit`` applied to a copy of it."""
    c.run(when)
    c.clock.advance_to(when)
    edited = clone(c.client().get("Job", NS, "j"))
    edit(edited)
    c.client().update(edited)


def job(c: Cluster) -> Obj | None:
    jobs = c.client().list("Job", NS)
    return jobs[0] if jobs else None


def test_complete_job_is_deleted_in_the_foreground_ttl_seconds_after_completion() -> None:
    c, log = start(ttlSecondsAfterFinished=10)
    c.run(15.999)
    finished = job(c)
    assert finished is not None
    assert condition(finished["status"], "Complete")["lastTransitionTime"] == "2025-01-01T00:00:06Z"  # type: ignore[index]
    assert expires_at(finished) == 16.0
    assert log.deleting == []
    assert len(c.client().list("Pod", NS)) == 1
    c.run(100)
    assert log.deleting == [(16.0, ["foregroundDeletion"])]
    assert log.removed == [16.0]  # its one pod is terminal and finalizer-free: the GC removes it at once
    assert c.client().list("Pod", NS) == []
    assert c.ttl_after_finished_controller.controller.stats.reconciles == 2  # at 6, then requeued for 16


def test_failed_job_with_ttl_zero_is_deleted_as_soon_as_it_failed() -> None:
    c, log = start(exit_code=1, ttlSecondsAfterFinished=0)
    c.run(100)
    assert log.deleting == [(6.0, ["foregroundDeletion"])]
    assert log.removed == [6.0]


def test_jobs_without_ttl_or_not_finished_are_kept() -> None:
    c, log = start()
    c.run(1000)
    assert job(c) is not None
    c2, log2 = start(ttlSecondsAfterFinished=0, suspend=True)
    c2.run(1000)
    assert job(c2) is not None
    assert log.deleting == log2.deleting == []
    assert c2.ttl_after_finished_controller.controller.stats.reconciles == 0


def test_ttl_edited_after_finishing_is_honoured() -> None:
    c, log = start(ttlSecondsAfterFinished=10)
    edit_job_at(c, 10, lambda extended: extended["spec"].update(ttlSecondsAfterFinished=100))
    c.run(105.999)
    assert log.deleting == []  # the requeue at 16 re-read the Job and found it not expired yet
    c.run(200)
    assert log.deleting == [(106.0, ["foregroundDeletion"])]

    c, log = start(ttlSecondsAfterFinished=1000)
    # expired since 11: deleted on the update event
    edit_job_at(c, 20, lambda shortened: shortened["spec"].update(ttlSecondsAfterFinished=5))
    c.run(100)
    assert log.deleting == [(20.0, ["foregroundDeletion"])]


def test_job_already_being_deleted_is_left_to_that_deletion() -> None:
    c, log = start(ttlSecondsAfterFinished=10)
    edit_job_at(c, 8, lambda held: held["metadata"].update(finalizers=["example.com/hold"]))
    c.client().delete("Job", NS, "j", propagation_policy="Orphan")
    c.run(100)
    still = job(c)
    assert still is not None
    assert log.deleting == [(8.0, ["example.com/hold", "orphan"])]
    # the garbage collector orphaned the pod; nobody switched the deletion to the foreground
    assert log.finalizers == [(8.0, ["example.com/hold"]), (8.0, ["example.com/hold", "orphan"]),
                              (8.0, ["example.com/hold"])]


def test_a_recreated_job_of_the_same_name_is_judged_afresh() -> None:
    c, log = start(ttlSecondsAfterFinished=10)
    api = c.client()
    c.run(10)
    c.clock.advance_to(10)
    api.delete("Job", NS, "j", propagation_policy="Background")
    api.create(job_manifest(suspend=True, ttlSecondsAfterFinished=10))
    c.run(1000)
    assert (log.deleting, log.removed) == ([], [10.0])  # only our own deletion of the first one
    assert job(c) is not None


def test_cluster_constructs_the_controller() -> None:
    assert isinstance(Cluster().ttl_after_finished_controller, TTLAfterFinishedController)
