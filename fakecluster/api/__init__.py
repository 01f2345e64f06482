"""Typed Kubernetes API models (pydantic v2): meta/v1, core/v1, batch/v1, events.k8s.io/v1.

The store keeps wire-form dicts; these models are the schema the API server checks them against
(:func:`validate_model`) and typed views for code that prefers attributes to dict lookups.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "Condition": "fakecluster.api.meta",
    "Container": "fakecluster.api.core",
    "ContainerPort": "fakecluster.api.core",
    "ContainerState": "fakecluster.api.core",
    "ContainerStateRunning": "fakecluster.api.core",
    "ContainerStateTerminated": "fakecluster.api.core",
    "ContainerStateWaiting": "fakecluster.api.core",
    "ContainerStatus": "fakecluster.api.core",
    "EnvVar": "fakecluster.api.core",
    "Event": "fakecluster.api.core",
    "EventSeries": "fakecluster.api.core",
    "EventSource": "fakecluster.api.core",
    "EventsV1Event": "fakecluster.api.events",
    "EventsV1EventSeries": "fakecluster.api.events",
    "Int32": "fakecluster.api.base",
    "Int64": "fakecluster.api.base",
    "IntOrString": "fakecluster.api.base",
    "Job": "fakecluster.api.batch",
    "JobCondition": "fakecluster.api.batch",
    "JobSpec": "fakecluster.api.batch",
    "JobStatus": "fakecluster.api.batch",
    "JobTemplateSpec": "fakecluster.api.batch",
    "K8sModel": "fakecluster.api.base",
    "LabelSelector": "fakecluster.api.meta",
    "LabelSelectorRequirement": "fakecluster.api.meta",
    "ListMeta": "fakecluster.api.meta",
    "MicroTime": "fakecluster.api.base",
    "Node": "fakecluster.api.core",
    "NodeAddress": "fakecluster.api.core",
    "NodeCondition": "fakecluster.api.core",
    "NodeSpec": "fakecluster.api.core",
    "NodeStatus": "fakecluster.api.core",
    "ObjectMeta": "fakecluster.api.meta",
    "ObjectReference": "fakecluster.api.core",
    "OwnerReference": "fakecluster.api.meta",
    "Pod": "fakecluster.api.core",
    "PodCondition": "fakecluster.api.core",
    "PodFailurePolicy": "fakecluster.api.batch",
    "PodFailurePolicyOnExitCodesRequirement": "fakecluster.api.batch",
    "PodFailurePolicyOnPodConditionsPattern": "fakecluster.api.batch",
    "PodFailurePolicyRule": "fakecluster.api.batch",
    "PodIP": "fakecluster.api.core",
    "PodSchedulingGate": "fakecluster.api.core",
    "PodSpec": "fakecluster.api.core",
    "PodStatus": "fakecluster.api.core",
    "PodTemplateSpec": "fakecluster.api.core",
    "Probe": "fakecluster.api.core",
    "Quantity": "fakecluster.api.base",
    "ResourceRequirements": "fakecluster.api.core",
    "Service": "fakecluster.api.core",
    "ServicePort": "fakecluster.api.core",
    "ServiceSpec": "fakecluster.api.core",
    "SuccessPolicy": "fakecluster.api.batch",
    "SuccessPolicyRule": "fakecluster.api.batch",
    "Taint": "fakecluster.api.core",
    "Time": "fakecluster.api.base",
    "Toleration": "fakecluster.api.core",
    "UncountedTerminatedPods": "fakecluster.api.batch",
    "VolumeMount": "fakecluster.api.core",
    "dump": "fakecluster.api.validation",
    "parse_quantity": "fakecluster.api.quantity",
    "validate_model": "fakecluster.api.validation",
}
"""Each name's module; there the events.k8s.io/v1 names lose their ``EventsV1`` prefix."""


def __getattr__(name: str) -> Any:
    """Every name on first use (PEP 562), as :mod:`fakecluster`'s are: each module of this package
    imports what it uses, so loading a scenario file (which needs the validation helpers of
    :mod:`~fakecluster.api.validation`, not the models) builds no API model, and the events.k8s.io/v1
    models, which nothing the API server serves validates against, wait for someone to ask."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'fakecluster.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name.removeprefix("EventsV1"))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
