"""JobSet ``ValidateUpdate`` (jobset/webhooks/jobset_webhook/update.py): the ``TestValidateUpdate`` table of
upstream ``pkg/webhooks/jobset_webhook_test.go``."""

from __future__ import annotations

from typing import Any

import pytest
from jobset_webhook_harness import TERMINAL

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from jobset.features import FeatureGates
from jobset.webhooks import (
    validate_update,
)


# ------------------------------------------------------------------------------------ validate update
def _update_js(
    *rjobs: Obj,
    suspend: bool | None = None,
    managed_by: str | None = None,
    conditions: list[Obj] | None = None,
    labels: dict[str, str] | None = None,
) -> Obj:
    js: Obj = {
        "metadata": {"name": "js", **({"labels": labels} if labels else {})},
        "spec": {"replicatedJobs": list(rjobs)},
    }
    if suspend is not None:
        js["spec"]["suspend"] = suspend
    if managed_by is not None:
        js["spec"]["managedBy"] = managed_by
    if conditions is not None:
        js["status"] = {"conditions": conditions}
    return js


def _urj(
    name: str = "test-jobset-replicated-job-0",
    replicas: int | None = 2,
    pod: Obj | None = None,
    **job_spec: Any,
) -> Obj:
    out: Obj = {"name": name, "template": {"spec": dict(job_spec)}}
    if replicas is not None:
        out["replicas"] = replicas
    if pod is not None:
        out["template"]["spec"]["template"] = pod
    return out


VALID_RJOBS = [
    _urj(replicas=1, parallelism=1),
    _urj("test-jobset-replicated-job-1", replicas=1, parallelism=1),
]
ANNOTATED_POD = {"metadata": {"annotations": {"key": "value"}}}
GATED_POD = {"spec": {"schedulingGates": [{"name": "example.com/gate"}]}}
IMMUTABLE = ["spec.replicatedJobs", "field is immutable"]


def _new_pod_template(
    pod: Obj, want: list[str], *, new_suspend: bool | None = None, old_suspend: bool | None = None
) -> tuple[Any, ...]:
    """An update case: a Job of two pods gets the pod template ``pod`` (no gates)."""
    return (
        _update_js(_urj(parallelism=2, pod=pod), suspend=new_suspend),
        _update_js(_urj(parallelism=2), suspend=old_suspend),
        want,
        FeatureGates(),
    )


def _scaled(new: Obj, old: Obj, want: list[str], terminal: str | None = None) -> tuple[Any, ...]:
    """An update case under ElasticJobSet: one Indexed Job (replicas unset) of job spec ``old`` becomes
    ``new``; the old JobSet has the ``terminal`` condition if given."""
    conditions = None if terminal is None else [{"type": terminal, "status": "True"}]
    return (
        _update_js(_urj(replicas=None, completionMode="Indexed", **new)),
        _update_js(_urj(replicas=None, completionMode="Indexed", **old), conditions=conditions),
        want,
        FeatureGates(elastic_jobset=True),
    )
