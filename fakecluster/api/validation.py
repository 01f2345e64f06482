"""Schema validation that answers like the API server: a list of ``field.Error`` values with wire paths.

Pydantic does the work (in Rust); this module only translates its errors. The translation mirrors what a
user of a real cluster sees for the same mistake:

- an unknown field fails strict field validation: ``unknown field "spec.template.spec.containers[0].foo"``;
- a missing required field is ``Required value``;
- a value outside an enum is ``Unsupported value: "X": supported values: "A", "B"``;
- a wrong JSON type, a number out of range or a string failing a CRD ``pattern`` is ``Invalid value``.

Paths use the JSON (alias) names, list indices and map keys in brackets, like ``field.Path``:
``spec.replicatedJobs[0].template.spec.template.spec.containers[1].resources.limits[cpu]``.

Cost, measured with pydantic 2.14.4 / pydantic-core 2.50.5 on CPython 3.11 (CI container, best of 5 x
20 000 calls): ``validate_model(Pod, pod)`` on a typical running 2-container JobSet pod (10 labels,
owner reference, finalizer, env, ports, resources, probe, 2 tolerations, 5 conditions, 2 container
statuses) takes ~29 µs; a JobSet with two replicated Jobs (``simple-paralleljobs.yaml``) ~17 µs; ``dump``
of that Pod ~15 µs. Nearly all of it is pydantic-core building ~25 nested instances; lax mode, JSON
input or dropping the wire-names-only flag change it by less than 5 %. Error translation below only
runs for invalid objects.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo

from fakecluster.api.base import QUANTITY_EXACT_PATTERN
from fakecluster.api.errors import FieldError
from fakecluster.api.quantity import FORMAT_MESSAGE, parse_quantity, quantity_error

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "STANDARD_RESOURCES",
    "decoded_model",
    "dump",
    "inclusive_range_error",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_in_range",
    "is_qualified_name",
    "is_valid_label_value",
    "item_model",
    "max_len_error",
    "partial_model",
    "plain_check",
    "regex_error",
    "spec_model",
    "validate_model",
    "validate_resource_name",
    "validate_resource_quantity_value",
]  # fmt: skip

M = TypeVar("M", bound=BaseModel)

_WIRE_NAMES_ONLY: dict[str, Any] = (
    {"by_alias": True, "by_name": False}
    if "by_name" in inspect.signature(BaseModel.model_validate).parameters
    else {}
)
"""Accept only JSON names on input (pydantic >= 2.11): ``populate_by_name`` exists so Python code can
write ``Container(image_pull_policy=...)``, but ``image_pull_policy`` in a manifest is an unknown field."""

_TYPE_DETAILS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "string_type": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "float_type": "a number",
    "float_parsing": "a number",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
}
_BOUND_WORDS = {
    "greater_than_equal": ("ge", "greater than or equal to"),
    "greater_than": ("gt", "greater than"),
    "less_than_equal": ("le", "less than or equal to"),
    "less_than": ("lt", "less than"),
}
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def dump(model: BaseModel) -> dict[str, Any]:
    """Wire form of a model: JSON names, unset (``None``) fields omitted, as Go's ``omitempty`` does."""
    return model.model_dump(by_alias=True, exclude_none=True)


def validate_model(
    model: type[M], obj: Mapping[str, Any], root: str = ""
) -> tuple[M | None, list[FieldError]]:
    """Validate ``obj`` (wire form) against ``model``; return the typed view or the field errors.

    ``root`` prefixes every path, for validating a sub-tree (``validate_model(PodStatus, s, "status")``).
    """
    if not isinstance(obj, dict) and isinstance(obj, Mapping):
        obj = dict(obj)  # strict mode takes only real dicts as model input
    try:
        return model.model_validate(obj, **_WIRE_NAMES_ONLY), []
    except ValidationError as exc:
        return None, _translate(model, exc.errors(include_url=False), root)


