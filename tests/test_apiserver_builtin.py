"""The built-in kinds' strategies (fakecluster/apiserver/builtin.py): Job defaulting, generated selector,
validation and immutability (``pkg/apis/batch/v1/defaults.go``, ``pkg/registry/batch/job/strategy.go``,
``pkg/apis/batch/validation/validation.go``), Pod defaults, QoS and immutability, Service ClusterIPs."""

from __future__ import annotations

import pytest
from apiserver_harness import STARTED, job, make_server, pod, raises

from fakecluster.api.objects import Obj, clone
from fakecluster.apiserver.builtin import MAX_INT32

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


def test_job_defaults_apply_to_updates_too() -> None:
    """SetDefaults_Job runs on every decoded request: a merge patch dropping parallelism and completions
    (JobSet's syncJobScaling for a template that sets neither) stores them defaulted, not refused."""
    _, server = make_server()
    server.create(job("j", completionMode="Indexed"))
    patched = server.patch("Job", "default", "j", {"spec": {"parallelism": None, "completions": None}})
    assert (patched["spec"]["parallelism"], patched["spec"]["completions"]) == (1, 1)
    assert patched["metadata"]["resourceVersion"]  # stored


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
