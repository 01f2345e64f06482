"""API server write semantics (fakecluster/apiserver/server.py, builtin.py), checked against
shared/reference/kubernetes.md §5 and the upstream messages it quotes."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from fakecluster.api.core import Pod, PodSpec
from fakecluster.api.meta import ObjectMeta
from fakecluster.api.objects import Obj, clone, merge_patch
from fakecluster.api.validation import validate_model
from fakecluster.apiserver import errors
from fakecluster.apiserver.builtin import MAX_INT32, register_builtin
from fakecluster.apiserver.errors import ApiError, FieldError
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent, _uuid4
from fakecluster.clock import Clock, rfc3339
from fakecluster.controllers.garbage_collector import GarbageCollector

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
STARTED = "2025-01-01T00:00:00Z"
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


# ----------------------------------------------------------------------------------------- helpers


def make_server(seed: str = "0") -> tuple[Clock, ApiServer]:
    clock = Clock()
    server = ApiServer(clock, random.Random(seed))
    register_builtin(server)
    GarbageCollector(clock, server)
    server.register(ResourceType("Widget", "example.com/v1", "widgets", generation="custom",
                                 unconditional_update=False))
    return clock, server


def pod(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}], **spec},
    }


def job(name: str, **spec: Any) -> Obj:
    template_spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": template_spec}, **spec},
    }


def widget(name: str, **fields: Any) -> Obj:
    return {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"size": 1}, **fields}


def raises(fn: Callable[[], Any]) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn()
    return info.value


class Recorder:
    """Every watch event as (type, kind, name, resourceVersion)."""

    def __init__(self, server: ApiServer, kind: str | None = None) -> None:
        self.events: list[WatchEvent] = []
        server.watch(kind, self.events.append)

    def summary(self) -> list[tuple[str, str, str, int]]:
        return [(e.type, e.kind, e.object["metadata"]["name"], int(e.object["metadata"]["resourceVersion"]))
                for e in self.events]


def rv(obj: Obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


def brief(event: WatchEvent) -> tuple[str, str, int]:
    return event.type, event.object["metadata"]["name"], rv(event.object)


def bound_pod(server: ApiServer, name: str, **spec: Any) -> Obj:
    server.create(pod(name, **spec))
    return server.bind("default", name, "node-1")


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
    err = raises(lambda: server.create({"kind": "Widget", "metadata": {}}))
    assert err.code == 422
    assert err.reason == "Invalid"
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


# ------------------------------------------------------------------------------ status subresource


def test_main_endpoint_ignores_status() -> None:
    _, server = make_server()
    created = server.create(job("j", parallelism=2, completions=4))
    assert created["status"] == {}
    body = clone(created)
    body["status"] = {"active": 5}
    body["spec"]["parallelism"] = 3
    updated = server.update(body)
    assert updated["status"] == {}
    assert updated["spec"]["parallelism"] == 3


def test_status_endpoint_writes_only_status() -> None:
    _, server = make_server()
    created = server.create(job("j", parallelism=2, completions=4))
    recorder = Recorder(server, "Job")
    body = clone(created)
    body["spec"]["parallelism"] = 1
    body["metadata"]["labels"] = {"sneaky": "yes"}
    body["status"] = {"active": 2}
    written = server.update(body, subresource="status")
    assert written["status"] == {"active": 2}
    assert written["spec"] == created["spec"]
    assert written["metadata"].get("labels") == created["metadata"].get("labels")
    assert written["metadata"]["generation"] == 1
    assert rv(written) > rv(created)
    assert [e.type for e in recorder.events] == ["MODIFIED"]
    assert recorder.events[0].old is created


def test_status_write_shares_unchanged_subtrees_and_keeps_snapshots_intact() -> None:
    _, server = make_server()
    created = server.create(pod("p"))
    spec_before = clone(created["spec"])
    written = server.patch("Pod", "default", "p", {"status": {"phase": "Running"}}, subresource="status")
    assert written["spec"] is created["spec"]
    assert created["status"]["phase"] == "Pending"
    assert created["spec"] == spec_before


def test_status_endpoint_on_a_kind_without_it_is_not_found() -> None:
    _, server = make_server()
    server.register(ResourceType("Plain", "example.com/v1", "plains", status_subresource=False))
    created = server.create({"kind": "Plain", "metadata": {"name": "x"}})
    assert raises(lambda: server.update(clone(created), subresource="status")).code == 404


def test_job_status_cannot_drop_start_time_while_unsuspended() -> None:
    _, server = make_server()
    server.create(job("j"))
    server.patch("Job", "default", "j", {"status": {"startTime": STARTED}}, subresource="status")
    err = raises(lambda: server.patch("Job", "default", "j", {"status": {"startTime": None}},
                                      subresource="status"))
    assert err.code == 422
    assert "status.startTime: Required value" in err.message


# -------------------------------------------------------------------------- concurrency and errors


def test_stale_resource_version_is_a_conflict_with_the_upstream_message() -> None:
    _, server = make_server()
    stale = server.create(job("x"))
    server.patch("Job", "default", "x", {"metadata": {"labels": {"a": "b"}}})
    err = raises(lambda: server.update(clone(stale)))
    assert err.code == 409
    assert err.reason == "Conflict"
    assert err.message == (
        'Operation cannot be fulfilled on jobs.batch "x": the object has been modified; please apply your '
        "changes to the latest version and try again"
    )
    err = raises(lambda: server.update(clone(stale), subresource="status"))
    assert err.reason == "Conflict"
    stale_pod = server.create(pod("p"))
    server.patch("Pod", "default", "p", {"metadata": {"labels": {"a": "b"}}})
    assert raises(lambda: server.update(clone(stale_pod))).message.startswith(
        'Operation cannot be fulfilled on pods "p": the object has been modified')


def test_builtins_accept_unconditional_update() -> None:
    _, server = make_server()
    created = server.create(job("j"))
    server.patch("Job", "default", "j", {"metadata": {"labels": {"a": "b"}}})
    body = clone(server.get("Job", "default", "j"))
    del body["metadata"]["resourceVersion"]
    body["spec"]["parallelism"] = 0
    assert server.update(body)["spec"]["parallelism"] == 0
    assert created["spec"]["parallelism"] == 1


def test_custom_resources_require_resource_version_on_update() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    body = clone(created)
    del body["metadata"]["resourceVersion"]
    body["spec"]["size"] = 5
    err = raises(lambda: server.update(body))
    assert err.code == 422
    assert err.reason == "Invalid"
    assert err.message == (
        'widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )
    assert err.causes == [err.causes[0]]
    assert err.causes[0].field == "metadata.resourceVersion"
    assert raises(lambda: server.update(body, subresource="status")).code == 422
    # PATCH needs no resourceVersion, even for custom resources.
    assert server.patch("Widget", "default", "w", {"spec": {"size": 5}})["spec"]["size"] == 5


def test_update_with_a_different_uid_is_a_conflict() -> None:
    _, server = make_server()
    body = clone(server.create(widget("w")))
    body["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000"
    err = raises(lambda: server.update(body))
    assert err.code == 409
    assert "Precondition failed: UID in precondition: 00000000-0000-4000-8000-000000000000" in err.message


def test_not_found_messages() -> None:
    _, server = make_server()
    expected = 'jobs.batch "x" not found'
    for call in (
        lambda: server.get("Job", "default", "x"),
        lambda: server.update(job("x")),
        lambda: server.update(job("x"), subresource="status"),
        lambda: server.patch("Job", "default", "x", {}),
        lambda: server.delete("Job", "default", "x"),
    ):
        err = raises(call)
        assert (err.code, err.reason, err.message) == (404, "NotFound", expected)
    assert raises(lambda: server.get("Pod", "default", "x")).message == 'pods "x" not found'
    assert raises(lambda: server.get("Node", "", "x")).message == 'nodes "x" not found'
    server.create(pod("x"))
    assert raises(lambda: server.get("Pod", "other", "x")).reason == "NotFound"


def test_already_exists_messages() -> None:
    _, server = make_server()
    server.create(pod("x"))
    err = raises(lambda: server.create(pod("x")))
    assert (err.code, err.reason, err.message) == (409, "AlreadyExists", 'pods "x" already exists')
    server.create(job("x"))
    assert raises(lambda: server.create(job("x"))).message == 'jobs.batch "x" already exists'
    other_ns = pod("x")
    other_ns["metadata"]["namespace"] = "other"
    assert server.create(other_ns)["metadata"]["namespace"] == "other"


def test_job_restart_policy_always_is_invalid() -> None:
    _, server = make_server()
    body = job("x")
    body["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    err = raises(lambda: server.create(body))
    assert err.code == 422
    assert err.reason == "Invalid"
    # validateJobSpec reads Always as "unset" (SetDefaults_PodSpec may have put it there).
    assert err.message == (
        'Job.batch "x" is invalid: spec.template.spec.restartPolicy: Required value: '
        'valid values: "OnFailure", "Never"'
    )
    assert err.causes == [FieldError.required("spec.template.spec.restartPolicy",
                                              'valid values: "OnFailure", "Never"')]
    del body["spec"]["template"]["spec"]["restartPolicy"]  # defaulted to Always, so still invalid
    assert raises(lambda: server.create(body)).causes[0].field == "spec.template.spec.restartPolicy"
    assert server.count("Job") == 0


def test_several_validation_errors_print_as_a_list() -> None:
    _, server = make_server()
    body = job("x", parallelism=-1, backoffLimit=-2)
    err = raises(lambda: server.create(body))
    assert err.message == (
        'Job.batch "x" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, '
        "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0]"
    )


def test_delete_preconditions() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    err = raises(lambda: server.delete("Widget", "default", "w", preconditions={"uid": "nope"}))
    assert err.code == 409
    assert err.message == (
        'Operation cannot be fulfilled on widgets.example.com "w": '
        "Precondition failed: UID in precondition: nope, "
        f'UID in object meta: {created["metadata"]["uid"]}'
    )
    err = raises(lambda: server.delete("Widget", "default", "w", preconditions={"resourceVersion": "1000"}))
    assert err.code == 409
    assert "ResourceVersion in precondition: 1000" in err.message
    assert server.delete("Widget", "default", "w", preconditions={
        "uid": created["metadata"]["uid"], "resourceVersion": created["metadata"]["resourceVersion"]}) is None
    assert server.count("Widget") == 0


def test_unsupported_propagation_policy_is_bad_request() -> None:
    _, server = make_server()
    server.create(widget("w"))
    assert raises(lambda: server.delete("Widget", "default", "w", propagation_policy="Sideways")).code == 400


# ------------------------------------------------------------------------------------- merge patch


def test_merge_patch_semantics() -> None:
    _, server = make_server()
    server.create(widget("w", spec={"size": 1, "items": [1, 2, 3], "nested": {"a": 1, "b": 2}}) | {
        "metadata": {"name": "w", "labels": {"keep": "1", "drop": "2"}}})
    patched = server.patch("Widget", "default", "w", {
        "metadata": {"labels": {"drop": None, "new": "3"}},
        "spec": {"items": [9], "nested": {"b": None, "c": 3}},
    })
    assert patched["metadata"]["labels"] == {"keep": "1", "new": "3"}
    assert patched["spec"] == {"size": 1, "items": [9], "nested": {"a": 1, "c": 3}}


def test_merge_patch_resource_version_is_a_precondition() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    moved = server.patch("Widget", "default", "w", {"spec": {"size": 2}})
    err = raises(lambda: server.patch("Widget", "default", "w", {
        "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "spec": {"size": 3}}))
    assert err.reason == "Conflict"
    assert err.message.startswith('Operation cannot be fulfilled on widgets.example.com "w"')
    ok = server.patch("Widget", "default", "w", {
        "metadata": {"resourceVersion": moved["metadata"]["resourceVersion"]}, "spec": {"size": 3}})
    assert ok["spec"]["size"] == 3


def test_merge_patch_must_be_an_object() -> None:
    _, server = make_server()
    server.create(widget("w"))
    assert raises(lambda: server.patch("Widget", "default", "w", [])).code == 400  # type: ignore[arg-type]


def test_patch_never_mutates_stored_snapshots() -> None:
    _, server = make_server()
    node = server.create({"kind": "Node", "metadata": {"name": "n1"}, "spec": {}})
    before = clone(node)
    patched = server.patch("Node", "", "n1", {"spec": {"unschedulable": True}})
    assert node == before
    assert "namespace" not in patched["metadata"]
    assert "namespace" not in server.get("Node", "", "n1")["metadata"]
    w = server.create(widget("w"))
    w_before = clone(w)
    server.patch("Widget", "default", "w", {"spec": {"size": 2}})
    server.patch("Widget", "default", "w", {"status": {"x": 1}}, subresource="status")
    assert w == w_before


def test_a_defaulted_and_bound_pod_spec_passes_the_schema() -> None:
    """The premise of ``stored_valid`` for pods: create-time defaults and binding only add values
    the schema accepts, so a patch that keeps the stored spec needs only the rest validated."""
    _, server = make_server()
    init = [{"name": "init", "image": "busybox"},
            {"name": "proxy", "image": "envoy@sha256:abc", "restartPolicy": "Always"}]
    created = server.create(pod("p", initContainers=init))
    assert validate_model(PodSpec, created["spec"])[1] == []
    bound = server.bind("default", "p", "node-1")
    assert validate_model(PodSpec, bound["spec"])[1] == []


def test_pod_and_object_meta_schemas_check_each_field_on_its_own() -> None:
    """The premise on which a patch is validated field by field (``ResourceType.schema_errors``)."""
    for model in (Pod, ObjectMeta):
        assert not model.__pydantic_decorators__.model_validators
        assert not [name for name, info in model.model_fields.items() if info.is_required()]


def test_a_pod_patch_that_keeps_the_spec_reports_schema_errors_as_a_full_validation_does() -> None:
    _, server = make_server()
    server.create(pod("p"))
    patch = {"metadata": {"labels": {"app": "ok"}, "ownerReferences": [{"apiVersion": "v1", "kind": "X"}]}}
    merged = merge_patch(server.get("Pod", "default", "p"), patch)
    expected = validate_model(Pod, {k: v for k, v in merged.items() if k != "status"})[1]
    assert len(expected) == 2
    err = raises(lambda: server.patch("Pod", "default", "p", patch))
    assert err.message == errors.Invalid("Pod", "", "p", expected).message
    # A metadata field of the wrong type fails decoding first, as the real API server's JSON decoder does.
    err = raises(lambda: server.patch("Pod", "default", "p", {"metadata": {"labels": {"app": 7}}}))
    assert err.code == 400
    assert err.message == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
    )
    err = raises(lambda: server.patch("Pod", "default", "p", {"spec": {"activeDeadlineSeconds": "soon"}}))
    assert "spec.activeDeadlineSeconds" in err.message


def test_schema_valid_creates_skip_the_schema_unless_a_hook_may_have_broken_it() -> None:
    """``create(schema_valid=True)`` is the cluster's own controllers vouching for an object (the Job
    controller's pods): the schema is not checked again, unless a mutating hook not known to keep
    objects schema-valid ran (DefaultTolerationSeconds is known to)."""
    bad = pod("p")
    bad["spec"]["containers"][0]["imagePullPolicy"] = "Sometimes"
    _, server = make_server()
    assert server.create(clone(bad), schema_valid=True)["metadata"]["name"] == "p"
    err = raises(lambda: server.create(pod("q") | {"spec": bad["spec"]}))
    assert "spec.containers[0].imagePullPolicy" in err.message
    _, server = make_server()
    server.register_admission("Pod", "AnyMutation", mutating=lambda op, obj, old: None)
    err = raises(lambda: server.create(bad, schema_valid=True))
    assert "spec.containers[0].imagePullPolicy" in err.message


def test_uids_are_formatted_exactly_as_uuid_does() -> None:
    rng = random.Random(7)
    for bits in [0, 2**128 - 1, *(rng.getrandbits(128) for _ in range(500))]:
        assert _uuid4(bits) == str(uuid.UUID(int=bits, version=4))


def test_a_donated_pod_is_defaulted_without_changing_what_it_shares() -> None:
    """``create(donate=True)`` copies only the object and its metadata: defaulting must copy the rest on
    write, since a donated pod shares its spec and containers with a stored Job and other pods."""
    _, server = make_server()
    tolerate_all = [{"operator": "Exists"}]  # nothing for DefaultTolerationSeconds to add (and copy)
    shared_spec = {"containers": [{"name": "main", "image": "busybox"}], "tolerations": tolerate_all}
    donated = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                                "labels": {"a": "1"}}, "spec": shared_spec}
    before = clone(donated)
    stored = server.create(donated, donate=True)
    assert shared_spec == before["spec"] and donated["metadata"] == before["metadata"]
    assert stored["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert stored["spec"]["priority"] == 0 and stored["spec"]["tolerations"] == tolerate_all
    regular = server.create(clone(before) | {"metadata": {**before["metadata"], "name": "q"}})
    assert {k: v for k, v in stored.items() if k != "metadata"} == \
        {k: v for k, v in regular.items() if k != "metadata"}


def test_patch_to_status_subresource_merges_status_only() -> None:
    _, server = make_server()
    server.create(job("j"))
    server.patch("Job", "default", "j", {"status": {"active": 1, "ready": 0}}, subresource="status")
    written = server.patch("Job", "default", "j", {"status": {"ready": 1}, "spec": {"parallelism": 9}},
                           subresource="status")
    assert written["status"] == {"active": 1, "ready": 1}
    assert written["spec"]["parallelism"] == 1


# -------------------------------------------------------------------------------------- finalizers


def test_delete_with_finalizers_marks_deleting_until_last_finalizer_goes() -> None:
    clock, server = make_server()
    body = widget("w")
    body["metadata"]["finalizers"] = ["example.com/a", "example.com/b"]
    created = server.create(body)
    recorder = Recorder(server, "Widget")
    clock.advance_to(12.5)
    deleting = server.delete("Widget", "default", "w")
    assert deleting is not None
    meta = deleting["metadata"]
    assert meta["deletionTimestamp"] == "2025-01-01T00:00:12Z"
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == created["metadata"]["generation"] + 1
    assert server.get("Widget", "default", "w") is deleting
    assert server.delete("Widget", "default", "w") is deleting  # deleting again changes nothing
    one_left = server.patch("Widget", "default", "w", {"metadata": {"finalizers": ["example.com/b"]}})
    assert one_left["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    gone = server.patch("Widget", "default", "w", {"metadata": {"finalizers": None}})
    assert gone["metadata"]["resourceVersion"] == str(rv(one_left) + 1)
    assert raises(lambda: server.get("Widget", "default", "w")).reason == "NotFound"
    assert recorder.summary() == [
        ("MODIFIED", "Widget", "w", rv(deleting)),
        ("MODIFIED", "Widget", "w", rv(one_left)),
        ("DELETED", "Widget", "w", rv(one_left) + 1),
    ]
    assert recorder.events[-1].object is gone
    assert recorder.events[-1].old is one_left
    assert "finalizers" not in gone["metadata"]
    assert server.get_by_uid(created["metadata"]["uid"]) is None


def test_no_new_finalizers_while_deleting() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"]["finalizers"] = ["a"]
    server.create(body)
    deleting = server.delete("Widget", "default", "w")
    assert deleting is not None
    err = raises(lambda: server.patch("Widget", "default", "w",
                                      {"metadata": {"finalizers": ["a", "z", "b"]}}))
    assert err.code == 422
    assert err.message == (
        'Widget.example.com "w" is invalid: metadata.finalizers: Forbidden: '
        "no new finalizers can be added if the "
        'object is being deleted, found new finalizers []string{"b", "z"}'
    )
    reordered = server.patch("Widget", "default", "w", {"metadata": {"finalizers": ["a"]}})
    assert reordered is deleting


def test_deletion_timestamp_cannot_be_unset_by_update() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"]["finalizers"] = ["a"]
    server.create(body)
    deleting = server.delete("Widget", "default", "w")
    assert deleting is not None
    attempt = clone(deleting)
    del attempt["metadata"]["deletionTimestamp"]
    attempt["spec"]["size"] = 7
    updated = server.update(attempt)
    assert updated["metadata"]["deletionTimestamp"] == deleting["metadata"]["deletionTimestamp"]
    assert updated["spec"]["size"] == 7


def test_removing_last_finalizer_and_relabelling_in_one_write_leaves_no_stale_index() -> None:
    _, server = make_server()
    body = widget("w")
    body["metadata"].update({"finalizers": ["a"], "labels": {"app": "old"},
                             "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "o",
                                                  "uid": "owner"}]})
    server.create(body)
    server.delete("Widget", "default", "w")
    server.patch("Widget", "default", "w", {"metadata": {"finalizers": None, "labels": {"app": "new"},
                                                          "ownerReferences": None}})
    assert server.list("Widget", selector="app=old") == []
    assert server.list("Widget", selector="app=new") == []
    assert server.list("Widget", owner_uid="owner") == []
    assert server.dependents("owner") == []


# --------------------------------------------------------------------------- pod graceful deletion


def test_scheduled_pod_is_deleted_gracefully() -> None:
    clock, server = make_server()
    bound = bound_pod(server, "p")
    recorder = Recorder(server, "Pod")
    clock.advance_to(100)
    terminating = server.delete("Pod", "default", "p")
    assert terminating is not None
    meta = terminating["metadata"]
    assert meta["deletionTimestamp"] == rfc3339(130)
    assert meta["deletionGracePeriodSeconds"] == 30
    assert meta["generation"] == bound["metadata"]["generation"] + 1
    assert server.get("Pod", "default", "p") is terminating
    clock.advance_to(105)
    # Pending: a plain second delete, or one with a longer grace, changes nothing.
    assert server.delete("Pod", "default", "p") is terminating
    assert server.delete("Pod", "default", "p", grace_period_seconds=60) is terminating
    assert server.delete("Pod", "default", "p", grace_period_seconds=0) is None
    assert server.count("Pod") == 0
    assert [e[0] for e in recorder.summary()] == ["MODIFIED", "DELETED"]
    assert recorder.summary()[1][3] > rv(terminating)


def test_unscheduled_and_terminal_pods_are_removed_at_once() -> None:
    _, server = make_server()
    server.create(pod("unscheduled"))
    assert server.delete("Pod", "default", "unscheduled", grace_period_seconds=30) is None
    bound_pod(server, "done")
    server.patch("Pod", "default", "done", {"status": {"phase": "Succeeded"}}, subresource="status")
    assert server.delete("Pod", "default", "done") is None
    assert server.count("Pod") == 0


def test_pod_grace_period_from_spec_and_options() -> None:
    _, server = make_server()
    bound_pod(server, "short", terminationGracePeriodSeconds=5)
    short = server.delete("Pod", "default", "short")
    assert short is not None
    assert short["metadata"]["deletionGracePeriodSeconds"] == 5
    bound_pod(server, "neg")
    neg = server.delete("Pod", "default", "neg", grace_period_seconds=-3)
    assert neg is not None
    assert neg["metadata"]["deletionGracePeriodSeconds"] == 1  # CheckGracefulDelete: negative becomes 1
    bound_pod(server, "zero")
    assert server.delete("Pod", "default", "zero", grace_period_seconds=0) is None


def test_shorter_second_delete_moves_the_deadline_earlier_from_the_original_request() -> None:
    clock, server = make_server()
    bound_pod(server, "p")
    clock.advance_to(10)
    first = server.delete("Pod", "default", "p", grace_period_seconds=60)
    assert first is not None
    assert first["metadata"]["deletionTimestamp"] == rfc3339(70)
    clock.advance_to(50)
    second = server.delete("Pod", "default", "p", grace_period_seconds=30)
    assert second is not None
    assert second["metadata"]["deletionGracePeriodSeconds"] == 30
    assert second["metadata"]["deletionTimestamp"] == rfc3339(40)  # 10 + 30, not 50 + 30
    assert rv(second) > rv(first)
    assert server.delete("Pod", "default", "p", grace_period_seconds=45) is second


def tracked_pod(server: ApiServer, name: str, *, bind: bool = True) -> Obj:
    body = pod(name)
    body["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]
    created = server.create(body)
    return server.bind("default", name, "node-1") if bind else created


def test_dropping_the_finalizer_during_the_grace_period_keeps_the_pod() -> None:
    clock, server = make_server()
    tracked_pod(server, "p")
    clock.advance_to(3)
    terminating = server.delete("Pod", "default", "p")
    assert terminating is not None
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    clock.advance_to(20)
    waiting = server.patch("Pod", "default", "p", {"metadata": {"finalizers": None}})
    assert server.get("Pod", "default", "p") is waiting  # the kubelet has not confirmed termination yet
    assert server.delete("Pod", "default", "p", grace_period_seconds=0) is None


def test_pod_with_finalizer_killed_with_grace_zero_stays_until_finalized() -> None:
    clock, server = make_server()
    tracked_pod(server, "q")
    clock.advance_to(20)
    server.delete("Pod", "default", "q")
    clock.advance_to(25)
    killed = server.delete("Pod", "default", "q", grace_period_seconds=0)
    assert killed is not None
    assert killed["metadata"]["deletionGracePeriodSeconds"] == 0
    assert killed["metadata"]["deletionTimestamp"] == rfc3339(20)
    assert server.delete("Pod", "default", "q", grace_period_seconds=0) is killed
    server.patch("Pod", "default", "q", {"metadata": {"finalizers": None}})
    assert raises(lambda: server.get("Pod", "default", "q")).reason == "NotFound"


def test_unscheduled_pod_with_finalizer_is_marked_not_removed() -> None:
    clock, server = make_server()
    tracked_pod(server, "u", bind=False)
    clock.advance_to(4)
    marked = server.delete("Pod", "default", "u")
    assert marked is not None
    assert marked["metadata"]["deletionTimestamp"] == rfc3339(4)
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    server.patch("Pod", "default", "u", {"metadata": {"finalizers": []}})
    assert server.count("Pod") == 0


def test_policy_on_a_pending_graceful_delete_does_not_add_finalizers() -> None:
    _, server = make_server()
    terminating = server.delete("Pod", "default", bound_pod(server, "p")["metadata"]["name"])
    assert terminating is not None
    assert server.delete("Pod", "default", "p", propagation_policy="Foreground") is terminating


def test_background_delete_strips_an_existing_orphan_finalizer() -> None:
    _, server = make_server()
    bound_pod(server, "p")
    orphaning = server.delete("Pod", "default", "p", propagation_policy="Orphan")
    assert orphaning is not None
    assert orphaning["metadata"]["finalizers"] == ["orphan"]
    killed = server.delete("Pod", "default", "p", propagation_policy="Background", grace_period_seconds=0)
    assert killed is None
    assert server.count("Pod") == 0


# -------------------------------------------------------------------------------------------- bind


def test_bind_sets_node_and_pod_scheduled_in_one_revision() -> None:
    clock, server = make_server()
    created = server.create(pod("p"))
    recorder = Recorder(server, "Pod")
    clock.advance_to(7)
    bound = server.bind("default", "p", "node-1")
    assert bound["spec"]["nodeName"] == "node-1"
    scheduled = [c for c in bound["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert len(scheduled) == 1
    assert scheduled[0]["status"] == "True"
    assert scheduled[0]["lastTransitionTime"] == "2025-01-01T00:00:07Z"
    assert rv(bound) == rv(created) + 1
    assert recorder.summary() == [("MODIFIED", "Pod", "p", rv(bound))]
    assert created["spec"].get("nodeName") is None
    err = raises(lambda: server.bind("default", "p", "node-2"))
    assert err.code == 409
    assert err.message.startswith('Operation cannot be fulfilled on pods "p": pod p is already assigned')


def test_bind_of_a_deleting_pod_is_a_conflict() -> None:
    _, server = make_server()
    body = pod("p")
    body["metadata"]["finalizers"] = ["x"]
    server.create(body)
    server.delete("Pod", "default", "p")
    assert raises(lambda: server.bind("default", "p", "node-1")).reason == "Conflict"


# ------------------------------------------------------------------------------------------- watch


def test_watch_delivers_added_modified_deleted_in_resource_version_order() -> None:
    _, server = make_server()
    recorder = Recorder(server, "Widget")
    a = server.create(widget("a"))
    b = server.create(widget("b"))
    a2 = server.patch("Widget", "default", "a", {"spec": {"size": 2}})
    server.delete("Widget", "default", "b")
    server.delete("Widget", "default", "a")
    summary = recorder.summary()
    assert [(t, n) for t, _, n, _ in summary] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("DELETED", "a")]
    rvs = [r for *_, r in summary]
    assert rvs == sorted(rvs)
    assert len(set(rvs)) == len(rvs)
    assert summary[0][3] == rv(a) and summary[1][3] == rv(b) and summary[2][3] == rv(a2)
    deleted_a = recorder.events[-1]
    assert deleted_a.object["spec"] == {"size": 2}  # the last state
    assert deleted_a.old is a2


def test_deleting_the_most_recently_written_object_still_gets_a_new_resource_version() -> None:
    _, server = make_server()
    recorder = Recorder(server)
    created = server.create(pod("p"))
    server.delete("Pod", "default", "p")
    assert [(t, r) for t, _, _, r in recorder.summary()] == [
        ("ADDED", rv(created)), ("DELETED", rv(created) + 1)]
    assert server.create(widget("w"))["metadata"]["resourceVersion"] == str(rv(created) + 2)


def test_watch_by_kind_and_all_kinds() -> None:
    _, server = make_server()
    pods = Recorder(server, "Pod")
    everything = Recorder(server)
    server.create(pod("p"))
    server.create(widget("w"))
    assert [e.kind for e in pods.events] == ["Pod"]
    assert [e.kind for e in everything.events] == ["Pod", "Widget"]


def test_nested_writes_from_a_handler_arrive_after_the_current_event_for_every_watcher() -> None:
    _, server = make_server()
    logs: dict[str, list[tuple[str, str, int]]] = {"first": [], "second": [], "all": []}

    def first(event: WatchEvent) -> None:
        logs["first"].append(brief(event))
        if event.type == "ADDED" and event.object["metadata"]["name"] == "a":
            server.create(widget("child"))
            server.patch("Widget", "default", "a", {"metadata": {"labels": {"seen": "yes"}}})

    server.watch("Widget", first)
    server.watch("Widget", lambda e: logs["second"].append(brief(e)))
    server.watch(None, lambda e: logs["all"].append(brief(e)))
    created = server.create(widget("a"))
    expected = [("ADDED", "a", rv(created)), ("ADDED", "child", rv(created) + 1),
                ("MODIFIED", "a", rv(created) + 2)]
    assert logs["first"] == expected
    assert logs["second"] == expected
    assert logs["all"] == expected


def test_watch_snapshots_are_never_mutated_by_later_writes() -> None:
    _, server = make_server()
    recorder = Recorder(server, "Job")
    server.create(job("j"))
    server.patch("Job", "default", "j", {"spec": {"parallelism": 3}, "metadata": {"labels": {"x": "y"}}})
    server.patch("Job", "default", "j", {"status": {"active": 3}}, subresource="status")
    first = recorder.events[0].object
    assert first["spec"]["parallelism"] == 1
    assert "labels" not in first["metadata"]
    assert first["status"] == {}
    assert recorder.events[1].old is first
    assert recorder.events[2].object["spec"]["parallelism"] == 3


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
    err = raises(lambda: server.patch("Widget", "default", "w", {"spec": {"size": 5}}))
    assert err.code == 422
    assert err.reason == "Invalid"
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


# ------------------------------------------------------------------------------------ Job strategy


def test_job_defaults_and_generated_selector() -> None:
    _, server = make_server()
    created = server.create(job("j"))
    spec = created["spec"]
    uid = created["metadata"]["uid"]
    assert spec["completions"] == 1
    assert spec["parallelism"] == 1
    assert spec["backoffLimit"] == 6
    assert spec["completionMode"] == "NonIndexed"
    assert spec["suspend"] is False
    assert spec["manualSelector"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid,
        "controller-uid": uid,
        "batch.kubernetes.io/job-name": "j",
        "job-name": "j",
    }
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 30
    assert spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert created["status"] == {}
    assert created["metadata"]["generation"] == 1
    assert not created["metadata"].get("labels")


def test_job_labels_default_from_template_labels() -> None:
    _, server = make_server()
    body = job("j")
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    created = server.create(body)
    assert created["metadata"]["labels"] == {"app": "x"}
    body = job("k")
    body["metadata"]["labels"] = {"own": "y"}
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    assert server.create(body)["metadata"]["labels"] == {"own": "y"}


@pytest.mark.parametrize(
    ("given", "completions", "parallelism"),
    [({}, 1, 1), ({"parallelism": 3}, None, 3), ({"completions": 4}, 4, 1),
     ({"completions": 4, "parallelism": 2}, 4, 2)],
)
def test_job_completions_and_parallelism_defaults(given: dict[str, int], completions: int | None,
                                                  parallelism: int) -> None:
    _, server = make_server()
    spec = server.create(job("j", **given))["spec"]
    assert spec.get("completions") == completions
    assert spec["parallelism"] == parallelism


def test_job_defaults_depending_on_other_fields() -> None:
    _, server = make_server()
    per_index = server.create(job("a", completionMode="Indexed", completions=2, backoffLimitPerIndex=1))
    assert per_index["spec"]["backoffLimit"] == MAX_INT32
    policy = {"rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    with_policy = server.create(job("b", podFailurePolicy=policy))
    assert with_policy["spec"]["podReplacementPolicy"] == "Failed"
    assert with_policy["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"
    explicit = server.create(job("c", backoffLimit=0, podReplacementPolicy="Failed"))
    assert explicit["spec"]["backoffLimit"] == 0
    assert explicit["spec"]["podReplacementPolicy"] == "Failed"


def test_job_validation_rules() -> None:
    _, server = make_server()
    err = raises(lambda: server.create(job("a", completionMode="Indexed", parallelism=2)))
    assert "spec.completions: Required value" in err.message
    err = raises(lambda: server.create(job("b", backoffLimitPerIndex=1)))
    assert "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode" in err.message
    body = job("c", podFailurePolicy={"rules": []})
    body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert raises(lambda: server.create(body)).message == (
        'Job.batch "c" is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
        'only "Never" is supported when podFailurePolicy is specified')
    err = raises(lambda: server.create(job("d", completionMode="Sometimes")))
    assert 'spec.completionMode: Unsupported value: "Sometimes"' in err.message


def test_job_template_labels_conflicting_with_the_selector_are_invalid() -> None:
    _, server = make_server()
    body = job("j")
    body["spec"]["template"]["metadata"] = {"labels": {"batch.kubernetes.io/controller-uid": "not-mine"}}
    err = raises(lambda: server.create(body))
    assert err.causes[0].field == "spec.template.metadata.labels"
    assert "`selector` does not match template `labels`" in err.message


def test_manual_selector_generates_nothing() -> None:
    _, server = make_server()
    body = job("j", manualSelector=True, selector={"matchLabels": {"app": "x"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    created = server.create(body)
    assert created["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert created["spec"]["template"]["metadata"]["labels"] == {"app": "x"}


def test_job_template_is_immutable_when_not_suspended() -> None:
    _, server = make_server()
    server.create(job("j"))
    err = raises(lambda: server.patch("Job", "default", "j", {
        "spec": {"template": {"spec": {"nodeSelector": {"zone": "a"}}}}}))
    assert err.code == 422
    assert err.message.startswith('Job.batch "j" is invalid: spec.template: Invalid value: ')
    assert err.message.endswith(": field is immutable")
    assert [c.field for c in err.causes] == ["spec.template"]


def test_job_scheduling_directives_mutable_while_suspended_and_never_started() -> None:
    _, server = make_server()
    server.create(job("j", suspend=True))
    changes: list[Obj] = [
        {"nodeSelector": {"zone": "a"}},
        {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]},
        {"schedulingGates": [{"name": "gate"}]},
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                         "values": ["a"]}]}]}}}},
    ]
    generation = 1
    for change in changes:
        updated = server.patch("Job", "default", "j", {"spec": {"template": {"spec": change}}})
        generation += 1
        assert updated["metadata"]["generation"] == generation
    updated = server.patch("Job", "default", "j", {"spec": {"template": {"metadata": {
        "labels": {"extra": "1"}, "annotations": {"note": "x"}}}}})
    assert updated["spec"]["template"]["metadata"]["labels"]["extra"] == "1"
    assert updated["spec"]["template"]["metadata"]["annotations"] == {"note": "x"}
    image = clone(updated)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    assert raises(lambda: server.update(image)).causes[0].field == "spec.template"
    pod_affinity = {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchLabels": {"a": "b"}}}]}}}
    assert raises(lambda: server.patch("Job", "default", "j", {
        "spec": {"template": {"spec": pod_affinity}}})).causes[0].field == "spec.template"


def test_job_template_immutable_once_started_even_if_suspended() -> None:
    _, server = make_server()
    server.create(job("j", suspend=True))
    server.patch("Job", "default", "j", {"status": {"startTime": STARTED}}, subresource="status")
    err = raises(lambda: server.patch("Job", "default", "j", {"spec": {"template": {"spec": {
        "nodeSelector": {"zone": "a"}}}}}))
    assert err.causes[0].field == "spec.template"
    assert server.patch("Job", "default", "j", {"spec": {"suspend": False}})["spec"]["suspend"] is False


def test_job_immutable_fields_and_elastic_indexed_completions() -> None:
    _, server = make_server()
    server.create(job("plain", completions=2, parallelism=2))
    for change, path in (
        ({"completions": 3}, "spec.completions"),
        ({"completionMode": "Indexed"}, "spec.completionMode"),
        ({"selector": {"matchLabels": {"a": "b"}}}, "spec.selector"),
    ):
        err = raises(lambda change=change: server.patch("Job", "default", "plain", {"spec": change}))
        assert err.code == 422
        assert path in [c.field for c in err.causes]
        assert "field is immutable" in err.message
    server.create(job("idx", completionMode="Indexed", completions=2, parallelism=2))
    scaled = server.patch("Job", "default", "idx", {"spec": {"completions": 4, "parallelism": 4}})
    assert scaled["spec"]["completions"] == 4
    err = raises(lambda: server.patch("Job", "default", "idx", {"spec": {"completions": 5}}))
    assert err.message == ('Job.batch "idx" is invalid: spec.completions: Invalid value: 5: '
                           "can only be modified in tandem with spec.parallelism")


# --------------------------------------------------------------------------------- Pod and Service


def test_pod_defaults_and_initial_status() -> None:
    _, server = make_server()
    body = pod("p")
    body["status"] = {"phase": "Running"}
    created = server.create(body)
    spec = created["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    latest = server.create(pod("q") | {"spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert latest["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_pod_qos_class() -> None:
    _, server = make_server()
    guaranteed = pod("g")
    guaranteed["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"},
                                                        "limits": {"cpu": "1", "memory": "1Gi"}}
    burstable = pod("b")
    burstable["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    assert server.create(guaranteed)["status"]["qosClass"] == "Guaranteed"
    assert server.create(burstable)["status"]["qosClass"] == "Burstable"


def test_pod_spec_is_mostly_immutable() -> None:
    _, server = make_server()
    server.create(pod("p"))
    err = raises(lambda: server.patch("Pod", "default", "p", {"spec": {"nodeSelector": {"a": "b"}}}))
    assert err.code == 422
    assert err.causes[0].field == "spec"
    assert err.causes[0].type == "Forbidden"
    image = server.patch("Pod", "default", "p", {"spec": {"containers": [
        {"name": "main", "image": "busybox:2", "imagePullPolicy": "IfNotPresent",
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}]}})
    assert image["spec"]["containers"][0]["image"] == "busybox:2"


def test_pod_duplicate_container_names_are_invalid() -> None:
    _, server = make_server()
    body = pod("p")
    body["spec"]["containers"].append({"name": "main", "image": "x"})
    err = raises(lambda: server.create(body))
    assert err.causes[0].field == "spec.containers[1].name"
    assert err.causes[0].type == "Duplicate"


def test_service_cluster_ip_allocation() -> None:
    _, server = make_server()
    svc = server.create({"kind": "Service", "metadata": {"name": "a"}, "spec": {"selector": {"app": "a"}}})
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["clusterIPs"] == [svc["spec"]["clusterIP"]]
    other = server.create({"kind": "Service", "metadata": {"name": "b"}, "spec": {}})
    assert other["spec"]["clusterIP"] != svc["spec"]["clusterIP"]
    headless = server.create({"kind": "Service", "metadata": {"name": "h"}, "spec": {"clusterIP": "None"}})
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["clusterIPs"] == ["None"]
    assert make_server()[1].create({"kind": "Service", "metadata": {"name": "a"}, "spec": {}})["spec"][
        "clusterIP"] == svc["spec"]["clusterIP"]
    err = raises(lambda: server.patch("Service", "default", "h", {"spec": {"clusterIP": "10.0.0.1"}}))
    assert err.causes[0].field == "spec.clusterIP"


# ------------------------------------------------------------------------------------------- reads


def test_list_is_in_key_order_and_filters_by_namespace_and_owner() -> None:
    _, server = make_server()
    owner = server.create(widget("owner"))
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner", "uid": owner["metadata"]["uid"]}
    for ns, name in (("b", "z"), ("a", "y"), ("b", "a"), ("a", "x")):
        body = widget(name)
        body["metadata"]["namespace"] = ns
        if name in ("z", "x"):
            body["metadata"]["ownerReferences"] = [ref]
        server.create(body)
    keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in server.list("Widget")]
    assert keys == [("a", "x"), ("a", "y"), ("b", "a"), ("b", "z"), ("default", "owner")]
    assert [o["metadata"]["name"] for o in server.list("Widget", "b")] == ["a", "z"]
    owned = server.list("Widget", owner_uid=owner["metadata"]["uid"])
    assert [o["metadata"]["name"] for o in owned] == ["x", "z"]
    owned_in_b = server.list("Widget", "b", owner_uid=owner["metadata"]["uid"])
    assert [o["metadata"]["name"] for o in owned_in_b] == ["z"]
    assert server.list("Pod", owner_uid=owner["metadata"]["uid"]) == []


def test_cluster_scoped_kinds_ignore_namespaces() -> None:
    _, server = make_server()
    node = server.create({"kind": "Node", "metadata": {"name": "n1", "namespace": "ignored"}})
    assert "namespace" not in node["metadata"]
    assert "generation" not in node["metadata"]
    assert server.get("Node", "anything", "n1") is node
    assert server.list("Node", "whatever") == [node]
    assert server.delete("Node", "", "n1") is None
    assert server.count("Node") == 0


def test_get_by_uid_and_count() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    assert server.get_by_uid(created["metadata"]["uid"]) is created
    assert server.get_by_uid("missing") is None
    assert server.count("Widget") == 1
    assert server.count("Unregistered") == 0
    assert "Widget" in server.kinds()
