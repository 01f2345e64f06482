"""The JobSet controller's event recorder (jobset/controller/events.py): events.k8s.io/v1 Events named
like client-go's, folded into series, the series ending after its expiry.
"""

from __future__ import annotations

from jobset_harness import Env

from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller import EventRecorder


def test_event_recorder_names_series_and_expiry() -> None:
    env = Env()
    recorder = EventRecorder(env.client, env.clock)
    regarding = {
        "apiVersion": api.API_VERSION,
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "", "uid": "u", "resourceVersion": "7"},
    }
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "first")
    recorder.eventf(regarding, None, "Normal", "Other", "Reconciling", "n")
    env.settle(1)
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "second note, same series")
    first, other = env.client.list("Event", "default")
    unix_nanos = 1735689600 * 10**9
    assert first["metadata"]["name"] == f"js.{unix_nanos:x}"
    assert other["metadata"]["name"] == f"js.{unix_nanos + 1:x}"
    assert first["regarding"] == {
        "kind": "JobSet",
        "name": "js",
        "uid": "u",
        "apiVersion": api.API_VERSION,
        "resourceVersion": "7",
    }
    assert (first["note"], first["eventTime"]) == ("first", "2025-01-01T00:00:00.000000Z")
    assert first["series"] == {"count": 2, "lastObservedTime": "2025-01-01T00:00:01.000000Z"}
    assert first["reportingInstance"] == "jobset-jobset-controller-manager"
    env.settle(6 * 60 + 1)
    recorder.eventf(regarding, None, "Normal", "R", "Reconciling", "after the series ended")
    assert len(env.client.list("Event", "default")) == 3
