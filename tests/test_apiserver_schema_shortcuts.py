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
from pydantic import BaseModel, ConfigDict

from fakecluster.api.core import Pod
from fakecluster.api.meta import ObjectMeta
from fakecluster.api.objects import Obj
from fakecluster.api.validation import validate_model
from fakecluster.apiserver.resources import ResourceType

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
}
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
       without_known=st.booleans())
def test_a_create_from_a_template_sharing_a_stored_specs_values_is_checked_as_in_full(
        spec_choices: list[str], top_choices: list[str], without_known: bool) -> None:
    rtype, template, stored = _stored_pod()
    spec = dict(template.spec)
    for choice, (key, values) in zip(spec_choices, _SPEC_FIELDS.items(), strict=True):
        _pick(choice, stored["spec"], key, values, spec)
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                "spec": spec}
    for choice, (key, values) in zip(top_choices, _TOP_FIELDS.items(), strict=True):
        _pick(choice, stored, key, values, obj)
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
