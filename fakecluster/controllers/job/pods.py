"""What the Job controller reads from and writes into Pods.

Predicates over wire-form pods (``controller.FilterActivePods``, ``podutil.IsPodReady``; ``isPodFailed`` is
part of :func:`fakecluster.controllers.job.pod_view.pod_class`), the pods it creates from a Job's template
(``GetPodFromTemplate`` plus the Indexed mutations of ``pkg/controller/job/indexed_job_utils.go``), the order
in which surplus pods are deleted (``controller.ActivePods``, ``activePodsForRemoval``), the finish time the
pod-failure back-off is measured from (``getFinishedTime`` in ``backoff_utils.go``) and ``podFailurePolicy``
matching (``pod_failure_policy.go``).

Every function here only reads the pods it is given: they are the API server's shared snapshots.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from fakecluster.api.batch_labels import JOB_COMPLETION_INDEX_ANNOTATION, JOB_TRACKING_FINALIZER
from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, owner_reference
from fakecluster.client.internal import InternalClient, ValidatedSpec
from fakecluster.clock import parse_rfc3339

COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
UNKNOWN_INDEX = -1
MAX_GENERATED_NAME_LENGTH = 58
"""``names.MaxGeneratedNameLength``: 63 minus the 5 random characters the API server appends."""

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def completion_index(pod: Obj) -> int:
    """``getCompletionIndex``: the annotation as a non-negative int, else :data:`UNKNOWN_INDEX`."""
    annotations = pod["metadata"].get("annotations")
    if not annotations:
        return UNKNOWN_INDEX
    value = annotations.get(JOB_COMPLETION_INDEX_ANNOTATION)
    return int(value) if isinstance(value, str) and value.isdigit() else UNKNOWN_INDEX


def has_tracking_finalizer(pod: Obj) -> bool:
    return JOB_TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ())


def is_pod_ready(pod: Obj) -> bool:
    """``podutil.IsPodReady``: the ``Ready`` condition is ``True``."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def is_controlled_by(pod: Obj, uid: str) -> bool:
    """The pod's controller ownerReference points at ``uid`` (the owner index also lists plain refs)."""
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid") == uid
    return False


def restart_count(pod: Obj) -> int:
    """Σ restartCount over init and regular containers (``pastBackoffLimitOnFailure``)."""
    status = pod.get("status") or {}
    count = 0
    for group in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(group) or ():
            count += cs.get("restartCount") or 0
    return count


