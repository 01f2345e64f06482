"""``rejected:`` on an action: the write must be refused by the API server, with a message substring."""

from __future__ import annotations

import copy
from pathlib import Path

from fakecluster.scenario.runner import run_scenario
from tests.test_runner import JOBSET, assert_passed, scenario

IMMUTABLE = 'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "js" is invalid: ' \
    "spec.replicatedJobs: Invalid value"
_RJOBS = copy.deepcopy(JOBSET["spec"]["replicatedJobs"])
_RJOBS[0]["replicas"] = 3
SCALE = {"jobset": "js", "merge": {"spec": {"replicatedJobs": _RJOBS}}}


def test_a_refused_action_with_the_expected_message_passes(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "5s", "patch": SCALE, "rejected": {"message": IMMUTABLE}}])
    assert_passed(run_scenario(path))


def test_an_accepted_action_that_should_be_refused_fails_the_scenario(tmp_path: Path) -> None:
    ttl = {"jobset": "js", "merge": {"spec": {"ttlSecondsAfterFinished": 30}}}
    path = scenario(tmp_path, actions=[{"at": "5s", "patch": ttl, "rejected": {"message": "anything"}}])
    outcome = run_scenario(path)
    assert not outcome.passed
    assert any("actions[0] patch at 5s: expected the API server to refuse it (a message containing "
               "'anything'), but it was accepted" in f for f in outcome.failures)


def test_a_refusal_with_another_message_fails_the_scenario(tmp_path: Path) -> None:
    path = scenario(tmp_path, actions=[{"at": "5s", "patch": SCALE, "rejected": {"message": "no such text"}}])
    outcome = run_scenario(path)
    assert not outcome.passed
    assert any("refused as expected, but the message" in f and "'no such text'" in f
               for f in outcome.failures)
