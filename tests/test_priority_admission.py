"""The Priority admission plugin (``fakecluster/apiserver/priority.py``, after
``plugin/pkg/admission/priority/admission.go``): resolved before the webhooks, PriorityClasses served."""

from __future__ import annotations

import random

import pytest

from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.server import ApiServer
from fakecluster.clock import Clock


def server() -> ApiServer:
    srv = ApiServer(Clock(), random.Random(0))
    register_builtin(srv)
    return srv


def pod(name: str, **spec: object) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def priority_class(name: str, value: int, **fields: object) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def test_no_class_gives_zero_and_preempt_lower_priority() -> None:
    spec = server().create(pod("p"))["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in spec


def test_named_global_default_and_system_classes() -> None:
    srv = server()
    srv.create(priority_class("high", 1000, preemptionPolicy="Never"))
    srv.create(priority_class("batch-default", 10, globalDefault=True))
    high = srv.create(pod("a", priorityClassName="high"))["spec"]
    assert (high["priority"], high["preemptionPolicy"]) == (1000, "Never")
    default = srv.create(pod("b"))["spec"]
    assert (default["priority"], default["priorityClassName"]) == (10, "batch-default")
    assert srv.create(pod("c", priorityClassName="system-node-critical"))["spec"]["priority"] == 2000001000


def test_missing_class_and_mismatching_priority_are_forbidden() -> None:
    srv = server()
    with pytest.raises(ApiError) as err:
        srv.create(pod("p", priorityClassName="nope"))
    assert (err.value.code, err.value.message) == (403, 'pods "p" is forbidden: no PriorityClass with '
                                                        'name nope '
                                                        "was found")
    with pytest.raises(ApiError) as err:
        srv.create(pod("q", priority=5))
    assert err.value.message == ('pods "q" is forbidden: the integer value of priority (5) must not be '
                                 'provided '
                                 "in pod spec; priority admission controller computed 0 from the given "
                                 "PriorityClass name")
