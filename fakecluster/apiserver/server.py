"""The fake API server: Kubernetes write semantics over an in-memory store.

What it reproduces (reference: shared/reference/kubernetes.md §5): uid and generateName, a global
resourceVersion bumped per persisted write (a no-op write bumps nothing and notifies nobody), generation
bumped on spec change only, the status subresource, optimistic concurrency, NotFound / AlreadyExists /
Conflict / Invalid errors, finalizers and deletionTimestamp, deletion propagation policies (the garbage
collector in :mod:`gc` does the cascading), an admission chain (mutating, then validating) per kind,
and watches that deliver ADDED / MODIFIED / DELETED in resourceVersion order.

Stored objects are never mutated in place: every write stores a new dict (copy-on-write), so a watcher
may keep the objects it was handed as read-only snapshots, and unchanged subtrees (a pod's spec on a
status write) are shared between versions instead of copied.
"""

from __future__ import annotations

import json
import random
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fakecluster.api.objects import Obj, clone, merge_patch
from fakecluster.apiserver import errors
from fakecluster.apiserver.errors import ApiError, FieldError
from fakecluster.apiserver.eviction import evict_pod
from fakecluster.apiserver.metadata_checks import (
    MAX_GRACE_PERIOD_SECONDS,
    SPECIAL_NAME_KINDS,
    check_delete_options,
    check_metadata_types,
    job_name_errors,
    label_errors,
    name_errors,
    namespace_errors,
)
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.selectors import Selector, as_selector
from fakecluster.clock import Clock, parse_rfc3339, rfc3339

Key = tuple[str, str]  # (namespace, name)
Handler = Callable[["WatchEvent"], None]
MutatingHook = Callable[[str, Obj, Obj | None], Obj | None]
ValidatingHook = Callable[[str, Obj, Obj | None], None]

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver/pkg/storage/names
_MAX_GENERATED_NAME_PREFIX = 58
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_ABSENT = object()
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


def _go_string_slice(values: Iterable[str]) -> str:
    """Go's ``%#v`` of a ``[]string``, as upstream messages embed it: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"


def _uuid4(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))``, without building the UUID object: every create draws
    one, and ``UUID.__init__``'s argument checks cost more than the formatting."""
    bits = ((bits & ~(0xC000 << 48)) | (0x8000 << 48))  # the RFC 4122 variant
    bits = ((bits & ~(0xF000 << 64)) | (4 << 76))  # version 4
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _owner_reference_errors(meta: Obj) -> list[FieldError]:
    """validateOwnerReference's required fields, for kinds whose schema did not already reject the object
    (the garbage collector relies on every reference naming a uid)."""
    errs = []
    for ref in meta.get("ownerReferences") or ():
        for field_name, detail in (
            ("apiVersion", "version must not be empty"),
            ("kind", "must not be empty"),
            ("name", "must not be empty"),
            ("uid", "must not be empty"),
        ):
            value = ref.get(field_name) or ""
            if not value:
                errs.append(FieldError.invalid(f"metadata.ownerReferences.{field_name}", value, detail))
    return errs


class _GoUint64(int):
    """A Go ``uint64`` as a field error's bad value: ``field.Error`` prints types other than int32/int64
    with ``%#v``, which renders it in hex (``Invalid value: 0x0``)."""

    def __str__(self) -> str:
        return hex(self)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch notification. ``object`` and ``old`` are the store's read-only snapshots."""

    type: str  # ADDED | MODIFIED | DELETED
    kind: str
    object: Obj
    old: Obj | None


@dataclass(slots=True)
class _Admission:
    name: str
    mutating: MutatingHook | None
    validating: ValidatingHook | None
    operations: tuple[str, ...]
    keeps_schema_valid: bool
    copies_on_write: bool
    in_tree: bool = False
    """An in-tree admission plugin (Priority, ...): its refusals are not prefixed like a webhook's."""


