"""JobSet ``jobset.x-k8s.io/v1alpha2`` types and constants.

Python twin of upstream ``api/jobset/v1alpha2/jobset_types.go`` (models, label/annotation keys,
condition types) and ``pkg/constants/constants.go`` (reasons, messages, controller-internal keys). Enums
are the generated CRD's enums; ``minimum``/``maxItems`` limits are the CRD's too, so a schema error reads
like the one a real API server returns. Defaults (``replicas: 1``, ``groupName: default``, webhook
defaults) are *not* applied here: the CRD-defaulting and webhook code does that, as upstream.
"""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from fakecluster.api.base import Int32, Int64, K8sModel, NonNegativeInt32
from fakecluster.api.batch import JobTemplateSpec
from fakecluster.api.meta import Condition, ListMeta, TopLevelObject, TypeMeta

# --- group / version / kind (api/jobset/v1alpha2/groupversion_info.go) ------------------------------
GROUP = "jobset.x-k8s.io"
VERSION = "v1alpha2"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "JobSet"
LIST_KIND = "JobSetList"
PLURAL = "jobsets"

# --- label / annotation keys (jobset_types.go) -------------------------------------------------------
JOBSET_NAME_KEY = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID_KEY = "jobset.sigs.k8s.io/jobset-uid"
REPLICATED_JOB_REPLICAS = "jobset.sigs.k8s.io/replicatedjob-replicas"
GLOBAL_REPLICAS_KEY = "jobset.sigs.k8s.io/global-replicas"
REPLICATED_JOB_NAME_KEY = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_INDEX_KEY = "jobset.sigs.k8s.io/job-index"
JOB_GLOBAL_INDEX_KEY = "jobset.sigs.k8s.io/job-global-index"
JOB_KEY = "jobset.sigs.k8s.io/job-key"
"""SHA-1 hex of ``"<namespace>/<jobName>"`` (the upstream comment says SHA-256; the code uses SHA-1)."""
EXCLUSIVE_KEY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY_KEY = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB_KEY = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE_TAINT_KEY = "alpha.jobset.sigs.k8s.io/no-schedule"
JOBSET_CONTROLLER_NAME = "jobset.sigs.k8s.io/jobset-controller"
"""The reserved ``spec.managedBy`` value: the built-in controller reconciles nil or this value only."""
COORDINATOR_KEY = "jobset.sigs.k8s.io/coordinator"
GROUP_NAME_KEY = "jobset.sigs.k8s.io/group-name"
GROUP_REPLICAS_KEY = "jobset.sigs.k8s.io/group-replicas"
JOB_GROUP_INDEX_KEY = "jobset.sigs.k8s.io/job-group-index"
IN_PLACE_RESTART_ATTEMPT_KEY = "jobset.sigs.k8s.io/in-place-restart-attempt"
DISABLE_IN_PLACE_RESTART_KEY = "jobset.sigs.k8s.io/disable-in-place-restart"

# --- controller-internal keys (pkg/constants/constants.go) -------------------------------------------
RESTARTS_KEY = "jobset.sigs.k8s.io/restart-attempt"
JOB_RESTART_ATTEMPT_KEY = "jobset.sigs.k8s.io/job-restart-attempt"
"""Only added to Jobs when the ``RestartJob`` feature gate is on."""
PRIORITY_KEY = "jobset.sigs.k8s.io/priority"
JOBS_INDEX_BY_JOBSET_KEY = ".metadata.controller"
PODS_INDEX_BY_JOBSET_KEY = "podsIndexByJobSet"
MAX_PARALLELISM = 50
"""Parallel Job creations/deletions per reconcile."""

# --- condition types (JobSetConditionType) ------------------------------------------------------------
JOBSET_COMPLETED = "Completed"
JOBSET_FAILED = "Failed"
JOBSET_SUSPENDED = "Suspended"
JOBSET_RESTARTING = "RestartingJobSet"
JOBSET_STARTUP_POLICY_IN_PROGRESS = "StartupPolicyInProgress"
JOBSET_STARTUP_POLICY_COMPLETED = "StartupPolicyCompleted"

