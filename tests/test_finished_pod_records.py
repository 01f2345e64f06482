"""What the components keep of a pod that has finished, for the rest of the run (until it is deleted):
as little as they need, in forms whose behaviour is the plain one's. The pod indexes keyed by node,
namespace and name answer in the ``(namespace, name)`` order a flat index of key tuples does; a
released pod's scheduler record is shared; a stopped pod's network record lets go of its name."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.controllers.node_pods import discard
from fakecluster.controllers.podgc import PodGC, PodIndex, PodKey, _sorted
from fakecluster.controllers.taint_eviction import PodNodeIndex
from fakecluster.kubelet.pod_timings import PodTimings


class _NoPods:
    """The client a :class:`PodNodeIndex` starts from: no pods yet, and a watch fed by hand."""

    def list(self, kind: str) -> list[Obj]:
        return []

    def watch(self, kind: str, handler: Any) -> None:
        pass


def _pod(namespace: str, name: str, node: str) -> Obj:
    return {"metadata": {"namespace": namespace, "name": name, "uid": f"{namespace}/{name}"},
            "spec": {"nodeName": node}}


_OPS = st.lists(st.tuples(st.booleans(), st.sampled_from(["", "a", "b", "kube-system"]),
                          st.sampled_from(["p", "q", "p-1", "z"]), st.sampled_from(["n1", "n2"])),
                max_size=40)
"""(add?, namespace, name, node): pods bound and deleted in some order."""


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_the_nested_pod_indexes_answer_as_a_flat_index_of_keys(ops: list[tuple[bool, str, str, str]]) -> None:
    """The taint-eviction controller's index and PodGC's, against a flat ``node -> {(namespace, name):
    uid}`` reference: the same pods, in ``(namespace, name)`` order; a node without pods is absent."""
    index = PodNodeIndex(_NoPods())  # type: ignore[arg-type]
    gc_index: PodIndex = {}
    flat: dict[str, dict[PodKey, str]] = {}
    for add, namespace, name, node in ops:
        pod = _pod(namespace, name, node)
        index._on_pod(WatchEvent("ADDED" if add else "DELETED", "Pod", pod, None))
        if add:
            flat.setdefault(node, {})[(namespace, name)] = pod["metadata"]["uid"]
            gc_index.setdefault(node, {}).setdefault(namespace, {})[name] = pod["metadata"]["uid"]
        else:
            flat.get(node, {}).pop((namespace, name), None)
            if not flat.get(node, True):
                del flat[node]
            discard(gc_index, node, namespace, name)
        for n in ("n1", "n2"):
            expected = sorted(flat.get(n, {}).items())
            assert index.pods_on(n) == [key for key, _ in expected]
            assert (_sorted(gc_index[n]) if n in gc_index else []) == expected
        assert sorted(gc_index) == sorted(flat)
        assert sorted(index._by_node) == sorted(flat)


def _run(pods: int, until: float) -> Cluster:
    """``pods`` pods of one Job (one request) and a lone pod with another on one node, run to ``until``:
    at 3 s all run, at 100 s all have finished."""
    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")],
                                                   behaviour=lambda _pod: PodTimings(pull=1)))
    client = cluster.client()
    client.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
        "spec": {"parallelism": pods, "completions": pods, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"],
                            "resources": {"requests": {"cpu": "100m"}}}]}}},
    })
    client.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lone", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "hostname": "lone", "subdomain": "s",
                 "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"],
                                 "resources": {"requests": {"cpu": "200m"}}}]},
    })
    cluster.run(until)
    return cluster


def test_released_pods_share_one_record_per_request_and_free_their_node() -> None:
    running = _run(3, 3)
    node = running.scheduler._nodes["node"]
    assert node.pod_count == 4 and node.requested["cpu"] == 500
    records = list(running.scheduler._assigned.values())
    assert not any(r.released for r in records) and len({id(r) for r in records}) == 4

    cluster = _run(3, 100)
    scheduler = cluster.scheduler
    node = scheduler._nodes["node"]
    assert node.pod_count == 0 and node.requested.get("cpu", 0) == 0
    pods = cluster.client().list("Pod", "default")
    records = {p["metadata"]["name"]: scheduler._assigned[p["metadata"]["uid"]] for p in pods}
    assert all(r.released for r in records.values())
    lone = records.pop("lone")
    job = list(records.values())
    assert all(r is job[0] for r in job) and lone is not job[0]
    assert job[0].request.resources == {"cpu": 100} and lone.request.resources == {"cpu": 200}
    # A later event of a released pod neither assumes it again nor releases it twice.
    pod = next(p for p in pods if p["metadata"]["name"] != "lone")
    scheduler._on_pod(WatchEvent("MODIFIED", "Pod", pod, None))
    assert node.pod_count == 0 and scheduler._assigned[pod["metadata"]["uid"]] is job[0]
    cluster.client().delete("Pod", "default", pod["metadata"]["name"])
    cluster.run(200)
    assert pod["metadata"]["uid"] not in scheduler._assigned and node.pod_count == 0


def test_a_stopped_pods_network_record_keeps_no_name() -> None:
    running = _run(1, 3)
    lone = running.client().get("Pod", "default", "lone")
    assert running.network._by_uid[lone["metadata"]["uid"]].fqdn == "lone.s.default.svc.cluster.local"
    cluster = _run(1, 100)
    lone = cluster.client().get("Pod", "default", "lone")
    net = cluster.network._by_uid[lone["metadata"]["uid"]]
    assert net.stopped and net.fqdn is None


def test_podgc_still_collects_the_pods_of_a_deleted_node_in_key_order() -> None:
    """PodGC's ``gcOrphaned`` over the nested index: every pod of a node that went away is failed and
    deleted, in ``(namespace, name)`` order."""
    cluster = _run(3, 3)
    gc: PodGC = cluster.pod_gc
    deleted: list[tuple[str, str]] = []

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def delete(self, kind: str, namespace: str, name: str, **kwargs: Any) -> Any:
            deleted.append((namespace, name))
            return client.delete(kind, namespace, name, **kwargs)

    client = gc._client
    gc._client = Recording()  # type: ignore[assignment]
    cluster.client().delete("Node", "", "node")
    cluster.run(200)
    assert sorted(deleted) == deleted and len(deleted) == 4


_STEPS = st.lists(st.one_of(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 30.0]),
                            st.sampled_from(["compact", "events"])), max_size=30)
"""A run of a trace log: rows at these times, with a compaction or the events built in between."""


@settings(max_examples=300, deadline=None)
@given(_STEPS)
def test_a_logs_order_check_reads_each_chunks_ends_only_and_answers_as_a_full_pass(
        steps: list[float | str]) -> None:
    """:meth:`TraceLog.in_order` over chunks checked in order when compacted (their ends only) answers
    as the pass over every time does; the events read back have the rows' times."""
    from fakecluster.scenario.trace import TraceLog

    log = TraceLog()
    times: list[float] = []
    for step in steps:
        if step == "compact":
            log.compact()
        elif step == "events":
            log.events()
        else:
            assert isinstance(step, float)
            log.add_row((step, "Pod", "default", f"p{len(times)}", "Ready", ("js", "w", 0, 0, 0), ""))
            times.append(step)
        assert log.in_order() == all(a <= b for a, b in pairwise(times))
    events = log.events()
    assert [e.time for e in events] == times and [e.seq for e in events] == list(range(len(times)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1e9), min_size=7, max_size=7))
