"""One start of a pod's program: its targets' connect attempts, its connections, its wait and its work.

A :class:`ProgramRun` lives from the container's start until it stops; a restarted container gets a new
one with no connections (format 1.1, "Which container"). It never touches pod status itself: it asks
the kubelet (through its :class:`ProgramHost`, the :class:`~fakecluster.network.network.Network`) to end
the container with an exit code or to mark it ready, so exits go through the kubelet like any container
exit and restartPolicy, Job back-off, podFailurePolicy and JobSet failure policy all apply.

Each target is worked on independently (zeromq connects each endpoint on its own): an attempt resolves
the name once (NXDOMAIN fails it at once), then sends SYNs on the kernel's schedule (:mod:`.tcp`),
each judged at its own instant (or, on a ``synLoss: perConnection`` path, all with the first one's
fate); a failed attempt is followed by another after ``interval``, which is then multiplied by
``backoff`` up to ``maxInterval``.

An attempt is libzmq's ``tcp_connecter_t::start_connecting`` (``src/tcp_connecter.cpp``): ``open()``
resolves the host afresh each time (``tcp_open_socket``); a resolution failure returns at once and
only ``add_reconnect_timer`` follows. The connect timeout (``add_connect_timer``, ``ZMQ_CONNECT_TIMEOUT``)
is armed only for a connect left ``EINPROGRESS``, i.e. while SYNs are unanswered; its expiry
(``timer_event``) closes the socket and schedules the reconnect, as a refused or failed connect does
(``out_event``). So ``retry.timeout`` bounds lost SYNs and nothing else: NXDOMAIN answered from a
negative cache fails every attempt, whatever the timeout, until the entry expires.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from fakecluster.api.objects import Obj
from fakecluster.clock import Clock, Timer
from fakecluster.network.config import PER_CONNECTION, NetworkConfig
from fakecluster.network.dns import Answer
from fakecluster.network.program import FOREVER, UNTIL_DISCONNECTED, ProgramSpec
from fakecluster.network.tcp import Outcome, connect_deadline, syn_offsets

STARTING, WAITING, WORKING, ENDED = "starting", "waiting", "working", "ended"


@dataclass(slots=True, eq=False)
class PodNet:
    """What the network knows of one admitted pod."""

    uid: str
    namespace: str
    name: str
    node: str
    ip: str
    labels: dict[str, str] | None
    """The admitted pod's labels and owner references (the stored objects), for :meth:`identity`."""
    owner_references: list[Obj] | None
    fqdn: str | None
    sandbox_at: float
    stopped: bool = False
    run: ProgramRun | None = None

    def identity(self) -> Obj:
        """The pod as the network's listeners get it: kind and identifying metadata (the trace recorder
        places a pod by its name, labels and owner). Built at each call, which only a program event
        makes: a kept copy, or the admitted version itself, would cost every pod its bytes all run."""
        meta: Obj = {"name": self.name, "namespace": self.namespace, "uid": self.uid}
        if self.labels is not None:
            meta["labels"] = self.labels
        if self.owner_references is not None:
            meta["ownerReferences"] = self.owner_references
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


class ProgramHost(Protocol):
    """What a program run asks of the network it runs on (:class:`~fakecluster.network.network.Network`):
    the clock, the SYN and DNS verdicts, and the way back to the kubelet."""

    clock: Clock
    config: NetworkConfig

    def emit(self, pod: PodNet, kind: str, event: str, detail: str) -> None: ...

    def exit_container(self, run: ProgramRun, code: int) -> None: ...

    def mark_ready(self, run: ProgramRun) -> None: ...

    def connected(self, conn: Connection) -> None: ...

    def judge(self, src: PodNet, ip: str, port: int) -> tuple[Outcome, ProgramRun | None]: ...

    def resolve(self, pod: PodNet, host: str) -> tuple[Answer, str]: ...


def us(t: float) -> float:
    """Virtual times are whole microseconds (format 1.1, "Time")."""
    return round(t * 1_000_000) / 1_000_000


class Connection:
    __slots__ = ("client", "closed", "port", "server", "target")

    def __init__(self, client: ProgramRun, target: TargetRun, server: ProgramRun, port: int) -> None:
        self.client = client
        self.target = target
        self.server = server
        self.port = port
        self.closed = False


