"""The EndpointSlice controller (``pkg/controller/endpointslice/endpointslice_controller.go`` and the
reconciler in ``staging/src/k8s.io/endpointslice/reconciler.go``).

For every Service with a selector it keeps ``discovery.k8s.io/v1`` EndpointSlices in the API server:

- a pod is listed iff it matches the selector, is neither ``Succeeded`` nor ``Failed`` and has a
  ``podIP`` (``ShouldPodBeInEndpoints`` with ``includeTerminating``: terminating pods stay listed);
- per endpoint (``podToEndpoint`` in ``staging/src/k8s.io/endpointslice/utils.go``): ``serving`` =
  pod Ready, ``terminating`` = ``deletionTimestamp`` set, ``ready = publishNotReadyAddresses ||
  (serving && !terminating)``; ``hostname`` iff the pod's ``spec.hostname`` is set and its
  ``spec.subdomain`` is the Service's name (``ShouldSetHostname``); ``targetRef`` and ``nodeName``;
- labels: the Service's own, plus ``kubernetes.io/service-name``, ``endpointslice.kubernetes.io/
  managed-by: endpointslice-controller.k8s.io`` and, for a headless Service,
  ``service.kubernetes.io/headless`` (``setEndpointSliceLabels``); a controller owner reference to the
  Service (``newEndpointSlice``), so the garbage collector removes the slices with it;
- at most :data:`MAX_ENDPOINTS_PER_SLICE` endpoints per slice (``--max-endpoints-per-slice``); a new
  endpoint goes into the slice that is closest to full once it is added (``getSliceToFill``), else into
  a new slice; a slice left empty is deleted, except that a Service always keeps one slice: with no
  endpoint at all the last slice stays as the placeholder (the reconciler turns the placeholder's
  create/delete pair into an update, ``finalize``). Within a slice endpoints are ordered oldest pod
  first (``creationTimestamp``, then name); since new pods fill the last slice, that order holds across
  slices while pods only come, and after churn follows upstream's packing.

**Incremental.** Upstream's reconciler recomputes the desired endpoints from a pod list on every sync and
then writes only the slices that changed. Here the pod watch does the first half: a pod event recomputes
that one pod's endpoint, and when it changed marks the one slice that lists it dirty; the sync writes the
dirty slices only. Nothing re-lists a Service's pods except a change of the Service itself (selector,
``publishNotReadyAddresses``, labels, ports).

**Timing.** The sync of a Service runs ``latency`` (``cluster.latency.endpointSlice``) after the first
change that dirtied it; changes meanwhile are written with it, as upstream's
``--endpointslice-updates-batch-period`` does. With latency 0 every change is written in the instant it
happened (after the write that caused it).

Slice names are ``<service>-<5 random characters>`` (``generateName``), drawn here from the
controller's own seeded stream, and the kind has its own uid stream
(:attr:`~fakecluster.apiserver.resources.ResourceType.rng`): adding this controller moved no other
object's name or uid.
"""

from __future__ import annotations

import contextlib
import random
from bisect import bisect_left
from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.apiserver.object_meta import generate_name
from fakecluster.client.internal import InternalClient
from fakecluster.clock import Clock
from fakecluster.runtime import Controller

COMPONENT = "endpointslice-controller"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
"""``ControllerName`` (``pkg/controller/endpointslice/endpointslice_controller.go``)."""
MAX_ENDPOINTS_PER_SLICE = 100
"""``--max-endpoints-per-slice`` default (``defaultMaxEndpointsPerSlice`` in the controller options)."""
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
LABEL_HEADLESS = "service.kubernetes.io/headless"
_RESERVED = (LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS)
ServiceKey = tuple[str, str]


@dataclass(slots=True)
class _Endpoint:
    """One pod's endpoint: its sort key, the wire form, and the slice it is in."""

    key: tuple[str, str, str]
    """``(creationTimestamp, name, uid)``: oldest pod first, then by name and uid. The pod's own strings
    in a tuple (64 bytes), not joined into one string of its own (some 136): each ready pod keeps its
    key while it is listed, and the bisection in a slice's order compares the tuples in C as well."""
    wire: Obj
    slice: _Slice | None = None


