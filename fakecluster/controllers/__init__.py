"""Built-in controllers of the fake cluster (kube-controller-manager's, reduced to what JobSet observes)."""

from fakecluster.controllers.job import JobController

__all__ = ["JobController"]
