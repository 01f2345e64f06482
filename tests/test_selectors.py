"""Label selectors (fakecluster/apiserver/selectors.py) and the label index behind ``ApiServer.list``."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.api.selectors import (
    EVERYTHING,
    NOTHING,
    Requirement,
    Selector,
    as_selector,
    from_label_selector,
    from_match_labels,
    parse,
)
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock

# ----------------------------------------------------------------------------------- LabelSelector


def test_nil_label_selector_matches_nothing_and_empty_matches_everything() -> None:
    assert from_label_selector(None) is NOTHING
    assert not from_label_selector(None).matches({})
    assert not from_label_selector(None).matches({"a": "b"})
    assert from_label_selector({}).matches({})
    assert from_label_selector({}).matches({"a": "b"})
    assert from_label_selector({"matchLabels": {}, "matchExpressions": []}).matches({"x": "y"})


def test_match_labels_are_anded() -> None:
    sel = from_label_selector({"matchLabels": {"a": "1", "b": "2"}})
    assert sel.matches({"a": "1", "b": "2", "c": "3"})
    assert not sel.matches({"a": "1"})
    assert not sel.matches({"a": "1", "b": "3"})


@pytest.mark.parametrize(
    ("expr", "labels", "expected"),
    [
        ({"key": "a", "operator": "In", "values": ["1", "2"]}, {"a": "2"}, True),
        ({"key": "a", "operator": "In", "values": ["1", "2"]}, {"a": "3"}, False),
        ({"key": "a", "operator": "In", "values": ["1"]}, {}, False),
        ({"key": "a", "operator": "NotIn", "values": ["1"]}, {"a": "2"}, True),
        ({"key": "a", "operator": "NotIn", "values": ["1"]}, {"a": "1"}, False),
        ({"key": "a", "operator": "NotIn", "values": ["1"]}, {}, True),
        ({"key": "a", "operator": "Exists"}, {"a": ""}, True),
        ({"key": "a", "operator": "Exists"}, {"b": "x"}, False),
        ({"key": "a", "operator": "DoesNotExist"}, {"b": "x"}, True),
        ({"key": "a", "operator": "DoesNotExist"}, {"a": "x"}, False),
    ],
)
def test_match_expressions(expr: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert from_label_selector({"matchExpressions": [expr]}).matches(labels) is expected


def test_match_labels_and_expressions_are_anded() -> None:
    sel = from_label_selector({
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
    })
    assert sel.matches({"app": "x"})
    assert sel.matches({"app": "x", "tier": "web"})
    assert not sel.matches({"app": "x", "tier": "db"})
    assert not sel.matches({"tier": "web"})


def test_invalid_operator_is_bad_request() -> None:
    with pytest.raises(ApiError) as info:
        from_label_selector({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    assert info.value.code == 400
    assert info.value.reason == "BadRequest"
    assert "Gt" in info.value.message


# ------------------------------------------------------------------------------------- string form


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=1", {"a": "1"}, True),
        ("a==1", {"a": "1"}, True),
        ("a=1", {"a": "2"}, False),
        ("a=1", {}, False),
        ("a!=1", {"a": "2"}, True),
        ("a!=1", {"a": "1"}, False),
        ("a!=1", {}, True),
        ("a in (1, 2)", {"a": "2"}, True),
        ("a in (1,2)", {"a": "3"}, False),
        ("a in (1)", {}, False),
        ("a notin (1, 2)", {"a": "3"}, True),
        ("a notin (1,2)", {"a": "1"}, False),
        ("a notin (1)", {}, True),
        ("a", {"a": ""}, True),
        ("a", {"b": "1"}, False),
        ("!a", {"b": "1"}, True),
        ("!a", {"a": "1"}, False),
        ("a=1,b!=2", {"a": "1", "b": "3"}, True),
        ("a=1,b!=2", {"a": "1", "b": "2"}, False),
        ("a=1, b in (x,y), !c", {"a": "1", "b": "y"}, True),
        ("a=1, b in (x,y), !c", {"a": "1", "b": "y", "c": ""}, False),
        (" a = 1 ", {"a": "1"}, True),
        ("batch.kubernetes.io/job-name=j", {"batch.kubernetes.io/job-name": "j"}, True),
        ("", {"anything": "x"}, True),
        ("", {}, True),
    ],
)
def test_parse(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse(text).matches(labels) is expected


def test_parse_builds_requirements() -> None:
    assert parse("a=1,b!=2,c in (x, y),d notin (z),e,!f").requirements == (
        Requirement("a", "In", ("1",)),
        Requirement("b", "NotIn", ("2",)),
        Requirement("c", "In", ("x", "y")),
        Requirement("d", "NotIn", ("z",)),
        Requirement("e", "Exists"),
        Requirement("f", "DoesNotExist"),
    )


@pytest.mark.parametrize("text", ["a=b=c", "!a=b", "!a in (x)", "a in x", "(a)", "a=(b)"])
def test_parse_rejects_malformed(text: str) -> None:
    with pytest.raises(ApiError) as info:
        parse(text)
    assert info.value.code == 400


def test_as_selector_accepts_each_caller_shape() -> None:
    assert as_selector(None) is EVERYTHING
    sel = Selector((Requirement("a", "Exists"),))
    assert as_selector(sel) is sel
    assert as_selector("a=1").matches({"a": "1"})
    assert as_selector({"a": "1"}).matches({"a": "1", "b": "2"})
    assert not as_selector({"a": "1"}).matches({"a": "2"})
    assert as_selector({"matchLabels": {"a": "1"}}).matches({"a": "1"})
    assert as_selector({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}).matches({})
    assert as_selector({}).matches({"x": "y"})


def test_equality_terms_only_single_value_in() -> None:
    sel = parse("a=1,b in (1,2),c!=3,d,e in (5)")
    assert sel.equality_terms() == [("a", "1"), ("e", "5")]
    assert from_match_labels({"z": "1", "y": "2"}).equality_terms() == [("y", "2"), ("z", "1")]


# ---------------------------------------------------------------------------- index vs brute force

KEYS = ("app", "tier", "idx", "batch.kubernetes.io/job-name")
VALUES = ("a", "b", "c", "")

label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=4)
requirements = st.one_of(
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(KEYS), st.sampled_from(VALUES)),
    st.builds(lambda k, v: f"{k}!={v}", st.sampled_from(KEYS), st.sampled_from(VALUES)),
    st.builds(lambda k, vs: f"{k} in ({','.join(vs)})", st.sampled_from(KEYS),
              st.lists(st.sampled_from(VALUES[:3]), min_size=1, max_size=3)),
    st.builds(lambda k, vs: f"{k} notin ({','.join(vs)})", st.sampled_from(KEYS),
              st.lists(st.sampled_from(VALUES[:3]), min_size=1, max_size=3)),
    st.builds(lambda k: k, st.sampled_from(KEYS)),
    st.builds(lambda k: f"!{k}", st.sampled_from(KEYS)),
)
expressions = st.one_of(
    st.builds(lambda k, vs: {"key": k, "operator": "In", "values": vs}, st.sampled_from(KEYS),
              st.lists(st.sampled_from(VALUES), min_size=1, max_size=3)),
    st.builds(lambda k, vs: {"key": k, "operator": "NotIn", "values": vs}, st.sampled_from(KEYS),
              st.lists(st.sampled_from(VALUES), min_size=1, max_size=3)),
    st.builds(lambda k: {"key": k, "operator": "Exists"}, st.sampled_from(KEYS)),
    st.builds(lambda k: {"key": k, "operator": "DoesNotExist"}, st.sampled_from(KEYS)),
)


def _reference_match(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    """apimachinery's Requirement.Matches, written out independently."""
    key, op = expr["key"], expr["operator"]
    if op == "In":
        return key in labels and labels[key] in expr["values"]
    if op == "NotIn":
        return key not in labels or labels[key] not in expr["values"]
    if op == "Exists":
        return key in labels
    return key not in labels


