"""JobSet defaulting (jobset/webhooks/jobset_webhook/defaulting.py): the ``TestJobSetDefaulting`` table of
upstream ``pkg/webhooks/jobset_webhook_test.go``, same cases, same expected objects."""

from __future__ import annotations

from typing import Any

import pytest
from jobset_webhook_harness import NETWORK, POD_TEMPLATE

from fakecluster.api.objects import Obj, clone
from jobset.webhooks import (
    default_jobset,
)

# ------------------------------------------------------------------------------------------ defaulting
NEVER_POD = {
    "spec": {"restartPolicy": "Never", "containers": [{"name": "test-container", "image": "busybox:latest"}]}
}


def _default_case(spec_in: Obj, spec_want: Obj) -> tuple[Obj, Obj]:
    return {"spec": spec_in}, {"spec": spec_want}


def _rj(pod: Obj = NEVER_POD, **job_spec: Any) -> Obj:
    return {"template": {"spec": {"template": clone(pod), **job_spec}}}


BASE = {
    "successPolicy": {"operator": "All"},
    "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
    "network": NETWORK,
}
DEFAULTING_CASES = {
    "job completion mode is unset": _default_case(
        {**BASE, "replicatedJobs": [_rj()]}, {**BASE, "replicatedJobs": [_rj(completionMode="Indexed")]}
    ),
    "job completion mode is set to non-indexed": _default_case(
        {
            "successPolicy": {"operator": "All"},
            "network": NETWORK,
            "replicatedJobs": [_rj(completionMode="NonIndexed")],
        },
        {**BASE, "replicatedJobs": [_rj(completionMode="NonIndexed")]},
    ),
    "enableDNSHostnames is unset": _default_case(
        {**BASE, "network": {}, "replicatedJobs": [_rj(completionMode="Indexed")]},
        {**BASE, "replicatedJobs": [_rj(completionMode="Indexed")]},
    ),
    "enableDNSHostnames is false": _default_case(
        {**BASE, "network": {"enableDNSHostnames": False}, "replicatedJobs": [_rj(completionMode="Indexed")]},
        {
            **BASE,
            "network": {"enableDNSHostnames": False, "publishNotReadyAddresses": True},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "PublishNotReadyNetworkAddresess is false": _default_case(
        {
            **BASE,
            "network": {"publishNotReadyAddresses": False},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {
            **BASE,
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": False},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "PublishNotReadyNetworkAddresess is true": _default_case(
        {
            **BASE,
            "network": {"enableDNSHostnames": False, "publishNotReadyAddresses": True},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {
            **BASE,
            "network": {"enableDNSHostnames": False, "publishNotReadyAddresses": True},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "pod restart policy unset": _default_case(
        {**BASE, "replicatedJobs": [_rj(POD_TEMPLATE, completionMode="Indexed")]},
        {
            **BASE,
            "replicatedJobs": [
                _rj(
                    {"spec": {**POD_TEMPLATE["spec"], "restartPolicy": "OnFailure"}}, completionMode="Indexed"
                )
            ],
        },
    ),
    "pod restart policy set": _default_case(
        {**BASE, "replicatedJobs": [_rj({"spec": {"restartPolicy": "Always"}}, completionMode="Indexed")]},
        {**BASE, "replicatedJobs": [_rj({"spec": {"restartPolicy": "Always"}}, completionMode="Indexed")]},
    ),
    "success policy unset": _default_case(
        {
            "startupPolicy": BASE["startupPolicy"],
            "network": NETWORK,
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {**BASE, "replicatedJobs": [_rj(completionMode="Indexed")]},
    ),
    "success policy operator set, replicatedJobNames unset": _default_case(
        {**BASE, "successPolicy": {"operator": "Any"}, "replicatedJobs": [_rj(completionMode="Indexed")]},
        {**BASE, "successPolicy": {"operator": "Any"}, "replicatedJobs": [_rj(completionMode="Indexed")]},
    ),
    "startup policy order InOrder set": _default_case(
        {
            **BASE,
            "startupPolicy": {"startupPolicyOrder": "InOrder"},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {
            **BASE,
            "startupPolicy": {"startupPolicyOrder": "InOrder"},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "managedBy field is left nil": _default_case(
        {**BASE, "replicatedJobs": [_rj(completionMode="Indexed")]},
        {**BASE, "replicatedJobs": [_rj(completionMode="Indexed")]},
    ),
    "when provided, managedBy field is preserved": _default_case(
        {**BASE, "managedBy": "other-controller", "replicatedJobs": [_rj(completionMode="Indexed")]},
        {**BASE, "managedBy": "other-controller", "replicatedJobs": [_rj(completionMode="Indexed")]},
    ),
    "failure policy rule name is defaulted when: there is one rule without a name": _default_case(
        {**BASE, "failurePolicy": {"rules": [{}]}, "replicatedJobs": [_rj(completionMode="Indexed")]},
        {
            **BASE,
            "failurePolicy": {"rules": [{"name": "failurePolicyRule0"}]},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "failure policy rule name is defaulted when: the second of two rules has no name": _default_case(
        {
            **BASE,
            "failurePolicy": {"rules": [{"name": "ruleWithAName"}, {}]},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {
            **BASE,
            "failurePolicy": {"rules": [{"name": "ruleWithAName"}, {"name": "failurePolicyRule1"}]},
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
    "volumeClaimPolicy retentionPolicy is defaulted to Delete when nil": _default_case(
        {
            **BASE,
            "volumeClaimPolicies": [{"templates": [{"metadata": {"name": "test-volume"}}]}],
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
        {
            **BASE,
            "volumeClaimPolicies": [
                {
                    "templates": [{"metadata": {"name": "test-volume"}}],
                    "retentionPolicy": {"whenDeleted": "Delete"},
                }
            ],
            "replicatedJobs": [_rj(completionMode="Indexed")],
        },
    ),
}


@pytest.mark.parametrize(("given", "want"), DEFAULTING_CASES.values(), ids=DEFAULTING_CASES.keys())
def test_default_jobset_matches_upstream_table(given: Obj, want: Obj) -> None:
    before = clone(given)
    assert default_jobset(given) == want
    assert given == before, "default_jobset must not mutate its input"


def test_default_jobset_leaves_subdomain_and_crd_defaulted_fields_alone() -> None:
    out = default_jobset({"spec": {"network": {"subdomain": "sub"}, "replicatedJobs": [{"name": "a"}]}})
    assert out["spec"]["network"] == {
        "subdomain": "sub",
        "enableDNSHostnames": True,
        "publishNotReadyAddresses": True,
    }
    assert "replicas" not in out["spec"]["replicatedJobs"][0]
    assert "groupName" not in out["spec"]["replicatedJobs"][0]
    assert out["spec"]["replicatedJobs"][0]["template"] == {
        "spec": {"completionMode": "Indexed", "template": {"spec": {"restartPolicy": "OnFailure"}}}
    }
