"""Scenario actions: the interventions a scenario makes at virtual times or when a milestone happens.

Each verb does what a person or a system around the cluster would do: ``suspend``/``resume`` and
``patch`` are JSON merge patches (``patchStatus`` on the status subresource), ``deletePod``/``delete``
are DELETEs (Background, as ``kubectl``),
``evictPod`` goes through ``pods/eviction``, ``failPod`` makes the pod's running container exit,
``failNode`` stops a node's kubelet, ``restartController`` crashes the workload's controller. An action
that cannot be applied becomes a one-line error naming the action and the virtual time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster
from fakecluster.scenario.format import Action, ObjectTarget
from fakecluster.scenario.milestones import MilestoneWatch, PodRef
from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import GroupShape, WorkloadPlugin


class ActionPlayer:
    """Fires a scenario's actions on one cluster and keeps the errors of those that could not apply."""

    def __init__(
        self,
        cluster: Cluster,
        plugin: WorkloadPlugin,
        controller: Any,
        recorder: TraceRecorder,
        *,
        path: Path,
        shapes: dict[str, dict[str, GroupShape]],
        namespaces: dict[str, str],
        ordinals: PodOrdinals | None = None,
        generated: dict[str, str] | None = None,
    ) -> None:
        self.cluster = cluster
        self.client = cluster.client("scenario")
        self.plugin = plugin
        self.controller = controller
        self.recorder = recorder
        self.path = path
        self.shapes = shapes
        self.namespaces = namespaces
        self.ordinals = ordinals if ordinals is not None else recorder.ordinals
        self.generated: dict[str, str] = {} if generated is None else generated
        """``metadata.generateName`` of a workload manifest -> the name the API server gave it: a
        JobSet given by ``generateName`` is addressed by that prefix (``patch: {jobset: train-}``)."""
        self.errors: list[str] = []
        self._pending_when: list[tuple[int, Action, MilestoneWatch]] = []

    def schedule(self, actions: Sequence[Action]) -> None:
        """``at`` actions go on the clock now; ``when`` actions wait for their milestone in the trace."""
        for i, action in enumerate(actions):
            if action.at is not None:
                self.cluster.clock.call_at(action.at, self._fire, i, action)
            else:
                assert action.when is not None
                self._pending_when.append((i, action, MilestoneWatch(action.when)))
        if self._pending_when:
            self.recorder.listeners.append(self._watch_milestones)

    def _watch_milestones(self, event: TraceEvent) -> None:
        for entry in list(self._pending_when):
            i, action, watch = entry
            if not watch.milestone.matches(event):
                continue
            hit = watch.advance(self.recorder.trace, self.shapes)  # reads only the events since last time
            if hit is not None:
                self._pending_when.remove(entry)
                self.cluster.clock.call_at(hit.time + (action.after or 0.0), self._fire, i, action)

    def _fire(self, index: int, action: Action) -> None:
        where = f"actions[{index}] {action.verb} at {self.cluster.clock.now:g}s"
        expected = action.rejected.substrings() if action.rejected is not None else None
        try:
            self._apply(action)
        except ApiError as err:
            missing = [text for text in expected or () if text not in err.message]
            if expected is None:
                self.errors.append(f"{self.path}: {where}: {err.message}")
            elif missing:
                self.errors.append(f"{self.path}: {where}: refused as expected, but the message "
                                   f"{err.message!r} does not contain {', '.join(map(repr, missing))}")
            return
        except (LookupError, ValueError) as err:
            self.errors.append(f"{self.path}: {where}: {err.args[0]}")
            return
        if expected is not None:
            self.errors.append(f"{self.path}: {where}: expected the API server to refuse it (a message "
                               f"containing {', '.join(map(repr, expected))}), but it was accepted")

    def apply_now(self, action: Action) -> None:
        """Apply an action at once, letting its error propagate (the Python API's ``act``)."""
        self._apply(action)

    def _only_jobset(self, name: str | None) -> str:
        if name is not None:
            return self.generated.get(name, name)
        names = list(self.shapes)
        if len(names) != 1:
            raise LookupError("several JobSets: name the one to act on")
        return names[0]

    def _apply(self, action: Action) -> None:
        verb = action.verb
        if verb in ("suspend", "resume"):
            name = self._only_jobset(action.suspend if verb == "suspend" else action.resume)
            self.client.patch(
                self.plugin.kind,
                self.namespaces.get(name, "default"),
                name,
                {"spec": {"suspend": verb == "suspend"}},
            )
        elif verb == "failPod":
            assert action.fail_pod is not None
            pod = self._find_pod(action.fail_pod.pod)
            statuses = (pod.get("status") or {}).get("containerStatuses") or ()
            if not any("running" in (s.get("state") or {}) for s in statuses):
                phase = (pod.get("status") or {}).get("phase", "Pending")
                raise LookupError(
                    f"pod {pod['metadata']['name']} in slot {action.fail_pod.pod} has no running "
                    f"container to fail (phase {phase})"
                )
            self.cluster.kubelet.fail_container(
                pod["metadata"]["namespace"], pod["metadata"]["name"], action.fail_pod.exit_code
            )
        elif verb == "deletePod":
            assert action.delete_pod is not None
            pod = self._find_pod(action.delete_pod.pod)
            self.client.delete("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
        elif verb in ("patch", "patchStatus"):
            target = action.patch if verb == "patch" else action.patch_status
            assert target is not None
            name = self._name(target)
            self.client.patch(
                self._kind(target.kind), target.namespace or self._namespace_for(name), name, target.merge,
                subresource="status" if verb == "patchStatus" else None,
            )
        elif verb == "delete":
            assert action.delete is not None
            name = self._name(action.delete)
            self.client.delete(
                self._kind(action.delete.kind),
                action.delete.namespace or self._namespace_for(name),
                name,
                propagation_policy=action.delete.propagation_policy,
            )
        elif verb == "create":
            assert action.create is not None
            manifest = dict(action.create)
            if manifest.get("kind") == "JobSet":
                manifest["kind"] = self.plugin.kind
            self.client.create(manifest)
        elif verb == "recoverNode":
            assert action.recover_node is not None
            self.cluster.node_lifecycle.recover_node(action.recover_node.node)
        elif verb == "deleteNode":
            assert action.delete_node is not None
            self.client.delete("Node", "", action.delete_node.node)
        elif verb == "restartController":
            # The only valid value is the workload's controller (the format refuses any other name).
            self.controller = self.plugin.restart_controller(self.cluster, self.controller)
        elif verb == "evictPod":
            assert action.evict_pod is not None
            pod = self._find_pod(action.evict_pod.pod)
            self.client.evict(pod["metadata"]["namespace"], pod["metadata"]["name"])
        elif verb == "failNode":
            assert action.fail_node is not None
            self.cluster.node_lifecycle.fail_node(action.fail_node.node)  # unknown node: NotFound

    def _name(self, target: ObjectTarget) -> str:
        """The object's name; a JobSet may be named by the ``generateName`` it was created with."""
        if target.kind == "JobSet":
            return self.generated.get(target.name, target.name)
        return target.name

    def _kind(self, kind: str) -> str:
        return self.plugin.kind if kind == "JobSet" else kind

    def _namespace_for(self, name: str) -> str:
        if name in self.namespaces:
            return self.namespaces[name]
        namespaces = sorted(set(self.namespaces.values()))
        return namespaces[0] if namespaces else "default"

    def _find_pod(self, ref: PodRef) -> Obj:
        """The current attempt's live pod in the referenced slot (a replacement counts)."""
        jobset = self._only_jobset(ref.jobset)
        owner = self.cluster.server.list(self.plugin.kind, self.namespaces.get(jobset, "default"))
        workload = next((o for o in owner if o["metadata"]["name"] == jobset), None)
        if workload is None:
            raise LookupError(f"JobSet {jobset!r} does not exist")
        attempt = self.plugin.current_attempt(workload)
        candidates = []
        for pod in self.cluster.server.list("Pod", self.namespaces.get(jobset, "default")):
            slot = self.ordinals.slot(pod)
            if (
                slot is not None
                and slot.owner == jobset
                and slot.group == ref.replicated_job
                and slot.job_index == ref.job_index
                and slot.pod_index == ref.pod_index
                and slot.attempt == attempt
            ):
                candidates.append(pod)
        live = [
            p
            for p in candidates
            if p["metadata"].get("deletionTimestamp") is None
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        if not live:
            raise LookupError(f"no running pod in slot {ref} (attempt {attempt})")
        return max(live, key=lambda p: int(p["metadata"]["resourceVersion"]))
