"""The cluster DNS: CoreDNS's ``kubernetes`` plugin fed by the EndpointSlice watch, and the caches in
front of it.

**Records** (``plugin/kubernetes`` of CoreDNS, the DNS spec of ``kubernetes/dns``
``docs/specification.md``): ``<hostname>.<service>.<namespace>.svc.cluster.local`` answers the IPs of the
*ready* endpoints with that hostname, ``<service>.<namespace>.svc.cluster.local`` every ready endpoint
of the Service, in endpoint order (slices in the order they were first seen, endpoints in slice order);
anything else in ``cluster.local`` is NXDOMAIN. The server serves what the slices said ``propagation``
earlier (informer delivery plus CoreDNS's own watch).

**Caches** (CoreDNS ``cache`` plugin; NodeLocal DNSCache): a cache key is the FQDN asked; an answer (a
list of IPs, positive TTL) or an NXDOMAIN (negative TTL) is reused while *less* than its TTL has passed
since it was fetched, whatever changed meanwhile; a query at exactly fetch time + TTL fetches afresh.
``cluster`` is one cache shared by every pod, ``node`` one per node, ``none`` none.

**Cost.** A slice update re-indexes only the endpoints of that slice that changed: the API server's
watch event says how many at each end are the previous version's very objects (else the two lists are
compared by identity here), and a replacement the records read the same is skipped. The usual update,
one endpoint added, replaced or removed in the version taken in last, is found by that version's
identity and read no further than its labels and endpoints. A query is a dict lookup plus the
concatenation of the few slices that hold the name.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from fakecluster.api.objects import Obj, shared_ends
from fakecluster.api.watch import WatchEvent
from fakecluster.network.config import DnsConfig

if TYPE_CHECKING:
    from fakecluster.clock import Clock

CLUSTER_DOMAIN = "cluster.local"
SERVICE_LABEL = "kubernetes.io/service-name"

_NO_ENDPOINTS: list[Obj] = []
"""The endpoints of a slice not seen before (never changed)."""

Answer = tuple[str, ...] | None
"""The IPs a name resolves to, in order; ``None`` is NXDOMAIN."""


def qualify(name: str, namespace: str) -> str:
    """A pod resolver's view of ``name`` (``ndots:5`` and the first search domain): a name ending in
    ``.cluster.local`` is asked as written, anything else as ``<name>.<namespace>.svc.cluster.local``
    (only the first search domain is modelled)."""
    name = name.rstrip(".")
    if name == CLUSTER_DOMAIN or name.endswith("." + CLUSTER_DOMAIN):
        return name
    return f"{name}.{namespace}.svc.{CLUSTER_DOMAIN}"


def pod_fqdn(hostname: str, subdomain: str, namespace: str) -> str:
    """The name the kubelet writes into the pod's ``/etc/hosts`` for itself (``hostname.subdomain``).

    Interned, as the hostname record :meth:`DnsServer._index` keys is: the pod's network record and the
    record of its ready endpoint (the subdomain is nearly always the Service) hold one string."""
    return sys.intern(f"{hostname}.{subdomain}.{namespace}.svc.{CLUSTER_DOMAIN}")


class _Slice:
    """The server's state of one slice: the version taken in last, and what the records read from it."""

    __slots__ = ("endpoints", "labels", "seq", "service", "service_fqdn", "version")

    def __init__(self, seq: int) -> None:
        self.seq = seq
        """Order of first sight: a hostname's entries and a service's endpoints go by it."""
        self.version: Obj = {}
        """The slice version taken in last (held, so its ``id`` keys :attr:`DnsServer._current`)."""
        self.labels: object = None
        """That version's labels object: a version with the very same one names the same Service."""
        self.service: str | None = None
        self.service_fqdn = ""
        self.endpoints: list[Obj] = _NO_ENDPOINTS
        """Its endpoints as indexed (none for a slice of no Service)."""


