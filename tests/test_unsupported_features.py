"""JobSet features the fake refuses instead of ignoring (``jobset/webhooks/unsupported.py``)."""

from __future__ import annotations

from fakecluster.api.objects import Obj
from jobset.features import FeatureGates
from jobset.webhooks.unsupported import IN_PLACE_RESTART_UNSUPPORTED, unsupported_features


def js(strategy: str | None) -> Obj:
    policy = {} if strategy is None else {"failurePolicy": {"restartStrategy": strategy}}
    return {"spec": {"replicatedJobs": [], **policy}}


def test_in_place_restart_is_refused_only_with_the_gate_on() -> None:
    on = FeatureGates(in_place_restart=True)
    errs = unsupported_features(js("InPlaceRestart"), on)
    assert [str(e) for e in errs] == [
        f"spec.failurePolicy.restartStrategy: Forbidden: {IN_PLACE_RESTART_UNSUPPORTED}"]
    # Gate off: upstream's own webhook already refuses the strategy with its gate message.
    assert unsupported_features(js("InPlaceRestart"), FeatureGates()) == []
    for strategy in (None, "Recreate", "BlockingRecreate"):
        assert unsupported_features(js(strategy), on) == []