class TargetRun:
    """One ``host:port`` the program must reach."""

    __slots__ = (
        "attempt",
        "connection",
        "ever_connected",
        "first_syn",
        "gave_up",
        "host",
        "interval",
        "ip",
        "last_error",
        "offsets",
        "port",
        "run",
    )

    def __init__(self, run: ProgramRun, host: str, port: int) -> None:
        self.run = run
        self.host = host
        self.port = port
        self.attempt = 0
        self.interval = run.spec.retry.interval
        self.connection: Connection | None = None
        self.ever_connected = False
        self.gave_up = False
        self.last_error = ""
        self.ip = ""
        self.first_syn = 0.0
        self.offsets: tuple[float, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.host}:{self.port}"

    def start_attempt(self) -> None:
        run = self.run
        if run.state != WAITING or self.connection is not None or self.gave_up:
            return
        net = run.net
        now = net.clock.now
        if run.give_up_at is not None and now >= run.give_up_at:
            return
        self.attempt += 1
        answer, how = net.resolve(run.pod, self.host)
        if answer is None:
            self.last_error = "NXDOMAIN"
            run.emit("NXDOMAIN", f"#{self.attempt} {self.label}{how}")
            self.fail()
            return
        self.ip = answer[0]
        run.emit("resolved", f"#{self.attempt} {self.label} -> {self.ip}{how}")
        self.first_syn = now
        self.offsets = syn_offsets(net.config.syn_retries, run.spec.retry.timeout)
        self.syn(0)

    def syn(self, k: int) -> None:
        """SYN ``k`` of this attempt (0: the first). A retransmission reaches this only after a lost
        SYN; on a ``perConnection`` path it meets the first one's fate without being judged."""
        run = self.run
        if run.state != WAITING or self.gave_up:
            return
        if k and run.net.config.syn_loss == PER_CONNECTION:
            outcome, server = Outcome.LOST, None
        else:
            outcome, server = run.net.judge(run.pod, self.ip, self.port)
        if outcome is Outcome.CONNECTED and server is not None:
            run.connect(self, server)
            return
        if outcome is Outcome.REFUSED:
            self.last_error = "refused"
            run.emit("refused", f"#{self.attempt} {self.label} ({self.ip})")
            self.fail()
            return
        run.emit("SYN lost", f"#{self.attempt} {self.label} ({self.ip}) SYN {k + 1}")
        if k + 1 < len(self.offsets):
            run.at(self.first_syn + self.offsets[k + 1], self.syn, k + 1)
        else:
            deadline = connect_deadline(run.net.config.syn_retries, run.spec.retry.timeout)
            run.at(self.first_syn + deadline, self.timed_out)

    def timed_out(self) -> None:
        if self.run.state != WAITING or self.gave_up:
            return
        self.last_error = "timed out"
        self.run.emit("timed out", f"#{self.attempt} {self.label} ({self.ip})")
        self.fail()

    def fail(self) -> None:
        run = self.run
        retry = run.spec.retry
        if retry.attempts is not None and self.attempt >= retry.attempts:
            run.give_up(f"{self.label} after {self.attempt} attempt{'s' if self.attempt != 1 else ''}"
                        f" ({self.last_error})")
            return
        delay = self.interval
        grown = self.interval * retry.backoff
        self.interval = min(grown, retry.max_interval) if retry.max_interval is not None else grown
        run.at(run.net.clock.now + delay, self.start_attempt)


