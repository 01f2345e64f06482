"""scheduling.k8s.io/v1 ``PriorityClass`` (``k8s.io/api/scheduling/v1/types.go``), the schema its objects
are decoded with: a ``value`` that is not an ``int32`` (``"1- 00"``) is refused with its path, as a real
API server fails to decode it, instead of being stored for the ``Priority`` admission plugin to trip on.
The semantic rules of ``pkg/apis/scheduling/validation`` (reserved ``system-`` names, ``value`` at most
one billion for user classes, an immutable ``value``) are not modelled."""

from typing import Literal

from fakecluster.api.base import Int32
from fakecluster.api.meta import TopLevelObject

__all__ = ["PriorityClass"]


class PriorityClass(TopLevelObject, defer_build=True):
    """``schedulingv1.PriorityClass``: ``value`` is required."""

    value: Int32
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
