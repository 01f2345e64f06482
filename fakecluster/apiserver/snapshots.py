"""Proof that nobody mutates a read-only snapshot: the debug mode behind the client seam's promise.

The API server never changes a stored object in place (every write stores a new dict), so what a read,
a write or a watch event hands out is the stored object itself, shared by every reader, as
controller-runtime's cache does with ``UnsafeDisableDeepCopy``. That is only sound if no reader changes
what it was handed; a caller that wants to change an object copies it first
(:func:`fakecluster.api.objects.clone`).

:class:`SnapshotGuard` checks that promise. With it on, the server keeps a private deep copy of every
object version it stores (taken when the version is stored, before anyone can touch it), notes every
version it hands out, and before each write (and at the end of each :meth:`Cluster.run
<fakecluster.cluster.Cluster.run>`) compares the versions handed out since the last check with their
copies: a difference raises :class:`SnapshotMutated` naming the object and the first changed field. A
mutation is caught at the next write after the read it followed, which is where a read-modify-write bug
sits; a reader that keeps an object and changes it later is caught the next time that version is handed
out again.

On in the test suite (the root ``conftest.py`` sets :data:`ENV_VAR`), off by default: off, the server pays
one ``is None`` test per call. On, each stored version costs a deep copy, which is why benchmarks run
without it.
"""

from __future__ import annotations

import os
from typing import Any

from fakecluster.api.objects import Obj, clone, shared_ends

ENV_VAR = "FAKECLUSTER_CHECK_SNAPSHOTS"
"""Set to ``1`` to construct every :class:`~fakecluster.apiserver.server.ApiServer` with a guard."""


def enabled_by_environment() -> bool:
    return os.environ.get(ENV_VAR, "") not in ("", "0")


class SnapshotMutated(AssertionError):
    """A caller changed an object the API server handed out as a shared read-only snapshot."""


class KeptEndsWrong(AssertionError):
    """A donating caller's ``kept_ends`` claimed items it had not kept (see :meth:`SnapshotGuard.
    check_kept_ends`)."""


def _first_difference(now: Any, then: Any, path: str) -> str:
    if isinstance(now, dict) and isinstance(then, dict):
        for key in sorted(set(now) | set(then), key=str):
            if key not in now or key not in then or now[key] != then[key]:
                return _first_difference(now.get(key), then.get(key), f"{path}.{key}" if path else str(key))
    if isinstance(now, list) and isinstance(then, list) and len(now) == len(then):
        for i, (a, b) in enumerate(zip(now, then, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return path or "<root>"


class SnapshotGuard:
    """Pristine copies of stored versions, and the versions handed out since the last :meth:`verify`."""

    __slots__ = ("_handed", "_pristine")

    def __init__(self) -> None:
        self._pristine: dict[int, tuple[Obj, Obj]] = {}
        """``id(version)`` -> (the version, its copy when stored); holding the version keeps its id unique."""
        self._handed: dict[int, None] = {}

    def stored(self, obj: Obj) -> None:
        """``obj`` became a stored version (or the last state of a deleted object)."""
        self._pristine[id(obj)] = (obj, clone(obj))

    def handed(self, obj: Obj | None) -> None:
        """``obj`` went to a caller: compare it at the next check."""
        if obj is not None:
            self._handed[id(obj)] = None

    def check_kept_ends(self, old: Obj, new: Obj, field: str, found: tuple[int, int]) -> None:
        """The other promise a donating writer makes: the leading and trailing items of ``field`` it
        said it kept are the stored version's very objects (the server skips them). Then the ends the
        server ``found`` from that claim are the ones a scan of both whole lists finds; raise
        :class:`KeptEndsWrong` if not."""
        scanned = shared_ends(old.get(field) or [], new.get(field) or [])
        if scanned != found:
            meta = old.get("metadata") or {}
            raise KeptEndsWrong(
                f"{old.get('kind')} {meta.get('namespace')}/{meta.get('name')}: the writer's kept_ends "
                f"led to {found} shared items at the ends of {field}, a scan finds {scanned}")

    def verify(self) -> None:
        """Raise :class:`SnapshotMutated` if a version handed out since the last check has changed."""
        if not self._handed:
            return
        handed, self._handed = self._handed, {}
        for ident in handed:
            entry = self._pristine.get(ident)
            if entry is None:
                continue
            obj, copy = entry
            if obj != copy:
                meta = copy.get("metadata") or {}
                name = meta.get("name")
                where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
                changed = _first_difference(obj, copy, "")
                raise SnapshotMutated(
                    f"{copy.get('kind')} {where} (resourceVersion {meta.get('resourceVersion')}) was changed "
                    f"after the API server handed it out, at {changed}: reads, writes and watch events "
                    "return shared read-only snapshots; clone() an object before changing it"
                )
