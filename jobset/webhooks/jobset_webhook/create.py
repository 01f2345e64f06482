"""JobSet creation checks: ``jobSetWebhook.ValidateCreate`` in upstream ``pkg/webhooks/jobset_webhook.go``.

Every check, its order, its message and its field path follow upstream. Checks that upstream reports as a
plain ``fmt.Errorf`` become ``field.InternalError(nil, err)`` (``<nil>: Internal error: ...``), exactly as
upstream's ``toFieldErrorList`` does, so a client sees the same text a real cluster prints.

The object is the wire-form dict after defaulting. Fields read with Go zero values: an absent ``replicas``
is 0 here (the API server has already applied the CRD default of 1 when the webhook runs), an absent
``groupName`` is ``""``. Checks the CRD enforces (enums, minimums, CEL) live in
:mod:`jobset.api.v1alpha2.crd`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakecluster.api.errors import ApiError, FieldError, NotFound
from fakecluster.api.objects import Obj
from jobset.api.v1alpha2.jobset_types import COORDINATOR_KEY, GROUP, KIND
from jobset.features import FeatureGates
from jobset.webhooks.apimachinery import (
    MAX_INT32,
    byte_len,
    generate_name,
    internal_error,
    invalid,
    is_dns1035_label,
    is_dns1123_subdomain,
    is_domain_prefixed_path,
    is_label_value,
)

__all__ = ["PvcLookup", "job_set_name_for_validation", "validate_create"]

PvcLookup = Callable[[str, str], Obj | None]
"""``(namespace, name) -> PVC or None``; may raise :class:`ApiError` for errors other than NotFound.
Stands in for the webhook's ``client.Get`` of an existing PersistentVolumeClaim."""

MAX_MANAGED_BY_LENGTH = 63
MAX_VOLUME_CLAIM_LENGTH = 63
MAX_REPLICAS_PER_REPLICATED_JOB = 1024
"""Bounded by the 1024 ``maxItems`` of ``replicatedJobsStatus[].jobRestarts``."""
MIN_RULE_NAME_LENGTH = 1
MAX_RULE_NAME_LENGTH = 128
RULE_NAME_REGEXP = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
RESTART_JOB_ACTIONS = ("RestartJob", "RestartJobAndIgnoreMaxRestarts")
VALID_ON_JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
"""The ``reason`` values of a failed Job's ``Failed`` condition (k8s.io/api batch/v1)."""

# Messages, verbatim from upstream (str.format placeholders stand for the fmt verbs).
DNS1035_MAX_LENGTH_EXCEEDED_MSG = "must be no more than 63 characters"
GROUP_NAME_TOO_LONG_MSG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
JOB_NAME_TOO_LONG_MSG = ("JobSet name is too long, job names generated for this JobSet will exceed 63 "
                         "characters")
POD_NAME_TOO_LONG_MSG = ("JobSet name is too long, pod names generated for this JobSet will exceed 63 "
                         "characters")
SUBDOMAIN_TOO_LONG_MSG = ".spec.network.subdomain is too long, must be less than 63 characters"
IN_PLACE_GATE_MSG = ("InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is "
                     "disabled")
FIRST_DEPENDS_ON_MSG = "DependsOn can't be set for the first ReplicatedJob"
TOO_MANY_PODS_MSG = "the product of replicas and parallelism must not exceed {max} for replicatedJob '{name}'"
DEPENDS_ON_MSG = "replicatedJob: {name} cannot depend on replicatedJob: {dependency}"
BACKOFF_LIMIT_MSG = "replicatedJob {name}: must be set to {max} (MaxInt32) when in-place restart is enabled"
REPLACEMENT_POLICY_MSG = "replicatedJob {name}: must be set to Failed when in-place restart is enabled"
COMPLETIONS_MSG = ("replicatedJob {name}: completions and parallelism must be set and equal to each other "
                   "when in-place restart is enabled")