@dataclass(slots=True, eq=False)
class _Slice:
    name: str
    members: dict[str, None] = field(default_factory=dict)
    """Pod uids of the endpoints in this slice."""
    order: list[tuple[str, str, str]] = field(default_factory=list)
    """The members' sort keys (:attr:`_Endpoint.key`), kept sorted: a write lists them without sorting."""
    wires: list[Obj] = field(default_factory=list)
    """The members' endpoint dicts, parallel to :attr:`order` (a write copies this list)."""

    stored: bool = False
    """Created in the API server already (else the next sync creates it)."""
    kept_head: int = 0
    kept_tail: int = 0
    """At least how many leading and trailing :attr:`wires` are those of the version last written, at
    the same places from their end: after a write all of them; a change at position ``p`` keeps the
    ``p`` before it and the ones after it. Handed to the API server with the next write, which then
    looks for the changed endpoints between the two ends only."""

    def changed(self, at: int) -> None:
        """The endpoint now at ``at`` is a new one, replacing one or put in (the ones after an insertion
        moved up by one: counted from the end, they are where they were). Comparisons, not ``min()``:
        one per endpoint change, and under cachegrind ``x = min(x, y)`` costs 1,600 instructions
        against 360 for the test."""
        if at < self.kept_head:  # noqa: PLR1730 -- see above
            self.kept_head = at
        tail = len(self.wires) - 1 - at
        if tail < self.kept_tail:  # noqa: PLR1730
            self.kept_tail = tail

    def removed(self, at: int) -> None:
        """The endpoint that was at ``at`` went (comparisons: as :meth:`changed`)."""
        if at < self.kept_head:  # noqa: PLR1730
            self.kept_head = at
        tail = len(self.wires) - at
        if tail < self.kept_tail:  # noqa: PLR1730
            self.kept_tail = tail


@dataclass(slots=True)
class _ServiceState:
    """What the controller knows of one Service with a selector, and its slices."""

    key: ServiceKey
    """(namespace, name): the one tuple every pod it lists refers to it by."""
    uid: str
    selector: tuple[tuple[str, str], ...]
    publish_not_ready: bool
    headless: bool
    labels: dict[str, str]
    ports: list[Obj]
    deleting: bool = False
    """``deletionTimestamp`` set: no slice is created any more (``finalize``: "Don't create new
    EndpointSlices if the Service is pending deletion", racing the garbage collector)."""
    endpoints: dict[str, _Endpoint] = field(default_factory=dict)
    slices: list[_Slice] = field(default_factory=list)
    dirty: dict[_Slice, None] = field(default_factory=dict)
    """Slices to write at the next sync (insertion-ordered: deterministic; a slice hashes by identity)."""
    unplaced: dict[str, None] = field(default_factory=dict)
    """Pod uids with an endpoint not yet put into a slice."""
    full_prefix: int = 0
    """How many leading :attr:`slices` are known to be full: a new endpoint's slice is looked for after
    them (a full slice never takes one). Reset whenever a slice loses an endpoint or goes."""
    doomed: list[_Slice] = field(default_factory=list)
    """Emptied stored slices to delete at the next sync."""
    no_ports: list[Obj] = field(default_factory=list)
    """The ``ports`` of an empty slice. Like :attr:`ports`, handed to every write and never changed, so
    each version holds the stored one's very list and the API server need not check it again."""
    meta_parts: tuple[dict[str, str], list[Obj], str] | None = None
    """The slices' labels, owner references and ``generateName``, built once and shared by every write
    (never changed): the API server then sees the very objects it stored and skips re-checking them."""


def endpoint_ports(service: Obj) -> list[Obj]:
    """``getEndpointPorts`` for this emulation: a headless Service without ports gets ``[]``; otherwise
    one port per Service port with a numeric ``targetPort`` (default: ``port``). A named ``targetPort``
    would need each pod's container ports (``FindPort``) and endpoints grouped by port set; pods here
    always expose what the Service names, so named ports are skipped (documented limitation)."""
    out: list[Obj] = []
    for port in (service.get("spec") or {}).get("ports") or ():
        target = port.get("targetPort", port.get("port"))
        if not isinstance(target, int):
            continue
        out.append({"name": port.get("name") or "", "port": target,
                    "protocol": port.get("protocol") or "TCP"})
    return out


