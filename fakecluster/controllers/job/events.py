"""The Job controller's event recorder, with client-go's event correlator (``tools/record/events_cache.go``).

``job_controller.go`` records through ``record.NewBroadcaster``: every event passes the
``EventCorrelator`` before it is written, and that is what keeps a Job of thousands of pods from writing
thousands of ``SuccessfulCreate`` events:

1. aggregation (``EventAggregator``, 10 distinct messages per 10 minutes): events that differ only in their
   message (same source, regarding object, type and reason) are written one by one until ten distinct
   messages were seen within ``defaultAggregateIntervalInSeconds`` (600 s); from then on they become one
   ``(combined from similar events): <message>`` event whose count grows;
2. de-duplication (``eventLogger``): an event seen before under the same key patches the stored one
   (``count``, ``lastTimestamp``, message) instead of creating a new object;
3. the spam filter (``EventSourceObjectSpamFilter``): per source and regarding object a token bucket of
   25, refilled one token per 5 minutes; an event without a token is dropped (after steps 1-2 updated
   their caches, as upstream).

The kubelet records through the same broadcaster (:mod:`fakecluster.kubelet.events`): the recorder takes
the ``component`` and, per event, the source ``host`` and the regarding object's ``fieldPath`` (a
container: ``spec.containers{name}``), which are part of every key above, as in ``getEventKey``.

Events are written as events.k8s.io/v1 objects (``deprecatedCount``, ``deprecatedFirstTimestamp``, ...),
like the rest of this fake's Job events, named ``<job>.<unix nanos in hex>``. Recording never fails a
sync: the real broadcaster is asynchronous and only logs write errors.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fakecluster.api.errors import AlreadyExists, ApiError
from fakecluster.api.objects import Obj
from fakecluster.client.protocol import Client
from fakecluster.clock import EPOCH, Clock

__all__ = ["JobEventRecorder"]

COMPONENT = "job-controller"
_MAX_NAME_ATTEMPTS = 8
MAX_LRU_CACHE_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
"""``defaultAggregateMaxEvents``."""
AGGREGATE_INTERVAL = 600.0
"""``defaultAggregateIntervalInSeconds``."""
SPAM_BURST = 25
"""``defaultSpamBurst``."""
SPAM_QPS = 1.0 / 300.0
"""``defaultSpamQPS``: one token per 5 minutes."""
COMBINED_PREFIX = "(combined from similar events): "
POD_CONTROL_REASONS = frozenset({"SuccessfulCreate", "FailedCreate", "SuccessfulDelete", "FailedDelete"})
"""The pod-control events (``controller_utils.go``) added after the Job-level ones; their uids come from a
stream of their own (``Cluster``), so they shift no other object's uid or generated name."""
_UNIX_NANOS_AT_EPOCH = int((EPOCH - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()) * 10**9


@dataclass(slots=True)
class _Aggregate:
    messages: dict[str, None] = field(default_factory=dict)
    last: float = 0.0


@dataclass(slots=True)
class _Observed:
    name: str
    count: int
    first_timestamp: str


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class JobEventRecorder:
    """``recorder.Eventf(job, type, reason, message)`` behind the correlator."""

    def __init__(self, client: Client, clock: Clock, *, component: str = COMPONENT) -> None:
        self._client = client
        self._clock = clock
        self._component = component
        self._aggregates: dict[tuple[str, ...], _Aggregate] = {}
        self._observed: dict[tuple[str, ...], _Observed] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._last_stamp = 0

    def event(self, job: Obj, event_type: str, reason: str, message: str, *, host: str = "",
              field_path: str = "") -> None:
        meta = job["metadata"]
        uid = meta.get("uid", "")
        now = self._clock.now
        aggregate_key = (host, uid, field_path, event_type, reason)
        record = self._aggregates.get(aggregate_key)
        if record is None or now - record.last > AGGREGATE_INTERVAL:
            record = self._aggregates[aggregate_key] = _Aggregate()
        record.last = now
        record.messages[message] = None
        key: tuple[str, ...] = (*aggregate_key, message)
        if len(record.messages) >= AGGREGATE_MAX_EVENTS:
            del record.messages[next(iter(record.messages))]  # PopAny: keep the set at its bound
            key, message = aggregate_key, COMBINED_PREFIX + message
        observed = self._observed.get(key)
        if observed is not None:
            observed.count += 1
        else:
            observed = _Observed(self._new_name(meta["name"]), 1, self._clock.timestamp())
            self._observed[key] = observed
            if len(self._observed) > MAX_LRU_CACHE_ENTRIES:
                del self._observed[next(iter(self._observed))]
        if not self._take_token(uid, now):
            return
        self._write(job, event_type, reason, message, observed, host, field_path)

    def _take_token(self, uid: str, now: float) -> bool:
        """``tokenBucketPassiveRateLimiter.TryAccept`` for the regarding object."""
        bucket = self._buckets.get(uid)
        if bucket is None:
            bucket = self._buckets[uid] = _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.at) * SPAM_QPS)
        bucket.at = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _new_name(self, job_name: str) -> str:
        stamp = max(_UNIX_NANOS_AT_EPOCH + round(self._clock.now * 1e9), self._last_stamp + 1)
        self._last_stamp = stamp
        return f"{job_name}.{stamp:x}"

    def _write(  # noqa: PLR0917 - the fields of one event
        self, job: Obj, event_type: str, reason: str, message: str, observed: _Observed, host: str,
        field_path: str,
    ) -> None:
        meta = job["metadata"]
        namespace = meta.get("namespace", "")
        now = self._clock.timestamp()
        regarding = {"apiVersion": job.get("apiVersion", "batch/v1"), "kind": job.get("kind", "Job"),
                     "namespace": namespace, "name": meta["name"], "uid": meta.get("uid", ""),
                     "resourceVersion": meta.get("resourceVersion", "")}
        if field_path:
            regarding["fieldPath"] = field_path
        source = {"component": self._component, "host": host} if host else {"component": self._component}
        if observed.count > 1:
            patch = {"deprecatedCount": observed.count, "deprecatedLastTimestamp": now, "note": message}
            with contextlib.suppress(ApiError):  # the broadcaster only logs
                self._client.patch("Event", namespace, observed.name, patch)
            return
        event: Obj = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"namespace": namespace, "name": observed.name},
            "eventTime": self._clock.micro_timestamp(),
            "reportingController": self._component,
            "reportingInstance": host or self._component,
            "reason": reason,
            "regarding": regarding,
            "note": message,
            "type": event_type,
            "deprecatedSource": source,
            "deprecatedFirstTimestamp": observed.first_timestamp,
            "deprecatedLastTimestamp": now,
            "deprecatedCount": 1,
        }
        for _ in range(_MAX_NAME_ATTEMPTS):
            try:
                self._client.create(event)
            except AlreadyExists:
                # Another recorder about the same object (the scheduler, for a pod) took this virtual
                # nanosecond; on a wall clock their stamps differ. Take the next one.
                observed.name = self._new_name(meta["name"])
                event["metadata"] = {"namespace": namespace, "name": observed.name}
                continue
            except ApiError:
                return  # the broadcaster only logs
            return
