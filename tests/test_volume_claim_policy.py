"""Shared PVCs of ``spec.volumeClaimPolicies`` (jobset/controller/volume_claim_policy.py) against upstream
``pkg/controllers/volume_claim_policy.go`` and the cases of its ``volume_claim_policy_test.go``
(``TestReconcileVolumeClaimPolicies``, ``TestAddVolumes``), on a real in-memory API server."""

from __future__ import annotations

import pytest
from jobset_harness import NS, Env, make_jobset, pod_template, rjob

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller import EventRecorder
from jobset.controller.child_jobs import ChildJobs, construct_jobs_from_template
from jobset.controller.volume_claim_policy import (
    add_volumes,
    generate_pvc_name,
    reconcile_volume_claim_policies,
)

PVC_SPEC = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}
OWNER = {
    "apiVersion": api.API_VERSION,
    "kind": "JobSet",
    "name": "test-jobset",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def template(name: str, **meta: object) -> Obj:
    return {"metadata": {"name": name, **meta}, "spec": PVC_SPEC}


def policy(*templates: Obj, when_deleted: str | None = None) -> Obj:
    out: Obj = {"templates": list(templates)}
    if when_deleted is not None:
        out["retentionPolicy"] = {"whenDeleted": when_deleted}
    return out


def jobset_with(*policies: Obj, pod: Obj | None = None) -> Obj:
    return make_jobset(rjob("a", pod=pod), name="test-jobset", volumeClaimPolicies=list(policies))


def pvcs(env: Env) -> dict[str, Obj]:
    return {p["metadata"]["name"]: p for p in env.client.list("PersistentVolumeClaim", NS)}


def reconcile(env: Env, js: Obj) -> None:
    reconcile_volume_claim_policies(env.client, EventRecorder(env.client, env.clock), js)


def test_generate_pvc_name_is_template_then_jobset() -> None:
    assert generate_pvc_name("test-jobset", "volume") == "volume-test-jobset"


def test_pvcs_with_different_retention_policies_and_custom_labels_and_annotations() -> None:
    env = Env()
    custom = template("volume-custom", labels={"custom-label": "custom-value"},
                      annotations={"custom-annotation": "custom-value"})
    js = jobset_with(policy(template("volume-delete"), custom, when_deleted="Delete"),
                     policy(template("volume-retain"), when_deleted="Retain"))
    reconcile(env, js)
    got = pvcs(env)
    assert sorted(got) == [f"volume-{n}-test-jobset" for n in ("custom", "delete", "retain")]
    delete, custom_pvc, retain = (got[f"volume-{n}-test-jobset"] for n in ("delete", "custom", "retain"))
    assert delete["metadata"]["labels"] == {api.JOBSET_NAME_KEY: "test-jobset"}
    assert delete["metadata"]["ownerReferences"] == [OWNER]
    assert "annotations" not in delete["metadata"]
    assert custom_pvc["metadata"]["labels"] == {
        api.JOBSET_NAME_KEY: "test-jobset", "custom-label": "custom-value"}
    assert custom_pvc["metadata"]["annotations"] == {"custom-annotation": "custom-value"}
    assert custom_pvc["metadata"]["ownerReferences"] == [OWNER]
    assert retain["metadata"]["labels"] == {api.JOBSET_NAME_KEY: "test-jobset"}
    assert "ownerReferences" not in retain["metadata"]
    assert all(p["spec"] == PVC_SPEC and p["metadata"]["namespace"] == NS for p in got.values())
    assert custom["metadata"]["labels"] == {"custom-label": "custom-value"}  # the template is left alone
    assert env.events() == []


def test_no_retention_policy_means_no_owner_reference() -> None:
    env = Env()
    reconcile(env, jobset_with(policy(template("scratch"))))
    assert "ownerReferences" not in pvcs(env)["scratch-test-jobset"]["metadata"]


def test_an_existing_pvc_is_not_created_again_nor_changed() -> None:
    env = Env()
    env.client.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": "test-volume-test-jobset", "namespace": NS}, "spec": PVC_SPEC})
    before = pvcs(env)["test-volume-test-jobset"]
    reconcile(env, jobset_with(policy(template("test-volume"), when_deleted="Delete")))
    after = pvcs(env)["test-volume-test-jobset"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert "ownerReferences" not in after["metadata"]  # AlreadyExists: no adoption, no update
    assert env.events() == []


def test_a_creation_error_is_a_warning_event_and_a_reconcile_error() -> None:
    env = Env()
    js = jobset_with(policy(template("Bad_Name"), template("after-the-bad-one"), when_deleted="Delete"),
                     policy(template("other-policy")))
    with pytest.raises(ApiError) as raised:
        reconcile(env, js)
    # createPVCsIfNecessary stops at its policy's first failure; the other policies still run.
    assert sorted(pvcs(env)) == ["other-policy-test-jobset"]
    assert raised.value.message.startswith('PersistentVolumeClaim "Bad_Name-test-jobset" is invalid: ')
    [(event_type, reason, note)] = env.events()
    assert (event_type, reason) == ("Warning", api.PVC_CREATION_FAILED_REASON)
    assert note == raised.value.message


def test_errors_of_several_policies_are_joined() -> None:
    env = Env()
    js = jobset_with(policy(template("First_Bad")), policy(template("Second_Bad")))
    with pytest.raises(ApiError) as raised:
        reconcile(env, js)
    first, second = raised.value.message.split("\n")
    assert first.startswith('PersistentVolumeClaim "First_Bad-test-jobset" is invalid')
    assert second.startswith('PersistentVolumeClaim "Second_Bad-test-jobset" is invalid')
    env.settle()
    # Same regarding object, reason and action: client-go folds the second into the first's series.
    [event] = env.client.list("Event", NS)
    assert (event["reason"], event["note"]) == (api.PVC_CREATION_FAILED_REASON, first)
    assert event["series"]["count"] == 2


def _job(*mounts: str, init_mounts: tuple[str, ...] = ()) -> Obj:
    pod = pod_template()
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": m, "mountPath": f"/{m}"} for m in mounts]
    if init_mounts:
        init = {"name": "init", "image": "busybox:1",
                "volumeMounts": [{"name": m, "mountPath": f"/{m}"} for m in init_mounts]}
        pod["spec"]["initContainers"] = [init]
    return {"spec": {"template": pod}}


def _claim(name: str) -> Obj:
    return {"name": name, "persistentVolumeClaim": {"claimName": f"{name}-test-jobset"}}


@pytest.mark.parametrize(("job", "expected"), [
    pytest.param(_job("volume-1", "volume-2"), [_claim("volume-1"), _claim("volume-2")], id="matching"),
    pytest.param(_job(), None, id="no volumeMounts"),
    pytest.param(_job("volume-1"), [_claim("volume-1")], id="only the mounted templates"),
    pytest.param(_job(init_mounts=("volume-2",)), [_claim("volume-2")], id="init container mount"),
])
def test_add_volumes(job: Obj, expected: list[Obj] | None) -> None:
    js = jobset_with(policy(template("volume-1"), template("volume-2")))
    add_volumes(job, js)
    assert job["spec"]["template"]["spec"].get("volumes") == expected


def test_add_volumes_appends_to_the_volumes_a_job_already_has() -> None:
    job = _job("volume-1")
    job["spec"]["template"]["spec"]["volumes"] = [{"name": "config", "configMap": {"name": "cfg"}}]
    add_volumes(job, jobset_with(policy(template("volume-1"))))
    assert job["spec"]["template"]["spec"]["volumes"] == [{"name": "config", "configMap": {"name": "cfg"}},
                                                          _claim("volume-1")]


def test_volume_claim_policies_add_a_volume_for_mounted_templates_only() -> None:
    pod = pod_template()
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    js = make_jobset(
        rjob("a", pod=pod),
        volumeClaimPolicies=[
            {"templates": [{"metadata": {"name": "data"}}, {"metadata": {"name": "unused"}}]}
        ],
    )
    (job,) = construct_jobs_from_template(js, js["spec"]["replicatedJobs"][0], ChildJobs())
    assert job["spec"]["template"]["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-js"}}
    ]


