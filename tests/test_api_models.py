"""Tests for fakecluster.api (models, validation, quantities) and jobset.api.v1alpha2.jobset_types (JobSet
v1alpha2 types)."""

from __future__ import annotations

import ast
import copy
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from scenario_files import jobset_object, rjob_object

from fakecluster.api import (
    Container,
    Job,
    JobSpec,
    ObjectMeta,
    Pod,
    PodSpec,
    PodStatus,
    dump,
    parse_quantity,
    validate_model,
)
from fakecluster.api.errors import FieldError
from jobset.api.v1alpha2 import jobset_types as jobset_api
from jobset.api.v1alpha2.jobset_types import JobSet

REPO = Path(__file__).resolve().parents[1]

# Field names of Kubernetes 1.34 (k8s.io/api core/v1 and batch/v1 types.go, release-1.34), in Go order.
PODSPEC_FIELDS_1_34 = [
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
    "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
    "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority",
    "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources", "hostnameOverride",
]  # fmt: skip
CONTAINER_FIELDS_1_34 = [
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
]  # fmt: skip
PODSTATUS_FIELDS_1_34 = [
    "observedGeneration", "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP",
    "hostIPs", "podIP", "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass",
    "ephemeralContainerStatuses", "resize", "resourceClaimStatuses", "extendedResourceClaimStatus",
]  # fmt: skip
JOBSPEC_FIELDS_1_34 = [
    "parallelism", "completions", "activeDeadlineSeconds", "podFailurePolicy", "successPolicy",
    "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "selector", "manualSelector", "template",
    "ttlSecondsAfterFinished", "completionMode", "suspend", "podReplacementPolicy", "managedBy",
]  # fmt: skip


def upstream_examples_dir() -> Path:
    """The JobSet project's example manifests: the in-repo copy if present, else CI's ``../shared``."""
    in_repo = REPO / "manifests" / "upstream"
    return in_repo if in_repo.is_dir() else REPO.parent / "shared" / "upstream-examples"


def upstream_jobsets() -> list[tuple[str, dict[str, Any]]]:
    folder = upstream_examples_dir()
    docs = []
    for path in sorted(folder.glob("*.yaml")):
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind") == "JobSet":
                docs.append((f"{path.name}#{index}", doc))
    return docs


def jobset_with_pod_spec(pod_spec: dict[str, Any], **job_spec: Any) -> dict[str, Any]:
    return jobset_object(rjob_object("workers", replicas=2, pod_spec=pod_spec, **job_spec))


POD_TEMPLATE_PATH = "spec.replicatedJobs[0].template.spec.template.spec"

TYPICAL_POD: dict[str, Any] = yaml.safe_load(
    """
    apiVersion: v1
    kind: Pod
    metadata:
      name: js-workers-0-1-x7k2p
      namespace: default
      uid: 5f1c
      resourceVersion: '42'
      creationTimestamp: '2024-01-01T00:00:00Z'
      labels: {batch.kubernetes.io/job-completion-index: '1', jobset.sigs.k8s.io/jobset-name: js}
      annotations: {batch.kubernetes.io/job-completion-index: '1'}
      ownerReferences:
      - {apiVersion: batch/v1, kind: Job, name: js-workers-0, uid: u1,
         controller: true, blockOwnerDeletion: true}
      finalizers: [batch.kubernetes.io/job-tracking]
    spec:
      restartPolicy: OnFailure
      hostname: js-workers-0-1
      subdomain: js
      hostPID: false
      setHostnameAsFQDN: false
      tolerations:
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
      schedulingGates:
      - {name: example.com/gate}
      containers:
      - name: main
        image: python:3.11
        command: [python, -c, print(1)]
        env:
        - {name: A, value: '1'}
        - name: IDX
          valueFrom:
            fieldRef: {fieldPath: 'metadata.labels[''x'']'}
        ports:
        - {containerPort: 8080, protocol: TCP}
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {cpu: 1, nvidia.com/gpu: 2}
        readinessProbe:
          exec:
            command: ['true']
          periodSeconds: 5
      initContainers:
      - {name: sidecar, image: busybox, restartPolicy: Always}
    status:
      phase: Failed
      podIP: 10.0.0.7
      podIPs:
      - {ip: 10.0.0.7}
      hostIP: 192.168.0.1
      conditions:
      - {type: Ready, status: 'False', reason: PodFailed, lastTransitionTime: '2024-01-01T00:01:00Z'}
      containerStatuses:
      - name: main
        ready: false
        restartCount: 0
        image: python:3.11
        imageID: docker.io/library/python@sha256:0
        containerID: containerd://1
        state:
          terminated:
            exitCode: 137
            signal: 9
            reason: Error
            startedAt: '2024-01-01T00:00:02Z'
            finishedAt: '2024-01-01T00:01:00Z'
"""
)

