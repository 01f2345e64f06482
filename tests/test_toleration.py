"""The shared toleration matcher (fakecluster/api/toleration.py) against the cases of upstream
``k8s.io/api/core/v1/toleration_test.go`` (``TestTolerationToleratesTaint``, release-1.34 operators) and
``GetMatchingTolerations`` in ``pkg/apis/core/v1/helper/helpers_test.go``."""

from __future__ import annotations

import pytest

from fakecluster.api.toleration import matching_tolerations, tolerates_taint, tolerations_tolerate_taint

NO_SCHEDULE = "NoSchedule"


@pytest.mark.parametrize(("toleration", "taint", "tolerated"), [
    # same key and effect, Exists, taint without a value
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "effect": NO_SCHEDULE}, True),
    # same key and effect, Exists, taint with a value
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    # empty key with Exists matches every taint of the effect
    ({"key": "", "operator": "Exists", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    # same key, effect and value, Equal
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),
    # same key and effect, different values, Equal
    ({"key": "foo", "operator": "Equal", "value": "value1", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "value2", "effect": NO_SCHEDULE}, False),
    # same key and value, different effects
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE},
     {"key": "foo", "value": "bar", "effect": "NoExecute"}, False),
    # an empty operator means Equal; an empty effect matches every effect
    ({"key": "foo", "value": "bar"}, {"key": "foo", "value": "bar", "effect": "NoExecute"}, True),
    ({"key": "foo"}, {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, False),
    # an operator this release does not know tolerates nothing
    ({"key": "sla", "operator": "Gt", "value": "750"}, {"key": "sla", "value": "950", "effect": NO_SCHEDULE},
     False),
])
def test_toleration_tolerates_taint(toleration: dict[str, str], taint: dict[str, str],
                                    tolerated: bool) -> None:
    assert tolerates_taint(toleration, taint) is tolerated


def test_tolerations_tolerate_taint_needs_one_match() -> None:
    taint = {"key": "dedicated", "value": "gpu", "effect": NO_SCHEDULE}
    assert not tolerations_tolerate_taint([], taint)
    assert not tolerations_tolerate_taint([{"key": "other", "operator": "Exists"}], taint)
    assert tolerations_tolerate_taint([{"key": "other", "operator": "Exists"}, {"operator": "Exists"}], taint)


def test_matching_tolerations_takes_the_first_toleration_per_taint() -> None:
    not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
    unreachable = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
    short = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 10}
    everything = {"operator": "Exists"}
    later = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}
    assert matching_tolerations([], []) == (True, [])
    assert matching_tolerations([not_ready], []) == (False, [])
    result = matching_tolerations([not_ready, unreachable], [short, everything, later])
    assert result.all_tolerated
    assert result.used == [short, everything]
    assert matching_tolerations([not_ready, unreachable], [short]) == (False, [])