class ApiServer:
    """In-memory API server. One per run; all randomness (uids, generated names) from ``rng``."""

    def __init__(self, clock: Clock, rng: random.Random) -> None:
        self.clock = clock
        self._rng = rng
        self._types: dict[str, ResourceType] = {}
        self._objects: dict[str, dict[Key, Obj]] = {}
        self._by_uid: dict[str, tuple[str, Key]] = {}
        self._by_owner: dict[str, dict[tuple[str, Key], None]] = {}
        self._owned_in_order: dict[str, dict[tuple[str, str | None], list[Key]]] = {}
        """Per owner uid, per (kind, namespace filter): the dependents' keys in key order, as ``list`` by
        ``owner_uid`` returns them. A Job's sync lists its pods by owner every time while the set of
        pods rarely changes, so the sorted keys are kept until a dependent of that owner comes or goes."""
        self._label_index: dict[str, dict[tuple[str, str], dict[Key, None]]] = {}
        """Per kind, keys by ``(label, value)``: built the first time a kind is listed by a label
        selector, then kept current. Nothing in the cluster itself lists by label, so a run that never
        does skips the per-label bookkeeping on every create (a JobSet pod carries ~17 labels)."""
        self._valid_specs: dict[tuple[str, Key], Obj] = {}
        """For kinds whose stored objects always pass the schema (``ResourceType.stored_valid``): the
        spec object each stored object has, so a patch that keeps it validates only what it changes."""
        self._admission: dict[str, list[_Admission]] = {}
        self._watchers: dict[str, list[Handler]] = {}
        self._all_watchers: list[Handler] = []
        self._targets: dict[str, tuple[Handler, ...]] = {}
        """Per kind, the handlers an event is delivered to (the kind's, then the all-kinds ones), built
        once instead of per event; :meth:`watch` drops it."""
        self._pending: deque[tuple[tuple[Handler, ...], WatchEvent]] = deque()
        self._dispatching = False
        self._rv = 0
        self.writes = 0
        self._valid_namespaces: set[str] = set()

    # ------------------------------------------------------------------ registration
    def register(self, rtype: ResourceType) -> None:
        self._types[rtype.kind] = rtype
        self._objects.setdefault(rtype.kind, {})

    def register_admission(
        self,
        kind: str,
        name: str,
        *,
        mutating: MutatingHook | None = None,
        validating: ValidatingHook | None = None,
        operations: Iterable[str] = ("CREATE", "UPDATE"),
        keeps_schema_valid: bool = False,
        copies_on_write: bool = False,
        in_tree: bool = False,
    ) -> None:
        """Add a webhook to the chain for ``kind``. Mutating hooks all run before validating ones.

        ``keeps_schema_valid``: the mutating hook only ever adds or changes values the kind's schema
        accepts, so an object vouched for as schema-valid (``create(schema_valid=True)``) stays so.
        ``copies_on_write``: it returns a new object rather than changing anything nested in place (as
        every UPDATE hook must, its input sharing subtrees with the stored object), so a donated create
        (``create(donate=True)``) need not be deep-copied for it."""
        self._admission.setdefault(kind, []).append(
            _Admission(name, mutating, validating, tuple(operations), keeps_schema_valid, copies_on_write,
                       in_tree))

    def resource(self, kind: str) -> ResourceType:
        try:
            return self._types[kind]
        except KeyError:
            raise errors.ApiError(
                404, "NotFound", f'the server could not find the requested resource (kind "{kind}")'
            ) from None

    def kinds(self) -> list[str]:
        return list(self._types)

    # ------------------------------------------------------------------ watch
    def watch(self, kind: str | None, handler: Handler) -> None:
        """Subscribe to every change of ``kind`` (None: all kinds), starting now."""
        if kind is None:
            self._all_watchers.append(handler)
        else:
            self._watchers.setdefault(kind, []).append(handler)
        self._targets.clear()

    def _notify(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        targets = self._targets.get(kind)
        if targets is None:
            targets = self._targets[kind] = (*self._watchers.get(kind, ()), *self._all_watchers)
        if not targets:
            return
        event = WatchEvent(etype, kind, obj, old)
        if self._dispatching:
            # Delivered after the current event, keeping resourceVersion order for every watcher.
            self._pending.append((targets, event))
            return
        self._dispatching = True
        try:
            if self._pending:  # left behind by a handler that raised: those go first
                self._pending.append((targets, event))
            else:
                for handler in targets:
                    handler(event)
            while self._pending:
                targets, event = self._pending.popleft()
                for handler in targets:
                    handler(event)
        finally:
            self._dispatching = False

    # ------------------------------------------------------------------ reads
    def get(self, kind: str, namespace: str, name: str) -> Obj:
        """The stored object (read-only; :class:`~fakecluster.client.Client` copies for callers)."""
        rtype = self.resource(kind)
        obj = self._objects[kind].get((namespace if rtype.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        return obj

    def get_by_uid(self, uid: str) -> Obj | None:
        where = self._by_uid.get(uid)
        return None if where is None else self._objects[where[0]].get(where[1])

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        selector: Selector | dict[str, Any] | str | None = None,
        owner_uid: str | None = None,
    ) -> list[Obj]:
        """Objects in key order (namespace, name), as etcd lists them. Read-only snapshots."""
        rtype = self.resource(kind)
        store = self._objects[kind]
        if owner_uid is not None and selector is None:
            return list(map(store.__getitem__, self._owned_keys(owner_uid, kind, namespace, rtype)))
        sel = as_selector(selector)
        if owner_uid is not None:
            keys: Iterable[Key] = [k for (kd, k) in self._by_owner.get(owner_uid, {}) if kd == kind]
        else:
            terms = sel.equality_terms() if selector is not None else []
            if terms:
                index = self._labels_of_kind(kind)
                keys = min((index.get(t, {}) for t in terms), key=len)
            else:
                keys = store.keys()
        if namespace and rtype.namespaced:  # "" means all namespaces, as in client-go
            keys = [k for k in keys if k[0] == namespace]
        out = []
        for key in sorted(keys):
            obj = store[key]
            if selector is None or sel.matches(obj["metadata"].get("labels") or {}):
                out.append(obj)
        return out

    def _labels_of_kind(self, kind: str) -> dict[tuple[str, str], dict[Key, None]]:
        index = self._label_index.get(kind)
        if index is None:
            index = self._label_index[kind] = {}
            for key, obj in self._objects[kind].items():
                for item in (obj["metadata"].get("labels") or {}).items():
                    index.setdefault(item, {})[key] = None
        return index

    def _owned_keys(self, owner_uid: str, kind: str, namespace: str | None, rtype: ResourceType) -> list[Key]:
        """Keys of ``kind`` objects referencing ``owner_uid`` (in ``namespace``, if given), in key order."""
        ns_filter = namespace if namespace and rtype.namespaced else None
        cached = self._owned_in_order.setdefault(owner_uid, {})
        keys = cached.get((kind, ns_filter))
        if keys is None:
            keys = sorted(k for (kd, k) in self._by_owner.get(owner_uid, {})
                          if kd == kind and (ns_filter is None or k[0] == ns_filter))
            cached[(kind, ns_filter)] = keys
        return keys

    def dependents(self, owner_uid: str) -> list[tuple[str, Obj]]:
        """Objects whose ownerReferences name ``owner_uid`` (the garbage collector's graph)."""
        out = []
        for kind, key in list(self._by_owner.get(owner_uid, {})):
            obj = self._objects[kind].get(key)
            if obj is not None:
                out.append((kind, obj))
        return out

    def count(self, kind: str) -> int:
        return len(self._objects.get(kind, {}))

    # ------------------------------------------------------------------ writes
    def _next_rv(self) -> str:
        self._rv += 1
        self.writes += 1
        return str(self._rv)

    def _admit(self, op: str, kind: str, obj: Obj, old: Obj | None, *, mutate: bool) -> Obj:
        for hook in self._admission.get(kind, ()):
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
                raise ApiError(
                    err.code,
                    err.reason,
                    f'admission webhook "{hook.name}" denied the request: {err.message}',
                    err.causes,
                ) from None
            if mutate and result is not None:
                obj = result
        return obj

    def _invalid(self, rtype: ResourceType, obj: Obj, errs: list[FieldError]) -> ApiError:
        name = obj.get("metadata", {}).get("name") or obj.get("metadata", {}).get("generateName", "")
        return errors.Invalid(rtype.kind, rtype.group, name, errs)

    def create(self, obj: Obj, *, schema_valid: bool = False, donate: bool = False) -> Obj:
        """POST. For the cluster's own emulated controllers, which build objects from parts the server
        already stored (see :class:`~fakecluster.controllers.job.pods.PodFactory`):

        - ``schema_valid``: the caller vouches that ``obj`` passes the kind's schema; unless a mutating
          admission hook that may break that runs, the per-object schema validation is skipped;
        - ``donate``: the caller hands ``obj`` over and never touches it again, and nobody changes what
          it shares with other objects; if the kind's strategy and hooks copy on write, the server
          copies only the object and its metadata instead of deep-copying it.

        Everything else (names, owner references, strategy validation, admission) runs as always."""
        if not isinstance(obj, dict):
            raise errors.BadRequest("the request body must be a JSON object")
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise errors.BadRequest("Object 'Kind' is missing in the request body")
        rtype = self.resource(kind)
        check_metadata_types(obj.get("metadata", {}))
        hooks = [h for h in self._admission.get(kind, ())
                 if h.mutating is not None and "CREATE" in h.operations]
        if donate and rtype.strategy.copies_on_write and all(h.copies_on_write for h in hooks):
            obj = dict(obj)
            if isinstance(obj.get("metadata"), dict):
                obj["metadata"] = dict(obj["metadata"])
        else:
            obj = clone(obj)
        version = obj.setdefault("apiVersion", rtype.api_version)
        if version != rtype.api_version:
            shown = version if isinstance(version, str) else json.dumps(version)
            raise errors.ApiError(404, "NotFound", f'no matches for kind "{kind}" in version "{shown}"')
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise self._invalid(rtype, obj, [FieldError.invalid("metadata", meta, "must be an object")])
        if meta.get("resourceVersion"):
            raise self._invalid(
                rtype,
                obj,
                [
                    FieldError.invalid(
                        "metadata.resourceVersion",
                        meta["resourceVersion"],
                        "resourceVersion should not be set on objects to be created",
                    )
                ],
            )
        if rtype.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        generated = not meta.get("name") and bool(meta.get("generateName"))
        if generated:
            meta["name"] = self._generate_name(meta["generateName"])
        obj = self._admit("CREATE", kind, obj, None, mutate=True)
        if obj["metadata"] is not meta or hooks:
            check_metadata_types(obj["metadata"])  # again: a mutating webhook may have changed it
        meta = obj["metadata"]
        errs = self._meta_errors(meta, rtype)
        vouched = schema_valid and all(h.keeps_schema_valid for h in hooks)
        errs += ([] if vouched else rtype.schema_errors(obj)) or _owner_reference_errors(meta)
        if errs:
            raise self._invalid(rtype, obj, errs)
        key = (meta.get("namespace", ""), meta["name"])
        retries = 7 if generated else 0  # RetryGenerateName (GA 1.32): up to 8 names in all
        while key in self._objects[kind] and retries > 0:
            retries -= 1
            meta["name"] = self._generate_name(meta["generateName"])
            key = (key[0], meta["name"])
        if key in self._objects[kind]:
            raise errors.AlreadyExists(rtype.plural, rtype.group, meta["name"])
        now = self.clock.timestamp()
        rng = rtype.rng if rtype.rng_for is None else (rtype.rng_for(obj) or rtype.rng)
        meta["uid"] = _uuid4((rng or self._rng).getrandbits(128))
        meta["creationTimestamp"] = now
        for stale in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(stale, None)
        if rtype.generation != "none":
            meta["generation"] = 1
        if rtype.status_subresource and rtype.generation == "custom":
            obj.pop("status", None)
        for part in ("spec", "status"):
            if part in obj and obj[part] is None:
                del obj[part]  # JSON null decodes to Go's zero value: as if the field were absent
        rtype.strategy.prepare_for_create(obj, now)
        errs = rtype.strategy.validate(obj)
        if kind == "Job":
            errs = job_name_errors(obj) + errs
        if errs:
            raise self._invalid(rtype, obj, errs)
        self._admit("CREATE", kind, obj, None, mutate=False)
        meta["resourceVersion"] = self._next_rv()
        self._store(kind, key, obj, None)
        if rtype.stored_valid:
            self._valid_specs[(kind, key)] = obj.get("spec")
        self._notify("ADDED", kind, obj, None)
        return obj

    def _generate_name(self, prefix: str) -> str:
        prefix = prefix[:_MAX_GENERATED_NAME_PREFIX]
        return prefix + "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(5))

    def _meta_errors(self, meta: Obj, rtype: ResourceType) -> list[FieldError]:
        """``ValidateObjectMeta`` for the fields the store keys and indexes by (types checked before)."""
        name = meta.get("name")
        if not name:
            return [FieldError.required("metadata.name", "name or generateName is required")]
        errs = []
        if rtype.kind not in SPECIAL_NAME_KINDS and len(name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(name):
            pass  # the common case, without building the error list
        else:
            errs += name_errors(rtype.kind, name)
        namespace = meta.get("namespace")
        if rtype.namespaced and namespace and namespace not in self._valid_namespaces:
            found = namespace_errors(namespace)
            if found:
                errs += found
            else:
                self._valid_namespaces.add(namespace)
        errs += label_errors(meta.get("labels"))
        refs = meta.get("ownerReferences") or []
        if sum(1 for r in refs if r.get("controller")) > 1:
            errs.append(
                FieldError.invalid(
                    "metadata.ownerReferences", refs, "Only one reference can have Controller set to true"
                )
            )
        return errs

    def update(
        self, obj: Obj, *, subresource: str | None = None, donate: bool = False, _patch: bool = False,
        schema_valid: bool = False,
    ) -> Obj:
        """PUT. ``subresource="status"`` writes only status; the main endpoint ignores status.

        ``donate``: the caller hands its status over and never touches it again (the kubelet builds a
        fresh status per write), so the store keeps it as is instead of copying it; on the main endpoint
        it hands over the whole object (the EndpointSlice controller builds each slice afresh).
        ``schema_valid``: as for :meth:`create`, the caller vouches for the schema.
        """
        if not isinstance(obj, dict):
            raise errors.BadRequest("the request body must be a JSON object")
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise errors.BadRequest("Object 'Kind' is missing in the request body")
        rtype = self.resource(kind)
        meta_in = obj.get("metadata") or {}
        check_metadata_types(meta_in, names_only=True)  # the rest once merged below (status: never read)
        ns = (meta_in.get("namespace") or "default") if rtype.namespaced else ""
        name = meta_in.get("name", "")
        key = (ns, name)
        old = self._objects[kind].get(key)
        if old is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        rv = meta_in.get("resourceVersion")
        if rv:
            if rv != old["metadata"]["resourceVersion"]:
                raise errors.Conflict(rtype.plural, rtype.group, name)
        elif not rtype.unconditional_update and not _patch:
            # Upstream names the *resource* here (store.go: "The Invalid error should have a field for
            # Resource"), so the message reads `widgets.example.com "w" is invalid`, not `Widget.example.com`.
            raise errors.Invalid(
                rtype.plural,
                rtype.group,
                name,
                [
                    FieldError.invalid(
                        "metadata.resourceVersion", _GoUint64(0), "must be specified for an update"
                    )
                ],
            )
        if meta_in.get("uid") and meta_in["uid"] != old["metadata"]["uid"]:
            raise errors.Conflict(
                rtype.plural,
                rtype.group,
                name,
                f"Precondition failed: UID in precondition: {meta_in['uid']}, "
                f"UID in object meta: {old['metadata']['uid']}",
            )
        if subresource == "status":
            if not rtype.status_subresource:
                raise errors.NotFound(rtype.plural, rtype.group, name)
            new = dict(old)
            new["metadata"] = dict(old["metadata"])
            status = obj.get("status")
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status if donate else clone(status)
            errs = rtype.status_errors(new.get("status")) + rtype.strategy.validate_status_update(new, old)
        else:
            new = dict(obj) if _patch or donate else clone(obj)
            new["apiVersion"] = old["apiVersion"]
            new["metadata"] = new_meta = dict(new.get("metadata") or {})
            check_metadata_types(new_meta, old["metadata"])  # before anything (webhooks too) reads it
            for fixed in (
                "uid",
                "creationTimestamp",
                "namespace",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
            ):
                if fixed in old["metadata"]:
                    new_meta[fixed] = old["metadata"][fixed]
                else:
                    new_meta.pop(fixed, None)
            if rtype.status_subresource:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if old["metadata"].get("deletionTimestamp"):
                added = set(new_meta.get("finalizers") or ()) - set(old["metadata"].get("finalizers") or ())
                if added:
                    raise self._invalid(
                        rtype,
                        new,
                        [
                            FieldError.forbidden(
                                "metadata.finalizers",
                                "no new finalizers can be added if the object is being deleted, "
                                "found new finalizers " + _go_string_slice(sorted(added)),
                            )
                        ],
                    )
            new = self._admit("UPDATE", kind, new, old, mutate=True)
            if new.get("metadata") is not new_meta:
                check_metadata_types(new.get("metadata"), old["metadata"])
            if "spec" in new and new["spec"] is None:
                del new["spec"]
            rtype.strategy.prepare_for_update(new, old)
            body = {k: v for k, v in new.items() if k != "status"} if rtype.status_subresource else new
            vouched = schema_valid and all(h.keeps_schema_valid for h in self._admission.get(kind, ())
                                           if h.mutating is not None and "UPDATE" in h.operations)
            schema_errs = [] if vouched else rtype.schema_errors(
                body, valid_spec=self._valid_specs.get((kind, key)),
                valid_metadata=old["metadata"] if rtype.stored_valid else None)
            new_meta = new["metadata"]
            if new_meta.get("name") == old["metadata"].get("name") \
                    and new_meta.get("ownerReferences") is old["metadata"].get("ownerReferences") \
                    and new_meta.get("labels") is old["metadata"].get("labels"):
                errs = schema_errs  # name, references, labels as stored: they passed the checks below then
            else:
                errs = self._meta_errors(new_meta, rtype) + (schema_errs or _owner_reference_errors(new_meta))
            if not errs:
                errs = rtype.strategy.validate(new) + rtype.strategy.validate_update(new, old)
        if errs:
            raise self._invalid(rtype, new, errs)
        if subresource != "status":
            self._admit("UPDATE", kind, new, old, mutate=False)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if subresource == "status":
            # Everything but the status is the stored object's (metadata an equal copy): compare that.
            unchanged = new.get("status", _ABSENT) == old.get("status", _ABSENT)
        else:
            unchanged = new == old
        if unchanged:
            return old  # no-op: no new revision, no watch event
        if subresource != "status" and self._generation_changed(rtype, new, old):
            new["metadata"]["generation"] = old["metadata"].get("generation", 0) + 1
        new["metadata"]["resourceVersion"] = self._next_rv()
        if self._should_remove(rtype, new):
            return self._remove(kind, key, new, rv_assigned=True)
        self._store(kind, key, new, old)
        if rtype.stored_valid and subresource != "status":
            self._valid_specs[(kind, key)] = new.get("spec")  # validated above (or kept from `old`)
        self._notify("MODIFIED", kind, new, old)
        return new

    def _generation_changed(self, rtype: ResourceType, new: Obj, old: Obj) -> bool:
        if rtype.generation == "spec":
            return new.get("spec") != old.get("spec")
        if rtype.generation == "custom":
            # customResourceStrategy.PrepareForUpdate: without a status subresource, status is a plain field.
            skip = ("metadata", "status") if rtype.status_subresource else ("metadata",)
            return {k: v for k, v in new.items() if k not in skip} != {
                k: v for k, v in old.items() if k not in skip
            }
        return False

    def patch(
        self, kind: str, namespace: str, name: str, patch: Obj, *, subresource: str | None = None
    ) -> Obj:
        """JSON merge patch (RFC 7386). A resourceVersion in the patch acts as a precondition."""
        if not isinstance(patch, dict):
            raise errors.BadRequest("a JSON merge patch must be a JSON object")
        if not isinstance(namespace, str) or not isinstance(name, str):
            raise errors.BadRequest("the namespace and name of a request are strings")
        if not isinstance(patch.get("metadata"), dict | None):  # its fields are checked once merged
            check_metadata_types(patch["metadata"])
        current = self.get(kind, namespace, name)
        merged = merge_patch(current, patch)
        merged["kind"] = kind
        # merge_patch shares untouched subtrees with the stored object: copy metadata before writing to it.
        merged["metadata"] = merged_meta = dict(merged.get("metadata") or {})
        merged_meta["name"] = name
        merged_meta.pop("namespace", None)
        if "namespace" in current["metadata"]:
            merged_meta["namespace"] = current["metadata"]["namespace"]
        if "resourceVersion" not in (patch.get("metadata") or {}):
            merged_meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        # merge_patch copied every path the patch touches and shares the rest with the stored (never
        # mutated) object, so the update can skip its defensive deep copy.
        return self.update(merged, subresource=subresource, _patch=True)

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Obj | None = None,
    ) -> Obj | None:
        """DELETE. Returns the object if it still exists (being finalized or terminating), else None."""
        if not isinstance(namespace, str) or not isinstance(name, str):
            raise errors.BadRequest("the namespace and name of a request are strings")
        check_delete_options(grace_period_seconds, preconditions)
        rtype = self.resource(kind)
        key = (namespace if rtype.namespaced else "", name)
        old = self._objects[kind].get(key)
        if old is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        if preconditions:
            for field_name, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                want = preconditions.get(field_name)
                if want and want != old["metadata"].get(field_name):
                    raise errors.Conflict(
                        rtype.plural,
                        rtype.group,
                        name,
                        f"Precondition failed: {label} in precondition: {want}, {label} in object meta: "
                        f"{old['metadata'].get(field_name)}",
                    )
        if propagation_policy not in (None, "Foreground", "Background", "Orphan"):
            raise errors.BadRequest(f"unsupported propagation policy {propagation_policy!r}")
        finalizers = list(old["metadata"].get("finalizers") or ())
        policy = propagation_policy
        if policy is None:
            policy = (
                "Orphan"
                if ORPHAN in finalizers
                else "Foreground"
                if FOREGROUND in finalizers
                else rtype.default_propagation
            )
        if policy == "Foreground" and FOREGROUND not in finalizers:
            finalizers = [f for f in finalizers if f != ORPHAN] + [FOREGROUND]
        elif policy == "Orphan" and ORPHAN not in finalizers:
            finalizers = [f for f in finalizers if f != FOREGROUND] + [ORPHAN]
        elif policy == "Background":
            finalizers = (
                [f for f in finalizers if f not in (ORPHAN, FOREGROUND)] if propagation_policy else finalizers
            )
        meta = old["metadata"]
        deleting = meta.get("deletionTimestamp") is not None
        pending = meta.get("deletionGracePeriodSeconds") or 0
        if not deleting:
            # A pod's own terminationGracePeriodSeconds (int64) may exceed what a timestamp holds: cap it.
            grace = min(rtype.strategy.graceful_delete_seconds(old, grace_period_seconds),
                        MAX_GRACE_PERIOD_SECONDS)
        elif pending and (grace_period_seconds is None or grace_period_seconds >= pending):
            return old  # rest.BeforeDelete: graceful deletion pending; only a shorter grace changes anything
        else:
            grace = max(grace_period_seconds or 0, 0) if pending else 0
        if not finalizers and grace == 0:
            self._remove(kind, key, old)
            return None
        new = dict(old)
        new["metadata"] = new_meta = dict(meta)
        if finalizers != list(meta.get("finalizers") or ()):
            if finalizers:
                new_meta["finalizers"] = finalizers
            else:
                new_meta.pop("finalizers", None)
        if not deleting:
            new_meta["deletionTimestamp"] = rfc3339(self.clock.now + grace)
            new_meta["deletionGracePeriodSeconds"] = grace
            if meta.get("generation"):
                new_meta["generation"] = meta["generation"] + 1
        elif grace < pending:
            # A shorter grace period counts from the original request: deadline - old grace + new grace.
            requested_at = parse_rfc3339(meta["deletionTimestamp"]) - pending
            new_meta["deletionTimestamp"] = rfc3339(requested_at + grace)
            new_meta["deletionGracePeriodSeconds"] = grace
        if new == old:
            return old
        new_meta["resourceVersion"] = self._next_rv()
        if self._should_remove(rtype, new):
            self._remove(kind, key, new, rv_assigned=True)
            return None
        self._store(kind, key, new, old)
        self._notify("MODIFIED", kind, new, old)
        return new

    def bind(self, namespace: str, name: str, node_name: str) -> Obj:
        """pods/binding: set ``spec.nodeName`` and ``PodScheduled=True`` in one revision, as the binding
        REST handler does; binding an already bound pod is a Conflict."""
        old = self.get("Pod", namespace, name)
        if old["spec"].get("nodeName"):
            raise errors.Conflict(
                "pods", "", name, f"pod {name} is already assigned to node {old['spec']['nodeName']!r}"
            )
        if old["metadata"].get("deletionTimestamp") is not None:
            raise errors.Conflict("pods", "", name, "pod is being deleted, cannot be assigned to a host")
        new = dict(old)
        new["spec"] = dict(old["spec"], nodeName=node_name)
        status = dict(old.get("status") or {})
        conditions = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": self.clock.timestamp(),
            }
        )
        status["conditions"] = conditions
        new["status"] = status
        new["metadata"] = dict(old["metadata"], resourceVersion=self._next_rv())
        self._store("Pod", (namespace, name), new, old)
        if self._valid_specs.get(("Pod", (namespace, name))) is old["spec"] and isinstance(node_name, str):
            self._valid_specs[("Pod", (namespace, name))] = new["spec"]  # plus a string nodeName: still valid
        self._notify("MODIFIED", "Pod", new, old)
        return new

    def evict(self, namespace: str, name: str, *, grace_period_seconds: int | None = None) -> None:
        """pods/eviction: ``DisruptionTarget`` (``EvictionByEvictionAPI``), then a graceful delete
        (:mod:`fakecluster.apiserver.eviction`; there are no PodDisruptionBudgets here). The delete options
        are checked first, so a refused eviction writes nothing (no ``DisruptionTarget`` left behind)."""
        if not isinstance(namespace, str) or not isinstance(name, str):
            raise errors.BadRequest("the namespace and name of a request are strings")
        check_delete_options(grace_period_seconds, None)
        evict_pod(self, namespace, name, grace_period_seconds)

    def _should_remove(self, rtype: ResourceType, obj: Obj) -> bool:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") is None or meta.get("finalizers"):
            return False
        return not meta.get("deletionGracePeriodSeconds")

    # ------------------------------------------------------------------ storage + indexes
    def _store(self, kind: str, key: Key, obj: Obj, old: Obj | None) -> None:
        self._objects[kind][key] = obj
        meta = obj["metadata"]
        if old is None:
            self._by_uid[meta["uid"]] = (kind, key)
        old_meta = old["metadata"] if old is not None else {}
        refs = meta.get("ownerReferences")
        old_refs = old_meta.get("ownerReferences")
        # Most writes share labels and references with the stored version (copy-on-write): skip comparing.
        if refs is not old_refs and refs != old_refs:
            for ref in old_refs or ():
                self._by_owner.get(ref.get("uid", ""), {}).pop((kind, key), None)
                self._owned_in_order.pop(ref.get("uid", ""), None)
            for ref in refs or ():
                self._by_owner.setdefault(ref.get("uid", ""), {})[(kind, key)] = None
                self._owned_in_order.pop(ref.get("uid", ""), None)
        labels = meta.get("labels")
        old_labels = old_meta.get("labels")
        index = self._label_index.get(kind)
        if index is not None and labels is not old_labels and labels != old_labels:
            for item in (old_labels or {}).items():
                bucket = index.get(item)
                if bucket is not None:
                    bucket.pop(key, None)
            for item in (labels or {}).items():
                index.setdefault(item, {})[key] = None

    def _remove(self, kind: str, key: Key, obj: Obj, *, rv_assigned: bool = False) -> Obj:
        """Drop ``key`` and send DELETED carrying ``obj``, the last state, with the stored version as ``old``.
        ``rv_assigned``: ``obj`` already holds this write's new resourceVersion (an update or delete that ends
        in removal); otherwise the deletion gets one of its own. Indexes are cleaned from the *stored*
        version, which is what they were built from: the final state may differ (one update can drop the
        last finalizer and change labels)."""
        stored = self._objects[kind].pop(key)
        self._valid_specs.pop((kind, key), None)
        stored_meta = stored["metadata"]
        self._by_uid.pop(stored_meta["uid"], None)
        for ref in stored_meta.get("ownerReferences") or ():
            self._by_owner.get(ref.get("uid", ""), {}).pop((kind, key), None)
            self._owned_in_order.pop(ref.get("uid", ""), None)
        index = self._label_index.get(kind)
        if index is not None:
            for item in (stored_meta.get("labels") or {}).items():
                bucket = index.get(item)
                if bucket is not None:
                    bucket.pop(key, None)
        if rv_assigned:
            deleted = obj
        else:
            deleted = dict(obj)
            deleted["metadata"] = dict(obj["metadata"])
            deleted["metadata"]["resourceVersion"] = self._next_rv()
        self._notify("DELETED", kind, deleted, stored)
        return deleted
