"""The admission chain of the fake API server: per kind, mutating webhooks then validating ones
(k8s.io/apiserver/pkg/admission: the mutating phase runs before the schema and strategy validation, the
validating phase after it), each limited to the operations it registered for."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj

MutatingHook = Callable[[str, Obj, Obj | None], Obj | None]
ValidatingHook = Callable[[str, Obj, Obj | None], None]


@dataclass(slots=True)
class Admission:
    name: str
    mutating: MutatingHook | None
    validating: ValidatingHook | None
    operations: tuple[str, ...]
    copies_on_write: bool
    in_tree: bool = False
    """An in-tree admission plugin (Priority, ...): its refusals are not prefixed like a webhook's."""


class AdmissionChain:
    """Webhooks per kind, in registration order."""

    def __init__(self) -> None:
        self.hooks: dict[str, list[Admission]] = {}

    def register(
        self,
        kind: str,
        name: str,
        *,
        mutating: MutatingHook | None = None,
        validating: ValidatingHook | None = None,
        operations: Iterable[str] = ("CREATE", "UPDATE"),
        copies_on_write: bool = False,
        in_tree: bool = False,
    ) -> None:
        """Add a webhook to the chain for ``kind``. Mutating hooks all run before validating ones, and
        the schema check runs after the mutating ones, on what they made of the object.

        ``copies_on_write``: the mutating hook returns a new object rather than changing anything nested
        in place (as every UPDATE hook must, its input sharing subtrees with the stored object), so a
        donated create (``create(donate=True)``) need not be deep-copied for it."""
        self.hooks.setdefault(kind, []).append(
            Admission(name, mutating, validating, tuple(operations), copies_on_write, in_tree))

    def create_mutators(self, kind: str) -> list[Admission]:
        """The mutating webhooks a CREATE of ``kind`` runs."""
        return [h for h in self.hooks.get(kind, ()) if h.mutating is not None and "CREATE" in h.operations]

    def admit(self, op: str, kind: str, obj: Obj, old: Obj | None, *, mutate: bool) -> Obj:
        for hook in self.hooks.get(kind, ()):
            if op not in hook.operations:
                continue
            fn = hook.mutating if mutate else hook.validating
            if fn is None:
                continue
            try:
                result = fn(op, obj, old)
            except ApiError as err:
                if hook.in_tree:
                    raise
                raise err.with_prefix(f'admission webhook "{hook.name}" denied the request: ') from None
            if mutate and result is not None:
                obj = result
        return obj

