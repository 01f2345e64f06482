"""Storage's List by owner (fakecluster/apiserver/storage.py): the kept, put-maintained object lists
(``owned_objects``, from an owner List's third time on) answer exactly what a scan of the store does,
through any sequence of creates, updates (same or changed owners), deletes and Lists."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.storage import Storage

KINDS = {kind: ResourceType(kind, "example.com/v1", kind.lower() + "s") for kind in ("Widget", "Gadget")}
OWNERS = ("o1", "o2")
NAMESPACES = ("a", "b")
NAMES = ("p", "q", "r")

LIST = st.tuples(st.just("list"), st.sampled_from(sorted(KINDS)), st.sampled_from(("", "a")),
                 st.sampled_from(OWNERS))
"""Lists are drawn three times as often as the rest, and each is made three times in a row, so that owner
lists often reach their kept stage."""

TOUCH = st.tuples(st.just("put"), st.sampled_from(sorted(KINDS)), st.sampled_from(NAMESPACES),
                  st.sampled_from(NAMES), st.just([]), st.just(True))
"""A new version of an object, same owner references (the common write), also drawn three times as often."""

op = st.one_of(
    LIST, LIST, LIST, TOUCH, TOUCH, TOUCH,
    st.tuples(st.just("put"), st.sampled_from(sorted(KINDS)), st.sampled_from(NAMESPACES),
              st.sampled_from(NAMES), st.lists(st.sampled_from(OWNERS), max_size=2, unique=True),
              st.booleans()),
    st.tuples(st.just("drop"), st.sampled_from(sorted(KINDS)), st.sampled_from(NAMESPACES),
              st.sampled_from(NAMES)),
    st.tuples(st.just("list"), st.sampled_from(sorted(KINDS)), st.just("b"), st.sampled_from(OWNERS)),
)


def scanned(storage: Storage, kind: str, namespace: str, owner: str) -> list[Obj]:
    """The general answer: every stored object of ``kind`` naming ``owner``, in key order."""
    return [obj for key, obj in sorted(storage.objects[kind].items())
            if (not namespace or key[0] == namespace)
            and any(ref.get("uid") == owner for ref in obj["metadata"].get("ownerReferences") or ())]


@settings(max_examples=500, deadline=None)
@given(st.lists(op, max_size=80))
def test_list_by_owner_matches_a_scan(ops: list[tuple[object, ...]]) -> None:
    run(ops)


@pytest.mark.parametrize("seed", range(20))
def test_long_runs_match_a_scan(seed: int) -> None:
    """Long seeded runs: kept lists live through many updates (short examples rarely get there)."""
    rng = random.Random(seed)
    run([draw(rng) for _ in range(400)])


def draw(rng: random.Random) -> tuple[object, ...]:
    kind = rng.choice(sorted(KINDS))
    roll = rng.random()
    if roll < 0.4:
        return ("list", kind, rng.choice(("", "a")), rng.choice(OWNERS))
    if roll < 0.85:
        return ("put", kind, rng.choice(NAMESPACES), rng.choice(NAMES), [], True)
    if roll < 0.95:
        owners = rng.sample(OWNERS, rng.randint(0, len(OWNERS)))
        return ("put", kind, rng.choice(NAMESPACES), rng.choice(NAMES), owners, False)
    return ("drop", kind, rng.choice(NAMESPACES), rng.choice(NAMES))


def run(ops: list[tuple[object, ...]]) -> None:
    storage = Storage()
    storage.keep_from = 1  # keep even the short lists of these runs
    for kind in KINDS:
        storage.objects[kind] = {}
    uids = iter(range(10**6))
    for step in ops:
        if step[0] == "put":
            _, kind, ns, name, owners, keep_refs = step
            assert isinstance(kind, str) and isinstance(ns, str) and isinstance(name, str)
            assert isinstance(owners, list)
            key = (ns, name)
            old = storage.objects[kind].get(key)
            if old is None and keep_refs and not owners:
                owners = list(OWNERS[:1])
            if old is not None and keep_refs:
                meta = {**old["metadata"]}  # a new version, same owner references (the same list)
            else:
                refs = [{"uid": owner, "kind": "Owner", "name": owner} for owner in owners]
                uid = old["metadata"]["uid"] if old is not None else f"u{next(uids)}"
                meta = {"name": name, "namespace": ns, "uid": uid, "ownerReferences": refs}
            storage.put(kind, key, {"metadata": meta}, old)
        elif step[0] == "drop":
            _, kind, ns, name = step
            assert isinstance(kind, str) and isinstance(ns, str) and isinstance(name, str)
            if (ns, name) in storage.objects[kind]:
                storage.drop(kind, (ns, name))
        else:
            _, kind, ns, owner = step
            assert isinstance(kind, str) and isinstance(ns, str) and isinstance(owner, str)
            for _ in range(3):
                listed = storage.select(KINDS[kind], ns, None, owner)
                expected = scanned(storage, kind, ns, owner)
                assert len(listed) == len(expected)
                assert all(got is want for got, want in zip(listed, expected, strict=True))
                listed.clear()  # the caller's own list: the kept one is unaffected


def test_third_list_is_served_from_the_kept_objects_and_follows_updates() -> None:
    storage = Storage()
    storage.keep_from = len(NAMES)
    storage.objects["Widget"] = {}
    rtype = KINDS["Widget"]
    refs = [{"uid": "o1"}]
    for name in NAMES:
        storage.put("Widget", ("a", name), {"metadata": {"name": name, "uid": name, "ownerReferences": refs}},
                    None)
    for _ in range(3):
        assert [o["metadata"]["name"] for o in storage.select(rtype, "a", None, "o1")] == list(NAMES)
    assert "o1" in storage.owned_objects
    old = storage.objects["Widget"][("a", "q")]
    new = {"metadata": {**old["metadata"], "resourceVersion": "2"}}
    storage.put("Widget", ("a", "q"), new, old)
    assert storage.select(rtype, "a", None, "o1")[1] is new
    storage.drop("Widget", ("a", "p"))
    assert "o1" not in storage.owned_objects and not storage.listed_at
    assert [o["metadata"]["name"] for o in storage.select(rtype, "a", None, "o1")] == list(NAMES[1:])


def test_short_lists_are_not_kept() -> None:
    """Below ``keep_from`` objects an owner List is looked up afresh every time, and writes cost one check."""
    storage = Storage()
    storage.objects["Widget"] = {}
    storage.keep_from = len(NAMES) + 1
    refs = [{"uid": "o1"}]
    for name in NAMES:
        storage.put("Widget", ("a", name), {"metadata": {"name": name, "uid": name, "ownerReferences": refs}},
                    None)
    for _ in range(5):
        listed = storage.select(KINDS["Widget"], "a", None, "o1")
        assert [o["metadata"]["name"] for o in listed] == list(NAMES)
    assert not storage.owned_objects and not storage.listed_at
