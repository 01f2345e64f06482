"""JobSet condition bookkeeping (jobset/controller/conditions.py): ``updateCondition`` and the condition
builders of upstream ``pkg/controllers/jobset_controller.go``, cases from ``jobset_controller_test.go``.
"""

from __future__ import annotations

import pytest
from jobset_harness import T0

from fakecluster.api.objects import Obj
from jobset.controller.conditions import (
    ConditionOpts,
    make_completed_condition_opts,
    make_resumed_condition_opts,
    make_suspended_condition_opts,
    update_condition,
)

# ------------------------------------------------------------------------------------------ conditions
SUSPENDED_TRUE = {
    "type": "Suspended",
    "status": "True",
    "lastTransitionTime": T0,
    "reason": "SuspendedJobs",
    "message": "jobset is suspended",
}


@pytest.mark.parametrize(
    ("existing", "opts", "expected_update", "expected"),
    [
        pytest.param([], None, False, [], id="no existing conditions, not adding conditions"),
        pytest.param(
            [],
            make_completed_condition_opts(),
            True,
            [("Completed", "True", "AllJobsCompleted", "T1")],
            id="no existing conditions, add a condition",
        ),
        pytest.param(
            [],
            make_suspended_condition_opts(),
            True,
            [("Suspended", "True", "SuspendedJobs", "T1")],
            id="suspended",
        ),
        pytest.param(
            [SUSPENDED_TRUE],
            make_resumed_condition_opts(),
            True,
            [("Suspended", "False", "ResumeJobs", "T1")],
            id="resume (update suspended condition in place)",
        ),
        pytest.param([], make_resumed_condition_opts(), False, [], id="a False condition is never added"),
        pytest.param(
            [
                {
                    "type": "Completed",
                    "status": "True",
                    "lastTransitionTime": T0,
                    "reason": "AllJobsCompleted",
                    "message": "jobset completed successfully",
                }
            ],
            make_completed_condition_opts(),
            False,
            [("Completed", "True", "AllJobsCompleted", T0)],
            id="existing conditions, attempt to add duplicate",
        ),
        pytest.param(
            [
                {
                    "type": "RestartingJobSet",
                    "status": "True",
                    "lastTransitionTime": T0,
                    "reason": "DefaultFailurePolicy",
                    "message": "old message",
                }
            ],
            ConditionOpts("Warning", "RestartingJobSet", "True", "NewReason", "new message"),
            True,
            [("RestartingJobSet", "True", "NewReason", T0)],
            id="update reason/message but keep status and lastTransitionTime",
        ),
    ],
)
def test_update_condition(
    existing: list[Obj],
    opts: ConditionOpts | None,
    expected_update: bool,
    expected: list[tuple[str, str, str, str]],
) -> None:
    js: Obj = {"status": {"conditions": [dict(c) for c in existing]}}
    assert update_condition(js, opts, "T1") is expected_update
    got = [(c["type"], c["status"], c["reason"], c["lastTransitionTime"]) for c in js["status"]["conditions"]]
    assert got == expected
