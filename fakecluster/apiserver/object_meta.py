"""Object metadata rules of the generic registry: generated names and uids, name syntax, owner references
(k8s.io/apiserver/pkg/storage/names/generate.go, k8s.io/apimachinery/pkg/api/validation/objectmeta.go),
and the Go formatting their messages embed. The per-kind name, namespace and label rules themselves are
:mod:`fakecluster.apiserver.metadata_checks`."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable

from fakecluster.api.errors import FieldError
from fakecluster.api.objects import Obj
from fakecluster.apiserver.metadata_checks import (
    SPECIAL_NAME_KINDS,
    label_errors,
    name_errors,
    namespace_errors,
)

NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver/pkg/storage/names
MAX_GENERATED_NAME_PREFIX = 58
_NAME_LETTERS = len(NAME_ALPHABET)
_NAME_BITS = _NAME_LETTERS.bit_length()
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


FIXED_METADATA = ("uid", "creationTimestamp", "namespace", "generation", "deletionTimestamp",
                  "deletionGracePeriodSeconds")
"""Metadata an update never changes: the stored version's values are kept (``rest.BeforeUpdate``)."""


def keep_fixed_metadata(new_meta: Obj, old_meta: Obj) -> None:
    """Put the stored version's :data:`FIXED_METADATA` into ``new_meta`` (and drop what it lacks)."""
    for fixed in FIXED_METADATA:
        if fixed in old_meta:
            new_meta[fixed] = old_meta[fixed]
        elif fixed in new_meta:  # an operator, not a call of pop(): this runs at every update
            del new_meta[fixed]


def go_string_slice(values: Iterable[str]) -> str:
    """Go's ``%#v`` of a ``[]string``, as upstream messages embed it: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(json.dumps(v) for v in values) + "}"


def uuid4(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))``, without building the UUID object: every create draws
    one, and ``UUID.__init__``'s argument checks cost more than the formatting."""
    bits = ((bits & ~(0xC000 << 48)) | (0x8000 << 48))  # the RFC 4122 variant
    bits = ((bits & ~(0xF000 << 64)) | (4 << 76))  # version 4
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def generate_name(rng: random.Random, prefix: str) -> str:
    """``names.SimpleNameGenerator``: the prefix (at most 58 characters) and 5 random characters.

    Each character is ``rng.choice(NAME_ALPHABET)``, drawn as ``random.Random.choice`` draws it
    (``_randbelow_with_getrandbits``: 5 random bits, again while they name no letter), written out
    here because every pod's name is made this way and the two Python calls per character of
    ``choice`` cost more than the draw; ``tests/test_generate_name.py`` checks the two agree."""
    getrandbits = rng.getrandbits
    letters = []
    for _ in range(5):
        r = getrandbits(_NAME_BITS)
        while r >= _NAME_LETTERS:
            r = getrandbits(_NAME_BITS)
        letters.append(NAME_ALPHABET[r])
    return prefix[:MAX_GENERATED_NAME_PREFIX] + "".join(letters)


def owner_reference_errors(meta: Obj) -> list[FieldError]:
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


def meta_errors(meta: Obj, kind: str, *, namespaced: bool, valid_namespaces: set[str]) -> list[FieldError]:
    """``ValidateObjectMeta`` for the fields the store keys and indexes by (their types were checked
    before, :func:`~fakecluster.apiserver.metadata_checks.check_metadata_types`): the kind's name rule,
    the namespace (a DNS-1123 label), the labels, and at most one controller reference.

    ``valid_namespaces``: namespaces already found valid (the caller's cache; a run uses a handful)."""
    name = meta.get("name")
    if not name:
        return [FieldError.required("metadata.name", "name or generateName is required")]
    errs = []
    if kind not in SPECIAL_NAME_KINDS and len(name) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(name):
        pass  # the common case, without building the error list
    else:
        errs += name_errors(kind, name)
    namespace = meta.get("namespace")
    if namespaced and namespace and namespace not in valid_namespaces:
        found = namespace_errors(namespace)
        if found:
            errs += found
        else:
            valid_namespaces.add(namespace)
    errs += label_errors(meta.get("labels"))
    refs = meta.get("ownerReferences") or []
    # (Counted only when there are several: a generator's resumptions from C at every create otherwise.)
    if len(refs) > 1 and sum(1 for r in refs if r.get("controller")) > 1:
        errs.append(
            FieldError.invalid(
                "metadata.ownerReferences", refs, "Only one reference can have Controller set to true"
            )
        )
    return errs


class GoUint64(int):
    """A Go ``uint64`` as a field error's bad value: ``field.Error`` prints types other than int32/int64
    with ``%#v``, which renders it in hex (``Invalid value: 0x0``)."""

    def __str__(self) -> str:
        return hex(self)
