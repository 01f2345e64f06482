"""Builders shared by the API server tests (``test_apiserver_*.py``): a server with the built-in kinds,
the garbage collector and a custom ``Widget`` kind, object builders and a watch recorder."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.apiserver.builtin import register_builtin
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer, WatchEvent
from fakecluster.clock import Clock
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


def invalid(fn: Callable[[], Any]) -> ApiError:
    """The 422 ``Invalid`` error ``fn`` raises."""
    err = raises(fn)
    assert (err.code, err.reason) == (422, "Invalid")
    return err


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
