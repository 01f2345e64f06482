"""Strategies for the built-in kinds the fake cluster serves: Pod, Job, Service, Node, Event.

Each reproduces the observable part of its upstream registry strategy and scheme defaults:
``pkg/registry/core/pod/strategy.go``, ``pkg/apis/core/v1/defaults.go``,
``pkg/registry/batch/job/strategy.go``, ``pkg/apis/batch/v1/defaults.go`` and
``pkg/apis/batch/validation/validation.go``.
"""

from __future__ import annotations

import importlib
from typing import Any

from fakecluster.api.batch_labels import (
    CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    LEGACY_CONTROLLER_UID_LABEL,
    LEGACY_JOB_NAME_LABEL,
)
from fakecluster.api.errors import FieldError
from fakecluster.api.job_validation import validate_job_spec
from fakecluster.api.objects import Obj
from fakecluster.api.pod_validation import validate_pod_spec
from fakecluster.apiserver.priority import priority_admission, priority_class_type
from fakecluster.apiserver.resources import ResourceType, Strategy
from fakecluster.apiserver.server import ApiServer

MAX_INT32 = 2**31 - 1


def default_pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec / SetDefaults_Container: the defaults a JobSet author never writes.

    Sets fields of ``spec`` itself; a container that lacks a default is replaced by a defaulted copy
    (in a new list), so containers shared with other objects are never changed. A list whose containers
    all have their defaults already is kept: a Job's pods then share their template's (nobody changes a
    stored object), not one list per pod."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    for group in ("initContainers", "containers"):
        containers = spec.get(group)
        if containers:
            defaulted = [_default_container(c) for c in containers]
            if type(containers) is not list or any(
                    d is not c for d, c in zip(defaulted, containers, strict=True)):
                spec[group] = defaulted


def _default_container(container: Obj) -> Obj:
    if "terminationMessagePath" in container and "terminationMessagePolicy" in container \
            and "imagePullPolicy" in container:
        return container
    container = dict(container)
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if "imagePullPolicy" not in container:
        image = container.get("image") or ""
        tag = image.rsplit("/", 1)[-1]
        latest = ":" not in tag or tag.endswith(":latest")
        container["imagePullPolicy"] = "Always" if latest and "@" not in image else "IfNotPresent"
    return container


def _qos_class(spec: Obj) -> str:
    """v1qos.GetPodQOS, reduced to cpu/memory requests and limits of regular containers."""
    requests_seen = limits_seen = False
    guaranteed = True
    for container in spec.get("containers") or ():
        resources = container.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        for res in ("cpu", "memory"):
            if res in requests:
                requests_seen = True
            if res in limits:
                limits_seen = True
            if res not in limits or (res in requests and str(requests[res]) != str(limits[res])):
                guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


class PodStrategy(Strategy):
    """Pods are registered with ``stored_valid``: every stored pod spec and metadata pass the schema.
    A spec is stored by a create (schema-validated, or vouched for by the Job controller, then
    :func:`default_pod_spec` and ``priority: 0`` fill in absent fields with values the schema accepts:
    enum members, int32/int64 numbers, strings, ``{}``), by an update (schema-validated, or the stored
    spec kept as is), or by ``pods/binding`` (the stored spec plus a string ``nodeName``).
    ``tests/test_apiserver.py`` holds a defaulted spec to the schema. Metadata is validated (or vouched
    for) the same way, and the server only adds fields of the types ``ObjectMeta`` declares.

    ``prepare_for_create`` copies on write (a donated pod shares its spec's parts with a stored Job)."""

    copies_on_write = True

    def prepare_for_create(self, obj: Obj, now: str) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec = obj["spec"] = dict(spec)
        default_pod_spec(spec)
        spec.setdefault("priority", 0)
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(spec)}

    def validate_create(self, obj: Obj, from_template: bool) -> list[FieldError]:
        """A pod from a Job's template (``from_template``) gets the cheap checks of :meth:`validate`: its
        spec passed the pod spec rules with the Job. Any other pod (a scenario's ``objects``, a
        ``create`` action, a session's create) gets them all (``ValidatePodSpec``: quantities not
        negative, names, ports, probes, mounts, restart policy; ``fakecluster/api/pod_validation.py``)."""
        if from_template:
            return self.validate(obj)
        return validate_pod_spec(obj.get("spec") or {}, "spec")

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = []
        if not spec.get("containers"):
            errs.append(FieldError.required("spec.containers"))
        names: set[str] = set()
        for group in ("initContainers", "containers"):
            for i, container in enumerate(spec.get(group) or ()):
                name = container.get("name")
                if name in names:
                    errs.append(FieldError("Duplicate", f"spec.{group}[{i}].name", value=name))
                names.add(name)
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Pod spec is immutable except image, activeDeadlineSeconds, tolerations (additions)."""
        if new.get("spec") is old.get("spec"):
            return []  # a metadata-only write (a finalizer removed) shares the stored spec
        mutable = ("containers", "initContainers", "activeDeadlineSeconds", "tolerations", "schedulingGates")
        new_spec = {k: v for k, v in (new.get("spec") or {}).items() if k not in mutable}
        old_spec = {k: v for k, v in (old.get("spec") or {}).items() if k not in mutable}
        if new_spec != old_spec:
            return [
                FieldError.forbidden(
                    "spec",
                    "pod updates may not change fields other than `spec.containers[*].image`,"
                    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                    "`spec.tolerations` (only additions to existing tolerations),"
                    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                    "previously negative)",
                )
            ]
        return []

    def graceful_delete_seconds(self, obj: Obj, requested: int | None) -> int:
        """CheckGracefulDelete: unscheduled or terminal pods go at once; else the pod's grace period."""
        spec = obj.get("spec") or {}
        phase = (obj.get("status") or {}).get("phase")
        if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            grace = requested
        else:
            declared = spec.get("terminationGracePeriodSeconds")
            grace = 30 if declared is None else int(declared)
        return 1 if grace < 0 else grace  # a negative grace period becomes 1