TYPICAL_JOB: dict[str, Any] = yaml.safe_load(
    """
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: js-workers-0
      namespace: default
      labels: {jobset.sigs.k8s.io/job-index: '0'}
    spec:
      parallelism: 2
      completions: 2
      completionMode: Indexed
      backoffLimit: 0
      backoffLimitPerIndex: 1
      maxFailedIndexes: 1
      podReplacementPolicy: Failed
      suspend: false
      managedBy: kubernetes.io/job-controller
      selector:
        matchLabels: {batch.kubernetes.io/controller-uid: u1}
        matchExpressions:
        - key: k
          operator: In
          values: [v]
      podFailurePolicy:
        rules:
        - action: FailJob
          onExitCodes:
            containerName: main
            operator: In
            values: [42]
        - action: Ignore
          onPodConditions:
          - {type: DisruptionTarget, status: 'True'}
      successPolicy:
        rules:
        - {succeededIndexes: '0', succeededCount: 1}
      template:
        metadata:
          labels: {a: b}
        spec:
          restartPolicy: Never
          containers:
          - {name: c, image: i}
    status:
      active: 1
      succeeded: 1
      failed: 0
      ready: 1
      terminating: 0
      completedIndexes: '0'
      startTime: '2024-01-01T00:00:00Z'
      uncountedTerminatedPods:
        succeeded: [p1]
      conditions:
      - {type: SuccessCriteriaMet, status: 'True', reason: SuccessPolicy,
         lastProbeTime: '2024-01-01T00:00:09Z', lastTransitionTime: '2024-01-01T00:00:09Z'}
"""
)

# --- upstream examples -------------------------------------------------------------------------------


def test_upstream_examples_folder_exists_and_has_jobsets() -> None:
    folder = upstream_examples_dir()
    assert folder.is_dir(), f"neither manifests/upstream nor ../shared/upstream-examples exists ({folder})"
    assert len(upstream_jobsets()) >= 10


@pytest.mark.parametrize(("name", "doc"), upstream_jobsets() or [("missing", {})])
def test_every_upstream_example_validates_as_jobset(name: str, doc: dict[str, Any]) -> None:
    assert doc, "no upstream examples found"
    model, errors = validate_model(JobSet, doc)
    assert errors == [], [str(e) for e in errors]
    assert model is not None
    assert dump(model) == doc  # nothing is dropped, renamed or defaulted


# --- error translation -------------------------------------------------------------------------------


def test_unknown_field_deep_in_pod_template_reports_full_path() -> None:
    doc = jobset_with_pod_spec(
        {"containers": [{"name": "a", "image": "x"}, {"name": "b", "imagePullPolicyy": "Always"}]}
    )
    model, errors = validate_model(JobSet, doc)
    path = f"{POD_TEMPLATE_PATH}.containers[1].imagePullPolicyy"
    assert model is None
    assert errors == [FieldError("Unknown", path, f'unknown field "{path}"', "Always")]
    assert str(errors[0]) == f'{path}: unknown field "{path}"'


def test_python_field_names_are_unknown_on_the_wire_but_work_in_python() -> None:
    _, errors = validate_model(Container, {"name": "a", "image_pull_policy": "Always"})
    assert [(e.type, e.field) for e in errors] == [("Unknown", "image_pull_policy")]
    assert dump(Container(name="a", image_pull_policy="Always")) == {"name": "a", "imagePullPolicy": "Always"}


