"""The k8s.io/apimachinery and k8s.io/apiserver helpers the JobSet webhook calls, ported with their wording.

The webhook's messages are mostly built by these libraries (``validation.IsDNS1035Label``,
``IsDomainPrefixedPath``, ``content.IsLabelValue``, ``field.InternalError``, ``apierrors.NewInvalid``),
so a faithful port of ``pkg/webhooks/jobset_webhook.go`` needs them character for character, including
quirks such as the double space in ``(e.g. 'my-name',  or 'abc-123', ...)`` that ``RegexError`` produces.
Sources: apimachinery v0.36.3 ``pkg/util/validation/validation.go``, ``pkg/api/validate/content``,
``pkg/util/validation/field/errors.go``, ``pkg/api/errors/errors.go``; apiserver
``pkg/storage/names/generate.go``.
"""

from __future__ import annotations

import random
import re

from fakecluster.api import errors
from fakecluster.api.errors import ApiError, FieldError

__all__ = [
    "MAX_INT32",
    "NIL_PATH",
    "byte_len",
    "generate_name",
    "internal_error",
    "invalid",
    "is_dns1035_label",
    "is_dns1123_subdomain",
    "is_domain_prefixed_path",
    "is_label_value",
    "regex_error",
]

MAX_INT32 = 2**31 - 1
NIL_PATH = "<nil>"
"""``(*field.Path)(nil).String()``: the field of ``field.InternalError(nil, err)``, which is how the
webhook wraps its plain ``fmt.Errorf`` errors, so clients see ``<nil>: Internal error: ...``."""

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"

# fullmatch, not "^...$": Go's "$" never matches before a trailing newline, Python's does.
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_HTTP_PATH = re.compile(_HTTP_PATH_FMT)

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""k8s.io/apimachinery/pkg/util/rand: consonants and digits that cannot spell words."""
_MAX_GENERATED_NAME_LENGTH = 58
"""names.MaxGeneratedNameLength = 63 - 5 random characters."""


def byte_len(value: str) -> int:
    """Go's ``len(string)`` counts UTF-8 bytes, and every length limit above is written against it."""
    return len(value.encode())


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, including its ``'a',  or 'b', `` punctuation."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    msg += " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += f"'{example}', "
    return msg + f"regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def is_dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 253:
        errs.append(_max_len_error(253))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 63:
        errs.append(_max_len_error(63))
    if not _DNS1035_LABEL.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_label_value(value: str) -> list[str]:
    """content.IsLabelValue (aliased as ``validation.IsValidLabelValue``); note *bytes*, not characters."""
    errs = []
    if byte_len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_domain_prefixed_path(path: str, value: str) -> list[FieldError]:
    """validation.IsDomainPrefixedPath: ``<dns-1123 subdomain>/<http path>``, e.g. ``acme.io/foo``."""
    if not value:
        return [FieldError.required(path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [FieldError.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [FieldError.invalid(path, host, msg) for msg in is_dns1123_subdomain(host)]
    if not _HTTP_PATH.fullmatch(rest):
        errs.append(FieldError.invalid(path, rest, regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


def generate_name(base: str, rng: random.Random) -> str:
    """names.SimpleNameGenerator.GenerateName: prefix cut to 58 bytes plus 5 random characters."""
    if len(base) > _MAX_GENERATED_NAME_LENGTH:
        base = base[:_MAX_GENERATED_NAME_LENGTH]
    return base + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))


def internal_error(detail: str) -> FieldError:
    """``field.InternalError(nil, err)``: the webhook's wrapping of every plain ``error``."""
    return FieldError.internal(NIL_PATH, detail)


def invalid(kind: str, group: str, name: str, errs: list[FieldError]) -> ApiError:
    """apierrors.NewInvalid: every error is a cause, but the message lists each distinct text once.

    ``field.ErrorList.ToAggregate`` drops repeated messages (the Job-name and pod-name checks can report
    the same ``Invalid value`` twice for one bad character), which ``errors.Invalid`` alone would print
    twice; the causes keep the duplicates, as upstream's ``StatusDetails.Causes`` do.
    """
    seen: set[str] = set()
    distinct: list[FieldError] = []
    for err in errs:
        if str(err) not in seen:
            seen.add(str(err))
            distinct.append(err)
    error = errors.Invalid(kind, group, name, distinct)
    error.causes = list(errs)
    return error
