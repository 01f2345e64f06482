"""Durations as scenario files write them (``250ms``, ``5s``, ``2m``, ``1h``, ``1m30s``) and back.

The grammar is the useful subset of Go's ``time.ParseDuration`` (which Kubernetes users know from
``kubectl wait --timeout``): one or more ``<number><unit>`` parts with units ``h``, ``m``, ``s``, ``ms``,
largest first. A bare YAML number means seconds. Parts are summed in :class:`~decimal.Decimal` and rounded
to a float once, so ``0.1s`` and ``100ms`` are the same float and :func:`format_duration` round-trips.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

__all__ = ["format_duration", "format_seconds", "parse_duration"]

_UNITS: dict[str, Decimal] = {"h": Decimal(3600), "m": Decimal(60), "s": Decimal(1), "ms": Decimal("0.001")}
_UNIT_ORDER = ("h", "m", "s", "ms")
_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ms|h|m|s)")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_MICROSECOND = Decimal("0.000001")
"""Format 1.1 "Time": a duration is rounded to the nearest microsecond when read."""
MAX_DURATION_SECONDS = 10 * 365 * 24 * 3600
"""The longest duration a scenario may write: 10 years (87600h). Go's ``time.Duration`` tops out at ~292
years; anything near that is a typo, and a ``999...9s`` must not silently become infinite."""
_MAX_TEXT = 1000
"""Longest duration text read (a float's exact decimal form, ``5e-324`` written out, is ~330 characters)."""
_HINT = "write a number with a unit (ms, s, m, h), e.g. 250ms, 5s, 2m, 1h or 1m30s"


def parse_duration(value: object) -> float:
    """Turn a duration from a scenario file into float seconds; ``ValueError`` says what is wrong.

    Accepts ints and floats (seconds) and strings in the grammar above. Negative, infinite, NaN, boolean
    and malformed values are refused: a typo in a timing must not silently become zero.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration, got {str(value).lower()}; {_HINT}")
    if isinstance(value, int) and value > MAX_DURATION_SECONDS:
        raise ValueError("duration is longer than 10 years (87600h), the longest allowed")
    if isinstance(value, int | float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"duration {value!r} is not a finite number of seconds")
        if value < 0:
            raise ValueError(f"duration {value!r} is negative")
        return _bounded(value, value)
    if not isinstance(value, str):
        raise ValueError(f"expected a duration, got a {type(value).__name__}; {_HINT}")
    if len(value) > _MAX_TEXT:
        raise ValueError(
            f"duration {value[:40]!r}{'...' if len(value) > 40 else ''} is too long; the longest is 87600h"
        )
    return _bounded(_parse_text(value), value)


def _bounded(seconds: Decimal | int | float, written: object) -> float:
    """Refuse what is over the bound (checked first, so the rounding never sees a huge number), then
    round to the whole microsecond (format 1.1 "Time")."""
    if seconds > MAX_DURATION_SECONDS:
        shown = written if isinstance(written, str) else f"{written}s"
        raise ValueError(f"duration {shown!r} is longer than 10 years (87600h), the longest allowed")
    if isinstance(seconds, Decimal):
        return float(seconds.quantize(_MICROSECOND, rounding=ROUND_HALF_EVEN))
    return round(float(seconds), 6)


def _parse_text(text: str) -> Decimal:
    body = text.strip()
    if not body:
        raise ValueError(f"empty duration; {_HINT}")
    if body.startswith("-"):
        raise ValueError(f"duration {text!r} is negative")
    if _NUMBER.fullmatch(body):
        return Decimal(body)
    total = Decimal(0)
    position = 0
    last_unit = -1
    for match in _PART.finditer(body):
        if match.start() != position:
            break
        unit_rank = _UNIT_ORDER.index(match.group(2))
        if unit_rank <= last_unit:
            raise ValueError(f"duration {text!r}: units must go from largest to smallest, each once")
        last_unit = unit_rank
        try:
            total += Decimal(match.group(1)) * _UNITS[match.group(2)]
        except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimal literals
            raise ValueError(f"duration {text!r}: {exc}") from None
        position = match.end()
    if position != len(body) or position == 0:
        raise ValueError(f"cannot read {text!r} as a duration; {_HINT}")
    return total


def format_duration(seconds: float) -> str:
    """The shortest-readable duration string that :func:`parse_duration` maps back to ``seconds``.

    Whole milliseconds render with units (``1h30m``, ``1m30.25s``, ``250ms``); any other float renders
    as exact decimal seconds so the round trip is lossless.
    """
    if seconds < 0 or math.isnan(seconds) or math.isinf(seconds):
        raise ValueError(f"cannot format {seconds!r} as a duration")
    exact = Decimal(repr(float(seconds)))
    millis = exact * 1000
    if millis != millis.to_integral_value():
        return f"{format(exact, 'f')}s"
    total_ms = int(millis)
    if total_ms == 0:
        return "0s"
    hours, rest = divmod(total_ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    parts = [f"{hours}h"] if hours else []
    if minutes:
        parts.append(f"{minutes}m")
    if rest and not parts and rest < 1000:
        parts.append(f"{rest}ms")
    elif rest:
        parts.append(f"{format((Decimal(rest) / 1000).normalize(), 'f')}s")
    return "".join(parts)


def format_seconds(seconds: float) -> str:
    """A virtual time or delay for reports: ``12.0s``, ``0.25s``; compact but never misleadingly rounded."""
    if math.isinf(seconds):
        return "never"
    if abs(seconds * 10 - round(seconds * 10)) < 1e-9:
        return f"{seconds:.1f}s"
    return f"{seconds:.3f}".rstrip("0") + "s"
