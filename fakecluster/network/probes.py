"""``tcpSocket``/``httpGet`` probes of a container whose program is modelled: one probe succeeds only when
the program listens on the probed port at that moment.

This is the network's half of the kubelet prober's one decision (:func:`fakecluster.kubelet.prober.
probe_succeeds`): the prober's workers (``pkg/kubelet/prober/worker.go``) decide *when* a probe runs
(ticks from admission, ``initialDelaySeconds``, thresholds, the manual readiness trigger), this module only
*whether* a TCP connect or HTTP GET to the port would be answered now (``pkg/probe/tcp/tcp.go``
``DoTCPProbe``: a refused connect is a failure). ``exec`` and ``grpc`` probes are not the network's
business: :func:`program_probe_succeeds` has no opinion on them (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence

from fakecluster.api.objects import Obj


def probed_port(probe: Obj, container: Obj) -> int | str | None:
    """The probed port (``None`` for an exec/grpc probe; a name that no container port has: ``"?"``)."""
    handler = probe.get("tcpSocket") or probe.get("httpGet")
    if handler is None:
        return None
    port = handler.get("port")
    if isinstance(port, int):
        return port
    for declared in container.get("ports") or ():
        if declared.get("name") == port:
            return int(declared.get("containerPort"))
    return "?"


def program_probe_succeeds(probe: Obj, container: Obj, listening: Sequence[int]) -> bool | None:
    """Does a probe of a container whose program listens on ``listening`` (now) succeed? ``None``: not a
    network probe (exec/grpc), the prober's other rules decide alone."""
    port = probed_port(probe, container)
    if port is None:
        return None
    return port in listening