NOT_READY_TAINT_KEY = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT_KEY = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300
"""``--default-not-ready-toleration-seconds`` / ``--default-unreachable-toleration-seconds``."""


def default_toleration_seconds(op: str, pod: Obj, old: Obj | None) -> Obj | None:
    """Admission plugin ``DefaultTolerationSeconds`` (``plugin/pkg/admission/defaulttolerationseconds``),
    on pod CREATE and UPDATE (not subresources): a pod that does not already tolerate
    ``node.kubernetes.io/not-ready:NoExecute`` (resp. ``unreachable``) gets an ``Exists`` toleration for it
    with ``tolerationSeconds: 300``. A toleration tolerates it when its key is that key or empty and its
    effect is ``NoExecute`` or empty, whatever its operator and seconds, exactly as upstream checks.
    This is what lets the taint-eviction controller wait 300 s before deleting pods of a lost node.

    An update that keeps the stored spec object (a metadata patch) has nothing to add: every stored pod
    spec passed this plugin, or is one that did plus a ``nodeName`` (``pods/binding``)."""
    spec = pod.get("spec")
    if old is not None and spec is old.get("spec"):
        return None
    if not isinstance(spec, dict):
        return None
    tolerations = spec.get("tolerations") or []
    if not isinstance(tolerations, list):
        return None
    missing = [toleration for key, toleration in _DEFAULT_TOLERATIONS.items()
               if not any(isinstance(t, dict) and (t.get("key") or "") in (key, "")
                          and (t.get("effect") or "") in ("NoExecute", "") for t in tolerations)]
    if not missing:
        return None
    admitted = dict(pod)  # an UPDATE's object may share subtrees with the stored one: never mutate it
    added = _BOTH_DEFAULT_TOLERATIONS if not tolerations and len(missing) == 2 else [*tolerations, *missing]
    admitted["spec"] = dict(spec, tolerations=added)
    return admitted


_DEFAULT_TOLERATIONS: dict[str, Obj] = {
    key: {"key": key, "operator": "Exists", "effect": "NoExecute",
          "tolerationSeconds": DEFAULT_TOLERATION_SECONDS}
    for key in (NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY)
}
"""The tolerations :func:`default_toleration_seconds` adds, one object each for every pod: nobody changes a
stored object (copy-on-write; the snapshot guard checks it in tests), so they are shared, some 180 bytes
apiece per pod saved."""
_BOTH_DEFAULT_TOLERATIONS: list[Obj] = list(_DEFAULT_TOLERATIONS.values())
"""The ``tolerations`` of a pod that had none (nearly every pod): one list for all of them, as above."""


