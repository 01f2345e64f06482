"""The write paths of the fake API server: create, update (and the status subresource), merge patch,
delete and pods/binding, as the generic registry store does them
(k8s.io/apiserver/pkg/registry/generic/registry/store.go, with the per-kind strategy hooks of
:mod:`fakecluster.apiserver.resources` and the admission chain of :mod:`fakecluster.apiserver.admission`).

What it reproduces: uid and generateName, a global resourceVersion bumped per persisted write (a no-op
write bumps nothing and notifies nobody), generation bumped on spec change only, the status subresource,
optimistic concurrency, NotFound / AlreadyExists / Conflict / Invalid errors, finalizers and
deletionTimestamp, deletion propagation policies (the garbage collector does the cascading).

Stored objects are never mutated in place: every write stores a new dict (copy-on-write), so a watcher
may keep the objects it was handed as read-only snapshots, and unchanged subtrees (a pod's spec on a
status write) are shared between versions instead of copied.

The paths share the resourceVersion counter and the store-then-notify steps, so they stay in one module,
as they do in ``store.go``; the metadata rules they apply are :mod:`fakecluster.apiserver.object_meta`.
"""

from __future__ import annotations

import json
import random
from typing import Any

from fakecluster.api import errors
from fakecluster.api.errors import ApiError, FieldError
from fakecluster.api.objects import Obj, clone, merge_patch
from fakecluster.apiserver.admission import Admission, AdmissionChain
from fakecluster.apiserver.item_updates import short_update
from fakecluster.apiserver.metadata_checks import (
    MAX_GRACE_PERIOD_SECONDS,
    check_delete_options,
    check_metadata_types,
    check_spec_type,
    job_name_errors,
)
from fakecluster.apiserver.object_meta import (
    GoUint64,
    generate_name,
    go_string_slice,
    keep_fixed_metadata,
    meta_errors,
    owner_reference_errors,
    uuid4,
)
from fakecluster.apiserver.resources import ResourceType, Strategy
from fakecluster.apiserver.snapshots import SnapshotGuard
from fakecluster.apiserver.storage import Key, Storage
from fakecluster.apiserver.watch_fanout import WatchFanOut
from fakecluster.clock import Clock, parse_rfc3339, rfc3339

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

class ValidatedSpec:
    """A ``spec`` (and metadata fields) the server has validated against a kind's schema and owns (a
    private deep copy that nothing changes): what :meth:`ApiServer.create` checks objects made from it
    against, field by field, so that a Job controller creating thousands of pods from one template
    validates the template once and each pod's own parts (its name, its own labels, ``hostname``,
    anything an admission hook changed) per pod. Only :meth:`ApiServer.validated_spec` makes them; a
    server refuses one it did not make."""

    __slots__ = ("_issuer", "kind", "metadata", "spec")

    def __init__(self, issuer: WritePath, kind: str, spec: Obj, metadata: Obj) -> None:
        self._issuer = issuer
        self.kind = kind
        self.spec = spec
        self.metadata = metadata



def _all_copy_on_write(hooks: list[Admission]) -> bool:
    """Whether every hook of ``hooks`` copies on write: a loop, not ``all()`` over a generator, whose
    frame and resumptions cost more than the loop at every pod created."""
    for hook in hooks:  # noqa: SIM110 -- all() over a generator: the cost this function avoids
        if not hook.copies_on_write:
            return False
    return True


