"""JobSet features the fake cluster cannot run, refused at admission instead of accepted and ignored.

``failurePolicy.restartStrategy: InPlaceRestart`` (alpha, gate ``InPlaceRestart``) needs
``pkg/controllers/in_place_restart.go`` and a kubelet that restarts a pod's containers in place when
the JobSet bumps its in-place restart attempt. Neither is emulated, so a JobSet using it would run its
first attempt and then never restart: a crash-looping JobSet would run forever instead of failing with
``ReachedMaxRestarts``, and a scenario would pass that fails on a real cluster. With the gate off,
upstream's own validation already refuses the strategy; with it on, this check refuses it too, with a
message that says why: a ``Forbidden`` field error on the failure policy, checked once upstream's
validation (:mod:`jobset.webhooks.jobset_webhook`) has admitted the object, on create and update.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.apiserver.errors import FieldError
from jobset.features import FeatureGates

__all__ = ["IN_PLACE_RESTART_UNSUPPORTED", "unsupported_features"]

IN_PLACE_RESTART_UNSUPPORTED = (
    "InPlaceRestart is not supported by fakecluster: in-place pod restarts (pkg/controllers/"
    "in_place_restart.go and the kubelet side) are not emulated, so the JobSet would never restart; "
    "use Recreate or BlockingRecreate"
)


def unsupported_features(js: Obj, gates: FeatureGates) -> list[FieldError]:
    """Field errors for the features of ``js`` the fake cannot honour (given the gates)."""
    policy = (js.get("spec") or {}).get("failurePolicy") or {}
    if gates.in_place_restart and policy.get("restartStrategy") == "InPlaceRestart":
        return [FieldError.forbidden("spec.failurePolicy.restartStrategy", IN_PLACE_RESTART_UNSUPPORTED)]
    return []
