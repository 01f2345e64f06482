"""API server object metadata (fakecluster/apiserver/server.py): uid, generateName, server-set fields, name
and owner-reference validation, the global resourceVersion and generation, as
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`` sets them."""

from __future__ import annotations

from apiserver_harness import (
    NAME_ALPHABET,
    UUID4,
    Recorder,
    invalid,
    job,
    make_server,
    pod,
    raises,
    rv,
    widget,
)

from fakecluster.api.objects import clone
from fakecluster.apiserver.resources import ResourceType

# ---------------------------------------------------------------------------------------- metadata


def test_uid_is_a_uuid4_deterministic_per_seed() -> None:
    def uids(seed: str) -> list[str]:
        _, server = make_server(seed)
        return [server.create(widget(f"w{i}"))["metadata"]["uid"] for i in range(5)]

    first = uids("0")
    assert first == uids("0")
    assert first != uids("1")
    assert len(set(first)) == 5
    assert all(UUID4.match(uid) for uid in first)


def test_generate_name_is_deterministic_and_uses_the_upstream_alphabet() -> None:
    def names(seed: str) -> list[str]:
        _, server = make_server(seed)
        return [server.create({"kind": "Widget", "metadata": {"generateName": "job-"}})["metadata"]["name"]
                for _ in range(20)]

    first = names("0")
    assert first == names("0")
    assert first != names("1")
    for name in first:
        assert name.startswith("job-")
        assert len(name) == len("job-") + 5
        assert set(name[4:]) <= set(NAME_ALPHABET)
    assert len(set(first)) == 20


def test_generate_name_prefix_is_truncated_to_58() -> None:
    _, server = make_server()
    created = server.create({"kind": "Widget", "metadata": {"generateName": "a" * 70}})
    name = created["metadata"]["name"]
    assert len(name) == 63
    assert name[:58] == "a" * 58
    assert set(name[58:]) <= set(NAME_ALPHABET)
    assert created["metadata"]["generateName"] == "a" * 70


def test_explicit_name_wins_over_generate_name() -> None:
    _, server = make_server()
    created = server.create({"kind": "Widget", "metadata": {"name": "fixed", "generateName": "gen-"}})
    assert created["metadata"]["name"] == "fixed"


def test_create_sets_server_fields_and_drops_client_ones() -> None:
    clock, server = make_server()
    clock.advance_to(42.7)
    created = server.create(widget("w", status={"phase": "client-set"}) | {
        "metadata": {"name": "w", "deletionTimestamp": "2030-01-01T00:00:00Z",
                     "deletionGracePeriodSeconds": 5}})
    meta = created["metadata"]
    assert meta["creationTimestamp"] == "2025-01-01T00:00:42Z"
    assert meta["namespace"] == "default"
    assert meta["generation"] == 1
    assert "deletionTimestamp" not in meta
    assert "deletionGracePeriodSeconds" not in meta
    assert "status" not in created  # custom resource with a status subresource: status dropped on create
    assert created["apiVersion"] == "example.com/v1"


def test_create_copies_its_input() -> None:
    _, server = make_server()
    body = widget("w")
    created = server.create(body)
    assert "uid" not in body["metadata"]
    body["spec"]["size"] = 99
    assert server.get("Widget", "default", "w")["spec"]["size"] == 1
    assert created["spec"]["size"] == 1


def test_missing_name_is_invalid() -> None:
    _, server = make_server()
    err = invalid(lambda: server.create({"kind": "Widget", "metadata": {}}))
    assert err.message == ('Widget.example.com "" is invalid: metadata.name: Required value: '
                           "name or generateName is required")


def test_bad_name_is_invalid_with_field_path() -> None:
    _, server = make_server()
    err = raises(lambda: server.create(job("Bad_Name")))
    assert err.code == 422
    assert err.message.startswith(
        'Job.batch "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric")
    assert [c.field for c in err.causes] == ["metadata.name"]
    assert raises(lambda: server.create(widget("x" * 254))).causes[0].field == "metadata.name"
    assert server.create(widget("a.b-c.d"))["metadata"]["name"] == "a.b-c.d"


def test_create_with_resource_version_is_rejected() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"]["resourceVersion"] = "7"
    err = raises(lambda: server.create(body))
    assert err.code >= 400
    assert "resourceVersion should not be set on objects to be created" in err.message
    assert server.count("Widget") == 0


def test_two_controller_owner_references_are_invalid() -> None:
    _, server = make_server()
    refs = [{"apiVersion": "v1", "kind": "X", "name": n, "uid": n, "controller": True} for n in ("a", "b")]
    body = widget("w")
    body["metadata"]["ownerReferences"] = refs
    err = raises(lambda: server.create(body))
    assert err.code == 422
    assert "metadata.ownerReferences" in err.message
    assert "Only one reference can have Controller set to true" in err.message


def test_owner_reference_without_uid_is_invalid_even_without_a_schema() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "X", "name": "o"}]
    err = raises(lambda: server.create(body))
    assert err.code == 422
    assert err.message == ('Widget.example.com "w" is invalid: '
                           'metadata.ownerReferences.uid: Invalid value: "": must not be empty')
    assert server.count("Widget") == 0
    server.create(widget("w"))
    err = raises(lambda: server.patch("Widget", "default", "w",
                                      {"metadata": {"ownerReferences": [{"uid": "u"}]}}))
    missing = ("apiVersion", "kind", "name")
    assert [c.field for c in err.causes] == [f"metadata.ownerReferences.{f}" for f in missing]


