"""A create from a template leaves the labels and annotations out of the schema check once the write
path's type checks have made sure they are dicts of strings (``schema_errors(strings_checked=True)``):
these tests hold that shortcut to a full validation, and pydantic to taking any ``str`` there."""

from __future__ import annotations

from typing import Annotated

import pytest
from annotated_types import MaxLen
from apiserver_harness import make_server, pod
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api import errors
from fakecluster.api.base import K8sModel
from fakecluster.api.core import Pod
from fakecluster.api.meta import ObjectMeta
from fakecluster.api.objects import Obj
from fakecluster.api.validation import validate_model
from fakecluster.apiserver.metadata_checks import check_metadata_types
from fakecluster.apiserver.resources import _string_maps_are_plain


class _Str(str):
    """A ``str`` subclass: passes the write path's type checks, and pydantic's strict ``str``."""


TEXT = st.text(max_size=4)
STRINGS = st.one_of(TEXT, TEXT.map(_Str))
STRING_MAPS = st.one_of(st.none(), st.dictionaries(STRINGS, STRINGS, max_size=3))
OTHER_META = st.sampled_from([{}, {"generation": "three"}, {"finalizers": "f"}, {"bogus": 1},
                              {"ownerReferences": [{"kind": 1}]}, {"name": 4}])
SPEC_CHANGES = st.sampled_from([{}, {"hostname": 7}, {"hostname": "h"}, {"bogus": True}])


def test_pydantic_takes_any_str_in_labels_and_annotations() -> None:
    meta = {"labels": {_Str("a"): _Str("b")}, "annotations": {_Str("c"): "d", "e": _Str("")}}
    assert validate_model(ObjectMeta, meta)[1] == []


def test_only_plain_string_maps_are_vouched_for() -> None:
    class TightMeta(K8sModel):
        labels: dict[str, Annotated[str, MaxLen(3)]] | None = None
        annotations: dict[str, str] | None = None

    class Tight(K8sModel):
        metadata: TightMeta | None = None

    assert _string_maps_are_plain(Pod)
    assert not _string_maps_are_plain(Tight)
    assert validate_model(Tight, {"metadata": {"labels": {"a": "long"}}})[1]


@settings(max_examples=300, deadline=None)
@given(labels=STRING_MAPS, annotations=STRING_MAPS, other=OTHER_META, spec_change=SPEC_CHANGES,
       shared_labels=st.booleans())
def test_a_create_from_a_template_with_checked_strings_is_checked_as_in_full(
        labels: dict[str, str] | None, annotations: dict[str, str] | None, other: Obj,
        spec_change: Obj, shared_labels: bool) -> None:
    _, server = make_server()
    template = server.validated_spec("Pod", pod("t")["spec"], {"labels": {"app": "a"}})
    meta: Obj = {"name": "p", "namespace": "default", **other}
    if shared_labels:
        meta["labels"] = template.metadata["labels"]
    elif labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {**template.spec, **spec_change}}
    try:
        check_metadata_types(meta)
    except errors.ApiError:
        return  # the create stops there, before any schema check
    rtype = server.resource("Pod")
    assert rtype.schema_errors(obj, spec_template=template.spec, meta_template=template.metadata,
                               strings_checked=True) == validate_model(Pod, obj)[1]


_REFERENCE = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u", "controller": True}
_SHARED = {"finalizers": ["example.com/f"], "ownerReferences": [_REFERENCE]}
_UNMARSHAL = "cannot unmarshal number into Go struct field "


@pytest.mark.parametrize(("metadata", "message"), [
    ({"labels": {"a": 1}}, _UNMARSHAL + "ObjectMeta.metadata.labels of type string"),
    ({"labels": {"a": _Str("b")}}, None),
    ({"finalizers": "shared", "ownerReferences": "shared"}, None),
    ({"finalizers": [1], "ownerReferences": "shared"},
     _UNMARSHAL + "ObjectMeta.metadata.finalizers of type string"),
    ({"finalizers": "shared", "ownerReferences": [{**_REFERENCE, "controller": 1}]},
     _UNMARSHAL + "OwnerReference.metadata.ownerReferences.controller of type bool"),
])
def test_a_donated_create_from_a_template_answers_as_a_plain_one(metadata: Obj, message: str | None) -> None:
    """The template's metadata (finalizers and references as a Job's pods share them) vouches only for
    its very values: other values are checked, and answered, as without a template."""
    outcomes = []
    for with_template in (False, True):
        _, server = make_server()
        template = server.validated_spec("Pod", pod("t")["spec"], _SHARED)
        obj = pod("p")
        obj["spec"] = dict(template.spec)
        obj["metadata"].update({k: template.metadata[k] if v == "shared" else v for k, v in metadata.items()})
        try:
            created = server.create(obj, donate=with_template, template=template if with_template else None)
            outcomes.append(("created", {k: created["metadata"][k] for k in metadata}))
        except errors.ApiError as err:
            outcomes.append((err.code, err.message))
    assert outcomes[0] == outcomes[1]
    if message is not None:
        assert message in str(outcomes[0][1])
    else:
        assert outcomes[0][0] == "created"
