"""JobSet ``ValidateCreate`` (jobset/webhooks/jobset_webhook/create.py): the ``TestValidateCreate`` and
``TestGetJobSetNameForValidation`` tables of upstream ``pkg/webhooks/jobset_webhook_test.go``, checked the
way upstream checks them (each expected text is contained in the error)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from jobset_webhook_harness import DNS1035_MSG, MAX_INT32, indexed, jobset, pvc_rjob, rjob

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from jobset.features import FeatureGates
from jobset.webhooks import (
    validate_create,
)
from jobset.webhooks.apimachinery import is_domain_prefixed_path
from jobset.webhooks.jobset_webhook.create import job_set_name_for_validation

# ------------------------------------------------------------------------------------ validate create
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
IN_PLACE_SPEC = {
    "parallelism": 1,
    "completions": 1,
    "backoffLimit": MAX_INT32,
    "podReplacementPolicy": "Failed",
}
IN_PLACE_POLICY = {"failurePolicy": {"restartStrategy": "InPlaceRestart"}}


def _two_indexed(**spec: Any) -> Obj:
    """``replicatedjob-a`` and ``replicatedjob-b``: 2 Jobs of 2 indexed pods each."""
    return jobset(rjob("replicatedjob-a", 2, **indexed(2)), rjob("replicatedjob-b", 2, **indexed(2)), **spec)


def _case(
    js: Obj, *want: str, gates: FeatureGates | None = None, pvcs: dict[str, Obj] | None = None
) -> tuple[Any, ...]:
    return js, list(want), gates or FeatureGates(), pvcs or {}


def _one_fail_jobset_rule(**rule: Any) -> Obj:
    """One indexed Job, at most one restart, and a FailJobSet rule of ``rule``."""
    policy = {"maxRestarts": 1, "rules": [{"action": "FailJobSet", **rule}]}
    return jobset(rjob("rj", **indexed(1)), failurePolicy=policy)


def _in_place(spec: Obj, *want: str) -> tuple[Any, ...]:
    """Job ``job-1`` of ``spec`` under the InPlaceRestart restart strategy, the InPlaceRestart gate on."""
    gates = FeatureGates(in_place_restart=True)
    return _case(jobset(rjob("job-1", **spec), **IN_PLACE_POLICY), *want, gates=gates)


def _in_place_spec_without(key: str) -> Obj:
    return {k: v for k, v in IN_PLACE_SPEC.items() if k != key}


NOT_EQUAL_IN_PLACE = (
    "replicatedJob job-1: completions and parallelism must be set and equal to each other when in-place "
    "restart is enabled"
)

CREATE_CASES: dict[str, tuple[Any, ...]] = {
    # uncategorizedTests
    "generateName that produces overlong child job names is rejected": _case(
        {**jobset(rjob("worker")), "metadata": {"generateName": "a" * 49 + "-"}},
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
    ),
    "generateName that produces overlong PVC names is rejected": _case(
        {
            **jobset(
                pvc_rjob("worker", "datasets"),
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
        _one_fail_jobset_rule(onJobFailureReasons=["fakeReason"]),
        "invalid job failure reason 'fakeReason' in failure policy is not a recognized job failure reason",
    ),
    "jobset failure policy has an invalid replicated job": _case(
        _one_fail_jobset_rule(targetReplicatedJobs=["fakeReplicatedJob"]),
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
        _two_indexed(coordinator={"replicatedJob": "fake-rjob"}),
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
        _two_indexed(coordinator={"replicatedJob": "replicatedjob-a", "jobIndex": 2}),
        "coordinator job index 2 is invalid for replicatedJob replicatedjob-a",
    ),
    "coordinator pod index invalid": _case(
        _two_indexed(coordinator={"replicatedJob": "replicatedjob-a", "podIndex": 2}),
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
        jobset(pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume"))
    ),
    "volumeClaimPolicy is valid since volume exists in the initContainer": _case(
        jobset(
            rjob("job-1"),
            pvc_rjob("job-2", "test-volume", init=True),
            volumeClaimPolicies=_claims("test-volume"),
        )
    ),
    "volumeClaimPolicy is invalid since template names are not unique": _case(
        jobset(
            pvc_rjob("job-1", "duplicate-volume"),
            volumeClaimPolicies=[
                *_claims("duplicate-volume"),
                *_claims("duplicate-volume", retention="Retain"),
            ],
        ),
        "names must be unique for VolumeClaimPolicies template",
    ),
    "volumeClaimPolicy is invalid since template name has uppercase letters": _case(
        jobset(pvc_rjob("job-1", "InvalidVolumeName"), volumeClaimPolicies=_claims("InvalidVolumeName")),
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters",
    ),
    "volumeClaimPolicy is invalid since template name is too long": _case(
        jobset(pvc_rjob("job-1", "a" * 64), volumeClaimPolicies=_claims("a" * 64)),
        "VolumeClaimPolicies template name is too long",
    ),
    "volumeClaimPolicy is invalid since no matching volumeMount in containers": _case(
        jobset(rjob("job-1"), volumeClaimPolicies=_claims("test-volume")),
        "replicatedJob containers don't have a matching volumeMount",
    ),
    "volumeClaimPolicy is invalid since volume name conflicts with existing volume": _case(
        jobset(
            pvc_rjob("job-1", "conflicting-volume", volume=True),
            volumeClaimPolicies=_claims("conflicting-volume"),
        ),
        "volume name conflicts with VolumeClaimPolicy template name",
    ),
    "volumeClaimPolicy is valid when existing PVC matches template spec": _case(
        jobset(
            pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume", retention="Retain")
        ),
        pvcs={"test-volume-js": {"metadata": {"name": "test-volume-js"}, "spec": PVC_SPEC}},
    ),
    "volumeClaimPolicy retention policy must be retain for existing PVC": _case(
        jobset(pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume")),
        "retentionPolicy must be retain when PVC exist",
        pvcs={"test-volume-js": {"metadata": {"name": "test-volume-js"}, "spec": PVC_SPEC}},
    ),
    "volumeClaimPolicy is invalid when existing PVC does not match template spec": _case(
        jobset(
            pvc_rjob("job-1", "test-volume"), volumeClaimPolicies=_claims("test-volume", retention="Retain")
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
    "InPlaceRestart restart strategy can be set when InPlaceRestart feature gate is enabled": _in_place(
        IN_PLACE_SPEC
    ),
    "InPlaceRestart enabled: backoffLimit is not MaxInt32": _in_place(
        {**IN_PLACE_SPEC, "backoffLimit": 0},
        "replicatedJob job-1: must be set to 2147483647 (MaxInt32) when in-place restart is enabled",
    ),
    "InPlaceRestart enabled: podReplacementPolicy is not Failed": _in_place(
        {**IN_PLACE_SPEC, "podReplacementPolicy": "TerminatingOrFailed"},
        "replicatedJob job-1: must be set to Failed when in-place restart is enabled",
    ),
    "InPlaceRestart enabled: completions != parallelism": _in_place(
        {**IN_PLACE_SPEC, "completions": 2}, NOT_EQUAL_IN_PLACE
    ),
    "InPlaceRestart enabled: completions is nil": _in_place(
        _in_place_spec_without("completions"), NOT_EQUAL_IN_PLACE
    ),
    "InPlaceRestart enabled: parallelism is nil": _in_place(
        _in_place_spec_without("parallelism"), NOT_EQUAL_IN_PLACE
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

    js = jobset(pvc_rjob("job-1", "vol"), volumeClaimPolicies=_claims("vol"))
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