def test_unknown_kind_and_missing_kind() -> None:
    _, server = make_server()
    err = raises(lambda: server.create({"kind": "Gizmo", "metadata": {"name": "g"}}))
    assert err.code == 404
    err = raises(lambda: server.create({"metadata": {"name": "g"}}))
    assert err.code == 400


# --------------------------------------------------------------------------------- resourceVersion


def test_resource_version_is_global_monotonic_and_bumped_per_write() -> None:
    _, server = make_server()
    seen = []
    created = server.create(widget("w"))
    seen.append(rv(created))
    seen.append(rv(server.create(job("j"))))
    current = server.get("Widget", "default", "w")
    updated = server.update(clone(current) | {"spec": {"size": 2}})
    seen.append(rv(updated))
    seen.append(rv(server.update(clone(updated) | {"status": {"ready": True}}, subresource="status")))
    seen.append(rv(server.patch("Widget", "default", "w", {"metadata": {"labels": {"a": "b"}}})))
    seen.append(rv(server.patch("Job", "default", "j", {"metadata": {"annotations": {"x": "y"}}})))
    assert seen == sorted(seen)
    assert len(set(seen)) == len(seen)
    assert seen == list(range(seen[0], seen[0] + len(seen)))
    assert isinstance(created["metadata"]["resourceVersion"], str)


def test_noop_update_returns_same_resource_version_and_emits_nothing() -> None:
    _, server = make_server()
    server.create(job("j"))
    server.create(widget("w"))
    recorder = Recorder(server)
    writes = server.writes
    stored = server.get("Job", "default", "j")
    again = server.update(clone(stored))
    assert again["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert again is stored
    assert server.update(clone(stored), subresource="status") is stored
    assert server.patch("Job", "default", "j", {}) is stored
    assert server.patch("Job", "default", "j", {"spec": {"parallelism": 1, "backoffLimit": 6}}) is stored
    w = server.get("Widget", "default", "w")
    assert server.update(clone(w)) is w
    assert server.patch("Widget", "default", "w", {"spec": {"size": 1}}) is w
    assert recorder.events == []
    assert server.writes == writes


def test_update_ignores_attempts_to_change_system_metadata() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    body = clone(created)
    body["metadata"].update({"creationTimestamp": "2030-01-01T00:00:00Z", "generation": 99})
    body["apiVersion"] = "example.com/v2"
    assert server.update(body) is created


# -------------------------------------------------------------------------------------- generation


def test_builtin_generation_bumps_on_spec_change_only() -> None:
    _, server = make_server()
    created = server.create(job("j", parallelism=1, completions=1))
    assert created["metadata"]["generation"] == 1
    relabelled = server.patch("Job", "default", "j", {"metadata": {"labels": {"team": "x"}}})
    assert relabelled["metadata"]["generation"] == 1
    assert rv(relabelled) > rv(created)
    status = server.patch("Job", "default", "j", {"status": {"active": 1}}, subresource="status")
    assert status["metadata"]["generation"] == 1
    spec = server.patch("Job", "default", "j", {"spec": {"parallelism": 0}})
    assert spec["metadata"]["generation"] == 2
    assert server.patch("Job", "default", "j", {"spec": {"suspend": True}})["metadata"]["generation"] == 3


def test_pod_generation_bumps_on_spec_change() -> None:
    _, server = make_server()
    created = server.create(pod("p"))
    assert created["metadata"]["generation"] == 1
    updated = server.patch("Pod", "default", "p", {"spec": {"activeDeadlineSeconds": 30}})
    assert updated["metadata"]["generation"] == 2
    status = server.patch("Pod", "default", "p", {"status": {"phase": "Running"}}, subresource="status")
    assert status["metadata"]["generation"] == 2


def test_custom_generation_bumps_on_any_change_outside_metadata_and_status() -> None:
    _, server = make_server()
    server.create(widget("w"))
    assert server.patch("Widget", "default", "w", {"spec": {"size": 2}})["metadata"]["generation"] == 2
    assert server.patch("Widget", "default", "w", {"data": {"k": "v"}})["metadata"]["generation"] == 3
    relabelled = server.patch("Widget", "default", "w", {"metadata": {"labels": {"a": "b"}}})
    assert relabelled["metadata"]["generation"] == 3
    written = server.patch("Widget", "default", "w", {"status": {"ready": True}}, subresource="status")
    assert written["metadata"]["generation"] == 3
    assert written["status"] == {"ready": True}
    ignored = server.patch("Widget", "default", "w", {"status": {"ready": False}})
    assert ignored is written  # main endpoint drops the status change: a no-op


def test_custom_kind_without_status_subresource_treats_status_as_a_plain_field() -> None:
    _, server = make_server()
    server.register(ResourceType("Gadget", "example.com/v1", "gadgets", generation="custom",
                                 status_subresource=False, unconditional_update=False))
    created = server.create({"kind": "Gadget", "metadata": {"name": "g"}, "status": {"n": 1}})
    assert created["status"] == {"n": 1}
    updated = server.patch("Gadget", "default", "g", {"status": {"n": 2}})
    assert updated["status"] == {"n": 2}
    assert updated["metadata"]["generation"] == 2
    err = raises(lambda: server.update(clone(updated), subresource="status"))
    assert err.code == 404
