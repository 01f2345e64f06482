"""events.k8s.io/v1 ``Event`` (k8s.io/api/events/v1/types.go, release-1.34).

This is the shape the JobSet controller's ``events.EventRecorder`` writes (``regarding`` is the JobSet,
``action`` is ``Reconciling``, ``note`` is the message). The ``deprecated*`` fields mirror the core/v1
legacy fields the API server converts to and from.
"""

from fakecluster.api.base import Int32, K8sModel, MicroTime, Time
from fakecluster.api.core_events import EventSource, ObjectReference
from fakecluster.api.meta import TopLevelObject

__all__ = ["Event", "EventSeries"]


class EventSeries(K8sModel, defer_build=True):
    """``eventsv1.EventSeries``: both fields are required once a series exists."""

    count: Int32
    last_observed_time: MicroTime


class Event(TopLevelObject, defer_build=True):
    """``eventsv1.Event``.

    ``eventTime`` is required: events.k8s.io/v1 validation rejects an event without it, unlike core/v1.
    """

    event_time: MicroTime
    series: EventSeries | None = None
    reporting_controller: str | None = None
    reporting_instance: str | None = None
    action: str | None = None
    reason: str | None = None
    regarding: ObjectReference | None = None
    related: ObjectReference | None = None
    note: str | None = None
    type: str | None = None
    deprecated_source: EventSource | None = None
    deprecated_first_timestamp: Time | None = None
    deprecated_last_timestamp: Time | None = None
    deprecated_count: Int32 | None = None
