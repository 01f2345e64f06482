"""Settings of the pod network and of the cluster DNS (``cluster.network`` and ``cluster.dns``).

The DNS profiles are the Corefiles people actually run (format 1.1, "cluster.dns"):

- ``kubeadm``: kubeadm/kind's Corefile since Kubernetes 1.32, whose ``cache`` block says
  ``disable success cluster.local`` and ``disable denial cluster.local``: nothing in ``cluster.local``
  is cached (``cmd/kubeadm/app/phases/addons/dns/manifests.go``);
- ``kubeadm-1.31``: the Corefile up to 1.31, ``cache 30``: one cache in the DNS server, 30 s for
  answers and for NXDOMAIN;
- ``nodelocal``: NodeLocal DNSCache (``cluster/addons/dns/nodelocaldns/nodelocaldns.yaml``:
  ``cache { success 9984 30; denial 9984 5 }``): one cache per node, 30 s / 5 s, asking the DNS
  server directly.

Why an NXDOMAIN is kept the full negative TTL: CoreDNS's cache plugin (``plugin/cache/cache.go``,
``ResponseWriter.WriteMsg``) keeps a denial for the smallest TTL in the response, capped by the
configured denial TTL; the smallest is the authority SOA's, which the ``kubernetes`` plugin gives its
``ttl`` (``ttl 30`` in kubeadm's Corefile), so ``cache 30`` keeps it 30 s. A connect timeout never
shortens it (:mod:`fakecluster.network.runs`: a resolution failure arms no connect timer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CacheMode = Literal["none", "cluster", "node"]
Profile = Literal["kubeadm", "kubeadm-1.31", "nodelocal"]
SynLoss = Literal["perPacket", "perConnection"]
"""How the path treats the SYNs of one connect (``cluster.network.synLoss``, see :mod:`.tcp`)."""
PER_CONNECTION: SynLoss = "perConnection"

PROFILES: dict[str, tuple[CacheMode, float, float]] = {
    "kubeadm": ("none", 0.0, 0.0),
    "kubeadm-1.31": ("cluster", 30.0, 30.0),
    "nodelocal": ("node", 30.0, 5.0),
}
"""profile -> (cache, positive TTL, negative TTL)."""
DEFAULT_TTL = 30.0
"""TTL of a cache asked for with ``cache:`` on a profile that has none (CoreDNS ``cache 30``)."""


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    reachable_after: float = 0.0
    """A pod's IP answers packets this long after its sandbox is created (CNI programming)."""
    syn_retries: int = 6
    """``net.ipv4.tcp_syn_retries``."""
    syn_loss: SynLoss = "perPacket"
    """``perPacket`` (format 1.1): every SYN, first or retransmitted, is judged at its own instant.
    ``perConnection``: a connect whose first SYN was lost loses its retransmissions too; only a new
    connect (a new socket, after the program's ``retry.timeout`` or the kernel's ``ETIMEDOUT``) is judged
    afresh. See :mod:`fakecluster.network.tcp` for why a path behaves so."""


@dataclass(frozen=True, slots=True)
class DnsConfig:
    profile: Profile = "kubeadm"
    cache: CacheMode | None = None
    positive_ttl: float | None = None
    negative_ttl: float | None = None
    propagation: float = 0.0
    """EndpointSlice write -> the DNS server answers with it."""

    def effective(self) -> tuple[CacheMode, float, float]:
        """(cache, positive TTL, negative TTL) after the overrides."""
        cache, positive, negative = PROFILES[self.profile]
        if self.cache is not None and self.cache != cache:
            if cache == "none":
                positive = negative = DEFAULT_TTL
            cache = self.cache
        if self.positive_ttl is not None:
            positive = self.positive_ttl
        if self.negative_ttl is not None:
            negative = self.negative_ttl
        return cache, positive, negative
