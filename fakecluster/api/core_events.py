"""core/v1 ``Event`` and ``ObjectReference`` (k8s.io/api/core/v1/types.go, release-1.34).

client-go's legacy recorder (``record.EventRecorder``, used by the Job controller) writes core/v1
Events; the JobSet controller's recorder (``events.EventRecorder``) writes events.k8s.io/v1 Events, see
:mod:`fakecluster.api.events`. Both shapes are stored so scenarios can assert on either.
"""

from fakecluster.api.base import Int32, K8sModel, MicroTime, Time
from fakecluster.api.meta import TopLevelObject

__all__ = ["Event", "EventSeries", "EventSource", "ObjectReference"]


class ObjectReference(K8sModel):
    """``corev1.ObjectReference``: the object an Event is about (``involvedObject`` / ``regarding``)."""

    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class EventSource(K8sModel, defer_build=True):
    """``corev1.EventSource`` (``source.component`` such as ``job-controller``)."""

    component: str | None = None
    host: str | None = None


class EventSeries(K8sModel, defer_build=True):
    """``corev1.EventSeries``: how often an isomorphic event recurred (new-style deduplication)."""

    count: Int32 | None = None
    last_observed_time: MicroTime | None = None


class Event(TopLevelObject, defer_build=True):
    """``corev1.Event`` (API group ``""``, version ``v1``).

    ``involvedObject`` is required: an event about nothing cannot be listed by ``kubectl describe``.
    ``count``/``firstTimestamp``/``lastTimestamp`` are the legacy deduplication fields that the
    client-go correlator bumps when the same (reason, message) repeats.
    """

    involved_object: ObjectReference
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    count: Int32 | None = None
    type: str | None = None
    event_time: MicroTime | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
