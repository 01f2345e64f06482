"""API server writes (fakecluster/apiserver/server.py): the status subresource, optimistic concurrency,
NotFound / AlreadyExists / Conflict / Invalid with upstream's messages
(``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``), JSON merge patch, schema checks
and ``pods/binding``."""

from __future__ import annotations

import random
import uuid
from typing import Any

from apiserver_harness import STARTED, Recorder, invalid, job, make_server, pod, raises, rv, widget

from fakecluster.api import errors
from fakecluster.api.core import Pod, PodSpec
from fakecluster.api.errors import FieldError
from fakecluster.api.meta import ObjectMeta
from fakecluster.api.objects import Obj, clone, merge_patch
from fakecluster.api.validation import validate_model
from fakecluster.apiserver.object_meta import uuid4 as _uuid4
from fakecluster.apiserver.resources import ResourceType

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
    err = invalid(lambda: server.update(body))
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
    err = invalid(lambda: server.create(body))
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


def test_a_pod_built_from_a_validated_spec_is_still_validated_where_it_differs() -> None:
    """``create(template=...)``: the template spec is validated once (``validated_spec``); each pod is
    checked in full except for spec fields that are the template's very values, so a bad value the pod
    adds itself, or one a mutating hook puts in, is still rejected with the error a full check gives."""
    _, server = make_server()
    template = server.validated_spec("Pod", pod("t")["spec"])
    assert template.spec == pod("t")["spec"] and template.spec is not pod("t")["spec"]

    def from_template(name: str, **spec: Any) -> Obj:
        return {**pod(name), "spec": {**template.spec, **spec}}

    assert server.create(from_template("ok", hostname="ok"), template=template)["spec"]["hostname"] == "ok"
    full = raises(lambda: server.create(from_template("p", hostname=7)))
    partial = raises(lambda: server.create(from_template("p", hostname=7), template=template))
    assert partial.message == full.message and "spec.hostname" in partial.message
    bad_meta = from_template("meta")
    bad_meta["metadata"] = {**bad_meta["metadata"], "labels": {"a": 1}}
    assert "metadata.labels" in raises(lambda: server.create(bad_meta, template=template)).message
    shared = server.validated_spec("Pod", pod("t")["spec"], {"labels": {"app": "x"}})
    labelled = {**pod("labelled"), "spec": shared.spec}
    labelled["metadata"] = {**labelled["metadata"], "labels": shared.metadata["labels"]}
    assert server.create(labelled, template=shared)["metadata"]["labels"] == {"app": "x"}
    assert "metadata.labels" in raises(lambda: server.validated_spec("Pod", {}, {"labels": {"a": 1}})).message
    server.register_admission("Pod", "BreaksIt", mutating=lambda op, obj, old: {
        **obj, "spec": {**obj["spec"], "restartPolicy": "Sometimes"}})
    err = raises(lambda: server.create(from_template("hooked"), template=template))
    assert "spec.restartPolicy" in err.message


def test_a_spec_template_must_be_valid_and_come_from_this_server() -> None:
    _, server = make_server()
    bad = pod("p")["spec"] | {"restartPolicy": "Sometimes"}
    assert "spec.restartPolicy" in raises(lambda: server.validated_spec("Pod", bad)).message
    _, other = make_server()
    foreign = other.validated_spec("Pod", pod("p")["spec"])
    assert isinstance(raises(lambda: server.create(pod("p"), template=foreign)), errors.BadRequest)


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


def test_a_status_write_checks_the_names_it_reads_unless_it_sends_the_stored_metadata_back() -> None:
    """The kubelet's status writes send the stored version's metadata back as it is: that passed the
    type checks when it was stored, and the write goes through. Any other metadata is checked before the
    object is looked up: a name of the wrong type is a decoding error (400), not NotFound."""
    _, server = make_server()
    stored = server.create(pod("p"))
    written = server.update(dict(stored, status={"phase": "Running"}), subresource="status")
    assert written["status"]["phase"] == "Running"
    assert written["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]
    bad = dict(written, metadata={**written["metadata"], "name": 7}, status={"phase": "Failed"})
    err = raises(lambda: server.update(bad, subresource="status"))
    assert err.code == 400
    assert err.message == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string")
    missing = dict(written, metadata={**written["metadata"], "name": "q"})
    assert raises(lambda: server.update(missing, subresource="status")).code == 404