SUCCESS_TARGET_MSG = "invalid replicatedJob name '{name}' does not appear in .spec.ReplicatedJobs"
RESTART_JOB_GATE_MSG = ("RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not "
                        "allowed when RestartJob feature gate is disabled")
RESTART_JOB_REPLICAS_MSG = ("JobSet cannot have a failure policy rule with RestartJob or "
                            "RestartJobAndIgnoreMaxRestarts action and a replicated job with "
                            "replicas > {max}")
RULE_NAME_LENGTH_MSG = ("invalid failure policy rule name of length {length}, the rule name must be at "
                        "least {min} characters long and at most {max} characters long")
RULE_NAME_FORMAT_MSG = ("invalid failure policy rule name '{name}', a failure policy rule name must start "
                        "with an alphabetic character, optionally followed by a string of alphanumeric "
                        "characters or '_,:', and must end with an alphanumeric character or '_'")
RULE_TARGET_MSG = ("invalid replicatedJob name '{name}' in failure policy does not appear in "
                   ".spec.ReplicatedJobs")
RULE_REASON_MSG = ("invalid job failure reason '{reason}' in failure policy is not a recognized job failure "
                   "reason")
RULE_NAMES_NOT_UNIQUE_MSG = ("rule names are not unique, rules with indices [{indices}] all have the same "
                             "name '{name}'")
COORDINATOR_RJOB_MSG = "coordinator replicatedJob {rjob} does not exist"
COORDINATOR_JOB_INDEX_MSG = "coordinator job index {index} is invalid for replicatedJob {rjob}"
COORDINATOR_INDEXED_MSG = ("job for coordinator pod must be indexed completion mode, and completions number "
                           "must be set")
COORDINATOR_POD_INDEX_MSG = ("coordinator pod index {index} is invalid for replicatedJob {rjob} job index "
                             "{job_index}")
COORDINATOR_LABEL_MSG = ('spec will lead to invalid label value "{value}" for coordinator label "{key}" '
                         "(long JobSet / ReplicatedJob / SubDomain name?): {errors}")
PVC_NAME_NOT_UNIQUE_MSG = "names must be unique for VolumeClaimPolicies template"
PVC_NAME_TOO_LONG_MSG = "VolumeClaimPolicies template name is too long"
PVC_SPEC_MISMATCH_MSG = "spec does not match existing PVC {pvc} in namespace {namespace}"
PVC_RETAIN_MSG = "retentionPolicy must be retain when PVC exists"
PVC_LOOKUP_FAILED_MSG = "failed to check for existing PVC {pvc}: {error}"
VOLUME_CONFLICT_MSG = "volume name conflicts with VolumeClaimPolicy template name: {name}"
NO_VOLUME_MOUNT_MSG = ("replicatedJob containers don't have a matching volumeMount: {name} from "
                       "VolumeClaimPolicies")


def _spec(js: Obj) -> Obj:
    return js.get("spec") or {}


def _job_spec(rjob: Obj) -> Obj:
    return (rjob.get("template") or {}).get("spec") or {}


def _pod_spec(rjob: Obj) -> Obj:
    return (_job_spec(rjob).get("template") or {}).get("spec") or {}


def _replace_too_long(messages: list[str], replacement: str) -> list[str]:
    return [replacement if DNS1035_MAX_LENGTH_EXCEEDED_MSG in msg else msg for msg in messages]


def gen_job_name(js_name: str, rjob_name: str, job_index: int) -> str:
    """placement.GenJobName."""
    return f"{js_name}-{rjob_name}-{job_index}"


def job_set_name_for_validation(js: Obj, rng: random.Random) -> str:
    """getJobSetNameForValidation: the name, or what the API server would generate from generateName."""
    meta = js.get("metadata") or {}
    if meta.get("name"):
        return str(meta["name"])
    if meta.get("generateName"):
        return generate_name(str(meta["generateName"]), rng)
    return ""