def test_a_pods_jitters_read_back_by_name_as_drawn(values: list[float]) -> None:
    """The seven doubles a running pod keeps its jitters in read back, by phase name, as the floats
    drawn, in :data:`KUBELET_JITTER_PHASES` order (``exit`` is ``exit_after``)."""
    from fakecluster.kubelet.pod_timings import KUBELET_JITTER_PHASES, Jitters

    jitters = Jitters.of(values)
    names = [("exit_after" if p == "exit" else p) for p in KUBELET_JITTER_PHASES]
    assert [getattr(jitters, name) for name in names] == values
    assert all(type(getattr(jitters, name)) is float for name in names)


_PART = st.text(alphabet=st.sampled_from("0123456789-:TZab.z"), max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_PART, _PART, _PART), max_size=12))
def test_endpoint_keys_as_tuples_order_as_the_joined_strings(keys: list[tuple[str, str, str]]) -> None:
    """An endpoint's sort key, ``(creationTimestamp, name, uid)``, orders as the NUL-joined string it
    replaced (none of the three holds a NUL), and its first two as that string's head before its last
    NUL (the tie order of new endpoints)."""
    joined = {key: "\0".join(key) for key in keys}
    assert sorted(keys) == sorted(keys, key=joined.__getitem__)
    assert sorted(keys, key=lambda k: k[:2]) == sorted(keys, key=lambda k: joined[k].rpartition("\0")[0])
