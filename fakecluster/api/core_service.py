"""core/v1 ``Service`` (k8s.io/api/core/v1/types.go, release-1.34).

JobSet creates a headless Service (``clusterIP: None``, ``publishNotReadyAddresses``) per JobSet; the
EndpointSlice controller and the fake DNS read ``selector``, ``ports`` and ``publishNotReadyAddresses``.
"""

from typing import Any, Literal

from pydantic import Field

from fakecluster.api.base import Int32, IntOrString, K8sModel
from fakecluster.api.meta import TopLevelObject

__all__ = ["Service", "ServicePort", "ServiceSpec"]


class ServicePort(K8sModel, defer_build=True):
    """``corev1.ServicePort``; ``targetPort`` may name a container port."""

    name: str | None = None
    protocol: Literal["TCP", "UDP", "SCTP", ""] | None = None
    app_protocol: str | None = None
    port: Int32
    target_port: IntOrString | None = None
    node_port: Int32 | None = None


class ServiceSpec(K8sModel, defer_build=True):
    """``corev1.ServiceSpec``: every 1.34 field. ``clusterIP: None`` makes the Service headless."""

    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None
    cluster_ip: str | None = Field(default=None, alias="clusterIP")
    cluster_ips: list[str] | None = Field(default=None, alias="clusterIPs")
    type: Literal["ClusterIP", "NodePort", "LoadBalancer", "ExternalName", ""] | None = None
    external_ips: list[str] | None = Field(default=None, alias="externalIPs")
    session_affinity: Literal["ClientIP", "None", ""] | None = None
    load_balancer_ip: str | None = Field(default=None, alias="loadBalancerIP")
    load_balancer_source_ranges: list[str] | None = None
    external_name: str | None = None
    external_traffic_policy: Literal["Cluster", "Local", ""] | None = None
    health_check_node_port: Int32 | None = None
    publish_not_ready_addresses: bool | None = None
    session_affinity_config: dict[str, Any] | None = None
    ip_families: list[Literal["IPv4", "IPv6", ""]] | None = None
    ip_family_policy: Literal["SingleStack", "PreferDualStack", "RequireDualStack"] | None = None
    allocate_load_balancer_node_ports: bool | None = None
    load_balancer_class: str | None = None
    internal_traffic_policy: Literal["Cluster", "Local"] | None = None
    traffic_distribution: str | None = None


class Service(TopLevelObject):
    """``corev1.Service``; the status (load balancer ingress, conditions) is never read, so it is opaque."""

    spec: ServiceSpec | None = None
    status: dict[str, Any] | None = None
