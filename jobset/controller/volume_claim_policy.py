"""Shared PVCs of ``spec.volumeClaimPolicies``: port of upstream ``pkg/controllers/volume_claim_policy.go``.

Each template becomes a PVC ``<template>-<jobset>`` labelled with the JobSet name, owned by the JobSet
only when ``retentionPolicy.whenDeleted`` is ``Delete``; Jobs that mount a template by name get a volume
pointing at that claim. The cluster must serve ``PersistentVolumeClaim`` for creation to succeed; any
error other than AlreadyExists is reported as a ``PVCCreationFailed`` Warning event and fails the
reconcile, as upstream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakecluster.api.errors import AlreadyExists, ApiError
from fakecluster.api.objects import Obj, clone, owner_reference
from fakecluster.client.protocol import Client
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.errors import ReconcileError, join_errors
from jobset.controller.events import EVENT_TYPE_WARNING
from jobset.controller.spec import spec_of

if TYPE_CHECKING:
    from jobset.controller.events import EventRecorder


def generate_pvc_name(jobset_name: str, template_name: str) -> str:
    """``GeneratePVCName``: ``<template>-<jobset>``."""
    return f"{template_name}-{jobset_name}"


def reconcile_volume_claim_policies(client: Client, recorder: EventRecorder, js: Obj) -> None:
    """``reconcileVolumeClaimPolicies``: create every policy's PVCs; errors are joined."""
    errors = []
    for policy in spec_of(js).get("volumeClaimPolicies") or ():
        try:
            _create_pvcs_if_necessary(client, recorder, js, policy)
        except ApiError as err:
            errors.append(err.message)
    if errors:
        raise ReconcileError(join_errors(errors))


def _create_pvcs_if_necessary(client: Client, recorder: EventRecorder, js: Obj, policy: Obj) -> None:
    """``createPVCsIfNecessary``: stops at the first failing template of this policy."""
    retention = (policy.get("retentionPolicy") or {}).get("whenDeleted")
    for template in policy.get("templates") or ():
        template_meta = template.get("metadata") or {}
        labels = dict(template_meta.get("labels") or {})
        labels[api.JOBSET_NAME_KEY] = js["metadata"]["name"]
        meta: Obj = {
            "name": generate_pvc_name(js["metadata"]["name"], template_meta.get("name", "")),
            "namespace": js["metadata"].get("namespace", ""),
            "labels": labels,
        }
        if template_meta.get("annotations"):
            meta["annotations"] = dict(template_meta["annotations"])
        if retention == api.RETENTION_POLICY_DELETE:
            meta["ownerReferences"] = [owner_reference(js)]
        pvc = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": meta,
            "spec": clone(template.get("spec") or {}),
        }
        try:
            client.create(pvc)
        except AlreadyExists:
            pass
        except ApiError as err:
            recorder.eventf(
                js, None, EVENT_TYPE_WARNING, api.PVC_CREATION_FAILED_REASON, "Reconciling", err.message
            )
            raise


def add_volumes(job: Obj, js: Obj) -> None:
    """``addVolumes``: a PVC volume for each template this Job's containers mount by name."""
    pod_spec = job["spec"]["template"].setdefault("spec", {})
    for policy in spec_of(js).get("volumeClaimPolicies") or ():
        for template in policy.get("templates") or ():
            name = (template.get("metadata") or {}).get("name", "")
            if not _has_volume_mount(pod_spec, name):
                continue
            pod_spec["volumes"] = [
                *(pod_spec.get("volumes") or ()),
                {
                    "name": name,
                    "persistentVolumeClaim": {"claimName": generate_pvc_name(js["metadata"]["name"], name)},
                },
            ]


def _has_volume_mount(pod_spec: Obj, name: str) -> bool:
    """``hasVolumeMount``: a container or init container mounts ``name``."""
    for group in ("containers", "initContainers"):
        for container in pod_spec.get(group) or ():
            if any(mount.get("name") == name for mount in container.get("volumeMounts") or ()):
                return True
    return False
