"""The pod network's invariant: a TCP connection is only ever established to a listening, reachable pod.

It is judged at the instant the network establishes a connection (the monitor's *connect* moment), from
the state of both pods' sandboxes and programs, written independently of the network's own SYN verdict
(:meth:`fakecluster.network.network.Network.judge`): an invariant that asked ``judge`` would agree with
any bug in it.
"""

from __future__ import annotations

from fakecluster.invariants.monitor import BaseInvariant, ClusterView, Invariant, Report
from fakecluster.network.runs import ENDED, Connection, PodNet, us


def _pod(net: PodNet) -> str:
    return f"{net.namespace}/{net.name} ({net.ip})"


def _reachable(net: PodNet, now: float, reachable_after: float) -> bool:
    """The sandbox exists, its network was set up ``reachableAfter`` ago, and it was not torn down."""
    return not net.stopped and us(now) >= us(net.sandbox_at + reachable_after)


def unlistened_or_unreachable(connection: Connection, now: float, reachable_after: float) -> str | None:
    """Why ``connection`` should never have been established at ``now``, or None if it is sound.

    - **Listening.** The kernel completes a handshake only for a SYN that finds a socket in
      ``TCP_LISTEN`` on the destination port: ``tcp_v4_rcv`` (``net/ipv4/tcp_ipv4.c``) looks the port up
      (``__inet_lookup_skb``) and, finding none, goes to ``no_tcp_socket`` and answers with a reset
      (``tcp_v4_send_reset``): connection refused. So the server's program must have started, be
      listening on the port, and not have ended.
    - **Reachable.** A pod's IP exists only once its sandbox's network is set up: the kubelet's
      ``createPodSandbox`` (``pkg/kubelet/kuberuntime/kuberuntime_sandbox.go``) calls the runtime's
      ``RunPodSandbox``, which creates the network namespace and runs the CNI plugin's ADD
      (containerd ``internal/cri/server/sandbox_run.go``, ``setupPodNetwork``) before the sandbox is
      ready; packets reach it only after the CNI programming (``cluster.network.reachableAfter``), and
      not after the sandbox is torn down (``StopPodSandbox``: CNI DEL). Both ends must be reachable,
      except on a pod's own IP (loopback through its own network namespace).
    - **The dialled IP** is the server pod's own: a connection never lands on a pod that does not own
      the address the client resolved.
    """
    client, server = connection.client, connection.server
    src, dest, port = client.pod, server.pod, connection.port
    to = f"{_pod(src)} connected to {_pod(dest)} port {port}"
    if connection.target.ip != dest.ip:
        return f"{to}, but dialled {connection.target.ip}"
    if server.state == ENDED or not server.listening or port not in server.spec.listen:
        listening = ",".join(map(str, server.spec.listen)) if server.listening and server.state != ENDED \
            else "nothing"
        return f"{to}, which is not listening (program {server.state}, listening on {listening})"
    if src is dest:
        return None
    for end, net in (("server", dest), ("client", src)):
        if not _reachable(net, now, reachable_after):
            why = "its sandbox is torn down" if net.stopped else (
                f"its sandbox network is up only from t={us(net.sandbox_at + reachable_after):g}s")
            return f"{to}, but the {end} pod is unreachable: {why}"
    return None


class ConnectionOnlyToListeningReachablePod(BaseInvariant):
    """Every TCP connection the pod network establishes goes to a listening, reachable pod
    (:func:`unlistened_or_unreachable` holds the rule and its upstream sources)."""

    name = "connectionOnlyToListeningReachablePod"

    def on_connect(self, connection: Connection, view: ClusterView, report: Report) -> None:
        why = unlistened_or_unreachable(connection, view.now, connection.client.net.config.reachable_after)
        if why is not None:
            report(why)


def network_invariants() -> list[Invariant]:
    """A fresh set of the pod network's invariants."""
    return [ConnectionOnlyToListeningReachablePod()]
