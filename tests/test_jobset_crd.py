"""Tests for :mod:`jobset.api.v1alpha2.crd`: what the API server does for JobSets because of the CRD.

Defaults, OpenAPI limits and enums (through the pydantic model), list-type invariants and the CEL rules of
``config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml``, with the messages k8s.io/apiextensions-apiserver
produces; and the status subresource. Errors from the CRD carry no ``admission webhook`` prefix.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from jobset.api.v1alpha2.crd import (
    CRD_DEFAULTS,
    CelRuleError,
    JobSetStrategy,
    apply_crd_defaults,
    find,
    find_each,
)
from jobset.features import FeatureGates
from jobset.webhooks import register

INVALID = 'JobSet.jobset.x-k8s.io "js" is invalid: '
CONTAINER = {"name": "c", "image": "busybox"}


def rjob(name: str, **extra: Any) -> Obj:
    return {
        "name": name,
        "template": {"spec": {"template": {"spec": {"containers": [clone(CONTAINER)]}}}},
        **extra,
    }


def jobset(*rjobs: Obj, **spec: Any) -> Obj:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {"replicatedJobs": list(rjobs or [rjob("rj")]), **spec},
    }


def first_container(manifest: Obj) -> Obj:
    container: Obj = manifest["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    return container


@pytest.fixture
def client() -> LocalClient:
    server = ApiServer(Clock(), random.Random(0))
    register(server, FeatureGates(), random.Random(1))
    return LocalClient(server)


def create_error(client: LocalClient, manifest: Obj) -> str:
    with pytest.raises(ApiError) as caught:
        client.create(manifest)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    return caught.value.message


def update_error(client: LocalClient, manifest: Obj) -> str:
    with pytest.raises(ApiError) as caught:
        client.update(manifest)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    return caught.value.message


# ---------------------------------------------------------------------------------------------- defaults
def test_crd_defaults_on_create(client: LocalClient) -> None:
    pod = {
        "containers": [
            {
                **CONTAINER,
                "ports": [{"containerPort": 80}],
                "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"key": "k"}}}],
            }
        ],
        "volumes": [{"name": "cfg", "configMap": {}}],
    }
    manifest = jobset(
        {"name": "rj", "template": {"spec": {"template": {"spec": pod}}}},
        failurePolicy={"maxRestarts": 2},
        volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data"}}], "retentionPolicy": {}}],
    )
    first_container(manifest)["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    spec = client.create(manifest)["spec"]
    rj = spec["replicatedJobs"][0]
    assert (rj["replicas"], rj["groupName"]) == (1, "default")
    assert spec["failurePolicy"] == {"maxRestarts": 2, "restartStrategy": "Recreate"}
    assert spec["volumeClaimPolicies"][0]["retentionPolicy"] == {"whenDeleted": "Delete"}
    pod_spec = rj["template"]["spec"]["template"]["spec"]
    assert pod_spec["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert pod_spec["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"] == {"key": "k", "name": ""}
    assert pod_spec["volumes"][0]["configMap"] == {"name": ""}


def test_crd_defaults_never_create_the_enclosing_object() -> None:
    obj: Obj = {"spec": {"replicatedJobs": [{"name": "a", "template": {}}]}}
    apply_crd_defaults(obj)
    assert obj == {
        "spec": {"replicatedJobs": [{"name": "a", "template": {}, "groupName": "default", "replicas": 1}]}
    }


def test_nulls_are_pruned_and_null_defaulted_fields_get_their_default() -> None:
    obj: Obj = {
        "spec": {
            "suspend": None,
            "ttlSecondsAfterFinished": None,
            "replicatedJobs": [{"name": "a", "replicas": None, "dependsOn": None}],
        }
    }
    apply_crd_defaults(obj)
    assert obj == {"spec": {"replicatedJobs": [{"name": "a", "replicas": 1, "groupName": "default"}]}}


def test_crd_defaults_table_holds_the_jobset_level_defaults() -> None:
    table = {(path, key): value for path, key, value in CRD_DEFAULTS}
    assert table[("spec.replicatedJobs[]", "replicas")] == 1
    assert table[("spec.replicatedJobs[]", "groupName")] == "default"
    assert table[("spec.failurePolicy", "restartStrategy")] == "Recreate"
    assert table[("spec.volumeClaimPolicies[].retentionPolicy", "whenDeleted")] == "Delete"


def test_crd_defaults_apply_on_update_too(client: LocalClient) -> None:
    stored = clone(client.create(jobset(rjob("rj", replicas=3), failurePolicy={"maxRestarts": 1})))
    del stored["spec"]["replicatedJobs"][0]["groupName"]
    del stored["spec"]["failurePolicy"]["restartStrategy"]
    updated = clone(client.update(stored))
    assert updated["spec"]["replicatedJobs"][0]["groupName"] == "default"
    assert updated["spec"]["failurePolicy"]["restartStrategy"] == "Recreate"
    assert updated["metadata"]["generation"] == 1, "re-defaulted to the stored value: nothing changed"


# ------------------------------------------------------------------------------- OpenAPI schema rules
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: s["replicatedJobs"][0].update(replicas=-1),
            "spec.replicatedJobs[0].replicas: Invalid value: -1: "
            "spec.replicatedJobs[0].replicas in body should be greater than or equal to 0",
        ),
        (
            lambda s: s.update(ttlSecondsAfterFinished=-1),
            "spec.ttlSecondsAfterFinished: Invalid value: -1: "
            "spec.ttlSecondsAfterFinished in body should be greater than or equal to 0",
        ),
        (
            lambda s: s["replicatedJobs"].append(
                rjob("b", dependsOn=[{"name": f"d{i}", "status": "Ready"} for i in range(6)])
            ),
            "spec.replicatedJobs[1].dependsOn: Too many: 6: must have at most 5 items",
        ),
        (
            lambda s: s.update(successPolicy={"operator": "Some"}),
            'spec.successPolicy.operator: Unsupported value: "Some": supported values: "All", "Any"',
        ),
        (
            lambda s: s.update(startupPolicy={"startupPolicyOrder": "Random"}),
            'spec.startupPolicy.startupPolicyOrder: Unsupported value: "Random": '
            'supported values: "AnyOrder", "InOrder"',
        ),
        (
            lambda s: s.update(failurePolicy={"restartStrategy": "Never"}),
            'spec.failurePolicy.restartStrategy: Unsupported value: "Never": supported values: '
            '"Recreate", "BlockingRecreate", "InPlaceRestart"',
        ),
        (
            lambda s: s.update(failurePolicy={"rules": [{"name": "r", "action": "Retry"}]}),
            'spec.failurePolicy.rules[0].action: Unsupported value: "Retry": supported values: "FailJobSet", '
            '"RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts", "RestartJob", '
            '"RestartJobAndIgnoreMaxRestarts"',
        ),
        (
            lambda s: s["replicatedJobs"].append(rjob("b", dependsOn=[{"name": "rj", "status": "Running"}])),
            'spec.replicatedJobs[1].dependsOn[0].status: Unsupported value: "Running": '
            'supported values: "Ready", "Complete"',
        ),
        (
            lambda s: s.update(
                volumeClaimPolicies=[{"templates": [], "retentionPolicy": {"whenDeleted": "Keep"}}]
            ),
            'spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted: Unsupported value: "Keep": '
            'supported values: "Delete", "Retain"',
        ),
    ],
)
def test_schema_limits_and_enums(client: LocalClient, change: Any, message: str) -> None:
    manifest = jobset()
    change(manifest["spec"])
    assert create_error(client, manifest) == INVALID + message


def test_replicas_zero_is_accepted(client: LocalClient) -> None:
    assert client.create(jobset(rjob("rj", replicas=0)))["spec"]["replicatedJobs"][0]["replicas"] == 0


def test_embedded_metadata_accepts_only_the_generated_fields(client: LocalClient) -> None:
    manifest = jobset()
    manifest["spec"]["replicatedJobs"][0]["template"]["metadata"] = {
        "labels": {"a": "b"},
        "generateName": "x-",
    }
    assert create_error(client, manifest) == INVALID + (
        "spec.replicatedJobs[0].template.metadata.generateName: unknown field "
        '"spec.replicatedJobs[0].template.metadata.generateName"'
    )


# ----------------------------------------------------------------------------------- list-type rules
def test_replicated_job_names_are_unique(client: LocalClient) -> None:
    assert create_error(client, jobset(rjob("rj"), rjob("rj"))) == (
        INVALID + 'spec.replicatedJobs[1]: Duplicate value: {"name":"rj"}'
    )


def test_multi_key_list_map_after_defaulting(client: LocalClient) -> None:
    """``ports`` is keyed by (containerPort, protocol); the defaulted TCP makes these two collide."""
    manifest = jobset()
    first_container(manifest)["ports"] = [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]
    assert create_error(client, manifest) == INVALID + (
        "spec.replicatedJobs[0].template.spec.template.spec.containers[0].ports[1]: "
        'Duplicate value: {"containerPort":80,"protocol":"TCP"}'
    )


def test_only_the_first_repeat_of_a_key_is_reported() -> None:
    obj = {"spec": {"replicatedJobs": [{"name": "a"}, {"name": "a"}, {"name": "a"}]}}
    assert [str(e) for e in JobSetStrategy().validate(obj)] == [
        'spec.replicatedJobs[1]: Duplicate value: {"name":"a"}'
    ]


# ------------------------------------------------------------------------------------------ CEL rules
def test_startup_policy_in_order_and_depends_on_are_mutually_exclusive(client: LocalClient) -> None:
    manifest = jobset(
        rjob("a"),
        rjob("b", dependsOn=[{"name": "a", "status": "Ready"}]),
        startupPolicy={"startupPolicyOrder": "InOrder"},
    )
    assert (
        create_error(client, manifest)
        == INVALID + "spec: Invalid value: StartupPolicy and DependsOn APIs are mutually exclusive"
    )
    manifest["spec"]["startupPolicy"] = {"startupPolicyOrder": "AnyOrder"}
    client.create(manifest)


def test_mutual_exclusion_rule_without_replicated_jobs_is_an_evaluation_error() -> None:
    errs = JobSetStrategy().validate({"spec": {"startupPolicy": {"startupPolicyOrder": "InOrder"}}})
    assert [str(e) for e in errs] == [
        'spec: Invalid value: "object": no such key: replicatedJobs evaluating rule: '
        "StartupPolicy and DependsOn APIs are mutually exclusive"
    ]


def test_volume_claim_template_namespace_is_forbidden(client: LocalClient) -> None:
    manifest = jobset(
        volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data", "namespace": "other"}}]}]
    )
    first_container(manifest)["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    assert create_error(client, manifest) == INVALID + (
        "spec.volumeClaimPolicies[0]: Invalid value: "
        "namespace cannot be set for VolumeClaimPolicies templates"
    )
    manifest["spec"]["volumeClaimPolicies"][0]["templates"][0]["metadata"]["namespace"] = ""
    client.create(manifest)


def test_cel_rule_error_omits_the_value() -> None:
    assert (
        str(CelRuleError("Invalid", "spec.network", "Value is immutable"))
        == "spec.network: Invalid value: Value is immutable"
    )


IMMUTABLE_CHANGES = {
    "network": (lambda s: s["network"].update(subdomain="other"), "spec.network"),
    "successPolicy": (lambda s: s.update(successPolicy={"operator": "Any"}), "spec.successPolicy"),
    "failurePolicy": (lambda s: s["failurePolicy"].update(maxRestarts=5), "spec.failurePolicy"),
    "startupPolicy": (
        lambda s: s.update(startupPolicy={"startupPolicyOrder": "InOrder"}),
        "spec.startupPolicy",
    ),
    "dependsOn": (
        lambda s: s["replicatedJobs"][1]["dependsOn"][0].update(status="Complete"),
        "spec.replicatedJobs[1].dependsOn",
    ),
    "volumeClaimPolicies": (
        lambda s: s["volumeClaimPolicies"][0].update(retentionPolicy={"whenDeleted": "Retain"}),
        "spec.volumeClaimPolicies",
    ),
}


@pytest.mark.parametrize(("change", "path"), IMMUTABLE_CHANGES.values(), ids=IMMUTABLE_CHANGES.keys())
def test_cel_immutable_fields(client: LocalClient, change: Any, path: str) -> None:
    manifest = jobset(
        rjob("a"),
        rjob("b", dependsOn=[{"name": "a", "status": "Ready"}]),
        failurePolicy={"maxRestarts": 1},
        volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data"}}]}],
    )
    first_container(manifest)["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    stored = clone(client.create(manifest))
    change(stored["spec"])
    message = update_error(client, stored)  # InOrder also trips the dependsOn rule: both are listed
    assert message.startswith(INVALID)
    assert f"{path}: Invalid value: Value is immutable" in message


def test_transition_rules_need_an_old_value(client: LocalClient) -> None:
    """``self == oldSelf`` is only evaluated when the old object has the field: adding a failurePolicy
    after creation passes the CRD, and the webhook's update checks do not look at it either."""
    stored = clone(client.create(jobset()))
    stored["spec"]["failurePolicy"] = {"maxRestarts": 3}
    assert client.update(stored)["spec"]["failurePolicy"] == {"maxRestarts": 3, "restartStrategy": "Recreate"}