def _as_string(expr: dict[str, Any]) -> str:
    key, op = expr["key"], expr["operator"]
    if op in ("In", "NotIn"):
        return f"{key} {op.lower()} ({','.join(expr['values'])})"
    return key if op == "Exists" else f"!{key}"


@settings(max_examples=300, deadline=None)
@given(labels=label_sets, match_labels=label_sets, exprs=st.lists(expressions, max_size=4))
def test_label_selector_and_string_forms_agree_with_reference(
    labels: dict[str, str], match_labels: dict[str, str], exprs: list[dict[str, Any]]
) -> None:
    want = all(labels.get(k) == v and k in labels for k, v in match_labels.items()) and all(
        _reference_match(e, labels) for e in exprs)
    selector = from_label_selector({"matchLabels": match_labels, "matchExpressions": exprs})
    assert selector.matches(labels) is want
    terms = [f"{k}={v}" for k, v in match_labels.items()] + [_as_string(e) for e in exprs]
    # The string form cannot spell an empty value inside a set, so those cases check the map form only.
    if all(v for e in exprs for v in e.get("values", ["x"])):
        assert parse(",".join(terms)).matches(labels) is want


slots = st.tuples(st.sampled_from(["ns1", "ns2"]), st.sampled_from(["w0", "w1", "w2", "w3"]))


def _widget_server() -> ApiServer:
    server = ApiServer(Clock(), random.Random("0"))
    server.register(ResourceType("Widget", "example.com/v1", "widgets", generation="custom",
                                 unconditional_update=False))
    return server


def _labels(obj: Obj) -> dict[str, str]:
    return obj["metadata"].get("labels") or {}


