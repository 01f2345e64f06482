"""API errors shaped like Kubernetes' ``StatusError`` and ``field.Error``.

Callers branch on the *reason* (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Invalid``) exactly as a
client-go user branches on ``apierrors.IsNotFound``; the messages reproduce the API server's wording so a
scenario that asserts on a webhook or validation message sees the same text a real cluster prints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "FieldError",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "NotFound",
]


def _quote(value: Any) -> str:
    """Render a value the way ``field.Error`` does: strings quoted, numbers bare, nil as ``null``."""
    if isinstance(value, str):
        return json.dumps(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class FieldError:
    """One validation failure at a field path (k8s.io/apimachinery/pkg/util/validation/field)."""

    type: str  # "Invalid" | "Required" | "Forbidden" | "NotSupported" | "Duplicate" | "TooLong" | "Internal"
    field: str
    detail: str = ""
    value: Any = None
    supported: tuple[str, ...] = ()

    def __str__(self) -> str:
        prefix = f"{self.field}: " if self.field else ""
        if self.type == "Invalid":
            msg = f"{prefix}Invalid value: {_quote(self.value)}"
            return f"{msg}: {self.detail}" if self.detail else msg
        if self.type == "Required":
            return f"{prefix}Required value" + (f": {self.detail}" if self.detail else "")
        if self.type == "Forbidden":
            return f"{prefix}Forbidden" + (f": {self.detail}" if self.detail else "")
        if self.type == "NotSupported":
            msg = f"{prefix}Unsupported value: {_quote(self.value)}"
            if self.supported:
                msg += ": supported values: " + ", ".join(json.dumps(s) for s in self.supported)
            return msg
        if self.type == "Duplicate":
            return f"{prefix}Duplicate value: {_quote(self.value)}"
        if self.type == "TooLong":
            return f"{prefix}Too long: " + (self.detail or "value is too long")
        if self.type == "Internal":
            return f"{prefix}Internal error: {self.detail}"
        return f"{prefix}{self.detail}"

    @staticmethod
    def invalid(path: str, value: Any, detail: str) -> FieldError:
        return FieldError("Invalid", path, detail, value)

    @staticmethod
    def required(path: str, detail: str = "") -> FieldError:
        return FieldError("Required", path, detail)

    @staticmethod
    def forbidden(path: str, detail: str) -> FieldError:
        return FieldError("Forbidden", path, detail)

    @staticmethod
    def not_supported(path: str, value: Any, supported: tuple[str, ...]) -> FieldError:
        return FieldError("NotSupported", path, "", value, supported)

    @staticmethod
    def immutable(path: str, value: Any) -> FieldError:
        return FieldError("Invalid", path, "field is immutable", value)

    @staticmethod
    def too_long(path: str, value: Any, max_length: int) -> FieldError:
        return FieldError("TooLong", path, f"may not be more than {max_length} bytes", value)

    @staticmethod
    def internal(path: str, detail: str) -> FieldError:
        return FieldError("Internal", path, detail)


@dataclass(slots=True)
class ApiError(Exception):
    """A non-2xx answer from the API server (metav1.Status)."""

    code: int
    reason: str
    message: str
    causes: list[FieldError] = field(default_factory=list)

    def __str__(self) -> str:
        return self.message


def _resource(kind_plural: str, group: str) -> str:
    return f"{kind_plural}.{group}" if group else kind_plural


def NotFound(plural: str, group: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_resource(plural, group)} "{name}" not found')


def AlreadyExists(plural: str, group: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{_resource(plural, group)} "{name}" already exists')


def Conflict(plural: str, group: str, name: str, detail: str | None = None) -> ApiError:
    detail = detail or (
        "the object has been modified; please apply your changes to the latest version and try again"
    )
    return ApiError(
        409, "Conflict", f'Operation cannot be fulfilled on {_resource(plural, group)} "{name}": {detail}'
    )


def Invalid(kind: str, group: str, name: str, causes: list[FieldError]) -> ApiError:
    """apierrors.NewInvalid: one error prints bare, several print as a bracketed list."""
    qualified = f"{kind}.{group}" if group else kind
    body = str(causes[0]) if len(causes) == 1 else "[" + ", ".join(str(c) for c in causes) + "]"
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {body}', list(causes))


def BadRequest(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def Forbidden(message: str) -> ApiError:
    return ApiError(403, "Forbidden", message)


def Gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def InternalError(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}")
