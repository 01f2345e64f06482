"""Job spec validation: ``validateJobSpec`` and ``ValidateJobSpec`` (batch validation.go).

From ``pkg/apis/batch/validation/validation.go``, the rules the schema cannot express, in upstream's
order and wording: non-negative counters; the
``backoffLimitPerIndex``/``maxFailedIndexes`` cross-field rules (Indexed only, ``maxFailedIndexes`` needs
``backoffLimitPerIndex`` and may not exceed ``completions``, the limits for very large Jobs); Indexed
needs ``completions``; ``podFailurePolicy`` rules (at most 20; ``FailIndex`` needs
``backoffLimitPerIndex``; exactly one of ``onExitCodes``/``onPodConditions``; exit-code values non-empty,
ordered, unique, not 0 with ``In``, a ``containerName`` that exists; pod-condition types qualified names);
``successPolicy`` only for Indexed Jobs; ``podReplacementPolicy: Failed`` with a ``podFailurePolicy``; the
pod template (:mod:`fakecluster.api.pod_validation`); ``restartPolicy`` ``OnFailure`` or ``Never``, and only
``Never`` with a ``podFailurePolicy``; a selector that matches the template's labels.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.objects import Obj
from fakecluster.api.pod_validation import OmittedValue, validate_pod_spec
from fakecluster.api.validation import is_qualified_name
from fakecluster.apiserver.errors import FieldError

__all__ = ["validate_job_spec"]

NON_NEGATIVE = "must be greater than or equal to 0"
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")


def _too_many(path: str, have: int, most: int) -> FieldError:
    """``field.TooMany``."""
    return FieldError("TooMany", path, f"Too many: {have}: must have at most {most} items", have)


def _qualified_name(value: str, path: str) -> list[FieldError]:
    """``ValidateQualifiedName`` for a condition type: the generic ``is_qualified_name`` (prefix and name
    part, upstream's messages) from :mod:`fakecluster.api.validation`, one ``Invalid`` per message."""
    return [FieldError.invalid(path, value, msg) for msg in is_qualified_name(value)]


def validate_job_spec(spec: Obj, template_labels: Obj, path: str = "spec") -> list[FieldError]:
    """``ValidateJobSpec``: ``validateJobSpec`` plus the selector rules."""
    errs = _counters(spec, path)
    errs += _completion_mode(spec, path)
    if spec.get("podFailurePolicy") is not None:
        errs += _pod_failure_policy(spec, f"{path}.podFailurePolicy")
    if spec.get("successPolicy") is not None and spec.get("completionMode") != "Indexed":
        errs.append(
            FieldError.invalid(
                f"{path}.successPolicy", spec["successPolicy"], "requires indexed completion mode"
            )
        )
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None and spec.get("podFailurePolicy") is not None and replacement != "Failed":
        errs.append(FieldError.not_supported(f"{path}.podReplacementPolicy", replacement, ("Failed",)))
    template_spec = (spec.get("template") or {}).get("spec") or {}
    errs += validate_pod_spec(template_spec, f"{path}.template.spec")
    errs += _restart_policy(spec, template_spec.get("restartPolicy"), f"{path}.template.spec.restartPolicy")
    selector = spec.get("selector")
    if selector is None:
        errs.append(FieldError.required(f"{path}.selector"))
    elif any(template_labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        errs.append(
            FieldError.invalid(
                f"{path}.template.metadata.labels",
                template_labels,
                "`selector` does not match template `labels`",
            )
        )
    return errs


def _counters(spec: Obj, path: str) -> list[FieldError]:
    errs = []
    for name in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ):
        value = spec.get(name)
        if isinstance(value, int) and value < 0:
            errs.append(FieldError.invalid(f"{path}.{name}", value, NON_NEGATIVE))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        errs.append(FieldError.required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    return errs


def _completion_mode(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    mode = spec.get("completionMode")
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed, per_index = spec.get("maxFailedIndexes"), spec.get("backoffLimitPerIndex")
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(FieldError.not_supported(f"{path}.completionMode", mode, ("NonIndexed", "Indexed")))
    if mode == "Indexed":
        if completions is None:
            errs.append(FieldError.required(f"{path}.completions", "when completion mode is Indexed"))
        if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
            errs.append(
                FieldError.invalid(
                    f"{path}.parallelism",
                    parallelism,
                    f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                    "when completion mode is Indexed",
                )
            )
        if completions is not None and max_failed is not None and max_failed > completions:
            errs.append(
                FieldError.invalid(
                    f"{path}.maxFailedIndexes", max_failed, "must be less than or equal to completions"
                )
            )
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
            errs.append(
                FieldError.invalid(
                    f"{path}.maxFailedIndexes",
                    max_failed,
                    f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}",
                )
            )
        if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
            errs += _high_completions(parallelism, max_failed, path)
    if mode in (None, "NonIndexed"):
        for name, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", max_failed)):
            if value is not None:
                errs.append(FieldError.invalid(f"{path}.{name}", value, "requires indexed completion mode"))
    return errs


def _high_completions(parallelism: Any, max_failed: Any, path: str) -> list[FieldError]:
    errs = []
    suffix = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    if max_failed is None:
        errs.append(
            FieldError.required(
                f"{path}.maxFailedIndexes",
                f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
            )
        )
    if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
        errs.append(
            FieldError.invalid(
                f"{path}.parallelism",
                parallelism,
                f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} " + suffix,
            )
        )
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
        errs.append(
            FieldError.invalid(
                f"{path}.maxFailedIndexes",
                max_failed,
                f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} " + suffix,
            )
        )
    return errs