_CONDITIONS: dict[tuple[bool, bool, bool], Obj] = {
    (ready, serving, terminating): {"ready": ready, "serving": serving, "terminating": terminating}
    for ready in (False, True) for serving in (False, True) for terminating in (False, True)
}
"""The eight endpoint ``conditions`` values, each one shared dict (stored objects are never changed)."""
_SERVING = _CONDITIONS[(True, True, False)]
_PUBLISHED_NOT_SERVING = _CONDITIONS[(True, False, False)]
_NOT_SERVING = _CONDITIONS[(False, False, False)]
"""The three of a pod not terminating, picked by tests rather than by a tuple key (a tuple built,
hashed and compared per endpoint built)."""


_TERMINAL = ("Succeeded", "Failed")


def pod_endpoint(pod: Obj, service_name: str, publish_not_ready: bool,
                 previous: Obj | None = None) -> Obj | None:
    """The endpoint of ``pod`` in a slice of Service ``service_name`` (``podToEndpoint``), or ``None``
    when the pod is not listed (``ShouldPodBeInEndpoints`` with terminating pods included).

    ``previous``: this pod's endpoint as last built; returned itself when nothing changed, else the new
    endpoint shares its unchanged parts (the pod's name and uid never change, nor mostly its IP)."""
    status = pod.get("status") or {}
    ip = status.get("podIP")
    if not ip or status.get("phase") in _TERMINAL:
        return None
    meta = pod["metadata"]
    spec = pod.get("spec") or {}
    serving = False  # podutil.IsPodReady: the first Ready condition's status is "True"
    for cond in status.get("conditions") or ():  # condition_true(pod, "Ready"), without its two calls
        if cond.get("type") == "Ready":
            serving = cond.get("status") == "True"
            break
    terminating = meta.get("deletionTimestamp") is not None
    # ready = publishNotReadyAddresses || (serving && !terminating)
    if terminating:
        conditions = _CONDITIONS[(publish_not_ready, serving, True)]
    elif serving:
        conditions = _SERVING
    else:
        conditions = _PUBLISHED_NOT_SERVING if publish_not_ready else _NOT_SERVING
    hostname = spec.get("hostname")
    if not (hostname and spec.get("subdomain") == service_name):
        hostname = None
    node = spec.get("nodeName") or None
    if previous is not None:
        addresses = previous["addresses"]
        if addresses[0] != ip or len(addresses) != 1:
            addresses = [ip]
        elif (conditions is previous["conditions"] and hostname == previous.get("hostname")
              and node == previous.get("nodeName")):
            return previous
        target_ref = previous["targetRef"]
    else:
        addresses = [ip]
        target_ref = {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"],
                      "uid": meta["uid"]}
    wire: Obj = {"addresses": addresses, "conditions": conditions}
    if hostname:
        wire["hostname"] = hostname
    wire["targetRef"] = target_ref
    if node:
        wire["nodeName"] = node
    return wire


def _selector_matches(selector: tuple[tuple[str, str], ...], labels: dict[str, str]) -> bool:
    for k, v in selector:  # noqa: SIM110 -- per pod event: 55 ns, against 175 ns for all() over a generator
        if labels.get(k) != v:
            return False
    return True


