"""Pods by node, kept by two controllers (PodGC, the taint-eviction controller) for every bound pod all
run long: nested node -> namespace -> name -> value, so that no ``(namespace, name)`` tuple is kept per
pod; a node's pods read in (namespace, name) order are a sort by namespace, then by name within each."""

from __future__ import annotations

from typing import TypeVar

V = TypeVar("V")

NodePods = dict[str, dict[str, dict[str, V]]]
"""node -> namespace -> pod name -> the controller's value for the pod."""


def discard(index: NodePods[V], node: str, namespace: str, name: str) -> None:
    """Forget the pod; a namespace, then a node, left without pods goes too (a node in an index has
    pods)."""
    namespaces = index.get(node)
    if namespaces is not None:
        pods = namespaces.get(namespace)
        if pods is not None:
            pods.pop(name, None)
            if not pods:
                del namespaces[namespace]
                if not namespaces:
                    del index[node]