class LabelIndexMachine(RuleBasedStateMachine):
    """Random creates, relabels, deletions (with and without finalizers) and owner changes; after every
    step each index-served query must equal a brute-force filter over everything stored."""

    def __init__(self) -> None:
        super().__init__()
        self.server = _widget_server()

    def _get(self, slot: tuple[str, str]) -> Obj | None:
        try:
            return self.server.get("Widget", *slot)
        except ApiError:
            return None

    def _uids(self) -> list[str]:
        return [o["metadata"]["uid"] for o in self.server.list("Widget")]

    @rule(slot=slots, labels=label_sets, hold=st.booleans())
    def create(self, slot: tuple[str, str], labels: dict[str, str], hold: bool) -> None:
        if self._get(slot) is None:
            self.server.create({"kind": "Widget", "metadata": {
                "name": slot[1], "namespace": slot[0], "labels": labels,
                "finalizers": ["example.com/hold"] if hold else []}})

    @rule(slot=slots, labels=label_sets)
    def relabel(self, slot: tuple[str, str], labels: dict[str, str]) -> None:
        if self._get(slot) is not None:
            self.server.patch("Widget", *slot, {"metadata": {"labels": labels or None}})

    @rule(slot=slots, pick=st.integers(0, 7))
    def adopt(self, slot: tuple[str, str], pick: int) -> None:
        uids = self._uids()
        if self._get(slot) is not None and uids:
            ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "o",
                   "uid": uids[pick % len(uids)]}
            self.server.patch("Widget", *slot, {"metadata": {"ownerReferences": [ref]}})

    @rule(slot=slots)
    def delete(self, slot: tuple[str, str]) -> None:
        if self._get(slot) is not None:
            self.server.delete("Widget", *slot)

    @rule(slot=slots, labels=label_sets)
    def release(self, slot: tuple[str, str], labels: dict[str, str]) -> None:
        """One write that drops the finalizers (removing a deleting object) and changes labels and owners."""
        if self._get(slot) is not None:
            self.server.patch("Widget", *slot, {"metadata": {"finalizers": None, "labels": labels or None,
                                                              "ownerReferences": None}})

    @rule(terms=st.lists(requirements, max_size=3), namespace=st.sampled_from([None, "ns1", "ns2"]))
    def query(self, terms: list[str], namespace: str | None) -> None:
        text = ",".join(terms)
        everything = self.server.list("Widget", namespace)
        expected = [o for o in everything if parse(text).matches(_labels(o))]
        assert self.server.list("Widget", namespace, text) == expected
        assert self.server.list("Widget", namespace, parse(text)) == expected
        by_labels = dict(t.split("=", 1) for t in terms if "=" in t and "!" not in t)
        if by_labels:
            want = [o for o in everything if all(_labels(o).get(k) == v for k, v in by_labels.items())]
            assert self.server.list("Widget", namespace, by_labels) == want
            assert self.server.list("Widget", namespace, {"matchLabels": by_labels}) == want

    @invariant()
    def every_index_bucket_agrees_with_the_store(self) -> None:
        everything = self.server.list("Widget")
        for key in KEYS:
            for value in VALUES:
                term = f"{key}={value}"
                assert self.server.list("Widget", selector=term) == [
                    o for o in everything if _labels(o).get(key) == value
                ], term
        for uid in [*self._uids(), "no-such-uid"]:
            owned = [o for o in everything
                     if any(r["uid"] == uid for r in o["metadata"].get("ownerReferences") or ())]
            assert self.server.list("Widget", owner_uid=uid) == owned
            dependents = sorted(((o["metadata"]["namespace"], o["metadata"]["name"])
                                 for _, o in self.server.dependents(uid)))
            assert dependents == [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in owned]


LabelIndexMachine.TestCase.settings = settings(max_examples=120, stateful_step_count=40, deadline=None,
                                               suppress_health_check=[HealthCheck.too_slow])
TestLabelIndex = LabelIndexMachine.TestCase


def test_list_with_nil_and_empty_label_selector() -> None:
    server = _widget_server()
    server.create({"kind": "Widget", "metadata": {"name": "a", "labels": {"x": "1"}}})
    server.create({"kind": "Widget", "metadata": {"name": "b"}})
    assert [o["metadata"]["name"] for o in server.list("Widget", selector={})] == ["a", "b"]
    assert [o["metadata"]["name"] for o in server.list("Widget", selector={"matchLabels": {}})] == ["a", "b"]
    assert server.list("Widget", selector=NOTHING) == []
    assert server.list("Widget", selector=from_label_selector(None)) == []
    assert [o["metadata"]["name"] for o in server.list("Widget", selector="x!=1")] == ["b"]
    assert [o["metadata"]["name"] for o in server.list("Widget", selector="x notin (1)")] == ["b"]
