"""Wire-form helpers: deep copy and RFC 7386 JSON merge patch (fakecluster/api/objects.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakecluster.api.objects import (
    clone,
    condition_true,
    controller_of,
    get_condition,
    labels_of,
    merge_patch,
    owner_reference,
    shared_ends,
)


def _sample() -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x"]},
        "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}], "nodeName": None},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "ok": True, "n": 1.5},
    }


def test_clone_is_deep_and_equal() -> None:
    original = _sample()
    copied = clone(original)
    assert copied == original
    copied["metadata"]["labels"]["a"] = "2"
    copied["spec"]["containers"][0]["ports"][0]["containerPort"] = 81
    copied["metadata"]["finalizers"].append("y")
    copied["status"]["conditions"].append({"type": "X"})
    assert original == _sample()


def test_clone_shares_no_containers() -> None:
    original = _sample()
    copied = clone(original)

    def containers(value: Any) -> list[int]:
        if isinstance(value, dict):
            return [id(value)] + [i for v in value.values() for i in containers(v)]
        if isinstance(value, list):
            return [id(value)] + [i for v in value for i in containers(v)]
        return []

    assert not set(containers(original)) & set(containers(copied))


def test_clone_of_scalars_and_top_level_list() -> None:
    assert clone(3) == 3
    assert clone(None) is None
    assert clone("x") == "x"
    nested = [[1, {"a": [2]}]]
    copied = clone(nested)
    assert copied == nested
    copied[0][1]["a"].append(3)
    assert nested == [[1, {"a": [2]}]]


def test_merge_patch_null_deletes_and_nested_merge() -> None:
    target = {"metadata": {"labels": {"a": "1", "b": "2"}, "name": "x"}, "spec": {"x": 1}}
    patched = merge_patch(target, {"metadata": {"labels": {"a": None, "c": "3"}}})
    assert patched == {"metadata": {"labels": {"b": "2", "c": "3"}, "name": "x"}, "spec": {"x": 1}}


def test_merge_patch_replaces_lists_wholesale() -> None:
    target = {"spec": {"tolerations": [{"key": "a"}, {"key": "b"}], "x": 1}}
    patched = merge_patch(target, {"spec": {"tolerations": [{"key": "c"}]}})
    assert patched == {"spec": {"tolerations": [{"key": "c"}], "x": 1}}


def test_merge_patch_never_mutates_target_or_patch() -> None:
    target = _sample()
    patch = {"metadata": {"labels": {"a": None, "z": "9"}}, "spec": {"containers": [{"name": "d"}]},
             "status": None}
    target_before = copy.deepcopy(target)
    patch_before = copy.deepcopy(patch)
    patched = merge_patch(target, patch)
    assert target == target_before
    assert patch == patch_before
    patched["spec"]["containers"][0]["name"] = "mutated"
    assert patch == patch_before


def test_merge_patch_deleting_absent_key_is_harmless() -> None:
    assert merge_patch({"a": 1}, {"b": None}) == {"a": 1}


# RFC 7386 appendix A, verbatim.
@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc7386_examples(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


def test_merge_patch_keeps_nulls_inside_replacement_lists() -> None:
    assert merge_patch({}, {"a": [{"b": None}]}) == {"a": [{"b": None}]}


def test_labels_of() -> None:
    assert labels_of({"metadata": {"name": "n"}}) == {}
    assert labels_of({"metadata": {"labels": None}}) == {}
    assert labels_of({"metadata": {"labels": {"k": "v"}}}) == {"k": "v"}


def test_owner_reference_and_controller_of() -> None:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "uid": "u1"}}
    ref = owner_reference(owner)
    assert ref == {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1", "controller": True,
                   "blockOwnerDeletion": True}
    other = owner_reference({"apiVersion": "v1", "kind": "X", "metadata": {"name": "o", "uid": "u2"}},
                            controller=False, block=False)
    assert other["controller"] is False
    assert other["blockOwnerDeletion"] is False
    dependent = {"metadata": {"ownerReferences": [other, ref]}}
    assert controller_of(dependent) is ref
    assert controller_of({"metadata": {"ownerReferences": [other]}}) is None
    assert controller_of({"metadata": {}}) is None


def test_conditions() -> None:
    obj = {"status": {"conditions": [{"type": "Ready", "status": "False"},
                                     {"type": "Complete", "status": "True"}]}}
    assert get_condition(obj, "Ready") == {"type": "Ready", "status": "False"}
    assert get_condition(obj, "Missing") is None
    assert condition_true(obj, "Complete")
    assert not condition_true(obj, "Ready")
    assert not condition_true({}, "Ready")
    assert not condition_true({"status": None}, "Ready")


def test_shared_ends_counts_identical_items_from_both_ends_without_overlap() -> None:
    """The identity diff the schema check and the DNS server share (``fakecluster.api.objects``)."""
    a, b, c, d = ({"i": i} for i in range(4))
    assert shared_ends([a, b, c], [a, {"i": 1}, c]) == (1, 1)  # equal but not the same object: changed
    assert shared_ends([a, b, c], [a, b, d, c]) == (2, 1)  # one inserted
    assert shared_ends([a, b, c], [a, c]) == (1, 1)  # one removed
    assert shared_ends([a, a], [a, a, a]) == (2, 0)  # never counted twice
    assert shared_ends([], [a]) == (0, 0)