# --- condition/event reasons and messages (pkg/constants/constants.go) --------------------------------
# Messages of Failed/RestartingJobSet conditions get " (first failed job: <job>)" appended by the
# controller (``messageWithFirstFailedJob`` in failure_policy.go); these are the bare prefixes.
REACHED_MAX_RESTARTS_REASON = "ReachedMaxRestarts"
REACHED_MAX_RESTARTS_MESSAGE = "jobset failed due to reaching max number of restarts"
FAILED_JOBS_REASON = "FailedJobs"
FAILED_JOBS_MESSAGE = "jobset failed due to one or more job failures"
ALL_JOBS_COMPLETED_REASON = "AllJobsCompleted"
ALL_JOBS_COMPLETED_MESSAGE = "jobset completed successfully"
JOB_CREATION_FAILED_REASON = "JobCreationFailed"
HEADLESS_SERVICE_CREATION_FAILED_REASON = "HeadlessServiceCreationFailed"
EXCLUSIVE_PLACEMENT_VIOLATION_REASON = "ExclusivePlacementViolation"
EXCLUSIVE_PLACEMENT_VIOLATION_MESSAGE = "Pod violated JobSet exclusive placement policy"
IN_ORDER_STARTUP_POLICY_IN_PROGRESS_REASON = "InOrderStartupPolicyInProgress"
IN_ORDER_STARTUP_POLICY_IN_PROGRESS_MESSAGE = "in order startup policy is in progress"
IN_ORDER_STARTUP_POLICY_COMPLETED_REASON = "InOrderStartupPolicyCompleted"
IN_ORDER_STARTUP_POLICY_COMPLETED_MESSAGE = "in order startup policy has completed"
JOBSET_RESTART_REASON = "Restarting"
RESTARTING_JOBSET_REASON_DEFAULT_FAILURE_POLICY = "DefaultFailurePolicy"
RESTARTING_JOBSET_REASON_FAILURE_POLICY_FORMAT = "FailurePolicy_%s"
"""``%`` format with the matching rule's name, as upstream's ``fmt.Sprintf``."""
RESTARTING_JOBSET_REASON_JOBS_READY = "JobsReady"
RESTARTING_JOBSET_REASON_JOBSET_FAILED = "JobSetFailed"
RESTARTING_JOBSET_REASON_JOBSET_COMPLETED = "JobSetCompleted"
RESTARTING_JOBSET_REASON_JOBSET_SUSPENDED = "JobSetSuspended"
RESTARTING_JOBSET_REASON_JOBS_READY_MESSAGE = "all jobs are ready"
RESTARTING_JOBSET_REASON_JOBSET_FAILED_MESSAGE = "jobset failed"
JOBSET_SUSPENDED_REASON = "SuspendedJobs"
JOBSET_SUSPENDED_MESSAGE = "jobset is suspended"
JOBSET_RESUMED_REASON = "ResumeJobs"
JOBSET_RESUMED_MESSAGE = "jobset is resumed"
FAIL_JOBSET_ACTION_REASON = "FailJobSetFailurePolicyAction"
FAIL_JOBSET_ACTION_MESSAGE = "applying FailJobSet failure policy action"
RESTART_JOBSET_ACTION_REASON = "RestartJobSetFailurePolicyAction"
RESTART_JOBSET_ACTION_MESSAGE = "applying RestartJobSet failure policy action"
RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS_ACTION_REASON = "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"
RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS_ACTION_MESSAGE = (
    "applying RestartJobSetAndIgnoreMaxRestarts failure policy action"
)
PVC_CREATION_FAILED_REASON = "PVCCreationFailed"
RESTART_JOB_ACTION_REASON = "RestartJobFailurePolicyAction"
RESTART_JOB_ACTION_MESSAGE = "applying RestartJob failure policy action"
RESTART_JOB_AND_IGNORE_MAX_RESTARTS_ACTION_REASON = "RestartJobAndIgnoreMaxRestartsFailurePolicyAction"
RESTART_JOB_AND_IGNORE_MAX_RESTARTS_ACTION_MESSAGE = (
    "applying RestartJobAndIgnoreMaxRestarts failure policy action"
)

