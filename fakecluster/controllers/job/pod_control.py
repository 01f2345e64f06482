"""The pod writes of the Job controller: ``controller.PodControlInterface`` as ``job_controller.go`` uses it.

Creates go in slow-start batches (``manageJob``), deletions either keep the tracking finalizer
(``deleteActivePods``, for a finishing Job whose pods must still be counted) or remove it first
(``deleteJobPods``, for suspend and scale-down, whose pods are not counted), and finalizer removal is the
one patch the controller sends to pods. The first API error is kept in :attr:`PodControl.error` rather
than raised, as upstream collects errors in a channel and finishes the sync's status tracking first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fakecluster.api.batch_labels import JOB_TRACKING_FINALIZER
from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj
from fakecluster.controllers.job.pods import (
    UNKNOWN_INDEX,
    PodFactory,
    has_tracking_finalizer,
    is_pod_ready,
)

if TYPE_CHECKING:
    from fakecluster.client.internal import InternalClient
    from fakecluster.controllers.job.expectations import PodExpectations

SLOW_START_INITIAL_BATCH_SIZE = 1
"""``controller.SlowStartInitialBatchSize``."""


def remove_tracking_finalizer(client: InternalClient, namespace: str, pod: Obj) -> None:
    """Upstream sends the strategic-merge patch ``{"metadata": {"$deleteFromPrimitiveList/finalizers":
    ["batch.kubernetes.io/job-tracking"]}}``; the fake API server speaks JSON merge patch, so the
    remaining list is computed from the live pod (the snapshot in hand may predate another finalizer
    change). A pod that is gone, replaced or already without the finalizer counts as done."""
    meta = pod["metadata"]
    try:
        live = client.get("Pod", namespace, meta["name"])
    except NotFound:
        return
    if live["metadata"]["uid"] != meta["uid"] or not has_tracking_finalizer(live):
        return
    remaining = [f for f in live["metadata"].get("finalizers") or () if f != JOB_TRACKING_FINALIZER]
    try:
        patch = {"metadata": {"finalizers": remaining or None}}
        client.patch("Pod", namespace, meta["name"], patch)
    except NotFound:
        pass


class PodControl:
    """Pod create/delete/patch for one Job's sync."""

    def __init__(self, client: InternalClient, namespace: str, *, expectations: PodExpectations | None = None,
                 job_name: str = "", record_event: Callable[[str, str, str], None] | None = None) -> None:
        self._client = client
        self._namespace = namespace
        self._expectations = expectations
        """Told what this sync creates and deletes (``ExpectCreations``/``ExpectDeletions``) before it does,
        and about the writes that failed, which no watch event will ever report."""
        self._job_key = (namespace, job_name)
        self._record_event = record_event
        """``RealPodControl.Recorder``: SuccessfulCreate/FailedCreate/SuccessfulDelete/FailedDelete on the Job
        (``pkg/controller/controller_utils.go``), through the Job controller's correlating recorder."""
        self.error: ApiError | None = None

    def _fail(self, err: ApiError) -> None:
        if self.error is None:
            self.error = err

    def create_pods(self, factory: PodFactory, count: int, pending: list[int]) -> int:
        """Create ``count`` pods (for the completion indexes in ``pending``, if Indexed) in batches of 1,
        2, 4, ...; a batch with a failed create abandons the rest, which a later sync retries ("slow
        start", so a quota error costs one request, not hundreds). Returns how many were created."""
        created = position = 0
        expected = count
        if self._expectations is not None:
            self._expectations.expect_creations(self._job_key, expected)
        batch = min(count, SLOW_START_INITIAL_BATCH_SIZE)
        template = factory.validated_template(self._client) if count > 0 else None
        while count > 0:
            failed = False
            for _ in range(batch):
                index = pending[position] if pending else UNKNOWN_INDEX
                position += 1
                try:
                    pod = self._client.create_donated(factory.pod(index), template=template)
                    created += 1
                    if self._record_event is not None:
                        self._record_event("Normal", "SuccessfulCreate",
                                           f"Created pod: {pod['metadata']['name']}")
                except ApiError as err:
                    self._fail(err)
                    failed = True
                    if self._record_event is not None:
                        self._record_event("Warning", "FailedCreate", f"Error creating: {err.message}")
            count -= batch
            if failed:
                break
            batch = min(2 * batch, count)
        if self._expectations is not None and created < expected:
            self._expectations.creation_observed(self._job_key, expected - created)
        return created

    def delete_pods(self, pods: list[Obj], *, keep_finalizers: bool) -> tuple[int, int]:
        """``deleteActivePods`` (``keep_finalizers``) or ``deleteJobPods``; a pod already gone counts as
        deleted. Returns (ready pods deleted, pods deleted)."""
        deleted_ready = deleted = 0
        expectations = None if keep_finalizers else self._expectations  # deleteActivePods expects nothing
        if expectations is not None:
            expectations.expect_deletions(self._job_key, [p["metadata"]["name"] for p in pods])
        for pod in pods:
            try:
                if not keep_finalizers:
                    remove_tracking_finalizer(self._client, self._namespace, pod)
                self._client.delete("Pod", self._namespace, pod["metadata"]["name"])
            except ApiError as err:
                if expectations is not None:
                    expectations.deletion_observed(self._job_key, pod["metadata"]["name"])
                if not isinstance(err, NotFound):
                    self._fail(err)
                    if self._record_event is not None:
                        self._record_event("Warning", "FailedDelete", f"Error deleting: {err.message}")
                    continue
            else:
                if self._record_event is not None:
                    self._record_event("Normal", "SuccessfulDelete",
                                       f"Deleted pod: {pod['metadata']['name']}")
            deleted += 1
            if is_pod_ready(pod):
                deleted_ready += 1
        return deleted_ready, deleted

    def remove_finalizers(self, pods: list[Obj]) -> tuple[list[str], ApiError | None]:
        """``removeTrackingFinalizerFromPods``: the UIDs whose finalizer is now gone, and the first error
        (kept apart from :attr:`error`: it aborts status tracking, a create/delete error does not)."""
        removed = []
        first_error: ApiError | None = None
        for pod in pods:
            try:
                remove_tracking_finalizer(self._client, self._namespace, pod)
            except ApiError as err:
                first_error = first_error or err
                continue
            removed.append(pod["metadata"]["uid"])
        return removed, first_error
