"""What a container's command would do, for the commands whose outcome is obvious without running them.

JobSet examples and tests are full of ``sleep 30`` and ``sh -c 'echo start; sleep 10'`` containers; a
fake kubelet that understood nothing would leave them running forever and no Job would ever complete.
So the emulated runtime reads the command line: a container whose program is only ``sleep`` (GNU
coreutils semantics: several operands are summed, suffixes ``s``/``m``/``h``/``d``, fractions allowed,
``infinity``) or a shell script of ``echo``/``printf``/``true``/``:``/``sleep``/``exit N`` steps exits
after the summed sleeps with the script's exit code. Anything else is "unknown": the container runs
until it is killed, unless the scenario's ``exit`` rule says otherwise.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache

from fakecluster.api.objects import Obj

_SHELLS = frozenset({"sh", "bash", "ash", "dash", "/bin/sh", "/bin/bash", "/bin/ash", "/bin/dash",
                     "/usr/bin/sh", "/usr/bin/bash"})
_SLEEPS = frozenset({"sleep", "/bin/sleep", "/usr/bin/sleep"})
_NO_OPS = frozenset({"echo", "printf", "true", ":", "date", "hostname", "/bin/echo", "/bin/true"})
_SHELL_FLAGS = re.compile(r"-[a-z]*c[a-z]*")
_SLEEP_OPERAND = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """The container exits ``exit_code`` after ``seconds`` of running (``math.inf``: never)."""

    seconds: float
    exit_code: int = 0


def command_outcome(container: Obj) -> CommandOutcome | None:
    """Outcome of ``container``'s command line, or None when it is not one we can read.

    ``command`` replaces the image ENTRYPOINT and ``args`` its CMD. Without ``command`` we assume an image
    whose ENTRYPOINT is empty (busybox, ubuntu, python...), so ``args`` is the whole command line.
    """
    argv = (*(container.get("command") or ()), *(container.get("args") or ()))
    if not argv:
        return None
    for arg in argv:  # (not all() over a generator: a resumption from C per word, at every start)
        if not isinstance(arg, str):
            return None
    return _argv_outcome(argv)


@lru_cache(maxsize=1024)
def _argv_outcome(argv: tuple[str, ...]) -> CommandOutcome | None:
    program = argv[0]
    if program in _SLEEPS:
        seconds = sleep_seconds(argv[1:])
        return None if seconds is None else CommandOutcome(seconds)
    if program in _SHELLS and len(argv) >= 3 and _SHELL_FLAGS.fullmatch(argv[1]):
        return script_outcome(argv[2])
    return None


def sleep_seconds(operands: tuple[str, ...] | list[str]) -> float | None:
    """GNU ``sleep`` operands → seconds (summed), ``math.inf`` for ``infinity``, None if unreadable."""
    if not operands:
        return None
    total = 0.0
    for operand in operands:
        if operand in ("inf", "infinity"):
            return math.inf
        match = _SLEEP_OPERAND.fullmatch(operand)
        if match is None:
            return None
        total += float(match.group(1)) * _SLEEP_UNITS[match.group(2)]
    return total


def script_outcome(script: str) -> CommandOutcome | None:
    """A ``sh -c`` script made only of harmless steps, sleeps and an optional ``exit N``."""
    steps = _split_steps(script)
    if steps is None:
        return None
    seconds = 0.0
    for step in steps:
        try:
            words = shlex.split(step)
        except ValueError:
            return None
        if not words:
            continue
        if words[0] in _NO_OPS:
            continue
        if words[0] in _SLEEPS:
            slept = sleep_seconds(words[1:])
            if slept is None:
                return None
            seconds += slept
            continue
        if words[0] == "exit" and len(words) <= 2:
            code = words[1] if len(words) == 2 else "0"
            return CommandOutcome(seconds, int(code) % 256) if code.isdigit() else None
        return None
    return CommandOutcome(seconds)


def _split_steps(script: str) -> list[str] | None:
    """Split on ``;``, ``&&`` and newlines outside quotes; None if the script uses any other shell
    control (pipes, ``||``, background jobs, subshells, loops are not ours to interpret)."""
    steps: list[str] = []
    current: list[str] = []
    quote = ""
    i = 0
    while i < len(script):
        char = script[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"' and i + 1 < len(script):
                current.append(char)
                i += 1
                char = script[i]
            current.append(char)
        elif char in "'\"":
            quote = char
            current.append(char)
        elif char in ";\n":
            steps.append("".join(current))
            current = []
        elif script.startswith("&&", i):
            steps.append("".join(current))
            current = []
            i += 1
        elif char in "|&()`{}<>" or (char == "$" and script.startswith("$(", i)):
            return None
        else:
            current.append(char)
        i += 1
    if quote:
        return None
    steps.append("".join(current))
    return steps
