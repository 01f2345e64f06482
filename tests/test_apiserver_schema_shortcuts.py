"""The schema check's shortcuts (:meth:`fakecluster.apiserver.resources.ResourceType.schema_errors`) give
exactly what a full validation gives, for random objects built from stored, valid ones: a create from a
template that shares values with a stored pod's spec (``known_spec``), and an update that keeps the stored
spec and shares ``apiVersion``/``kind``/metadata values with the stored object (or replaces them with
valid or invalid ones)."""

from __future__ import annotations

from typing import Any

from apiserver_harness import make_server, pod
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, field_validator

from fakecluster.api.base import K8sModel
from fakecluster.api.core import Pod
from fakecluster.api.meta import ObjectMeta
from fakecluster.api.objects import Obj
from fakecluster.api.validation import validate_model
from fakecluster.apiserver.resources import ResourceType, _unvouched

_TOLERATIONS = [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
_SPEC_FIELDS: dict[str, tuple[Any, Any]] = {
    "hostname": ("h", 7),
    "subdomain": ("sub", ["x"]),
    "tolerations": ([{"key": "k2", "operator": "Exists"}], [{"key": 3}]),
    "priority": (5, "high"),
    "activeDeadlineSeconds": (30, 2**70),
    "nodeName": ("n", {"a": 1}),
    "restartPolicy": ("Never", "Sometimes"),
}
"""Spec fields a pod may add to its template: a fresh valid value and an invalid one each."""
_TOP_FIELDS: dict[str, tuple[Any, Any]] = {"apiVersion": ("v" + "1", 1), "kind": ("Po" + "d", ["Pod"])}
_META_FIELDS: dict[str, tuple[Any, Any]] = {
    "labels": ({"a": "b"}, {"a": "b", "c": 1}),
    "annotations": ({"x": "y"}, {"x": None}),
    "generation": (3, "three"),
    "name": ("p", 4),
    "generateName": ("p-", None),
    "ownerReferences": ([{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u"}], [{"kind": 1}]),
    "finalizers": (["f"], "f"),
    "managedFields": ([], [1]),
}
_EXTRA: list[tuple[str, str, Any] | None] = [
    None, ("", "bogus", 1), ("metadata", "bogus", "x"), ("spec", "bogus", True), ("", "metadata", None),
    ("", "spec", None), ("", "metadata", []), ("", "status", {"phase": 1}), ("spec", "hostname", "\x00"),
]
"""An unknown field at the top, in the metadata or in the spec; a metadata or spec that is no object."""
CHOICES = st.sampled_from(["absent", "stored", "valid", "invalid"])


def _stored_pod() -> tuple[ResourceType, Any, Obj]:
    _, server = make_server()
    template = server.validated_spec("Pod", pod("t")["spec"])
    stored = server.create(pod("known", hostname="known", subdomain="s", tolerations=_TOLERATIONS, priority=0,
                               activeDeadlineSeconds=60, nodeName="node"))
    return server.resource("Pod"), template, stored


def _pick(choice: str, stored: Obj, key: str, values: tuple[Any, Any], out: Obj) -> None:
    if choice == "stored" and key in stored:
        out[key] = stored[key]
    elif choice == "valid":
        out[key] = values[0]
    elif choice == "invalid":
        out[key] = values[1]
    else:
        out.pop(key, None)


@settings(max_examples=300, deadline=None)
@given(spec_choices=st.lists(CHOICES, min_size=len(_SPEC_FIELDS), max_size=len(_SPEC_FIELDS)),
       top_choices=st.lists(CHOICES, min_size=len(_TOP_FIELDS), max_size=len(_TOP_FIELDS)),
       meta_choices=st.lists(CHOICES, min_size=len(_META_FIELDS), max_size=len(_META_FIELDS)),
       extra=st.sampled_from(_EXTRA), without_known=st.booleans())
def test_a_create_from_a_template_is_checked_as_in_full(
        spec_choices: list[str], top_choices: list[str], meta_choices: list[str],
        extra: tuple[str, str, Any] | None, without_known: bool) -> None:
    """Template values and a stored spec's values left out (``known_spec``), the rest vouched for by
    plain checks field by field or validated by pydantic: the errors are a full validation's."""
    rtype, template, stored = _stored_pod()
    spec = dict(template.spec)
    for choice, (key, values) in zip(spec_choices, _SPEC_FIELDS.items(), strict=True):
        _pick(choice, stored["spec"], key, values, spec)
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": spec}
    for choice, (key, values) in zip(top_choices, _TOP_FIELDS.items(), strict=True):
        _pick(choice, stored, key, values, obj)
    for choice, (key, values) in zip(meta_choices, _META_FIELDS.items(), strict=True):
        _pick(choice, stored["metadata"], key, values, obj["metadata"])
    if extra is not None:
        where, key, value = extra
        (obj[where] if where else obj)[key] = value
    known = None if without_known else stored["spec"]
    expected = validate_model(Pod, obj)[1]
    assert rtype.schema_errors(obj, spec_template=template.spec, meta_template=template.metadata,
                               known_spec=known) == expected


@settings(max_examples=300, deadline=None)
@given(top_choices=st.lists(CHOICES, min_size=len(_TOP_FIELDS), max_size=len(_TOP_FIELDS)),
       meta_choices=st.lists(CHOICES, min_size=len(_META_FIELDS), max_size=len(_META_FIELDS)),
       extra=st.sampled_from([None, ("status", {"phase": 1}), ("bogus", 1)]))
def test_an_update_keeping_the_stored_spec_is_checked_as_in_full(
        top_choices: list[str], meta_choices: list[str], extra: tuple[str, Any] | None) -> None:
    rtype, _, stored = _stored_pod()
    stored = {**stored, "metadata": {**stored["metadata"], "labels": {"l": "v"}, "annotations": {"a": "v"}}}
    body: Obj = {k: v for k, v in stored.items() if k != "status"}
    for choice, (key, values) in zip(top_choices, _TOP_FIELDS.items(), strict=True):
        _pick(choice, stored, key, values, body)
    meta = dict(stored["metadata"])
    for choice, (key, values) in zip(meta_choices, _META_FIELDS.items(), strict=True):
        _pick(choice, stored["metadata"], key, values, meta)
    body["metadata"] = meta
    if extra is not None:
        body[extra[0]] = extra[1]
    expected = validate_model(Pod, body)[1]
    assert rtype.schema_errors(body, valid_spec=stored["spec"], valid_metadata=stored["metadata"],
                               stored=stored) == expected


class _Strict(BaseModel):
    """A model that an object with nothing but empty metadata fails: the cached verdict must say so."""

    model_config = ConfigDict(extra="forbid", strict=True)
    apiVersion: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: dict[str, Any] | None = None
    size: int


def test_the_cached_verdict_on_empty_metadata_is_the_models() -> None:
    rtype = ResourceType("Thing", "example.com/v1", "things", model=_Strict)
    stored: Obj = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {},
                   "size": 1}
    body = {k: v for k, v in stored.items() if k != "size"}
    for _ in range(2):  # asked, then cached
        assert rtype.schema_errors(body, valid_spec=stored["spec"], valid_metadata=stored["metadata"],
                                   stored=stored) == validate_model(_Strict, body)[1] != []
        assert rtype.schema_errors(stored, valid_spec=stored["spec"], valid_metadata=stored["metadata"],
                                   stored=stored) == []


class _Inner(K8sModel):
    a: str | None = None
    b: str


class _Checked(K8sModel):
    c: str | None = None

    @field_validator("c")
    @classmethod
    def _not_x(cls, value: str | None) -> str | None:
        if value == "x":
            raise ValueError("no x")
        return value


class _Outer(K8sModel):
    name: str | None = None
    inner: _Inner | None = None
    checked: _Checked | None = None


def test_only_models_that_check_each_field_on_its_own_are_vouched_for_field_by_field() -> None:
    """A nested model with a required field, or with a validator, is left whole to pydantic: its fields
    passing one by one says nothing about it."""
    assert _unvouched(_Outer, {"name": "n", "inner": {"a": "x"}}) == {"inner": {"a": "x"}}
    assert _unvouched(_Outer, {"checked": {"c": "x"}}) == {"checked": {"c": "x"}}
    assert _unvouched(_Checked, {"c": "x"}) == {"c": "x"}
    assert _unvouched(_Outer, {"name": "n", "bogus": 1}) == {"bogus": 1}