def test_wrong_enum_gives_not_supported_with_supported_values() -> None:
    doc = jobset_with_pod_spec(
        {"restartPolicy": "Sometimes", "containers": [{"name": "a"}]}, completionMode="Odd"
    )
    doc["spec"]["successPolicy"] = {"operator": "Most"}
    doc["spec"]["failurePolicy"] = {"restartStrategy": "Reboot", "rules": [{"action": "Explode"}]}
    _, errors = validate_model(JobSet, doc)
    by_field = {e.field: e for e in errors}
    assert {e.type for e in errors} == {"NotSupported"}
    assert by_field[f"{POD_TEMPLATE_PATH}.restartPolicy"] == FieldError.not_supported(
        f"{POD_TEMPLATE_PATH}.restartPolicy", "Sometimes", ("Always", "OnFailure", "Never")
    )
    assert by_field["spec.replicatedJobs[0].template.spec.completionMode"].supported == (
        "NonIndexed",
        "Indexed",
    )
    assert by_field["spec.successPolicy.operator"].supported == ("All", "Any")
    assert by_field["spec.failurePolicy.restartStrategy"].supported == (
        "Recreate",
        "BlockingRecreate",
        "InPlaceRestart",
    )
    assert by_field["spec.failurePolicy.rules[0].action"].supported == (
        "FailJobSet",
        "RestartJobSet",
        "RestartJobSetAndIgnoreMaxRestarts",
        "RestartJob",
        "RestartJobAndIgnoreMaxRestarts",
    )
    assert str(by_field["spec.successPolicy.operator"]) == (
        'spec.successPolicy.operator: Unsupported value: "Most": supported values: "All", "Any"'
    )


def test_empty_string_is_accepted_for_go_value_enums_but_not_listed_as_supported() -> None:
    assert validate_model(Container, {"name": "a", "imagePullPolicy": ""})[1] == []
    _, errors = validate_model(Container, {"name": "a", "imagePullPolicy": "Sometimes"})
    assert errors[0].supported == ("Always", "Never", "IfNotPresent")
    # a pointer enum (Job completionMode) has no zero value on the wire, so "" is unsupported
    _, errors = validate_model(JobSpec, {"completionMode": "", "template": {}})
    assert [(e.type, e.field) for e in errors] == [("NotSupported", "completionMode")]


def test_wrong_type_gives_invalid_with_path() -> None:
    doc = jobset_with_pod_spec(
        {"containers": [{"name": "a", "ports": [{"containerPort": "80"}], "tty": "yes", "args": "run"}]},
        parallelism=2.0,
    )
    doc["metadata"]["labels"] = {"tier": 1}
    _, errors = validate_model(JobSet, doc)
    got = {(e.type, e.field, e.detail) for e in errors}
    assert got == {
        ("Invalid", "metadata.labels[tier]", "must be a string"),
        ("Invalid", "spec.replicatedJobs[0].template.spec.parallelism", "must be an integer"),
        ("Invalid", f"{POD_TEMPLATE_PATH}.containers[0].ports[0].containerPort", "must be an integer"),
        ("Invalid", f"{POD_TEMPLATE_PATH}.containers[0].tty", "must be a boolean"),
        ("Invalid", f"{POD_TEMPLATE_PATH}.containers[0].args", "must be an array"),
    }
    port_error = next(e for e in errors if e.field.endswith("containerPort"))
    assert port_error.value == "80"
    port_path = f"{POD_TEMPLATE_PATH}.containers[0].ports[0].containerPort"
    assert str(port_error) == f'{port_path}: Invalid value: "80": must be an integer'


def test_int32_range_and_crd_minimum_are_enforced() -> None:
    doc = jobset_with_pod_spec({"containers": [{"name": "a"}]}, backoffLimit=2**31)
    doc["spec"]["replicatedJobs"][0]["replicas"] = -1
    _, errors = validate_model(JobSet, doc)
    assert {e.field: e.type for e in errors} == {
        "spec.replicatedJobs[0].template.spec.backoffLimit": "Invalid",
        "spec.replicatedJobs[0].replicas": "Invalid",
    }
    replicas = next(e for e in errors if e.field.endswith("replicas"))
    assert replicas.detail == "spec.replicatedJobs[0].replicas in body should be greater than or equal to 0"


