"""Choosing what to run: ``-k``/``-m`` expressions over scenario files, and the seeds of a sweep.

The command line and the pytest plugin share these, so ``fakecluster run -m "smoke and not slow"`` picks
the files ``pytest -m "smoke and not slow"`` would. An expression is names joined by ``and``, ``or``,
``not`` and parentheses (pytest's ``-k``/``-m`` grammar); what a name means is the caller's predicate: a
case-insensitive substring of the path for ``-k``, a tag for ``-m``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["Expression", "sweep_seeds", "tag_names"]

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_KEYWORDS = ("and", "or", "not")


class Expression:
    """A parsed ``-k``/``-m`` expression; :meth:`evaluate` asks ``predicate`` about each name in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._tokens = _TOKEN.findall(text)
        self._pos = 0
        if not self._tokens:
            raise ValueError("empty expression")
        self._tree = self._or()
        if self._pos != len(self._tokens):
            raise ValueError(f"unexpected {self._tokens[self._pos]!r} in {text!r}")

    def evaluate(self, predicate: Callable[[str], bool]) -> bool:
        return _evaluate(self._tree, predicate)

    # recursive descent: or := and ('or' and)* ; and := not ('and' not)* ; not := 'not' not | atom
    def _peek(self) -> str | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise ValueError(f"{self.text!r} ends too early")
        self._pos += 1
        return token

    def _or(self) -> Any:
        return self._chain("or", self._and)

    def _and(self) -> Any:
        return self._chain("and", self._not)

    def _chain(self, op: str, operand: Callable[[], Any]) -> Any:
        """``operand (op operand)*``, grouped to the left."""
        node = operand()
        while self._peek() == op:
            self._take()
            node = (op, node, operand())
        return node

    def _not(self) -> Any:
        if self._peek() == "not":
            self._take()
            return ("not", self._not())
        token = self._take()
        if token == "(":
            node = self._or()
            if self._take() != ")":
                raise ValueError(f"missing ')' in {self.text!r}")
            return node
        if token in (")", *_KEYWORDS):
            raise ValueError(f"unexpected {token!r} in {self.text!r}")
        return ("name", token)


def _evaluate(node: Any, predicate: Callable[[str], bool]) -> bool:
    op = node[0]
    if op == "name":
        return predicate(node[1])
    if op == "not":
        return not _evaluate(node[1], predicate)
    if op == "and":
        return _evaluate(node[1], predicate) and _evaluate(node[2], predicate)
    return _evaluate(node[1], predicate) or _evaluate(node[2], predicate)


def tag_names(tags: list[str]) -> set[str]:
    """The names a tag answers to: as written and with non-word characters as ``_`` (pytest markers)."""
    return {t for tag in tags for t in (tag, re.sub(r"\W", "_", tag))}


def sweep_seeds(own_seed: object, override: int | None, count: int) -> list[int | None]:
    """The seeds to play a scenario with. ``count == 1``: just the override (None keeps the file's own
    seed). A sweep of ``count`` seeds starts at the override, else at the file's own seed (0 if unset)."""
    if count <= 1:
        return [override]
    base = override if override is not None else (own_seed if type(own_seed) is int else 0)
    return list(range(base, base + count))
