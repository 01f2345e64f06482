"""Tests for :mod:`jobset.webhooks` and :mod:`jobset.features`.

The tables mirror upstream ``pkg/webhooks/jobset_webhook_test.go`` (TestJobSetDefaulting,
TestValidateCreate, TestGetJobSetNameForValidation, TestValidateUpdate): same cases, same expected
messages, checked the way upstream checks them (each expected text is contained in the error). A second
set drives the full API-server path (mutating webhook, schema, CRD strategy, validating webhook) through
:class:`fakecluster.client.LocalClient`, where a denial carries the ``admission webhook ... denied the
request`` prefix; the upstream example manifests must all be accepted and defaulted.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from jobset.features import FeatureGates
from jobset.webhooks import (
    MUTATING_WEBHOOK_NAME,
    VALIDATING_WEBHOOK_NAME,
    default_jobset,
    register,
    validate_create,
    validate_update,
)
from jobset.webhooks.apimachinery import is_domain_prefixed_path
from jobset.webhooks.jobset_webhook.create import job_set_name_for_validation

MAX_INT32 = 2**31 - 1
POD_TEMPLATE = {"spec": {"containers": [{"name": "test", "image": "bash:latest"}]}}
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
REPO = Path(__file__).resolve().parent.parent


def rjob(
    name: str,
    replicas: int | None = 1,
    *,
    group: str | None = "default",
    pod: Obj | None = None,
    depends_on: list[str] | None = None,
    **job_spec: Any,
) -> Obj:
    """A replicated job; ``job_spec`` keys are camelCase JobSpec fields."""
    out: Obj = {"name": name, "template": {"spec": {**job_spec, "template": clone(pod or POD_TEMPLATE)}}}
    if group is not None:
        out["groupName"] = group
    if replicas is not None:
        out["replicas"] = replicas
    if depends_on is not None:
        out["dependsOn"] = [{"name": dep, "status": "Complete"} for dep in depends_on]
    return out


def indexed(count: int) -> dict[str, Any]:
    return {"completionMode": "Indexed", "completions": count, "parallelism": count}


def jobset(*rjobs: Obj, name: str | None = "js", **spec: Any) -> Obj:
    spec.setdefault("successPolicy", {"operator": "All"})
    meta: Obj = {"namespace": "default"}
    if name is not None:
        meta["name"] = name
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": meta,
        "spec": {"replicatedJobs": list(rjobs), **spec},
    }


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


# ------------------------------------------------------------------------------------------ defaulting
NETWORK = {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
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


# ------------------------------------------------------------------------------------ validate create
def _pvc_rjob(name: str, mount: str, *, init: bool = False, volume: bool = False) -> Obj:
    container = {
        "name": "test",
        "image": "bash:latest",
        "volumeMounts": [{"name": mount, "mountPath": "/test/path"}],
    }
    pod: Obj = {"spec": {"initContainers" if init else "containers": [container]}}
    if init:
        pod["spec"]["containers"] = [{"name": "main", "image": "bash:latest"}]
    if volume:
        pod["spec"]["volumes"] = [{"name": mount, "emptyDir": {}}]
    return rjob(name, pod=pod)


PVC_SPEC = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}


def _claims(*names: str, retention: str = "Delete") -> list[Obj]:
    return [
        {
            "templates": [{"metadata": {"name": n}, "spec": PVC_SPEC}],
            "retentionPolicy": {"whenDeleted": retention},
        }
        for n in names
    ]


MANAGED_BY_NOT_DOMAIN = [
    str(e) for e in is_domain_prefixed_path("spec.managedBy", "notDomainPrefixedPathControllerName")
]
RULE_NAME_FORMAT = (
    "invalid failure policy rule name '{}', a failure policy rule name must start with an alphabetic "
    "character, optionally followed by a string of alphanumeric characters or '_,:', and must end "
    "with an alphanumeric character or '_'"
)
RESTART_JOB_REPLICAS = (
    "JobSet cannot have a failure policy rule with RestartJob or RestartJobAndIgnoreMaxRestarts action and a "
    "replicated job with replicas > 1024"
)
RESTART_JOB_GATE = (
    "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob "
    "feature gate is disabled"
)
RULE_LENGTH = (
    "invalid failure policy rule name of length {}, the rule name must be at least 1 characters long and at "
    "most 128 characters long"
)
TOO_MANY_PODS = "the product of replicas and parallelism must not exceed 2147483647 for replicatedJob '{}'"
TERMINAL = "Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)"
IN_PLACE_SPEC = {
    "parallelism": 1,
    "completions": 1,
    "backoffLimit": MAX_INT32,
    "podReplacementPolicy": "Failed",
}
IN_PLACE_POLICY = {"failurePolicy": {"restartStrategy": "InPlaceRestart"}}


def _case(
    js: Obj, *want: str, gates: FeatureGates | None = None, pvcs: dict[str, Obj] | None = None
) -> tuple[Any, ...]:
    return js, list(want), gates or FeatureGates(), pvcs or {}


CREATE_CASES: dict[str, tuple[Any, ...]] = {
    # uncategorizedTests
    "generateName that produces overlong child job names is rejected": _case(
        {**jobset(rjob("worker")), "metadata": {"generateName": "a" * 49 + "-"}},
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
    ),
    "generateName that produces overlong PVC names is rejected": _case(
        {
            **jobset(
                _pvc_rjob("worker", "datasets"),
                volumeClaimPolicies=[{"templates": [{"metadata": {"name": "datasets"}}]}],
            ),
            "metadata": {"generateName": "a" * 49 + "-"},
        },
        "VolumeClaimPolicies template name is too long",
    ),
    "number of pods exceeds the limit": _case(
        jobset(
            rjob("test-jobset-replicated-job-0", MAX_INT32, parallelism=MAX_INT32),
            rjob("test-jobset-replicated-job-1", -(2**31), parallelism=-(2**31)),
        ),
        TOO_MANY_PODS.format("test-jobset-replicated-job-0"),
        TOO_MANY_PODS.format("test-jobset-replicated-job-1"),
    ),
    "number of pods within the limit": _case(jobset(rjob("test-jobset-replicated-job-0"))),
    "success policy has non matching replicated job": _case(
        jobset(
            rjob("test-jobset-replicated-job-0"),
            successPolicy={"operator": "All", "targetReplicatedJobs": ["does not exist"]},
        ),
        "invalid replicatedJob name 'does not exist' does not appear in .spec.ReplicatedJobs",
    ),
    "network has invalid dns name": _case(
        jobset(
            rjob("test-jobset-replicated-job-0"), network={"enableDNSHostnames": True, "subdomain": "a" * 64}
        ),
        ".spec.network.subdomain is too long, must be less than 63 characters",
    ),
    "jobset name with invalid character": _case(jobset(rjob("username.llama65b")), DNS1035_MSG),
    "group name is not DNS 1035 compliant": _case(
        jobset(rjob("rj", group="a" * 64)),
        ".spec.replicatedJob[].groupName is too long, must be less than 63 characters",
    ),
    "jobset name will result in job name being too long": _case(
        jobset(rjob("rj", 101), name="a" * 62),
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
    ),
    "jobset name will result in a pod name being too long": _case(
        jobset(rjob("rj", **indexed(1)), name="a" * 56),
        "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
    ),
    # jobsetControllerNameTests
    "jobset controller name is not a domain-prefixed path": _case(
        jobset(rjob("rj", pod={}, **indexed(1)), managedBy="notDomainPrefixedPathControllerName"),
        *MANAGED_BY_NOT_DOMAIN,
    ),
    "jobset controller name is too long": _case(
        jobset(rjob("rj", pod={}, **indexed(1)), managedBy="foo.bar/" + "a" * 63),
        "spec.managedBy: Too long: may not be more than 63 bytes",
    ),
    "jobset controller name is set and valid": _case(
        jobset(rjob("rj", pod={}, **indexed(1)), managedBy="jobset.sigs.k8s.io/jobset-controller")
    ),
    "jobset controller name is unset": _case(jobset(rjob("rj", pod={}, **indexed(1)))),
    # failurePolicyTests
    "failure policy rule name is valid": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{"name": "superAwesomeFailurePolicyRule"}]})
    ),
    "jobset failure policy has an invalid on job failure reason": _case(
        jobset(
            rjob("rj", **indexed(1)),
            failurePolicy={
                "maxRestarts": 1,
                "rules": [{"action": "FailJobSet", "onJobFailureReasons": ["fakeReason"]}],
            },
        ),
        "invalid job failure reason 'fakeReason' in failure policy is not a recognized job failure reason",
    ),
    "jobset failure policy has an invalid replicated job": _case(
        jobset(
            rjob("rj", **indexed(1)),
            failurePolicy={
                "maxRestarts": 1,
                "rules": [{"action": "FailJobSet", "targetReplicatedJobs": ["fakeReplicatedJob"]}],
            },
        ),
        "invalid replicatedJob name 'fakeReplicatedJob' in failure policy does not appear in "
        ".spec.ReplicatedJobs",
    ),
    "jobset failure policy rule name is 0 characters long a.k.a unset": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{}]}),
        RULE_LENGTH.format(0),
    ),
    "jobset failure policy rule name is greater than 128 characters long": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{"name": "a" * 129}]}),
        RULE_LENGTH.format(129),
    ),
    "there are two failure policy rules with the same name": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{"name": "repeatedRuleName"}] * 2}),
        "rule names are not unique, rules with indices [0 1] all have the same name 'repeatedRuleName'",
    ),
    "failure policy rule name does not start with an alphabetic character": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{"name": "1ruleToRuleThemAll"}]}),
        RULE_NAME_FORMAT.format("1ruleToRuleThemAll"),
    ),
    "failure policy rule name does not end with an alphanumeric nor '_'": _case(
        jobset(rjob("rj", **indexed(1)), failurePolicy={"rules": [{"name": "ruleToRuleThemAll,"}]}),
        RULE_NAME_FORMAT.format("ruleToRuleThemAll,"),
    ),
    "coordinator replicated job does not exist": _case(
        jobset(
            rjob("replicatedjob-a", 2, **indexed(2)),
            rjob("replicatedjob-b", 2, **indexed(2)),
            coordinator={"replicatedJob": "fake-rjob"},
        ),
        "coordinator replicatedJob fake-rjob does not exist",
    ),
    "coordinator replicated job missing completions": _case(
        jobset(
            rjob("replicatedjob-a", 2, completionMode="Indexed", parallelism=2),
            rjob("replicatedjob-b", 2, **indexed(2)),
            coordinator={"replicatedJob": "replicatedjob-a"},
        ),
        "job for coordinator pod must be indexed completion mode, and completions number must be set",
    ),
    "coordinator job index invalid": _case(
        jobset(
            rjob("replicatedjob-a", 2, **indexed(2)),
            rjob("replicatedjob-b", 2, **indexed(2)),
            coordinator={"replicatedJob": "replicatedjob-a", "jobIndex": 2},
        ),
        "coordinator job index 2 is invalid for replicatedJob replicatedjob-a",
    ),
    "coordinator pod index invalid": _case(
        jobset(
            rjob("replicatedjob-a", 2, **indexed(2)),
            rjob("replicatedjob-b", 2, **indexed(2)),
            coordinator={"replicatedJob": "replicatedjob-a", "podIndex": 2},
        ),
        "coordinator pod index 2 is invalid for replicatedJob replicatedjob-a job index 0",
    ),
    "coordinator label value is too long due to long JobSet name": _case(
        jobset(
            rjob("replicatedjob-a", **indexed(1)),
            name="a" * 60,
            coordinator={"replicatedJob": "replicatedjob-a"},
        ),
        "spec will lead to invalid label value",
    ),
    "coordinator label value is too long due to long ReplicatedJob name": _case(
        jobset(rjob("a" * 60, **indexed(1)), name="jobset", coordinator={"replicatedJob": "a" * 60}),
        "spec will lead to invalid label value",
    ),
    "coordinator label value is too long due to long SubDomain": _case(
        jobset(
            rjob("replicatedjob-a", **indexed(1)),
            name="jobset",
            network={"subdomain": "a" * 60},
            coordinator={"replicatedJob": "replicatedjob-a"},
        ),
        "spec will lead to invalid label value",
    ),
    "jobset failure policy rule has RestartJob action and a replicated job with replicas > 1024": _case(
        jobset(
            rjob("rj", 1025, **indexed(1)),
            failurePolicy={"rules": [{"action": "RestartJob", "name": "restartJobRule"}]},
        ),
        RESTART_JOB_REPLICAS,
        gates=FeatureGates(restart_job=True),
    ),
    (
        "jobset failure policy rule has RestartJobAndIgnoreMaxRestarts action and a replicated job with "
        "replicas > 1024"
    ): _case(
        jobset(
            rjob("rj", 1025, **indexed(1)),
            failurePolicy={
                "rules": [
                    {"action": "RestartJobAndIgnoreMaxRestarts", "name": "restartJobAndIgnoreMaxRestartsRule"}
                ]
            },
        ),
        RESTART_JOB_REPLICAS,
        gates=FeatureGates(restart_job=True),
    ),
    "jobset failure policy rule has RestartJob action and RestartJob feature gate is disabled": _case(
        jobset(
            rjob("rj", **indexed(1)),
            failurePolicy={"rules": [{"action": "RestartJob", "name": "restartJobRule"}]},
        ),
        RESTART_JOB_GATE,
    ),
    (
        "jobset failure policy rule has RestartJobAndIgnoreMaxRestarts action and RestartJob feature gate is "
        "disabled"
    ): _case(
        jobset(
            rjob("rj", **indexed(1)),
            failurePolicy={"rules": [{"action": "RestartJobAndIgnoreMaxRestarts", "name": "r"}]},
        ),
        RESTART_JOB_GATE,
    ),
    # dependsOnTests
    "DependsOn is valid since job-2 depends on job-1 and job-3 depends on job-1": _case(
        jobset(rjob("job-1"), rjob("job-2", depends_on=["job-1"]), rjob("job-3", depends_on=["job-1"]))
    ),
    "DependsOn is valid since job-2 depends on job-1 and job-3 depends on job-2": _case(
        jobset(rjob("job-1"), rjob("job-2", depends_on=["job-1"]), rjob("job-3", depends_on=["job-2"]))
    ),
    "DependsOn is valid since job-3 depends on job-1 and job-2": _case(
        jobset(rjob("job-1"), rjob("job-2"), rjob("job-3", depends_on=["job-1", "job-2"]))
    ),
    "DependsOn is invalid since job-2 depends on job-3": _case(
        jobset(rjob("job-1"), rjob("job-2", depends_on=["job-3"]), rjob("job-3", depends_on=["job-1"])),
        "replicatedJob: job-2 cannot depend on replicatedJob: job-3",
    ),
    "DependsOn is invalid since job-2 depends on job-3 and job-1": _case(
        jobset(
            rjob("job-1"), rjob("job-2", depends_on=["job-1", "job-3"]), rjob("job-3", depends_on=["job-1"])
        ),
        "replicatedJob: job-2 cannot depend on replicatedJob: job-3",
    ),
    "job-2 depends on invalid ReplicatedJob": _case(
        jobset(rjob("job-1"), rjob("job-2", depends_on=["invalid"])),
        "replicatedJob: job-2 cannot depend on replicatedJob: invalid",
    ),
    "dependsOn should not fail if there are no replicated jobs": _case(jobset()),
    "dependsOn cannot be set for first replicated job": _case(
        jobset(rjob("job-1", depends_on=["invalid"])), "DependsOn can't be set for the first ReplicatedJob"
    ),
    # volumeClaimPolicyTests
    "volumeClaimPolicy is valid since volume exists in the container": _case(
        jobset(_pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume"))
    ),
    "volumeClaimPolicy is valid since volume exists in the initContainer": _case(
        jobset(
            rjob("job-1"),
            _pvc_rjob("job-2", "test-volume", init=True),
            volumeClaimPolicies=_claims("test-volume"),
        )
    ),
    "volumeClaimPolicy is invalid since template names are not unique": _case(
        jobset(
            _pvc_rjob("job-1", "duplicate-volume"),
            volumeClaimPolicies=[
                *_claims("duplicate-volume"),
                *_claims("duplicate-volume", retention="Retain"),
            ],
        ),
        "names must be unique for VolumeClaimPolicies template",
    ),
    "volumeClaimPolicy is invalid since template name has uppercase letters": _case(
        jobset(_pvc_rjob("job-1", "InvalidVolumeName"), volumeClaimPolicies=_claims("InvalidVolumeName")),
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters",
    ),
    "volumeClaimPolicy is invalid since template name is too long": _case(
        jobset(_pvc_rjob("job-1", "a" * 64), volumeClaimPolicies=_claims("a" * 64)),
        "VolumeClaimPolicies template name is too long",
    ),
    "volumeClaimPolicy is invalid since no matching volumeMount in containers": _case(
        jobset(rjob("job-1"), volumeClaimPolicies=_claims("test-volume")),
        "replicatedJob containers don't have a matching volumeMount",
    ),
    "volumeClaimPolicy is invalid since volume name conflicts with existing volume": _case(
        jobset(
            _pvc_rjob("job-1", "conflicting-volume", volume=True),
            volumeClaimPolicies=_claims("conflicting-volume"),
        ),
        "volume name conflicts with VolumeClaimPolicy template name",
    ),
    "volumeClaimPolicy is valid when existing PVC matches template spec": _case(
        jobset(
            _pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume", retention="Retain")
        ),
        pvcs={"test-volume-js": {"metadata": {"name": "test-volume-js"}, "spec": PVC_SPEC}},
    ),
    "volumeClaimPolicy retention policy must be retain for existing PVC": _case(
        jobset(_pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume")),
        "retentionPolicy must be retain when PVC exist",
        pvcs={"test-volume-js": {"metadata": {"name": "test-volume-js"}, "spec": PVC_SPEC}},
    ),
    "volumeClaimPolicy is invalid when existing PVC does not match template spec": _case(
        jobset(
            _pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume", retention="Retain")
        ),
        "spec does not match existing PVC",
        pvcs={
            "test-volume-js": {
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}
            }
        },
    ),
    # inPlaceRestartTests
    "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled": _case(
        jobset(rjob("job-1"), **IN_PLACE_POLICY),
        "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled",
    ),
    "InPlaceRestart restart strategy can be set when InPlaceRestart feature gate is enabled": _case(
        jobset(rjob("job-1", **IN_PLACE_SPEC), **IN_PLACE_POLICY), gates=FeatureGates(in_place_restart=True)
    ),
    "InPlaceRestart enabled: backoffLimit is not MaxInt32": _case(
        jobset(rjob("job-1", **{**IN_PLACE_SPEC, "backoffLimit": 0}), **IN_PLACE_POLICY),
        "replicatedJob job-1: must be set to 2147483647 (MaxInt32) when in-place restart is enabled",
        gates=FeatureGates(in_place_restart=True),
    ),
    "InPlaceRestart enabled: podReplacementPolicy is not Failed": _case(
        jobset(
            rjob("job-1", **{**IN_PLACE_SPEC, "podReplacementPolicy": "TerminatingOrFailed"}),
            **IN_PLACE_POLICY,
        ),
        "replicatedJob job-1: must be set to Failed when in-place restart is enabled",
        gates=FeatureGates(in_place_restart=True),
    ),
    "InPlaceRestart enabled: completions != parallelism": _case(
        jobset(rjob("job-1", **{**IN_PLACE_SPEC, "completions": 2}), **IN_PLACE_POLICY),
        "replicatedJob job-1: completions and parallelism must be set and equal to each other when in-place "
        "restart is enabled",
        gates=FeatureGates(in_place_restart=True),
    ),
    "InPlaceRestart enabled: completions is nil": _case(
        jobset(
            rjob("job-1", **{k: v for k, v in IN_PLACE_SPEC.items() if k != "completions"}), **IN_PLACE_POLICY
        ),
        "replicatedJob job-1: completions and parallelism must be set and equal to each other when in-place "
        "restart is enabled",
        gates=FeatureGates(in_place_restart=True),
    ),
    "InPlaceRestart enabled: parallelism is nil": _case(
        jobset(
            rjob("job-1", **{k: v for k, v in IN_PLACE_SPEC.items() if k != "parallelism"}), **IN_PLACE_POLICY
        ),
        "replicatedJob job-1: completions and parallelism must be set and equal to each other when in-place "
        "restart is enabled",
        gates=FeatureGates(in_place_restart=True),
    ),
}


@pytest.mark.parametrize(("js", "want", "gates", "pvcs"), CREATE_CASES.values(), ids=CREATE_CASES.keys())
def test_validate_create_matches_upstream_table(
    js: Obj, want: list[str], gates: FeatureGates, pvcs: dict[str, Obj]
) -> None:
    def lookup(namespace: str, name: str) -> Obj | None:
        return pvcs.get(name)

    if not want:
        validate_create(js, gates, random.Random(0), lookup)
        return
    with pytest.raises(ApiError) as caught:
        validate_create(js, gates, random.Random(0), lookup)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    for text in want:
        assert text in caught.value.message


def test_validate_create_message_and_causes_have_upstream_shape() -> None:
    js = jobset(
        rjob("job-1", depends_on=["x"]), successPolicy={"operator": "All", "targetReplicatedJobs": ["nope"]}
    )
    with pytest.raises(ApiError) as caught:
        validate_create(js, FeatureGates(), random.Random(0))
    assert caught.value.message == (
        'JobSet.jobset.x-k8s.io "js" is invalid: ['
        "<nil>: Internal error: DependsOn can't be set for the first ReplicatedJob, "
        "<nil>: Internal error: replicatedJob: job-1 cannot depend on replicatedJob: x, "
        "<nil>: Internal error: invalid replicatedJob name 'nope' does not appear in .spec.ReplicatedJobs]"
    )
    assert [(c.type, c.field) for c in caught.value.causes] == [("Internal", "<nil>")] * 3


def test_validate_create_lists_a_repeated_message_once_but_keeps_every_cause() -> None:
    """ToAggregate drops duplicate texts: a '.' breaks both the job-name and the pod-name check."""
    js = jobset(rjob("a.b", **indexed(1)))
    with pytest.raises(ApiError) as caught:
        validate_create(js, FeatureGates(), random.Random(0))
    assert caught.value.message == (
        'JobSet.jobset.x-k8s.io "js" is invalid: '
        f'spec.replicatedJobs[0].name: Invalid value: "js-a.b-0": {DNS1035_MSG}'
    )
    assert len(caught.value.causes) == 2


def test_validate_create_reports_pvc_lookup_errors_as_internal() -> None:
    def broken(namespace: str, name: str) -> Obj | None:
        raise ApiError(500, "InternalError", "etcd is down")

    js = jobset(_pvc_rjob("job-1", "vol"), volumeClaimPolicies=_claims("vol"))
    with pytest.raises(
        ApiError,
        match=r"spec.volumeClaimPolicies\[0\].template\[0\]: Internal error: "
        "failed to check for existing PVC vol-js: etcd is down",
    ):
        validate_create(js, FeatureGates(), random.Random(0), broken)


def test_job_set_name_for_validation() -> None:
    """TestGetJobSetNameForValidation, plus determinism: the suffix comes from the given rng."""
    assert (
        job_set_name_for_validation({"metadata": {"name": "jobset-name"}}, random.Random(0)) == "jobset-name"
    )
    generated = job_set_name_for_validation({"metadata": {"generateName": "a" * 60}}, random.Random(7))
    assert len(generated) == 63 and generated.startswith("a" * 58)
    assert set(generated[58:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert generated == job_set_name_for_validation(
        {"metadata": {"generateName": "a" * 60}}, random.Random(7)
    )
    assert job_set_name_for_validation({}, random.Random(0)) == ""


# ------------------------------------------------------------------------------------ validate update
def _update_js(
    *rjobs: Obj,
    suspend: bool | None = None,
    managed_by: str | None = None,
    conditions: list[Obj] | None = None,
    labels: dict[str, str] | None = None,
) -> Obj:
    js: Obj = {
        "metadata": {"name": "js", **({"labels": labels} if labels else {})},
        "spec": {"replicatedJobs": list(rjobs)},
    }
    if suspend is not None:
        js["spec"]["suspend"] = suspend
    if managed_by is not None:
        js["spec"]["managedBy"] = managed_by
    if conditions is not None:
        js["status"] = {"conditions": conditions}
    return js


def _urj(
    name: str = "test-jobset-replicated-job-0",
    replicas: int | None = 2,
    pod: Obj | None = None,
    **job_spec: Any,
) -> Obj:
    out: Obj = {"name": name, "template": {"spec": dict(job_spec)}}
    if replicas is not None:
        out["replicas"] = replicas
    if pod is not None:
        out["template"]["spec"]["template"] = pod
    return out


VALID_RJOBS = [
    _urj(replicas=1, parallelism=1),
    _urj("test-jobset-replicated-job-1", replicas=1, parallelism=1),
]
ANNOTATED_POD = {"metadata": {"annotations": {"key": "value"}}}
GATED_POD = {"spec": {"schedulingGates": [{"name": "example.com/gate"}]}}
IMMUTABLE = ["spec.replicatedJobs", "field is immutable"]
UPDATE_CASES: dict[str, tuple[Obj, Obj, list[str], FeatureGates]] = {
    "update suspend": (_update_js(*VALID_RJOBS), _update_js(*VALID_RJOBS, suspend=True), [], FeatureGates()),
    "update labels": (
        _update_js(*VALID_RJOBS, labels={"hello": "world"}),
        _update_js(*VALID_RJOBS, suspend=True),
        [],
        FeatureGates(),
    ),
    "managedBy is immutable": (
        _update_js(*VALID_RJOBS, managed_by="example.com/new"),
        _update_js(*VALID_RJOBS, managed_by="example.com/old"),
        ["spec.managedBy", "field is immutable"],
        FeatureGates(),
    ),
    "replicated job pod template can be updated for suspended jobset": (
        _update_js(_urj(parallelism=2, pod=ANNOTATED_POD)),
        _update_js(_urj(parallelism=2), suspend=True),
        [],
        FeatureGates(),
    ),
    "replicated job pod template can be updated for jobset getting suspended": (
        _update_js(_urj(parallelism=2, pod=ANNOTATED_POD), suspend=True),
        _update_js(_urj(parallelism=2), suspend=False),
        [],
        FeatureGates(),
    ),
    "replicated job pod template cannot be updated for running jobset": (
        _update_js(_urj(parallelism=2, pod=ANNOTATED_POD)),
        _update_js(_urj(parallelism=2)),
        IMMUTABLE,
        FeatureGates(),
    ),
    "schedulingGates for pod template can be updated for suspended JobSet": (
        _update_js(_urj(parallelism=2, pod=GATED_POD)),
        _update_js(_urj(parallelism=2), suspend=True),
        [],
        FeatureGates(),
    ),
    "schedulingGates for pod template cannot be updated for unsuspended JobSet": (
        _update_js(_urj(parallelism=2, pod=GATED_POD)),
        _update_js(_urj(parallelism=2)),
        IMMUTABLE,
        FeatureGates(),
    ),
    "replicated job name cannot be updated": (
        _update_js(_urj("new-replicated-job-name", parallelism=2)),
        _update_js(_urj(parallelism=2), suspend=True),
        IMMUTABLE,
        FeatureGates(),
    ),
    "valid scaling of parallelism and completions": (
        _update_js(_urj(completionMode="Indexed", parallelism=8, completions=8)),
        _update_js(_urj(completionMode="Indexed", parallelism=2, completions=2)),
        [],
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling of parallelism to < 1": (
        _update_js(_urj(replicas=None, completionMode="Indexed", parallelism=0)),
        _update_js(_urj(replicas=None, completionMode="Indexed", parallelism=2)),
        ["spec.replicatedJobs[0].template.spec.parallelism", "parallelism must be >= 1"],
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling of completions to < 1": (
        _update_js(_urj(replicas=None, completionMode="Indexed", completions=0)),
        _update_js(_urj(replicas=None, completionMode="Indexed", completions=2)),
        ["spec.replicatedJobs[0].template.spec.completions", "completions must be >= 1"],
        FeatureGates(elastic_jobset=True),
    ),
    "cannot scale parallelism if JobSet is Completed": (
        _update_js(_urj(replicas=None, completionMode="Indexed", parallelism=4)),
        _update_js(
            _urj(replicas=None, completionMode="Indexed", parallelism=2),
            conditions=[{"type": "Completed", "status": "True"}],
        ),
        [
            "spec.replicatedJobs[0].template.spec",
            TERMINAL,
        ],
        FeatureGates(elastic_jobset=True),
    ),
    "cannot scale completions if JobSet is Failed": (
        _update_js(_urj(replicas=None, completionMode="Indexed", completions=4)),
        _update_js(
            _urj(replicas=None, completionMode="Indexed", completions=2),
            conditions=[{"type": "Failed", "status": "True"}],
        ),
        [
            "spec.replicatedJobs[0].template.spec",
            TERMINAL,
        ],
        FeatureGates(elastic_jobset=True),
    ),
    "immutability still enforced for other fields during valid scale": (
        _update_js(_urj(replicas=2, completionMode="Indexed", parallelism=4)),
        _update_js(_urj(replicas=1, completionMode="Indexed", parallelism=2)),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling of parallelism and completions when feature gate is disabled": (
        _update_js(_urj(parallelism=8, completions=8)),
        _update_js(_urj(parallelism=2, completions=2)),
        IMMUTABLE,
        FeatureGates(),
    ),
    "invalid scaling: parallelism and completions must be equal": (
        _update_js(_urj(completionMode="Indexed", parallelism=4, completions=5)),
        _update_js(_urj(completionMode="Indexed", parallelism=2, completions=2)),
        [
            "spec.replicatedJobs[0].template.spec.completions",
            "completions must be equal to parallelism for Elastic Indexed Jobs",
        ],
        FeatureGates(elastic_jobset=True),
    ),
    "adding a new ReplicatedJob while suspended does not panic and is rejected": (
        _update_js(_urj("job-a"), _urj("job-b"), suspend=True),
        _update_js(_urj("job-a"), suspend=True),
        IMMUTABLE,
        FeatureGates(),
    ),
    "reordering ReplicatedJobs evaluates ElasticJobSet scaling correctly by name": (
        _update_js(_urj("job-b"), _urj("job-a")),
        _update_js(_urj("job-a"), _urj("job-b")),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling: immutability enforced for NonIndexed jobs even when ElasticJobSet is enabled": (
        _update_js(_urj(replicas=1, completionMode="NonIndexed", parallelism=4, completions=4)),
        _update_js(_urj(replicas=1, completionMode="NonIndexed", parallelism=2, completions=2)),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
}


@pytest.mark.parametrize(("new", "old", "want", "gates"), UPDATE_CASES.values(), ids=UPDATE_CASES.keys())
def test_validate_update_matches_upstream_table(
    new: Obj, old: Obj, want: list[str], gates: FeatureGates
) -> None:
    if not want:
        validate_update(new, old, gates)
        return
    with pytest.raises(ApiError) as caught:
        validate_update(new, old, gates)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    for cause in caught.value.causes:  # upstream: each cause's field and core reason is expected
        assert cause.field in want
        assert cause.detail in want


def test_validate_update_managed_by_message() -> None:
    with pytest.raises(ApiError) as caught:
        validate_update(
            _update_js(managed_by="example.com/new"), _update_js(managed_by="example.com/old"), FeatureGates()
        )
    assert caught.value.message == (
        'JobSet.jobset.x-k8s.io "js" is invalid: '
        'spec.managedBy: Invalid value: "example.com/new": field is immutable'
    )


def test_validate_update_treats_empty_maps_and_structs_as_absent() -> None:
    """Semantic.DeepEqual: ``labels: {}`` equals no labels; an empty template metadata equals none."""
    old = _update_js(_urj(parallelism=2, pod={"spec": {"containers": []}}))
    new = _update_js(_urj(parallelism=2, pod={"metadata": {"labels": {}}, "spec": {"containers": []}}))
    validate_update(new, old, FeatureGates())


# --------------------------------------------------------------------------------- through the server
@pytest.fixture
def server() -> ApiServer:
    api = ApiServer(Clock(), random.Random(0))
    api.register(ResourceType("PersistentVolumeClaim", "v1", "persistentvolumeclaims"))
    register(api, FeatureGates(), random.Random(1))
    return api


@pytest.fixture
def client(server: ApiServer) -> LocalClient:
    return LocalClient(server)


def test_register_uses_upstream_webhook_names_and_operations(server: ApiServer) -> None:
    hooks = {(h.name, h.mutating is not None, h.operations) for h in server._admission.hooks["JobSet"]}
    assert hooks == {
        (MUTATING_WEBHOOK_NAME, True, ("CREATE",)),
        (VALIDATING_WEBHOOK_NAME, False, ("CREATE", "UPDATE")),
    }
    assert (MUTATING_WEBHOOK_NAME, VALIDATING_WEBHOOK_NAME) == ("mjobset.kb.io", "vjobset.kb.io")
    rtype = server.resource("JobSet")
    assert (rtype.api_version, rtype.plural, rtype.generation, rtype.unconditional_update) == (
        "jobset.x-k8s.io/v1alpha2",
        "jobsets",
        "custom",
        False,
    )


def test_create_stores_the_webhook_and_crd_defaults(client: LocalClient) -> None:
    manifest = jobset(
        rjob("workers", replicas=None, group=None, **indexed(2)),
        failurePolicy={"rules": [{"action": "FailJobSet"}]},
    )
    del manifest["spec"]["successPolicy"]
    stored = clone(client.create(manifest))
    spec = stored["spec"]
    assert spec["successPolicy"] == {"operator": "All"}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "AnyOrder"}
    assert spec["network"] == NETWORK
    assert spec["failurePolicy"] == {
        "rules": [{"action": "FailJobSet", "name": "failurePolicyRule0"}],
        "restartStrategy": "Recreate",
    }
    assert spec["replicatedJobs"][0] == {
        "name": "workers",
        "replicas": 1,
        "groupName": "default",
        "template": {
            "spec": {
                **indexed(2),
                "template": {
                    "spec": {
                        "containers": [{"name": "test", "image": "bash:latest"}],
                        "restartPolicy": "OnFailure",
                    }
                },
            }
        },
    }
    assert stored["metadata"]["generation"] == 1 and "status" not in stored


def test_webhook_denial_has_the_admission_prefix(client: LocalClient) -> None:
    with pytest.raises(ApiError) as caught:
        client.create(jobset(rjob("rj", **indexed(1)), name="a" * 56))
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    assert caught.value.message == (
        'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "'
        + "a" * 56
        + '" is invalid: '
        'spec.replicatedJobs[0].name: Invalid value: "' + "a" * 56 + '-rj-0": '
        "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
    )
    assert [c.field for c in caught.value.causes] == ["spec.replicatedJobs[0].name"]


def test_generate_name_is_validated_under_the_generated_name(client: LocalClient) -> None:
    """The API server generates the name before admission, so the webhook sees a 63-character name."""
    manifest = {**jobset(rjob("worker")), "metadata": {"generateName": "a" * 49 + "-"}}
    with pytest.raises(
        ApiError, match="job names generated for this JobSet will exceed 63 characters"
    ) as caught:
        client.create(manifest)
    assert caught.value.message.startswith(
        'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "' + "a" * 49 + "-"
    )


def test_restart_job_gate_is_honoured(server: ApiServer) -> None:
    manifest = jobset(rjob("rj"), failurePolicy={"rules": [{"action": "RestartJob", "name": "r"}]})
    with pytest.raises(
        ApiError, match="<nil>: Internal error: RestartJob and RestartJobAndIgnoreMaxRestarts"
    ):
        LocalClient(server).create(manifest)
    gated = ApiServer(Clock(), random.Random(0))
    register(gated, FeatureGates(restart_job=True), random.Random(1))
    assert LocalClient(gated).create(manifest)["spec"]["failurePolicy"]["rules"][0]["action"] == "RestartJob"


def test_update_is_validated_but_not_defaulted(client: LocalClient) -> None:
    stored = clone(client.create(jobset(rjob("rj"))))
    stored["spec"]["suspend"] = True
    stored["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"] = {
        "labels": {"kueue": "yes"}
    }
    del stored["spec"]["startupPolicy"]  # no oldSelf comparison for an absent value, and no re-defaulting
    updated = clone(client.update(stored))
    assert "startupPolicy" not in updated["spec"]
    assert updated["metadata"]["generation"] == 2
    updated["spec"]["suspend"] = False
    updated["spec"]["replicatedJobs"][0]["replicas"] = 2
    with pytest.raises(ApiError) as caught:
        client.update(updated)
    assert caught.value.message.startswith(
        'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "js" is invalid: '
        "spec.replicatedJobs: Invalid value: "
    )
    assert caught.value.message.endswith(": field is immutable")


def test_existing_pvc_is_checked_through_the_client(client: LocalClient) -> None:
    client.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-js"},
            "spec": {"accessModes": ["ReadWriteOnce"]},
        }
    )
    with pytest.raises(ApiError) as caught:
        client.create(
            jobset(
                _pvc_rjob("rj", "data"),
                volumeClaimPolicies=[
                    {
                        "templates": [
                            {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteMany"]}}
                        ]
                    }
                ],
            )
        )
    message = caught.value.message
    assert (
        'spec.volumeClaimPolicies[0].template[0].spec: Invalid value: {"accessModes":["ReadWriteMany"]}: '
        "spec does not match existing PVC data-js in namespace default" in message
    )
    assert (
        'spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted: Invalid value: "Delete": '
        "retentionPolicy must be retain when PVC exists" in message
    )


# ------------------------------------------------------------------------------- upstream examples
def _upstream_manifests() -> list[Path]:
    for folder in (REPO / "manifests" / "upstream", REPO.parent / "shared" / "upstream-examples"):
        found = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
        if found:
            return found
    return []


@pytest.mark.parametrize("path", _upstream_manifests(), ids=lambda p: p.name)
def test_upstream_example_is_accepted_and_defaulted(path: Path, client: LocalClient) -> None:
    manifests = [m for m in yaml.safe_load_all(path.read_text()) if m and m.get("kind") == "JobSet"]
    assert manifests, f"{path.name} holds no JobSet"
    for manifest in manifests:
        stored = clone(client.create(manifest))
        spec, given = stored["spec"], manifest["spec"]
        assert spec["successPolicy"] == given.get("successPolicy", {"operator": "All"})
        assert spec["startupPolicy"] == given.get("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
        network = given.get("network") or {}
        assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True, **network}
        for rjob_in, rjob_out in zip(given["replicatedJobs"], spec["replicatedJobs"], strict=True):
            assert rjob_out["replicas"] == rjob_in.get("replicas", 1)
            assert rjob_out["groupName"] == rjob_in.get("groupName", "default")
            job_in, job_out = rjob_in["template"]["spec"], rjob_out["template"]["spec"]
            assert job_out["completionMode"] == job_in.get("completionMode", "Indexed")
            restart = job_in["template"]["spec"].get("restartPolicy") or "OnFailure"
            assert job_out["template"]["spec"]["restartPolicy"] == restart
        if "failurePolicy" in given:
            policy = spec["failurePolicy"]
            assert policy["restartStrategy"] == given["failurePolicy"].get("restartStrategy", "Recreate")
            for index, rule in enumerate(policy.get("rules") or ()):
                assert rule["name"] == (
                    given["failurePolicy"]["rules"][index].get("name") or f"failurePolicyRule{index}"
                )
        client.delete("JobSet", stored["metadata"]["namespace"], stored["metadata"]["name"])


def test_upstream_examples_are_present() -> None:
    assert len(_upstream_manifests()) >= 10