def test_depends_on_max_items_is_too_many() -> None:
    doc = jobset_with_pod_spec({"containers": [{"name": "a"}]})
    doc["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": f"r{i}", "status": "Ready"} for i in range(6)]
    _, errors = validate_model(JobSet, doc)
    assert len(errors) == 1
    assert str(errors[0]) == "spec.replicatedJobs[0].dependsOn: Too many: 6: must have at most 5 items"


def test_missing_required_field_gives_required() -> None:
    doc = jobset_with_pod_spec({"containers": [{"image": "x"}]})
    doc["spec"]["replicatedJobs"].append({"name": "no-template"})
    doc["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": "x"}]
    _, errors = validate_model(JobSet, doc)
    assert errors == [
        FieldError.required(f"{POD_TEMPLATE_PATH}.containers[0].name"),
        FieldError.required("spec.replicatedJobs[0].dependsOn[0].status"),
        FieldError.required("spec.replicatedJobs[1].template"),
    ]
    assert str(errors[0]) == f"{POD_TEMPLATE_PATH}.containers[0].name: Required value"


def test_any_mapping_is_accepted_as_input() -> None:
    model, errors = validate_model(Container, MappingProxyType({"name": "a"}))
    assert errors == []
    assert model is not None
    assert model.name == "a"


def test_null_for_a_required_field_is_required() -> None:
    _, errors = validate_model(Container, {"name": None})
    assert errors == [FieldError.required("name")]


def test_quantity_shape_is_checked_and_union_errors_are_merged() -> None:
    pod = {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "lots", "memory": [1]}}}]}}
    _, errors = validate_model(Pod, pod)
    limits = "spec.containers[0].resources.limits"
    assert [(e.field, e.value) for e in errors] == [(f"{limits}[cpu]", "lots"), (f"{limits}[memory]", [1])]
    assert errors[0].detail.startswith("quantities must match the regular expression")
    assert errors[1].detail == "must be a string, an integer or a number"


def test_crd_condition_reason_pattern_and_required_fields() -> None:
    status = {
        "restarts": 0,
        "conditions": [
            {
                "type": "Completed",
                "status": "True",
                "reason": "not valid",
                "message": "m",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ],
        "replicatedJobsStatus": [{"name": "workers", "ready": 0, "succeeded": 2, "failed": 0, "active": 0}],
    }
    _, errors = validate_model(jobset_api.JobSetStatus, status, root="status")
    assert [(e.type, e.field) for e in errors] == [
        ("Invalid", "status.conditions[0].reason"),
        ("Required", "status.replicatedJobsStatus[0].suspended"),
    ]


def test_root_prefixes_paths_and_non_objects_are_invalid() -> None:
    _, errors = validate_model(PodStatus, {"phase": "Runing"}, root="status")
    assert errors == [
        FieldError.not_supported(
            "status.phase", "Runing", ("Pending", "Running", "Succeeded", "Failed", "Unknown")
        )
    ]
    _, errors = validate_model(Pod, ["not", "an", "object"])  # type: ignore[arg-type]
    assert errors == [FieldError.invalid("", ["not", "an", "object"], "must be an object")]


# --- round trip and field coverage ------------------------------------------------------------------


@pytest.mark.parametrize(("model", "doc"), [(Pod, TYPICAL_POD), (Job, TYPICAL_JOB)])
def test_round_trip_dump_equals_input(model: type, doc: dict[str, Any]) -> None:
    original = copy.deepcopy(doc)
    validated, errors = validate_model(model, doc)
    assert errors == []
    assert dump(validated) == original
    assert doc == original  # validation does not mutate its input


def test_typed_view_attributes() -> None:
    pod, _ = validate_model(Pod, TYPICAL_POD)
    assert pod is not None
    assert pod.spec.host_pid is False
    assert pod.status.pod_ips[0].ip == "10.0.0.7"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 137
    assert pod.spec.containers[0].resources.requests == {"cpu": "500m", "memory": "1Gi"}
    assert pod.spec.restart_policy == "OnFailure"
    assert pod.spec.dns_policy is None  # no Kubernetes defaulting in the models


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (PodSpec, PODSPEC_FIELDS_1_34),
        (Container, CONTAINER_FIELDS_1_34),
        (PodStatus, PODSTATUS_FIELDS_1_34),
        (JobSpec, JOBSPEC_FIELDS_1_34),
    ],
)
def test_models_accept_every_kubernetes_1_34_field_name(model: type, expected: list[str]) -> None:
    assert [f.alias for f in model.model_fields.values()] == expected