def test_volume_claim_policies_create_pvcs_owned_only_when_deleted_with_the_jobset() -> None:
    env = Env()
    pod = pod_template()
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "ckpt", "mountPath": "/ckpt"}]
    policies = [
        {
            "templates": [
                {"metadata": {"name": "ckpt", "labels": {"tier": "fast"}}, "spec": {"resources": {}}}
            ],
            "retentionPolicy": {"whenDeleted": "Delete"},
        },
        {
            "templates": [{"metadata": {"name": "logs"}, "spec": {}}],
            "retentionPolicy": {"whenDeleted": "Retain"},
        },
    ]
    env.create(make_jobset(rjob("a", pod=pod), volumeClaimPolicies=policies))
    ckpt = env.client.get("PersistentVolumeClaim", NS, "ckpt-js")
    logs = env.client.get("PersistentVolumeClaim", NS, "logs-js")
    assert ckpt["metadata"]["labels"] == {"tier": "fast", api.JOBSET_NAME_KEY: "js"}
    assert [r["kind"] for r in ckpt["metadata"]["ownerReferences"]] == ["JobSet"]
    assert "ownerReferences" not in logs["metadata"]
    assert env.job("js-a-0")["spec"]["template"]["spec"]["volumes"] == [
        {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt-js"}}
    ]

