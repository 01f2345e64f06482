"""The ``pods/eviction`` subresource: ``EvictionREST.Create`` (``pkg/registry/core/pod/storage/eviction.go``).

There are no PodDisruptionBudgets in the fake cluster, so every eviction is allowed (upstream's
``len(pdbs) == 0`` branch, and ``canIgnorePDB`` for pending, terminal and terminating pods). Both branches
end in ``addConditionAndDeletePod``: a status write adding ``DisruptionTarget=True`` (reason
``EvictionByEvictionAPI``, message ``Eviction API: evicting``, both verbatim) to the *latest* pod, then
an ordinary DELETE with the eviction's delete options, so a running pod is deleted gracefully with its
own ``terminationGracePeriodSeconds`` unless the caller gives one. Since PodDisruptionConditions (on by
default from 1.26, GA 1.31) the condition is added to terminal pods as well: the old "terminal pods are
deleted directly" path only survives as a comment upstream. Two writes, two watch events, as upstream.
"""

from __future__ import annotations

from typing import Protocol

from fakecluster.api.objects import Obj, disruption_target, update_pod_condition
from fakecluster.clock import Clock

EVICTION_REASON = "EvictionByEvictionAPI"
EVICTION_MESSAGE = "Eviction API: evicting"


class PodStorage(Protocol):
    """The verbs an eviction is made of (the :class:`~fakecluster.apiserver.server.ApiServer`'s)."""

    clock: Clock

    def get(self, kind: str, namespace: str, name: str) -> Obj: ...

    def update(self, obj: Obj, *, subresource: str | None = None, donate: bool = False) -> Obj: ...

    def delete(self, kind: str, namespace: str, name: str, *, propagation_policy: str | None = None,
               grace_period_seconds: int | None = None, preconditions: Obj | None = None) -> Obj | None: ...


def evict_pod(server: PodStorage, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
    """Evict one pod; NotFound if it does not exist. ``grace_period_seconds`` is the eviction's
    ``deleteOptions.gracePeriodSeconds`` (None: the pod's own)."""
    pod = server.get("Pod", namespace, name)
    status = dict(pod.get("status") or {})
    if update_pod_condition(status, disruption_target(EVICTION_REASON, EVICTION_MESSAGE),
                            server.clock.timestamp()):
        update = dict(pod)
        update["status"] = status
        server.update(update, subresource="status")
    server.delete("Pod", namespace, name, grace_period_seconds=grace_period_seconds)