def test_object_meta_accepts_server_set_fields() -> None:
    meta = yaml.safe_load(
        """
        {name: a, generateName: a-, namespace: ns, uid: u, resourceVersion: "1", generation: 2,
         creationTimestamp: "2024-01-01T00:00:00Z", deletionTimestamp: "2024-01-01T00:00:30Z",
         deletionGracePeriodSeconds: 30, finalizers: [f], managedFields: [{manager: kubectl}]}
        """
    )
    model, errors = validate_model(ObjectMeta, meta)
    assert errors == []
    assert dump(model) == meta


# --- quantities ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        ("1.5", Fraction(3, 2)),
        ("32Gi", Fraction(32 * 2**30)),
        ("1G", Fraction(10**9)),
        ("100Mi", Fraction(100 * 2**20)),
        ("1e3", Fraction(1000)),
        ("1E-2", Fraction(1, 100)),
        ("1Ki", Fraction(1024)),
        ("1E", Fraction(10**18)),
        ("100n", Fraction(1, 10**7)),
        (".5", Fraction(1, 2)),
        ("+2k", Fraction(2000)),
        ("-1", Fraction(-1)),
        (4, Fraction(4)),
        (0.25, Fraction(1, 4)),
    ],
)
def test_parse_quantity(text: str | int | float, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "quantities must match the regular expression"),
        ("abc", "quantities must match the regular expression"),
        ("1 ", "quantities must match the regular expression"),
        ("1\n", "quantities must match the regular expression"),
        ("1.2.3", "unable to parse numeric part of quantity"),
        ("1Ki3", "unable to parse quantity's suffix"),
        ("1e", "unable to parse quantity's suffix"),
        (True, "not a boolean"),
        (float("inf"), "finite"),
        (None, "must be a string or a number"),
    ],
)
def test_parse_quantity_rejects_garbage(text: Any, message: str) -> None:
    with pytest.raises(ValueError, match="invalid quantity") as info:
        parse_quantity(text)
    assert message in str(info.value)


_SUFFIX_FACTORS = {
    "": Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18), "Ki": Fraction(2**10), "Mi": Fraction(2**20),
    "Gi": Fraction(2**30), "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}  # fmt: skip


@given(
    whole=st.integers(min_value=0, max_value=10**6),
    millis=st.integers(min_value=0, max_value=999),
    suffix=st.sampled_from(sorted(_SUFFIX_FACTORS)),
)
def test_parse_quantity_is_exact_for_every_suffix(whole: int, millis: int, suffix: str) -> None:
    text = f"{whole}.{millis:03d}{suffix}"
    assert parse_quantity(text) == (whole + Fraction(millis, 1000)) * _SUFFIX_FACTORS[suffix]
    assert parse_quantity(f"-{text}") == -parse_quantity(text)


# --- jobset.api.v1alpha2.jobset_types constants and layering
# -------------------------------------------------------------------


def test_jobset_constants_match_upstream() -> None:
    assert (jobset_api.GROUP, jobset_api.VERSION, jobset_api.KIND, jobset_api.PLURAL) == (
        "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets"
    )  # fmt: skip
    assert jobset_api.JOBSET_NAME_KEY == "jobset.sigs.k8s.io/jobset-name"
    assert jobset_api.RESTARTS_KEY == "jobset.sigs.k8s.io/restart-attempt"
    assert jobset_api.EXCLUSIVE_KEY == "alpha.jobset.sigs.k8s.io/exclusive-topology"
    assert jobset_api.JOBSET_RESTARTING == "RestartingJobSet"
    assert jobset_api.RESTARTING_JOBSET_REASON_FAILURE_POLICY_FORMAT % "rule1" == "FailurePolicy_rule1"


def test_fakecluster_api_never_imports_jobset() -> None:
    for path in (REPO / "fakecluster" / "api").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            )  # fmt: skip
            assert not any(n == "jobset" or n.startswith("jobset.") for n in names), path
