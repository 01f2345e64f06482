"""Pod networking on the virtual clock: reachability and TCP connects (:mod:`.tcp`), the cluster DNS
server and its caches (:mod:`.dns`), and what pods' programs do on the network (:mod:`.program`),
assembled by :class:`~fakecluster.network.network.Network`.

Everything here is cluster side: it knows pods, IPs, EndpointSlices and ports, never JobSets. The
scenario runner turns a ``program:`` rule into a :class:`~fakecluster.network.program.ProgramSpec` with
concrete ``host:port`` targets.
"""

from fakecluster.network.config import DnsConfig, NetworkConfig
from fakecluster.network.network import Network, ProgramState, TargetState
from fakecluster.network.program import ProgramSpec, RetrySpec, WaitSpec

__all__ = ["DnsConfig", "Network", "NetworkConfig", "ProgramSpec", "ProgramState", "RetrySpec", "TargetState",
           "WaitSpec"]
