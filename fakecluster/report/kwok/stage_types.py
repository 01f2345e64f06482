"""KWOK's ``Stage`` API (``kwok.x-k8s.io/v1alpha1``) as pydantic models, to validate what we export.

Field for field the Go types of ``sigs.k8s.io/kwok`` ``pkg/apis/v1alpha1/stage_types.go`` (v0.7/v0.8):
json names, optionality (``omitempty`` / pointer -> optional), the ``+kubebuilder:validation`` bounds
(``weight``, ``durationMilliseconds`` and ``jitterDurationMilliseconds`` >= 0) and enums (selector
operators ``In``/``NotIn``/``Exists``/``DoesNotExist``; patch types ``json``/``merge``/``strategic``).
Unknown fields are rejected, as a strict decoder (``kubectl apply --validate=strict``) would. Selector
requirement rules from the Go comments are enforced too: ``In``/``NotIn`` need values, ``Exists``/
``DoesNotExist`` take none.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Stage", "StageSpec"]

API_VERSION = "kwok.x-k8s.io/v1alpha1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class ObjectMeta(_Model):
    """The parts of ``metav1.ObjectMeta`` a Stage manifest uses (it is cluster-scoped: no namespace)."""

    name: str = Field(min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class StageResourceRef(_Model):
    api_group: str = Field("v1", alias="apiGroup")
    kind: str = Field(min_length=1)


class SelectorRequirement(_Model):
    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None

    @model_validator(mode="after")
    def _values_fit_operator(self) -> SelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs a non-empty values list")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self


class StageSelector(_Model):
    match_labels: dict[str, str] | None = Field(None, alias="matchLabels")
    match_annotations: dict[str, str] | None = Field(None, alias="matchAnnotations")
    match_expressions: list[SelectorRequirement] | None = Field(None, alias="matchExpressions")


class ExpressionFromSource(_Model):
    expression_from: str | None = Field(None, alias="expressionFrom")


class StageDelay(_Model):
    duration_milliseconds: int | None = Field(None, alias="durationMilliseconds", ge=0)
    duration_from: ExpressionFromSource | None = Field(None, alias="durationFrom")
    jitter_duration_milliseconds: int | None = Field(None, alias="jitterDurationMilliseconds", ge=0)
    jitter_duration_from: ExpressionFromSource | None = Field(None, alias="jitterDurationFrom")


class StageEvent(_Model):
    type: str | None = None
    reason: str | None = None
    message: str | None = None


class FinalizerItem(_Model):
    value: str | None = None


class StageFinalizers(_Model):
    add: list[FinalizerItem] | None = None
    remove: list[FinalizerItem] | None = None
    empty: bool | None = None


class ImpersonationConfig(_Model):
    username: str


class StagePatch(_Model):
    subresource: str | None = None
    root: str | None = None
    template: str | None = None
    type: Literal["json", "merge", "strategic"] | None = None
    impersonation: ImpersonationConfig | None = None


class StageNext(_Model):
    event: StageEvent | None = None
    finalizers: StageFinalizers | None = None
    delete: bool | None = None
    patches: list[StagePatch] | None = None
    status_template: str | None = Field(None, alias="statusTemplate")
    status_subresource: str | None = Field(None, alias="statusSubresource")
    status_patch_as: ImpersonationConfig | None = Field(None, alias="statusPatchAs")


class StageSpec(_Model):
    resource_ref: StageResourceRef = Field(alias="resourceRef")
    selector: StageSelector | None = None
    weight: int | None = Field(None, ge=0)
    delay: StageDelay | None = None
    next: StageNext
    immediate_next_stage: bool | None = Field(None, alias="immediateNextStage")


class Stage(_Model):
    api_version: Literal["kwok.x-k8s.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Stage"]
    metadata: ObjectMeta
    spec: StageSpec
