"""fakecluster: a deterministic, in-memory Kubernetes cluster on a virtual clock.

The cluster knows nothing about JobSet: workloads plug in their API types, admission and controllers
through :mod:`fakecluster.workload_plugin`. See README.md for the quick start.
"""

from fakecluster.api.errors import ApiError, FieldError
from fakecluster.clock import Clock

__all__ = ["ApiError", "Clock", "FieldError"]
