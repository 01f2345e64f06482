"""Pod creation/deletion expectations of the Job controller: ``controller.UIDTrackingControllerExpectations``
(``pkg/controller/controller_utils.go``) as ``job_controller.go`` uses it.

Why it exists: the controller reads pods from an informer cache. Right after it creates or deletes
pods, the cache does not show them yet, and a sync run in that window would count too few (or too
many) pods and create (or delete) them a second time. Upstream therefore records, before each batch of
writes, how many creations and which deletions it expects; the pod watch handlers count them off as
the cache observes them, and until they are all seen (or five minutes have passed) ``syncJob`` skips
``manageJob`` altogether and only tracks status. When the cache is the store itself (no informer lag)
every write is observed before the next sync can run, so expectations are always satisfied by then and
change nothing; with :mod:`fakecluster.client.informer` lag they are what keeps pod counts right.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from fakecluster.clock import Clock

EXPECTATIONS_TIMEOUT = 5 * 60.0
"""``controller.ExpectationsTimeout``: unobserved expectations older than this count as satisfied, so a
lost watch event cannot wedge a Job forever."""

JobKey = tuple[str, str]


@dataclass(slots=True)
class _Expectation:
    adds: int
    deletes: dict[str, None] = field(default_factory=dict)
    """Names of pods whose deletion is still to be observed (a dict: insertion-ordered, like a set)."""
    since: float = 0.0


class PodExpectations:
    """Per-Job outstanding pod creations (a count) and deletions (pod names)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._by_job: dict[JobKey, _Expectation] = {}

    def satisfied(self, job: JobKey) -> bool:
        """``SatisfiedExpectations``: nothing recorded, everything observed, or expired."""
        exp = self._by_job.get(job)
        if exp is None or (exp.adds <= 0 and not exp.deletes):
            return True
        return self._clock.now - exp.since > EXPECTATIONS_TIMEOUT

    def expect_creations(self, job: JobKey, count: int) -> None:
        """``ExpectCreations``: replaces whatever was recorded for the Job."""
        self._by_job[job] = _Expectation(adds=count, since=self._clock.now)

    def creation_observed(self, job: JobKey, count: int = 1) -> None:
        """``CreationObserved`` (also called for creations that failed or were skipped)."""
        exp = self._by_job.get(job)
        if exp is not None:
            exp.adds -= count

    def expect_deletions(self, job: JobKey, pod_names: Iterable[str]) -> None:
        """``ExpectDeletions``: replaces whatever was recorded for the Job."""
        self._by_job[job] = _Expectation(adds=0, deletes=dict.fromkeys(pod_names), since=self._clock.now)

    def deletion_observed(self, job: JobKey, pod_name: str) -> None:
        """``DeletionObserved``: the pod got a deletionTimestamp or is gone (or its delete failed)."""
        exp = self._by_job.get(job)
        if exp is not None:
            exp.deletes.pop(pod_name, None)

    def forget(self, job: JobKey) -> None:
        """``DeleteExpectations``: the Job is gone."""
        self._by_job.pop(job, None)
