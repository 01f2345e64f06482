"""``resource.Quantity`` parsing (k8s.io/apimachinery/pkg/api/resource/quantity.go).

The scheduler compares requests with allocatable and the kubelet derives a QoS class from requests and
limits; both need exact arithmetic, so a quantity becomes a :class:`fractions.Fraction` (``"100m"`` is
exactly ``1/10``, which a float is not).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from fakecluster.api.base import QUANTITY_PATTERN

__all__ = ["FORMAT_MESSAGE", "MAX_EXPONENT", "parse_quantity", "quantity_error"]

FORMAT_MESSAGE = f"quantities must match the regular expression '{QUANTITY_PATTERN}'"
"""``resource.ErrFormatWrong``: also the detail of a schema error on a malformed quantity string."""

_FORMAT = re.compile(QUANTITY_PATTERN)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_SUFFIX = re.compile(r"(?:(?P<exponent>[eE][+-]?[0-9]+)|(?P<si>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
MAX_EXPONENT = 9_999
"""Decimal exponents beyond this either way are refused here (four digits, as
:data:`~fakecluster.api.base.QUANTITY_EXACT_PATTERN`). Upstream keeps an exponent as the scale of an
``inf.Dec`` and saturates when it converts; exact arithmetic on ``10**exponent`` took 6 s for
``1e9999999`` and would take minutes and gigabytes for a few more digits of one hostile value."""


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity such as ``"500m"``, ``"1.5"``, ``"32Gi"``, ``"1G"``, ``"1e3"`` or ``4``.

    Accepts the same grammar as ``resource.ParseQuantity``: an optionally signed decimal number followed
    by a binary-SI suffix (``Ki``..``Ei``), a decimal-SI suffix (``n u m k M G T P E``) or a decimal
    exponent (``e3``, ``E-2``). Raises :class:`ValueError` with the upstream wording otherwise.
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {value!r}: must be a string or a number, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"invalid quantity {value!r}: must be a finite number")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise ValueError(f"invalid quantity {value!r}: must be a string or a number")
    shape = _FORMAT.fullmatch(value)
    if shape is None:
        raise ValueError(f"invalid quantity {value!r}: {FORMAT_MESSAGE}")
    number_text, suffix_text = shape.groups()
    if not _NUMBER.fullmatch(number_text):
        raise ValueError(f"invalid quantity {value!r}: unable to parse numeric part of quantity")
    suffix = _SUFFIX.fullmatch(suffix_text)
    if suffix is None:
        raise ValueError(f"invalid quantity {value!r}: unable to parse quantity's suffix")
    number = Fraction(number_text)
    if suffix["exponent"]:
        digits = suffix["exponent"][1:]
        if len(digits.lstrip("+-").lstrip("0")) > len(str(MAX_EXPONENT)) or abs(int(digits)) > MAX_EXPONENT:
            raise ValueError(f"invalid quantity {value!r}: the exponent is beyond {MAX_EXPONENT} either way, "
                             "more than this emulation computes exactly")
        return number * Fraction(10) ** int(digits)
    si = suffix["si"]
    if si is None:
        return number
    if si in _BINARY:
        return number * _BINARY[si]
    return number * Fraction(10) ** _DECIMAL[si]


def quantity_error(value: str) -> str:
    """Why ``value`` is no quantity, in ``resource.ParseQuantity``'s words (``unable to parse quantity's
    suffix``); empty if it is one."""
    try:
        parse_quantity(value)
    except (ValueError, ArithmeticError) as exc:
        return str(exc).removeprefix(f"invalid quantity {value!r}: ")  # the value may hold ": " itself
    return ""
