"""The status subresource of the built-in kinds answers like a real API server: a status the Go types
cannot decode (a wrong JSON type, a number out of range, an unknown field) is ``Invalid`` with its path,
while one they decode (missing fields, any string in an enum) is stored, as upstream stores it. Found by
``benchmarks/hostile_campaign.py --seed 29``: a scenario's ``patchStatus`` could store a Job condition
that was a string, and the Job controller, the JobSet controller, the invariants and the trace recorder
each failed on it as an internal error."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.batch import JobStatus
from fakecluster.api.core_status import PodStatus
from fakecluster.api.errors import Invalid
from fakecluster.api.validation import decoded_model, validate_model
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock

TEMPLATE = {"metadata": {"labels": {"a": "b"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}  # fmt: skip


def _server(*, check_mode: bool = True) -> ApiServer:
    server = ApiServer(Clock(), random.Random(0), check_snapshots=check_mode)
    register_builtin(server)
    server.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                   "spec": {"template": TEMPLATE}})
    server.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                   "spec": {"containers": [{"name": "c", "image": "i"}]}})
    return server


@pytest.mark.parametrize(("kind", "status", "message"), [
    ("Job", {"conditions": ["posd"]}, 'status.conditions[0]: Invalid value: "posd": must be an object'),
    ("Job", {"conditions": 5}, "status.conditions: Invalid value: 5: must be an array"),
    ("Job", {"active": "x"}, 'status.active: Invalid value: "x": must be an integer'),
    ("Job", {"ready": 2**40}, "status.ready: Invalid value: 1099511627776"),
    ("Job", {"conditions": [{"type": "Complete", "status": "True", "reason": 5}]},
     "status.conditions[0].reason: Invalid value: 5: must be a string"),
    ("Job", {"bogus": 1}, 'unknown field "status.bogus"'),
    ("Job", "str", 'status: Invalid value: "str": must be an object'),
    ("Pod", {"phase": 5}, "status.phase: Invalid value: 5: must be a string"),
    ("Pod", {"containerStatuses": [1]}, "status.containerStatuses[0]: Invalid value: 1: must be an object"),
    ("Pod", {"conditions": [{"type": "Ready", "status": True}]},
     "status.conditions[0].status: Invalid value: true: must be a string"),
])  # fmt: skip
def test_a_status_the_go_types_cannot_decode_is_invalid_with_its_path(kind: str, status: Any,
                                                                      message: str) -> None:
    server = _server()
    name = "j" if kind == "Job" else "p"
    before = server.get(kind, "default", name)
    with pytest.raises(Invalid) as caught:
        server.patch(kind, "default", name, {"status": status}, subresource="status")
    assert message in caught.value.message
    assert server.get(kind, "default", name) is before  # nothing written


@pytest.mark.parametrize(("kind", "status"), [
    ("Job", {"conditions": [{"status": "Maybe"}]}),  # no type: decodes to "", and an enum takes any string
    ("Pod", {"phase": "Weird"}),
    ("Pod", {"containerStatuses": [{"name": "c"}]}),  # image, imageID, ready, restartCount: zero values
])  # fmt: skip
def test_a_status_the_go_types_decode_is_stored_as_upstream_stores_it(kind: str, status: Any) -> None:
    server = _server()
    name = "j" if kind == "Job" else "p"
    stored = server.patch(kind, "default", name, {"status": status}, subresource="status")
    for key, value in status.items():
        assert stored["status"][key] == value


@pytest.mark.parametrize("check_mode", [True, False])
def test_a_donated_status_meets_the_schema_in_check_mode_only(check_mode: bool) -> None:
    """The cluster's kubelet and Job controller donate theirs (built by this project's code, four per
    pod); the test suite runs in check mode, which holds every one of them to the schema."""
    server = _server(check_mode=check_mode)
    job = server.get("Job", "default", "j")
    bad = {**job, "status": {"active": "x"}}
    if check_mode:
        with pytest.raises(Invalid, match=r"status\.active"):
            server.update(bad, subresource="status", donate=True)
    else:
        assert server.update(bad, subresource="status", donate=True)["status"] == {"active": "x"}
    job = server.get("Job", "default", "j")
    with pytest.raises(Invalid, match=r"status\.active"):  # a plain status write: always checked
        server.update({**job, "status": {"active": "x"}}, subresource="status")


def test_the_decoded_model_keeps_types_and_ranges_but_not_presence_or_enums() -> None:
    assert validate_model(decoded_model(JobStatus), {})[1] == []
    assert validate_model(decoded_model(JobStatus), {"conditions": [{}]})[1] == []
    assert validate_model(JobStatus, {"conditions": [{}]})[1]  # the full model requires type and status
    assert validate_model(decoded_model(PodStatus), {"phase": "Weird"})[1] == []
    assert validate_model(PodStatus, {"phase": "Weird"})[1]
    status = {"failed": -(2**31) - 1, "uncountedTerminatedPods": 3}
    errors = validate_model(decoded_model(JobStatus), status)[1]
    assert [e.field for e in errors] == ["failed", "uncountedTerminatedPods"]
    assert decoded_model(JobStatus) is decoded_model(JobStatus)  # built once
