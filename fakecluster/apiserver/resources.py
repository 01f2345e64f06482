"""What the API server knows about each kind: its REST identity and its strategy.

Mirrors the split in k8s.io/apiserver's generic registry: the store does the storage mechanics
(resourceVersion, conflicts, finalizers, watch), a per-kind *strategy* does defaulting, validation and
the rules for what a write may change (``PrepareForCreate``, ``PrepareForUpdate``, ``Validate``...).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, RootModel, create_model
from pydantic.fields import FieldInfo

from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj, shared_ends
from fakecluster.api.validation import PlainCheck, decoded_model, partial_model, plain_check, validate_model

_ABSENT = object()


def _own_metadata(meta: Obj, template: Obj, vouched: tuple[str, ...] = ()) -> Obj:
    """The part of ``meta`` that is not ``template``'s very values: fields by identity, and of labels and
    annotations the entries by identity (a pod's labels are its template's plus its own). The fields
    ``vouched`` for are left out whole."""
    own: Obj = {}
    for key, value in meta.items():
        shared = template.get(key, _ABSENT)
        if shared is value or key in vouched:
            continue
        if key in _STRING_MAPS and type(value) is dict and type(shared) is dict:
            own[key] = {k: v for k, v in value.items() if shared.get(k, _ABSENT) is not v}
        else:
            own[key] = value
    return own


_STRING_MAPS = ("labels", "annotations")
_STRING_MAP_TYPE = dict[str, str] | None
_plain_string_maps: dict[type[BaseModel], bool] = {}
"""Per model: whether :func:`_string_maps_are_plain`."""


def _string_maps_are_plain(model: type[BaseModel]) -> bool:
    """Whether ``model``'s ``metadata`` holds a model (``ObjectMeta``) that validates each field on its
    own and declares ``labels`` and ``annotations`` exactly ``dict[str, str] | None``, without
    constraints: then a dict whose keys and values are all ``str`` instances passes them (pydantic's
    strict mode takes ``str`` subclasses too: ``tests/test_perf_podpath_create.py`` holds it to that),
    which is what :func:`~fakecluster.apiserver.metadata_checks.check_metadata_types` makes sure of
    before any schema check."""
    known = _plain_string_maps.get(model)
    if known is None:
        info = model.model_fields.get("metadata")
        nested = _nested_model(info) if info is not None else None
        known = nested is not None and all(
            (field := nested.model_fields.get(name)) is not None and field.annotation == _STRING_MAP_TYPE
            and not field.metadata
            and (field.validation_alias if field.validation_alias is not None else field.alias) == name
            for name in _STRING_MAPS)
        _plain_string_maps[model] = known
    return known
_STORED_VALID_TOP = ("apiVersion", "kind")
"""Top-level fields besides ``spec`` and ``metadata`` that every write path validates before it stores
them (a create checks the whole object, an update all but ``status``, a status write or ``pods/binding``
keeps the stored ones): for a :attr:`ResourceType.stored_valid` kind, a stored object's values of these
passed the schema too."""
_nothing_else_valid: dict[type[Any], bool] = {}
"""Per model: whether ``{"metadata": {}}`` passes it (what is left to check of an update that changed
nothing outside its spec and metadata but some metadata values the stored ones vouch for): the validator
is deterministic, so it is asked once."""


_FieldCheck = tuple["PlainCheck | None", "type[BaseModel] | None", bool]
_FieldChecks = dict[str, _FieldCheck]
_field_checks: dict[type[BaseModel], _FieldChecks | None] = {}


def _on_its_own(model: type[BaseModel]) -> bool:
    """Whether ``model`` validates each field present on its own and accepts any of them left out: no
    validators of any kind, no required field, no post-init hook, not a root model. Then an object
    passes iff each of its fields does."""
    decorators = model.__pydantic_decorators__
    return not (decorators.model_validators or decorators.field_validators or decorators.root_validators
                or decorators.validators or issubclass(model, RootModel)
                or model.__pydantic_post_init__ is not None or model.__pydantic_custom_init__
                or any(info.is_required() for info in model.model_fields.values()))


def _nested_model(info: FieldInfo) -> type[BaseModel] | None:
    """The model a field holds, when it is declared as exactly ``M`` or ``M | None`` without constraints
    (a dict value is then validated as ``M``, whatever else)."""
    annotation: Any = info.annotation
    if info.metadata or info.discriminator is not None:
        return None
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1 or len(typing.get_args(annotation)) != 2:
            return None
        annotation = members[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and _on_its_own(annotation):
        return annotation
    return None


_BUILD: Any = object()
"""A field whose check is not built yet (:func:`_field_check`)."""


def _checks_of(model: type[BaseModel]) -> _FieldChecks | None:
    """Per wire name of ``model``'s fields, its check (:func:`_field_check`), built the first time a
    field is met (a pod's create meets five of PodSpec's forty fields; building one costs a model).
    None if ``model`` does not validate its fields on their own."""
    if model in _field_checks:
        return _field_checks[model]
    checks: _FieldChecks | None = None
    if _on_its_own(model):
        checks = {}
        for name, info in model.model_fields.items():
            wire = info.validation_alias if info.validation_alias is not None else (info.alias or name)
            if isinstance(wire, str):
                checks[wire] = _BUILD
    _field_checks[model] = checks
    return checks


def _field_check(model: type[BaseModel], wire: str) -> _FieldCheck:
    """The :func:`~fakecluster.api.validation.plain_check` of a model of ``model``'s field ``wire``
    alone, declared as ``model`` declares it (same annotation, constraints, alias and config; None where
    the plain check does not model it); the model the field holds when a dict value is validated as
    that model on its own (``metadata``'s ``ObjectMeta``, a partial spec); and whether the plain check
    accepts a string there. A plain check passes a leaf on its exact type alone (``type(v) is str``,
    for a node without constraints), so then it accepts every ``str``, and :func:`_unvouched` need not
    call it for one (most fields a create leaves to check are strings: names, ``kind``, ``hostname``)."""
    for name, info in model.model_fields.items():
        if (info.validation_alias if info.validation_alias is not None else (info.alias or name)) == wire:
            one: type[BaseModel] = create_model(  # type: ignore[call-overload]
                f"{model.__name__}_{name}", __config__=model.model_config,
                **{name: (info.annotation, FieldInfo.merge_field_infos(info, default=None))})
            check = plain_check(one)
            return check, _nested_model(info), check is not None and check({wire: ""}, None)
    return None, None, False


def _unvouched(model: type[BaseModel], obj: Obj) -> Obj:
    """What of ``obj`` (a dict to validate against ``model``) the plain checks of single fields do not
    vouch for: a field whose check accepts it is valid as ``model``'s field (a plain check accepts only
    what the validator accepts), and within a field that holds a model validating its fields on its own,
    the same, field by field. If ``model`` validates its fields on their own (:func:`_on_its_own`),
    ``obj`` passes ``model`` iff what is returned does; an empty result passes."""
    checks = _checks_of(model)
    if checks is None:
        return obj
    left: Obj = {}
    for key, value in obj.items():
        entry = checks.get(key)
        if entry is None:
            left[key] = value
            continue
        if entry is _BUILD:
            entry = checks[key] = _field_check(model, key)
        check, nested, any_string = entry
        if any_string and type(value) is str:
            continue
        if nested is not None and type(value) is dict:
            inner = _unvouched(nested, value)
            if inner:
                left[key] = inner
        elif check is None or not check({key: value}, None):
            left[key] = value
    return left


class Strategy:
    """Per-kind hooks; the defaults behave like a plain custom resource without extra rules."""

    copies_on_write = False
    """Whether :meth:`prepare_for_create` sets only top-level and ``metadata`` fields and replaces,
    never changes in place, anything nested: then a donated object (``create_donated``) need not
    be deep-copied first."""

    def prepare_for_create(self, obj: Obj, now: str) -> None:
        """Defaulting and status reset on create (``PrepareForCreate`` + scheme defaults)."""

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """Adjust an update before validation (e.g. defaults for fields added by the update)."""

    def validate(self, obj: Obj) -> list[FieldError]:
        """Semantic validation beyond the schema (names, cross-field rules)."""
        return []

    def validate_create(self, obj: Obj, from_template: bool) -> list[FieldError]:
        """The semantic validation of a create: :meth:`validate`, unless the kind checks more of a body
        whose spec was not built from one this server validated already (``from_template``: a create with
        ``template=``, whose spec passed the owner's validation, as a Job's pod template passes the pod
        spec rules when the Job is created)."""
        return self.validate(obj)

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
    go_spec_type: str | None = None
    """The Go type a built-in kind's ``spec`` decodes into (``v1.PodSpec``): a spec that is not a JSON
    object is then a 400 at decoding, before admission (:func:`~fakecluster.apiserver.metadata_checks.
    check_spec_type`)."""
    status_decoded: bool = False
    """Whether :attr:`status_model` is applied as Go's JSON decoder reads a built-in type (every field
    optional, enums any string: :func:`~fakecluster.api.validation.decoded_model`), as for the status
    subresource of the built-in kinds; a custom resource's status meets its schema as it is."""
    strategy: Strategy = field(default_factory=Strategy)
    stored_valid: bool = False
    """Whether every stored object's ``spec`` and ``metadata`` pass the schema: the strategy's
    create-time defaults only add values the schema accepts, and the server itself only sets metadata
    fields of the types ``ObjectMeta`` declares (name, namespace, uid, timestamps, generation,
    resourceVersion, deletion grace, finalizers); and so do its ``apiVersion`` and ``kind``, which every
    write validates or keeps (``_STORED_VALID_TOP``). See :meth:`schema_errors`."""
    item_lists: tuple[str, ...] = ()
    """Top-level list fields whose items the schema checks one by one (no constraint spans items, no
    model validator on the kind): an update's items that are the very objects of the stored version's
    list passed the schema when that version was written, so only the others are checked (an
    EndpointSlice's ``endpoints``: a write changes one endpoint of up to 100). See :meth:`schema_errors`."""
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

    def schema_errors(
        self,
        obj: Obj,
        *,
        valid_spec: Obj | None = None,
        valid_metadata: Obj | None = None,
        spec_template: Obj | None = None,
        meta_template: Obj | None = None,
        stored: Obj | None = None,
        known_spec: Obj | None = None,
        strings_checked: bool = False,
    ) -> list[FieldError]:
        """Schema errors of ``obj``.

        ``stored``: the version ``obj`` replaces, for :attr:`item_lists`: of those lists, only the items
        that are not that version's very (stored, never mutated) item objects are checked, and of the
        rest of ``obj`` only what is not that version's very values; anything reported means a full
        validation, as below.

        ``valid_spec``/``valid_metadata``: a spec and a metadata known to pass the schema (the stored
        ones, for a kind whose stored objects always do). If ``obj["spec"]`` is that very spec object,
        as when a patch leaves the spec alone, only the rest of ``obj`` is checked, and of its metadata
        only the fields that are not the very objects ``valid_metadata`` holds: neither the top-level
        model nor ``ObjectMeta`` has model validators or required fields, so each field is valid or
        not on its own (``tests/test_apiserver.py`` holds ``ObjectMeta`` to that). Should anything be
        reported, the whole object is validated again, so the errors read exactly as a full validation
        reports them.

        ``spec_template``: a spec validated against this schema that ``obj["spec"]`` was built from (see
        :class:`~fakecluster.apiserver.server.ValidatedSpec`): everything but the spec is validated, and
        of the spec only the fields whose values are not the template's very objects, in one call of the
        partial model (:func:`~fakecluster.api.validation.partial_model`); a spec lacking one of the
        template's fields is validated whole. ``meta_template``: metadata fields validated with it; the
        object's metadata fields that are those very values are not checked again, nor the labels and
        annotations that are the template's very entries (each ``dict[str, str]`` entry is valid on its
        own). Again any doubt means a full validation.

        ``known_spec``: with ``spec_template``, a spec of this kind the store holds and knows valid (a
        :attr:`stored_valid` kind's, never mutated): its very values are valid as the same fields of the
        partial spec (each field is checked on its own), so they are left out too (the tolerations the
        ``DefaultTolerationSeconds`` plugin gives every pod: one shared list, whose two ``Toleration``
        models cost half a pod's check). Of what is then left, the fields the plain checks of single
        fields vouch for are not handed to pydantic either (:func:`_unvouched`; a pod's own names,
        labels and ``hostname``: usually all of it). ``strings_checked``: the caller has made sure that
        the metadata's labels and annotations are dicts of strings (the write path's type checks run
        before any schema check): where the kind's ``ObjectMeta`` takes any such dict there
        (:func:`_string_maps_are_plain`), they are not looked at again, entry by entry, either.

        With ``valid_spec`` and ``valid_metadata`` (a :attr:`stored_valid` kind), ``stored``'s very
        ``apiVersion`` and ``kind`` are left out as well (they passed when stored, see
        ``_STORED_VALID_TOP``); should nothing be left but an empty metadata, the model's verdict on that
        is asked once per model (``_nothing_else_valid``).
        """
        model = self.model
        if model is None:
            return []
        if stored is not None and self.item_lists:
            trimmed = self._without_stored_parts(obj, stored)
            if trimmed is not None:
                if not validate_model(partial_model(model) or model, trimmed)[1]:
                    return []
                return validate_model(model, obj)[1]
        spec = obj.get("spec")
        if spec_template is not None and isinstance(spec, dict):
            if spec is spec_template:
                valid_spec = spec_template
            elif spec.keys() >= spec_template.keys():
                partial = partial_model(model)
                if partial is not None:
                    rest = {k: v for k, v in obj.items() if k != "spec"}
                    known = known_spec if known_spec is not None else {}
                    rest["spec"] = {k: v for k, v in spec.items() if spec_template.get(k, _ABSENT) is not v
                                    and known.get(k, _ABSENT) is not v}
                    meta = rest.get("metadata")
                    if meta_template and isinstance(meta, dict):
                        vouched = _STRING_MAPS if strings_checked and _string_maps_are_plain(model) else ()
                        rest["metadata"] = _own_metadata(meta, meta_template, vouched)
                    left = _unvouched(partial, rest)  # most often nothing: no pydantic call
                    if not left or not validate_model(partial, left)[1]:
                        return []
                return validate_model(model, obj)[1]
        if (valid_spec is not None and spec is valid_spec
                and not model.__pydantic_decorators__.model_validators):
            rest = {k: v for k, v in obj.items() if k != "spec"}
            meta = rest.get("metadata")
            if valid_metadata is not None and isinstance(meta, dict):
                rest["metadata"] = {k: v for k, v in meta.items() if valid_metadata.get(k, _ABSENT) is not v}
                if stored is not None:
                    for key in _STORED_VALID_TOP:
                        if key in rest and stored.get(key, _ABSENT) is rest[key]:
                            del rest[key]
                    if len(rest) == 1 and not rest["metadata"]:
                        verdict = _nothing_else_valid.get(model)
                        if verdict is None:
                            verdict = _nothing_else_valid[model] = not validate_model(model, rest)[1]
                        if verdict:
                            return []
                        return validate_model(model, obj)[1]
            if not validate_model(model, rest)[1]:
                return []
        return validate_model(model, obj)[1]

    def _without_stored_parts(self, obj: Obj, stored: Obj) -> Obj | None:
        """What of ``obj`` is not ``stored``'s very (stored, never mutated) objects; None if nothing is
        shared. Of the :attr:`item_lists`, the items ``stored`` holds at the same place from either end
        (by identity) are left out: a new version usually adds, removes or replaces one item and shares
        the rest, so skipping the common head and tail (at C speed) leaves the changed middle, which is
        checked (an item moved elsewhere is simply checked). Of the other fields, and of the metadata's,
        those that are ``stored``'s very values are left out too. The result is checked with the
        :func:`~fakecluster.api.validation.partial_model`, which validates each field present exactly
        as the full model does (the full model is used when there is no partial one)."""
        trimmed: Obj | None = None
        for name in self.item_lists:
            items, before = obj.get(name), stored.get(name)
            if not isinstance(items, list) or not isinstance(before, list) or not before or not items:
                continue
            head, tail = shared_ends(before, items)
            if head or tail:
                if trimmed is None:
                    trimmed = dict(obj)
                trimmed[name] = items[head:len(items) - tail]
        if trimmed is None:
            return None
        for key, value in obj.items():
            if key not in self.item_lists and stored.get(key, _ABSENT) is value:
                del trimmed[key]
        meta, stored_meta = trimmed.get("metadata"), stored.get("metadata")
        if isinstance(meta, dict) and isinstance(stored_meta, dict):
            trimmed["metadata"] = _own_metadata(meta, stored_meta)
        return trimmed

    def status_errors(self, status: Any) -> list[FieldError]:
        if self.status_model is None or status is None:
            return []
        model = decoded_model(self.status_model) if self.status_decoded else self.status_model
        return validate_model(model, status, root="status")[1]
