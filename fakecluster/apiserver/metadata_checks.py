"""What the API server checks in ``metadata`` before it touches the store: types first, then names.

A real API server decodes the body into Go structs, so a ``namespace: 5`` or ``labels: [a]`` never
reaches the registry: the decoder answers 400 (``json: cannot unmarshal number into Go struct field
ObjectMeta.metadata.namespace of type string``). The store here keeps plain dicts, so the same check is
made by hand on every field the server indexes or stores by (name, generateName, namespace, labels,
annotations, finalizers, ownerReferences, resourceVersion, uid): an object that passed is safe to key,
index and list. Then ``ValidateObjectMeta`` (``staging/src/k8s.io/apimachinery/pkg/api/validation/
objectmeta.go``) with the per-kind name rule: namespaces are DNS-1123 labels (``ValidateNamespaceName``),
Services DNS-1035 labels (``ValidateServiceName``), everything else DNS-1123 subdomains; label keys and
values as ``ValidateLabels`` (``pkg/apis/meta/v1/validation/validation.go``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakecluster.api import errors
from fakecluster.api.errors import FieldError
from fakecluster.api.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

__all__ = [
    "MAX_GRACE_PERIOD_SECONDS", "SPECIAL_NAME_KINDS", "check_delete_options", "check_metadata_types",
    "job_name_errors", "label_errors", "name_errors", "namespace_errors",
]  # fmt: skip

MAX_GRACE_PERIOD_SECONDS = (2**63 - 1) // 10**9
"""The longest grace period a deletion timestamp can carry: ``time.Duration(s) * time.Second`` overflows
int64 beyond it in Go (about 292 years), wrapping to a deadline in the past."""

_GO_TYPES = {str: "string", dict: "map[string]string", list: "[]string", bool: "bool"}
_STRING_FIELDS = ("name", "generateName", "namespace", "resourceVersion", "uid")
_REFERENCE_STRINGS = ("apiVersion", "kind", "name", "uid")
_REFERENCE_BOOLS = ("controller", "blockOwnerDeletion")
_NAME_RULES: dict[str, Callable[[str], list[str]]] = {
    "Service": is_dns1035_label, "Namespace": is_dns1123_label,
}  # fmt: skip
"""Kinds whose names are not DNS-1123 subdomains (``ValidateServiceName``, ``ValidateNamespaceName``)."""
SPECIAL_NAME_KINDS = frozenset(_NAME_RULES)
_valid_label_pairs: dict[tuple[str, str], None] = {}
"""Label pairs already found valid: JobSet pods carry ~17 labels that repeat across thousands of pods."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _unmarshal(value: Any, go_field: str, go_type: str) -> errors.ApiError:
    return errors.BadRequest(
        f"json: cannot unmarshal {_json_type(value)} into Go struct field {go_field} of type {go_type}"
    )


def check_spec_type(obj: dict[str, Any], kind: str, go_spec_type: str | None) -> None:
    """Raise 400 BadRequest, as the JSON decoder would, when a built-in kind's ``spec`` is not an object
    (``json: cannot unmarshal number into Go struct field Pod.spec of type v1.PodSpec``): before
    admission, whose plugins and webhooks read the spec as the decoded struct (``go_spec_type``: None
    for a custom resource, whose schema check answers instead)."""
    if go_spec_type is None:
        return
    spec = obj.get("spec")
    if spec is not None and type(spec) is not dict:
        raise _unmarshal(spec, f"{kind}.spec", go_spec_type)


def check_metadata_types(
    meta: Any, stored: dict[str, Any] | None = None, *, names_only: bool = False
) -> None:
    """Raise 400 BadRequest, as the JSON decoder would, for any stored metadata field of the wrong type.

    Hot path (every write): parts shared with the ``stored`` metadata (copy-on-write writes keep the
    stored labels and references) passed this check when stored, and so did the stored metadata itself
    (the kubelet's status writes send it back as it is); ``names_only`` checks only the string fields a
    status write reads."""
    if meta is stored:
        return
    if not isinstance(meta, dict):
        raise _unmarshal(meta, "Object.metadata", "v1.ObjectMeta")
    for key in _STRING_FIELDS:
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            raise _unmarshal(value, f"ObjectMeta.metadata.{key}", "string")
    if names_only:
        return
    stored = stored or {}
    for key in ("labels", "annotations"):
        mapping = meta.get(key)
        if mapping is None or mapping is stored.get(key):
            continue
        if not isinstance(mapping, dict):
            raise _unmarshal(mapping, f"ObjectMeta.metadata.{key}", "map[string]string")
        for k, v in mapping.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise _unmarshal(v, f"ObjectMeta.metadata.{key}", "string")
    finalizers = meta.get("finalizers")
    if finalizers is not None and finalizers is not stored.get("finalizers"):
        if not isinstance(finalizers, list):
            raise _unmarshal(finalizers, "ObjectMeta.metadata.finalizers", "[]string")
        for item in finalizers:
            if not isinstance(item, str):
                raise _unmarshal(item, "ObjectMeta.metadata.finalizers", "string")
    refs = meta.get("ownerReferences")
    if refs is not None and refs is not stored.get("ownerReferences"):
        if not isinstance(refs, list):
            raise _unmarshal(refs, "ObjectMeta.metadata.ownerReferences", "[]v1.OwnerReference")
        for ref in refs:
            _check_reference(ref)


