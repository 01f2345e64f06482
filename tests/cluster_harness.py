"""What the whole-cluster tests (``test_kubelet.py``, ``test_eviction.py``, ``test_podgc.py``,
``test_node_lifecycle.py``) share: running a cluster to an exact virtual time, failing a node there, a
sleep-forever pod, and a log of every stored pod version with the virtual time it was written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster

NS = "default"


def run_to(cluster: Cluster, until: float) -> None:
    """Run every event up to ``until`` and leave the clock there, so an action happens at ``until``."""
    cluster.run(until)
    cluster.clock.advance_to(until)


def fail_node_at(cluster: Cluster, when: float, node: str, *objects: Obj) -> None:
    """Create ``objects``, run to ``when`` and fail ``node`` there (its kubelet stops reporting)."""
    client = cluster.client()
    for obj in objects:
        client.create(obj)
    run_to(cluster, when)
    cluster.node_lifecycle.fail_node(node)


def make_pod(name: str = "p", node: str | None = None, **spec: Any) -> Obj:
    """A pod whose container sleeps forever; ``node`` pins it there with a ``kubernetes.io/hostname``
    nodeSelector."""
    extra: dict[str, Any] = {"nodeSelector": {"kubernetes.io/hostname": node}} if node else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never", **extra, **spec,
                     "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "infinity"]}]}}


class PodWrites:
    """Every stored version of the pods, with the virtual time it was written."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.events: list[tuple[float, str, Obj]] = []
        cluster.client().watch("Pod", self._on)

    def _on(self, event: WatchEvent) -> None:
        self.events.append((self.cluster.clock.now, event.type, event.object))

    def of(self, name: str) -> list[tuple[float, str, Obj]]:
        """The versions of the pod called ``name``, in write order."""
        return [e for e in self.events if e[2]["metadata"]["name"] == name]

    def first(self, name: str, predicate: Callable[[Obj], bool]) -> float | None:
        """When a version of pod ``name`` first satisfied ``predicate``."""
        for when, _etype, pod in self.events:
            if pod["metadata"]["name"] == name and predicate(pod):
                return when
        return None

    def deleted_at(self, name: str) -> float | None:
        return next((w for w, t, p in self.events if t == "DELETED" and p["metadata"]["name"] == name), None)

    def last_status(self) -> Obj:
        """The status of the last pod version written before a deletion (the last ``MODIFIED`` one)."""
        return next(p for _w, t, p in reversed(self.events) if t == "MODIFIED")["status"]
