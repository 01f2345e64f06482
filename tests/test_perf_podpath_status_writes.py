"""The status subresource's own path in the write path (``WritePath._update_status``): it calls a kind's
status checks only when the kind has some, and writes ``_next_rv``/``_put`` out. These tests hold it to
what the general update answers: the same stored object, the same resourceVersion bumps and watch
events, a no-op for an unchanged status, and every status check still run where a kind has one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from fakecluster.api import errors
from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj
from fakecluster.apiserver.resources import ResourceType, Strategy
from fakecluster.apiserver.server import WatchEvent
from tests.apiserver_harness import make_server, pod, widget

_ABSENT = object()
STATUS_VALUES = st.one_of(st.none(), st.integers(0, 3), st.text(max_size=3),
                          st.lists(st.integers(0, 3), max_size=2))
STATUSES = st.one_of(st.none(), st.dictionaries(st.sampled_from(["phase", "message", "n"]), STATUS_VALUES,
                                                max_size=3))


def expected_after(stored: Obj, status: Any) -> Obj | None:
    """What a status write of ``status`` stores, the plain way: the stored object with only its status
    replaced (removed for None); None for a no-op (the status as stored)."""
    if (stored.get("status", _ABSENT) if status is None else status) == stored.get("status", _ABSENT) \
            and not (status is None and "status" in stored):
        return None
    new = {k: v for k, v in stored.items() if k != "status"}
    if status is not None:
        new["status"] = status
    return new


@settings(max_examples=60, deadline=None)
@given(first=STATUSES, second=STATUSES, donate=st.booleans())
def test_a_status_write_stores_what_the_plain_rule_says(first: Any, second: Any, donate: bool) -> None:
    _, server = make_server()
    events: list[WatchEvent] = []
    server.watch("Widget", events.append)
    server.create(widget("w"))
    for status in (first, second):
        stored = server.get("Widget", "default", "w")
        rv = int(stored["metadata"]["resourceVersion"])
        before = len(events)
        body = dict(stored, status=status) if status is not None else \
            {k: v for k, v in stored.items() if k != "status"}
        written = server._writes.update(body, subresource="status", donate=donate)
        expected = expected_after(stored, status)
        now = server.get("Widget", "default", "w")
        assert written is now
        if expected is None:
            assert now is stored and len(events) == before
            continue
        assert int(now["metadata"]["resourceVersion"]) == rv + 1
        assert {k: v for k, v in now.items() if k != "metadata"} == \
            {k: v for k, v in expected.items() if k != "metadata"}
        assert {k: v for k, v in now["metadata"].items() if k != "resourceVersion"} == \
            {k: v for k, v in stored["metadata"].items() if k != "resourceVersion"}
        assert [(e.type, e.object, e.old) for e in events[before:]] == [("MODIFIED", now, stored)]


class _ShortStatus(BaseModel):
    model_config = ConfigDict(extra="forbid")
    phase: str | None = None


class _NoShrinking(Strategy):
    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        phase, old_phase = (new.get("status") or {}).get("phase"), (old.get("status") or {}).get("phase")
        if len(phase or "") < len(old_phase or ""):
            return [FieldError.invalid("status.phase", new["status"]["phase"], "may not get shorter")]
        return []


@pytest.mark.parametrize("rtype", [
    ResourceType("Gadget", "example.com/v1", "gadgets", status_model=_ShortStatus),
    ResourceType("Gadget", "example.com/v1", "gadgets", strategy=_NoShrinking()),
])
def test_a_kinds_status_checks_still_run(rtype: ResourceType) -> None:
    _, server = make_server()
    server.register(rtype)
    created = server.create({"apiVersion": "example.com/v1", "kind": "Gadget",
                             "metadata": {"name": "g", "namespace": "default"}})
    ok = server.update(dict(created, status={"phase": "Long"}), subresource="status", donate=True)
    bad = {"phase": 5} if rtype.status_model is not None else {"phase": "S"}
    with pytest.raises(errors.ApiError) as caught:
        server.update(dict(ok, status=bad), subresource="status", donate=True)
    assert caught.value.code == 422
    assert "status.phase" in caught.value.message
    assert server.get("Gadget", "default", "g") is ok


def test_a_pods_status_write_without_a_change_is_a_no_op() -> None:
    _, server = make_server()
    created = server.create(pod("p"))
    events: list[WatchEvent] = []
    server.watch("Pod", events.append)
    assert server.update(dict(created), subresource="status", donate=True) is created
    assert server.writes == 1 and not events
