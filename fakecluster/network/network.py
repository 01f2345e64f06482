"""The pod network of one cluster: pod IPs and reachability, the TCP connect judge, the DNS server and
resolver, and the programs the kubelet's containers run.

**Reachability** (format 1.1, ``cluster.network``): an IP is reachable at ``t`` when it belongs to a pod
whose sandbox exists, ``reachableAfter`` has passed since the sandbox was created (CNI programming),
and the pod has not stopped for good (terminal, killed or deleted: the sandbox is torn down). A
container in crash-loop back-off leaves the sandbox up: its IP answers, with RST, since nothing listens.

**A SYN** from pod A to ``IP:port`` at ``t``: both ends reachable and a program of the destination
listening on the port → connected; both reachable, nothing listening → refused; otherwise lost. A
connect to the pod's own IP depends only on its own program listening. Latency is zero.

**The kubelet's side.** The kubelet calls :meth:`sandbox_created`, :meth:`container_started`,
:meth:`container_stopped` and :meth:`pod_stopped`; the network calls back only through
:class:`ContainerRuntime` (end a container with an exit code, mark it ready), always in a fresh clock
event of the same instant, so a container's own start is written (``Running``) before anything its
program does.

**What programs are doing** is readable through :meth:`Network.program_states` (see
:class:`ProgramState`), for the runner's diagnosis of stuck runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from fakecluster.api.objects import Obj
from fakecluster.network.config import DnsConfig, NetworkConfig
from fakecluster.network.dns import Answer, DnsServer, Resolver, pod_fqdn, qualify
from fakecluster.network.program import ProgramSpec
from fakecluster.network.runs import ENDED, Connection, PodNet, ProgramRun, us
from fakecluster.network.tcp import Outcome

if TYPE_CHECKING:
    from fakecluster.clock import Clock

ConnectionObserver = Callable[[Connection], None]
"""Told of every connection at the instant it is established (the invariant monitor's hook)."""

NetListener = Callable[[str, Obj, str, str], None]
"""``(kind, pod, event, detail)``: ``kind`` is ``Pod`` for the milestones (``Listening``, ``Connected``,
``Working``, ``GaveUp``, ``Resolvable``) and ``Connect`` for each step of a connect attempt
(``resolved``, ``NXDOMAIN``, ``refused``, ``SYN lost``, ``timed out``, ``connected``, ``closed``).
``pod`` is the pod's kind and identifying metadata (name, namespace, uid, labels, owner references;
see :meth:`PodNet.identity`), not a whole version of it."""


class ContainerRuntime(Protocol):
    """What the network may ask of the kubelet."""

    def program_exited(self, worker: Any, container: Any, run_id: int, exit_code: int) -> None: ...

    def program_ready(self, worker: Any, container: Any, run_id: int) -> None: ...


class TargetState(NamedTuple):
    """One connect target of a program, as the diagnosis prints it."""

    target: str
    attempt: int
    connected: bool
    gave_up: bool
    last_error: str


class ProgramState(NamedTuple):
    """Read-only view of one pod's current program run.

    ``state``: ``starting`` (container started, ``startup`` not over), ``waiting`` (listening and/or
    connecting, work not started), ``working``, ``ended``. ``listening``: the open ports. ``peers``:
    distinct pods connected to it. ``waiting_for``: what its ``waitFor`` still lacks (``"2/3 peers"``,
    ``"targets connected 1/2"``, ``"targets working"``), empty unless waiting. ``gave_up``: why it gave
    up, if it did."""

    namespace: str
    pod: str
    container: str
    state: str
    listening: tuple[int, ...]
    targets: tuple[TargetState, ...]
    peers: int
    waiting_for: str
    gave_up: str


class Network:
    """Built by the cluster; the kubelet attaches itself with :meth:`attach_runtime`."""

    def __init__(self, clock: Clock, config: NetworkConfig, dns: DnsConfig) -> None:
        self.clock = clock
        self.config = config
        self.dns_config = dns
        self.dns = DnsServer(clock, dns.propagation, self._published)
        self.resolver = Resolver(clock, self.dns, dns)
        self._by_ip: dict[str, PodNet] = {}
        self._by_uid: dict[str, PodNet] = {}
        self._runtime: ContainerRuntime | None = None
        self.listeners: list[NetListener] = []
        self.connection_observers: list[ConnectionObserver] = []
        self.programs_started = 0

    def attach_runtime(self, runtime: ContainerRuntime) -> None:
        self._runtime = runtime

    # ------------------------------------------------------------------ kubelet hooks
    def sandbox_created(self, uid: str, pod: Obj, node: str, ip: str) -> None:
        meta = pod["metadata"]
        spec = pod.get("spec") or {}
        namespace = meta.get("namespace", "")
        hostname, subdomain = spec.get("hostname"), spec.get("subdomain")
        fqdn = pod_fqdn(hostname, subdomain, namespace) if hostname and subdomain else None
        net = PodNet(uid, namespace, meta["name"], node, ip, meta.get("labels"), meta.get("ownerReferences"),
                     fqdn, self.clock.now)
        self._by_ip[ip] = net
        self._by_uid[uid] = net

    def container_started(self, uid: str, spec: ProgramSpec, *, worker: Any, container: Any, run_id: int,
                          startup: float, work: float) -> None:
        """The container the program belongs to started (again): a fresh program run."""
        net = self._by_uid.get(uid)
        if net is None:
            return
        if net.run is not None:
            net.run.stop()
        net.run = ProgramRun(self, net, spec, worker=worker, container=container, run_id=run_id,
                             startup=startup, work=work)
        self.programs_started += 1
        net.run.start()

    def container_stopped(self, uid: str, container: Any) -> None:
        net = self._by_uid.get(uid)
        if net is not None and net.run is not None and net.run.container is container:
            net.run.stop()

    def pod_stopped(self, uid: str) -> None:
        """Terminal, killed or deleted: the sandbox goes, the IP no longer answers."""
        net = self._by_uid.get(uid)
        if net is None:
            return
        net.stopped = True
        if net.run is not None:
            net.run.stop()
        # Its FQDN (an interned string of some 100 bytes) served only the /etc/hosts answer to its own
        # programs' lookups (:meth:`resolve`), which a stopped run never makes (it attempts no connect);
        # kept, it would be the last reference to the name of each finished pod, all run long. Its
        # sandbox time, only :meth:`reachable` reads, and only of a pod not stopped: the float (24
        # bytes) was the last reference to that clock time.
        net.fqdn, net.sandbox_at = None, 0.0

    def close(self) -> None:
        """End of life (:meth:`Cluster.close <fakecluster.cluster.Cluster.close>`): break the program
        runs' cycles. A run and its pod's record refer to each other, as do a run and its targets, and
        two runs joined by a connection; left so, every pod that ran a program would wait, with the
        kubelet worker its run holds, for a cyclic collection, which after a run of 10,000 such pods
        walked their whole graph for 0.38 s. ``dismantle`` does not reach these: they sit in dicts."""
        for net in self._by_uid.values():
            run, net.run = net.run, None
            if run is not None:
                run.targets.clear()
                run.inbound.clear()
                run.timers.clear()

    # ------------------------------------------------------------------ program callbacks
    def emit(self, pod: PodNet, kind: str, event: str, detail: str) -> None:
        for listener in self.listeners:
            listener(kind, pod.identity(), event, detail)

    def exit_container(self, run: ProgramRun, code: int) -> None:
        if self._runtime is not None:
            self.clock.call_soon(self._runtime.program_exited, run.worker, run.container, run.run_id, code)

    def mark_ready(self, run: ProgramRun) -> None:
        if self._runtime is not None:
            self.clock.call_soon(self._runtime.program_ready, run.worker, run.container, run.run_id)

    def connected(self, conn: Connection) -> None:
        for observer in self.connection_observers:
            observer(conn)

    def _published(self, uid: str, fqdn: str, ip: str) -> None:
        net = self._by_uid.get(uid)
        if net is not None:
            self.emit(net, "Pod", "Resolvable", f"{fqdn} -> {ip}")

    # ------------------------------------------------------------------ the network itself
    def reachable(self, net: PodNet) -> bool:
        return not net.stopped and us(self.clock.now) >= us(net.sandbox_at + self.config.reachable_after)

    def judge(self, src: PodNet, ip: str, port: int) -> tuple[Outcome, ProgramRun | None]:
        """What a SYN from ``src`` to ``ip:port`` meets now."""
        dest = self._by_ip.get(ip)
        if dest is None:
            return Outcome.LOST, None
        if dest is not src and not (self.reachable(src) and self.reachable(dest)):
            return Outcome.LOST, None
        run = dest.run
        if run is not None and run.listening and port in run.spec.listen:
            return Outcome.CONNECTED, run
        return Outcome.REFUSED, None

    def resolve(self, pod: PodNet, host: str) -> tuple[Answer, str]:
        """(answer, how) for a name a program on ``pod`` connects to: its own hostname from
        ``/etc/hosts``, else the DNS through the cache."""
        fqdn = qualify(host, pod.namespace)
        if fqdn == pod.fqdn:
            return (pod.ip,), " (/etc/hosts)"
        answer, cached = self.resolver.resolve(fqdn, pod.node)
        return answer, " (cached)" if cached else ""

    # ------------------------------------------------------------------ read-only view
    def listening(self, uid: str, container: Any) -> tuple[int, ...]:
        """The ports the program of ``container`` in pod ``uid`` listens on now (the kubelet prober's
        tcpSocket/httpGet probes ask this at every tick)."""
        net = self._by_uid.get(uid)
        run = None if net is None else net.run
        if run is None or run.container is not container or not run.listening or run.state == ENDED:
            return ()
        return tuple(run.spec.listen)

    def program_state(self, namespace: str, name: str) -> ProgramState | None:
        """The current program run of pod ``namespace/name`` (the newest pod of that name)."""
        found = None
        for net in self._by_uid.values():
            if net.namespace == namespace and net.name == name and net.run is not None:
                found = net
        return None if found is None else _state_of(found)

    def program_states(self) -> list[ProgramState]:
        """Every pod's current program run, in admission order."""
        return [_state_of(net) for net in self._by_uid.values() if net.run is not None]


def _state_of(net: PodNet) -> ProgramState:
    run = net.run
    assert run is not None
    wait = run.spec.effective_wait()
    lacking: list[str] = []
    if run.state == "waiting":
        connected = sum(1 for t in run.targets if t.connection is not None)
        if wait.connected and connected < len(run.targets):
            lacking.append(f"targets connected {connected}/{len(run.targets)}")
        if wait.peers is not None and run.peers() < wait.peers:
            lacking.append(f"{run.peers()}/{wait.peers} peers")
        if wait.targets_working:
            lacking.append("targets working")
    return ProgramState(
        namespace=net.namespace,
        pod=net.name,
        container=getattr(run.container, "name", ""),
        state=run.state,
        listening=run.spec.listen if run.listening and run.state != ENDED else (),
        targets=tuple(TargetState(t.label, t.attempt, t.connection is not None, t.gave_up, t.last_error)
                      for t in run.targets),
        peers=run.peers(),
        waiting_for=", ".join(lacking),
        gave_up=run.gave_up,
    )