class ProgramRun:
    """The program of one container start. ``state``: starting → waiting → working → ended."""

    def __init__(self, net: ProgramHost, pod: PodNet, spec: ProgramSpec, *, worker: Any, container: Any,
                 run_id: int, startup: float, work: float) -> None:
        self.net = net
        self.pod = pod
        self.spec = spec
        self.worker = worker
        self.container = container
        self.run_id = run_id
        self.startup = startup
        self.work = work
        self.state = STARTING
        self.started_at: float | None = None
        self.listening = False
        self.targets = [TargetRun(self, host, port) for host, port in spec.targets]
        self.inbound: dict[Connection, None] = {}
        self.timers: list[Timer] = []
        self.give_up_at: float | None = None
        self.connected_recorded = False
        self.ended_by_work = False
        self.exiting = False
        self.unfinished_peer = False
        self.gave_up = ""

    # ------------------------------------------------------------------ plumbing
    def at(self, when: float, callback: Any, *args: Any) -> None:
        timers = self.timers
        while timers and timers[0].cancelled:  # ran (or cancelled): a retrying program sets hundreds
            del timers[0]
        timers.append(self.net.clock.call_at(us(when), callback, *args))

    def emit(self, event: str, detail: str = "", kind: str = "Connect") -> None:
        self.net.emit(self.pod, kind, event, detail)

    def peers(self) -> int:
        """Distinct pods (by uid) with an open connection to this program."""
        return len({c.client.pod.uid for c in self.inbound})

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Called in the instant the container starts: the program starts ``startup`` later, and never
        in the container's own start step, so the pod's ``Running`` comes first in the trace."""
        self.at(self.net.clock.now + self.startup, self._begin)

    def _begin(self) -> None:
        if self.state != STARTING:
            return
        now = self.net.clock.now
        self.state = WAITING
        self.started_at = now
        spec = self.spec
        if spec.listen:
            self.listening = True
            self.emit("Listening", ",".join(map(str, spec.listen)), kind="Pod")
            self._ready_if("listening")
        if spec.retry.give_up_after is not None and self.targets:
            self.give_up_at = us(now + spec.retry.give_up_after)
            self.at(self.give_up_at, self._give_up_all)
        wait = spec.effective_wait()
        if wait.timeout is not None:
            self.at(now + wait.timeout, self._wait_timed_out)
        for target in self.targets:
            target.start_attempt()
        self.check_wait()

    def connect(self, target: TargetRun, server: ProgramRun) -> None:
        conn = Connection(self, target, server, target.port)
        target.connection = conn
        target.ever_connected = True
        server.inbound[conn] = None
        self.net.connected(conn)
        self.emit("connected", f"#{target.attempt} {target.label} ({target.ip})")
        if not self.connected_recorded and all(t.connection is not None for t in self.targets):
            self.connected_recorded = True
            self.emit("Connected", ", ".join(t.label for t in self.targets), kind="Pod")
            self._ready_if("connected")
        self.check_wait()
        server.check_wait()

    def check_wait(self) -> None:
        if self.state != WAITING or self.exiting:
            return
        wait = self.spec.effective_wait()
        if wait.connected and not all(t.connection is not None for t in self.targets):
            return
        if wait.peers is not None and self.peers() < wait.peers:
            return
        if wait.targets_working and not all(
                t.connection is not None and t.connection.server.state == WORKING for t in self.targets):
            return
        self._start_work()

    def _start_work(self) -> None:
        self.state = WORKING
        self.emit("Working", kind="Pod")
        self._ready_if("working")
        for conn in list(self.inbound):
            conn.client.check_wait()
        if self.work == UNTIL_DISCONNECTED:
            if not any(t.connection is not None for t in self.targets):
                self._end(0 if not self.unfinished_peer else self.spec.disconnect_exit_code, by_work=True)
        elif self.work != FOREVER and not math.isinf(self.work):
            self.at(self.net.clock.now + self.work, self._end, self.spec.exit_code, True)

    def _ready_if(self, what: str) -> None:
        if self.spec.ready == what:
            self.net.mark_ready(self)

    # ------------------------------------------------------------------ endings
    def _wait_timed_out(self) -> None:
        if self.state == WAITING:
            wait = self.spec.effective_wait()
            self._give_up(f"waitFor not met after {wait.timeout:g}s", wait.exit_code)

    def _give_up_all(self) -> None:
        if self.state != WAITING:
            return
        pending = [t for t in self.targets if t.connection is None]
        if pending:
            self.give_up(", ".join(t.label for t in pending) + " (giveUpAfter)")

    def give_up(self, why: str) -> None:
        self._give_up(why, self.spec.retry.exit_code)

    def _give_up(self, why: str, code: int) -> None:
        if self.exiting or self.state in (ENDED, WORKING) or self.worker.terminating:
            return  # during graceful deletion a give-up does not happen
        for target in self.targets:
            if target.connection is None:
                target.gave_up = True
        self.gave_up = why
        self.emit("GaveUp", why, kind="Pod")
        self.exiting = True
        self.net.exit_container(self, code)

    def _end(self, code: int, by_work: bool) -> None:
        if self.exiting or self.state != WORKING or self.worker.terminating:
            return
        self.ended_by_work = by_work
        self.exiting = True
        self.net.exit_container(self, code)

    def closed(self, conn: Connection, peer_finished: bool) -> None:
        """An outbound connection closed because the other end stopped."""
        target = conn.target
        if target.connection is conn:
            target.connection = None
        if not peer_finished:
            self.unfinished_peer = True
        self.emit("closed", f"{target.label} ({target.ip})")
        if self.state == WAITING:
            self.at(self.net.clock.now + target.interval, target.start_attempt)
        elif self.state == WORKING and self.work == UNTIL_DISCONNECTED \
                and not any(t.connection is not None for t in self.targets):
            code = self.spec.disconnect_exit_code if self.unfinished_peer else 0
            self._end(code, by_work=True)

    def stop(self) -> None:
        """The container stopped: ports close, connections close at both ends, timers go."""
        if self.state == ENDED:
            return
        finished = self.ended_by_work
        self.state = ENDED
        self.listening = False
        for timer in self.timers:
            timer.cancel()
        self.timers.clear()
        for target in self.targets:
            conn = target.connection
            if conn is not None:
                conn.closed = True
                target.connection = None
                conn.server.inbound.pop(conn, None)
        for conn in list(self.inbound):
            conn.closed = True
            self.inbound.pop(conn, None)
            conn.client.closed(conn, finished)
