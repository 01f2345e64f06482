"""The JobSet pod webhooks (``jobset/webhooks/pod_webhook.py``), after upstream ``pod_webhook_test.go``
(``TestDefault``, ``TestLeaderPodName``, ``TestPodsOwnedBySameJob``, ``TestLeaderPodForFollower``), and
through the API server: the priority label on every JobSet pod and a follower refused until its leader
is bound, with controller-runtime's 403 and the webhook name in the message."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock
from jobset.api.v1alpha2 import jobset_types as api
from jobset.webhooks.pod_webhook import PodWebhook, WebhookDenied, gen_leader_pod_name, remove_pod_name_suffix
from jobset.webhooks.setup import register_pod_webhooks

KEY = "cloud.google.com/gke-nodepool"
INDEX = "batch.kubernetes.io/job-completion-index"


def server() -> ApiServer:
    srv = ApiServer(Clock(), random.Random(0))
    register_builtin(srv)
    register_pod_webhooks(srv)
    for name, pool in (("node-a", "pool-a"), ("node-b", None)):
        srv.create({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {KEY: pool} if pool else {}}, "status": {}})
    return srv


def jobset_pod(index: int, *, name: str | None = None, exclusive: bool = True, owner: str = "job-uid-1",
               node: str | None = None, **annotations: str) -> Obj:
    labels = {api.JOBSET_NAME_KEY: "js", api.REPLICATED_JOB_NAME_KEY: "rjob", api.JOB_INDEX_KEY: "0",
              api.JOB_KEY: "hash-0", INDEX: str(index)}
    notes = {api.JOBSET_NAME_KEY: "js", INDEX: str(index), **annotations}
    if exclusive:
        notes[api.EXCLUSIVE_KEY] = KEY
    spec: Obj = {"containers": [{"name": "c", "image": "busybox"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name or f"js-rjob-0-{index}-abcde", "namespace": "default", "labels": labels,
                         "annotations": notes,
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "js-rjob-0",
                                              "uid": owner, "controller": True}]},
            "spec": spec}


# ------------------------------------------------------------------------------------ Default
def test_default_leaves_non_jobset_and_node_selector_strategy_pods_alone() -> None:
    hook = PodWebhook(server())
    plain: Obj = {"metadata": {"name": "p", "labels": {}}, "spec": {"priority": 0}}
    assert hook.default(plain) is None
    strategy = jobset_pod(0, **{api.NODE_SELECTOR_STRATEGY_KEY: "true"})
    strategy["spec"]["priority"] = 0
    assert hook.default(strategy) is None


def test_default_copies_priority_into_the_label_without_exclusive_placement() -> None:
    hook = PodWebhook(server())
    pod = jobset_pod(1, exclusive=False)
    assert api.PRIORITY_KEY not in hook.default(pod)["metadata"]["labels"]  # type: ignore[index]
    pod["spec"]["priority"] = 100
    out = hook.default(pod)
    assert out is not None and out["metadata"]["labels"][api.PRIORITY_KEY] == "100"
    assert "nodeSelector" not in out["spec"] and "affinity" not in out["spec"]
    assert api.PRIORITY_KEY not in pod["metadata"]["labels"]  # the input is never changed


def test_default_gives_the_leader_affinity_and_anti_affinity_on_the_topology_key() -> None:
    pod = jobset_pod(0)
    pod["spec"]["priority"] = 0
    out = PodWebhook(server()).default(pod)
    assert out is not None
    affinity = out["spec"]["affinity"]
    assert affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [{
        "labelSelector": {"matchExpressions": [{"key": api.JOB_KEY, "operator": "In", "values": ["hash-0"]}]},
        "topologyKey": KEY, "namespaceSelector": {}}]
    assert affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [{
        "labelSelector": {"matchExpressions": [
            {"key": api.JOB_KEY, "operator": "Exists"},
            {"key": api.JOB_KEY, "operator": "NotIn", "values": ["hash-0"]},
            {"key": api.PRIORITY_KEY, "operator": "In", "values": ["0"]}]},
        "topologyKey": KEY, "namespaceSelector": {}}]
    assert "affinity" not in pod["spec"]


def test_default_follower_gets_its_leaders_domain_only_once_the_leader_is_scheduled() -> None:
    srv = server()
    hook = PodWebhook(srv)
    follower = jobset_pod(1)
    assert "nodeSelector" not in hook.default(follower)["spec"]  # type: ignore[index]  # no leader
    srv.create(jobset_pod(0))
    assert "nodeSelector" not in hook.default(follower)["spec"]  # type: ignore[index]  # not scheduled
    srv.bind("default", "js-rjob-0-0-abcde", "node-a")
    assert hook.default(follower)["spec"]["nodeSelector"] == {KEY: "pool-a"}  # type: ignore[index]


def test_default_follower_of_a_leader_on_a_missing_or_unlabelled_node() -> None:
    srv = server()
    hook = PodWebhook(srv)
    srv.create(jobset_pod(0, node="node-gone"))
    with pytest.raises(ApiError) as err:
        hook.default(jobset_pod(1))
    assert err.value.reason == "NotFound" and err.value.message == 'nodes "node-gone" not found'
    srv.delete("Pod", "default", "js-rjob-0-0-abcde", grace_period_seconds=0)
    srv.create(jobset_pod(0, name="js-rjob-0-0-fghij", node="node-b"))
    with pytest.raises(WebhookDenied, match=f"^node does not have topology label: {KEY}$"):
        hook.default(jobset_pod(1))


# ------------------------------------------------------------------------------------ helpers
def test_leader_pod_name_and_name_suffix() -> None:
    assert gen_leader_pod_name(jobset_pod(3)) == "js-rjob-0-0"
    pod = jobset_pod(3)
    del pod["metadata"]["labels"][api.JOB_INDEX_KEY]
    with pytest.raises(WebhookDenied, match=r"pod missing label: jobset\.sigs\.k8s\.io/job-index"):
        gen_leader_pod_name(pod)
    assert remove_pod_name_suffix("js-rjob-0-0-abcde") == "js-rjob-0-0"
    assert remove_pod_name_suffix("a-b-c-d") is None


@pytest.mark.parametrize(("leaders", "want"), [
    ([], "expected 1 leader pod (js-rjob-0-0), but got 0. this is an expected, transient error"),
    ([{}, {"name": "js-rjob-0-0-zzzzz"}], "expected 1 leader pod (js-rjob-0-0), but got 2"),
    ([{"phase": "Failed"}], "but got 0"),
    ([{"owner": "job-uid-2"}], "follower pod owner UID (job-uid-1) != leader pod owner UID (job-uid-2)"),
])
def test_leader_pod_for_follower_errors(leaders: list[dict[str, Any]], want: str) -> None:
    srv = server()
    for leader in leaders:
        obj = srv.create(jobset_pod(0, name=leader.get("name"), owner=leader.get("owner", "job-uid-1"),
                                    node="node-a"))
        if "phase" in leader:
            srv.update({**obj, "status": {**obj["status"], "phase": leader["phase"]}}, subresource="status")
    follower = jobset_pod(1)
    follower["spec"]["nodeSelector"] = {KEY: "pool-a"}
    with pytest.raises(WebhookDenied) as err:
        PodWebhook(srv).validate_create(follower)
    assert want in str(err.value)


def test_a_finished_leader_next_to_a_live_one_is_ignored() -> None:
    srv = server()
    old = srv.create(jobset_pod(0, name="js-rjob-0-0-old00", node="node-a"))
    srv.update({**old, "status": {**old["status"], "phase": "Succeeded"}}, subresource="status")
    srv.create(jobset_pod(0, node="node-a"))
    follower = jobset_pod(1)
    follower["spec"]["nodeSelector"] = {KEY: "pool-a"}
    PodWebhook(srv).validate_create(follower)


# ------------------------------------------------------------------------------------ ValidateCreate
def test_validate_create_messages() -> None:
    srv = server()
    hook = PodWebhook(srv)
    hook.validate_create(jobset_pod(0))  # leaders are never refused
    hook.validate_create(jobset_pod(1, exclusive=False))
    with pytest.raises(WebhookDenied, match=r"^follower pod node selector not set$"):
        hook.validate_create(jobset_pod(1))
    follower = jobset_pod(1)
    follower["spec"]["nodeSelector"] = {"other": "x"}
    with pytest.raises(WebhookDenied, match=f"missing selector: {KEY}$"):
        hook.validate_create(follower)
    follower["spec"]["nodeSelector"] = {KEY: "pool-a"}
    srv.create(jobset_pod(0))
    with pytest.raises(WebhookDenied, match=r"^leader pod not yet scheduled, not creating follower pod"):
        hook.validate_create(follower)


def test_through_the_api_server_the_follower_is_refused_then_admitted_with_its_node_selector() -> None:
    srv = server()
    leader = srv.create(jobset_pod(0))
    assert leader["metadata"]["labels"][api.PRIORITY_KEY] == "0"  # Priority ran before the webhook
    assert leader["spec"]["affinity"]["podAntiAffinity"]
    with pytest.raises(ApiError) as err:
        srv.create(jobset_pod(1))
    assert (err.value.code, err.value.reason) == (403, "Forbidden")
    # The defaulting hook found no scheduled leader and set no nodeSelector: that is what is reported.
    assert err.value.message == ('admission webhook "vpod.kb.io" denied the request: '
                                 "follower pod node selector not set")
    srv.bind("default", leader["metadata"]["name"], "node-a")
    follower = srv.create(jobset_pod(1))
    assert follower["spec"]["nodeSelector"] == {KEY: "pool-a"}
