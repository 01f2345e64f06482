"""Reads from the API server (fakecluster/apiserver/server.py): list order and filters, cluster-scoped
kinds, get by uid, count."""

from __future__ import annotations

from apiserver_harness import make_server, widget

# ------------------------------------------------------------------------------------------- reads


def test_list_is_in_key_order_and_filters_by_namespace_and_owner() -> None:
    _, server = make_server()
    owner = server.create(widget("owner"))
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner", "uid": owner["metadata"]["uid"]}
    for ns, name in (("b", "z"), ("a", "y"), ("b", "a"), ("a", "x")):
        body = widget(name)
        body["metadata"]["namespace"] = ns
        if name in ("z", "x"):
            body["metadata"]["ownerReferences"] = [ref]
        server.create(body)
    keys = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in server.list("Widget")]
    assert keys == [("a", "x"), ("a", "y"), ("b", "a"), ("b", "z"), ("default", "owner")]
    assert [o["metadata"]["name"] for o in server.list("Widget", "b")] == ["a", "z"]
    owned = server.list("Widget", owner_uid=owner["metadata"]["uid"])
    assert [o["metadata"]["name"] for o in owned] == ["x", "z"]
    owned_in_b = server.list("Widget", "b", owner_uid=owner["metadata"]["uid"])
    assert [o["metadata"]["name"] for o in owned_in_b] == ["z"]
    assert server.list("Pod", owner_uid=owner["metadata"]["uid"]) == []


def test_cluster_scoped_kinds_ignore_namespaces() -> None:
    _, server = make_server()
    node = server.create({"kind": "Node", "metadata": {"name": "n1", "namespace": "ignored"}})
    assert "namespace" not in node["metadata"]
    assert "generation" not in node["metadata"]
    assert server.get("Node", "anything", "n1") is node
    assert server.list("Node", "whatever") == [node]
    assert server.delete("Node", "", "n1") is None
    assert server.count("Node") == 0


def test_get_by_uid_and_count() -> None:
    _, server = make_server()
    created = server.create(widget("w"))
    assert server.get_by_uid(created["metadata"]["uid"]) is created
    assert server.get_by_uid("missing") is None
    assert server.count("Widget") == 1
    assert server.count("Unregistered") == 0
    assert "Widget" in server.kinds()
