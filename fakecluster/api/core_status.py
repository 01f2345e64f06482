"""core/v1 ``PodStatus`` and its parts (k8s.io/api/core/v1/types.go, release-1.34).

This is what the kubelet writes and what the Job controller reads to count active, ready, succeeded and
failed pods, so the container-state shapes are typed in full (``exitCode``, ``reason``, ``signal``...).
Fields the real kubelet always serialises (Go fields without ``omitempty``, such as ``ready`` and
``restartCount``) are required: a fake kubelet that forgot them would feed controllers objects no real
cluster produces.
"""

from typing import Any, Literal

from pydantic import Field

from fakecluster.api.base import Int32, Int64, K8sModel, Quantity, Time
from fakecluster.api.meta import ConditionStatus

__all__ = [
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "HostIP",
    "PodCondition",
    "PodIP",
    "PodPhase",
    "PodStatus",
]

PodPhase = Literal["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]
"""``corev1.PodPhase`` (``""`` is the zero value of a pod the kubelet has not reported on yet)."""


class PodCondition(K8sModel):
    """``corev1.PodCondition``. ``type`` is free-form: readiness gates add custom condition types."""

    type: str
    observed_generation: Int64 | None = None
    status: ConditionStatus
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class ContainerStateWaiting(K8sModel):
    """``corev1.ContainerStateWaiting`` (``ContainerCreating``, ``CrashLoopBackOff``, ``ErrImagePull``...)."""

    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(K8sModel):
    """``corev1.ContainerStateRunning``."""

    started_at: Time | None = None


class ContainerStateTerminated(K8sModel):
    """``corev1.ContainerStateTerminated``: ``exitCode`` drives Job ``podFailurePolicy.onExitCodes``."""

    exit_code: Int32
    signal: Int32 | None = None
    reason: str | None = None
    message: str | None = None
    started_at: Time | None = None
    finished_at: Time | None = None
    container_id: str | None = Field(default=None, alias="containerID")


class ContainerState(K8sModel):
    """``corev1.ContainerState``: at most one of the three members is set."""

    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class ContainerStatus(K8sModel):
    """``corev1.ContainerStatus``: every 1.34 field; the rarely read ones stay opaque."""

    name: str
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    ready: bool
    restart_count: Int32
    image: str
    image_id: str = Field(alias="imageID")
    container_id: str | None = Field(default=None, alias="containerID")
    started: bool | None = None
    allocated_resources: dict[str, Quantity] | None = None
    resources: dict[str, Any] | None = None
    volume_mounts: list[dict[str, Any]] | None = None
    user: dict[str, Any] | None = None
    allocated_resources_status: list[dict[str, Any]] | None = None
    stop_signal: str | None = None


class PodIP(K8sModel):
    """``corev1.PodIP``: one entry of ``status.podIPs`` (dual-stack)."""

    ip: str


class HostIP(K8sModel):
    """``corev1.HostIP``: one entry of ``status.hostIPs``."""

    ip: str


class PodStatus(K8sModel):
    """``corev1.PodStatus``: every 1.34 field."""

    observed_generation: Int64 | None = None
    phase: PodPhase | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    host_ips: list[HostIP] | None = Field(default=None, alias="hostIPs")
    pod_ip: str | None = Field(default=None, alias="podIP")
    pod_ips: list[PodIP] | None = Field(default=None, alias="podIPs")
    start_time: Time | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    container_statuses: list[ContainerStatus] | None = None
    qos_class: Literal["Guaranteed", "Burstable", "BestEffort", ""] | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    resize: str | None = None
    resource_claim_statuses: list[dict[str, Any]] | None = None
    extended_resource_claim_status: dict[str, Any] | None = None