class EndpointSliceController:
    """Keeps the EndpointSlices of every Service with a selector. Constructed by the cluster."""

    def __init__(self, client: InternalClient, clock: Clock, rng: random.Random, *,
                 latency: float = 0.0) -> None:
        self._clock = clock
        self._client = client
        self._rng = rng
        self.controller = Controller(clock, COMPONENT, self._sync_service, latency=latency)
        self._services: dict[ServiceKey, _ServiceState] = {}
        self._by_namespace: dict[str, dict[str, _ServiceState]] = {}
        self._pod_services: dict[str, tuple[ServiceKey, ...]] = {}
        """Pod uid -> the Services whose slices list it (so a pod change touches only those). Tuples,
        replaced on change: a pod is nearly always in one Service, and a list per pod costs twice the
        memory of a one-key tuple for as long as the pod is listed."""
        self.writes = 0
        self._client.watch("Service", self._on_service)
        self._client.watch("Pod", self._on_pod)
        self._client.watch("EndpointSlice", self._on_slice)

    # ------------------------------------------------------------------ watches
    def _on_service(self, event: WatchEvent) -> None:
        svc = event.object
        meta = svc["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        state = self._services.get(key)
        spec = svc.get("spec") or {}
        selector = spec.get("selector") if spec.get("type") != "ExternalName" else None
        if event.type == "DELETED" or not selector:
            if state is not None:
                self._forget_service(key, state)
                if event.type != "DELETED":
                    self._delete_stored(key, state)  # a selector removed: the slices are no longer ours
            return  # a deleted Service's slices go with it (owner reference, garbage collector)
        if state is not None and meta.get("deletionTimestamp") is not None:
            state.deleting = True
            return
        fresh = _ServiceState(
            key=key,
            uid=meta["uid"],
            selector=tuple(sorted(selector.items())),
            publish_not_ready=bool(spec.get("publishNotReadyAddresses")),
            headless=spec.get("clusterIP") in ("None", "", None),
            labels={k: v for k, v in (meta.get("labels") or {}).items() if k not in _RESERVED},
            ports=endpoint_ports(svc),
        )
        if state is not None and (state.uid, state.selector, state.publish_not_ready, state.headless,
                                  state.labels, state.ports) == (fresh.uid, fresh.selector,
                                                                 fresh.publish_not_ready, fresh.headless,
                                                                 fresh.labels, fresh.ports):
            return
        if state is not None and state.uid == fresh.uid:
            fresh.slices = state.slices  # same Service, new settings: rewrite its slices in place
            fresh.dirty = dict.fromkeys(state.slices)
            for s in fresh.slices:
                s.members.clear()
                s.order.clear()
                s.wires.clear()
                s.kept_head = s.kept_tail = 0
            self._forget_service(key, state)
        self._services[key] = fresh
        self._by_namespace.setdefault(key[0], {})[key[1]] = fresh
        if not fresh.slices:
            placeholder = _Slice(self._slice_name(key[1]))
            fresh.slices.append(placeholder)
            fresh.dirty[placeholder] = None
        for pod in self._client.list("Pod", key[0]):  # only on a Service change
            if _selector_matches(fresh.selector, pod["metadata"].get("labels") or {}):
                self._update_pod(fresh, pod, pod["metadata"]["uid"])
        self.controller.enqueue(key)

    def _forget_service(self, key: ServiceKey, state: _ServiceState) -> None:
        self._services.pop(key, None)
        self._by_namespace.get(key[0], {}).pop(key[1], None)
        for uid in state.endpoints:
            self._unlist(uid, key)

    def _on_pod(self, event: WatchEvent) -> None:
        pod = event.object
        meta = pod["metadata"]
        uid = meta["uid"]
        listed = self._pod_services.get(uid)
        if event.type == "DELETED":
            for key in list(listed or ()):
                state = self._services[key]
                self._remove_endpoint(key, state, uid)
            return
        status = pod.get("status")
        old = event.old
        if old is not None:
            old_status = old.get("status")
            # Nothing an endpoint is made of changed (copy-on-write store: the same objects): the
            # status itself, or, for a listed pod, the status around the very conditions list (so the
            # same readiness), the same IP, a phase still not terminal and the same spec. The watch
            # delivered every version, so the pod's endpoints are those built from ``old`` (a listed
            # pod's ``old`` was not terminal either), and pod_endpoint would return each of them
            # itself. The kubelet's Pending -> Running write is one: a third of the endpoint builds.
            if status is old_status or (
                    listed is not None and status is not None and old_status is not None
                    and status.get("conditions") is old_status.get("conditions")
                    and status.get("podIP") == old_status.get("podIP")
                    and status.get("phase") not in _TERMINAL and pod.get("spec") is old.get("spec")):
                old_meta = old["metadata"]
                if meta.get("labels") is old_meta.get("labels") \
                        and meta.get("deletionTimestamp") == old_meta.get("deletionTimestamp"):
                    return
        if listed is None and not (status or {}).get("podIP"):
            return  # in no slice, and without an IP in none to come (ShouldPodBeInEndpoints)
        services = self._by_namespace.get(meta.get("namespace", ""))
        if services:
            labels = meta.get("labels") or {}
            for state in services.values():
                for k, v in state.selector:  # _selector_matches, without its call
                    if labels.get(k) != v:
                        # Only this Service's own entry in ``listed`` can have changed since it was read.
                        if listed is not None and state.key in listed:
                            self._remove_endpoint(state.key, state, uid)
                        break
                else:
                    self._update_pod(state, pod, uid)

    def _on_slice(self, event: WatchEvent) -> None:
        """A managed slice deleted by someone else is recreated at the next sync (upstream requeues the
        Service on slice events that do not match what it wrote)."""
        if event.type != "DELETED":
            return
        meta = event.object["metadata"]
        key = ((meta.get("namespace", "")), (meta.get("labels") or {}).get(LABEL_SERVICE_NAME, ""))
        state = self._services.get(key)
        if state is None:
            return
        for s in state.slices:
            if s.name == meta["name"] and s.stored:
                s.stored = False
                s.name = self._slice_name(key[1])
                state.dirty[s] = None
                self.controller.enqueue(key)

    # ------------------------------------------------------------------ endpoint bookkeeping
    def _update_pod(self, state: _ServiceState, pod: Obj, uid: str) -> None:
        """Pod ``uid`` matches ``state``'s selector: (re)build its endpoint there."""
        key = state.key
        current = state.endpoints.get(uid)
        if current is not None:
            previous = current.wire
            wire = pod_endpoint(pod, key[1], state.publish_not_ready, previous)
            if wire is previous:
                return
            if wire is None:
                self._remove_endpoint(key, state, uid)
                return
            current.wire = wire
            s = current.slice
            if s is not None:
                at = bisect_left(s.order, current.key)
                s.wires[at] = wire
                s.changed(at)
                state.dirty[s] = None
            self.controller.enqueue(key)
            return
        wire = pod_endpoint(pod, key[1], state.publish_not_ready)
        if wire is None:
            return
        meta = pod["metadata"]
        created = meta.get("creationTimestamp") or ""
        state.endpoints[uid] = _Endpoint((created, meta["name"], uid), wire)
        state.unplaced[uid] = None
        listed = self._pod_services.get(uid)
        self._pod_services[uid] = (key,) if listed is None else (*listed, key)
        self.controller.enqueue(key)

    def _unlist(self, uid: str, key: ServiceKey) -> None:
        """The pod ``uid`` is no longer in the Service ``key``'s slices (its first mention goes)."""
        listed = self._pod_services.get(uid)
        if listed is not None and key in listed:
            if len(listed) == 1:  # nearly always: a pod in one Service
                del self._pod_services[uid]
            else:
                at = listed.index(key)
                self._pod_services[uid] = listed[:at] + listed[at + 1:]

    def _remove_endpoint(self, key: ServiceKey, state: _ServiceState, uid: str) -> None:
        endpoint = state.endpoints.pop(uid, None)
        self._unlist(uid, key)
        if endpoint is None:
            return
        s = endpoint.slice
        if s is None:  # not placed yet (a placed endpoint is no longer in ``unplaced``)
            state.unplaced.pop(uid, None)
        else:
            state.full_prefix = 0
            del s.members[uid]
            at = bisect_left(s.order, endpoint.key)
            del s.order[at]
            del s.wires[at]
            s.removed(at)
            state.dirty[s] = None
        self.controller.enqueue(key)

    def _slice_name(self, service_name: str) -> str:
        return generate_name(self._rng, f"{service_name}-")

    # ------------------------------------------------------------------ sync
    def _sync_service(self, key: Hashable) -> float | None:
        """``syncService`` → ``reconciler.Reconcile``: place new endpoints, then write what changed."""
        state = self._services.get(key)  # type: ignore[call-overload]
        if state is None:
            return None
        svc_key: ServiceKey = key  # type: ignore[assignment]
        if state.unplaced:
            self._place(svc_key, state)
        dirty = state.dirty
        if dirty:  # nearly always one slice, not emptied: a sync per pod change (batch period 0)
            written = [*dirty]
            for s in written:
                if not s.members:
                    self._retire_empty(state)
                    written = [*dirty]
                    break
            for s in written:
                self._write(svc_key, state, s)
            dirty.clear()
        if state.doomed:
            for s in state.doomed:
                with contextlib.suppress(NotFound):
                    self._client.delete("EndpointSlice", svc_key[0], s.name)
                    self.writes += 1
            state.doomed.clear()
        return None

    def _place(self, key: ServiceKey, state: _ServiceState) -> None:
        """New endpoints, oldest first, each into the slice closest to full (``getSliceToFill``)."""
        unplaced = state.unplaced
        endpoints = state.endpoints
        # By (timestamp, name) only: pods that tie there keep the order they came in (a stable sort).
        # Nearly always one (a sync per pod change): nothing to sort.
        pending = [*unplaced] if len(unplaced) == 1 else \
            sorted(unplaced, key=lambda uid: endpoints[uid].key[:2])
        unplaced.clear()
        slices = state.slices
        for uid in pending:
            target = None
            best = MAX_ENDPOINTS_PER_SLICE
            start = state.full_prefix
            while start < len(slices) and len(slices[start].members) >= MAX_ENDPOINTS_PER_SLICE:
                start += 1
            state.full_prefix = start
            for s in islice(slices, start, None):
                room = MAX_ENDPOINTS_PER_SLICE - (len(s.members) + 1)
                if 0 <= room < best:
                    best, target = room, s
                    if room == 0:
                        break
            if target is None:
                target = _Slice(self._slice_name(key[1]))
                slices.append(target)
            target.members[uid] = None
            endpoint = endpoints[uid]
            order = target.order
            at = bisect_left(order, endpoint.key)
            order.insert(at, endpoint.key)
            target.wires.insert(at, endpoint.wire)
            target.changed(at)
            endpoint.slice = target
            state.dirty[target] = None

    def _retire_empty(self, state: _ServiceState) -> None:
        """Empty slices go, except one: a Service with a selector always has a slice (the placeholder).
        Only a slice changed since the last sync can have become empty."""
        for s in [s for s in state.dirty if not s.members]:
            if len(state.slices) > 1:
                state.full_prefix = 0
                state.slices.remove(s)
                state.dirty.pop(s, None)
                if s.stored:
                    state.doomed.append(s)

    def _write(self, key: ServiceKey, state: _ServiceState, s: _Slice) -> None:
        wires = [*s.wires]
        if state.meta_parts is None:
            labels = dict(state.labels)
            if state.headless:
                labels[LABEL_HEADLESS] = ""
            labels[LABEL_SERVICE_NAME] = key[1]
            labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
            owners: list[Obj] = [{"apiVersion": "v1", "kind": "Service", "name": key[1], "uid": state.uid,
                                  "controller": True, "blockOwnerDeletion": True}]
            state.meta_parts = (labels, owners, f"{key[1]}-")
        labels, owners, prefix = state.meta_parts
        body: dict[str, Any] = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": s.name,
                "generateName": prefix,
                "namespace": key[0],
                "labels": labels,
                "ownerReferences": owners,
            },
            "addressType": "IPv4",
            "endpoints": wires,
            "ports": state.ports if wires else state.no_ports,
        }
        try:
            # Built afresh for this write from endpoint dicts that are never changed once built (a change
            # makes a new one): handed over uncopied, so the stored versions share the unchanged
            # endpoints, which the DNS server then skips by identity; the API server checks the schema
            # of every endpoint the stored version does not already hold.
            if s.stored:
                self._client.update_donated(body, kept_ends=(s.kept_head, s.kept_tail))
            elif state.deleting:
                return
            else:
                self._client.create_donated(body)
                s.stored = True
            s.kept_head = s.kept_tail = len(wires)
        except ApiError as err:
            if isinstance(err, NotFound) and s.stored:
                s.stored = False  # deleted meanwhile: create it afresh on the retry
            state.dirty[s] = None
            raise
        self.writes += 1

    def _delete_stored(self, key: ServiceKey, state: _ServiceState) -> None:
        for s in state.slices:
            if s.stored:
                with contextlib.suppress(NotFound):
                    self._client.delete("EndpointSlice", key[0], s.name)
