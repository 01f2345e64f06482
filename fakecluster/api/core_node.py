"""core/v1 ``Node`` (k8s.io/api/core/v1/types.go, release-1.34).

The fake scheduler reads taints, ``unschedulable`` and ``allocatable``; the node lifecycle simulation
writes the ``Ready`` condition. Node info, images and volume bookkeeping are accepted but kept opaque.
"""

from typing import Any, Literal

from pydantic import Field

from fakecluster.api.base import K8sModel, Quantity, Time
from fakecluster.api.meta import ConditionStatus, TopLevelObject

__all__ = [
    "Node",
    "NodeAddress",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "Taint",
    "TaintEffect",
]

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
"""``corev1.TaintEffect``."""


class Taint(K8sModel, defer_build=True):
    """``corev1.Taint``; ``timeAdded`` is only set for ``NoExecute`` taints (taint-based eviction)."""

    key: str
    value: str | None = None
    effect: TaintEffect
    time_added: Time | None = None


class NodeSpec(K8sModel, defer_build=True):
    """``corev1.NodeSpec``."""

    pod_cidr: str | None = Field(default=None, alias="podCIDR")
    pod_cidrs: list[str] | None = Field(default=None, alias="podCIDRs")
    provider_id: str | None = Field(default=None, alias="providerID")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    config_source: dict[str, Any] | None = None
    external_id: str | None = Field(default=None, alias="externalID")


class NodeCondition(K8sModel, defer_build=True):
    """``corev1.NodeCondition`` (``Ready``, ``MemoryPressure``...; free-form for node-problem-detector)."""

    type: str
    status: ConditionStatus
    last_heartbeat_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(K8sModel, defer_build=True):
    """``corev1.NodeAddress``."""

    type: Literal["Hostname", "InternalIP", "ExternalIP", "InternalDNS", "ExternalDNS"]
    address: str


class NodeStatus(K8sModel, defer_build=True):
    """``corev1.NodeStatus``: every 1.34 field."""

    capacity: dict[str, Quantity] | None = None
    allocatable: dict[str, Quantity] | None = None
    phase: Literal["Pending", "Running", "Terminated", ""] | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemon_endpoints: dict[str, Any] | None = None
    node_info: dict[str, Any] | None = None
    images: list[dict[str, Any]] | None = None
    volumes_in_use: list[str] | None = None
    volumes_attached: list[dict[str, Any]] | None = None
    config: dict[str, Any] | None = None
    runtime_handlers: list[dict[str, Any]] | None = None
    features: dict[str, Any] | None = None


class Node(TopLevelObject):
    """``corev1.Node`` (cluster-scoped)."""

    spec: NodeSpec | None = None
    status: NodeStatus | None = None