def _check_reference(ref: Any) -> None:
    if not isinstance(ref, dict):
        raise _unmarshal(ref, "ObjectMeta.metadata.ownerReferences", "v1.OwnerReference")
    for key in _REFERENCE_STRINGS:
        value = ref.get(key)
        if value is not None and not isinstance(value, str):
            raise _unmarshal(value, f"OwnerReference.metadata.ownerReferences.{key}", "string")
    for key in _REFERENCE_BOOLS:
        value = ref.get(key)
        if value is not None and not isinstance(value, bool):
            raise _unmarshal(value, f"OwnerReference.metadata.ownerReferences.{key}", "bool")


def name_errors(kind: str, name: str, path: str = "metadata.name") -> list[FieldError]:
    """The kind's name rule (``ValidateObjectMeta``'s ``nameFn``), one ``Invalid`` per message."""
    rule = _NAME_RULES.get(kind, is_dns1123_subdomain)
    return [FieldError.invalid(path, name, message) for message in rule(name)]


def namespace_errors(namespace: str) -> list[FieldError]:
    """``ValidateNamespaceName`` on ``metadata.namespace``."""
    return [FieldError.invalid("metadata.namespace", namespace, m) for m in is_dns1123_label(namespace)]


def label_errors(labels: dict[str, str] | None, path: str = "metadata.labels") -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value."""
    errs: list[FieldError] = []
    for pair in (labels or {}).items():
        if pair in _valid_label_pairs:
            continue
        key, value = pair
        found = [FieldError.invalid(path, key, m) for m in is_qualified_name(key)]
        found += [FieldError.invalid(path, value, m) for m in is_valid_label_value(value)]
        if found:
            errs.extend(found)
        elif len(_valid_label_pairs) < 65536:
            _valid_label_pairs[pair] = None
    return errs


def check_delete_options(grace_period_seconds: Any, preconditions: Any) -> None:
    """``DeleteOptions`` fields of the wrong type are a 400, as decoding them is; a grace period longer
    than a deletion timestamp can express is refused before anything is written."""
    if grace_period_seconds is not None:
        if isinstance(grace_period_seconds, bool) or not isinstance(grace_period_seconds, int):
            raise _unmarshal(grace_period_seconds, "DeleteOptions.gracePeriodSeconds", "int64")
        if grace_period_seconds > MAX_GRACE_PERIOD_SECONDS:
            raise errors.BadRequest(
                f"gracePeriodSeconds: Invalid value: {grace_period_seconds}: must be no more than"
                f" {MAX_GRACE_PERIOD_SECONDS} (the longest time.Duration in seconds)"
            )
    if preconditions is not None and not isinstance(preconditions, dict):
        raise _unmarshal(preconditions, "DeleteOptions.preconditions", "v1.Preconditions")
    for key in ("uid", "resourceVersion"):
        value = (preconditions or {}).get(key)
        if value is not None and not isinstance(value, str):
            raise _unmarshal(value, f"Preconditions.preconditions.{key}", "string")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def job_name_errors(job: dict[str, Any]) -> list[FieldError]:
    """The Job rules that bound its name by its pods' (``pkg/apis/batch/validation/validation.go``):
    the pod template's labels, which now carry ``job-name`` = the Job's name, must be valid label values
    (``ValidatePodTemplateSpec`` -> ``spec.template.labels``, so 63 characters at most); an Indexed Job's
    longest pod hostname ``<name>-<completions-1>`` must be a DNS-1123 label."""
    spec = _mapping(job.get("spec"))
    template_meta = _mapping(_mapping(spec.get("template")).get("metadata"))
    labels = template_meta.get("labels")
    errs = label_errors(labels, "spec.template.labels") if isinstance(labels, dict) else []
    completions = spec.get("completions")
    name = job["metadata"].get("name", "")
    if spec.get("completionMode") == "Indexed" and isinstance(completions, int) and completions > 0:
        hostname = f"{name}-{completions - 1}"
        if is_dns1123_label(hostname):
            errs.append(FieldError.invalid(
                "metadata.name", name, f"will not able to create pod with invalid DNS label: {hostname}"
            ))
    return errs