def finished_time(pod: Obj) -> float:
    """``getFinishedTime``: when a terminated pod finished, first match wins:

    1. the latest ``state.terminated.finishedAt``, if every container (and restartable init container)
       terminated;
    2. the ``Ready=False`` condition's ``lastTransitionTime``;
    3. ``deletionTimestamp - deletionGracePeriodSeconds``;
    4. ``creationTimestamp``.
    """
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    sidecars = {c.get("name") for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"}
    statuses = list(status.get("containerStatuses") or ())
    statuses += [cs for cs in status.get("initContainerStatuses") or () if cs.get("name") in sidecars]
    latest: float | None = None
    for cs in statuses:
        finished_at = ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if not finished_at:
            latest = None
            break
        at = parse_rfc3339(finished_at)
        latest = at if latest is None else max(latest, at)
    if latest is not None:
        return latest
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "False" and cond.get("lastTransitionTime"):
            return parse_rfc3339(cond["lastTransitionTime"])
    meta = pod["metadata"]
    if meta.get("deletionTimestamp"):
        return parse_rfc3339(meta["deletionTimestamp"]) - (meta.get("deletionGracePeriodSeconds") or 0)
    return parse_rfc3339(meta["creationTimestamp"]) if meta.get("creationTimestamp") else 0.0


def _removal_key(pod: Obj) -> tuple[int, int, int, float, int, float]:
    """``controller.ActivePods.Less``: unassigned < assigned, Pending < Unknown < Running, not ready <
    ready, ready for less time < more time, more restarts < fewer, newer < older."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    ready_since = -math.inf
    ready = False
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "True":
            ready = True
            since = cond.get("lastTransitionTime")
            ready_since = parse_rfc3339(since) if since else math.inf
    restarts = max((cs.get("restartCount") or 0 for cs in status.get("containerStatuses") or ()), default=0)
    created = pod["metadata"].get("creationTimestamp")
    return (
        1 if spec.get("nodeName") else 0,
        _PHASE_ORDINAL.get(status.get("phase") or "", 0),
        1 if ready else 0,
        -ready_since if ready else 0.0,
        -restarts,
        -parse_rfc3339(created) if created else -math.inf,
    )


def pods_for_removal(
    active: Sequence[Obj], active_indexes: Sequence[int] | None, completions: int, at_least: int
) -> list[Obj]:
    """``activePodsForRemoval``: for Indexed Jobs (``active_indexes`` given, parallel to ``active``)
    first every pod without a valid index or with an index ``>= completions`` and all but the best pod
    of each repeated index; then, if that is not enough, the pods earliest in :func:`_removal_key`
    order. The common case, nothing to remove, costs one pass and no sorting."""
    if at_least == 0 and (active_indexes is None or _distinct_in_range(active_indexes, completions)):
        return []
    remove: list[Obj] = []
    keep: list[Obj] = list(active)
    if active_indexes is not None:
        keep = []
        by_index: dict[int, list[Obj]] = {}
        for pod, ix in zip(active, active_indexes, strict=True):
            if ix == UNKNOWN_INDEX or ix >= completions:
                remove.append(pod)
            else:
                by_index.setdefault(ix, []).append(pod)
        for ix in sorted(by_index):
            group = by_index[ix]
            if len(group) > 1:
                group = sorted(group, key=_removal_key)
                remove.extend(group[:-1])
            keep.append(group[-1])
    if len(remove) < at_least:
        keep.sort(key=_removal_key)
        remove.extend(keep[: at_least - len(remove)])
    return remove


def _distinct_in_range(completion_indexes: Sequence[int], completions: int) -> bool:
    if not completion_indexes:
        return True
    return (len(set(completion_indexes)) == len(completion_indexes)
            and min(completion_indexes) >= 0 and max(completion_indexes) < completions)


class PodFailurePolicyMatch(NamedTuple):
    """What ``matchPodFailurePolicy`` returns (``pkg/controller/job/pod_failure_policy.go``)."""

    message: str | None
    """The Job's failure message when a ``FailJob`` rule matched."""
    counts: bool
    """Whether the failure counts against ``backoffLimit`` (False only for ``Ignore``)."""
    action: str | None
    """The matched rule's action, None if no rule matched."""


_NO_MATCH = PodFailurePolicyMatch(None, True, None)


def match_pod_failure_policy(policy: Obj | None, pod: Obj) -> PodFailurePolicyMatch:
    """``matchPodFailurePolicy``: FailJob message, whether the failure counts, matched action.

    Rules are tried in order and the first match wins; ``onExitCodes`` looks at terminated containers
    with a non-zero exit code (regular containers first, then init containers); ``onPodConditions`` at
    pod conditions whose type and status equal a pattern. ``FailIndex`` counts the failure (its effect,
    failing the index, is :func:`fakecluster.controllers.job.backoff_per_index.is_index_failed`'s); unknown
    actions fall through to the next rule.
    """
    if not policy:
        return _NO_MATCH
    status = pod.get("status") or {}
    meta = pod["metadata"]
    pod_ref = f"{meta.get('namespace')}/{meta['name']}"
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        on_exit = rule.get("onExitCodes")
        if on_exit is not None:
            matched = _match_exit_codes(status, on_exit)
            if matched is None:
                continue
            if action == "FailJob":
                name, code = matched
                message = (f"Container {name} for pod {pod_ref} failed with exit code {code} "
                           f"matching FailJob rule at index {index}")
                return PodFailurePolicyMatch(message, True, action)
        elif rule.get("onPodConditions") is not None:
            cond_type = _match_pod_conditions(status, rule["onPodConditions"])
            if cond_type is None:
                continue
            if action == "FailJob":
                message = f"Pod {pod_ref} has condition {cond_type} matching FailJob rule at index {index}"
                return PodFailurePolicyMatch(message, True, action)
        else:
            continue
        if action == "Ignore":
            return PodFailurePolicyMatch(None, False, action)
        if action in ("Count", "FailIndex"):
            return PodFailurePolicyMatch(None, True, action)
    return _NO_MATCH


def _match_exit_codes(status: Obj, requirement: Obj) -> tuple[str, int] | None:
    container = requirement.get("containerName")
    operator = requirement.get("operator")
    values = requirement.get("values") or ()
    for group in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(group) or ():
            terminated = (cs.get("state") or {}).get("terminated")
            if not terminated or (container is not None and container != cs.get("name")):
                continue
            code = terminated.get("exitCode") or 0
            if code == 0:
                continue
            if (operator == "In" and code in values) or (operator == "NotIn" and code not in values):
                return cs.get("name", ""), code
    return None


def _match_pod_conditions(status: Obj, patterns: Sequence[Obj]) -> str | None:
    for cond in status.get("conditions") or ():
        for pattern in patterns:
            wanted = pattern.get("status") or "True"
            if cond.get("type") == pattern.get("type") and cond.get("status") == wanted:
                return cond["type"]
    return None


def _with_completion_index_env(container: Obj) -> Obj:
    """``addCompletionIndexEnvVariable``: appends ``JOB_COMPLETION_INDEX`` unless already declared."""
    env = container.get("env") or []
    if any(var.get("name") == COMPLETION_INDEX_ENV for var in env):
        return container
    field_path = f"metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"
    index_var = {"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}
    return {**container, "env": [*env, index_var]}


def generate_name_with_index(job_name: str, index: int) -> str:
    """``podGenerateNameWithIndex``: ``<job>-<index>-``, truncated to 58 characters keeping ``-<index>-``."""
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[: MAX_GENERATED_NAME_LENGTH - len(suffix)] + suffix
    return prefix


class PodFactory:
    """Builds the pods of one Job; the template-derived parts are computed once per sync.

    The pods are validated against a template, not each in full: :meth:`validated_template` has the
    API server validate, once per factory, this factory's spec (the Job's stored template spec, plus,
    Indexed, the ``JOB_COMPLETION_INDEX`` env) and the metadata fields all its pods share (template
    labels and annotations, finalizers, the owner reference), and keep private copies; the pods are
    built from those copies and created with the template
    (:meth:`~fakecluster.client.internal.InternalClient.create_donated`), so the server checks each pod
    in full except for the fields that are the template's very values: a pod's name, its own labels
    and annotations (Indexed), ``hostname``, and anything an admission hook changed are validated per
    pod. Should the template itself be invalid, the pods are created without one and each create
    reports the error a real server gives.

    Each pod's top level, metadata, labels and annotations (Indexed) and spec (Indexed) are its own;
    the rest is shared with the validated template or with this factory, which never changes them after
    ``__init__``. Nothing changes a stored object either, so the pods are handed over (``create_donated``)
    instead of being deep-copied by the server.
    """

    def __init__(self, job: Obj, indexed: bool,
                 index_annotations: Callable[[int], dict[str, str]] | None = None) -> None:
        meta = job["metadata"]
        template = job["spec"].get("template") or {}
        template_meta = template.get("metadata") or {}
        self._job_name: str = meta["name"]
        self._namespace: str = meta.get("namespace", "")
        self._labels: dict[str, str] = template_meta.get("labels") or {}
        self._annotations: dict[str, str] = template_meta.get("annotations") or {}
        finalizers = list(template_meta.get("finalizers") or ())
        if JOB_TRACKING_FINALIZER not in finalizers:
            finalizers.append(JOB_TRACKING_FINALIZER)
        self._finalizers = finalizers
        self._owner_references = [owner_reference(job)]
        spec: Obj = template.get("spec") or {}
        if indexed:
            spec = dict(spec)
            for group in ("initContainers", "containers"):
                if spec.get(group):
                    spec[group] = [_with_completion_index_env(c) for c in spec[group]]
        self._spec = spec
        self._template: ValidatedSpec | None = None
        self._index_annotations = index_annotations
        """Extra annotations per completion index (``backoffLimitPerIndex``'s failure counts)."""

    def validated_template(self, client: InternalClient) -> ValidatedSpec | None:
        """The server-validated copy of this factory's pod spec, which the pods are built from from now
        on; None (and pods built as before) if the server finds the spec invalid."""
        if self._template is None:
            shared = {"labels": self._labels, "annotations": self._annotations,
                      "finalizers": self._finalizers, "ownerReferences": self._owner_references}
            try:
                self._template = client.validated_spec("Pod", self._spec, shared)
            except ApiError:
                return None
            self._spec = self._template.spec
            validated = self._template.metadata
            self._labels, self._annotations = validated["labels"], validated["annotations"]
            self._finalizers, self._owner_references = validated["finalizers"], validated["ownerReferences"]
        return self._template

    def pod(self, index: int = UNKNOWN_INDEX) -> Obj:
        """The pod for completion ``index`` (:data:`UNKNOWN_INDEX` for NonIndexed Jobs)."""
        labels, annotations, spec = self._labels, self._annotations, self._spec
        if index == UNKNOWN_INDEX:
            generate_name = f"{self._job_name}-"
        else:
            value = sys.intern(str(index))  # one string per index for all the Jobs' pods, not one per pod
            labels = {**labels, JOB_COMPLETION_INDEX_ANNOTATION: value}
            annotations = {**annotations, JOB_COMPLETION_INDEX_ANNOTATION: value}
            if self._index_annotations is not None:
                annotations.update(self._index_annotations(index))
            spec = {**spec, "hostname": f"{self._job_name}-{index}"}
            generate_name = generate_name_with_index(self._job_name, index)
        metadata: Obj = {
            "generateName": generate_name,
            "namespace": self._namespace,
            "labels": labels,
            "finalizers": self._finalizers,
            "ownerReferences": self._owner_references,
        }
        if annotations:
            metadata["annotations"] = annotations
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
