"""Errors a scenario author sees: one line that says where (file, line, field path) and what is wrong.

A scenario file is user input, so every problem in it must end up as a :class:`ScenarioError` with a
location, never as a traceback. Validators deep inside the pydantic models only know the *relative* field
they complain about; they raise :class:`FieldProblem` (a ``ValueError``, so pydantic wraps it) and the
loader appends its ``sub_path`` to pydantic's location before looking up the line number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "MAX_PROBLEMS", "FieldProblem", "ScenarioError", "ScenarioProblems", "combine", "escape_control",
    "join_path", "nearest_line",
]  # fmt: skip

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

MAX_PROBLEMS = 20
"""How many problems one error lists: enough to fix a file in one go, few enough to read."""


class ScenarioError(Exception):
    """A problem in a scenario file, rendered as ``<file>:<line>: <field_path>: <message>``.

    Parts that are unknown are left out, so the string is always a single line that editors and CI
    annotations can parse. ``file`` is ``None`` only for scenarios built in memory (tests, the runner's
    own helpers); :func:`~fakecluster.scenario.loader.load_scenario` always sets it.
    """

    file: Path | None
    field_path: str
    message: str
    line: int | None

    def __init__(
        self,
        message: str,
        *,
        file: Path | None = None,
        field_path: str = "",
        line: int | None = None,
    ) -> None:
        self.file = file
        self.field_path = field_path
        self.message = escape_control(" ".join(message.split()))
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        parts: list[str] = []
        if self.file is not None:
            file = escape_control(str(self.file))
            parts.append(f"{file}:{self.line}" if self.line is not None else file)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.field_path:
            parts.append(self.field_path)
        parts.append(self.message)
        return ": ".join(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScenarioError) and str(other) == str(self)

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[object, ...]:
        """Keep the keyword-only constructor picklable (pytest-xdist ships errors between processes)."""
        return (_rebuild, (self.message, self.file, self.field_path, self.line))


def _rebuild(message: str, file: Path | None, field_path: str, line: int | None) -> ScenarioError:
    return ScenarioError(message, file=file, field_path=field_path, line=line)


class ScenarioProblems(ScenarioError):
    """Every problem one pass over a file found, so the author fixes them all in one run.

    ``str()`` is one ``file:line: field: message`` line per problem, in line order per file, capped at
    :data:`MAX_PROBLEMS`; the location attributes are those of the first problem."""

    def __init__(self, problems: Sequence[ScenarioError]) -> None:
        files = list(dict.fromkeys(p.file for p in problems))  # grouped by file, in order of appearance
        ordered = sorted(problems, key=lambda p: (files.index(p.file), p.line is None, p.line or 0))
        self.problems = list(dict.fromkeys(ordered))
        first = self.problems[0]
        super().__init__(first.message, file=first.file, field_path=first.field_path, line=first.line)

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems[:MAX_PROBLEMS]]
        if len(self.problems) > MAX_PROBLEMS:
            lines.append(f"... and {len(self.problems) - MAX_PROBLEMS} more problems")
        return "\n".join(lines)

    def __hash__(self) -> int:
        return hash(str(self))

    def __reduce__(self) -> tuple[object, ...]:
        return (ScenarioProblems, (self.problems,))


def combine(problems: Sequence[ScenarioError]) -> ScenarioError:
    """One error for several problems (flattening nested ones); a single problem stays itself."""
    flat: list[ScenarioError] = []
    for problem in problems:
        flat.extend(problem.problems if isinstance(problem, ScenarioProblems) else [problem])
    return flat[0] if len(flat) == 1 else ScenarioProblems(flat)


class FieldProblem(ValueError):
    """A validator's complaint about a field *below* the one pydantic is validating.

    Pydantic locates an error at the field (or model) whose validator raised it; a cross-field check
    such as "both ``jobset`` and ``jobsets`` are given" runs on the whole model but is about one key.
    ``sub_path`` (e.g. ``"jobsets"`` or ``"evictPod"``) is appended to pydantic's location.
    """

    def __init__(self, message: str, sub_path: str = "") -> None:
        super().__init__(message)
        self.sub_path = sub_path


def escape_control(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1, line/paragraph separators) written as ``\\x1b``
    escapes: a name or path from a scenario file is printed to a terminal, where ``ESC [`` sequences
    would repaint it and a newline would forge a second report line."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                        else f"\\u{ord(m.group()):04x}", text)


def join_path(path: str, key: str | int) -> str:
    """Extend a field path the way the docs write them: ``pods[0].exit.after``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def nearest_line(lines: dict[str, int], field_path: str) -> int | None:
    """The line of ``field_path``, or of its nearest enclosing field that has one (a missing key is
    reported at its parent mapping)."""
    path = field_path
    while path:
        if path in lines:
            return lines[path]
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else ""
    return None