UPDATE_CASES: dict[str, tuple[Obj, Obj, list[str], FeatureGates]] = {
    "update suspend": (_update_js(*VALID_RJOBS), _update_js(*VALID_RJOBS, suspend=True), [], FeatureGates()),
    "update labels": (
        _update_js(*VALID_RJOBS, labels={"hello": "world"}),
        _update_js(*VALID_RJOBS, suspend=True),
        [],
        FeatureGates(),
    ),
    "managedBy is immutable": (
        _update_js(*VALID_RJOBS, managed_by="example.com/new"),
        _update_js(*VALID_RJOBS, managed_by="example.com/old"),
        ["spec.managedBy", "field is immutable"],
        FeatureGates(),
    ),
    "replicated job pod template can be updated for suspended jobset": _new_pod_template(
        ANNOTATED_POD, [], old_suspend=True
    ),
    "replicated job pod template can be updated for jobset getting suspended": _new_pod_template(
        ANNOTATED_POD, [], new_suspend=True, old_suspend=False
    ),
    "replicated job pod template cannot be updated for running jobset": _new_pod_template(
        ANNOTATED_POD, IMMUTABLE
    ),
    "schedulingGates for pod template can be updated for suspended JobSet": _new_pod_template(
        GATED_POD, [], old_suspend=True
    ),
    "schedulingGates for pod template cannot be updated for unsuspended JobSet": _new_pod_template(
        GATED_POD, IMMUTABLE
    ),
    "replicated job name cannot be updated": (
        _update_js(_urj("new-replicated-job-name", parallelism=2)),
        _update_js(_urj(parallelism=2), suspend=True),
        IMMUTABLE,
        FeatureGates(),
    ),
    "valid scaling of parallelism and completions": (
        _update_js(_urj(completionMode="Indexed", parallelism=8, completions=8)),
        _update_js(_urj(completionMode="Indexed", parallelism=2, completions=2)),
        [],
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling of parallelism to < 1": _scaled(
        {"parallelism": 0},
        {"parallelism": 2},
        ["spec.replicatedJobs[0].template.spec.parallelism", "parallelism must be >= 1"],
    ),
    "invalid scaling of completions to < 1": _scaled(
        {"completions": 0},
        {"completions": 2},
        ["spec.replicatedJobs[0].template.spec.completions", "completions must be >= 1"],
    ),
    "cannot scale parallelism if JobSet is Completed": _scaled(
        {"parallelism": 4},
        {"parallelism": 2},
        ["spec.replicatedJobs[0].template.spec", TERMINAL],
        "Completed",
    ),
    "cannot scale completions if JobSet is Failed": _scaled(
        {"completions": 4},
        {"completions": 2},
        ["spec.replicatedJobs[0].template.spec", TERMINAL],
        "Failed",
    ),
    "immutability still enforced for other fields during valid scale": (
        _update_js(_urj(replicas=2, completionMode="Indexed", parallelism=4)),
        _update_js(_urj(replicas=1, completionMode="Indexed", parallelism=2)),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling of parallelism and completions when feature gate is disabled": (
        _update_js(_urj(parallelism=8, completions=8)),
        _update_js(_urj(parallelism=2, completions=2)),
        IMMUTABLE,
        FeatureGates(),
    ),
    "invalid scaling: parallelism and completions must be equal": (
        _update_js(_urj(completionMode="Indexed", parallelism=4, completions=5)),
        _update_js(_urj(completionMode="Indexed", parallelism=2, completions=2)),
        [
            "spec.replicatedJobs[0].template.spec.completions",
            "completions must be equal to parallelism for Elastic Indexed Jobs",
        ],
        FeatureGates(elastic_jobset=True),
    ),
    "adding a new ReplicatedJob while suspended does not panic and is rejected": (
        _update_js(_urj("job-a"), _urj("job-b"), suspend=True),
        _update_js(_urj("job-a"), suspend=True),
        IMMUTABLE,
        FeatureGates(),
    ),
    "reordering ReplicatedJobs evaluates ElasticJobSet scaling correctly by name": (
        _update_js(_urj("job-b"), _urj("job-a")),
        _update_js(_urj("job-a"), _urj("job-b")),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
    "invalid scaling: immutability enforced for NonIndexed jobs even when ElasticJobSet is enabled": (
        _update_js(_urj(replicas=1, completionMode="NonIndexed", parallelism=4, completions=4)),
        _update_js(_urj(replicas=1, completionMode="NonIndexed", parallelism=2, completions=2)),
        IMMUTABLE,
        FeatureGates(elastic_jobset=True),
    ),
}


@pytest.mark.parametrize(("new", "old", "want", "gates"), UPDATE_CASES.values(), ids=UPDATE_CASES.keys())
def test_validate_update_matches_upstream_table(
    new: Obj, old: Obj, want: list[str], gates: FeatureGates
) -> None:
    if not want:
        validate_update(new, old, gates)
        return
    with pytest.raises(ApiError) as caught:
        validate_update(new, old, gates)
    assert (caught.value.code, caught.value.reason) == (422, "Invalid")
    for cause in caught.value.causes:  # upstream: each cause's field and core reason is expected
        assert cause.field in want
        assert cause.detail in want


def test_validate_update_managed_by_message() -> None:
    with pytest.raises(ApiError) as caught:
        validate_update(
            _update_js(managed_by="example.com/new"), _update_js(managed_by="example.com/old"), FeatureGates()
        )
    assert caught.value.message == (
        'JobSet.jobset.x-k8s.io "js" is invalid: '
        'spec.managedBy: Invalid value: "example.com/new": field is immutable'
    )


def test_validate_update_treats_empty_maps_and_structs_as_absent() -> None:
    """Semantic.DeepEqual: ``labels: {}`` equals no labels; an empty template metadata equals none."""
    old = _update_js(_urj(parallelism=2, pod={"spec": {"containers": []}}))
    new = _update_js(_urj(parallelism=2, pod={"metadata": {"labels": {}}, "spec": {"containers": []}}))
    validate_update(new, old, FeatureGates())