def validate_create(
    obj: Obj, gates: FeatureGates, rng: random.Random, pvc_lookup: PvcLookup | None = None
) -> None:
    """Raise ``Invalid`` (422) listing every violation, or return if the JobSet may be created.

    ``rng`` draws the 5 random characters of a ``generateName`` name; ``pvc_lookup`` answers the
    existing-PVC check of volumeClaimPolicies (None: no PVC exists).
    """
    errs = _validate_create(obj, gates, rng, pvc_lookup)
    if errs:
        raise invalid(KIND, GROUP, str((obj.get("metadata") or {}).get("name") or ""), errs)


def _validate_create(
    js: Obj, gates: FeatureGates, rng: random.Random, pvc_lookup: PvcLookup | None
) -> list[FieldError]:
    spec = _spec(js)
    rjobs: list[Obj] = spec.get("replicatedJobs") or []
    errs: list[FieldError] = []
    js_name = job_set_name_for_validation(js, rng)
    failure_policy = spec.get("failurePolicy")
    in_place = failure_policy is not None and failure_policy.get("restartStrategy") == "InPlaceRestart"

    if not gates.in_place_restart and in_place:
        errs.append(internal_error(IN_PLACE_GATE_MSG))
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errs.append(internal_error(FIRST_DEPENDS_ON_MSG))
    errs += _validate_subdomain(spec)
    if spec.get("managedBy") is not None:
        manager = str(spec["managedBy"])
        errs += is_domain_prefixed_path("spec.managedBy", manager)
        if byte_len(manager) > MAX_MANAGED_BY_LENGTH:
            errs.append(FieldError.too_long("spec.managedBy", manager, MAX_MANAGED_BY_LENGTH))

    rjob_names: set[str] = set()
    for index, rjob in enumerate(rjobs):
        rjob_names.add(str(rjob.get("name") or ""))
        errs += _validate_replicated_job(js_name, index, rjob, rjob_names)
        if gates.in_place_restart and in_place:
            errs += _validate_in_place_restart(index, rjob)

    for target in (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or ():
        if target not in rjob_names:
            errs.append(internal_error(SUCCESS_TARGET_MSG.format(name=target)))
    if failure_policy is not None:
        errs += validate_failure_policy(js, rjob_names, gates)
    if spec.get("coordinator") is not None:
        for problem in (validate_coordinator(js), validate_coordinator_label_value(js, js_name)):
            if problem is not None:
                errs.append(internal_error(problem))
    if spec.get("volumeClaimPolicies"):
        errs += validate_volume_claim_policies(js, js_name, pvc_lookup)
    return errs


def _validate_subdomain(spec: Obj) -> list[FieldError]:
    """A subdomain is a DNS name and, as the headless Service's name, also a DNS-1035 label."""
    subdomain = (spec.get("network") or {}).get("subdomain") or ""
    if not subdomain:
        return []
    path = "spec.network.subdomain"
    errs = [FieldError.invalid(path, subdomain, msg) for msg in is_dns1123_subdomain(subdomain)]
    for msg in _replace_too_long(is_dns1035_label(subdomain), SUBDOMAIN_TOO_LONG_MSG):
        errs.append(FieldError.invalid(path, subdomain, msg))
    return errs


def _validate_replicated_job(js_name: str, index: int, rjob: Obj, rjob_names: set[str]) -> list[FieldError]:
    """Pod count, group name, generated Job and pod names, and dependsOn references of one rjob."""
    path = f"spec.replicatedJobs[{index}]"
    name = str(rjob.get("name") or "")
    replicas = int(rjob.get("replicas") or 0)
    job_spec = _job_spec(rjob)
    errs: list[FieldError] = []

    parallelism = job_spec.get("parallelism")
    if (1 if parallelism is None else parallelism) * replicas > MAX_INT32:
        errs.append(internal_error(TOO_MANY_PODS_MSG.format(max=MAX_INT32, name=name)))
    group_name = str(rjob.get("groupName") or "")
    for msg in _replace_too_long(is_dns1035_label(group_name), GROUP_NAME_TOO_LONG_MSG):
        errs.append(FieldError.invalid(f"{path}.groupName", group_name, msg))
    longest_job_name = gen_job_name(js_name, name, replicas - 1)
    for msg in _replace_too_long(is_dns1035_label(longest_job_name), JOB_NAME_TOO_LONG_MSG):
        errs.append(FieldError.invalid(f"{path}.name", longest_job_name, msg))
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") == "Indexed" and completions is not None:
        # placement.GenPodName plus the 5-character suffix the Job controller appends; upstream reports
        # the failure with the longest *job* name as the value.
        longest_pod_name = f"{js_name}-{name}-{replicas - 1}-{completions - 1}-abcde"
        for msg in _replace_too_long(is_dns1035_label(longest_pod_name), POD_NAME_TOO_LONG_MSG):
            errs.append(FieldError.invalid(f"{path}.name", longest_job_name, msg))
    for dependency in rjob.get("dependsOn") or ():
        if dependency.get("name") not in rjob_names:
            errs.append(internal_error(DEPENDS_ON_MSG.format(name=name, dependency=dependency.get("name"))))
    return errs


def _validate_in_place_restart(index: int, rjob: Obj) -> list[FieldError]:
    """InPlaceRestart needs Jobs that never fail nor replace pods on their own, with a fixed pod count."""
    path = f"spec.replicatedJobs[{index}].template.spec"
    name = rjob.get("name") or ""
    job_spec = _job_spec(rjob)
    errs = []
    backoff_limit = job_spec.get("backoffLimit")
    if backoff_limit != MAX_INT32:
        errs.append(FieldError.invalid(f"{path}.backoffLimit", backoff_limit,
                                       BACKOFF_LIMIT_MSG.format(name=name, max=MAX_INT32)))
    replacement = job_spec.get("podReplacementPolicy")
    if replacement != "Failed":
        errs.append(FieldError.invalid(f"{path}.podReplacementPolicy", replacement,
                                       REPLACEMENT_POLICY_MSG.format(name=name)))
    completions, parallelism = job_spec.get("completions"), job_spec.get("parallelism")
    if completions is None or parallelism is None or completions != parallelism:
        errs.append(FieldError.invalid(f"{path}.completions", completions, COMPLETIONS_MSG.format(name=name)))
    return errs


def validate_failure_policy(js: Obj, rjob_names: set[str], gates: FeatureGates) -> list[FieldError]:
    """validateFailurePolicy: gate and replica limits of RestartJob actions, then each rule."""
    spec = _spec(js)
    rules: list[Obj] = (spec.get("failurePolicy") or {}).get("rules") or []
    errs: list[FieldError] = []
    if any(rule.get("action") in RESTART_JOB_ACTIONS for rule in rules):
        if not gates.restart_job:
            return [internal_error(RESTART_JOB_GATE_MSG)]  # upstream returns early here
        replicas = (int(rjob.get("replicas") or 0) for rjob in spec.get("replicatedJobs") or ())
        if any(r > MAX_REPLICAS_PER_REPLICATED_JOB for r in replicas):
            errs.append(internal_error(RESTART_JOB_REPLICAS_MSG.format(max=MAX_REPLICAS_PER_REPLICATED_JOB)))

    indices_by_name: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        name = str(rule.get("name") or "")
        length = byte_len(name)
        if not MIN_RULE_NAME_LENGTH <= length <= MAX_RULE_NAME_LENGTH:
            errs.append(internal_error(RULE_NAME_LENGTH_MSG.format(
                length=length, min=MIN_RULE_NAME_LENGTH, max=MAX_RULE_NAME_LENGTH)))
        indices_by_name.setdefault(name, []).append(index)
        if not RULE_NAME_REGEXP.fullmatch(name):
            errs.append(internal_error(RULE_NAME_FORMAT_MSG.format(name=name)))
        for target in rule.get("targetReplicatedJobs") or ():
            if target not in rjob_names:
                errs.append(internal_error(RULE_TARGET_MSG.format(name=target)))
        for reason in rule.get("onJobFailureReasons") or ():
            if reason not in VALID_ON_JOB_FAILURE_REASONS:
                errs.append(internal_error(RULE_REASON_MSG.format(reason=reason)))
    # Upstream walks a Go map here (random order); first-appearance order keeps runs deterministic.
    for name, indices in indices_by_name.items():
        if len(indices) > 1:
            listed = " ".join(str(i) for i in indices)  # Go's %v of []int: [0 1]
            errs.append(internal_error(RULE_NAMES_NOT_UNIQUE_MSG.format(indices=listed, name=name)))
    return errs


def validate_coordinator(js: Obj) -> str | None:
    """validateCoordinator: the first problem with the coordinator's rjob / job index / pod index."""
    coordinator = _spec(js).get("coordinator") or {}
    target = coordinator.get("replicatedJob") or ""
    job_index = int(coordinator.get("jobIndex") or 0)
    pod_index = int(coordinator.get("podIndex") or 0)
    rjob = next((r for r in _spec(js).get("replicatedJobs") or () if r.get("name") == target), None)
    if rjob is None:
        return COORDINATOR_RJOB_MSG.format(rjob=target)
    if job_index < 0 or job_index >= int(rjob.get("replicas") or 0):
        return COORDINATOR_JOB_INDEX_MSG.format(index=job_index, rjob=rjob.get("name"))
    job_spec = _job_spec(rjob)
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") != "Indexed" or completions is None:
        return COORDINATOR_INDEXED_MSG
    if pod_index < 0 or pod_index >= completions:
        return COORDINATOR_POD_INDEX_MSG.format(index=pod_index, rjob=target, job_index=job_index)
    return None


def coordinator_endpoint(js: Obj, js_name: str) -> str:
    """controllers.CoordinatorEndpoint: ``<js>-<rjob>-<jobIndex>-<podIndex>.<subdomain>``.

    ``GetSubdomain``: the network subdomain, or the JobSet name when it is empty.
    """
    spec = _spec(js)
    coordinator = spec.get("coordinator") or {}
    subdomain = (spec.get("network") or {}).get("subdomain") or js_name
    rjob = coordinator.get("replicatedJob") or ""
    job_index, pod_index = int(coordinator.get("jobIndex") or 0), int(coordinator.get("podIndex") or 0)
    return f"{js_name}-{rjob}-{job_index}-{pod_index}.{subdomain}"


def validate_coordinator_label_value(js: Obj, js_name: str) -> str | None:
    """validateCoordinatorLabelValue: the endpoint becomes a label value, so it must be one.

    Go's ``%q`` quoting is plain double quotes for the DNS-shaped values that reach it.
    """
    value = coordinator_endpoint(js, js_name)
    problems = is_label_value(value)
    if not problems:
        return None
    return COORDINATOR_LABEL_MSG.format(value=value, key=COORDINATOR_KEY, errors=", ".join(problems))


@dataclass(frozen=True, slots=True)
class _ClaimTemplate:
    """One ``volumeClaimPolicies[p].templates[t]`` with the paths upstream reports it under."""

    policy: Obj
    template: Obj
    policy_path: str
    path: str
    """``spec.volumeClaimPolicies[p].template[t]``: upstream writes ``template``, not ``templates``."""
    name: str


def validate_volume_claim_policies(js: Obj, js_name: str, pvc_lookup: PvcLookup | None) -> list[FieldError]:
    """validateVolumeClaimPolicies: unique, valid, short PVC names that some container mounts, and a
    matching spec plus ``Retain`` when the PVC already exists."""
    errs: list[FieldError] = []
    claim_names: set[str] = set()
    namespace = str((js.get("metadata") or {}).get("namespace") or "")
    for policy_index, policy in enumerate(_spec(js).get("volumeClaimPolicies") or ()):
        policy_path = f"spec.volumeClaimPolicies[{policy_index}]"
        for template_index, template in enumerate(policy.get("templates") or ()):
            name = str((template.get("metadata") or {}).get("name") or "")
            claim_path = f"{policy_path}.template[{template_index}]"
            claim = _ClaimTemplate(policy, template, policy_path, claim_path, name)
            if name in claim_names:
                errs.append(FieldError.invalid(f"{claim.path}.name", name, PVC_NAME_NOT_UNIQUE_MSG))
            for msg in is_dns1123_subdomain(name):
                errs.append(FieldError.invalid(f"{claim.path}.name", name, msg))
            pvc_name = f"{name}-{js_name}"  # controllers.GeneratePVCName
            if byte_len(pvc_name) > MAX_VOLUME_CLAIM_LENGTH:
                errs.append(FieldError.invalid(f"{claim.path}.name", name, PVC_NAME_TOO_LONG_MSG))
            errs += _validate_replicated_jobs_volume_claims(_spec(js).get("replicatedJobs") or [], name)
            errs += _validate_existing_pvc(claim, namespace, pvc_name, pvc_lookup)
            claim_names.add(name)
    return errs


def _validate_existing_pvc(
    claim: _ClaimTemplate, namespace: str, pvc_name: str, pvc_lookup: PvcLookup | None
) -> list[FieldError]:
    """A PVC that already exists is adopted only if it matches the template and will be retained."""
    try:
        existing = pvc_lookup(namespace, pvc_name) if pvc_lookup is not None else None
    except NotFound:
        return []
    except ApiError as err:
        return [FieldError.internal(claim.path, PVC_LOOKUP_FAILED_MSG.format(pvc=pvc_name, error=err))]
    if existing is None:
        return []
    errs = []
    template_spec: Any = claim.template.get("spec") or {}
    if (existing.get("spec") or {}) != template_spec:
        errs.append(FieldError.invalid(f"{claim.path}.spec", template_spec,
                                       PVC_SPEC_MISMATCH_MSG.format(pvc=pvc_name, namespace=namespace)))
    retention = claim.policy.get("retentionPolicy")
    if retention is not None and retention.get("whenDeleted") != "Retain":
        errs.append(FieldError.invalid(f"{claim.policy_path}.retentionPolicy.whenDeleted",
                                       retention.get("whenDeleted"), PVC_RETAIN_MSG))
    return errs


def _validate_replicated_jobs_volume_claims(rjobs: list[Obj], claim_name: str) -> list[FieldError]:
    """validateReplicatedJobsVolumeClaims: no pod volume shadows the claim, and some container mounts it."""
    errs: list[FieldError] = []
    has_matching_mount = False
    for index, rjob in enumerate(rjobs):
        pod_spec = _pod_spec(rjob)
        for volume_index, volume in enumerate(pod_spec.get("volumes") or ()):
            if volume.get("name") == claim_name:
                path = f"spec.replicatedJobs[{index}].template.spec.template.spec.volumes[{volume_index}]"
                path += ".name"
                errs.append(FieldError.invalid(path, claim_name, VOLUME_CONFLICT_MSG.format(name=claim_name)))
        containers = [*(pod_spec.get("initContainers") or ()), *(pod_spec.get("containers") or ())]
        if any(mount.get("name") == claim_name for c in containers for mount in c.get("volumeMounts") or ()):
            has_matching_mount = True
    if not has_matching_mount:
        detail = NO_VOLUME_MOUNT_MSG.format(name=claim_name)
        errs.append(FieldError.invalid("spec.replicatedJobs", rjobs, detail))
    return errs
