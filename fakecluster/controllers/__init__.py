"""Built-in controllers of the fake cluster (kube-controller-manager's, reduced to what JobSet observes)."""

from fakecluster.controllers.job import JobController
from fakecluster.controllers.ttl_after_finished import TTLAfterFinishedController

__all__ = ["JobController", "TTLAfterFinishedController"]