# --- enums (generated CRD) ----------------------------------------------------------------------------
DependsOnStatus = Literal["Ready", "Complete"]
DEPENDENCY_READY = "Ready"
DEPENDENCY_COMPLETE = "Complete"

Operator = Literal["All", "Any"]
OPERATOR_ALL = "All"
OPERATOR_ANY = "Any"

FailurePolicyAction = Literal[
    "FailJobSet",
    "RestartJobSet",
    "RestartJobSetAndIgnoreMaxRestarts",
    "RestartJob",
    "RestartJobAndIgnoreMaxRestarts",
]
FAIL_JOBSET = "FailJobSet"
RESTART_JOBSET = "RestartJobSet"
RESTART_JOBSET_AND_IGNORE_MAX_RESTARTS = "RestartJobSetAndIgnoreMaxRestarts"
RESTART_JOB = "RestartJob"
RESTART_JOB_AND_IGNORE_MAX_RESTARTS = "RestartJobAndIgnoreMaxRestarts"

JobSetRestartStrategy = Literal["Recreate", "BlockingRecreate", "InPlaceRestart"]
RECREATE = "Recreate"
BLOCKING_RECREATE = "BlockingRecreate"
IN_PLACE_RESTART = "InPlaceRestart"

StartupPolicyOptions = Literal["AnyOrder", "InOrder"]
ANY_ORDER = "AnyOrder"
IN_ORDER = "InOrder"

RetentionPolicyType = Literal["Delete", "Retain"]
RETENTION_POLICY_DELETE = "Delete"
RETENTION_POLICY_RETAIN = "Retain"


# --- models -------------------------------------------------------------------------------------------
class DependsOn(K8sModel, defer_build=True):
    """A ReplicatedJob starts only when the named earlier one is ``Ready`` or ``Complete``."""

    name: str
    status: DependsOnStatus


class ReplicatedJob(K8sModel, defer_build=True):
    """A group of ``replicas`` identical Jobs named ``<jobset>-<name>-<index>``.

    ``replicas`` (CRD default 1) and ``groupName`` (CRD default ``default``) stay ``None`` until CRD
    defaulting runs; ``dependsOn`` has the CRD's ``maxItems: 5``.
    """

    name: str
    group_name: str | None = None
    template: JobTemplateSpec
    replicas: NonNegativeInt32 | None = None
    depends_on: Annotated[list[DependsOn], Field(max_length=5)] | None = None


class Network(K8sModel, defer_build=True):
    """Headless-Service DNS for pods; both booleans are defaulted to ``true`` by the webhook."""

    enable_dns_hostnames: bool | None = Field(default=None, alias="enableDNSHostnames")
    subdomain: str | None = None
    publish_not_ready_addresses: bool | None = None


class SuccessPolicy(K8sModel, defer_build=True):
    """When the JobSet is Completed: ``All`` or ``Any`` Job of ``targetReplicatedJobs`` (empty = all)."""

    operator: Operator
    target_replicated_jobs: list[str] | None = None


class FailurePolicyRule(K8sModel, defer_build=True):
    """One rule of ``failurePolicy.rules``; the first matching rule wins.

    ``name`` is required by the CRD schema but optional here: the mutating webhook names unnamed rules
    ``failurePolicyRule<i>`` before schema validation runs, and upstream examples rely on that.
    """

    name: str | None = None
    action: FailurePolicyAction
    on_job_failure_reasons: list[str] | None = None
    on_job_failure_message_patterns: list[str] | None = None
    target_replicated_jobs: list[str] | None = None


