"""Pod-template validation: the part of ``pkg/apis/core/validation/validation.go`` Job and JobSet pods use.

The pydantic schema (:mod:`fakecluster.api.core`) already refuses wrong types and enum values; this module
adds the semantic rules ``ValidatePodSpec`` applies on top, with upstream's field paths and messages:

- containers: at least one (``Required``); names required, RFC 1123 labels, unique across init and
  regular containers (``Duplicate``); ``image`` required (``validateContainerCommon``); ``restartPolicy``
  only ``Always``, and only on init containers (sidecars);
- ports (``validateContainerPorts``): ``containerPort`` required and 1..65535, ``hostPort`` 1..65535,
  IANA service names (``IsValidPortName``) unique per container, protocol TCP/UDP/SCTP;
- env (``validateEnv``): names required and valid (``IsEnvVarName``, relaxed form: printable ASCII but
  ``=``), ``valueFrom`` with exactly one source and never together with ``value``;
- resources (``ValidateResourceRequirements``): quantities not negative, requests not above limits;
- probes (``validateProbe``/``validateHandler``): non-negative numbers, exactly one handler,
  ``successThreshold`` 1 for liveness and startup probes, valid ports;
- volumes (``ValidateVolumes``) and mounts (``ValidateVolumeMounts``): volume names required, labels,
  unique; every mount names a volume (``Not found``) and has a unique ``mountPath``;
- the pod's ``restartPolicy``: ``Always``, ``OnFailure`` or ``Never`` (``Required`` when empty).

Reusable: :func:`validate_pod_spec` takes the path of the spec (``spec`` for a Pod,
``spec.template.spec`` for a Job) and returns :class:`FieldError` values; nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj
from fakecluster.api.quantity import parse_quantity
from fakecluster.api.validation import is_dns1123_label, validate_resource_quantity_value

__all__ = [
    "DNS1123_LABEL_MESSAGE",
    "OmittedValue",
    "is_dns1123_label",
    "is_valid_port_name",
    "not_found",
    "validate_pod_spec",
]

DNS1123_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
"""``validation.IsDNS1123Label``'s ``RegexError`` text (the double space is upstream's)."""
ENV_VAR_NAME_MESSAGE = ("a valid environment variable name must consist only of printable ASCII characters "
                        "other than '='")
PORT_RANGE_MESSAGE = "must be between 1 and 65535, inclusive"
NON_NEGATIVE = "must be greater than or equal to 0"
RESTART_POLICIES = ("Always", "OnFailure", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_HAS_LETTER = re.compile(r"[a-z]")
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


class OmittedValue(FieldError):
    """``field.Invalid(path, field.OmitValueType{}, detail)``: the value is left out of the message."""

    def __str__(self) -> str:
        return f"{self.field}: Invalid value: {self.detail}"


def not_found(path: str, value: Any) -> FieldError:
    """``field.NotFound``: ``<path>: Not found: <value>``."""
    quoted = f'"{value}"' if isinstance(value, str) else str(value)
    return FieldError("NotFound", path, f"Not found: {quoted}", value)


def is_valid_port_name(name: str) -> list[str]:
    """``validation.IsValidPortName``: an IANA_SVC_NAME."""
    errs = []
    if len(name) < 1 or len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _HAS_LETTER.search(name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _is_env_var_name(name: str) -> bool:
    return all(32 <= ord(c) <= 126 and c != "=" for c in name)


def validate_pod_spec(spec: Obj, path: str) -> list[FieldError]:
    """``ValidatePodSpec`` for the fields this module covers; ``path`` is the spec's own path."""
    errs: list[FieldError] = []
    volumes = _validate_volumes(spec.get("volumes") or (), f"{path}.volumes", errs)
    containers = spec.get("containers") or []
    if not containers:
        errs.append(FieldError.required(f"{path}.containers"))
    names: set[str] = set()
    for group, init in (("initContainers", True), ("containers", False)):
        for i, container in enumerate(spec.get(group) or ()):
            _validate_container(container, f"{path}.{group}[{i}]", init, names, volumes, errs=errs)
    policy = spec.get("restartPolicy")
    if not policy:
        errs.append(FieldError.required(f"{path}.restartPolicy"))
    elif policy not in RESTART_POLICIES:
        errs.append(FieldError.not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    return errs


def _validate_volumes(volumes: Iterable[Obj], path: str, errs: list[FieldError]) -> set[str]:
    names: set[str] = set()
    for i, volume in enumerate(volumes):
        _validate_unique_name(volume.get("name") or "", f"{path}[{i}].name", names, errs)
    return names


def _validate_unique_name(name: str, path: str, names: set[str], errs: list[FieldError]) -> None:
    """A volume's or container's name: required, a DNS-1123 label, not among ``names`` (which it joins)."""
    if not name:
        errs.append(FieldError.required(path))
    else:
        errs.extend(FieldError.invalid(path, name, m) for m in is_dns1123_label(name))
        if name in names:
            errs.append(FieldError("Duplicate", path, value=name))
    names.add(name)


def _validate_container(container: Obj, path: str, init: bool, names: set[str], volumes: set[str], *,
                        errs: list[FieldError]) -> None:
    _validate_unique_name(container.get("name") or "", f"{path}.name", names, errs)
    if not container.get("image"):
        errs.append(FieldError.required(f"{path}.image"))
    restart = container.get("restartPolicy")
    if restart is not None:
        if not init:
            errs.append(FieldError.forbidden(f"{path}.restartPolicy",
                                             "may not be set for non-init containers"))
        elif restart != "Always":
            errs.append(FieldError.not_supported(f"{path}.restartPolicy", restart, ("Always",)))
    _validate_ports(container.get("ports") or (), f"{path}.ports", errs)
    _validate_env(container.get("env") or (), f"{path}.env", errs)
    _validate_resources(container.get("resources") or {}, f"{path}.resources", errs)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if container.get(probe) is not None:
            _validate_probe(container[probe], f"{path}.{probe}", probe, errs)
    _validate_mounts(container.get("volumeMounts") or (), f"{path}.volumeMounts", volumes, errs)


def _validate_port_number(value: Any, path: str, errs: list[FieldError]) -> None:
    if isinstance(value, int) and not 1 <= value <= 65535:
        errs.append(FieldError.invalid(path, value, PORT_RANGE_MESSAGE))


def _validate_ports(ports: Iterable[Obj], path: str, errs: list[FieldError]) -> None:
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        name = port.get("name")
        if name:
            errs.extend(FieldError.invalid(f"{at}.name", name, m) for m in is_valid_port_name(name))
            if name in names:
                errs.append(FieldError("Duplicate", f"{at}.name", value=name))
            names.add(name)
        if not port.get("containerPort"):
            errs.append(FieldError.required(f"{at}.containerPort"))
        else:
            _validate_port_number(port["containerPort"], f"{at}.containerPort", errs)
        if port.get("hostPort"):
            _validate_port_number(port["hostPort"], f"{at}.hostPort", errs)
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            errs.append(FieldError.not_supported(f"{at}.protocol", protocol, PROTOCOLS))


_VALUE_FROM_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def _validate_env(env: Iterable[Obj], path: str, errs: list[FieldError]) -> None:
    for i, var in enumerate(env):
        at = f"{path}[{i}]"
        name = var.get("name") or ""
        if not name:
            errs.append(FieldError.required(f"{at}.name"))
        elif not _is_env_var_name(name):
            errs.append(FieldError.invalid(f"{at}.name", name, ENV_VAR_NAME_MESSAGE))
        value_from = var.get("valueFrom")
        if value_from is None:
            continue
        sources = [s for s in _VALUE_FROM_SOURCES if value_from.get(s) is not None]
        if not sources:
            errs.append(FieldError.invalid(f"{at}.valueFrom", "", "must specify one of: `fieldRef`, "
                                           "`resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
        elif len(sources) > 1:
            errs.append(FieldError.invalid(f"{at}.valueFrom", "",
                                           "may not have more than one field specified at a time"))
        if var.get("value"):
            errs.append(FieldError.invalid(f"{at}.valueFrom", "",
                                           "may not be specified when `value` is not empty"))


def _quantity(value: Any) -> Any:
    try:
        return parse_quantity(str(value))
    except (ValueError, ArithmeticError):
        return None


def _validate_resources(resources: Obj, path: str, errs: list[FieldError]) -> None:
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    parsed_limits = {}
    for section, values in (("limits", limits), ("requests", requests)):
        for name, raw in values.items():
            amount = _quantity(raw)
            if amount is not None:  # unparseable quantities are refused by the schema already
                errs += [FieldError.invalid(f"{path}.{section}[{name}]", str(raw), msg)
                         for msg in validate_resource_quantity_value(str(name), str(raw))]
            if section == "limits":
                parsed_limits[name] = amount
    for name, raw in requests.items():
        limit, amount = parsed_limits.get(name), _quantity(raw)
        if name in limits and limit is not None and amount is not None and amount > limit:
            errs.append(FieldError.invalid(f"{path}.requests[{name}]", str(raw),
                                           f"must be less than or equal to {name} limit of {limits[name]}"))


def _validate_probe(probe: Obj, path: str, kind: str, errs: list[FieldError]) -> None:
    for field_name in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                       "failureThreshold"):
        value = probe.get(field_name)
        if isinstance(value, int) and value < 0:
            errs.append(FieldError.invalid(f"{path}.{field_name}", value, NON_NEGATIVE))
    handlers = [h for h in _HANDLERS if probe.get(h) is not None]
    if not handlers:
        errs.append(FieldError.required(path, "must specify a handler type"))
    for extra in handlers[1:]:
        errs.append(FieldError.forbidden(f"{path}.{extra}", "may not specify more than 1 handler type"))
    for handler in ("httpGet", "tcpSocket"):
        port = (probe.get(handler) or {}).get("port")
        if isinstance(port, int):  # ValidatePortNumOrName; a named port is resolved by the kubelet
            _validate_port_number(port, f"{path}.{handler}.port", errs)
        elif isinstance(port, str):
            errs.extend(FieldError.invalid(f"{path}.{handler}.port", port, m)
                        for m in is_valid_port_name(port))
    success = probe.get("successThreshold")
    if kind != "readinessProbe" and isinstance(success, int) and success != 1:
        errs.append(FieldError.invalid(f"{path}.successThreshold", success, "must be 1"))
    if kind == "readinessProbe" and probe.get("terminationGracePeriodSeconds") is not None:
        errs.append(FieldError.invalid(f"{path}.terminationGracePeriodSeconds",
                                       probe["terminationGracePeriodSeconds"],
                                       "must not be set for readinessProbes"))


def _validate_mounts(mounts: Iterable[Obj], path: str, volumes: set[str], errs: list[FieldError]) -> None:
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        at = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            errs.append(FieldError.required(f"{at}.name"))
        elif name not in volumes:
            errs.append(not_found(f"{at}.name", name))
        mount_path = mount.get("mountPath") or ""
        if not mount_path:
            errs.append(FieldError.required(f"{at}.mountPath"))
        elif mount_path in paths:
            errs.append(FieldError.invalid(f"{at}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
