"""JobSet feature gates: the Python twin of upstream ``pkg/features/features.go``.

Upstream keeps the gates in a process-global ``utilfeature.DefaultMutableFeatureGate`` that tests flip
with ``SetFeatureGateDuringTest``. Here a run gets one immutable :class:`FeatureGates` value, built from
the scenario's ``featureGates`` map (upstream: the manager config's ``featureGates``, read in
``main.go``) and handed to the webhooks and the controller, so two clusters in one process never share
gate state and a run stays a pure function of its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

__all__ = [
    "ELASTIC_JOBSET",
    "IN_PLACE_RESTART",
    "RESTART_JOB",
    "TLS_OPTIONS",
    "FeatureGates",
]

IN_PLACE_RESTART = "InPlaceRestart"
"""Alpha, off: allows ``failurePolicy.restartStrategy: InPlaceRestart``; the controller watches Pods."""
TLS_OPTIONS = "TLSOptions"
"""GA, on and locked: TLS options of the JobSet servers (no effect in a fake cluster)."""
RESTART_JOB = "RestartJob"
"""Alpha, off: allows the ``RestartJob*`` failure-policy actions and per-Job restart bookkeeping."""
ELASTIC_JOBSET = "ElasticJobSet"
"""Alpha, off: allows changing ``parallelism``/``completions`` of Indexed replicated Jobs on update."""

_ATTRIBUTE = {
    IN_PLACE_RESTART: "in_place_restart",
    TLS_OPTIONS: "tls_options",
    RESTART_JOB: "restart_job",
    ELASTIC_JOBSET: "elastic_jobset",
}
_LOCKED = frozenset({TLS_OPTIONS})
"""Gates with ``LockToDefault: true`` upstream; component-base refuses to set them to another value."""


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """The four upstream gates with their upstream defaults (``defaultFeatureGates``)."""

    in_place_restart: bool = False
    tls_options: bool = True
    restart_job: bool = False
    elastic_jobset: bool = False

    @classmethod
    def from_dict(cls, gates: Mapping[str, bool] | None = None) -> FeatureGates:
        """Build from ``{"RestartJob": True, ...}``; unnamed gates keep their defaults.

        Errors reuse k8s.io/component-base ``featuregate.SetFromMap`` wording, so a scenario with a typo
        fails the way the JobSet manager fails to start.
        """
        values: dict[str, bool] = {}
        defaults = cls()
        for name, value in (gates or {}).items():
            attribute = _ATTRIBUTE.get(name)
            if attribute is None:
                raise ValueError(f"unrecognized feature gate: {name}")
            if not isinstance(value, bool):
                raise ValueError(f"invalid value of {name}: {value!r}, must be a boolean")
            default = getattr(defaults, attribute)
            if name in _LOCKED and value != default:
                raise ValueError(
                    f"cannot set feature gate {name} to {str(value).lower()}, "
                    f"feature is locked to {str(default).lower()}"
                )
            values[attribute] = value
        return cls(**values)

    def enabled(self, name: str) -> bool:
        """``features.Enabled(name)``; an unknown name is a programming error, as upstream (panic)."""
        attribute = _ATTRIBUTE.get(name)
        if attribute is None:
            raise ValueError(f"unrecognized feature gate: {name}")
        return bool(getattr(self, attribute))

    def as_dict(self) -> dict[str, bool]:
        """Gate name → value for every known gate (for traces and reports)."""
        by_attribute = {attribute: name for name, attribute in _ATTRIBUTE.items()}
        return {by_attribute[f.name]: getattr(self, f.name) for f in fields(self)}
