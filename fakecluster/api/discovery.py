"""discovery.k8s.io/v1 ``EndpointSlice`` (k8s.io/api/discovery/v1/types.go, release-1.34).

Written by the EndpointSlice controller (:mod:`fakecluster.controllers.endpointslice`) and read by the
DNS server (:mod:`fakecluster.network.dns`). Every 1.34 field is accepted; ``addressType`` and
``endpoints`` are required on the wire (``ports`` may be null), as upstream's validation says.
"""

from typing import Literal

from pydantic import Field

from fakecluster.api.base import Int32, K8sModel
from fakecluster.api.core_events import ObjectReference
from fakecluster.api.meta import TopLevelObject

__all__ = ["Endpoint", "EndpointConditions", "EndpointHints", "EndpointPort", "EndpointSlice", "ForZone"]


class EndpointConditions(K8sModel, defer_build=True):
    """``discovery.EndpointConditions``: ``ready``, ``serving``, ``terminating`` (pointers: may be absent)."""

    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


class ForZone(K8sModel, defer_build=True):
    name: str


class ForNode(K8sModel, defer_build=True):
    name: str


class EndpointHints(K8sModel, defer_build=True):
    for_zones: list[ForZone] | None = None
    for_nodes: list[ForNode] | None = None


class Endpoint(K8sModel):
    """``discovery.Endpoint``: one pod's addresses and conditions."""

    addresses: list[str]
    conditions: EndpointConditions | None = None
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: EndpointHints | None = None
    deprecated_topology: dict[str, str] | None = None


class EndpointPort(K8sModel, defer_build=True):
    name: str | None = None
    protocol: Literal["TCP", "UDP", "SCTP"] | None = None
    port: Int32 | None = None
    app_protocol: str | None = None


class EndpointSlice(TopLevelObject):
    """``discovery.EndpointSlice``; no status subresource, no generation."""

    address_type: Literal["IPv4", "IPv6", "FQDN"] = Field(alias="addressType")
    endpoints: list[Endpoint] | None = Field(alias="endpoints")
    ports: list[EndpointPort] | None = None