def is_valid(model: type[BaseModel], obj: dict[str, Any], like: dict[str, Any] | None = None) -> bool:
    """Whether ``obj`` (wire form, a real dict) passes ``model``, as :func:`validate_model` decides,
    without the errors (the short update checks the changed endpoints of a write this way; the errors,
    when it fails, come from the full path).

    First :func:`plain_check`, which accepts only what the validator accepts; what it does not accept
    (an invalid object, or one of a shape it does not vouch for) goes to the model's validator, called
    directly. The verdict is the validator's either way; the plain check of a whole endpoint costs some
    18,000 instructions against the validator's 30,000 (it builds three model instances only to throw
    them away), and less when it shares values with ``like``.

    ``like``: an object known to pass ``model`` that nobody changes (an item of a stored version): the
    values of ``obj`` that are its very values under the same field passed then and are not checked
    again (a new version of an endpoint shares its addresses and target with the one it replaces)."""
    check = _plain_checks.get(model, _UNKNOWN)
    if check is _UNKNOWN:
        check = _plain_checks[model] = plain_check(model)
    if check is not None and check(obj, like):
        return True
    try:
        model.__pydantic_validator__.validate_python(obj, **_WIRE_NAMES_ONLY)
    except ValidationError:
        return False
    return True


_UNKNOWN: Any = object()
PlainCheck = Callable[[Any, "dict[str, Any] | None"], bool]
"""A model's :func:`plain_check`: ``(value, like)``, ``like`` as :func:`is_valid` takes it."""
_plain_checks: dict[type[BaseModel], PlainCheck | None] = {}
_Rule = tuple[frozenset[type], "Callable[..., bool] | None"]
"""How a value passes one node of a schema: its exact type is one of the first, or the second (a check of
a list, dict or model) says yes."""
_NONE_TYPE = type(None)
_LEAVES = {"str": str, "bool": bool}
"""Core schema types whose values pass on their exact type alone when the node carries no constraint
(strict or lax, pydantic accepts every ``str`` as a ``str`` field, surrogates and NULs included, and
every ``bool`` as a ``bool``)."""
_NODE_KEYS = {
    "str": {"type", "strict", "metadata"},
    "bool": {"type", "strict", "metadata"},
    "nullable": {"type", "schema", "strict", "metadata"},
    "list": {"type", "items_schema", "strict", "metadata"},
    "dict": {"type", "keys_schema", "values_schema", "strict", "metadata"},
    "model": {"type", "cls", "config", "custom_init", "metadata", "ref", "root_model", "schema"},
    "model-fields": {"type", "fields", "model_name", "computed_fields"},
    "model-field": {"type", "schema", "metadata", "serialization_alias", "validation_alias",
                    "serialization_exclude", "frozen"},
    "default": {"type", "schema", "default"},
}
"""The keys each supported core schema node may have. Any other key is a constraint, a validator, a
default that is validated, an alias path... that the plain check does not model: then there is none."""
_CONFIG_KEYS = {"extra_fields_behavior", "strict", "title", "validate_by_alias", "validate_by_name"}


class _Unsupported(Exception):
    """A schema node :func:`plain_check` does not model."""


def plain_check(model: type[BaseModel]) -> PlainCheck | None:
    """A check that accepts only objects ``model``'s validator (called as :func:`is_valid` calls it)
    accepts, built from the model's pydantic core schema, for models made of models, lists, string-keyed
    dicts, ``str``, ``bool`` and nullable or defaulted fields without constraints or validators (a
    ``discovery.Endpoint``); None for any other model.

    It vouches only for what is certainly valid: a dict of wire names only, every required one present,
    each value of the exact type the field takes (``type(v) is str``, not a subclass) or a list, dict
    or nested model that passes the same way. Whatever it refuses may still be valid (a ``str``
    subclass, a field given by its Python name when names are accepted): the validator decides those, so
    :func:`is_valid`'s verdict never depends on this check, only its cost."""
    try:
        return _model_check(model.__pydantic_core_schema__)
    except _Unsupported:
        return None


def _keys(node: Any, kind: str) -> None:
    if type(node) is not dict or node.get("type") != kind or not node.keys() <= _NODE_KEYS[kind]:
        raise _Unsupported(kind)


