"""batch/v1 ``Job`` (k8s.io/api/batch/v1/types.go, release-1.34).

A JobSet's ``replicatedJobs[].template`` is a :class:`JobTemplateSpec`, so this module is the contract
between the JobSet controller and the fake Job controller: the whole 1.34 spec (``podFailurePolicy``,
``successPolicy``, ``backoffLimitPerIndex``, ``podReplacementPolicy``, ``managedBy``) and status
(``terminating``, ``uncountedTerminatedPods``, ``ready``) are typed.
"""

from typing import Literal

from fakecluster.api.base import Int32, Int64, K8sModel, Time
from fakecluster.api.core import PodTemplateSpec
from fakecluster.api.meta import ConditionStatus, LabelSelector, ObjectMeta, TopLevelObject

__all__ = [
    "CompletionMode",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "PodFailurePolicy",
    "PodFailurePolicyAction",
    "PodFailurePolicyOnExitCodesRequirement",
    "PodFailurePolicyOnPodConditionsPattern",
    "PodFailurePolicyRule",
    "PodReplacementPolicy",
    "SuccessPolicy",
    "SuccessPolicyRule",
    "UncountedTerminatedPods",
]

CompletionMode = Literal["NonIndexed", "Indexed"]
"""``batchv1.CompletionMode``; JobSet's webhook defaults it to ``Indexed``."""

PodReplacementPolicy = Literal["TerminatingOrFailed", "Failed"]
"""``batchv1.PodReplacementPolicy`` (GA in 1.34)."""

PodFailurePolicyAction = Literal["FailJob", "FailIndex", "Ignore", "Count"]
"""``batchv1.PodFailurePolicyAction``."""


class PodFailurePolicyOnExitCodesRequirement(K8sModel, defer_build=True):
    """``batchv1.PodFailurePolicyOnExitCodesRequirement``; no ``containerName`` means any container."""

    container_name: str | None = None
    operator: Literal["In", "NotIn"]
    values: list[Int32]


class PodFailurePolicyOnPodConditionsPattern(K8sModel, defer_build=True):
    """``batchv1.PodFailurePolicyOnPodConditionsPattern``.

    ``status`` is required in Go but defaulted to ``True`` by the scheme before validation, and the
    JobSet CRD's embedded schema only requires ``type``; so it is optional here.
    """

    type: str
    status: ConditionStatus | None = None


class PodFailurePolicyRule(K8sModel, defer_build=True):
    """``batchv1.PodFailurePolicyRule``: exactly one of ``onExitCodes``/``onPodConditions`` is set."""

    action: PodFailurePolicyAction
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


class PodFailurePolicy(K8sModel, defer_build=True):
    """``batchv1.PodFailurePolicy``: rules are evaluated in order, first match wins."""

    rules: list[PodFailurePolicyRule]


class SuccessPolicyRule(K8sModel, defer_build=True):
    """``batchv1.SuccessPolicyRule`` (Indexed Jobs only)."""

    succeeded_indexes: str | None = None
    succeeded_count: Int32 | None = None


class SuccessPolicy(K8sModel, defer_build=True):
    """``batchv1.SuccessPolicy`` (GA in 1.33)."""

    rules: list[SuccessPolicyRule]


class JobSpec(K8sModel):
    """``batchv1.JobSpec``: every 1.34 field. Defaults (``backoffLimit: 6``...) come from the strategy."""

    parallelism: Int32 | None = None
    completions: Int32 | None = None
    active_deadline_seconds: Int64 | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    success_policy: SuccessPolicy | None = None
    backoff_limit: Int32 | None = None
    backoff_limit_per_index: Int32 | None = None
    max_failed_indexes: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: CompletionMode | None = None
    suspend: bool | None = None
    pod_replacement_policy: PodReplacementPolicy | None = None
    managed_by: str | None = None


class JobCondition(K8sModel, defer_build=True):
    """``batchv1.JobCondition`` (``Complete``, ``Failed``, ``Suspended``, ``FailureTarget``,
    ``SuccessCriteriaMet``); note ``lastProbeTime``, which ``metav1.Condition`` lacks."""

    type: str
    status: ConditionStatus
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class UncountedTerminatedPods(K8sModel, defer_build=True):
    """``batchv1.UncountedTerminatedPods``: pod UIDs whose finalizer is being removed (job tracking)."""

    succeeded: list[str] | None = None
    failed: list[str] | None = None


class JobStatus(K8sModel, defer_build=True):
    """``batchv1.JobStatus``: every 1.34 field. ``terminating`` and ``ready`` are pointers upstream."""

    conditions: list[JobCondition] | None = None
    start_time: Time | None = None
    completion_time: Time | None = None
    active: Int32 | None = None
    succeeded: Int32 | None = None
    failed: Int32 | None = None
    terminating: Int32 | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: Int32 | None = None


class JobTemplateSpec(K8sModel, defer_build=True):
    """``batchv1.JobTemplateSpec``: the ``template`` of a JobSet ``ReplicatedJob``."""

    metadata: ObjectMeta | None = None
    spec: JobSpec | None = None


class Job(TopLevelObject):
    """``batchv1.Job``."""

    spec: JobSpec | None = None
    status: JobStatus | None = None
