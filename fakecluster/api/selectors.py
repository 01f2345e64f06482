"""Label selectors: ``metav1.LabelSelector`` objects and the string form of ``labels.Parse``.

Semantics from apimachinery: requirements are ANDed; ``NotIn``/``!=`` match objects lacking the key;
an empty selector matches everything and a nil ``LabelSelector`` matches nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fakecluster.api.errors import BadRequest


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        raise BadRequest(f"{op!r} is not a valid label selector operator")


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...]
    match_nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.match_nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def equality_terms(self) -> list[tuple[str, str]]:
        """``key=value`` requirements, which an index can answer without a scan."""
        return [(r.key, r.values[0]) for r in self.requirements if r.operator == "In" and len(r.values) == 1]


EVERYTHING = Selector(())
NOTHING = Selector((), match_nothing=True)


def from_label_selector(sel: Mapping[str, Any] | None) -> Selector:
    """metav1.LabelSelectorAsSelector: nil → nothing, {} → everything."""
    if sel is None:
        return NOTHING
    reqs = [Requirement(k, "In", (str(v),)) for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or ():
        op = expr.get("operator")
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise BadRequest(f'"{op}" is not a valid label selector operator')
        reqs.append(Requirement(expr["key"], op, tuple(str(v) for v in expr.get("values") or ())))
    return Selector(tuple(reqs))


def from_match_labels(labels: Mapping[str, str]) -> Selector:
    return Selector(tuple(Requirement(k, "In", (v,)) for k, v in sorted(labels.items())))


_SET_RE = re.compile(
    r"^\s*(!?)([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\)|(==|=|!=)\s*([A-Za-z0-9_.-]*))?\s*$"
)


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return [t for t in terms if t.strip()]


def parse(text: str) -> Selector:
    """labels.Parse: ``a=b,c!=d,e in (x,y),f notin (z),g,!h``."""
    reqs = []
    for term in _split_terms(text):
        m = _SET_RE.match(term)
        if not m:
            raise BadRequest(f"unable to parse requirement: {term.strip()!r}")
        negate, key, set_op, set_values, eq_op, eq_value = m.groups()
        if negate:
            if set_op or eq_op:
                raise BadRequest(f"unable to parse requirement: {term.strip()!r}")
            reqs.append(Requirement(key, "DoesNotExist"))
        elif set_op:
            values = tuple(v.strip() for v in set_values.split(",") if v.strip())
            reqs.append(Requirement(key, "In" if set_op == "in" else "NotIn", values))
        elif eq_op:
            reqs.append(Requirement(key, "NotIn" if eq_op == "!=" else "In", (eq_value,)))
        else:
            reqs.append(Requirement(key, "Exists"))
    return Selector(tuple(reqs))


def as_selector(value: Selector | Mapping[str, Any] | str | None) -> Selector:
    """Accept what callers naturally have: a parsed selector, a string, or a ``matchLabels`` map."""
    if value is None:
        return EVERYTHING
    if isinstance(value, Selector):
        return value
    if isinstance(value, str):
        return parse(value)
    if "matchLabels" in value or "matchExpressions" in value:
        return from_label_selector(value)
    return from_match_labels({str(k): str(v) for k, v in value.items()})
