"""Pod-template and Job validation (``fakecluster/api/pod_validation.py``, ``job_validation.py``), after the
tables of upstream ``pkg/apis/core/validation/validation_test.go`` (``TestValidateContainers``,
``TestValidatePorts``, ``TestValidateEnv``, ``TestValidateResourceRequirements``, ``TestValidateProbe``,
``TestValidateVolumeMounts``) and ``pkg/apis/batch/validation/validation_test.go`` (``TestValidateJob``):
the rendered ``field.Error`` strings, paths included, through the API server's Invalid answer."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from fakecluster.api.objects import Obj
from fakecluster.api.pod_validation import DNS1123_LABEL_MESSAGE, validate_pod_spec
from fakecluster.apiserver.errors import ApiError
from tests.test_apiserver import job, make_server

P = "spec.template.spec"


def container(**fields: Any) -> Obj:
    return {"name": "main", "image": "busybox", **fields}


def spec(*containers: Obj, **fields: Any) -> Obj:
    return {"restartPolicy": "Never", "containers": list(containers) or [container()], **fields}


def messages(pod_spec: Obj) -> list[str]:
    return [str(e) for e in validate_pod_spec(pod_spec, "spec")]


def test_a_valid_spec_has_no_errors() -> None:
    assert (
        messages(
            spec(
                container(
                    ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    env=[
                        {"name": "A", "value": "1"},
                        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    ],
                    resources={"requests": {"cpu": "1"}, "limits": {"cpu": "2"}},
                    readinessProbe={"tcpSocket": {"port": "http"}, "periodSeconds": 5},
                    volumeMounts=[{"name": "data", "mountPath": "/data"}],
                ),
                volumes=[{"name": "data", "emptyDir": {}}],
            )
        )
        == []
    )


@pytest.mark.parametrize(
    ("change", "want"),
    [
        (lambda s: s.update(containers=[]), ["spec.containers: Required value"]),
        (
            lambda s: s["containers"][0].update(name="Bad_Name"),
            [f'spec.containers[0].name: Invalid value: "Bad_Name": {DNS1123_LABEL_MESSAGE}'],
        ),
        (lambda s: s["containers"][0].update(name=""), ["spec.containers[0].name: Required value"]),
        (lambda s: s["containers"][0].pop("image"), ["spec.containers[0].image: Required value"]),
        (lambda s: s["containers"].append(container()), ['spec.containers[1].name: Duplicate value: "main"']),
        (
            lambda s: s.update(initContainers=[container()]),
            ['spec.containers[0].name: Duplicate value: "main"'],
        ),
        (
            lambda s: s["containers"][0].update(restartPolicy="Always"),
            ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"],
        ),
        (
            lambda s: s.update(initContainers=[container(name="init", restartPolicy="Never")]),
            ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
        ),
        (
            lambda s: s.update(restartPolicy="Sometimes"),
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
                '"OnFailure", "Never"'
            ],
        ),
    ],
)
def test_containers_and_restart_policy(change: Callable[[Obj], Any], want: list[str]) -> None:
    pod_spec = spec()
    change(pod_spec)
    assert messages(pod_spec) == want


@pytest.mark.parametrize(
    ("ports", "want"),
    [
        ([{"containerPort": 0}], ["spec.containers[0].ports[0].containerPort: Required value"]),
        (
            [{"containerPort": 70000}],
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and "
                "65535, inclusive"
            ],
        ),
        (
            [{"containerPort": 80, "hostPort": 65536}],
            [
                "spec.containers[0].ports[0].hostPort: Invalid value: 65536: must be between 1 and "
                "65535, inclusive"
            ],
        ),
        (
            [{"name": "a-very-long-port-name", "containerPort": 80}],
            [
                'spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no '
                'more than 15 characters'
            ],
        ),
        (
            [{"name": "1234", "containerPort": 80}],
            [
                'spec.containers[0].ports[0].name: Invalid value: "1234": must contain at least one '
                'letter (a-z)'
            ],
        ),
        (
            [{"name": "web", "containerPort": 80}, {"name": "web", "containerPort": 81}],
            ['spec.containers[0].ports[1].name: Duplicate value: "web"'],
        ),
    ],
)
def test_ports(ports: list[Obj], want: list[str]) -> None:
    assert messages(spec(container(ports=ports))) == want


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ([{"value": "x"}], ["spec.containers[0].env[0].name: Required value"]),
        (
            [{"name": "A=B"}],
            [
                'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable '
                "name must consist only of printable ASCII characters other than '='"
            ],
        ),
        (
            [{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            [
                'spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when '
                '`value` is not empty'
            ],
        ),
        (
            [
                {
                    "name": "A",
                    "valueFrom": {"fieldRef": {"fieldPath": "a"}, "secretKeyRef": {"name": "s", "key": "k"}},
                }
            ],
            [
                'spec.containers[0].env[0].valueFrom: Invalid value: "": may not have more than one '
                'field specified at a '
                "time"
            ],
        ),
    ],
)
def test_env(env: list[Obj], want: list[str]) -> None:
    assert messages(spec(container(env=env))) == want


def test_resources() -> None:
    assert messages(spec(container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}))) == [
        'spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to '
        'cpu limit of 1'
    ]
    assert messages(spec(container(resources={"requests": {"memory": "-1Gi"}}))) == [
        'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or '
        'equal to 0'
    ]


@pytest.mark.parametrize(
    ("probe_name", "probe", "want"),
    [
        (
            "readinessProbe",
            {"periodSeconds": 5},
            ["spec.containers[0].readinessProbe: Required value: must specify a handler type"],
        ),
        (
            "readinessProbe",
            {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}},
            [
                "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 "
                "handler type"
            ],
        ),
        (
            "livenessProbe",
            {"exec": {"command": ["true"]}, "successThreshold": 2},
            ["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"],
        ),
        (
            "startupProbe",
            {"httpGet": {"port": 0}, "initialDelaySeconds": -1},
            [
                "spec.containers[0].startupProbe.initialDelaySeconds: Invalid value: -1: must be greater "
                "than or equal to 0",
                "spec.containers[0].startupProbe.httpGet.port: Invalid value: 0: must be between 1 and "
                "65535, inclusive",
            ],
        ),
        ("readinessProbe", {"exec": {"command": ["true"]}, "successThreshold": 3}, []),
    ],
)
def test_probes(probe_name: str, probe: Obj, want: list[str]) -> None:
    assert messages(spec(container(**{probe_name: probe}))) == want


def test_volumes_and_mounts() -> None:
    pod_spec = spec(
        container(volumeMounts=[{"name": "data", "mountPath": "/d"}, {"name": "cache", "mountPath": "/d"}]),
        volumes=[{"name": "data", "emptyDir": {}}, {"name": "data", "emptyDir": {}}],
    )
    assert messages(pod_spec) == [
        'spec.volumes[1].name: Duplicate value: "data"',
        'spec.containers[0].volumeMounts[1].name: Not found: "cache"',
        'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique',
    ]


# ------------------------------------------------------------------------------------ Job
def job_error(**spec_fields: Any) -> str:
    _, server = make_server()
    body = job("j", **{k: v for k, v in spec_fields.items() if k != "template_spec"})
    if "template_spec" in spec_fields:
        body["spec"]["template"]["spec"].update(spec_fields["template_spec"])
    with pytest.raises(ApiError) as err:
        server.create(copy.deepcopy(body))
    assert err.value.reason == "Invalid"
    return err.value.message.removeprefix('Job.batch "j" is invalid: ')


def test_job_container_without_image_is_invalid_through_the_api_server() -> None:
    assert (
        job_error(template_spec={"containers": [{"name": "main"}]})
        == f"{P}.containers[0].image: Required value"
    )


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        (
            {"maxFailedIndexes": 1, "completionMode": "Indexed", "completions": 2},
            "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        ),
        (
            {"maxFailedIndexes": 3, "backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2},
            "spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
        ),
        (
            {
                "maxFailedIndexes": 1,
                "backoffLimitPerIndex": 1,
                "completionMode": "NonIndexed",
                "completions": 2,
            },
            "[spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode, "
            "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode]",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}}]
                }
            },
            'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the '
            'backoffLimitPerIndex to be set',
        ),
        (
            {"podFailurePolicy": {"rules": [{"action": "Ignore"}]}},
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and "
            "OnPodConditions is required",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "Ignore",
                            "onExitCodes": {"operator": "In", "values": [1]},
                            "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
                        }
                    ]
                }
            },
            "spec.podFailurePolicy.rules[0]: Invalid value: specifying both OnExitCodes and "
            "OnPodConditions is not "
            "supported",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [{"action": "Count", "onExitCodes": {"operator": "In", "values": [0, 3, 2, 2]}}]
                }
            },
            "[spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for "
            "the In operator, "
            "spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 2, "
            "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0,3,2,2]: must be ordered]",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "FailJob",
                            "onExitCodes": {"containerName": "nope", "operator": "NotIn", "values": [0]},
                        }
                    ]
                }
            },
            'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "nope": must be '
            'one of the container '
            "or initContainer names in the pod template",
        ),
        (
            {
                "podFailurePolicy": {
                    "rules": [
                        {
                            "action": "Ignore",
                            "onPodConditions": [{"type": "Invalid Condition Type", "status": "True"}],
                        }
                    ]
                }
            },
            'spec.podFailurePolicy.rules[0].onPodConditions[0].type: Invalid value: "Invalid Condition '
            'Type": name part '
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric "
            "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            {"podFailurePolicy": {"rules": []}, "podReplacementPolicy": "TerminatingOrFailed"},
            'spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"',
        ),
    ],
)
def test_job_spec_rules(fields: Obj, want: str) -> None:
    assert job_error(**fields) == want