def _rule(node: Any) -> _Rule:
    kind = node.get("type") if type(node) is dict else None
    if kind in _LEAVES:
        _keys(node, kind)
        return frozenset({_LEAVES[kind]}), None
    if kind == "nullable":
        _keys(node, kind)
        types, sub = _rule(node["schema"])
        return types | {_NONE_TYPE}, sub
    if kind == "list":
        _keys(node, kind)
        return frozenset(), _list_check(*_rule(node["items_schema"]))
    if kind == "dict":
        _keys(node, kind)
        key_types, key_sub = _rule(node.get("keys_schema", {"type": "str"}))
        if key_types != {str} or key_sub is not None:
            raise _Unsupported("dict keys")
        return frozenset(), _dict_check(*_rule(node["values_schema"]))
    if kind == "model":
        return frozenset(), _model_check(node)  # (called with one argument: no ``like`` below the top)
    raise _Unsupported(str(kind))


def _list_check(types: frozenset[type], sub: Callable[[Any], bool] | None) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if type(value) is not list:
            return False
        for item in value:  # noqa: SIM110 -- all() over a generator costs more per endpoint
            if type(item) not in types and (sub is None or not sub(item)):
                return False
        return True
    return check


def _dict_check(types: frozenset[type], sub: Callable[[Any], bool] | None) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for key, item in value.items():
            if type(key) is not str or (type(item) not in types and (sub is None or not sub(item))):
                return False
        return True
    return check


def _model_check(node: Any) -> PlainCheck:
    """Plain Python loops: in CPython 3.11 a set operation on a dict view (``keys() <= allowed``) costs
    more instructions than looking each of an endpoint's few keys up."""
    _keys(node, "model")
    config = node.get("config", {})
    if (node.get("custom_init") or node.get("root_model") or not config.keys() <= _CONFIG_KEYS
            or config.get("validate_by_alias") is False):
        raise _Unsupported("model")
    fields_node = node["schema"]
    _keys(fields_node, "model-fields")
    leaves: dict[str, frozenset[type]] = {}
    subs: dict[str, Callable[[Any], bool] | None] = {}
    required = []
    for field in fields_node["fields"].values():
        _keys(field, "model-field")
        alias = field.get("validation_alias")
        if type(alias) is not str or alias in leaves:
            raise _Unsupported("alias")
        schema = field["schema"]
        if schema.get("type") == "default":
            _keys(schema, "default")
            schema = schema["schema"]
        else:
            required.append(alias)
        leaves[alias], subs[alias] = _rule(schema)
    needed = tuple(required)
    if len(set(leaves.values())) == 1 and not any(subs.values()):
        # Every field takes the same leaf types (an ObjectReference: a string or null).
        types = next(iter(leaves.values()))

        def uniform(value: Any, like: dict[str, Any] | None = None) -> bool:  # leaves: nothing to share
            if type(value) is not dict:
                return False
            for key, item in value.items():
                if key not in leaves or type(item) not in types:
                    return False
            for key in needed:  # noqa: SIM110 -- as above
                if key not in value:
                    return False
            return True
        return uniform

    def check(value: Any, like: dict[str, Any] | None = None) -> bool:
        if type(value) is not dict:
            return False
        for key, item in value.items():
            types = leaves.get(key)
            if types is None:
                return False
            if type(item) not in types:
                sub = subs[key]
                if sub is None or ((like is None or like.get(key, _UNKNOWN) is not item) and not sub(item)):
                    return False
        for key in needed:  # noqa: SIM110 -- as above
            if key not in value:
                return False
        return True
    return check


@cache
def partial_model(model: type[BaseModel]) -> type[BaseModel] | None:
    """``model`` with every field optional, and, if it has a ``spec``, that spec's model made partial the
    same way: for checking only what differs from an object already validated against ``model``, in one
    pydantic call (:meth:`~fakecluster.apiserver.resources.ResourceType.schema_errors`).

    Sound because a model without validators that see several fields validates each field on its own:
    a field present is checked exactly as ``model`` checks it (same annotation, constraints, aliases and
    strictness), and the required fields left out are the validated object's. None if ``model`` or its
    spec model has such validators; then nothing is checked partially."""
    decorators = model.__pydantic_decorators__
    if decorators.model_validators or decorators.field_validators or decorators.root_validators:
        return None
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        annotation: Any = info.annotation
        if name == "spec":
            inner = spec_model(model)
            partial_spec = partial_model(inner) if inner is not None else None
            if partial_spec is None:
                return None
            annotation = partial_spec | None
        fields[name] = (annotation, FieldInfo.merge_field_infos(info, default=None))
    partial: type[BaseModel] = create_model(
        f"{model.__name__}Partial", __config__=model.model_config, **fields)
    return partial


