"""The API server's admission chain (fakecluster/apiserver/server.py): mutating hooks in order before
validating ones, denial messages prefixed with the webhook name, per-operation and per-kind hooks."""

from __future__ import annotations

from collections.abc import Callable

from apiserver_harness import invalid, make_server, pod, raises, widget

from fakecluster.api import errors
from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj, clone

# --------------------------------------------------------------------------------------- admission


def test_admission_runs_mutating_hooks_in_order_before_validating_ones() -> None:
    _, server = make_server()
    calls: list[str] = []

    def validating(name: str) -> Callable[[str, Obj, Obj | None], None]:
        def hook(op: str, obj: Obj, old: Obj | None) -> None:
            calls.append(f"{name}:{op}:{obj['metadata'].get('labels')}")
        return hook

    def mutating(name: str, label: str) -> Callable[[str, Obj, Obj | None], Obj | None]:
        def hook(op: str, obj: Obj, old: Obj | None) -> Obj | None:
            calls.append(f"{name}:{op}:{obj['metadata'].get('labels')}")
            obj["metadata"].setdefault("labels", {})[label] = name
            return None
        return hook

    server.register_admission("Widget", "validate-1", validating=validating("v1"))
    server.register_admission("Widget", "mutate-1", mutating=mutating("m1", "first"))
    server.register_admission("Widget", "mutate-2", mutating=mutating("m2", "second"))
    created = server.create(widget("w"))
    assert calls == ["m1:CREATE:None", "m2:CREATE:{'first': 'm1'}",
                     "v1:CREATE:{'first': 'm1', 'second': 'm2'}"]
    assert created["metadata"]["labels"] == {"first": "m1", "second": "m2"}


def test_mutating_hook_may_return_a_replacement_and_sees_old_on_update() -> None:
    _, server = make_server()
    seen_old: list[Obj | None] = []

    def replace(op: str, obj: Obj, old: Obj | None) -> Obj:
        seen_old.append(old)
        out = clone(obj)
        out["spec"]["size"] = out["spec"]["size"] * 10
        return out

    server.register_admission("Widget", "times-ten", mutating=replace)
    created = server.create(widget("w"))
    assert created["spec"]["size"] == 10
    patched = server.patch("Widget", "default", "w", {"spec": {"size": 2}})
    assert patched["spec"]["size"] == 20
    assert seen_old == [None, created]


def test_webhook_denial_is_prefixed_with_the_webhook_name() -> None:
    _, server = make_server()

    def deny(op: str, obj: Obj, old: Obj | None) -> None:
        if obj["spec"]["size"] > 3:
            raise errors.Invalid("Widget", "example.com", obj["metadata"]["name"],
                                 [FieldError.invalid("spec.size", obj["spec"]["size"], "too big")])

    server.register_admission("Widget", "vwidget.example.com", validating=deny)
    server.create(widget("w"))
    err = invalid(lambda: server.patch("Widget", "default", "w", {"spec": {"size": 5}}))
    assert err.message == (
        'admission webhook "vwidget.example.com" denied the request: '
        'Widget.example.com "w" is invalid: spec.size: Invalid value: 5: too big'
    )
    assert err.causes[0].field == "spec.size"
    assert server.get("Widget", "default", "w")["spec"]["size"] == 1


def test_mutating_webhook_denial_is_prefixed_and_stops_the_write() -> None:
    _, server = make_server()

    def forbid(op: str, obj: Obj, old: Obj | None) -> None:
        raise errors.Forbidden("nope")

    server.register_admission("Widget", "mwidget.example.com", mutating=forbid)
    err = raises(lambda: server.create(widget("w")))
    assert err.code == 403
    assert err.message == 'admission webhook "mwidget.example.com" denied the request: nope'
    assert server.count("Widget") == 0


def test_admission_operations_filter() -> None:
    _, server = make_server()
    ops: list[str] = []
    server.register_admission("Widget", "update-only", validating=lambda op, o, old: ops.append(op),
                              operations=("UPDATE",))
    server.create(widget("w"))
    assert ops == []
    server.patch("Widget", "default", "w", {"spec": {"size": 2}})
    assert ops == ["UPDATE"]
    server.patch("Widget", "default", "w", {"status": {"a": 1}}, subresource="status")
    assert ops == ["UPDATE"]  # status writes do not go through the main resource's webhooks


def test_admission_is_per_kind() -> None:
    _, server = make_server()
    ops: list[str] = []
    server.register_admission("Pod", "pods-only", validating=lambda op, o, old: ops.append(o["kind"]))
    server.create(widget("w"))
    server.create(pod("p"))
    assert ops == ["Pod"]