class DnsServer:
    """The records CoreDNS would serve. ``on_published(pod_uid, fqdn, ip)`` is called the first time a
    pod's hostname record answers its IP (the ``Resolvable`` milestone)."""

    def __init__(self, clock: Clock, propagation: float,
                 on_published: Callable[[str, str, str], None] | None = None) -> None:
        self._clock = clock
        self._propagation = propagation
        self._on_published = on_published
        self._slice_seq: dict[tuple[str, str], int] = {}
        """(namespace, slice name) -> order of first sight."""
        self._slices: dict[int, _Slice] = {}
        """slice seq -> the slice's state, for every slice that lists endpoints of a Service."""
        self._current: dict[int, _Slice] = {}
        """``id`` of the version of a slice taken in last -> the slice's state (which holds that version,
        so the id is not reused meanwhile): a watch event whose ``old`` is that very version is the next
        version of that slice, found without reading its name."""
        self._hosts: dict[str, tuple[_HostEntry, ...]] = {}
        """hostname FQDN -> (slice seq, pod uid, IP) of the ready endpoints with that hostname, by slice
        seq, in the order each first came within a slice. A tuple, not nested dicts: a hostname is
        nearly always one pod's, and two dicts per ready pod cost some 300 bytes for one entry."""
        self._services: dict[str, dict[int, None]] = {}
        """service FQDN -> the slices that hold its endpoints."""
        self._published: dict[str, None] = {}
        self.queries = 0

    def watch(self, event: WatchEvent) -> None:
        """The EndpointSlice watch; applied ``propagation`` later (at once for 0)."""
        if self._propagation > 0:
            self._clock.call_later(self._propagation, self.apply, event.type, event.object, event.old,
                                   event.shared_items)
        else:
            self.apply(event.type, event.object, event.old, event.shared_items)

    def apply(self, etype: str, slice_obj: Obj, old: Obj | None = None,
              shared: tuple[int, int] | None = None) -> None:
        """Take in one slice version. Incremental: endpoint objects are shared between versions of a
        slice unless they changed, so only the changed ones are re-indexed. ``old``: the slice's previous
        version (a watch event's); ``shared``: the watch event's count of leading and trailing endpoints
        that are ``old``'s very objects; used when ``old`` is the version taken in last, else the lists
        are compared here.

        The usual update (some three per pod: one endpoint added, replaced or removed) is of the version
        taken in last, with the same labels object (so the same Service) and a count: it is taken in
        here, reading nothing of the slice but its labels and endpoints; anything else, in
        :meth:`_take`."""
        if shared is not None and etype == "MODIFIED":
            state = self._current.get(id(old))
            if state is not None and state.version is old and state.service:
                endpoints = slice_obj.get("endpoints")
                if endpoints is not None and slice_obj["metadata"].get("labels") is state.labels:
                    old_list = state.endpoints
                    lo, same_tail = shared
                    added, removed = len(endpoints) - same_tail - lo, len(old_list) - same_tail - lo
                    if added + removed == 1 or added == 1 == removed:
                        published = None
                        if removed and (not added or not _same_record(old_list[lo], endpoints[lo], lo)):
                            self._unindex(state.seq, old_list[lo], lo, state.service_fqdn)
                            removed = 0
                        if added and not removed:
                            published = self._index(state.seq, endpoints[lo], lo, state.service_fqdn)
                        # else replaced by one the records read the same (a `serving` flip of a pod
                        # listed ready by publishNotReadyAddresses): nothing to re-index
                        current = self._current
                        del current[id(old)]
                        current[id(slice_obj)] = state
                        state.version = slice_obj
                        state.endpoints = endpoints
                        if published is not None:
                            self._publish(published)
                        return
        self._take(etype, slice_obj, old, shared)

    def _take(self, etype: str, slice_obj: Obj, old: Obj | None, shared: tuple[int, int] | None) -> None:
        """:meth:`apply` in general: a new, deleted or relabelled slice, or a version whose endpoints
        are compared with the ones taken in last here."""
        meta = slice_obj["metadata"]
        namespace = meta.get("namespace", "")
        key = (namespace, meta["name"])
        seq = self._slice_seq.get(key)
        if seq is None:
            seq = self._slice_seq[key] = len(self._slice_seq)
        state = self._slices.get(seq)
        old_list = state.endpoints if state is not None else _NO_ENDPOINTS
        labels = meta.get("labels")
        service = (labels or {}).get(SERVICE_LABEL)
        if state is not None and state.service == service:
            service_fqdn = state.service_fqdn
        else:
            service_fqdn = f"{service}.{namespace}.svc.{CLUSTER_DOMAIN}"
        endpoints: list[Obj] = [] if etype == "DELETED" or not service else slice_obj.get("endpoints") or []
        # A new slice version shares every unchanged endpoint object with the previous one, and a change
        # is usually one endpoint added, removed or replaced: skip the common head and tail by identity.
        if shared is not None and old is not None and old.get("endpoints") is old_list \
                and slice_obj.get("endpoints") is endpoints:
            lo, same_tail = shared
        else:
            lo, same_tail = shared_ends(old_list, endpoints)
        old_end, new_end = len(old_list) - same_tail, len(endpoints) - same_tail
        published: list[tuple[str, str, str]] = []
        if not (old_end - lo == 1 == new_end - lo and _same_record(old_list[lo], endpoints[lo], lo)):
            for i in range(lo, old_end):
                self._unindex(seq, old_list[i], i, service_fqdn)
            for i in range(lo, new_end):
                hit = self._index(seq, endpoints[i], i, service_fqdn)
                if hit is not None:
                    published.append(hit)
        # else one endpoint replaced by one the records read the same: nothing to re-index
        if state is not None:
            del self._current[id(state.version)]
        if etype == "DELETED" or not service:
            self._slices.pop(seq, None)
            self._services.get(service_fqdn, {}).pop(seq, None)
            if etype == "DELETED":
                del self._slice_seq[key]
        else:
            if state is None:
                state = self._slices[seq] = _Slice(seq)
            state.version, state.labels, state.endpoints = slice_obj, labels, endpoints
            state.service, state.service_fqdn = service, service_fqdn
            self._current[id(slice_obj)] = state
            held = self._services.get(service_fqdn)
            if held is None:
                held = self._services[service_fqdn] = {}
            held[seq] = None
        for hit in published:
            self._publish(hit)

    def _index(self, seq: int, endpoint: Obj, index: int, service_fqdn: str) -> tuple[str, str, str] | None:
        """Index one endpoint of slice ``seq`` (at ``index``); (pod uid, FQDN, IP) if its hostname record
        is to be published (the pod's first), else None."""
        hostname = endpoint.get("hostname")
        addresses = endpoint.get("addresses")
        if not hostname or not addresses or not (endpoint.get("conditions") or {}).get("ready"):
            return None
        target = endpoint.get("targetRef")
        pod_uid = target.get("uid") if target else None
        uid = pod_uid or f"#{index}"
        fqdn = sys.intern(f"{hostname}.{service_fqdn}")  # the pod's own name too: see pod_fqdn
        entry = (seq, uid, addresses[0])
        entries = self._hosts.get(fqdn)
        # Nearly always the pod's own name, indexed for the first time: one entry.
        self._hosts[fqdn] = (entry,) if entries is None else _with_entry(entries, entry)
        if pod_uid and uid not in self._published:
            return uid, fqdn, addresses[0]
        return None

    def _unindex(self, seq: int, endpoint: Obj, index: int, service_fqdn: str) -> None:
        hostname = endpoint.get("hostname")
        if not hostname:
            return
        fqdn = f"{hostname}.{service_fqdn}"
        entries = self._hosts.get(fqdn)
        if entries is None:
            return
        uid = _uid(endpoint, index)
        if len(entries) == 1:  # the usual case: the pod's own name
            if entries[0][0] == seq and entries[0][1] == uid:
                del self._hosts[fqdn]
            return
        kept = tuple(e for e in entries if e[0] != seq or e[1] != uid)
        if len(kept) == len(entries):
            return
        if kept:
            self._hosts[fqdn] = kept
        else:
            del self._hosts[fqdn]

    def _publish(self, record: tuple[str, str, str]) -> None:
        """The first time a pod's hostname record answers: the ``Resolvable`` milestone."""
        uid, fqdn, ip = record
        self._published[uid] = None
        if self._on_published is not None:
            self._on_published(uid, fqdn, ip)

    def answer(self, fqdn: str) -> Answer:
        """What the server answers now for ``fqdn``: the IPs, or ``None`` for NXDOMAIN."""
        self.queries += 1
        entries = self._hosts.get(fqdn)
        if entries:
            return tuple(ip for _, _, ip in entries)
        slices = self._services.get(fqdn)
        if slices:
            ips = tuple(e["addresses"][0] for seq in sorted(slices) for e in self._slices[seq].endpoints
                        if e.get("addresses") and (e.get("conditions") or {}).get("ready"))
            return ips or None
        return None


