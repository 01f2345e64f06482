"""The API server under arbitrary JSON: every answer is a success or an ``ApiError`` (never a Python
exception), and a write that fails leaves the store exactly as it was (no partial writes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.hostile_campaign import value_paths
from fakecluster.api.errors import ApiError
from fakecluster.apiserver.metadata_checks import MAX_GRACE_PERIOD_SECONDS
from fakecluster.apiserver.server import ApiServer
from fakecluster.cluster import Cluster
from jobset.workload import plugin

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.sampled_from(["", "default", "p", "js", "UPPER", "a b", "abc.def", "x" * 64, "x" * 300, "\x1b[2J"]),
)  # fmt: skip
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
META_KEYS = ["name", "generateName", "namespace", "labels", "annotations", "finalizers", "ownerReferences",
             "resourceVersion", "uid", "deletionTimestamp", "generation"]  # fmt: skip
METADATA = st.one_of(
    JSON,
    st.dictionaries(st.sampled_from(META_KEYS), JSON, max_size=5),
    st.fixed_dictionaries(
        {"name": st.sampled_from(["p", "js", "svc", "new", "abc.def", "UPPER", "x" * 64])},
        optional={"namespace": JSON, "labels": JSON, "ownerReferences": JSON, "finalizers": JSON},
    ),
)
KINDS = ["Pod", "Job", "Service", "JobSet", "Node", "Event", "Widget", 5, None]
BODY = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS)},
    optional={"apiVersion": st.one_of(st.sampled_from(["v1", "batch/v1", "jobset.x-k8s.io/v1alpha2"]), JSON),
              "metadata": METADATA, "spec": JSON, "status": JSON},
)  # fmt: skip
_CONTAINER = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "a"}},
    "spec": {"restartPolicy": "Never", "containers": [_CONTAINER]},
}
VALID = [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new", "namespace": "default"},
     "spec": {"nodeName": "node", **_TEMPLATE["spec"]}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc2"},
     "spec": {"clusterIP": "None", "selector": {"app": "a"}, "ports": [{"port": 80}]}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
     "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed", "template": _TEMPLATE}},
    {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js2"},
     "spec": {"replicatedJobs": [
         {"name": "w", "replicas": 2, "template": {"spec": {"template": _TEMPLATE}}}]}},
]  # fmt: skip


@st.composite
def mutated_valid(draw: st.DrawFn) -> Any:
    """A valid object with one value replaced: reaches the strategies and webhooks behind the schema."""
    body = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    path = draw(st.sampled_from(value_paths(body)[1:]))
    node = body
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = draw(JSON)
    return body


NAMES = st.one_of(st.sampled_from(["p", "js", "svc", "missing"]), JSON)
GRACE = st.one_of(st.none(), st.sampled_from([0, 1, 30, MAX_GRACE_PERIOD_SECONDS + 1, 10**18, 10**30]), JSON)


def _cluster() -> Cluster:
    cluster = Cluster(0)
    plugin.install(cluster, {})
    client = cluster.client("admin")
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                   "labels": {"app": "a"}}, "spec": {"nodeName": "node", "containers": [
                       {"name": "c", "image": "busybox"}]}})  # fmt: skip
    client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
                   "spec": {"clusterIP": "None", "selector": {"app": "a"}}})  # fmt: skip
    return cluster


def snapshot(server: ApiServer) -> str:
    """Everything a write could change: objects, indexes and the resourceVersion counter."""
    return json.dumps(
        {
            "objects": {kind: {repr(k): obj for k, obj in sorted(store.items())}
                        for kind, store in server._objects.items()},
            "uids": sorted(server._storage.by_uid),
            "owners": {uid: sorted(map(repr, keys))
                       for uid, keys in sorted(server._storage.by_owner.items())},
            "rv": server._writes._rv,
        },
        sort_keys=True,
        default=repr,
    )  # fmt: skip


def call(server: ApiServer, op: str, args: tuple[Any, ...]) -> Callable[[], Any]:
    kind, namespace, name, body, grace = args
    return {
        "create": lambda: server.create(body),
        "update": lambda: server.update(body),
        "update_status": lambda: server.update(body, subresource="status"),
        "patch": lambda: server.patch(kind, namespace, name, body),
        "delete": lambda: server.delete(
            kind, namespace, name, grace_period_seconds=grace, preconditions=body
        ),
        "evict": lambda: server.evict(namespace, name, grace_period_seconds=grace),
    }[op]


CALLS = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "update_status", "patch", "delete", "evict"]),
        st.tuples(st.sampled_from(["Pod", "Service", "JobSet", "Job"]), st.sampled_from(["default", 5]),
                  NAMES, st.one_of(BODY, mutated_valid()), GRACE),
    ),
    min_size=1,
    max_size=6,
)  # fmt: skip


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CALLS)
def test_every_answer_is_an_api_error_and_failed_writes_change_nothing(calls: list[Any]) -> None:
    cluster = _cluster()
    server = cluster.server
    for op, args in calls:
        before = snapshot(server)
        try:
            call(server, op, args)()
        except ApiError as err:
            assert err.code in (400, 404, 409, 422), err
            assert snapshot(server) == before, f"{op} failed with {err.code} but changed the store"
        for kind in server.kinds():
            for obj in server.list(kind):
                assert isinstance(obj["metadata"]["name"], str)
                assert isinstance(obj["metadata"].get("namespace", ""), str)


def test_a_non_string_namespace_is_a_bad_request_and_listing_still_works() -> None:
    server = _cluster().server
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s2", "namespace": 5}, "spec": {}}
    with pytest.raises(ApiError) as info:
        server.create(body)
    assert info.value.code == 400
    assert info.value.message == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.namespace of type string"
    )
    assert [s["metadata"]["name"] for s in server.list("Service")] == ["svc"]


@pytest.mark.parametrize(
    ("kind", "metadata", "detail"),
    [
        ("Service", {"name": "abc.def"}, "a DNS-1035 label must consist of lower case alphanumeric"),
        ("Service", {"name": "UPPER"}, "a DNS-1035 label must consist"),
        (
            "Pod",
            {"name": "p2", "namespace": "UPPER"},
            'metadata.namespace: Invalid value: "UPPER": a lowercase RFC 1123 label',
        ),
        ("Pod", {"name": "p2", "namespace": "a b"}, "a lowercase RFC 1123 label"),
        ("Pod", {"name": "p2", "namespace": "x" * 300}, "must be no more than 63 characters"),
        ("Pod", {"name": "p2", "labels": {"a": "x" * 64}}, "metadata.labels: Invalid value: "),
        ("Pod", {"name": "p2", "labels": {"-bad": "x"}}, "name part must consist of alphanumeric"),
        ("Pod", {"name": "Bad\n"}, "a lowercase RFC 1123 subdomain"),
    ],
)
def test_names_are_validated_per_kind(kind: str, metadata: dict[str, Any], detail: str) -> None:
    server = _cluster().server
    spec = {"containers": [{"name": "c", "image": "busybox"}]} if kind == "Pod" else {}
    before = snapshot(server)
    with pytest.raises(ApiError) as info:
        server.create({"apiVersion": "v1", "kind": kind, "metadata": metadata, "spec": spec})
    assert info.value.code == 422 and detail in info.value.message
    assert snapshot(server) == before


def test_a_job_name_too_long_for_its_pods_labels_is_invalid() -> None:
    server = _cluster().server
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    job: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j" * 64, "namespace": "default"},
        "spec": {"template": template},
    }  # fmt: skip
    with pytest.raises(ApiError) as info:
        server.create(job)
    assert info.value.code == 422
    assert 'spec.template.labels: Invalid value: "' + "j" * 64 + '": must be no more than 63' in (
        info.value.message
    )
    job["metadata"]["name"] = "j" * 63
    assert server.create(job)["metadata"]["name"] == "j" * 63


@pytest.mark.parametrize("verb", ["delete", "evict"])
def test_a_huge_grace_period_is_refused_before_anything_is_written(verb: str) -> None:
    server = _cluster().server
    before = snapshot(server)
    with pytest.raises(ApiError) as info:
        if verb == "delete":
            server.delete("Pod", "default", "p", grace_period_seconds=10**18)
        else:
            server.evict("default", "p", grace_period_seconds=10**18)
    assert info.value.code == 400 and "must be no more than 9223372036" in info.value.message
    assert snapshot(server) == before  # no DisruptionTarget left behind by a refused eviction


def test_a_pods_own_huge_grace_period_is_capped_not_a_crash() -> None:
    cluster = _cluster()
    client = cluster.client("admin")
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "slow", "namespace": "default"},
                   "spec": {"nodeName": "node", "terminationGracePeriodSeconds": 10**18,
                            "containers": [{"name": "c", "image": "busybox"}]}})  # fmt: skip
    deleted = cluster.server.delete("Pod", "default", "slow")
    assert deleted is not None
    assert deleted["metadata"]["deletionGracePeriodSeconds"] == MAX_GRACE_PERIOD_SECONDS


def test_junk_owner_references_in_a_patch_are_a_bad_request() -> None:
    server = _cluster().server
    before = snapshot(server)
    for refs in (5, [5], [{"uid": 7}], [{"controller": "yes"}]):
        with pytest.raises(ApiError) as info:
            server.patch("Pod", "default", "p", {"metadata": {"ownerReferences": refs}})
        assert info.value.code == 400
    assert snapshot(server) == before
