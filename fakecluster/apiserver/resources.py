"""What the API server knows about each kind: its REST identity and its strategy.

Mirrors the split in k8s.io/apiserver's generic registry: the store does the storage mechanics
(resourceVersion, conflicts, finalizers, watch), a per-kind *strategy* does defaulting, validation and
the rules for what a write may change (``PrepareForCreate``, ``PrepareForUpdate``, ``Validate``...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fakecluster.api.objects import Obj
from fakecluster.apiserver.errors import FieldError

if TYPE_CHECKING:
    from pydantic import BaseModel

_ABSENT = object()


class Strategy:
    """Per-kind hooks; the defaults behave like a plain custom resource without extra rules."""

    copies_on_write = False
    """Whether :meth:`prepare_for_create` sets only top-level and ``metadata`` fields and replaces,
    never changes in place, anything nested: then a donated object (``create(donate=True)``) need not
    be deep-copied first."""

    def prepare_for_create(self, obj: Obj, now: str) -> None:
        """Defaulting and status reset on create (``PrepareForCreate`` + scheme defaults)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """Adjust an update before validation (e.g. defaults for fields added by the update)."""

    def validate(self, obj: Obj) -> list[FieldError]:
        """Semantic validation beyond the schema (names, cross-field rules)."""
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Update-only rules: immutability and allowed transitions."""
        return []

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return []

    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """Grace period for a delete; 0 means the object goes at once (if it has no finalizers)."""
        return 0


@dataclass(slots=True)
class ResourceType:
    """REST identity of a kind plus the behaviour switches the generic registry has per resource."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool = True
    status_subresource: bool = True
    generation: str = "spec"
    """``spec``: bump when ``spec`` changes (built-ins); ``custom``: bump on any change outside
    metadata and status (CRDs with a status subresource); ``none``: never."""
    default_propagation: str = "Background"
    """Deletion propagation when the caller gives none (batch/v1 Job: ``Orphan`` for back-compat)."""
    unconditional_update: bool = True
    """Whether an update without resourceVersion is accepted (False for custom resources)."""
    model: type[BaseModel] | None = None
    """Schema used to reject malformed objects (unknown fields, wrong types) with field paths."""
    status_model: type[BaseModel] | None = None
    strategy: Strategy = field(default_factory=Strategy)
    stored_valid: bool = False
    """Whether every stored object's ``spec`` and ``metadata`` pass the schema: the strategy's
    create-time defaults only add values the schema accepts, and the server itself only sets metadata
    fields of the types ``ObjectMeta`` declares (name, namespace, uid, timestamps, generation,
    resourceVersion, deletion grace, finalizers). See :meth:`schema_errors`."""
    rng: Any = None
    """A ``random.Random`` of this kind's own for uids (None: the server's). Kinds added later
    (EndpointSlices) draw from their own stream, so they never shift the uids of the kinds that were
    there before."""
    rng_for: Any = None
    """``(obj) -> random.Random | None``: a uid stream chosen per object (None: :attr:`rng`). Writes of an
    existing kind added later (the Job controller's Events) draw from their own stream, for the same
    reason as :attr:`rng`."""

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0] if "/" in self.api_version else ""

    def describe(self) -> str:
        """``jobs.batch``-style name used in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def schema_errors(
        self, obj: Obj, *, valid_spec: Obj | None = None, valid_metadata: Obj | None = None
    ) -> list[FieldError]:
        """Schema errors of ``obj``.

        ``valid_spec``/``valid_metadata``: a spec and a metadata known to pass the schema (the stored
        ones, for a kind whose stored objects always do). If ``obj["spec"]`` is that very spec object,
        as when a patch leaves the spec alone, only the rest of ``obj`` is checked, and of its metadata
        only the fields that are not the very objects ``valid_metadata`` holds: neither the top-level
        model nor ``ObjectMeta`` has model validators or required fields, so each field is valid or
        not on its own (``tests/test_apiserver.py`` holds ``ObjectMeta`` to that). Should anything be
        reported, the whole object is validated again, so the errors read exactly as a full validation
        reports them.
        """
        if self.model is None:
            return []
        from fakecluster.api.validation import validate_model

        if (valid_spec is not None and obj.get("spec") is valid_spec
                and not self.model.__pydantic_decorators__.model_validators):
            rest = {k: v for k, v in obj.items() if k != "spec"}
            meta = rest.get("metadata")
            if valid_metadata is not None and isinstance(meta, dict):
                rest["metadata"] = {k: v for k, v in meta.items() if valid_metadata.get(k, _ABSENT) is not v}
            if not validate_model(self.model, rest)[1]:
                return []
        return validate_model(self.model, obj)[1]

    def status_errors(self, status: Any) -> list[FieldError]:
        if self.status_model is None or status is None:
            return []
        from fakecluster.api.validation import validate_model

        return validate_model(self.status_model, status, root="status")[1]