def _pod_failure_policy(spec: Obj, path: str) -> list[FieldError]:
    rules = spec["podFailurePolicy"].get("rules") or []
    errs: list[FieldError] = []
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(_too_many(f"{path}.rules", len(rules), MAX_POD_FAILURE_POLICY_RULES))
    template_spec = (spec.get("template") or {}).get("spec") or {}
    containers = {
        c.get("name") for group in ("containers", "initContainers") for c in template_spec.get(group) or ()
    }
    for i, rule in enumerate(rules):
        errs += _rule(spec, rule, f"{path}.rules[{i}]", containers)
    return errs


def _rule(spec: Obj, rule: Obj, path: str, containers: set[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    action = rule.get("action")
    if not action:
        errs.append(
            FieldError.required(f"{path}.action", "valid values: " + str(list(ACTIONS)).replace("'", '"'))
        )
    elif action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
        errs.append(
            FieldError.invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to be set")
        )
    on_exit, on_conditions = rule.get("onExitCodes"), rule.get("onPodConditions") or []
    if on_exit is not None:
        errs += _on_exit_codes(on_exit, f"{path}.onExitCodes", containers)
    if on_conditions:
        if len(on_conditions) > MAX_ON_POD_CONDITIONS_PATTERNS:
            errs.append(
                _too_many(f"{path}.onPodConditions", len(on_conditions), MAX_ON_POD_CONDITIONS_PATTERNS)
            )
        for j, pattern in enumerate(on_conditions):
            errs += _qualified_name(str(pattern.get("type") or ""), f"{path}.onPodConditions[{j}].type")
    if on_exit is not None and on_conditions:
        errs.append(
            OmittedValue("Invalid", path, "specifying both OnExitCodes and OnPodConditions is not supported")
        )
    if on_exit is None and not on_conditions:
        errs.append(
            OmittedValue("Invalid", path, "specifying one of OnExitCodes and OnPodConditions is required")
        )
    return errs


def _on_exit_codes(on_exit: Obj, path: str, containers: set[Any]) -> list[FieldError]:
    errs: list[FieldError] = []
    name = on_exit.get("containerName")
    if name is not None and name not in containers:
        errs.append(
            FieldError.invalid(
                f"{path}.containerName",
                name,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    values = on_exit.get("values") or []
    if not values:
        errs.append(FieldError.invalid(f"{path}.values", values, "at least one value is required"))
    elif len(values) > MAX_ON_EXIT_CODES_VALUES:
        errs.append(_too_many(f"{path}.values", len(values), MAX_ON_EXIT_CODES_VALUES))
    seen: set[int] = set()
    ordered = True
    for j, value in enumerate(values):
        if on_exit.get("operator") == "In" and value == 0:
            errs.append(FieldError.invalid(f"{path}.values[{j}]", value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(FieldError("Duplicate", f"{path}.values[{j}]", value=value))
        seen.add(value)
        if j > 0 and values[j - 1] > value:
            ordered = False
    if not ordered:
        errs.append(FieldError.invalid(f"{path}.values", values, "must be ordered"))
    return errs


def _restart_policy(spec: Obj, policy: Any, path: str) -> list[FieldError]:
    """``SetDefaults_PodSpec`` may have made an unset policy ``Always``: both read as unset."""
    if policy in (None, "", "Always"):
        return [FieldError.required(path, 'valid values: "OnFailure", "Never"')]
    if policy not in ("OnFailure", "Never"):
        return [FieldError.not_supported(path, policy, ("OnFailure", "Never"))]
    if spec.get("podFailurePolicy") is not None and policy != "Never":
        return [
            FieldError.invalid(path, policy, 'only "Never" is supported when podFailurePolicy is specified')
        ]
    return []
