"""What the API server does for JobSets because of the CRD: defaults, list-type invariants and CEL rules.

Python twin of the generated ``config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml`` as enforced by
k8s.io/apiextensions-apiserver (``pkg/apiserver/schema/defaulting``, ``.../schema/listtype/validation.go``,
``.../schema/cel/validation.go``). The OpenAPI part of the schema (types, enums, ``minimum``,
``maxItems``, required fields) is the pydantic model :class:`jobset.api.v1alpha2.jobset_types.JobSet`, which
:func:`fakecluster.api.validation.validate_model` turns into the same field errors.

Every ``default`` in the CRD is listed in :data:`CRD_DEFAULTS`, the JobSet's own (``replicas: 1``,
``groupName: default``, ``restartStrategy: Recreate``, ``whenDeleted: Delete``) and the ones controller-gen
copied from the embedded core/v1 types (``ports[].protocol: TCP``, ``secretRef.name: ""``...).

Known differences from a real API server, all about *which* errors one response lists, never about
whether a request is accepted:

- A real server applies CRD defaults when it decodes the request, before the mutating webhook; here they
  run after it (``prepare_for_create``). The webhook's defaults and the CRD's touch disjoint fields, so
  the stored object is the same.
- A real server lists schema errors together with list-type and CEL errors (CEL is skipped, with a note,
  only after "blocking" schema errors); here schema errors are answered alone.
- CRD validation ratcheting (unchanged invalid values pass an update) is not reproduced.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.resources import Strategy

__all__ = [
    "CRD_DEFAULTS", "LIST_TYPES", "CelRuleError", "JobSetStrategy", "apply_crd_defaults", "find", "find_each",
]

_POD = "spec.replicatedJobs[].template.spec.template.spec"


def _container_defaults(group: str) -> list[tuple[str, str, Any]]:
    c = f"{_POD}.{group}[]"
    return [
        (f"{c}.env[].valueFrom.configMapKeyRef", "name", ""),
        (f"{c}.env[].valueFrom.fileKeyRef", "optional", False),
        (f"{c}.env[].valueFrom.secretKeyRef", "name", ""),
        (f"{c}.envFrom[].configMapRef", "name", ""),
        (f"{c}.envFrom[].secretRef", "name", ""),
        (f"{c}.livenessProbe.grpc", "service", ""),
        (f"{c}.ports[]", "protocol", "TCP"),
        (f"{c}.readinessProbe.grpc", "service", ""),
        (f"{c}.startupProbe.grpc", "service", ""),
    ]


CRD_DEFAULTS: tuple[tuple[str, str, Any], ...] = (
    ("spec.failurePolicy", "restartStrategy", "Recreate"),
    ("spec.replicatedJobs[]", "groupName", "default"),
    ("spec.replicatedJobs[]", "replicas", 1),
    ("spec.volumeClaimPolicies[].retentionPolicy", "whenDeleted", "Delete"),
    *_container_defaults("containers"),
    *_container_defaults("ephemeralContainers"),
    *_container_defaults("initContainers"),
    (f"{_POD}.imagePullSecrets[]", "name", ""),
    (f"{_POD}.volumes[].azureDisk", "fsType", "ext4"),
    (f"{_POD}.volumes[].azureDisk", "readOnly", False),
    (f"{_POD}.volumes[].cephfs.secretRef", "name", ""),
    (f"{_POD}.volumes[].cinder.secretRef", "name", ""),
    (f"{_POD}.volumes[].configMap", "name", ""),
    (f"{_POD}.volumes[].csi.nodePublishSecretRef", "name", ""),
    (f"{_POD}.volumes[].flexVolume.secretRef", "name", ""),
    (f"{_POD}.volumes[].iscsi", "iscsiInterface", "default"),
    (f"{_POD}.volumes[].iscsi.secretRef", "name", ""),
    (f"{_POD}.volumes[].projected.sources[].configMap", "name", ""),
    (f"{_POD}.volumes[].projected.sources[].secret", "name", ""),
    (f"{_POD}.volumes[].rbd", "keyring", "/etc/ceph/keyring"),
    (f"{_POD}.volumes[].rbd", "pool", "rbd"),
    (f"{_POD}.volumes[].rbd.secretRef", "name", ""),
    (f"{_POD}.volumes[].rbd", "user", "admin"),
    (f"{_POD}.volumes[].scaleIO", "fsType", "xfs"),
    (f"{_POD}.volumes[].scaleIO.secretRef", "name", ""),
    (f"{_POD}.volumes[].scaleIO", "storageMode", "ThinProvisioned"),
    (f"{_POD}.volumes[].storageos.secretRef", "name", ""),
)
"""``(object path, field, default)``: the CRD sets ``field`` in every object found at the path (``[]``
walks a list) when the field is absent or null. Defaults never create the enclosing object."""
_DEFAULT_PATHS = tuple(dict.fromkeys(path for path, _, _ in CRD_DEFAULTS))


def _container_list_types(group: str) -> list[tuple[str, tuple[str, ...] | None]]:
    c = f"{_POD}.{group}"
    return [
        (c, ("name",)),
        (f"{c}[].env", ("name",)),
        (f"{c}[].ports", ("containerPort", "protocol")),
        (f"{c}[].resources.claims", ("name",)),
        (f"{c}[].restartPolicyRules[].exitCodes.values", None),
        (f"{c}[].volumeDevices", ("devicePath",)),
        (f"{c}[].volumeMounts", ("mountPath",)),
    ]


LIST_TYPES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("spec.replicatedJobs", ("name",)),
    ("spec.replicatedJobs[].dependsOn", ("name",)),
    ("spec.replicatedJobs[].template.spec.podFailurePolicy.rules[].onExitCodes.values", None),
    *_container_list_types("containers"),
    *_container_list_types("ephemeralContainers"),
    (f"{_POD}.hostAliases", ("ip",)),
    (f"{_POD}.imagePullSecrets", ("name",)),
    *_container_list_types("initContainers"),
    (f"{_POD}.resourceClaims", ("name",)),
    (f"{_POD}.resources.claims", ("name",)),
    (f"{_POD}.schedulingGates", ("name",)),
    (f"{_POD}.topologySpreadConstraints", ("topologyKey", "whenUnsatisfiable")),
    (f"{_POD}.volumes", ("name",)),
    ("spec.volumeClaimPolicies[].templates[].status.conditions", ("type",)),
)
"""``x-kubernetes-list-type``: ``map`` lists with their key fields, ``set`` lists with ``None``."""

STATUS_LIST_TYPES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("status.conditions", ("type",)),
    ("status.replicatedJobsStatus", ("name",)),
)

EMBEDDED_METADATA = (
    "spec.replicatedJobs[].template.metadata",
    "spec.replicatedJobs[].template.spec.template.metadata",
    "spec.volumeClaimPolicies[].templates[].metadata",
)
"""Embedded ``ObjectMeta`` (controller-gen ``generateEmbeddedObjectMeta``): only
:data:`EMBEDDED_METADATA_FIELDS` are in the schema; anything else is an unknown field."""
EMBEDDED_METADATA_FIELDS = frozenset({"annotations", "finalizers", "labels", "name", "namespace"})

MUTUALLY_EXCLUSIVE_MESSAGE = "StartupPolicy and DependsOn APIs are mutually exclusive"
IMMUTABLE_MESSAGE = "Value is immutable"
PVC_NAMESPACE_MESSAGE = "namespace cannot be set for VolumeClaimPolicies templates"
IMMUTABLE_SPEC_FIELDS = ("network", "successPolicy", "failurePolicy", "startupPolicy", "volumeClaimPolicies")
"""Spec fields with the CEL rule ``self == oldSelf``; ``replicatedJobs[].dependsOn`` has it too."""


@dataclass(frozen=True, slots=True)
class CelRuleError(FieldError):
    """A failed CEL rule on an object or array: ``field.Invalid`` with ``field.OmitValueType{}``.

    Since Kubernetes 1.34 such errors omit the value: ``spec.network: Invalid value: Value is immutable``.
    """

    def __str__(self) -> str:
        prefix = f"{self.field}: " if self.field else ""
        return f"{prefix}Invalid value: {self.detail}"


@cache
def _steps(path: str) -> tuple[tuple[str, bool], ...]:
    """A schema path as (field name, is it a list of items) steps, parsed once per path."""
    return tuple((segment.removesuffix("[]"), segment.endswith("[]")) for segment in path.split("."))


Found = list[tuple[str, Any]]
"""The values at one schema path, with their field paths, in document order."""


@dataclass(slots=True)
class _PathTree:
    """Schema paths sharing their first steps, as a tree of steps: walked once for all of them."""

    ends: list[str] = field(default_factory=list)
    """The paths that end at this step."""
    below: dict[tuple[str, bool], _PathTree] = field(default_factory=dict)


@cache
def _path_tree(paths: tuple[str, ...]) -> _PathTree:
    root = _PathTree()
    for path in paths:
        node = root
        for step in _steps(path):
            node = node.below.setdefault(step, _PathTree())
        node.ends.append(path)
    return root


def find_each(obj: Obj, paths: tuple[str, ...]) -> dict[str, Found]:
    """:func:`find` for every path in ``paths`` at once: the paths that share their first steps (most of
    a JobSet's fifty start with the seven of its pod template) walk them once, and a path whose first
    steps lead nowhere costs nothing more. Paths that find nothing are absent."""
    found: dict[str, Found] = {}
    _walk(_path_tree(paths), [("", obj)], found)
    return found


def _walk(tree: _PathTree, level: Found, found: dict[str, Found]) -> None:
    for (name, items), subtree in tree.below.items():
        below: Found = []
        for at, node in level:
            if not isinstance(node, dict):
                continue
            child = node.get(name)
            child_path = f"{at}.{name}" if at else name
            if items:
                if isinstance(child, list):
                    below.extend((f"{child_path}[{index}]", item) for index, item in enumerate(child))
            elif child is not None:
                below.append((child_path, child))
        if below:
            for path in subtree.ends:
                found[path] = below
            _walk(subtree, below, found)


def find(obj: Obj, path: str) -> Iterator[tuple[str, Any]]:
    """Values at a schema path such as ``spec.replicatedJobs[].dependsOn``, with their field paths, in
    document order (depth first). Walked one level at a time: every create and update of a JobSet walks
    some fifty such paths (defaults, list types, embedded metadata), most of them to nothing, which is
    why they are walked together (:func:`find_each`)."""
    return iter(find_each(obj, (path,)).get(path, ()))


def _prune_nulls(value: Any) -> Any:
    """Structural pruning: a ``null`` in a non-nullable field (every JobSet field) is dropped."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


def apply_crd_defaults(obj: Obj) -> None:
    """Prune nulls from ``spec`` and apply :data:`CRD_DEFAULTS` to ``obj`` in place."""
    if isinstance(obj.get("spec"), dict):
        obj["spec"] = _prune_nulls(obj["spec"])
    # Walked once before any default is set: no default's key is a step of another default's path, so
    # a default set cannot change what a later path finds.
    found = find_each(obj, _DEFAULT_PATHS)
    for parent_path, key, value in CRD_DEFAULTS:
        for _, parent in found.get(parent_path, ()):
            if isinstance(parent, dict) and parent.get(key) is None:
                parent[key] = clone(value)


def _list_type_errors(
    obj: Obj, list_types: tuple[tuple[str, tuple[str, ...] | None], ...]
) -> list[FieldError]:
    """listtype.ValidateListSetsAndMaps: each map key / set element once; the first repeat is reported."""
    errs: list[FieldError] = []
    found = find_each(obj, tuple(list_path for list_path, _ in list_types))
    for list_path, keys in list_types:
        for path, items in found.get(list_path, ()):
            if not isinstance(items, list):
                continue
            seen: dict[str, int] = {}
            for index, item in enumerate(items):
                if keys is None:
                    identity: Any = item
                elif isinstance(item, dict):
                    identity = {k: item[k] for k in keys if k in item}
                else:
                    identity = {}
                text = json.dumps(identity, sort_keys=True)
                seen[text] = seen.get(text, 0) + 1
                if seen[text] == 2:
                    errs.append(FieldError("Duplicate", f"{path}[{index}]", value=identity))
    return errs


def _embedded_metadata_errors(obj: Obj) -> list[FieldError]:
    """Strict field validation of embedded metadata, e.g. a ``generateName`` in a Job template.

    Same shape as :func:`fakecluster.api.validation.validate_model`'s unknown-field errors.
    """
    errs: list[FieldError] = []
    found = find_each(obj, EMBEDDED_METADATA)
    for path_pattern in EMBEDDED_METADATA:
        for path, metadata in found.get(path_pattern, ()):
            for key in metadata if isinstance(metadata, dict) else ():
                if key not in EMBEDDED_METADATA_FIELDS:
                    field_path = f"{path}.{key}"
                    detail = f'unknown field "{field_path}"'
                    errs.append(FieldError("Unknown", field_path, detail, metadata[key]))
    return errs


def _cel_create_errors(obj: Obj) -> list[FieldError]:
    """The CEL rules that do not use ``oldSelf``: checked on every create and update."""
    errs: list[FieldError] = []
    spec = obj.get("spec")
    if isinstance(spec, dict):
        startup = spec.get("startupPolicy")
        if isinstance(startup, dict) and startup.get("startupPolicyOrder") == "InOrder":
            rjobs = spec.get("replicatedJobs")
            if rjobs is None:
                errs.append(
                    FieldError.invalid(
                        "spec",
                        "object",
                        f"no such key: replicatedJobs evaluating rule: {MUTUALLY_EXCLUSIVE_MESSAGE}",
                    )
                )
            elif any(isinstance(r, dict) and "dependsOn" in r for r in rjobs):
                errs.append(CelRuleError("Invalid", "spec", MUTUALLY_EXCLUSIVE_MESSAGE))
    for path, policy in find(obj, "spec.volumeClaimPolicies[]"):
        if isinstance(policy, dict):
            errs += _pvc_namespace_rule(path, policy)
    return errs


def _pvc_namespace_rule(path: str, policy: Obj) -> list[FieldError]:
    """``self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)``.

    CEL's ``all`` is false if any element is false, else an error if any element errs (a template
    without ``metadata``), else true.
    """
    templates = policy.get("templates")
    missing = "templates" if templates is None else None
    violated = False
    for template in templates or ():
        metadata = template.get("metadata") if isinstance(template, dict) else None
        if metadata is None:
            missing = missing or "metadata"
        elif metadata.get("namespace"):
            violated = True
    if violated:
        return [CelRuleError("Invalid", path, PVC_NAMESPACE_MESSAGE)]
    if missing:
        return [
            FieldError.invalid(
                path, "object", f"no such key: {missing} evaluating rule: {PVC_NAMESPACE_MESSAGE}"
            )
        ]
    return []


def _by_name(items: Any) -> dict[Any, Any]:
    return (
        {item.get("name"): item for item in items if isinstance(item, dict)}
        if isinstance(items, list)
        else {}
    )


def _cel_transition_errors(new: Obj, old: Obj) -> list[FieldError]:
    """``self == oldSelf`` rules. A transition rule runs only where an old value exists to compare with;
    ``replicatedJobs`` items are paired by name (list-type map), and ``dependsOn``, a list-type map too,
    compares without regard to order."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    for key in new_spec:
        if key in IMMUTABLE_SPEC_FIELDS and old_spec.get(key) is not None and new_spec[key] != old_spec[key]:
            errs.append(CelRuleError("Invalid", f"spec.{key}", IMMUTABLE_MESSAGE))
        elif key == "replicatedJobs":
            old_rjobs = _by_name(old_spec.get("replicatedJobs"))
            for index, rjob in enumerate(new_spec[key] or ()):
                old_rjob = old_rjobs.get(rjob.get("name")) if isinstance(rjob, dict) else None
                if old_rjob is None or rjob.get("dependsOn") is None or old_rjob.get("dependsOn") is None:
                    continue
                if _by_name(rjob["dependsOn"]) != _by_name(old_rjob["dependsOn"]):
                    errs.append(
                        CelRuleError("Invalid", f"spec.replicatedJobs[{index}].dependsOn", IMMUTABLE_MESSAGE)
                    )
    return errs


class JobSetStrategy(Strategy):
    """The generic custom-resource strategy with the JobSet CRD's schema extras."""

    def prepare_for_create(self, obj: Obj, now: str) -> None:
        apply_crd_defaults(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        apply_crd_defaults(new)

    def validate(self, obj: Obj) -> list[FieldError]:
        return _embedded_metadata_errors(obj) + _list_type_errors(obj, LIST_TYPES) + _cel_create_errors(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _cel_transition_errors(new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _list_type_errors(new, STATUS_LIST_TYPES)
