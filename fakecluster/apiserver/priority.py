"""Admission plugin ``Priority`` (``plugin/pkg/admission/priority/admission.go``), pod CREATE only.

It runs before every mutating webhook (``AllOrderedPlugins`` puts ``Priority`` ahead of
``MutatingAdmissionWebhook``), which matters to JobSet: its pod webhook copies ``spec.priority`` into the
``jobset.sigs.k8s.io/priority`` label, so every pod must already carry its resolved priority then.

PriorityClasses (``scheduling.k8s.io/v1``, cluster-scoped) are served with their schema
(:mod:`fakecluster.api.scheduling`) and no semantic validation: a pod naming one gets its ``value`` and
``preemptionPolicy``; without a name, the ``globalDefault`` class with the lowest value
(``getDefaultPriorityClass``), else ``DefaultPriorityWhenNoDefaultClassExists`` (0) and
``PreemptLowerPriority``. The two system classes always resolve to their values; any other missing name
is refused as upstream refuses it. A ``spec.priority`` (or ``preemptionPolicy``) given in the pod that
differs from the computed one is refused with upstream's message.
"""

from __future__ import annotations

from collections.abc import Callable

from fakecluster.api import errors
from fakecluster.api.objects import Obj
from fakecluster.apiserver.resources import ResourceType

__all__ = ["SYSTEM_PRIORITY_CLASSES", "admit_priority", "priority_admission", "priority_class_type"]

Lookup = Callable[[], list[Obj]]

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
"""``scheduling.SystemPriorityClasses``: created by the API server itself, so always present."""
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def _forbidden(pod: Obj, message: str) -> errors.ApiError:
    """``admission.NewForbidden``: ``pods "<name>" is forbidden: <message>``."""
    name = (pod.get("metadata") or {}).get("name", "")
    return errors.Forbidden(f'pods "{name}" is forbidden: {message}')


def priority_class_type() -> ResourceType:
    from fakecluster.api.scheduling import PriorityClass  # the API models load with the first cluster

    return ResourceType("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False,
                        status_subresource=False, generation="none", model=PriorityClass)


def priority_admission(classes: Lookup) -> Callable[[str, Obj, Obj | None], Obj | None]:
    """The plugin over the served PriorityClasses (``classes()`` lists them)."""

    def admit(op: str, pod: Obj, old: Obj | None) -> Obj | None:
        return admit_priority(op, pod, old, classes)

    return admit


def _resolve(pod: Obj, class_name: str, classes: Lookup | None) -> tuple[str, int, str]:
    """``establishPriority``: (class name to store, priority, preemption policy)."""
    served = classes() if classes is not None else []
    if not class_name:
        defaults = [c for c in served if c.get("globalDefault")]
        if defaults:
            chosen = min(defaults, key=lambda c: int(c.get("value") or 0))
            return (chosen["metadata"]["name"], int(chosen.get("value") or 0),
                    chosen.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY)
        return "", 0, DEFAULT_PREEMPTION_POLICY
    if class_name in SYSTEM_PRIORITY_CLASSES:
        return class_name, SYSTEM_PRIORITY_CLASSES[class_name], DEFAULT_PREEMPTION_POLICY
    found = next((c for c in served if c["metadata"]["name"] == class_name), None)
    if found is None:
        raise _forbidden(pod, f"no PriorityClass with name {class_name} was found")
    policy = found.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY
    return class_name, int(found.get("value") or 0), policy


def admit_priority(op: str, pod: Obj, old: Obj | None, classes: Lookup | None = None) -> Obj | None:
    """Resolve ``spec.priority`` from ``spec.priorityClassName``; returns a new object (never mutates)."""
    spec = pod.get("spec")
    if op != "CREATE" or not isinstance(spec, dict):
        return None
    name = spec.get("priorityClassName") or ""
    if not isinstance(name, str):
        return None  # a string upstream's decoder guarantees: the schema check refuses it after this
    class_name, priority, computed_policy = _resolve(pod, name, classes)
    given = spec.get("priority")
    if given is not None and given != priority:
        raise _forbidden(pod, f"the integer value of priority ({given}) must not be provided in pod spec; "
                              f"priority admission controller computed {priority} from the given "
                              "PriorityClass name")
    policy = spec.get("preemptionPolicy")
    if policy is not None and policy != computed_policy:
        raise _forbidden(pod, f"the string value of PreemptionPolicy ({policy}) must not be provided in "
                              f"pod spec; priority admission controller computed {computed_policy} "
                              "from the given PriorityClass name")
    if given is not None and policy is not None and class_name == (spec.get("priorityClassName") or ""):
        return None
    admitted = dict(pod)
    admitted["spec"] = dict(spec, priority=priority, preemptionPolicy=computed_policy)
    if class_name:
        admitted["spec"]["priorityClassName"] = class_name
    return admitted