def _job_spec_defaults(spec: Obj) -> None:
    """The top-level fields of SetDefaults_Job (pkg/apis/batch/v1/defaults.go)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = (
            "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
        )
    spec.setdefault("manualSelector", False)


def _job_defaults(spec: Obj) -> None:
    """SetDefaults_Job (pkg/apis/batch/v1/defaults.go)."""
    _job_spec_defaults(spec)
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or ():
        for pattern in rule.get("onPodConditions") or ():
            pattern.setdefault("status", "True")
    default_pod_spec(_object_at(_object_at(spec, "template"), "spec"))  # a null template or spec: {}


_TEMPLATE_MUTABLE_WHEN_SUSPENDED = ("nodeSelector", "tolerations", "schedulingGates")


def _object_at(parent: Any, key: str) -> dict[str, Any]:
    """``parent[key]`` as a dict to default into: made (and set) when absent or null; a scratch dict when
    ``parent`` or the value is of another type (the schema check refuses it later)."""
    if not isinstance(parent, dict):
        return {}
    value = parent.get(key)
    if value is None:
        value = parent[key] = {}
    return value if isinstance(value, dict) else {}


class JobStrategy(Strategy):
    def prepare_for_create(self, obj: Obj, now: str) -> None:
        meta = obj["metadata"]
        spec = obj.setdefault("spec", {})
        # A null decodes to the zero value (an empty struct or map); any other wrong type is left to the
        # schema check, which refuses it after this.
        template = _object_at(spec, "template")
        template_meta = _object_at(template, "metadata")
        if not meta.get("labels") and template_meta.get("labels"):
            meta["labels"] = dict(template_meta["labels"])
        _job_defaults(spec)
        if not spec.get("manualSelector"):
            uid = meta["uid"]
            labels = _object_at(template_meta, "labels")
            for key, value in (
                (CONTROLLER_UID_LABEL, uid),
                (LEGACY_CONTROLLER_UID_LABEL, uid),
                (JOB_NAME_LABEL, meta["name"]),
                (LEGACY_JOB_NAME_LABEL, meta["name"]),
            ):
                labels.setdefault(key, value)
            spec["selector"] = {"matchLabels": {CONTROLLER_UID_LABEL: uid}}
        obj["status"] = {}

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        """Defaults apply to every request the API server decodes, updates too: a merge patch that drops
        ``parallelism`` and ``completions`` (``{"spec": {"parallelism": null, ...}}``, as JobSet's
        ``syncJobScaling`` sends for a template that sets neither) stores them defaulted again, 1 and 1.
        Only the top-level spec fields are re-defaulted here, on a copy of the spec (the update may share
        it with the stored Job); the pod template is defaulted on create and an update cannot unset it
        without being refused as immutable anyway."""
        spec = new.get("spec")
        if not isinstance(spec, dict):
            return
        defaulted = dict(spec)
        _job_spec_defaults(defaulted)
        if defaulted != spec:
            new["spec"] = defaulted

    def validate(self, obj: Obj) -> list[FieldError]:
        """``validateJobSpec`` and the pod template (:mod:`fakecluster.api.job_validation`)."""
        spec = obj.get("spec") or {}
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        return validate_job_spec(spec, template_labels)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """ValidateJobSpecUpdate: immutable fields, elastic Indexed completions, and the pod template that
        may change only while suspended and never started (AllowMutableSchedulingDirectives)."""
        ns, os_ = new.get("spec") or {}, old.get("spec") or {}
        errs = []
        for field_name in (
            "selector",
            "completionMode",
            "podFailurePolicy",
            "backoffLimitPerIndex",
            "managedBy",
            "successPolicy",
        ):
            if ns.get(field_name) != os_.get(field_name):
                errs.append(FieldError.immutable(f"spec.{field_name}", ns.get(field_name)))
        if ns.get("completions") != os_.get("completions"):
            if os_.get("completionMode") != "Indexed":
                errs.append(FieldError.immutable("spec.completions", ns.get("completions")))
            elif ns.get("completions") != ns.get("parallelism"):
                errs.append(
                    FieldError.invalid(
                        "spec.completions",
                        ns.get("completions"),
                        "can only be modified in tandem with spec.parallelism",
                    )
                )
        new_tpl, old_tpl = ns.get("template") or {}, os_.get("template") or {}
        if new_tpl != old_tpl:
            allowed = os_.get("suspend") and not (old.get("status") or {}).get("startTime")
            if not allowed or not _only_scheduling_directives_changed(new_tpl, old_tpl):
                errs.append(FieldError.immutable("spec.template", _template_repr(new_tpl)))
        return errs

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        status = new.get("status") or {}
        old_status = old.get("status") or {}
        spec = new.get("spec") or {}
        if old_status.get("startTime") and not status.get("startTime") and not spec.get("suspend"):
            return [
                FieldError.required("status.startTime", "startTime cannot be removed for unsuspended job")
            ]
        return []


def _only_scheduling_directives_changed(new_tpl: Obj, old_tpl: Obj) -> bool:
    new_spec = dict(new_tpl.get("spec") or {})
    old_spec = dict(old_tpl.get("spec") or {})
    for key in _TEMPLATE_MUTABLE_WHEN_SUSPENDED:
        new_spec.pop(key, None)
        old_spec.pop(key, None)
    new_aff = dict(new_spec.pop("affinity", None) or {})
    old_aff = dict(old_spec.pop("affinity", None) or {})
    new_aff.pop("nodeAffinity", None)
    old_aff.pop("nodeAffinity", None)
    if new_aff != old_aff or new_spec != old_spec:
        return False
    new_meta = {
        k: v for k, v in (new_tpl.get("metadata") or {}).items() if k not in ("labels", "annotations")
    }
    old_meta = {
        k: v for k, v in (old_tpl.get("metadata") or {}).items() if k not in ("labels", "annotations")
    }
    return new_meta == old_meta


def _template_repr(template: Obj) -> Any:
    return {"metadata": template.get("metadata") or {}, "spec": "…"}


class ServiceStrategy(Strategy):
    """Services: type defaults to ClusterIP; a deterministic cluster IP unless headless (``None``)."""

    def __init__(self) -> None:
        self._next_ip = 10

    def prepare_for_create(self, obj: Obj, now: str) -> None:
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if not spec.get("clusterIP"):
            self._next_ip += 1
            spec["clusterIP"] = f"10.96.{self._next_ip // 256}.{self._next_ip % 256}"
        spec["clusterIPs"] = [spec["clusterIP"]]
        obj["status"] = {"loadBalancer": {}}

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        if (new.get("spec") or {}).get("clusterIP") != (old.get("spec") or {}).get("clusterIP"):
            return [FieldError.immutable("spec.clusterIP", (new.get("spec") or {}).get("clusterIP"))]
        return []


def _model(module: str, name: str) -> Any:
    """Schema models come from :mod:`fakecluster.api`; looked up lazily to keep import order simple."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def register_builtin(server: ApiServer) -> None:
    server.register(
        ResourceType("Pod", "v1", "pods", model=_model("fakecluster.api.core", "Pod"), strategy=PodStrategy(),
                     stored_valid=True, status_model=_model("fakecluster.api.core_status", "PodStatus"),
                     status_decoded=True, go_spec_type="v1.PodSpec")
    )
    server.register(priority_class_type())
    server.register_admission("Pod", "Priority", operations=("CREATE",),
                              copies_on_write=True, in_tree=True,
                              mutating=priority_admission(lambda: server.list("PriorityClass")))
    server.register_admission("Pod", "DefaultTolerationSeconds", mutating=default_toleration_seconds,
                              operations=("CREATE", "UPDATE"), copies_on_write=True)
    server.register(
        ResourceType(
            "Service",
            "v1",
            "services",
            model=_model("fakecluster.api.core", "Service"),
            go_spec_type="v1.ServiceSpec",
            strategy=ServiceStrategy(),
        )
    )
    server.register(
        ResourceType(
            "Node",
            "v1",
            "nodes",
            namespaced=False,
            generation="none",
            model=_model("fakecluster.api.core", "Node"),
            status_model=_model("fakecluster.api.core_node", "NodeStatus"),
            go_spec_type="v1.NodeSpec",
            status_decoded=True,
        )
    )
    server.register(
        ResourceType(
            "Job",
            "batch/v1",
            "jobs",
            default_propagation="Orphan",
            model=_model("fakecluster.api.batch", "Job"),
            status_model=_model("fakecluster.api.batch", "JobStatus"),
            go_spec_type="v1.JobSpec",
            status_decoded=True,
            strategy=JobStrategy(),
        )
    )
    server.register(ResourceType("PersistentVolumeClaim", "v1", "persistentvolumeclaims"))
    server.register(
        ResourceType("Event", "events.k8s.io/v1", "events", status_subresource=False, generation="none")
    )
    server.register(
        ResourceType(
            "EndpointSlice",
            "discovery.k8s.io/v1",
            "endpointslices",
            status_subresource=False,
            generation="none",
            model=_model("fakecluster.api.discovery", "EndpointSlice"),
            item_lists=("endpoints",),
        )
    )
