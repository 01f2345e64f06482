"""``status.wire_status`` in one pass (and with copies of its lists, as the Job controller hands the wire
status over to the API server) must give what the field-by-field form gives (kept here as the
reference), share no list with the status it was made from, and keep the key order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj
from fakecluster.controllers.job.status import wire_status

_OMIT_WHEN_ZERO = ("active", "succeeded", "failed")


def reference_wire_status(status: Obj) -> Obj:
    out = {k: v for k, v in status.items() if v is not None}
    for key in _OMIT_WHEN_ZERO:
        if not out.get(key):
            out.pop(key, None)
    for key in ("conditions", "completedIndexes"):
        if not out.get(key):
            out.pop(key, None)
    uncounted = out.get("uncountedTerminatedPods")
    if uncounted is not None:
        out["uncountedTerminatedPods"] = {k: v for k, v in uncounted.items() if v}
    return out


counts = st.none() | st.integers(0, 3)
uids = st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)
fields: dict[str, Any] = {
    "active": counts, "ready": counts, "terminating": counts, "succeeded": counts, "failed": counts,
    "startTime": st.none() | st.just("2025-01-01T00:00:00Z"),
    "conditions": st.none() | st.lists(
        st.fixed_dictionaries({"type": st.sampled_from(["Complete", "Failed"])}), max_size=2),
    "completedIndexes": st.none() | st.sampled_from(["", "0", "1-3"]),
    "failedIndexes": st.none() | st.sampled_from(["", "2"]),
    "uncountedTerminatedPods": st.none() | st.fixed_dictionaries({}, optional={"succeeded": uids,
                                                                                "failed": uids}),
}
statuses = st.lists(st.sampled_from(sorted(fields)), unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({k: fields[k] for k in keys}))


@settings(max_examples=500)
@given(statuses)
def test_wire_status_matches_the_reference(status: Obj) -> None:
    wire, reference = wire_status(status), reference_wire_status(status)
    assert wire == reference
    assert list(wire) == list(reference)
    if "conditions" in wire:
        assert wire["conditions"] is not status["conditions"]
    for field, listed in (wire.get("uncountedTerminatedPods") or {}).items():
        assert listed is not status["uncountedTerminatedPods"][field]