_HostEntry = tuple[int, str, str]
"""(slice seq, pod uid, IP): one ready endpoint behind a hostname record."""


def _with_entry(entries: tuple[_HostEntry, ...], entry: _HostEntry) -> tuple[_HostEntry, ...]:
    """``entries`` with ``entry`` in: in the place of the same (slice seq, uid), with its new IP, or else
    last of its slice's entries, as a nested dict (seq -> uid -> IP) would order them."""
    seq, uid, _ = entry
    for i, (known_seq, known_uid, _) in enumerate(entries):
        if known_seq == seq and known_uid == uid:
            return (*entries[:i], entry, *entries[i + 1:])
    at = len(entries)
    while at and entries[at - 1][0] > seq:
        at -= 1
    return (*entries[:at], entry, *entries[at:])


def _same_record(old: Obj, new: Obj, index: int) -> bool:
    """Whether the records read endpoint ``new`` exactly as ``old`` (at the same ``index``): the same
    pod, hostname, addresses and readiness (what :meth:`DnsServer._index` looks at). The EndpointSlice
    controller carries an endpoint's ``targetRef`` over to its next version: the very same one is the
    same pod, without reading its uid."""
    if old.get("hostname") != new.get("hostname") or old.get("addresses") != new.get("addresses"):
        return False
    ready, new_ready = (old.get("conditions") or {}).get("ready"), (new.get("conditions") or {}).get("ready")
    if (not ready) is not (not new_ready):
        return False
    target = old.get("targetRef")
    return target is new.get("targetRef") or _uid(old, index) == _uid(new, index)


