"""Where a ``{file: path}`` manifest reference may point: inside the scenario's tree, unless allowed.

A scenario file is shared like code, so it must not be able to read ``../../../secret``, ``/etc/shadow``
or ``/proc/self/environ`` just by naming them (and then have a validation error quote what they hold).
The tree root is the nearest ancestor of the scenario's folder holding ``pyproject.toml`` or ``.git`` (the
project the scenario belongs to), else the scenario's own folder. The reference is resolved with every
symlink followed *before* the containment check, so a link inside the tree pointing out of it is refused
too. Extra directories are allowed only explicitly (``--allow-dir`` on the CLI and under pytest).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from fakecluster.scenario.errors import escape_control

__all__ = ["RefusedReference", "resolve_reference", "tree_root"]

_ROOT_MARKERS = ("pyproject.toml", ".git")


class RefusedReference(Exception):
    """A reference that may not be read; the message never contains the target's content."""


@lru_cache(maxsize=256)
def _root_of(folder: Path) -> Path:
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
            return candidate
    return folder


def tree_root(scenario_file: Path) -> Path:
    """The root of the tree ``scenario_file`` belongs to (symlinks resolved)."""
    return _root_of(Path(scenario_file).resolve().parent)


def resolve_reference(ref: str, scenario_file: Path, allowed_dirs: Iterable[Path] = ()) -> Path:
    """The real path ``ref`` (relative to the scenario's folder) names, if it is inside the tree root or
    one of ``allowed_dirs``; else :class:`RefusedReference` saying why and how to allow it."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in ref):
        raise RefusedReference("the path contains a control character")
    base = Path(scenario_file).resolve().parent
    try:
        target = (base / ref).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, an over-long name
        raise RefusedReference(f"the path cannot be resolved ({type(exc).__name__})") from None
    roots = [tree_root(scenario_file), *(Path(d).resolve() for d in allowed_dirs)]
    if any(target == root or root in target.parents for root in roots):
        return target
    shown = escape_control(str(roots[0]))
    raise RefusedReference(
        f"it resolves outside the scenario tree ({shown}); references must stay inside the folder holding"
        " pyproject.toml or .git, or pass --allow-dir DIR (pytest: --allow-dir DIR) to allow another folder"
    )
