"""The JobSet pod controller: the Python twin of upstream ``pkg/controllers/pod_controller.go``.

Exclusive placement is enforced at admission (:mod:`jobset.webhooks.pod_webhook`), but a follower's
``nodeSelector`` is fixed when it is created, from where its leader was then. A leader that is replaced
(evicted, failed, deleted) can land in another domain while old followers still point at the old one.
This controller repairs that: it reconciles only leader pods (completion index 0) of JobSets using
``alpha.jobset.sigs.k8s.io/exclusive-topology`` that are scheduled and not being deleted, and if any pod
of the leader's Job (same ``jobset.sigs.k8s.io/job-key`` label and controlling Job uid) has a
``nodeSelector`` for another domain than the one of the leader's node, it deletes every follower of that
Job (Background propagation), each first marked ``DisruptionTarget=True`` with reason
``ExclusivePlacementViolation`` so a ``podFailurePolicy`` can ignore these deletions. The Job controller
then recreates the followers, which the pod webhook pins to the leader's new domain.

Like upstream, a leader whose node is gone (NotFound) leaves its Job alone while the followers agree
with each other; errors other than API errors (a missing label, no controller) end the reconcile.
"""

from __future__ import annotations

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, controller_of
from fakecluster.api.watch import WatchEvent
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock
from fakecluster.runtime import Controller
from jobset.api.v1alpha2 import jobset_types as api
from jobset.util.placement import is_leader_pod

__all__ = ["PodController", "update_pod_condition"]


class LeaderTopologyUnknown(ApiError):
    """``validatePodPlacements``' "leader topology is unknown (node not found)": retried with back-off."""


def _reconciled(pod: Obj) -> bool:
    """The controller's event filter: a scheduled, live leader pod of an exclusive-placement JobSet."""
    meta = pod["metadata"]
    annotations = meta.get("annotations")
    return (bool(annotations) and api.EXCLUSIVE_KEY in annotations and is_leader_pod(pod)
            and bool(pod["spec"].get("nodeName")) and meta.get("deletionTimestamp") is None)


def update_pod_condition(status: Obj, condition: Obj, now: str) -> bool:
    """``updatePodCondition`` (this file's, not Kubernetes'): replace a condition of the same type only
    when its status differs, append a new one only when its status is True; the result says whether
    the status must be written."""
    conditions = list(status.get("conditions") or ())
    new = {**condition, "lastTransitionTime": now}
    for i, old in enumerate(conditions):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"]:
                return False
            conditions[i] = new
            status["conditions"] = conditions
            return True
    if new["status"] != "True":
        return False
    status["conditions"] = [*conditions, new]
    return True


class PodController:
    """``PodReconciler`` on a fakecluster work queue, keyed by (namespace, pod name)."""

    def __init__(self, client: Client, clock: Clock, *, latency: float = 0.0) -> None:
        self.client = client
        self.clock = clock
        self.controller = Controller(clock, "jobset-pod-controller", self.reconcile, latency=latency)
        client.watch("Pod", self._on_pod)
        for pod in client.list("Pod"):
            if _reconciled(pod):
                self.controller.enqueue((pod["metadata"].get("namespace", ""), pod["metadata"]["name"]))

    def stop(self) -> None:
        self.controller.stop()

    def _on_pod(self, event: WatchEvent) -> None:
        """Every pod write in the cluster comes here, nearly all of pods without the exclusive-placement
        annotation: :func:`_reconciled`'s first test is written out before its call, which costs more
        than the test."""
        pod = event.object
        annotations = pod["metadata"].get("annotations")
        if not annotations or api.EXCLUSIVE_KEY not in annotations:
            return
        if event.type != "DELETED" and _reconciled(pod):
            self.controller.enqueue((pod["metadata"].get("namespace", ""), pod["metadata"]["name"]))

    def reconcile(self, key: tuple[str, str]) -> None:
        """``Reconcile``: validate the leader's Job's placements; delete its followers if one is off."""
        namespace, name = key
        try:
            leader = self.client.get("Pod", namespace, name)
        except NotFound:
            return
        if not _reconciled(leader):
            return
        job_key = (leader["metadata"].get("labels") or {}).get(api.JOB_KEY)
        owner = controller_of(leader)
        if job_key is None or owner is None:
            return  # upstream returns an error that no retry can fix
        pods = [p for p in self.client.list("Pod", namespace, labels={api.JOB_KEY: job_key})
                if api.EXCLUSIVE_KEY in (p["metadata"].get("annotations") or {})
                and (controller_of(p) or {}).get("uid") == owner.get("uid")]
        if not self._placements_valid(leader, pods):
            self._delete_follower_pods(pods)

    def _placements_valid(self, leader: Obj, pods: list[Obj]) -> bool:
        """``validatePodPlacements``: every follower's nodeSelector names the leader's domain."""
        topology_key = leader["metadata"]["annotations"][api.EXCLUSIVE_KEY]
        leader_topology = self._leader_pod_topology(leader, topology_key)
        if leader_topology is None:
            return True  # node has no topology label: upstream errors out, nothing is deleted
        for pod in pods:
            if is_leader_pod(pod):
                continue
            selector = pod["spec"].get("nodeSelector") or {}
            if selector.get(topology_key) != leader_topology:
                if leader_topology == "":
                    raise LeaderTopologyUnknown(500, "InternalError",
                                                "leader topology is unknown (node not found)")
                return False
        return True

    def _leader_pod_topology(self, leader: Obj, topology_key: str) -> str | None:
        """``leaderPodTopology``: the domain of the leader's node; "" if the node is not found."""
        try:
            node = self.client.get("Node", "", leader["spec"]["nodeName"])
        except NotFound:
            return ""
        return (node["metadata"].get("labels") or {}).get(topology_key)

    def _delete_follower_pods(self, pods: list[Obj]) -> None:
        """``deleteFollowerPods``: condition first (if not already there), then a Background delete."""
        first_error: ApiError | None = None
        for pod in pods:
            if is_leader_pod(pod):
                continue
            meta = pod["metadata"]
            condition = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                         "reason": api.EXCLUSIVE_PLACEMENT_VIOLATION_REASON,
                         "message": api.EXCLUSIVE_PLACEMENT_VIOLATION_MESSAGE}
            status = dict(pod.get("status") or {})
            try:
                if update_pod_condition(status, condition, self.clock.timestamp()):
                    self.client.update_status({**pod, "status": status})
                self.client.delete("Pod", meta.get("namespace", ""), meta["name"],
                                   propagation_policy="Background")
            except ApiError as err:
                if not isinstance(err, NotFound) and first_error is None:
                    first_error = err
        if first_error is not None:
            raise first_error
