"""Tests for :mod:`jobset.controller.startup_policy`, mirroring upstream ``startup_policy_test.go``
plus the InProgress/Completed condition flip the InOrder loop relies on."""

from __future__ import annotations

import pytest

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import StatusUpdate
from jobset.controller.startup_policy import (
    all_replicas_started,
    in_order_startup_policy,
    set_in_order_startup_policy_completed_condition,
    set_in_order_startup_policy_in_progress_condition,
)

T0 = "2025-01-01T00:00:00Z"
T1 = "2025-01-01T00:00:09Z"


@pytest.mark.parametrize(
    ("startup_policy", "expected"),
    [
        pytest.param({"startupPolicyOrder": "AnyOrder"}, False, id="startup policy AnyOrder"),
        pytest.param({"startupPolicyOrder": "InOrder"}, True, id="startup policy InOrder"),
        pytest.param(None, False, id="nil startup policy"),
    ],
)
def test_in_order_startup_policy(startup_policy: Obj | None, expected: bool) -> None:
    assert in_order_startup_policy(startup_policy) is expected


def _status(ready: int = 0, succeeded: int = 0, failed: int = 0, active: int = 0) -> Obj:
    return {
        "name": "test",
        "ready": ready,
        "succeeded": succeeded,
        "failed": failed,
        "active": active,
        "suspended": 0,
    }


@pytest.mark.parametrize(
    ("replicas", "status", "expected"),
    [
        pytest.param(1, {}, False, id="replicas 1; no replicatedJobStatus"),
        pytest.param(4, _status(ready=4), True, id="replicas 4; all ready"),
        pytest.param(
            4, _status(ready=2, succeeded=1, failed=1), True, id="replicas 4; mix of ready, failed, succeeded"
        ),
        pytest.param(4, _status(active=4), False, id="replicas 4; all active"),
        pytest.param(4, _status(ready=5), False, id="replicas 4; more started than replicas is not equal"),
        pytest.param(0, None, True, id="replicas 0; missing status reads as zeros"),
    ],
)
def test_all_replicas_started(replicas: int, status: Obj | None, expected: bool) -> None:
    assert all_replicas_started(replicas, status) is expected


IN_PROGRESS = ("InOrderStartupPolicyInProgress", "in order startup policy is in progress")  # reason, message
COMPLETED = ("InOrderStartupPolicyCompleted", "in order startup policy has completed")


def _condition(kind: str, status: str, time: str, reason: str, message: str) -> Obj:
    return {"type": kind, "status": status, "lastTransitionTime": time, "reason": reason, "message": message}


def test_in_progress_then_completed_flips_in_progress_to_false_keeping_its_fields() -> None:
    js: Obj = {"metadata": {"name": "js"}, "status": {}}
    first = StatusUpdate(now=T0)
    set_in_order_startup_policy_in_progress_condition(js, first)
    in_progress = _condition(api.JOBSET_STARTUP_POLICY_IN_PROGRESS, "True", T0, *IN_PROGRESS)
    assert js["status"]["conditions"] == [in_progress]
    assert first.should_update
    assert [(e.event_type, e.reason, e.message) for e in first.events] == [("Normal", *IN_PROGRESS)]

    again = StatusUpdate(now=T1)
    set_in_order_startup_policy_in_progress_condition(js, again)
    assert not again.should_update
    assert again.events == []

    done = StatusUpdate(now=T1)
    set_in_order_startup_policy_completed_condition(js, done)
    assert js["status"]["conditions"] == [
        {**in_progress, "status": "False"},
        _condition(api.JOBSET_STARTUP_POLICY_COMPLETED, "True", T1, *COMPLETED),
    ]
    assert [e.reason for e in done.events] == [COMPLETED[0]]
