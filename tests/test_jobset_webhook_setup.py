"""The JobSet webhooks installed in an API server (jobset/webhooks/setup.py, upstream
``pkg/webhooks/setup.go``): the full path (mutating webhook, schema, CRD strategy, validating webhook)
through :class:`fakecluster.client.LocalClient`, where a denial carries the ``admission webhook ...
denied the request`` prefix; every upstream example manifest must be accepted and defaulted."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from jobset_webhook_harness import NETWORK, REPO, indexed, jobset, pvc_rjob, rjob

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import clone
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from jobset.features import FeatureGates
from jobset.webhooks import (
    MUTATING_WEBHOOK_NAME,
    VALIDATING_WEBHOOK_NAME,
    register,
)


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
                pvc_rjob("rj", "data"),
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
