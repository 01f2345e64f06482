"""meta/v1 types (k8s.io/apimachinery/pkg/apis/meta/v1/types.go, release-1.34).

These are shared by every kind, built-in or custom. ``Condition`` carries the ``+kubebuilder`` markers of
``metav1.Condition`` (enum, pattern, length limits) because they end up in every CRD that embeds it: a
JobSet status with an empty ``reason`` is rejected by a real API server, so it is rejected here too.
"""

from typing import Annotated, Any, Literal

from pydantic import Field

from fakecluster.api.base import Int64, K8sModel, NonNegativeInt64, Time

__all__ = [
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "ConditionStatus",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ListMeta",
    "ObjectMeta",
    "OwnerReference",
    "TopLevelObject",
    "TypeMeta",
]

ConditionStatus = Literal["True", "False", "Unknown"]
"""``metav1.ConditionStatus`` / ``corev1.ConditionStatus``."""

CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
"""``metav1.Condition.type``: CamelCase, optionally prefixed with a DNS subdomain and ``/``."""

CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
"""``metav1.Condition.reason``: a programmatic CamelCase identifier (``FailurePolicy_`` is still valid)."""


class OwnerReference(K8sModel):
    """``metav1.OwnerReference``: the edge the garbage collector follows (all four ids are required)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8sModel):
    """``metav1.ObjectMeta``. ``managedFields`` is kept opaque: nothing in the fake cluster reads it."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: Int64 | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[dict[str, Any]] | None = None


class ListMeta(K8sModel, defer_build=True):
    """``metav1.ListMeta``: ``resourceVersion`` of a list is where a following watch starts."""

    self_link: str | None = None
    resource_version: str | None = None
    continue_: str | None = Field(default=None, alias="continue")
    remaining_item_count: Int64 | None = None


class TypeMeta(K8sModel):
    """``metav1.TypeMeta``, inline at the top of every object and list: ``apiVersion`` and ``kind``."""

    api_version: str | None = None
    kind: str | None = None


class TopLevelObject(TypeMeta):
    """What every top-level object starts with: ``TypeMeta`` inline, then ``metadata``."""

    metadata: ObjectMeta | None = None


class LabelSelectorRequirement(K8sModel):
    """``metav1.LabelSelectorRequirement``; ``values`` must be empty for ``Exists``/``DoesNotExist``."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(K8sModel):
    """``metav1.LabelSelector``: ``matchLabels`` and ``matchExpressions`` are ANDed."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


class Condition(K8sModel, defer_build=True):
    """``metav1.Condition``, the condition type of CRDs such as JobSet (not of Pods or Jobs).

    Every field but ``observedGeneration`` is required by the generated CRD schema, with the limits of the
    upstream ``+kubebuilder:validation`` markers.
    """

    type: Annotated[str, Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)]
    status: ConditionStatus
    observed_generation: NonNegativeInt64 | None = None
    last_transition_time: Time
    reason: Annotated[str, Field(min_length=1, max_length=1024, pattern=CONDITION_REASON_PATTERN)]
    message: Annotated[str, Field(max_length=32768)]
