"""core/v1 Pod spec side (k8s.io/api/core/v1/types.go, release-1.34), plus re-exports of core/v1.

Every ``PodSpec`` and ``Container`` field name of Kubernetes 1.34 is accepted, so a real manifest never
fails on a field the fake cluster does not use. The parts the fake cluster reads (containers, probes,
resources, tolerations, scheduling gates, restart policies) are typed models; rarely-read structures
(volumes, affinity, security contexts, lifecycle hooks) stay ``dict[str, Any]``.

The status side lives in :mod:`fakecluster.api.core_status`, Node/Service/Event in their own modules;
they are re-exported here so ``from fakecluster.api.core import Node`` works like ``corev1.Node``.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field

from fakecluster.api.base import Int32, Int64, K8sModel, Quantity
from fakecluster.api.core_events import Event, EventSeries, EventSource, ObjectReference
from fakecluster.api.core_node import (
    Node,
    NodeAddress,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Taint,
)
from fakecluster.api.core_service import Service, ServicePort, ServiceSpec
from fakecluster.api.core_status import (
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStateWaiting,
    ContainerStatus,
    PodCondition,
    PodIP,
    PodStatus,
)
from fakecluster.api.meta import LabelSelector, ObjectMeta, TopLevelObject

__all__ = [
    "Container",
    "ContainerPort",
    "ContainerResizePolicy",
    "ContainerRestartRule",
    "ContainerRestartRuleOnExitCodes",
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStateWaiting",
    "ContainerStatus",
    "EnvFromSource",
    "EnvVar",
    "EphemeralContainer",
    "Event",
    "EventSeries",
    "EventSource",
    "HostAlias",
    "LocalObjectReference",
    "Node",
    "NodeAddress",
    "NodeCondition",
    "NodeSpec",
    "NodeStatus",
    "ObjectReference",
    "Pod",
    "PodCondition",
    "PodIP",
    "PodOS",
    "PodReadinessGate",
    "PodResourceClaim",
    "PodSchedulingGate",
    "PodSpec",
    "PodStatus",
    "PodTemplateSpec",
    "Probe",
    "ResourceClaim",
    "ResourceRequirements",
    "RestartPolicy",
    "Service",
    "ServicePort",
    "ServiceSpec",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "VolumeDevice",
    "VolumeMount",
]

RestartPolicy = Literal["Always", "OnFailure", "Never", ""]
"""``PodSpec.restartPolicy`` (``""`` is the Go zero value the scheme defaults to ``Always``)."""


class EnvVar(K8sModel):
    """``corev1.EnvVar``; ``valueFrom`` (field/resource/configMap/secret refs) is kept opaque."""

    name: str
    value: str | None = None
    value_from: dict[str, Any] | None = None


class EnvFromSource(K8sModel):
    """``corev1.EnvFromSource``."""

    prefix: str | None = None
    config_map_ref: dict[str, Any] | None = None
    secret_ref: dict[str, Any] | None = None


class ContainerPort(K8sModel):
    """``corev1.ContainerPort``; the EndpointSlice controller resolves named ``targetPort``s here."""

    name: str | None = None
    host_port: Int32 | None = None
    container_port: Int32
    protocol: Literal["TCP", "UDP", "SCTP", ""] | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")


class ResourceClaim(K8sModel):
    """``corev1.ResourceClaim`` (a DRA claim referenced from ``resources.claims``)."""

    name: str
    request: str | None = None


class ResourceRequirements(K8sModel):
    """``corev1.ResourceRequirements``; quantities stay as written (see :mod:`fakecluster.api.quantity`)."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None
    claims: list[ResourceClaim] | None = None


class ContainerResizePolicy(K8sModel):
    """``corev1.ContainerResizePolicy`` (in-place pod resize)."""

    resource_name: str
    restart_policy: Literal["NotRequired", "RestartContainer"]


class ContainerRestartRuleOnExitCodes(K8sModel):
    """``corev1.ContainerRestartRuleOnExitCodes`` (1.34 alpha ``ContainerRestartRules``)."""

    operator: Literal["In", "NotIn"] | None = None
    values: list[Int32] | None = None


class ContainerRestartRule(K8sModel):
    """``corev1.ContainerRestartRule``: per-container restart on specific exit codes (1.34 alpha)."""

    action: Literal["Restart"] | None = None
    exit_codes: ContainerRestartRuleOnExitCodes | None = None


class VolumeMount(K8sModel):
    """``corev1.VolumeMount``; JobSet's VolumeClaimPolicies validation looks for matching mounts."""

    name: str
    read_only: bool | None = None
    recursive_read_only: Literal["Disabled", "IfPossible", "Enabled"] | None = None
    mount_path: str
    sub_path: str | None = None
    mount_propagation: Literal["None", "HostToContainer", "Bidirectional"] | None = None
    sub_path_expr: str | None = None


class VolumeDevice(K8sModel):
    """``corev1.VolumeDevice`` (raw block volumes)."""

    name: str
    device_path: str


