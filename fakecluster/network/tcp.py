"""The client side of a TCP connect as Linux runs it: the SYN and its retransmissions.

``tcp_connect`` sends the first SYN with the initial RTO of 1 s (``TCP_TIMEOUT_INIT``,
``include/net/tcp.h``); ``tcp_retransmit_timer`` (``net/ipv4/tcp_timer.c``) resends it and doubles
``icsk_rto``, until ``tcp_write_timeout`` finds ``icsk_retransmits >= tcp_syn_retries`` (default 6,
``TCP_SYN_RETRIES``) and fails the connect with ``ETIMEDOUT`` one RTO after the last retransmission.
So SYNs leave at 0, 1, 3, 7, 15, 31, 63 s and the connect times out at 127 s: in general
retransmission *k* at ``2^k - 1`` s and the failure at ``2^(synRetries+1) - 1`` s. A program's connect
timeout (``ZMQ_CONNECT_TIMEOUT``, ``retry.timeout``) cuts that short; a retransmission due exactly at
the timeout is not sent.

**What a retransmission is.** ``tcp_retransmit_timer`` calls ``tcp_retransmit_skb`` on the head of
the same socket's retransmit queue: the very same SYN, from the same source port, so the same
5-tuple as the first one. Only a *new* socket gets a new ephemeral port. Format 1.1 judges every SYN
at its own instant (``synLoss: perPacket``): a retransmission sent once the path is up connects.
Measured clusters do not always behave so. A stateful hop keyed by the 5-tuple (netfilter conntrack,
``net/netfilter/nf_conntrack_proto_tcp.c``, whose ``SYN_SENT`` entry lasts 120 s and is refreshed by
every retransmission; an eBPF datapath's connection-tracking map) can keep what it decided for a
flow's first SYN, sent before the pod network was programmed, for all its retransmissions, while a
new flow gets through. The Flux Operator's service-timing measurements have that shape: with
``ZMQ_CONNECT_TIMEOUT`` N (2 to 10 s) most followers join N s plus zeromq's 100-200 ms reconnect
interval after their first try, the rest at once, almost none at a retransmission inside N; with no
timeout at all the kernel's ``ETIMEDOUT`` decides (MiniKube's 140 s runs). ``synLoss: perConnection``
models such a path: a connect whose first SYN is lost loses every retransmission; the next attempt is
judged afresh.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache


class Outcome(StrEnum):
    """What one SYN meets at the instant it is judged."""

    CONNECTED = "connected"
    REFUSED = "refused"
    LOST = "SYN lost"


@lru_cache(maxsize=256)
def syn_offsets(syn_retries: int, timeout: float | None = None) -> tuple[float, ...]:
    """Seconds after the first SYN at which SYNs are sent (the first at 0), before ``timeout``. One
    tuple per setting: every connect attempt of a run keeps it (some 260 bytes per pod otherwise)."""
    offsets = tuple(float(2**k - 1) for k in range(syn_retries + 1))
    if timeout is None:
        return offsets
    return tuple(t for t in offsets if t < timeout)


def connect_deadline(syn_retries: int, timeout: float | None = None) -> float:
    """Seconds after the first SYN at which an unanswered connect fails (``ETIMEDOUT``)."""
    kernel = float(2 ** (syn_retries + 1) - 1)
    return kernel if timeout is None else min(kernel, timeout)
