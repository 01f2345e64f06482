"""Admission plugin ``Priority`` (``plugin/pkg/admission/priority/admission.go``), pod CREATE only.

It runs before every mutating webhook (``AllOrderedPlugins`` puts ``Priority`` ahead of
``MutatingAdmissionWebhook``), which matters to JobSet: its pod webhook copies ``spec.priority`` into the
``jobset.sigs.k8s.io/priority`` label, so every pod must already carry its resolved priority then.

The fake serves no PriorityClass objects and has no ``globalDefault`` class, so a pod without
``priorityClassName`` gets ``DefaultPriorityWhenNoDefaultClassExists`` (0); the two built-in system
classes resolve to their values; any other name is refused as upstream refuses a missing class. A
``spec.priority`` (or ``preemptionPolicy``) given in the pod that differs from the computed one is refused
with upstream's message. ``preemptionPolicy`` defaults to ``PreemptLowerPriority``.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from fakecluster.apiserver import errors

__all__ = ["SYSTEM_PRIORITY_CLASSES", "admit_priority"]

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
"""``scheduling.SystemPriorityClasses``: created by the API server itself, so always present."""
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def _forbidden(pod: Obj, message: str) -> errors.ApiError:
    """``admission.NewForbidden``: ``pods "<name>" is forbidden: <message>``."""
    name = (pod.get("metadata") or {}).get("name", "")
    return errors.Forbidden(f'pods "{name}" is forbidden: {message}')


def admit_priority(op: str, pod: Obj, old: Obj | None) -> Obj | None:
    """Resolve ``spec.priority`` from ``spec.priorityClassName``; returns a new object (never mutates)."""
    spec = pod.get("spec")
    if op != "CREATE" or not isinstance(spec, dict):
        return None
    class_name = spec.get("priorityClassName") or ""
    if not class_name:
        priority = 0
    elif class_name in SYSTEM_PRIORITY_CLASSES:
        priority = SYSTEM_PRIORITY_CLASSES[class_name]
    else:
        raise _forbidden(pod, f"no PriorityClass with name {class_name} was found")
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden(pod, f"the integer value of priority ({given}) must not be provided in pod spec; "
                              f"priority admission controller computed {priority} from the given "
                              "PriorityClass name")
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy != DEFAULT_PREEMPTION_POLICY:
        raise _forbidden(pod, f"the string value of PreemptionPolicy ({policy}) must not be provided in "
                              f"pod spec; priority admission controller computed {DEFAULT_PREEMPTION_POLICY} "
                              "from the given PriorityClass name")
    if given is not None and policy is not None:
        return None
    admitted = dict(pod)
    admitted["spec"] = dict(spec, priority=priority, preemptionPolicy=DEFAULT_PREEMPTION_POLICY)
    return admitted
