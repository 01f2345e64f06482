"""The short way through an update of a kind with :attr:`~fakecluster.apiserver.resources.ResourceType.
item_lists` (an EndpointSlice: a write changes one endpoint of up to 100 and shares the rest with the
stored version).

The generic update (``store.go``'s ``Update``: decode, admission, strategy, validation, compare, store)
does the same steps for every kind; for such a write most of them find nothing to do. This module
decides, from a few identity and type checks, that the write is one of those: the body is the stored
object again except for items of its item lists and string fields equal to the stored ones. Then it
builds the new version exactly as the generic path would, and checks the schema of only the items that
are not the stored version's very objects (the shared ends by a scan, any others in between by identity,
so a batched write of several changed endpoints checks those only), each with the item's own model (the
full model checks each item on its own: no constraint spans items, see ``item_lists``).

Anything else (a changed label, a new field, a field removed, an item the schema refuses, a pending
deletion, an admission hook or a strategy of the kind's own) answers ``None`` and the write takes the
generic path, which then gives the answer and the error message it always gives:
``tests/test_item_updates.py`` plays random bodies through both and compares.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj, shared_ends
from fakecluster.api.validation import is_valid, item_model
from fakecluster.apiserver.object_meta import FIXED_METADATA
from fakecluster.apiserver.resources import ResourceType, Strategy

_SAME_OR_EQUAL_STRING = ("name", "namespace", "generateName", "resourceVersion", "uid")
"""Metadata fields the short way accepts when equal to the stored ones: strings, checked by value."""
_SAME_OBJECT = ("labels", "annotations", "ownerReferences", "finalizers")
"""Metadata fields the short way accepts when they are the stored version's very objects."""
_ACCEPTED = frozenset(_SAME_OR_EQUAL_STRING + _SAME_OBJECT)
_FIXED = tuple(f for f in FIXED_METADATA if f != "deletionTimestamp")
_ABSENT = object()


def short_update(rtype: ResourceType, obj: Obj, old: Obj, has_hooks: bool,
                 kept_ends: tuple[int, int] | None = None) -> tuple[Obj, int, int] | None:
    """For a donated update of ``old`` to ``obj``: the new version (its ``resourceVersion`` still the
    stored one), with how many leading and trailing items of the first item list it shares with ``old``
    by identity; or None when the write must take the generic path.

    ``kept_ends``: the writer's own lower bounds on those two counts (the EndpointSlice controller
    knows where it changed a slice since its last write); the shared ends are then found by going on
    from them, past the items the writer could not vouch for, instead of scanning the whole list from
    both ends (a third of the cost of a one-endpoint write of a full slice). The result is the same
    (:meth:`~fakecluster.apiserver.snapshots.SnapshotGuard.check_kept_ends` checks it in the suite)."""
    if (has_hooks or rtype.status_subresource or rtype.generation != "none" or rtype.stored_valid
            or type(rtype.strategy) is not Strategy or rtype.model is None):
        return None
    old_meta = old["metadata"]
    if "deletionTimestamp" in old_meta:
        return None
    meta_in = obj.get("metadata")
    if type(meta_in) is not dict:
        return None
    # Operators rather than method calls (``old_meta.get``) in these loops: they run at every write.
    for key, value in meta_in.items():  # a field left out is fine: no metadata field is required
        if key in old_meta and old_meta[key] is value and key in _ACCEPTED:
            continue  # the stored version's very value (the common case, first)
        if (key not in _SAME_OR_EQUAL_STRING or key not in old_meta or type(value) is not str
                or value != old_meta[key]):
            return None
    if len(obj) != len(old):
        return None
    item_lists = rtype.item_lists
    shared: tuple[int, int] | None = None
    for key, value in obj.items():
        stored = old[key] if key in old else _ABSENT  # noqa: SIM401 -- operators, as above
        if value is stored and key not in item_lists:
            continue
        if key in item_lists:
            if type(value) is not list or type(stored) is not list:
                if value is stored:
                    continue
                return None
            head, tail = shared_ends(stored, value, kept_ends if key == item_lists[0] else None)
            if head + tail < len(value):
                model = item_model(rtype.model, key)
                if model is None:
                    return None
                middle = value[head:len(value) - tail]
                # Several items changed (a batched write): the stored version's very objects among the
                # rest passed this check when stored, like the shared ends.
                known = set(map(id, stored[head:len(stored) - tail])) if len(middle) > 1 else ()
                # A stored item next to the change (the one replaced, if any): what a changed item
                # shares with it (a new version of an endpoint keeps its addresses and target, and its
                # conditions are one of a few shared values) passed when stored.
                like = stored[head] if head < len(stored) else stored[-1] if stored else None
                for item in middle:
                    if id(item) not in known and (type(item) is not dict or not is_valid(model, item, like)):
                        return None
            if key == item_lists[0]:
                shared = (head, tail)
        elif key in ("metadata", "apiVersion") or value is stored:
            continue  # apiVersion: the stored one is kept, as the generic path does
        elif type(value) is not str or type(stored) is not str or value != stored:
            return None
    if shared is None:
        return None
    new = dict(obj)
    new["apiVersion"] = old["apiVersion"]
    new["metadata"] = new_meta = dict(meta_in)
    # keep_fixed_metadata, less what it cannot do here: every field of ``meta_in`` is one ``old_meta``
    # has, so none is dropped, and ``deletionTimestamp`` is in neither.
    for fixed in _FIXED:
        if fixed in old_meta:
            new_meta[fixed] = old_meta[fixed]
    new_meta["resourceVersion"] = old_meta["resourceVersion"]
    return new, *shared
