"""Exclusive-placement helpers shared by the pod webhook and the pod controller
(``pkg/util/placement/placement.go``), so that the controller need not import the webhooks."""

from __future__ import annotations

from fakecluster.api.batch_labels import JOB_COMPLETION_INDEX_ANNOTATION
from fakecluster.api.objects import Obj

__all__ = ["is_leader_pod"]


def is_leader_pod(pod: Obj) -> bool:
    """``placement.IsLeaderPod``: completion index annotation ``"0"``."""
    return ((pod.get("metadata") or {}).get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION) == "0"
