"""The JobSet pod webhooks: the Python twin of upstream ``pkg/webhooks/pod_webhook.go``.

``mpod.kb.io`` (defaulting, pod CREATE) and ``vpod.kb.io`` (validation, pod CREATE) see every pod, and act
only on pods whose annotations carry ``jobset.sigs.k8s.io/jobset-name``, unless the JobSet uses the
node-selector exclusive-placement strategy (``alpha.jobset.sigs.k8s.io/node-selector``):

- ``Default`` copies ``spec.priority`` (resolved by the Priority admission plugin, which runs first) into
  the label ``jobset.sigs.k8s.io/priority``, so exclusive placement only repels Jobs of equal priority
  (jobset issue 1057); with ``alpha.jobset.sigs.k8s.io/exclusive-topology`` it gives a *leader* pod
  (completion index 0) a required pod affinity to its own Job's pods and a required anti-affinity to
  other Jobs' pods of its priority, both on the topology key and across all namespaces, and a *follower*
  a ``nodeSelector`` for its leader's domain, read from the labels of the leader's node. A follower whose
  leader is missing or not yet scheduled is left alone, for validation to refuse.
- ``ValidateCreate`` refuses a follower without that node selector, or whose leader (found by name,
  ``<jobset>-<replicatedJob>-<jobIndex>-0``, among pods that are neither terminating nor finished and
  are controlled by the same Job) is not scheduled. The Job controller sees the refusal as a failed
  create and retries with its back-off: the "expected, transient error" of the message.

The leader and its Node are read from the API server directly (upstream reads the manager's cache, so
with ``cluster.informerLag`` the fake's webhook sees a leader's binding earlier than a lagging cache would).
A plain ``fmt.Errorf`` from either hook reaches the client as controller-runtime's ``admission.Denied``:
403 Forbidden with the error text as message; an API error (the leader's Node not found) passes through.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Protocol

from fakecluster.api import errors
from fakecluster.api.objects import Obj, controller_of
from jobset.api.v1alpha2 import jobset_types as api
from jobset.util.placement import is_leader_pod

__all__ = [
    "MUTATING_POD_WEBHOOK_NAME",
    "VALIDATING_POD_WEBHOOK_NAME",
    "PodWebhook",
    "gen_leader_pod_name",
    "is_leader_pod",
    "remove_pod_name_suffix",
]

MUTATING_POD_WEBHOOK_NAME = "mpod.kb.io"
"""Path ``/mutate--v1-pod``, verbs: create, failurePolicy: fail."""
VALIDATING_POD_WEBHOOK_NAME = "vpod.kb.io"
"""Path ``/validate--v1-pod``, verbs: create, failurePolicy: fail."""
COMPLETION_INDEX_KEY = "batch.kubernetes.io/job-completion-index"
"""``batchv1.JobCompletionIndexAnnotation``."""


class Reader(Protocol):
    """The reads the webhook makes (upstream: the manager's cached client)."""

    def get(self, kind: str, namespace: str, name: str) -> Obj: ...

    def list(self, kind: str, namespace: str | None = None, selector: Any = None) -> list[Obj]: ...


class WebhookDenied(Exception):
    """A plain Go ``error`` returned by a hook; becomes ``admission.Denied``."""


def remove_pod_name_suffix(name: str) -> str | None:
    """``removePodNameSuffix`` (``pod_controller.go``): drop the random suffix; None below 5 parts."""
    parts = name.split("-")
    if len(parts) < 5:
        return None
    return "-".join(parts[:-1])


def gen_leader_pod_name(pod: Obj) -> str:
    """``genLeaderPodName``: ``<jobset>-<replicatedJob>-<jobIndex>-0`` from the pod's labels."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    parts = []
    for key in (api.JOBSET_NAME_KEY, api.REPLICATED_JOB_NAME_KEY, api.JOB_INDEX_KEY):
        if key not in labels:
            raise WebhookDenied(f"pod missing label: {key}")
        parts.append(labels[key])
    return f"{parts[0]}-{parts[1]}-{parts[2]}-0"


def _placement_annotations(pod: Obj) -> Mapping[str, str] | None:
    """The annotations of a JobSet pod the webhook acts on; None for others."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if api.JOBSET_NAME_KEY not in annotations or api.NODE_SELECTOR_STRATEGY_KEY in annotations:
        return None
    return annotations


class PodWebhook:
    """``podWebhook``: ``Default`` and ``ValidateCreate`` over a :class:`Reader`."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    # ------------------------------------------------------------------ defaulting
    def default(self, pod: Obj) -> Obj | None:
        """``Default``. Returns a new object (the input's nested parts are never changed) or None."""
        annotations = _placement_annotations(pod)
        if annotations is None:
            return None
        spec = pod.get("spec") or {}
        out = dict(pod)
        if spec.get("priority") is not None:
            meta = out["metadata"] = dict(pod["metadata"])
            priority = sys.intern(str(spec["priority"]))  # one string for all the pods of a priority
            meta["labels"] = {**(meta.get("labels") or {}), api.PRIORITY_KEY: priority}
        if api.EXCLUSIVE_KEY in annotations:
            if is_leader_pod(out):
                out["spec"] = _with_exclusive_affinities(out, annotations[api.EXCLUSIVE_KEY])
            else:
                selector = self._follower_node_selector(out, annotations[api.EXCLUSIVE_KEY])
                if selector is not None:
                    out["spec"] = dict(spec, nodeSelector=selector)
        return out

    def _follower_node_selector(self, pod: Obj, topology_key: str) -> dict[str, str] | None:
        """``setNodeSelector``: the follower's nodeSelector plus its leader's domain, or None (no leader
        found, or it is not scheduled yet: left to validation)."""
        try:
            leader = self._leader_pod_for_follower(pod)
        except (WebhookDenied, errors.ApiError):
            return None
        node_name = (leader.get("spec") or {}).get("nodeName")
        if not node_name:
            return None
        node = self.reader.get("Node", "", node_name)  # an ApiError passes through, as upstream's
        value = ((node.get("metadata") or {}).get("labels") or {}).get(topology_key)
        if value is None:
            raise WebhookDenied(f"node does not have topology label: {topology_key}")
        return {**((pod.get("spec") or {}).get("nodeSelector") or {}), topology_key: value}

    # ------------------------------------------------------------------ validation
    def validate_create(self, pod: Obj) -> None:
        """``ValidateCreate``: a follower is admitted only with its node selector and a scheduled leader."""
        annotations = _placement_annotations(pod)
        if annotations is None or api.EXCLUSIVE_KEY not in annotations or is_leader_pod(pod):
            return
        topology_key = annotations[api.EXCLUSIVE_KEY]
        node_selector = (pod.get("spec") or {}).get("nodeSelector")
        if node_selector is None:
            raise WebhookDenied("follower pod node selector not set")
        if topology_key not in node_selector:
            raise WebhookDenied("follower pod node selector for topology domain not found. "
                                f"missing selector: {topology_key}")
        leader = self._leader_pod_for_follower(pod)
        if not (leader.get("spec") or {}).get("nodeName"):
            raise WebhookDenied("leader pod not yet scheduled, not creating follower pod. "
                                "this is an expected, transient error")

    # ------------------------------------------------------------------ leader lookup
    def _leader_pod_for_follower(self, pod: Obj) -> Obj:
        """``leaderPodForFollower``: the one live leader pod, controlled by the follower's Job.

        Upstream lists through a field index of pods by name without suffix (exclusive-placement pods
        only); the same pods are found here by the JobSet labels that make up that name."""
        leader_name = gen_leader_pod_name(pod)
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        selector = {key: labels[key] for key in (api.JOBSET_NAME_KEY, api.REPLICATED_JOB_NAME_KEY,
                                                 api.JOB_INDEX_KEY)}
        candidates = [
            p for p in self.reader.list("Pod", meta.get("namespace", ""), selector)
            if api.EXCLUSIVE_KEY in (p["metadata"].get("annotations") or {})
            and remove_pod_name_suffix(p["metadata"]["name"]) == leader_name
            and p["metadata"].get("deletionTimestamp") is None
            and (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")
        ]
        if len(candidates) != 1:
            raise WebhookDenied(f"expected 1 leader pod ({leader_name}), but got {len(candidates)}. "
                                "this is an expected, transient error")
        leader = candidates[0]
        follower_owner = controller_of(pod)
        if follower_owner is None:
            raise WebhookDenied("follower pod has no owner reference")
        leader_owner = controller_of(leader)
        if leader_owner is None:
            raise WebhookDenied(f'leader pod "{leader["metadata"]["name"]}" has no owner reference')
        if follower_owner.get("uid") != leader_owner.get("uid"):
            raise WebhookDenied(f"follower pod owner UID ({follower_owner.get('uid')}) != "
                                f"leader pod owner UID ({leader_owner.get('uid')})")
        return leader


def _with_exclusive_affinities(pod: Obj, topology_key: str) -> Obj:
    """``setExclusiveAffinities``: the leader's spec with both required terms appended."""
    labels = pod["metadata"].get("labels") or {}
    job_key = labels.get(api.JOB_KEY, "")
    affinity_term = {
        "labelSelector": {"matchExpressions": [{"key": api.JOB_KEY, "operator": "In", "values": [job_key]}]},
        "topologyKey": topology_key,
        "namespaceSelector": {},
    }
    anti_affinity_term = {
        "labelSelector": {"matchExpressions": [
            {"key": api.JOB_KEY, "operator": "Exists"},
            {"key": api.JOB_KEY, "operator": "NotIn", "values": [job_key]},
            {"key": api.PRIORITY_KEY, "operator": "In", "values": [labels.get(api.PRIORITY_KEY, "")]},
        ]},
        "topologyKey": topology_key,
        "namespaceSelector": {},
    }
    spec = dict(pod.get("spec") or {})
    affinity = dict(spec.get("affinity") or {})
    for kind, term in (("podAffinity", affinity_term), ("podAntiAffinity", anti_affinity_term)):
        section = dict(affinity.get(kind) or {})
        required = section.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        section["requiredDuringSchedulingIgnoredDuringExecution"] = [*required, term]
        affinity[kind] = section
    spec["affinity"] = affinity
    return spec
