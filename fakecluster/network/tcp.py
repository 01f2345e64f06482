"""The client side of a TCP connect as Linux runs it: the SYN and its retransmissions.

``tcp_connect`` sends the first SYN with the initial RTO of 1 s (``TCP_TIMEOUT_INIT``,
``include/net/tcp.h``) and doubles it on each retransmission (``tcp_retransmit_timer``), up to
``net.ipv4.tcp_syn_retries`` retransmissions (default 6, ``TCP_SYN_RETRIES``); when the last one has
gone unanswered for its RTO the connect fails with ``ETIMEDOUT``. So SYNs leave at 0, 1, 3, 7, 15, 31,
63 s and the connect times out at 127 s: in general retransmission *k* at ``2^k - 1`` s and the failure
at ``2^(synRetries+1) - 1`` s. A program's connect timeout (``ZMQ_CONNECT_TIMEOUT``, ``retry.timeout``)
cuts that short; a retransmission due exactly at the timeout is not sent.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """What one SYN meets at the instant it is judged."""

    CONNECTED = "connected"
    REFUSED = "refused"
    LOST = "SYN lost"


def syn_offsets(syn_retries: int, timeout: float | None = None) -> list[float]:
    """Seconds after the first SYN at which SYNs are sent (the first at 0), before ``timeout``."""
    offsets = [float(2**k - 1) for k in range(syn_retries + 1)]
    if timeout is None:
        return offsets
    return [t for t in offsets if t < timeout]


def connect_deadline(syn_retries: int, timeout: float | None = None) -> float:
    """Seconds after the first SYN at which an unanswered connect fails (``ETIMEDOUT``)."""
    kernel = float(2 ** (syn_retries + 1) - 1)
    return kernel if timeout is None else min(kernel, timeout)
