"""Which YAML files are scenarios: the one rule the CLI, the pytest plugin and the golden digests share.

Users keep a JobSet manifest next to the scenario that references it with ``{file: ...}``; a file whose
top level is a Kubernetes object (``apiVersion`` and ``kind``) is therefore a manifest, not a broken
scenario. Peeking reads the YAML without validating it, so a broken scenario is still found (and fails
with its own located error when it is loaded).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fakecluster.scenario.reading import (
    UNDECIDED,
    UnreadableFile,
    YamlProblem,
    manifest_kind_of,
    parse_bounded_yaml,
    read_bounded_text,
)

__all__ = ["SCENARIO_SUFFIXES", "discover", "is_manifest", "manifest_kind", "peek"]

SCENARIO_SUFFIXES = (".yaml", ".yml")


def peek(path: Path) -> Any:
    """The YAML document of a file, or None if it cannot be read or parsed (not an error here).

    Read with the loader's bounds (:mod:`~fakecluster.scenario.reading`: size, depth, aliases, regular
    files only), so discovering a hostile file cannot hang or exhaust memory."""
    try:
        return parse_bounded_yaml(read_bounded_text(path))[1]
    except (UnreadableFile, YamlProblem):  # MultipleDocuments is a YamlProblem
        return None


def manifest_kind(data: Any) -> str | None:
    """The ``kind`` of a Kubernetes manifest (top-level ``apiVersion`` and ``kind``), else None."""
    if isinstance(data, dict) and "apiVersion" in data and isinstance(data.get("kind"), str):
        return str(data["kind"])
    return None


def is_manifest(path: Path) -> bool:
    """``manifest_kind(peek(path)) is not None``, decided from the parser's events when they suffice
    (:func:`~fakecluster.scenario.reading.manifest_kind_of`): discovery asks it of every file."""
    try:
        text = read_bounded_text(path)
    except UnreadableFile:
        return False
    kind = manifest_kind_of(text)
    if kind is not UNDECIDED:
        return kind is not None
    try:
        return manifest_kind(parse_bounded_yaml(text)[1]) is not None
    except YamlProblem:
        return False


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Scenario files under the given files/folders (folders: sorted, manifests left out; a file given
    by name is taken as a scenario); and the paths that do not exist."""
    files: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        try:
            if path.is_dir():
                found = sorted(p for p in path.rglob("*") if p.suffix in SCENARIO_SUFFIXES and p.is_file())
                files.extend(p for p in found if not is_manifest(p))
            elif path.exists():
                files.append(path)  # named explicitly: a FIFO or device fails as that scenario, with why
            else:
                missing.append(path)
        except (OSError, ValueError):  # a NUL in the name, an unreadable folder
            missing.append(path)
    return files, missing
