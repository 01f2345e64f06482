"""JobSet update checks: ``jobSetWebhook.ValidateUpdate`` in upstream ``pkg/webhooks/jobset_webhook.go``.

Upstream copies the new spec (``mungedSpec``), overwrites in it the fields an update may change with
their old values, and then requires the whole ``replicatedJobs`` list to equal the old one. The fields
that may change: ``parallelism``/``completions`` of Indexed rjobs with the ElasticJobSet gate (after
their own checks), and, while the JobSet is or is becoming suspended, the pod template's labels,
annotations, nodeSelector, tolerations and schedulingGates (what Kueue rewrites on admission). Old rjobs
are matched by name, so a renamed, added or reordered rjob is "immutable" rather than a crash.

``network``, ``successPolicy``, ``failurePolicy``, ``startupPolicy``, ``dependsOn`` and
``volumeClaimPolicies`` are immutable through CRD CEL rules, checked in :mod:`jobset.api.v1alpha2.crd`.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj, clone
from jobset.api.v1alpha2.jobset_types import GROUP, KIND
from jobset.features import FeatureGates
from jobset.webhooks.apimachinery import invalid

__all__ = ["validate_update"]

TERMINAL_STATE_MSG = ("Cannot mutate parallelism or completions when JobSet is in a terminal state "
                      "(Completed or Failed)")
PARALLELISM_MSG = "parallelism must be >= 1"
COMPLETIONS_MSG = "completions must be >= 1"
ELASTIC_EQUAL_MSG = "completions must be equal to parallelism for Elastic Indexed Jobs"

_TERMINAL_CONDITIONS = ("Completed", "Failed")
_MUTABLE_WHILE_SUSPENDED = (
    ("template", "spec", "template", "metadata", "annotations"),
    ("template", "spec", "template", "metadata", "labels"),
    ("template", "spec", "template", "spec", "nodeSelector"),
    ("template", "spec", "template", "spec", "tolerations"),
    ("template", "spec", "template", "spec", "schedulingGates"),
)
_EMPTY_IS_ABSENT = frozenset({
    "labels", "annotations", "nodeSelector", "matchLabels", "limits", "requests",  # Go maps
    "metadata", "spec", "template", "resources",  # Go structs held by value, not by pointer
})
"""Fields whose ``{}`` equals their absence in Go: ``apiequality.Semantic.DeepEqual`` treats a nil map as
an empty one, and an absent value-typed struct decodes to its (empty) zero value."""


def validate_update(new: Obj, old: Obj, gates: FeatureGates) -> None:
    """Raise ``Invalid`` (422) if the update changes what a JobSet may not change."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    munged: list[Obj] = clone(new_spec.get("replicatedJobs") or [])
    old_rjobs: list[Obj] = old_spec.get("replicatedJobs") or []
    old_by_name = {rjob.get("name"): rjob for rjob in old_rjobs}
    errs: list[FieldError] = []

    if gates.elastic_jobset:
        errs += _validate_elastic_scaling(new, old, munged, old_by_name)
    if old_spec.get("suspend") or new_spec.get("suspend"):
        for index, rjob in enumerate(new_spec.get("replicatedJobs") or ()):
            old_rjob = old_by_name.get(rjob.get("name"))
            if old_rjob is not None:
                for path in _MUTABLE_WHILE_SUSPENDED:
                    _copy(munged[index], old_rjob, path)

    if not _semantic_equal(munged, old_rjobs):
        errs.append(FieldError.immutable("spec.replicatedJobs", munged))
    if not _semantic_equal(new_spec.get("managedBy"), old_spec.get("managedBy")):
        errs.append(FieldError.immutable("spec.managedBy", new_spec.get("managedBy")))
    if errs:
        raise invalid(KIND, GROUP, str((new.get("metadata") or {}).get("name") or ""), errs)


def _validate_elastic_scaling(
    new: Obj, old: Obj, munged: list[Obj], old_by_name: dict[Any, Obj]
) -> list[FieldError]:
    """ElasticJobSet: Indexed rjobs may scale (>= 1, completions == parallelism) unless the JobSet has
    finished; their parallelism and completions are then masked out of the immutability check."""
    conditions = (old.get("status") or {}).get("conditions") or ()
    terminal = any(c.get("type") in _TERMINAL_CONDITIONS and c.get("status") == "True" for c in conditions)
    errs: list[FieldError] = []
    for index, rjob in enumerate((new.get("spec") or {}).get("replicatedJobs") or ()):
        old_rjob = old_by_name.get(rjob.get("name"))
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        if old_rjob is None or job_spec.get("completionMode") != "Indexed":
            continue
        old_job_spec = (old_rjob.get("template") or {}).get("spec") or {}
        path = f"spec.replicatedJobs[{index}].template.spec"
        parallelism, completions = job_spec.get("parallelism"), job_spec.get("completions")
        parallelism_changed = parallelism != old_job_spec.get("parallelism")
        completions_changed = completions != old_job_spec.get("completions")
        if (parallelism_changed or completions_changed) and terminal:
            errs.append(FieldError.forbidden(path, TERMINAL_STATE_MSG))
        elif parallelism_changed or completions_changed:
            if parallelism_changed and parallelism is not None and parallelism < 1:
                errs.append(FieldError.invalid(f"{path}.parallelism", parallelism, PARALLELISM_MSG))
            if completions_changed and completions is not None and completions < 1:
                errs.append(FieldError.invalid(f"{path}.completions", completions, COMPLETIONS_MSG))
            if parallelism is not None and completions is not None and parallelism != completions:
                errs.append(FieldError.invalid(f"{path}.completions", completions, ELASTIC_EQUAL_MSG))
        for key in ("parallelism", "completions"):
            _copy(munged[index], old_rjob, ("template", "spec", key))
    return errs


def _copy(target: Obj, source: Obj, path: tuple[str, ...]) -> None:
    """``target.<path> = source.<path>`` for Go fields: a nil source value removes the target's key."""
    value: Any = source
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    node = target
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            if value is None:
                return
            child = node[key] = {}
        node = child
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = clone(value)


def _semantic_equal(a: Any, b: Any) -> bool:
    return _normalized(a) == _normalized(b)


def _normalized(value: Any) -> Any:
    """Wire form under ``Semantic.DeepEqual``: null fields are absent, empty lists are nil, and so are the
    empty maps and value structs of :data:`_EMPTY_IS_ABSENT`."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            normalized = _normalized(item)
            if normalized is None or normalized == [] or (normalized == {} and key in _EMPTY_IS_ABSENT):
                continue
            out[key] = normalized
        return out
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value
