"""Whether a pod's tolerations tolerate a node's taints: the one matcher the scheduler and the
taint-eviction controller share, on wire-form (dict) tolerations and taints.

Twin of ``Toleration.ToleratesTaint`` (``k8s.io/api/core/v1/toleration.go``) and of the helpers
``TolerationsTolerateTaint`` and ``GetMatchingTolerations`` (``pkg/apis/core/v1/helper/helpers.go``) that
the TaintToleration plugin (``pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go``) and
``pkg/controller/tainteviction/taint_eviction.go`` call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from fakecluster.api.objects import Obj

__all__ = ["MatchingTolerations", "matching_tolerations", "tolerates_taint", "tolerations_tolerate_taint"]


def tolerates_taint(toleration: Obj, taint: Obj) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an empty key (only valid with
    ``Exists``) every key; operator ``Exists`` ignores the value, ``Equal`` (also the empty operator)
    compares it. The ``Gt``/``Lt`` operators of newer releases (feature gate
    ``TaintTolerationComparisonOperators``) are not modelled: the release-1.34 schema (``Toleration`` in
    :mod:`fakecluster.api.core`) rejects them, and any other operator tolerates nothing."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key")
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def tolerations_tolerate_taint(tolerations: Iterable[Obj], taint: Obj) -> bool:
    """``TolerationsTolerateTaint``: some toleration tolerates ``taint``."""
    return any(tolerates_taint(t, taint) for t in tolerations)


class MatchingTolerations(NamedTuple):
    """What ``GetMatchingTolerations`` returns."""

    all_tolerated: bool
    used: list[Obj]
    """The first toleration that tolerates each taint, in taint order (empty unless all are tolerated)."""


def matching_tolerations(taints: Sequence[Obj], tolerations: Sequence[Obj]) -> MatchingTolerations:
    """``GetMatchingTolerations``: whether every taint is tolerated, and the first toleration per taint."""
    used = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates_taint(t, taint)), None)
        if match is None:
            return MatchingTolerations(False, [])
        used.append(match)
    return MatchingTolerations(True, used)