class Probe(K8sModel):
    """``corev1.Probe`` with the inlined ``ProbeHandler``; the fake kubelet only needs the timings."""

    exec: dict[str, Any] | None = None
    http_get: dict[str, Any] | None = None
    tcp_socket: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
    initial_delay_seconds: Int32 | None = None
    timeout_seconds: Int32 | None = None
    period_seconds: Int32 | None = None
    success_threshold: Int32 | None = None
    failure_threshold: Int32 | None = None
    termination_grace_period_seconds: Int64 | None = None


class Container(K8sModel):
    """``corev1.Container``: every 1.34 field.

    ``image`` is optional, as upstream: pod *templates* may leave it empty for config tools to fill.
    ``restartPolicy: Always`` on an init container makes it a native sidecar.
    """

    name: str
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[EnvFromSource] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: list[ContainerResizePolicy] | None = None
    restart_policy: Literal["Always", "OnFailure", "Never"] | None = None
    restart_policy_rules: list[ContainerRestartRule] | None = None
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: list[VolumeDevice] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: dict[str, Any] | None = None
    termination_message_path: str | None = None
    termination_message_policy: Literal["File", "FallbackToLogsOnError", ""] | None = None
    image_pull_policy: Literal["Always", "Never", "IfNotPresent", ""] | None = None
    security_context: dict[str, Any] | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


class EphemeralContainer(Container):
    """``corev1.EphemeralContainer``: the container fields plus ``targetContainerName``."""

    target_container_name: str | None = None


class Toleration(K8sModel):
    """``corev1.Toleration``; an empty ``operator`` means ``Equal`` and an empty ``effect`` matches all."""

    key: str | None = None
    operator: Literal["Exists", "Equal", ""] | None = None
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute", ""] | None = None
    toleration_seconds: Int64 | None = None


class LocalObjectReference(K8sModel):
    """``corev1.LocalObjectReference`` (``imagePullSecrets``)."""

    name: str | None = None


class HostAlias(K8sModel):
    """``corev1.HostAlias``: an ``/etc/hosts`` entry."""

    ip: str
    hostnames: list[str] | None = None


class PodReadinessGate(K8sModel):
    """``corev1.PodReadinessGate``: an extra condition the pod needs before it is Ready."""

    condition_type: str


class TopologySpreadConstraint(K8sModel):
    """``corev1.TopologySpreadConstraint``."""

    max_skew: Int32
    topology_key: str
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: Literal["Honor", "Ignore"] | None = None
    node_taints_policy: Literal["Honor", "Ignore"] | None = None
    match_label_keys: list[str] | None = None


class PodOS(K8sModel):
    """``corev1.PodOS``."""

    name: str


class PodSchedulingGate(K8sModel):
    """``corev1.PodSchedulingGate``: the scheduler ignores a pod while any gate remains."""

    name: str


class PodResourceClaim(K8sModel):
    """``corev1.PodResourceClaim`` (DRA)."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class Volume(K8sModel, defer_build=True):
    """``corev1.Volume``: its ``name`` typed (the pod validation reads it as a string, as upstream's decoder
    guarantees); the volume sources stay opaque, kept as written."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None


class PodSpec(K8sModel):
    """``corev1.PodSpec``: every 1.34 field, including ``hostnameOverride`` and pod-level ``resources``."""

    volumes: list[Volume] | None = None
    init_containers: list[Container] | None = None
    containers: list[Container]
    ephemeral_containers: list[EphemeralContainer] | None = None
    restart_policy: RestartPolicy | None = None
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    dns_policy: Literal["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", ""] | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    service_account: str | None = None
    automount_service_account_token: bool | None = None
    node_name: str | None = None
    host_network: bool | None = None
    host_pid: bool | None = Field(default=None, alias="hostPID")
    host_ipc: bool | None = Field(default=None, alias="hostIPC")
    share_process_namespace: bool | None = None
    security_context: dict[str, Any] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: dict[str, Any] | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    host_aliases: list[HostAlias] | None = None
    priority_class_name: str | None = None
    priority: Int32 | None = None
    dns_config: dict[str, Any] | None = None
    readiness_gates: list[PodReadinessGate] | None = None
    runtime_class_name: str | None = None
    enable_service_links: bool | None = None
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
    overhead: dict[str, Quantity] | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    set_hostname_as_fqdn: bool | None = Field(default=None, alias="setHostnameAsFQDN")
    os: PodOS | None = None
    host_users: bool | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    resource_claims: list[PodResourceClaim] | None = None
    resources: ResourceRequirements | None = None
    hostname_override: str | None = None


class PodTemplateSpec(K8sModel, defer_build=True):
    """``corev1.PodTemplateSpec``: what a Job stamps its pods from."""

    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class Pod(TopLevelObject):
    """``corev1.Pod``."""

    spec: PodSpec | None = None
    status: PodStatus | None = None
