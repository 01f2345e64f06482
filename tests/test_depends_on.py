"""Tests for :mod:`jobset.controller.depends_on`, mirroring upstream ``depends_on_test.go``."""

from __future__ import annotations

import pytest

from fakecluster.api.objects import Obj
from jobset.controller.depends_on import dependency_reached_status

MODEL = "model-initializer"
DATASET = "dataset-initializer"
TRAINER = "trainer-node"


def _rjob(name: str, *deps: tuple[str, str]) -> Obj:
    rjob: Obj = {"name": name, "replicas": 1, "template": {}}
    if deps:
        rjob["dependsOn"] = [{"name": dep, "status": status} for dep, status in deps]
    return rjob


def _st(name: str, ready: int = 0, succeeded: int = 0, failed: int = 0, active: int = 0) -> Obj:
    return {
        "name": name,
        "ready": ready,
        "succeeded": succeeded,
        "failed": failed,
        "suspended": 0,
        "active": active,
    }


BOTH_COMPLETE = _rjob(TRAINER, (MODEL, "Complete"), (DATASET, "Complete"))
BOTH_READY = _rjob(TRAINER, (MODEL, "Ready"), (DATASET, "Ready"))
TWO_EACH = {MODEL: 2, DATASET: 2, TRAINER: 1}  # replicas of each ReplicatedJob
THREE_EACH = {MODEL: 3, DATASET: 3, TRAINER: 1}

CASES = [
    pytest.param(_rjob(MODEL), {MODEL: 1}, [], True, id="ReplicatedJob doesn't have any dependencies"),
    pytest.param(
        _rjob(TRAINER, (MODEL, "Complete")),
        {MODEL: 1, TRAINER: 1},
        [_st("invalid", succeeded=1)],
        False,
        id="status for ReplicatedJob is nil",
    ),
    pytest.param(
        _rjob(TRAINER, (MODEL, "Complete")), {MODEL: 1, TRAINER: 1}, None, False, id="rJobStatuses is nil"
    ),
    pytest.param(BOTH_COMPLETE, TWO_EACH, [_st(MODEL, succeeded=2), _st(DATASET, succeeded=2)], True,
                 id="depends on ReplicatedJob reaches complete status"),
    pytest.param(BOTH_COMPLETE, TWO_EACH, [_st(MODEL, ready=1, succeeded=1), _st(DATASET, succeeded=2)],
                 False, id="one depends on ReplicatedJob doesn't reach complete status"),
    pytest.param(BOTH_COMPLETE, TWO_EACH,
                 [_st(MODEL, ready=1, succeeded=1), _st(DATASET, ready=1, succeeded=1)], False,
                 id="two depends on ReplicatedJob doesn't reach complete status"),
    pytest.param(BOTH_READY, THREE_EACH,
                 [_st(MODEL, ready=1, succeeded=1, failed=1), _st(DATASET, ready=1, succeeded=1, failed=1)],
                 True, id="depends on ReplicatedJob reaches ready status"),
    pytest.param(BOTH_READY, THREE_EACH,
                 [_st(MODEL, ready=2, active=1), _st(DATASET, ready=1, succeeded=1, failed=1)], False,
                 id="one depends on ReplicatedJob doesn't reach ready status"),
    pytest.param(BOTH_READY, THREE_EACH, [_st(MODEL, ready=2, active=1), _st(DATASET, ready=2, active=1)],
                 False, id="two depends on ReplicatedJobs doesn't reach ready status"),
    pytest.param(
        _rjob(TRAINER, (MODEL, "Ready")),
        {TRAINER: 1},
        [_st(MODEL)],
        True,
        id="dependency not yet visited reads as 0 replicas, so 0 started meets it",
    ),
    pytest.param(
        _rjob(TRAINER, (MODEL, "Complete")),
        {MODEL: 2},
        [_st(MODEL, ready=2)],
        False,
        id="Complete ignores ready Jobs",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("rjob", "rjob_replicas", "statuses", "expected"), CASES)
def test_dependency_reached_status(
    rjob: Obj, rjob_replicas: dict[str, int], statuses: list[Obj] | None, expected: bool
) -> None:
    assert dependency_reached_status(rjob, rjob_replicas, statuses) is expected