def _uid(endpoint: Obj, index: int) -> str:
    return (endpoint.get("targetRef") or {}).get("uid") or f"#{index}"


class DnsCache:
    """One CoreDNS ``cache`` (or one node's NodeLocal DNSCache): FQDN -> (fetched at, answer)."""

    def __init__(self, positive_ttl: float, negative_ttl: float) -> None:
        self.positive_ttl = positive_ttl
        self.negative_ttl = negative_ttl
        self._entries: dict[str, tuple[float, Answer]] = {}
        self.hits = 0

    def lookup(self, fqdn: str, now: float, server: DnsServer) -> tuple[Answer, bool]:
        """(answer, from cache?). Reused while ``now - fetched < ttl``; at exactly the TTL, fetched."""
        entry = self._entries.get(fqdn)
        if entry is not None:
            fetched, answer = entry
            ttl = self.positive_ttl if answer is not None else self.negative_ttl
            if now - fetched < ttl:
                self.hits += 1
                return answer, True
        answer = server.answer(fqdn)
        ttl = self.positive_ttl if answer is not None else self.negative_ttl
        if ttl > 0:
            self._entries[fqdn] = (now, answer)
        else:
            self._entries.pop(fqdn, None)
        return answer, False


class Resolver:
    """What a pod's resolver reaches: the DNS server through the configured cache."""

    def __init__(self, clock: Clock, server: DnsServer, config: DnsConfig) -> None:
        self._clock = clock
        self.server = server
        self.mode, self.positive_ttl, self.negative_ttl = config.effective()
        self._cluster_cache = DnsCache(self.positive_ttl, self.negative_ttl)
        self._node_caches: dict[str, DnsCache] = {}

    def resolve(self, fqdn: str, node: str) -> tuple[Answer, bool]:
        """(answer, from cache?) for a query from a pod on ``node``."""
        now = self._clock.now
        if self.mode == "none":
            return self.server.answer(fqdn), False
        if self.mode == "cluster":
            return self._cluster_cache.lookup(fqdn, now, self.server)
        cache = self._node_caches.get(node)
        if cache is None:
            cache = self._node_caches[node] = DnsCache(self.positive_ttl, self.negative_ttl)
        return cache.lookup(fqdn, now, self.server)
