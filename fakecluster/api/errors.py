"""API errors shaped like Kubernetes' ``StatusError`` and ``field.Error``
(k8s.io/apimachinery/pkg/api/errors/errors.go, k8s.io/apimachinery/pkg/util/validation/field/errors.go).

Each ``metav1.StatusReason`` the fake API server answers with is a subclass of :class:`ApiError`, so a
caller catches ``except NotFound`` where a client-go user writes ``apierrors.IsNotFound(err)``; the
instance keeps ``code``, ``reason``, ``message`` and ``causes`` as ``StatusError.ErrStatus`` does, and the
messages reproduce the API server's wording, so a scenario that asserts on a webhook or validation
message sees the same text a real cluster prints.

The errors live here, beside the API types, rather than in the API server: like apimachinery's
``api/errors`` package they are part of what a client sees, and the JobSet controller imports them
without importing the server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Expired",
    "FieldError",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "MethodNotAllowed",
    "NotFound",
    "ServiceUnavailable",
    "Timeout",
    "TooManyRequests",
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


class ApiError(Exception):
    """A non-2xx answer from the API server: ``StatusError`` with its ``metav1.Status``.

    ``ApiError(code, reason, message, causes)`` builds a status of any reason; the subclasses below are
    the reasons the fake answers with, each with the constructor of its ``errors.NewXxx`` twin, and
    :meth:`from_status` picks the subclass for a reason so that ``except NotFound`` catches every 404
    ``NotFound`` however it was built.
    """

    __slots__ = ("causes", "code", "message", "reason")
    _by_reason: ClassVar[dict[str, type[ApiError]]] = {}
    REASON: ClassVar[str] = ""
    CODE: ClassVar[int] = 500

    def __init__(self, code: int, reason: str, message: str, causes: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes: list[FieldError] = list(causes or ())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.REASON:
            ApiError._by_reason[cls.REASON] = cls

    @classmethod
    def from_status(
        cls, code: int, reason: str, message: str, causes: list[FieldError] | None = None
    ) -> ApiError:
        """The error for a ``metav1.Status``, as the subclass its reason names (plain :class:`ApiError`
        for a reason without one), without going through the subclass's message-building constructor."""
        klass = ApiError._by_reason.get(reason, ApiError)
        err = klass.__new__(klass)
        ApiError.__init__(err, code, reason, message, causes)
        return err

    @classmethod
    def with_message(cls, message: str, causes: list[FieldError] | None = None) -> ApiError:
        """This reason with a message of the caller's (the server's odd ones: ``the server could not
        find the requested resource``, ``no matches for kind``)."""
        return ApiError.from_status(cls.CODE, cls.REASON, message, causes)

    def with_prefix(self, prefix: str) -> ApiError:
        """The same status with ``prefix`` before the message (an admission webhook's denial)."""
        return ApiError.from_status(self.code, self.reason, prefix + self.message, self.causes)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, reason={self.reason!r}, message={self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ApiError):
            return NotImplemented
        return (self.code, self.reason, self.message, self.causes) == (
            other.code, other.reason, other.message, other.causes)

    __hash__ = Exception.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return ApiError.from_status, (self.code, self.reason, self.message, self.causes)


def _resource(kind_plural: str, group: str) -> str:
    return f"{kind_plural}.{group}" if group else kind_plural


class _MessageError(ApiError):
    """A reason whose ``errors.NewXxx`` takes only the message: the status is the class's ``CODE`` and
    ``REASON``, the message the caller's after the class's ``PREFIX``."""

    PREFIX: ClassVar[str] = ""

    def __init__(self, message: str) -> None:
        super().__init__(self.CODE, self.REASON, self.PREFIX + message)


class NotFound(ApiError):
    """``errors.NewNotFound``: 404 ``NotFound``."""

    REASON = "NotFound"
    CODE = 404

    def __init__(self, plural: str, group: str, name: str) -> None:
        super().__init__(404, "NotFound", f'{_resource(plural, group)} "{name}" not found')


class AlreadyExists(ApiError):
    """``errors.NewAlreadyExists``: 409 ``AlreadyExists``."""

    REASON = "AlreadyExists"
    CODE = 409

    def __init__(self, plural: str, group: str, name: str) -> None:
        super().__init__(409, "AlreadyExists", f'{_resource(plural, group)} "{name}" already exists')


class Conflict(ApiError):
    """``errors.NewConflict``: 409 ``Conflict`` (a stale resourceVersion, a failed precondition)."""

    REASON = "Conflict"
    CODE = 409

    def __init__(self, plural: str, group: str, name: str, detail: str | None = None) -> None:
        detail = detail or (
            "the object has been modified; please apply your changes to the latest version and try again"
        )
        super().__init__(
            409, "Conflict", f'Operation cannot be fulfilled on {_resource(plural, group)} "{name}": {detail}'
        )


class Invalid(ApiError):
    """``errors.NewInvalid``: 422 ``Invalid``; one cause prints bare, several as a bracketed list."""

    REASON = "Invalid"
    CODE = 422

    def __init__(self, kind: str, group: str, name: str, causes: list[FieldError]) -> None:
        qualified = f"{kind}.{group}" if group else kind
        body = str(causes[0]) if len(causes) == 1 else "[" + ", ".join(str(c) for c in causes) + "]"
        super().__init__(422, "Invalid", f'{qualified} "{name}" is invalid: {body}', list(causes))


class BadRequest(_MessageError):
    """``errors.NewBadRequest``: 400 ``BadRequest``."""

    REASON = "BadRequest"
    CODE = 400


class Forbidden(_MessageError):
    """403 ``Forbidden`` with the caller's message (admission denials use it)."""

    REASON = "Forbidden"
    CODE = 403


class MethodNotAllowed(ApiError):
    """``errors.NewMethodNotSupported``: 405 ``MethodNotAllowed``."""

    REASON = "MethodNotAllowed"
    CODE = 405

    def __init__(self, plural: str, group: str, action: str) -> None:
        super().__init__(405, "MethodNotAllowed", f"{action} is not supported on resources of kind "
                                                  f'"{_resource(plural, group)}"')


class Gone(_MessageError):
    """``errors.NewGone``: 410 ``Gone``."""

    REASON = "Gone"
    CODE = 410


class Expired(_MessageError):
    """``errors.NewResourceExpired``: 410 ``Expired`` (a watch or list from a compacted resourceVersion)."""

    REASON = "Expired"
    CODE = 410


class TooManyRequests(_MessageError):
    """``errors.NewTooManyRequests``: 429 ``TooManyRequests`` (API priority and fairness, eviction
    refused by a disruption budget)."""

    REASON = "TooManyRequests"
    CODE = 429


class InternalError(_MessageError):
    """``errors.NewInternalError``: 500 ``InternalError``."""

    REASON = "InternalError"
    CODE = 500
    PREFIX = "Internal error occurred: "


class ServiceUnavailable(_MessageError):
    """``errors.NewServiceUnavailable``: 503 ``ServiceUnavailable``."""

    REASON = "ServiceUnavailable"
    CODE = 503


class Timeout(_MessageError):
    """``errors.NewTimeoutError``: 504 ``Timeout``."""

    REASON = "Timeout"
    CODE = 504
    PREFIX = "Timeout: "
