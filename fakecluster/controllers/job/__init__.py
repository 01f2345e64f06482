"""The batch/v1 Job controller: a port of upstream ``pkg/controller/job`` split by concern.

:mod:`.job_controller` (``job_controller.go``: watches, queue, sync entry), :mod:`.sync` (``syncJob``),
:mod:`.pods` and :mod:`.pod_view` (the pods a Job owns, classified), :mod:`.pod_control` (creating and
deleting pods), :mod:`.status` (conditions and counts), :mod:`.tracking_utils` (``tracking_utils.go``,
finalizers and uncounted pods), :mod:`.indexed_job_utils` (``indexed_job_utils.go``),
:mod:`.backoff_per_index` (``backoffLimitPerIndex``) and :mod:`.expectations` (``controller_utils.go``'s
ControllerExpectations)."""

from fakecluster.controllers.job.job_controller import JobController

__all__ = ["JobController"]
