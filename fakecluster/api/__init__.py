"""Typed Kubernetes API models (pydantic v2): meta/v1, core/v1, batch/v1, events.k8s.io/v1.

The store keeps wire-form dicts; these models are the schema the API server checks them against
(:func:`validate_model`) and typed views for code that prefers attributes to dict lookups.
"""

from typing import TYPE_CHECKING, Any

from fakecluster.api.base import Int32, Int64, IntOrString, K8sModel, MicroTime, Quantity, Time
from fakecluster.api.batch import (
    Job,
    JobCondition,
    JobSpec,
    JobStatus,
    JobTemplateSpec,
    PodFailurePolicy,
    PodFailurePolicyOnExitCodesRequirement,
    PodFailurePolicyOnPodConditionsPattern,
    PodFailurePolicyRule,
    SuccessPolicy,
    SuccessPolicyRule,
    UncountedTerminatedPods,
)
from fakecluster.api.core import (
    Container,
    ContainerPort,
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStateWaiting,
    ContainerStatus,
    EnvVar,
    Event,
    EventSeries,
    EventSource,
    Node,
    NodeAddress,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    ObjectReference,
    Pod,
    PodCondition,
    PodIP,
    PodSchedulingGate,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    Probe,
    ResourceRequirements,
    Service,
    ServicePort,
    ServiceSpec,
    Taint,
    Toleration,
    VolumeMount,
)
from fakecluster.api.meta import (
    Condition,
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ObjectMeta,
    OwnerReference,
)
from fakecluster.api.quantity import parse_quantity
from fakecluster.api.validation import dump, validate_model

if TYPE_CHECKING:
    from fakecluster.api.events import Event as EventsV1Event
    from fakecluster.api.events import EventSeries as EventsV1EventSeries

__all__ = [
    "Condition",
    "Container",
    "ContainerPort",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "EnvVar",
    "Event",
    "EventSeries",
    "EventSource",
    "EventsV1Event",
    "EventsV1EventSeries",
    "Int32",
    "Int64",
    "IntOrString",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "K8sModel",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "MicroTime",
    "Node",
    "NodeAddress",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "ObjectMeta",
    "ObjectReference",
    "OwnerReference",
    "Pod",
    "PodCondition",
    "PodFailurePolicy",
    "PodFailurePolicyOnExitCodesRequirement",
    "PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyRule",
    "PodIP",
    "PodSchedulingGate",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "Probe",
    "Quantity",
    "ResourceRequirements",
    "Service",
    "ServicePort",
    "ServiceSpec",
    "SuccessPolicy",
    "SuccessPolicyRule",
    "Taint",
    "Time",
    "Toleration",
    "UncountedTerminatedPods",
    "VolumeMount",
    "dump",
    "parse_quantity",
    "validate_model",
]


def __getattr__(name: str) -> Any:
    """The events.k8s.io/v1 models on first use: nothing the API server serves validates against them
    (its Event kind is stored without a model), so a run need not build their classes."""
    if name in ("EventsV1Event", "EventsV1EventSeries"):
        from fakecluster.api import events

        value = getattr(events, name.removeprefix("EventsV1"))
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fakecluster.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
