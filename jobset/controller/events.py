"""The JobSet controller's event recorder: client-go's ``events.EventRecorder`` with ``reportingController``
``jobset`` (:mod:`fakecluster.client.events`, shared with the scheduler; re-exported under the name the
controller's modules import it by).
"""

from fakecluster.client.events import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    REPORTING_CONTROLLER,
    EventRecorder,
    object_reference,
)

__all__ = [
    "EVENT_TYPE_NORMAL", "EVENT_TYPE_WARNING", "REPORTING_CONTROLLER", "EventRecorder", "object_reference",
]
