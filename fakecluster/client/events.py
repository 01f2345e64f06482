"""client-go's ``events.EventRecorder`` (``k8s.io/client-go/tools/events``) writing events.k8s.io/v1.

Used by the JobSet controller (upstream builds it with ``NewEventBroadcasterAdapter(...).NewRecorder(
"jobset")`` and calls ``Record.Eventf(js, nil, type, reason, "Reconciling", message)``) and by the
scheduler (``NewRecorder(scheme, "default-scheduler")``, ``Eventf(pod, nil, type, "Scheduled", "Binding",
msg)``), which is why it lives with the client and not with either. What a reader of the API sees,
reproduced from ``recorder.go`` ``makeEvent`` and ``event_broadcaster.go``:

- the name is ``<regarding.name>.<clock.Now().UnixNano() as hex>`` in the regarding object's namespace
  (``default`` if empty). Virtual time is coarser than a wall clock, so two events at one instant would
  collide; the nanosecond value is bumped past the last one used, which keeps names unique and
  deterministic;
- ``regarding`` is ``reference.GetReference(js)``: kind, namespace, name, uid, apiVersion and the
  resourceVersion the caller's copy carried;
- ``reportingController`` is the recorder's name (``jobset``), ``reportingInstance`` is
  ``<name>-<hostname>``;
- an *isomorphic* event (same action, reason, reportingController, regarding, related; the note is not
  part of the key) seen again while cached becomes a ``series``: the first repeat patches
  ``series: {count: 2, lastObservedTime}`` onto the original event. client-go then only counts further
  repeats in memory and writes the final count when the series ends (6 min idle) or every 30 min; here
  every repeat patches the new count at once, so the stored count is always current without the
  background timers that would keep a virtual clock from ever going idle. An entry idle for more than
  ``finishTime`` (6 min) is forgotten, as ``finishSeries`` does.

Recording never fails the caller: the real recorder is asynchronous and only logs write errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakecluster.api.errors import AlreadyExists, ApiError
from fakecluster.api.objects import Obj
from fakecluster.client.protocol import Client
from fakecluster.clock import EPOCH, Clock

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
REPORTING_CONTROLLER = "jobset"
FINISH_TIME = 6 * 60.0
_MAX_NAME_ATTEMPTS = 8
_CACHE_PRUNE_SIZE = 4096
_EPOCH_UNIX_NANOS = int(EPOCH.timestamp()) * 1_000_000_000

EventKey = tuple[str, str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


@dataclass(slots=True)
class _Cached:
    """``eventBroadcasterImpl.eventCache`` entry: the stored event and when it was last observed."""

    name: str
    namespace: str
    last_seen: float
    count: int = 1


@dataclass(slots=True)
class EventRecorder:
    """Writes events.k8s.io/v1 Events about objects through the client protocol."""

    client: Client
    clock: Clock
    reporting_controller: str = REPORTING_CONTROLLER
    hostname: str = "jobset-controller-manager"
    _last_nanos: int = 0
    _cache: dict[EventKey, _Cached] = field(default_factory=dict)

    @property
    def reporting_instance(self) -> str:
        return f"{self.reporting_controller}-{self.hostname}"

    def eventf(  # noqa: PLR0917 - the positional signature of client-go's EventRecorder.Eventf
        self, regarding: Obj, related: Obj | None, event_type: str, reason: str, action: str, note: str
    ) -> None:
        """``EventRecorder.Eventf``: record one event, folding repeats into a series."""
        ref = object_reference(regarding)
        rel = object_reference(related) if related is not None else None
        key: EventKey = (
            action,
            reason,
            self.reporting_controller,
            tuple(ref.items()),
            tuple(rel.items()) if rel else (),
        )
        now = self.clock.now
        cached = self._cache.get(key)
        if cached is not None and now - cached.last_seen <= FINISH_TIME:
            cached.count += 1
            cached.last_seen = now
            self._patch_series(cached)
            return
        body = {"action": action, "reason": reason, "note": note, "type": event_type}
        created = self._create(ref, rel, body)
        if created is not None:
            meta = created["metadata"]
            self._cache[key] = _Cached(meta["name"], meta["namespace"], now)
            if len(self._cache) > _CACHE_PRUNE_SIZE:
                self._finish_series(now)

    def _finish_series(self, now: float) -> None:
        """``finishSeries``: forget entries idle for longer than ``finishTime`` (insertion order)."""
        for stale in [k for k, v in self._cache.items() if now - v.last_seen > FINISH_TIME]:
            del self._cache[stale]

    def _create(self, ref: Obj, rel: Obj | None, body: dict[str, str]) -> Obj | None:
        """Create the event; a name taken by a previous controller process at the same virtual
        nanosecond (impossible on a wall clock) is retried with the next nanosecond."""
        for _ in range(_MAX_NAME_ATTEMPTS):
            try:
                return self.client.create(self._make_event(ref, rel, body))
            except AlreadyExists:
                continue
            except ApiError:
                return None
        return None

    def _patch_series(self, cached: _Cached) -> None:
        series = {"count": cached.count, "lastObservedTime": self.clock.micro_timestamp()}
        try:
            self.client.patch("Event", cached.namespace, cached.name, {"series": series})
        except ApiError:
            return

    def _next_nanos(self) -> int:
        nanos = _EPOCH_UNIX_NANOS + round(self.clock.now * 1_000_000_000)
        if nanos <= self._last_nanos:
            nanos = self._last_nanos + 1
        self._last_nanos = nanos
        return nanos

    def _make_event(self, ref: Obj, related: Obj | None, body: dict[str, str]) -> Obj:
        """``recorderImpl.makeEvent``; ``body`` holds action, reason, note and type."""
        event: Obj = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": f"{ref.get('name', '')}.{self._next_nanos():x}",
                "namespace": ref.get("namespace") or "default",
            },
            "eventTime": self.clock.micro_timestamp(),
            "reportingController": self.reporting_controller,
            "reportingInstance": self.reporting_instance,
            "action": body["action"],
            "reason": body["reason"],
            "regarding": ref,
            "note": body["note"],
            "type": body["type"],
        }
        if related is not None:
            event["related"] = related
        return event


def object_reference(obj: Obj) -> Obj:
    """``reference.GetReference``: the ``corev1.ObjectReference`` fields in their JSON order."""
    meta = obj.get("metadata") or {}
    ref: Obj = {"kind": obj.get("kind", "")}
    for out_key, value in (
        ("namespace", meta.get("namespace")),
        ("name", meta.get("name")),
        ("uid", meta.get("uid")),
        ("apiVersion", obj.get("apiVersion")),
        ("resourceVersion", meta.get("resourceVersion")),
    ):
        if value:
            ref[out_key] = value
    return ref