class FailurePolicy(K8sModel, defer_build=True):
    """Restart/fail behaviour; ``None`` means "fail the JobSet on the first Job failure"."""

    max_restarts: Int32 | None = None
    restart_strategy: JobSetRestartStrategy | None = None
    rules: list[FailurePolicyRule] | None = None


class StartupPolicy(K8sModel, defer_build=True):
    """Deprecated upstream in favour of ``dependsOn``; ``InOrder`` starts ReplicatedJobs one by one."""

    startup_policy_order: StartupPolicyOptions


class Coordinator(K8sModel, defer_build=True):
    """The pod whose stable DNS name is published to all pods as the ``coordinator`` label."""

    replicated_job: str
    job_index: Int64 | None = None
    pod_index: Int64 | None = None


class VolumeRetentionPolicy(K8sModel, defer_build=True):
    """What happens to the shared PVCs when the JobSet is deleted."""

    when_deleted: RetentionPolicyType | None = None


class ClaimTemplateMetadata(K8sModel, defer_build=True):
    """A claim template's ``metadata`` as the CRD's schema types it (the embedded ``ObjectMeta`` of
    ``config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml``: these five fields). Other fields are
    kept as before (upstream's structural schema prunes them)."""

    model_config = ConfigDict(extra="allow")

    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    labels: dict[str, str] | None = None
    name: str | None = None
    namespace: str | None = None


class ClaimTemplate(K8sModel, defer_build=True):
    """A ``volumeClaimPolicies[].templates[]`` item, a PersistentVolumeClaim: its top-level fields and
    metadata typed as in the CRD's schema, ``spec`` and ``status`` objects whose fields are not checked
    here."""

    model_config = ConfigDict(extra="allow")

    api_version: str | None = None
    kind: str | None = None
    metadata: ClaimTemplateMetadata | None = None
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


class VolumeClaimPolicy(K8sModel, defer_build=True):
    """Shared PVCs named ``<template>-<jobset>``."""

    templates: Annotated[list[ClaimTemplate], Field(max_length=50)] | None = None
    retention_policy: VolumeRetentionPolicy | None = None


class JobSetSpec(K8sModel, defer_build=True):
    """``JobSetSpec``; the mutually-exclusive and immutability CEL rules are enforced by the webhook code."""

    replicated_jobs: list[ReplicatedJob] | None = None
    network: Network | None = None
    success_policy: SuccessPolicy | None = None
    failure_policy: FailurePolicy | None = None
    startup_policy: StartupPolicy | None = None
    suspend: bool | None = None
    coordinator: Coordinator | None = None
    managed_by: str | None = None
    ttl_seconds_after_finished: NonNegativeInt32 | None = None
    volume_claim_policies: Annotated[list[VolumeClaimPolicy], Field(max_length=50)] | None = None


class ReplicatedJobStatus(K8sModel, defer_build=True):
    """Per-ReplicatedJob Job counts of the current run; the six counters are required by the CRD."""

    name: str
    ready: Int32
    succeeded: Int32
    failed: Int32
    active: Int32
    suspended: Int32
    job_restarts: Annotated[list[Int32], Field(max_length=1024)] | None = None
    job_restarts_count_towards_max: Annotated[list[Int32], Field(max_length=1024)] | None = None


class JobSetStatus(K8sModel):
    """``JobSetStatus``. ``restarts`` has no ``omitempty`` upstream, so the controller always writes it."""

    conditions: list[Condition] | None = None
    restarts: Int32 | None = None
    restarts_count_towards_max: Int32 | None = None
    terminal_state: str | None = None
    replicated_jobs_status: list[ReplicatedJobStatus] | None = None
    previous_in_place_restart_attempt: NonNegativeInt32 | None = None
    current_in_place_restart_attempt: NonNegativeInt32 | None = None


class JobSet(TopLevelObject):
    """``JobSet`` (namespaced, with a status subresource)."""

    spec: JobSetSpec | None = None
    status: JobSetStatus | None = None


class JobSetList(TypeMeta, defer_build=True):
    """``JobSetList``."""

    metadata: ListMeta | None = None
    items: list[JobSet]
