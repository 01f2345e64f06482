"""Ordinals of NonIndexed Job pods: how scenarios address a pod that has no completion index.

An Indexed Job's pod carries its completion index (``batch.kubernetes.io/job-completion-index``), so a
pod reference ``workers[0/2]`` and a pods rule ``podIndex: 2`` name a slot that a replacement pod
inherits. A NonIndexed Job's pods are interchangeable to Kubernetes: nothing on the pod says which one it
is. Scenarios still need to say "fail the second worker", so each such pod gets an **ordinal**: its
position in the order its Job created its pods, 0 for the first, counting replacements (a pod created
to replace a failed one gets the next number; it does not inherit the failed pod's). A Job recreated by
the JobSet (a restart, or a ``RestartJob`` rule) starts again at 0, like its pods' restart-attempt label.

The ordinal is assigned when the pod is first seen, which is always during the watch delivery of its
creation (the trace recorder looks at every ``ADDED`` pod, and the watch fan-out delivers one pod's
``ADDED`` to every watcher before the next pod's), so it is the creation order, the same in every run.
It costs nothing for Indexed pods: they keep their completion index and never reach the counters here.
The ordinal is never written to the cluster (the cluster stays as Kubernetes has it); the trace, pod
references, pods rules and object assertions read it from this one table.
"""

from __future__ import annotations

from dataclasses import replace

from fakecluster.api.objects import Obj
from fakecluster.workload_plugin import Slot, WorkloadPlugin

__all__ = ["PodOrdinals"]


class PodOrdinals:
    """Pod uid -> ordinal within its Job, for the workload's pods that have no completion index."""

    def __init__(self, plugin: WorkloadPlugin) -> None:
        self.plugin = plugin
        self._by_uid: dict[str, int] = {}
        self._next: dict[str, int] = {}

    def slot(self, pod: Obj) -> Slot | None:
        """``plugin.slot_of(pod)`` with the ordinal as ``pod_index`` when the pod has no completion
        index (a NonIndexed Job's pod)."""
        slot = self.plugin.slot_of(pod)
        if slot is None or slot.pod_index is not None:
            return slot
        ordinal = self.ordinal(pod)
        return slot if ordinal is None else replace(slot, pod_index=ordinal)

    def ordinal(self, pod: Obj) -> int | None:
        """The pod's ordinal within the Job that controls it (None: no controlling owner)."""
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        known = self._by_uid.get(uid)
        if known is not None:
            return known
        owner = next((ref.get("uid", "") for ref in meta.get("ownerReferences") or ()
                      if ref.get("controller")), None)
        if owner is None:
            return None
        ordinal = self._next.get(owner, 0)
        self._next[owner] = ordinal + 1
        self._by_uid[uid] = ordinal
        return ordinal

    def known(self, uid: str) -> int | None:
        """The ordinal given to ``uid``, if any (for readers after the run, such as object checks)."""
        return self._by_uid.get(uid)
