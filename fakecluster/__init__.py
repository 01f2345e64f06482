"""fakecluster: a deterministic, in-memory Kubernetes cluster on a virtual clock.

The cluster knows nothing about JobSet: workloads plug in their API types, admission and controllers
through :mod:`fakecluster.workload_plugin`. See README.md for the quick start.
"""

from fakecluster.api.errors import AlreadyExists, ApiError, Conflict, FieldError, Invalid, NotFound
from fakecluster.clock import Clock

__all__ = ["AlreadyExists", "ApiError", "Clock", "Conflict", "FieldError", "Invalid", "NotFound"]