def test_depends_on_compares_as_a_list_map() -> None:
    deps = [{"name": "a", "status": "Ready"}, {"name": "b", "status": "Ready"}]
    old = {"spec": {"replicatedJobs": [{"name": "c", "dependsOn": deps}]}}
    new = {"spec": {"replicatedJobs": [{"name": "c", "dependsOn": deps[::-1]}]}}
    assert JobSetStrategy().validate_update(new, old) == []


# ------------------------------------------------------------------------------- status subresource
def test_status_is_dropped_on_create_and_spec_ignored_on_status_writes(client: LocalClient) -> None:
    manifest = jobset()
    manifest["status"] = {"restarts": 7}
    stored = clone(client.create(manifest))
    assert "status" not in stored
    stored["status"] = {
        "restarts": 1,
        "replicatedJobsStatus": [
            {"name": "rj", "ready": 0, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0}
        ],
    }
    stored["spec"]["suspend"] = True
    written = clone(client.update_status(stored))
    assert written["status"]["restarts"] == 1
    assert "suspend" not in written["spec"]
    assert written["metadata"]["generation"] == 1


def test_status_list_maps_are_checked(client: LocalClient) -> None:
    stored = clone(client.create(jobset()))
    condition = {
        "type": "Completed",
        "status": "True",
        "reason": "AllJobsCompleted",
        "message": "done",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    stored["status"] = {"conditions": [condition, dict(condition)]}
    with pytest.raises(ApiError) as caught:
        client.update_status(stored)
    assert caught.value.message == INVALID + 'status.conditions[1]: Duplicate value: {"type":"Completed"}'


def test_update_needs_a_resource_version_and_spec_changes_bump_generation(client: LocalClient) -> None:
    stored = clone(client.create(jobset()))
    stored["metadata"]["labels"] = {"team": "a"}
    relabelled = clone(client.update(stored))
    assert relabelled["metadata"]["generation"] == 1
    relabelled["spec"]["suspend"] = True
    assert client.update(relabelled)["metadata"]["generation"] == 2
    del relabelled["metadata"]["resourceVersion"]
    assert "must be specified for an update" in update_error(client, relabelled)


def _find_one_path(obj: Any, path: str) -> list[tuple[str, Any]]:
    """The walk of a single path, written out plainly: what every path of :func:`find_each` must find."""
    level: list[tuple[str, Any]] = [("", obj)]
    for segment in path.split("."):
        name, items = segment.removesuffix("[]"), segment.endswith("[]")
        below: list[tuple[str, Any]] = []
        for at, node in level:
            child = node.get(name) if isinstance(node, dict) else None
            child_path = f"{at}.{name}" if at else name
            if items and isinstance(child, list):
                below.extend((f"{child_path}[{i}]", item) for i, item in enumerate(child))
            elif not items and child is not None:
                below.append((child_path, child))
        level = below
    return level


_KEYS = st.sampled_from(["a", "b", "c"])
_TREES = st.recursive(
    st.none() | st.integers(0, 3) | st.just("x"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=25,
)
_PATHS = st.lists(st.lists(st.tuples(_KEYS, st.booleans()), min_size=1, max_size=4).map(
    lambda steps: ".".join(name + ("[]" if items else "") for name, items in steps)), max_size=8)


@settings(max_examples=400)
@given(_TREES, _PATHS)
def test_walking_paths_together_finds_what_each_path_finds_alone(obj: Any, paths: list[str]) -> None:
    """Shared first steps walked once, paths that are prefixes of others, repeated paths, paths into
    lists and into scalars: each path finds exactly what its own walk finds, in document order."""
    found = find_each(obj, tuple(paths))
    for path in paths:
        assert found.get(path, []) == _find_one_path(obj, path)
        assert list(find(obj, path)) == _find_one_path(obj, path)


def test_find_walks_lists_and_reports_paths() -> None:
    obj = {"spec": {"replicatedJobs": [{"dependsOn": [1]}, {}, {"dependsOn": [2]}]}}
    assert list(find(obj, "spec.replicatedJobs[].dependsOn")) == [
        ("spec.replicatedJobs[0].dependsOn", [1]),
        ("spec.replicatedJobs[2].dependsOn", [2]),
    ]
