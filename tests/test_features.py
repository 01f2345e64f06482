"""JobSet feature gates (jobset/features.py, upstream ``pkg/features/features.go``): defaults and the
errors for unknown, locked and non-boolean gates."""

from __future__ import annotations

from typing import Any

import pytest

from jobset.features import FeatureGates


# --------------------------------------------------------------------------------------- feature gates
def test_feature_gates_have_upstream_defaults() -> None:
    assert FeatureGates().as_dict() == {
        "InPlaceRestart": False,
        "TLSOptions": True,
        "RestartJob": False,
        "ElasticJobSet": False,
    }
    gates = FeatureGates.from_dict({"RestartJob": True, "ElasticJobSet": True})
    assert gates.restart_job and gates.elastic_jobset and not gates.in_place_restart
    assert gates.enabled("RestartJob")


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ({"RestartJobs": True}, "unrecognized feature gate: RestartJobs"),
        ({"TLSOptions": False}, "cannot set feature gate TLSOptions to false, feature is locked to true"),
        ({"RestartJob": "yes"}, "invalid value of RestartJob"),
    ],
)
def test_feature_gates_reject_unknown_locked_and_non_boolean(gates: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FeatureGates.from_dict(gates)
