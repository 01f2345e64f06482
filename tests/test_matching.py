"""Subset matching (``fakecluster/scenario/matching.py``), here its ``{exactly: [...]}`` form: the same
items in the same order and nothing else, each item still a subset."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.matching import subset_match
from fakecluster.scenario.runner import run_scenario
from tests.test_ordinals import load_and_check
from tests.test_runner import assert_passed, scenario

CONDITIONS = [{"type": "StartupPolicyCompleted", "status": "True"}, {"type": "Completed", "status": "True",
                                                                     "reason": "AllJobsCompleted"}]


def test_exactly_passes_on_the_same_items_in_order() -> None:
    want = {"exactly": [{"type": "StartupPolicyCompleted"},
                        {"type": "Completed", "reason": "AllJobsCompleted"}]}
    assert subset_match({"conditions": want}, {"conditions": CONDITIONS}) == []


def test_exactly_names_extra_missing_and_misplaced_items() -> None:
    one = {"conditions": {"exactly": [{"type": "Completed"}]}}
    assert subset_match(one, {"conditions": CONDITIONS}) == [
        "conditions: expected exactly 1 item(s) [Completed], got 2: [StartupPolicyCompleted, Completed]"]
    swapped = {"conditions": {"exactly": [{"type": "Completed"}, {"type": "StartupPolicyCompleted"}]}}
    assert subset_match(swapped, {"conditions": CONDITIONS}) == [
        "conditions[0]: expected type 'Completed' here, got [StartupPolicyCompleted, Completed]"
        " in that order",
        "conditions[1]: expected type 'StartupPolicyCompleted' here, got [StartupPolicyCompleted, Completed]"
        " in that order"]
    wrong = {"conditions": {"exactly": [{"type": "StartupPolicyCompleted"},
                                        {"type": "Completed", "reason": "X"}]}}
    assert subset_match(wrong, {"conditions": CONDITIONS}) == [
        "conditions[1].reason: expected 'X', got 'AllJobsCompleted'"]


def test_exactly_empty_matches_an_absent_list_and_unkeyed_items() -> None:
    assert subset_match({"items": {"exactly": []}}, {}) == []
    assert subset_match({"items": {"exactly": [1, 2]}}, {"items": [1, 2]}) == []
    assert subset_match({"items": {"exactly": [{"a": 1}]}}, {"items": [{"a": 1, "b": 2}]}) == []
    assert subset_match({"items": {"exactly": [1]}}, {"items": "x"}) == ["items: expected a list, got 'x'"]


def test_exactly_in_a_scenario_and_schema_checked(tmp_path: Path) -> None:
    status = {"replicatedJobsStatus": {"exactly": [{"name": "w", "succeeded": 2}]},
              "conditions": {"exactly": [{"type": "Completed", "status": "True"}]}}
    assert_passed(run_scenario(scenario(tmp_path, expect=[{"final": {"jobset": {"status": status}}}])))
    typo = {"replicatedJobsStatus": {"exactly": [{"name": "w", "succeded": 2}]}}
    with pytest.raises(ScenarioError) as err:
        load_and_check(scenario(tmp_path, name="typo", expect=[{"final": {"jobset": {"status": typo}}}]))
    assert "replicatedJobsStatus.exactly[0].succeded: unknown key 'succeded'" in str(err.value)
    assert "did you mean 'succeeded'" in str(err.value)