class WritePath:
    """Every write of one API server. All randomness (uids, generated names) comes from ``rng``."""

    def __init__(self, types: dict[str, ResourceType], storage: Storage, *, fanout: WatchFanOut,
                 admission: AdmissionChain, clock: Clock, rng: random.Random,
                 snapshots: SnapshotGuard | None) -> None:
        self._types = types
        self._storage = storage
        self._storage_put = storage.put
        self._fanout = fanout
        self._admission = admission
        self._clock = clock
        self._rng = rng
        self._snapshots = snapshots
        self._check_donated_status = snapshots is not None
        """Whether a donated status (the kubelet's and the Job controller's writes, built from this
        project's code, some four per pod) is checked against the kind's status schema: in check mode (the
        snapshot guard on, as in the test suite, which so proves those writers right), not otherwise,
        where the check would cost every pod a model validation per status write. Every other status
        write (a scenario's ``patchStatus``, a session user's, any controller's plain ``update_status``)
        is checked always."""
        self._rv = 0
        self.writes = 0
        self._valid_namespaces: set[str] = set()
        """Namespaces already found valid DNS-1123 labels (a run uses a handful)."""
        self._known_specs: dict[str, Obj] = {}
        """Per :attr:`~ResourceType.stored_valid` kind, the spec of the object created last: stored, so
        never changed, and valid; :meth:`create` with a template need not check again the values a new
        object shares with it (see :meth:`ResourceType.schema_errors` ``known_spec``)."""
        self._pod_scheduled: Obj = {}
        """The ``PodScheduled`` condition :meth:`bind` wrote last: the pods bound in the same second get
        the very same object (nobody changes a stored object), not some 180 bytes each."""

    def _resource(self, kind: str) -> ResourceType:
        try:
            return self._types[kind]
        except KeyError:
            raise errors.NotFound.with_message(
                f'the server could not find the requested resource (kind "{kind}")'
            ) from None

    def _get(self, kind: str, namespace: str, name: str) -> Obj:
        rtype = self._resource(kind)
        obj = self._storage.objects[kind].get((namespace if rtype.namespaced else "", name))
        if obj is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        return obj

    def _next_rv(self) -> str:
        self._rv += 1
        self.writes += 1
        return str(self._rv)

    def _invalid(self, rtype: ResourceType, obj: Obj, errs: list[FieldError]) -> ApiError:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):  # `metadata: null` or of another type: the errors say so
            meta = {}
        name = meta.get("name") or meta.get("generateName", "")
        return errors.Invalid(rtype.kind, rtype.group, name, errs)

    def validated_spec(self, kind: str, spec: Obj, metadata: Obj | None = None) -> ValidatedSpec:
        """Validate ``spec`` as the ``spec`` of a ``kind`` object, and ``metadata`` as (some of) its
        metadata, and keep private copies, for :meth:`create` ``template=`` (an ``Invalid`` error names
        the fields, as a create would)."""
        rtype = self._resource(kind)
        errs = rtype.schema_errors({"metadata": metadata or {}, "spec": spec})
        if errs:
            raise errors.Invalid(rtype.kind, rtype.group, "", errs)
        return ValidatedSpec(self, kind, clone(spec), clone(metadata or {}))

    def create(self, obj: Obj, *, donate: bool = False, template: ValidatedSpec | None = None) -> Obj:
        """POST. Two options for the cluster's own emulated controllers, which build objects from parts
        the server already stored (see :class:`~fakecluster.controllers.job.pods.PodFactory`); neither
        skips a check:

        - ``donate``: the caller hands ``obj`` over and never touches it again, and nobody changes what
          it shares with other objects; if the kind's strategy and hooks copy on write, the server
          copies only the object and its metadata instead of deep-copying it;
        - ``template``: ``obj["spec"]`` was built from that validated spec; the schema check then
          validates, besides everything outside the spec, only the spec fields that are not the very
          values the template holds (see :meth:`ResourceType.schema_errors`).

        Everything else (names, owner references, strategy validation, admission) runs as always."""
        if self._snapshots is not None:
            self._snapshots.verify()
        if not isinstance(obj, dict):
            raise errors.BadRequest("the request body must be a JSON object")
        if template is not None and (template._issuer is not self or template.kind != obj.get("kind")):
            raise errors.BadRequest("the spec template was not validated by this server for this kind")
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise errors.BadRequest("Object 'Kind' is missing in the request body")
        rtype = self._resource(kind)
        checked = obj.get("metadata", {})
        # Parts shared with the template's metadata passed its (strict) schema, hence this check too: a
        # pod's finalizers and owner references are not looked at again.
        check_metadata_types(checked, template.metadata if template is not None else None)
        check_spec_type(obj, kind, rtype.go_spec_type)
        hooks = self._admission.create_mutators(kind)
        if donate and rtype.strategy.copies_on_write and _all_copy_on_write(hooks):
            obj = dict(obj)
            if isinstance(obj.get("metadata"), dict):
                obj["metadata"] = dict(obj["metadata"])
        else:
            obj = clone(obj)
        version = obj.setdefault("apiVersion", rtype.api_version)
        if version != rtype.api_version:
            shown = version if isinstance(version, str) else json.dumps(version)
            raise errors.NotFound.with_message(f'no matches for kind "{kind}" in version "{shown}"')
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
            meta["name"] = generate_name(self._rng, meta["generateName"])
        obj = self._admission.admit("CREATE", kind, obj, None, mutate=True)
        if obj["metadata"] is not meta or hooks:
            # Again: a mutating webhook may have changed it. The labels, annotations, finalizers and
            # references it kept are the very objects checked above (a copy-on-write hook replaces
            # what it changes; without one, ``obj`` is a deep copy and shares nothing with them).
            check_metadata_types(obj["metadata"], checked if isinstance(checked, dict) else None)
        meta = obj["metadata"]
        errs = self._meta_errors(meta, rtype)
        if template is not None:
            schema_errs = rtype.schema_errors(obj, spec_template=template.spec,
                                              meta_template=template.metadata,
                                              known_spec=self._known_specs.get(kind), strings_checked=True)
        else:
            schema_errs = rtype.schema_errors(obj)
        errs += schema_errs or owner_reference_errors(meta)
        if errs:
            raise self._invalid(rtype, obj, errs)
        key = (meta.get("namespace", ""), meta["name"])
        retries = 7 if generated else 0  # RetryGenerateName (GA 1.32): up to 8 names in all
        while key in self._storage.objects[kind] and retries > 0:
            retries -= 1
            meta["name"] = generate_name(self._rng, meta["generateName"])
            key = (key[0], meta["name"])
        if key in self._storage.objects[kind]:
            raise errors.AlreadyExists(rtype.plural, rtype.group, meta["name"])
        now = self._clock.timestamp()
        rng = rtype.rng if rtype.rng_for is None else (rtype.rng_for(obj) or rtype.rng)
        meta["uid"] = uuid4((rng or self._rng).getrandbits(128))
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
        errs = rtype.strategy.validate_create(obj, from_template=template is not None)
        if kind == "Job":
            errs = job_name_errors(obj) + errs
        if errs:
            raise self._invalid(rtype, obj, errs)
        self._admission.admit("CREATE", kind, obj, None, mutate=False)
        # _next_rv and _put written out, as in _store_short: once per created object.
        self._rv += 1
        self.writes += 1
        meta["resourceVersion"] = str(self._rv)
        self._storage_put(kind, key, obj, None)
        if self._snapshots is not None:
            self._snapshots.stored(obj)
        if rtype.stored_valid:
            spec = obj.get("spec")
            self._storage.valid_specs[self._storage.kind_key(meta["uid"], kind, key)] = spec
            if type(spec) is dict:
                self._known_specs[kind] = spec
        self._fanout.notify("ADDED", kind, obj, None)
        if self._snapshots is not None:
            self._snapshots.handed(obj)
        return obj

    def _meta_errors(self, meta: Obj, rtype: ResourceType) -> list[FieldError]:
        """:func:`~fakecluster.apiserver.object_meta.meta_errors` with this server's namespace cache."""
        return meta_errors(meta, rtype.kind, namespaced=rtype.namespaced,
                           valid_namespaces=self._valid_namespaces)

    def update(
        self, obj: Obj, *, subresource: str | None = None, donate: bool = False, _patch: bool = False,
        kept_ends: tuple[int, int] | None = None,
    ) -> Obj:
        """PUT. ``subresource="status"`` writes only status; the main endpoint ignores status.

        ``donate``: the caller hands its status over and never touches it again (the kubelet builds a
        fresh status per write), so the store keeps it as is instead of copying it; on the main endpoint
        it hands over the whole object (the EndpointSlice controller builds each slice version afresh
        from endpoint objects it never changes), which is then stored uncopied, sharing those objects
        with the previous version, whose schema check they need not pass again
        (:attr:`ResourceType.item_lists`). ``kept_ends``: the donating caller's lower bounds on the
        items it kept at each end of the first item list (see
        :func:`~fakecluster.apiserver.item_updates.short_update`); with the snapshot guard on, the
        ends found from them are checked against a scan of the whole list.
        """
        if self._snapshots is not None:
            self._snapshots.verify()
        if not isinstance(obj, dict):
            raise errors.BadRequest("the request body must be a JSON object")
        kind = obj.get("kind")
        if not isinstance(kind, str):
            raise errors.BadRequest("Object 'Kind' is missing in the request body")
        rtype = self._types[kind] if kind in self._types else self._resource(kind)  # (every write)
        meta_in = obj.get("metadata") or {}
        ns: Any = None
        name: Any = None
        if type(meta_in) is dict:
            ns = (meta_in.get("namespace") or "default") if rtype.namespaced else ""
            name = meta_in.get("name", "")
        key = (ns, name)
        old = self._storage.objects[kind].get(key) if type(ns) is str and type(name) is str else None
        if old is not None and donate and subresource is None and rtype.item_lists:
            # Before the type check below: a write the short way takes has metadata whose fields are
            # the stored version's (checked when stored) or strings equal to them, so it passes.
            short = short_update(rtype, obj, old, kind in self._admission.hooks, kept_ends)
            if short is not None:
                if kept_ends is not None and self._snapshots is not None:
                    self._snapshots.check_kept_ends(old, obj, rtype.item_lists[0], short[1:])
                return self._store_short(kind, key, old, short)
        if old is None or meta_in is not old["metadata"]:
            # (The kubelet's status writes send the stored metadata itself: its names, resourceVersion
            # and uid are the stored object's, which pass every check there.)
            old = self._check_request(rtype, meta_in, old, name, _patch)
        if subresource == "status":
            return self._update_status(rtype, key, obj, old, donate)
        new = dict(obj) if _patch or donate else clone(obj)
        new["apiVersion"] = old["apiVersion"]
        new["metadata"] = new_meta = dict(new.get("metadata") or {})
        check_metadata_types(new_meta, old["metadata"])  # before anything (webhooks too) reads it
        check_spec_type(new, kind, rtype.go_spec_type)
        keep_fixed_metadata(new_meta, old["metadata"])
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
                            "found new finalizers " + go_string_slice(sorted(added)),
                        )
                    ],
                )
        new = self._admission.admit("UPDATE", kind, new, old, mutate=True)
        if new.get("metadata") is not new_meta:
            check_metadata_types(new.get("metadata"), old["metadata"])
        if "spec" in new and new["spec"] is None:
            del new["spec"]
        rtype.strategy.prepare_for_update(new, old)
        body = {k: v for k, v in new.items() if k != "status"} if rtype.status_subresource else new
        schema_errs = rtype.schema_errors(body, valid_spec=self._storage.valid_specs.get((kind, key)),
                                          valid_metadata=old["metadata"] if rtype.stored_valid else None,
                                          stored=old)
        new_meta = new["metadata"]
        if new_meta.get("name") == old["metadata"].get("name") \
                and new_meta.get("ownerReferences") is old["metadata"].get("ownerReferences") \
                and new_meta.get("labels") is old["metadata"].get("labels"):
            errs = schema_errs  # name, references, labels as stored: they passed the checks below then
        else:
            errs = self._meta_errors(new_meta, rtype) + (schema_errs or owner_reference_errors(new_meta))
        if not errs:
            errs = rtype.strategy.validate(new) + rtype.strategy.validate_update(new, old)
        if errs:
            raise self._invalid(rtype, new, errs)
        self._admission.admit("UPDATE", kind, new, old, mutate=False)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:
            if self._snapshots is not None:
                self._snapshots.handed(old)
            return old  # no-op: no new revision, no watch event
        if self._generation_changed(rtype, new, old):
            new["metadata"]["generation"] = old["metadata"].get("generation", 0) + 1
        new_meta = new["metadata"]
        new_meta["resourceVersion"] = self._next_rv()
        if new_meta.get("deletionTimestamp") is not None and self._should_remove(rtype, new):
            return self._remove(kind, key, new, rv_assigned=True)
        self._put(kind, key, new, old)
        if rtype.stored_valid:
            self._storage.valid_specs[(kind, key)] = new.get("spec")  # validated above (or kept from `old`)
        self._fanout.notify("MODIFIED", kind, new, old)
        return new

    def _check_request(self, rtype: ResourceType, meta_in: Any, old: Obj | None, name: Any,
                       patch: bool) -> Obj:
        """What an update checks of the request before anything else: the string fields a status write
        reads (the rest once merged), that the object exists (``old``, returned), and the resourceVersion
        and uid preconditions."""
        check_metadata_types(meta_in, None if old is None else old["metadata"], names_only=True)
        if old is None:
            raise errors.NotFound(rtype.plural, rtype.group, name)
        rv = meta_in.get("resourceVersion")
        if rv:
            if rv != old["metadata"]["resourceVersion"]:
                raise errors.Conflict(rtype.plural, rtype.group, name)
        elif not rtype.unconditional_update and not patch:
            # Upstream names the *resource* here (store.go: "The Invalid error should have a field for
            # Resource"), so the message reads `widgets.example.com "w" is invalid`, not `Widget.example.com`.
            raise errors.Invalid(
                rtype.plural,
                rtype.group,
                name,
                [
                    FieldError.invalid(
                        "metadata.resourceVersion", GoUint64(0), "must be specified for an update"
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
        return old

    def _update_status(self, rtype: ResourceType, key: Key, obj: Obj, old: Obj, donate: bool) -> Obj:
        """The end of :meth:`update` on the status subresource, once the request passed the checks
        every update makes (names, preconditions): only ``status`` is taken from ``obj``; everything
        else is the stored object's (its metadata an equal copy), so a write that leaves the status
        as stored is a no-op. The hottest write of the cluster (the kubelet's, some four per pod):
        the kind's status checks are called only when it has any (a status model, or a strategy that
        overrides :meth:`~fakecluster.apiserver.resources.Strategy.validate_status_update`; a donated
        status meets the model in check mode only: :attr:`_check_donated_status`), and ``_next_rv`` and
        ``_put`` are written out."""
        kind = rtype.kind
        if not rtype.status_subresource:
            raise errors.NotFound(rtype.plural, rtype.group, key[1])
        new = dict(old)
        old_meta = old["metadata"]
        new["metadata"] = new_meta = dict(old_meta)
        status = obj.get("status")
        if status is None:
            new.pop("status", None)
        else:
            new["status"] = status if donate else clone(status)
        strategy = rtype.strategy
        check_schema = rtype.status_model is not None and (not donate or self._check_donated_status)
        if check_schema or type(strategy).validate_status_update is not Strategy.validate_status_update:
            errs = rtype.status_errors(status) if check_schema else []
            if not errs:  # its rules read a status of the schema's shape (the generic path's order)
                errs = strategy.validate_status_update(new, old)
            if errs:
                raise self._invalid(rtype, new, errs)
        if status == old.get("status"):
            guard = self._snapshots
            if guard is not None:
                guard.handed(old)
            return old  # no-op: no new revision, no watch event
        self._rv += 1
        self.writes += 1
        new_meta["resourceVersion"] = str(self._rv)
        if old_meta.get("deletionTimestamp") is not None and self._should_remove(rtype, new):
            return self._remove(kind, key, new, rv_assigned=True)
        self._storage_put(kind, key, new, old)
        guard = self._snapshots
        if guard is not None:
            guard.stored(new)
        self._fanout.notify("MODIFIED", kind, new, old)
        return new

    def _store_short(self, kind: str, key: Key, old: Obj, short: tuple[Obj, int, int]) -> Obj:
        """The end of an update that took the short way (:mod:`~fakecluster.apiserver.item_updates`): as
        the generic path's end, with the shared items in the watch event."""
        new, head, tail = short
        guard = self._snapshots
        if new == old:
            if guard is not None:
                guard.handed(old)
            return old
        # _next_rv and _put written out: this runs at every slice write (three per pod); keep in step.
        self._rv += 1
        self.writes += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        self._storage_put(kind, key, new, old)
        if guard is not None:
            guard.stored(new)
        self._fanout.notify("MODIFIED", kind, new, old, (head, tail))
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
        current = self._get(kind, namespace, name)
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
        if self._snapshots is not None:
            self._snapshots.verify()
        if not isinstance(namespace, str) or not isinstance(name, str):
            raise errors.BadRequest("the namespace and name of a request are strings")
        check_delete_options(grace_period_seconds, preconditions)
        rtype = self._resource(kind)
        key = (namespace if rtype.namespaced else "", name)
        old = self._storage.objects[kind].get(key)
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
            new_meta["deletionTimestamp"] = rfc3339(self._clock.now + grace)
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
        self._put(kind, key, new, old)
        self._fanout.notify("MODIFIED", kind, new, old)
        return new

    def bind(self, namespace: str, name: str, node_name: str) -> Obj:
        """pods/binding: set ``spec.nodeName`` and ``PodScheduled=True`` in one revision, as the binding
        REST handler does; binding an already bound pod is a Conflict."""
        if self._snapshots is not None:
            self._snapshots.verify()
        old = self._get("Pod", namespace, name)
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
        stamp = self._clock.timestamp()
        scheduled = self._pod_scheduled
        if scheduled.get("lastTransitionTime") != stamp:
            scheduled = self._pod_scheduled = {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": stamp,
            }
        conditions.append(scheduled)
        status["conditions"] = conditions
        new["status"] = status
        self._rv += 1  # _next_rv and _put written out, as in _store_short: once per pod
        self.writes += 1
        new["metadata"] = dict(old["metadata"], resourceVersion=str(self._rv))
        self._storage_put("Pod", (namespace, name), new, old)
        if self._snapshots is not None:
            self._snapshots.stored(new)
        valid_specs = self._storage.valid_specs
        if valid_specs.get(("Pod", (namespace, name))) is old["spec"] and isinstance(node_name, str):
            valid_specs[("Pod", (namespace, name))] = new["spec"]  # plus a string nodeName: still valid
        self._fanout.notify("MODIFIED", "Pod", new, old)
        return new

    def _should_remove(self, rtype: ResourceType, obj: Obj) -> bool:
        meta = obj["metadata"]
        if meta.get("deletionTimestamp") is None or meta.get("finalizers"):
            return False
        return not meta.get("deletionGracePeriodSeconds")

    # ------------------------------------------------------------------ storage
    def _put(self, kind: str, key: Key, obj: Obj, old: Obj | None) -> None:
        self._storage_put(kind, key, obj, old)
        if self._snapshots is not None:
            self._snapshots.stored(obj)

    def _remove(self, kind: str, key: Key, obj: Obj, *, rv_assigned: bool = False) -> Obj:
        """Drop ``key`` and send DELETED carrying ``obj``, the last state, with the stored version as ``old``.
        ``rv_assigned``: ``obj`` already holds this write's new resourceVersion (an update or delete that ends
        in removal); otherwise the deletion gets one of its own. Indexes are cleaned from the *stored*
        version, which is what they were built from: the final state may differ (one update can drop the
        last finalizer and change labels)."""
        stored = self._storage.drop(kind, key)
        if rv_assigned:
            deleted = obj
        else:
            deleted = dict(obj)
            deleted["metadata"] = dict(obj["metadata"])
            deleted["metadata"]["resourceVersion"] = self._next_rv()
        if self._snapshots is not None:
            self._snapshots.stored(deleted)
        self._fanout.notify("DELETED", kind, deleted, stored)
        return deleted