@cache
def decoded_model(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` as Go's JSON decoder reads a built-in type: every field, at every depth, optional (a
    missing field decodes to its zero value) and an enum any value of its base type (a ``string``), while
    a value of the wrong JSON type, a number out of its range or an unknown field is still refused. For
    the status subresource of built-in kinds, whose writes the real API server decodes and then checks
    only with a few semantic rules (``ValidatePodStatusUpdate``, ``ValidateJobUpdateStatus``): the full
    model's required fields and enums would refuse statuses that a real cluster stores. Built on first
    use, once per model."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        fields[name] = (_decoded(info.annotation) | None, FieldInfo.merge_field_infos(info, default=None))
    config = {**model.model_config, "defer_build": True}
    decoded: type[BaseModel] = create_model(f"{model.__name__}Decoded", __config__=config,  # type: ignore[call-overload]
                                            **fields)
    return decoded


def _decoded(annotation: Any) -> Any:
    """:func:`decoded_model`'s rewrite of one annotation: models made decoded, enums their base type."""
    if _is_model(annotation):
        return decoded_model(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return type(args[0])
    if origin is typing.Annotated:
        return typing.Annotated[(_decoded(args[0]), *annotation.__metadata__)]
    if origin in (typing.Union, types.UnionType):
        out = _decoded(args[0])
        for arg in args[1:]:
            out = out | _decoded(arg)
        return out
    generic: Any = origin  # subscripted at run time
    if origin is list:
        return generic[_decoded(args[0])]
    if origin is dict:
        return generic[args[0], _decoded(args[1])]
    return annotation


@cache
def spec_model(model: type[BaseModel]) -> type[BaseModel] | None:
    """The model of ``model``'s ``spec`` field (``PodSpec`` for ``Pod``), if it has one."""
    info = model.model_fields.get("spec")
    if info is None:
        return None
    for member in typing.get_args(info.annotation) or (info.annotation,):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member
    return None


@cache
def item_model(model: type[BaseModel], field: str) -> type[BaseModel] | None:
    """The model of one item of ``model``'s list field ``field``, by wire name (``Endpoint`` for an
    EndpointSlice's ``endpoints``), or None when the field is not a list of models."""
    item = _unwrap(_element_type(_unwrap(_fields_by_alias(model).get(field))))
    return item if _is_model(item) else None


def _translate(model: type[BaseModel], errors: list[Any], root: str) -> list[FieldError]:
    """Turn pydantic errors into ``FieldError``s, merging the per-member errors of one failed union."""
    ordered: list[FieldError | str] = []
    union_groups: dict[str, list[Any]] = {}
    for error in errors:
        path, via_union = _render_path(model, tuple(error["loc"]), root)
        if not via_union:
            ordered.append(_field_error(path, error))
        elif path in union_groups:
            union_groups[path].append(error)
        else:
            union_groups[path] = [error]
            ordered.append(path)
    return [_union_error(e, union_groups[e]) if isinstance(e, str) else e for e in ordered]


def _union_error(path: str, errors: list[Any]) -> FieldError:
    """One error for a value no member of a union accepted (``int | str``, a quantity...).

    An error from a member whose *type* matched (a quantity string with a bad shape) is the informative
    one; if every member rejected the type, the detail lists what would have been accepted.
    """
    for error in errors:
        if error["type"] not in _TYPE_DETAILS:
            return _field_error(path, error)
    kinds = list(dict.fromkeys(_TYPE_DETAILS[e["type"]] for e in errors))
    value = errors[0]["input"]
    if value is None:
        return FieldError.required(path)
    detail = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]
    return FieldError.invalid(path, value, f"must be {detail}")


def _field_error(path: str, error: Any) -> FieldError:
    kind: str = error["type"]
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return FieldError("Unknown", path, f'unknown field "{path}"', value)
    if kind == "missing":
        return FieldError.required(path)
    if kind in ("literal_error", "enum"):
        return FieldError.not_supported(path, value, _supported_values(ctx))
    if kind in _TYPE_DETAILS:
        if value is None:
            return FieldError.required(path)
        return FieldError.invalid(path, value, f"must be {_TYPE_DETAILS[kind]}")
    if kind in _BOUND_WORDS:
        key, words = _BOUND_WORDS[kind]
        return FieldError.invalid(path, value, f"{path} in body should be {words} {ctx.get(key)}")
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern", "")
        if pattern == QUANTITY_EXACT_PATTERN:
            return FieldError.invalid(path, value, quantity_error(value) or FORMAT_MESSAGE)
        return FieldError.invalid(path, value, f"{path} in body should match '{pattern}'")
    if kind == "string_too_short":
        return FieldError.invalid(
            path, value, f"{path} in body should be at least {ctx.get('min_length')} chars long"
        )
    if kind == "string_too_long":
        return FieldError.too_long(path, value, ctx.get("max_length", 0))
    if kind == "too_long":
        actual = ctx.get("actual_length")
        return FieldError(
            "TooMany", path, f"Too many: {actual}: must have at most {ctx.get('max_length')} items", actual
        )
    return FieldError.invalid(path, value, error.get("msg", kind))


def _supported_values(ctx: Mapping[str, Any]) -> tuple[str, ...]:
    """The enum members from pydantic's ``expected`` text (``"'Always', 'OnFailure' or 'Never'"``).

    ``""`` (the Go zero value accepted for non-pointer enums) is left out, as upstream's lists do.
    """
    expected = str(ctx.get("expected", ""))
    values = (single if single else double for single, double in _QUOTED.findall(expected))
    return tuple(v for v in values if v)


def _render_path(model: type[BaseModel], loc: tuple[Any, ...], root: str) -> tuple[str, bool]:
    """Render a pydantic ``loc`` as a ``field.Path`` string; also say whether it crossed a union.

    The model's type tree is walked alongside ``loc`` so that a string in ``loc`` is told apart as a field
    name (``.name``), a map key (``[name]``) or a union member tag (dropped).
    """
    path = root
    via_union = False
    node: Any = model
    index = 0
    while index < len(loc):
        item = loc[index]
        index += 1
        node = _unwrap(node)
        members = _union_members(node)
        if members is not None:
            via_union = True
            node = next((m for m in members if _is_model(m) and m.__name__ == item), None)
            continue
        if isinstance(item, int):
            path += f"[{item}]"
            node = _element_type(node)
        elif _is_model(node):
            path += f".{item}" if path else str(item)
            node = _fields_by_alias(node).get(item)
        elif typing.get_origin(node) is dict:
            if item == "[key]":
                continue
            path += f"[{item}]"
            node = typing.get_args(node)[1]
        elif item != "[key]":
            path += f".{item}" if path else str(item)
            node = None
    return path, via_union


def _unwrap(node: Any) -> Any:
    """Strip ``Annotated[...]`` and a nullable ``X | None`` (pydantic does not tag nullable in ``loc``)."""
    while True:
        origin = typing.get_origin(node)
        if origin is typing.Annotated:
            node = typing.get_args(node)[0]
        elif origin in (typing.Union, types.UnionType):
            rest = [a for a in typing.get_args(node) if a is not type(None)]
            if len(rest) != 1:
                return node
            node = rest[0]
        else:
            return node


def _union_members(node: Any) -> tuple[Any, ...] | None:
    if typing.get_origin(node) in (typing.Union, types.UnionType):
        return tuple(_unwrap(a) for a in typing.get_args(node) if a is not type(None))
    return None


def _element_type(node: Any) -> Any:
    args = typing.get_args(node)
    return args[0] if typing.get_origin(node) is list and args else None


def _is_model(node: Any) -> bool:
    return isinstance(node, type) and issubclass(node, BaseModel)


@cache
def _fields_by_alias(model: type[BaseModel]) -> dict[str, Any]:
    return {(info.alias or name): info.annotation for name, info in model.model_fields.items()}


# ---------------------------------------------------------------- apimachinery's generic validators
#
# Ported message for message from ``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go``
# (DNS names, ``MaxLenError``, ``RegexError``, ``InclusiveRangeError``), its label-key and label-value
# twins in ``staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube.go``, and the resource-name and
# quantity rules of ``pkg/apis/core/validation/validation.go`` (``validateResourceName``,
# ``ValidateResourceQuantityValue``) with ``pkg/apis/core/helper/helpers.go``'s standard resources. Each
# returns the list of detail strings Go returns (empty: valid), so callers wrap them in ``FieldError``s
# with their own paths, as ``field.Invalid(fldPath, value, msg)`` does upstream. Regexes are anchored with
# ``fullmatch`` and ASCII-only, as Go's RE2 classes are.

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start"
    " and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and"
    " must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic"
    " character, and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric"
    " character"
)
_LABEL_KEY_EXAMPLES = ("MyName", "my.name", "123-abc")
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must"
    " start and end with an alphanumeric character"
)
_RE_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT, re.ASCII)
_RE_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT, re.ASCII)
_RE_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT, re.ASCII)
_RE_LABEL_KEY = re.compile(_LABEL_KEY_FMT, re.ASCII)
_RE_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT, re.ASCII)

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
    "requests.storage", "services.nodeports", "services.loadbalancers",
})  # fmt: skip
"""``standardResources`` (``pkg/apis/core/helper/helpers.go``)."""
_INTEGER_RESOURCES = frozenset({
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})  # fmt: skip


def max_len_error(length: int) -> str:
    """``MaxLenError``."""
    return f"must be no more than {length} characters"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """``RegexError``: the message, the examples and the regex, worded as upstream."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range_error(low: int, high: int) -> str:
    """``InclusiveRangeError``."""
    return f"must be between {low} and {high}, inclusive"


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label`` (namespace names, ``NameIsDNSLabel``)."""
    errs = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _RE_DNS1123_LABEL.fullmatch(value):
        if _RE_DNS1123_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain`` (most object names, node names, label-key prefixes)."""
    return _bounded_match(
        value, DNS1123_SUBDOMAIN_MAX_LENGTH, _RE_DNS1123_SUBDOMAIN, _DNS1123_SUBDOMAIN_MSG,
        _DNS1123_SUBDOMAIN_FMT, "example.com",
    )  # fmt: skip


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label`` (Service names, ``NameIsDNS1035Label``)."""
    return _bounded_match(
        value, DNS1035_LABEL_MAX_LENGTH, _RE_DNS1035_LABEL, _DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT,
        "my-name", "abc-123",
    )  # fmt: skip


def _bounded_match(
    value: str, max_length: int, pattern: re.Pattern[str], msg: str, fmt: str, *examples: str
) -> list[str]:
    """The two checks of the DNS name validators: at most ``max_length`` characters, and ``pattern``
    matched (else :func:`regex_error` with ``msg``, ``fmt`` and ``examples``)."""
    errs = []
    if len(value) > max_length:
        errs.append(max_len_error(max_length))
    if not pattern.fullmatch(value):
        errs.append(regex_error(msg, fmt, *examples))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``IsLabelKey``: ``[prefix/]name``, the prefix a DNS-1123 subdomain."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend(f"prefix part {m}" for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, *_LABEL_KEY_EXAMPLES)
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _RE_LABEL_KEY.fullmatch(name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, *_LABEL_KEY_EXAMPLES))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue`` / ``IsLabelValue``."""
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _RE_LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_in_range(value: int, low: int, high: int) -> list[str]:
    """``IsInRange`` (int32 fields use ``INT32_MIN``..``INT32_MAX``, exit codes 0..255)."""
    return [] if low <= value <= high else [inclusive_range_error(low, high)]


def validate_resource_name(name: str) -> list[str]:
    """``validateResourceName``: a qualified name; without a ``/`` prefix it must be a standard resource
    (``hugepages-<size>`` included, as ``validateNodeResourceName`` accepts for node capacity)."""
    errs = is_qualified_name(name)
    if errs:
        return errs
    if "/" not in name and name not in STANDARD_RESOURCES and not name.startswith("hugepages-"):
        return ["must be a standard resource type or fully qualified"]
    return []


def validate_resource_quantity_value(name: str, value: str | int | float) -> list[str]:
    """``ValidateResourceQuantityValue``: parseable, ``>= 0``, whole for integer resources (``pods`` and
    extended resources such as ``nvidia.com/gpu``)."""
    try:
        amount = parse_quantity(value)
    except ValueError as exc:
        return [str(exc)]
    if amount < 0:
        return ["must be greater than or equal to 0"]
    extended = "/" in name and not name.startswith(("kubernetes.io/", "requests."))
    if (name in _INTEGER_RESOURCES or extended) and amount.denominator != 1:
        return ["must be an integer"]
    return []

