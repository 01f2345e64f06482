"""What a pod's program does on the network, as the cluster needs it (format 1.1 ``program:``).

A :class:`ProgramSpec` is fully concrete: its targets are ``(host, port)`` pairs already templated for
the one pod that runs it (the scenario runner does the templating and the ``{replicatedJob: ...}``
expansion, which need JobSet knowledge the cluster does not have). Durations are virtual seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

FOREVER = math.inf
UNTIL_DISCONNECTED = -1.0
"""``work: untilDisconnected`` (a negative duration never occurs otherwise)."""
ReadyWhen = Literal["listening", "connected", "working"]


@dataclass(frozen=True, slots=True)
class RetrySpec:
    """How each target is retried (zeromq's ``ZMQ_RECONNECT_IVL``/``_MAX``, ``ZMQ_CONNECT_TIMEOUT``)."""

    interval: float = 1.0
    backoff: float = 1.0
    max_interval: float | None = None
    timeout: float | None = None
    """Per attempt; ``None``: the kernel's SYN schedule decides (127 s with 6 retries)."""
    attempts: int | None = None
    give_up_after: float | None = None
    """Counted from program start."""
    exit_code: int = 1


@dataclass(frozen=True, slots=True)
class WaitSpec:
    """What the program waits for before its work starts (all that are set)."""

    connected: bool = False
    peers: int | None = None
    targets_working: bool = False
    timeout: float | None = None
    exit_code: int = 1


@dataclass(frozen=True, slots=True)
class ProgramSpec:
    container: str | None = None
    """``None``: the pod's first regular container."""
    listen: tuple[int, ...] = ()
    startup: float = 0.0
    targets: tuple[tuple[str, int], ...] = ()
    retry: RetrySpec = field(default_factory=RetrySpec)
    wait: WaitSpec | None = None
    """``None``: the default (``connected`` when there are targets, else nothing)."""
    work: float = FOREVER
    """Seconds, :data:`FOREVER` or :data:`UNTIL_DISCONNECTED`."""
    exit_code: int = 0
    disconnect_exit_code: int = 1
    ready: ReadyWhen | None = None

    def effective_wait(self) -> WaitSpec:
        if self.wait is not None:
            return self.wait
        return WaitSpec(connected=bool(self.targets))
