"""The base class and scalar types every API model shares.

The models are the *schema* of the wire form (what ``kubectl apply`` sends and what the API server
stores), plus typed views over it. They deliberately carry no Kubernetes defaults: defaulting belongs to
the API-server strategies and webhooks, exactly as in the real server, and a model that silently filled
``restartPolicy: Always`` would hide what a user actually wrote.

Conventions, all chosen so that :func:`fakecluster.api.validation.validate_model` answers like the real
API server does:

- Field names are snake_case; the JSON name comes from ``to_camel`` or, where Kubernetes does not use
  plain camelCase (``podIP``, ``hostPID``, ``imageID``, ``enableDNSHostnames``...), an explicit alias.
- ``strict=True``: Go's JSON decoder rejects ``"3"`` for an ``int32`` and ``1`` for a ``string``, and a
  CRD's structural schema does the same, so lax coercion would accept objects a cluster refuses.
- ``extra="forbid"``: ``kubectl`` uses server-side strict field validation (the default since 1.27), so an
  unknown field is an error, not something silently dropped.
- A field is required only when the wire schema requires it *and* nothing on the server (Go zero-value
  decoding that validation then accepts, scheme defaulting, a mutating webhook) can supply it before
  schema validation runs. Everything else is optional and defaults to ``None``, never to a Kubernetes
  default.
- Go string enums that are *not* pointers (``restartPolicy``, ``imagePullPolicy``, ``dnsPolicy``...)
  also accept ``""``: in Go an empty string is indistinguishable from an omitted field and the scheme
  defaulter fills it. Validation strips ``""`` from the "supported values" it reports, as upstream does.

Two rules keep what the models cost at import down (a small run mostly pays its start-up):

- A model module (here, :mod:`jobset.api` and the scenario format's) does not
  ``from __future__ import annotations``: pydantic then takes each annotation as the object it is
  instead of compiling and evaluating its string, some 50 M instructions of a run's start; a validator
  returning its model says ``Self``, a model naming a later one quotes it (``tests/test_model_build.py``).
- ``defer_build=True`` marks a model that no run validates on its own: one only reached through the one
  model that contains it, which builds its schema inline anyway (``PodTemplateSpec`` in ``JobSpec``),
  or one no run uses at all (``Event``), or one only the Python API validates on its own
  (``Action``, the session's ``_Setup``: a scenario run reaches them through ``Scenario`` or not at
  all; 18 + 5 M instructions of every run's start). Built with the parent only, it is not built a
  second time, its own validator and serializer, at import; should anything validate it directly,
  pydantic builds it then, as it would have at import. A model more than one built model contains
  (``PodSpec``) or that a scenario run validates directly (``ExitSpec``, ``Stuck``) is built at once,
  so its schema is made once. A generic model (``MinMax``) is built when parametrized whatever it
  says, but ``defer_build`` spares the parametrized classes its subclasses are made from.
"""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = [
    "QUANTITY_EXACT_PATTERN",
    "QUANTITY_PATTERN",
    "Int32",
    "Int64",
    "IntOrString",
    "K8sModel",
    "MicroTime",
    "NonNegativeInt32",
    "NonNegativeInt64",
    "Quantity",
    "Time",
]


class K8sModel(BaseModel):
    """Base of every Kubernetes API model: camelCase wire names, strict types, unknown fields rejected."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
    )


Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
"""Go ``int32``: values out of range fail to decode on a real API server."""

Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
"""Go ``int64`` (and Go ``int`` on 64-bit platforms)."""

NonNegativeInt32 = Annotated[int, Field(ge=0, le=2**31 - 1)]
"""``int32`` with a ``+kubebuilder:validation:Minimum=0`` marker (CRD schema ``minimum: 0``)."""

NonNegativeInt64 = Annotated[int, Field(ge=0, le=2**63 - 1)]
"""``int64`` with ``minimum: 0`` (for example ``metav1.Condition.observedGeneration``)."""

QUANTITY_PATTERN = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
"""The coarse shape ``resource.Quantity`` accepts when decoding (``resource.ErrFormatWrong``).

A string outside it gets ``ParseQuantity``'s message quoting this pattern; one inside it may still fail
the exact grammar (suffix one of ``Ki..Ei``, ``n u m k M G T P E`` or an exponent), which the schema checks
with :data:`QUANTITY_EXACT_PATTERN`.
"""

QUANTITY_EXACT_PATTERN = (r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                          r"(?:[eE][+-]?0*[0-9]{1,4}|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$")
"""What :func:`fakecluster.api.quantity.parse_quantity` parses: a number, then one binary-SI or decimal-SI
suffix or a decimal exponent of at most four digits (upstream takes any; here ``10**exponent`` is computed
exactly, which for ``1e99999999`` would take minutes). The schema checks this shape (in Rust) and reports
a string outside it with ``ParseQuantity``'s own words (:func:`~fakecluster.api.quantity.quantity_error`):
``32Gii`` passes :data:`QUANTITY_PATTERN` and is ``unable to parse quantity's suffix``."""

Quantity = Annotated[str, Field(pattern=QUANTITY_EXACT_PATTERN)] | int | float
"""``resource.Quantity`` in wire form: ``"500m"``, ``"32Gi"`` or a bare JSON number (``4``).

Kept as written (no normalisation to a canonical string) so that a stored object round-trips unchanged.
"""

IntOrString = int | str
"""``intstr.IntOrString`` (``targetPort: 8080`` or ``targetPort: http``)."""

Time = str
"""``metav1.Time`` in wire form, RFC 3339 with second precision (``2024-01-01T00:00:00Z``).

Timestamps stay strings: the store keeps wire form and the virtual clock formats them once.
"""

MicroTime = str
"""``metav1.MicroTime`` in wire form, RFC 3339 with microseconds (``2024-01-01T00:00:00.000000Z``)."""
