"""The errors the API server answers with; defined in :mod:`fakecluster.api.errors`, where clients get them
(as client-go gets them from k8s.io/apimachinery/pkg/api/errors, not from the apiserver)."""

from fakecluster.api.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Expired,
    FieldError,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    MethodNotAllowed,
    NotFound,
    ServiceUnavailable,
    Timeout,
    TooManyRequests,
)

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
