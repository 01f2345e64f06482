"""The client seam (fakecluster/client/): what a controller may import and call, and what the cluster's
own components get on top (fakecluster/client/internal.py) without skipping any API-server check."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import pytest

from fakecluster.api.errors import BadRequest, Invalid
from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.server import ApiServer, ValidatedSpec
from fakecluster.client.forwarding import ForwardingClient
from fakecluster.client.local import LocalClient
from fakecluster.clock import Clock
from fakecluster.controllers.garbage_collector import GarbageCollector
from fakecluster.controllers.job.job_controller import JobController

NS = "default"


def test_the_protocol_imports_without_the_api_server() -> None:
    """What the JobSet controller imports from the cluster loads no server, client or controller."""
    code = (
        "import sys, fakecluster.client.protocol, fakecluster.runtime, fakecluster.api.objects;"
        "loaded = sorted(m for m in sys.modules if m.startswith(('fakecluster.apiserver', "
        "'fakecluster.client.local', 'fakecluster.client.internal', 'fakecluster.cluster')));"
        "print(loaded)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_protocol_has_the_kubernetes_verbs_only() -> None:
    from fakecluster.client.protocol import Client

    verbs = {name for name in vars(Client) if not name.startswith("_")}
    assert verbs == {"get", "list", "create", "update", "update_status", "patch", "delete", "bind", "evict",
                     "watch"}


class _Counting(ForwardingClient):
    """Counts the internal verbs the Job controller uses."""

    def __init__(self, inner: LocalClient) -> None:
        super().__init__(inner)
        self.templates: list[ValidatedSpec] = []
        self.created_with: list[ValidatedSpec | None] = []

    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        template = super().validated_spec(kind, spec, metadata)
        self.templates.append(template)
        return template

    def create_donated(self, obj: Obj, *, template: ValidatedSpec | None = None) -> Obj:
        self.created_with.append(template)
        return super().create_donated(obj, template=template)


def _job_controller() -> tuple[Clock, ApiServer, LocalClient, _Counting]:
    clock = Clock()
    server = ApiServer(clock, random.Random(0))
    register_builtin(server)
    GarbageCollector(clock, server)
    client = _Counting(LocalClient(server, "job-controller"))
    JobController(client, clock)
    return clock, server, LocalClient(server), client


def _job(**spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}, **spec}}


@pytest.mark.parametrize("mode", ["NonIndexed", "Indexed"])
def test_the_job_controller_validates_its_template_once_per_sync_and_each_pod_against_it(mode: str) -> None:
    clock, server, admin, counting = _job_controller()
    admin.create(_job(completions=4, parallelism=4, completionMode=mode))
    clock.run(5)
    assert server.count("Pod") == 4
    assert len(counting.templates) == 1
    assert counting.created_with == [counting.templates[0]] * 4
    pod = server.list("Pod", NS)[0]
    assert pod["spec"]["containers"] == counting.templates[0].spec["containers"]
    assert pod["metadata"]["finalizers"] is counting.templates[0].metadata["finalizers"]


def test_a_pod_that_a_webhook_breaks_is_rejected_though_built_from_a_validated_template() -> None:
    clock, server, admin, counting = _job_controller()
    server.register_admission("Pod", "breaks-pods", mutating=lambda op, obj, old: {
        **obj, "spec": {**obj["spec"], "hostname": 42}}, operations=("CREATE",))
    admin.create(_job(completions=1, parallelism=1))
    clock.run(5)
    assert server.count("Pod") == 0
    assert counting.created_with  # it tried, with a template
    with pytest.raises(Invalid, match=r"spec\.hostname"):
        server.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
                       "spec": counting.templates[0].spec}, template=counting.templates[0])


def test_the_partial_pod_model_checks_each_present_field_as_the_full_one_does() -> None:
    from fakecluster.api.core import Pod
    from fakecluster.api.validation import partial_model, validate_model

    partial = partial_model(Pod)
    assert partial is not None
    ok = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
          "spec": {"hostname": "h", "hostPID": True}}
    assert validate_model(partial, ok)[1] == []
    for bad, path in (({"hostname": 3}, "spec.hostname"), ({"host_pid": True}, "spec.host_pid"),
                      ({"terminationGracePeriodSeconds": 2**70}, "spec.terminationGracePeriodSeconds"),
                      ({"containers": [{"name": "c", "bogus": 1}]}, "spec.containers[0].bogus")):
        errors = validate_model(partial, {**ok, "spec": bad})[1]
        assert [e.field for e in errors] == [path]
    assert [e.field for e in validate_model(partial, {**ok, "metadata": {"labels": {"a": 1}}})[1]] == [
        "metadata.labels[a]"]


def test_a_pods_own_labels_are_validated_even_beside_the_templates() -> None:
    server = ApiServer(Clock(), random.Random(0))
    register_builtin(server)
    template = server.validated_spec("Pod", {"containers": [{"name": "c", "image": "busybox"}]},
                                     {"labels": {"app": "x"}})
    labels = {**template.metadata["labels"], "index": 7}  # the template's entry, plus a bad one of its own
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS, "labels": labels},
           "spec": template.spec}
    # A value of the wrong type fails decoding (400), as the real API server's JSON decoder does ...
    with pytest.raises(BadRequest, match=r"ObjectMeta\.metadata\.labels of type string"):
        server.create(pod, template=template)
    # ... and a string that is no label value fails ValidateLabels (422).
    pod["metadata"]["labels"] = {**template.metadata["labels"], "index": "-7-"}
    with pytest.raises(Invalid, match=r'metadata\.labels: Invalid value: "-7-"'):
        server.create(pod, template=template)
    pod["metadata"]["labels"] = {**template.metadata["labels"], "index": "7"}
    assert server.create(pod, template=template)["metadata"]["labels"] == {"app": "x", "index": "7"}
