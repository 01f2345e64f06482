"""JobSet defaulting: ``jobSetWebhook.Default`` in upstream ``pkg/webhooks/jobset_webhook.go``.

Works on the wire-form dict the store keeps. A Go pointer that is ``nil`` is a key that is absent or
``null``; a Go string that is ``""`` is also absent, ``null`` or ``""``. The steps run in upstream's code
order. CRD defaults (``replicas: 1``, ``groupName: default``, ``restartStrategy: Recreate``...) are not
applied here; the API server applies them (:mod:`jobset.api.v1alpha2.crd`).

Not reproduced: controller-runtime computes the admission patch by re-serializing the typed object, which
also adds Go zero values that have no ``omitempty`` (``resources: {}`` on containers, ``metadata: {}``
on templates). Those empty objects carry no meaning, and the fake cluster's built-in kinds leave them
out too.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.objects import Obj, clone

__all__ = ["default_jobset"]

_DEFAULT_RULE_NAME_FMT = "failurePolicyRule{}"
"""``defaultRuleNameFmt = "failurePolicyRule%v"``."""


def _child(parent: Obj, key: str) -> Obj | None:
    """``parent[key]`` as a dict, created if absent or null (Go's zero-value struct); None if malformed."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else None


def _dicts(value: Any) -> list[Obj]:
    """The dict items of a list; anything else is left for schema validation to report."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def default_jobset(obj: Obj) -> Obj:
    """Return a defaulted copy of the JobSet ``obj``; the input is never mutated."""
    js = clone(obj)
    spec = _child(js, "spec")
    if spec is None:
        return js
    if spec.get("successPolicy") is None:
        spec["successPolicy"] = {"operator": "All"}
    if spec.get("startupPolicy") is None:
        spec["startupPolicy"] = {"startupPolicyOrder": "AnyOrder"}
    for rjob in _dicts(spec.get("replicatedJobs")):
        template = _child(rjob, "template")
        job_spec = _child(template, "spec") if template is not None else None
        if job_spec is None:
            continue
        if job_spec.get("completionMode") is None:
            job_spec["completionMode"] = "Indexed"
        pod_template = _child(job_spec, "template")
        pod_spec = _child(pod_template, "spec") if pod_template is not None else None
        if pod_spec is not None and not pod_spec.get("restartPolicy"):
            pod_spec["restartPolicy"] = "OnFailure"
    network = _child(spec, "network")
    if network is not None:
        if network.get("enableDNSHostnames") is None:
            network["enableDNSHostnames"] = True
        if network.get("publishNotReadyAddresses") is None:
            network["publishNotReadyAddresses"] = True
    failure_policy = spec.get("failurePolicy")
    rules = failure_policy.get("rules") if isinstance(failure_policy, dict) else None
    if isinstance(rules, list):
        for index, rule in enumerate(rules):
            if isinstance(rule, dict) and not rule.get("name"):
                rule["name"] = _DEFAULT_RULE_NAME_FMT.format(index)
    for policy in _dicts(spec.get("volumeClaimPolicies")):
        if policy.get("retentionPolicy") is None:
            policy["retentionPolicy"] = {"whenDeleted": "Delete"}
    return js
