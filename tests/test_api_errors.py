"""Typed API errors (fakecluster/api/errors.py): one class per ``metav1.StatusReason``, caught by type."""

from __future__ import annotations

import pickle
import random

import pytest

from fakecluster.api import errors
from fakecluster.api.errors import AlreadyExists, ApiError, Conflict, Invalid, NotFound
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock


def _server() -> ApiServer:
    server = ApiServer(Clock(), random.Random(0))
    register_builtin(server)
    return server


def _pod(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def test_each_reason_is_a_subclass_with_the_status_fields() -> None:
    err = NotFound("jobs", "batch", "j")
    assert isinstance(err, ApiError)
    assert (err.code, err.reason, err.message) == (404, "NotFound", 'jobs.batch "j" not found')
    assert (Conflict("pods", "", "p").code, AlreadyExists("pods", "", "p").code) == (409, 409)
    assert errors.Expired("too old").code == 410 and errors.Expired("too old").reason == "Expired"
    assert errors.TooManyRequests("slow down").code == 429


def test_from_status_picks_the_subclass_so_except_by_type_catches_it() -> None:
    assert type(ApiError.from_status(409, "Conflict", "x")) is Conflict
    assert type(ApiError.from_status(418, "Teapot", "x")) is ApiError
    with pytest.raises(NotFound):
        raise NotFound.with_message("the server could not find the requested resource")


def test_with_prefix_keeps_the_type_and_the_causes() -> None:
    err = Invalid("Pod", "", "p", [errors.FieldError.required("spec.containers")])
    denied = err.with_prefix('admission webhook "w" denied the request: ')
    assert isinstance(denied, Invalid)
    assert denied.causes == err.causes
    assert denied.message.startswith('admission webhook "w" denied the request: Pod "p" is invalid')


def test_errors_survive_pickling_as_their_type() -> None:
    err = pickle.loads(pickle.dumps(Conflict("jobs", "batch", "j")))
    assert isinstance(err, Conflict) and err.message.endswith("try again")


def test_server_raises_typed_errors() -> None:
    server = _server()
    with pytest.raises(NotFound):
        server.get("Pod", "default", "missing")
    with pytest.raises(NotFound):
        server.get("Gizmo", "default", "x")  # an unserved kind
    server.create(_pod("p"))
    with pytest.raises(AlreadyExists):
        server.create(_pod("p"))
    stale = dict(server.get("Pod", "default", "p"))
    stale["metadata"] = dict(stale["metadata"], resourceVersion="1")
    server.patch("Pod", "default", "p", {"metadata": {"labels": {"a": "b"}}})
    with pytest.raises(Conflict):
        server.update(stale)
    with pytest.raises(Invalid):
        server.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "Bad_Name"}, "spec": {}})
    with pytest.raises(errors.BadRequest):
        server.create({"metadata": {"name": "x"}})


def test_the_package_re_exports_the_common_reasons() -> None:
    import fakecluster

    assert (fakecluster.NotFound, fakecluster.Conflict, fakecluster.AlreadyExists, fakecluster.Invalid) == (
        NotFound, Conflict, AlreadyExists, Invalid)
    assert issubclass(fakecluster.NotFound, fakecluster.ApiError)
