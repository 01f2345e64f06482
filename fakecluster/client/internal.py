"""The cluster's own components' extra verbs: performance only, never a skipped check.

The emulated kubelet writes a pod status for every transition of every pod, and the emulated Job
controller creates thousands of pods from one template; done through :class:`~fakecluster.client.
protocol.Client` alone, the API server would deep-copy each status and schema-validate each pod's whole
template again. :class:`InternalClient` adds what lets them skip *copies* and *repeated* work, and
nothing else:

- ``update_status_donated``: the caller hands its freshly built status over and never touches it again,
  so the server stores it uncopied (still validated against the status schema);
- ``update_donated``: the same for a whole object (the EndpointSlice controller builds each slice
  version afresh from endpoint objects it never changes): stored uncopied, and of its list items only
  those the stored version does not already hold are schema-checked again (all of them on a first write);
  with ``kept_ends``, the caller also says at least how many items at each end of the list are the
  stored version's, and the server looks for the others between those ends only. That claim is
  trusted as the donation itself is (that nothing handed over changes later); with the snapshot guard
  on, as in the test suite, the server checks both (:mod:`fakecluster.apiserver.snapshots`);
- ``validated_spec`` + ``create_donated(obj, template=...)``: the server validates a pod template's
  spec once and keeps a private copy; each pod built from it is then checked in full except for the
  spec fields that are the template's very values (metadata, ``hostname``, whatever an admission hook
  changed are validated per pod), and, being handed over, is not deep-copied.

The JobSet controller codes against the plain protocol and never sees this module (an import-linter
contract in ``pyproject.toml`` holds it to that); a controller test fake must not be kinder to the
controller under test than a real API server would be.
"""

from __future__ import annotations

from typing import Protocol

from fakecluster.api.objects import Obj
from fakecluster.apiserver.server import ValidatedSpec
from fakecluster.client.protocol import Client

__all__ = ["InternalClient", "ValidatedSpec"]


class InternalClient(Client, Protocol):
    """:class:`Client` plus the copy-saving verbs of the kubelet and the Job controller."""

    def update_status_donated(self, obj: Obj) -> Obj:
        """``update_status``, the caller giving up ``obj["status"]`` (stored as is, never touched again)."""
        ...

    def update_donated(self, obj: Obj, *, kept_ends: tuple[int, int] | None = None) -> Obj:
        """``update``, the caller giving up ``obj`` (nothing it shares is ever changed).

        ``kept_ends``: for a kind with item lists (an EndpointSlice), at least how many leading and
        trailing items of the first item list are the stored version's very objects, as the caller
        knows from what it changed since its last write; the server then looks for the changed items
        only between those ends (see :func:`~fakecluster.apiserver.item_updates.short_update`)."""
        ...

    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        """Have the server validate ``spec`` as a ``kind``'s spec (and ``metadata`` as metadata fields its
        objects share) once; raises ``Invalid`` if they are not."""
        ...

    def create_donated(self, obj: Obj, *, template: ValidatedSpec | None = None) -> Obj:
        """``create``, the caller giving up ``obj`` (nothing it shares is ever changed), its spec built
        from ``template``'s."""
        ...
