"""The scenario file as pydantic models: the contract in the scenario format doc, key for key.

Every model forbids unknown keys (a misspelt key must fail loudly, never be ignored) and uses the doc's
camelCase spelling. Durations, milestones and pod references are parsed here, at load time, so the runner
receives floats and parsed objects and a typo is reported with its file, line and field path. "never"
(``ready: never``, ``exit: never``) is ``math.inf``, a delay that does not elapse, as in
``fakecluster.kubelet.pod_timings.NEVER``. Actions and expectations are flat models whose validator picks
the kind,
rather than pydantic unions, so an error inside one names the user's own path (``expect[2].order[1]``)
instead of one error per union branch. The models stay in one module, longer than most, because they are
one contract: reading this file top to bottom should read like the format document.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    Strict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from fakecluster.api.validation import (
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    validate_resource_name,
    validate_resource_quantity_value,
)
from fakecluster.scenario.durations import parse_duration
from fakecluster.scenario.errors import FieldProblem, nearest_line
from fakecluster.scenario.factories import empty_dict, empty_list
from fakecluster.scenario.format_network import DnsSpec, Jitter, NetworkSpec, ProgramModel
from fakecluster.scenario.format_v11 import Distribution, Gap, StuckField, Sweep, unit_fraction
from fakecluster.scenario.limits import MAX_NODES
from fakecluster.scenario.milestones import Milestone, PodRef, parse_job_ref, parse_milestone, parse_pod_ref

__all__ = [
    "NEVER", "RESTARTABLE_CONTROLLERS", "UNSUPPORTED_ACTIONS", "Action", "Budget", "ClusterSpec", "Count",
    "EventsCheck", "ExitSpec", "Expectation", "FailNode", "FailPod", "Faults", "Latency", "NodePool",
    "ObjectTarget", "Patch", "PodIdentity", "PodMatch",
    "PodRule", "PodTarget", "Rejected", "ResolvedPodRule", "Scenario", "StateCheck", "Taint",
    "resolve_pod_rule",
]  # fmt: skip

NEVER = math.inf
UNSUPPORTED_ACTIONS: frozenset[str] = frozenset()
"""Verbs the format reserves but this release cannot play yet; a scenario using one fails at load."""
RESTARTABLE_CONTROLLERS = ("jobset",)
"""What ``restartController`` may name: the workload's controller (the built-in ones have no restart)."""


def _duration_or_never(value: object) -> float:
    return NEVER if value == "never" else parse_duration(value)


def _quantity(value: object) -> str:
    """Kubernetes quantities are strings on the wire; YAML ``cpu: 8`` is accepted as ``"8"``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a quantity such as '8', '500m' or '32Gi', got {value!r}")
    return str(value)


def _problems(found: list[str]) -> None:
    if found:
        raise ValueError("; ".join(found))


def _label_map(value: object) -> dict[str, str]:
    """Labels as ``ValidateLabels`` checks them (qualified-name keys, label values); the path of a bad
    key is the key itself (``labels.Bad_Key!``), as ``field.Path.Key`` renders it."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of label keys to values, got {value!r}")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise FieldProblem(f"label keys and values are strings, got {key!r}: {item!r}", str(key))
        for message in is_qualified_name(key):
            raise FieldProblem(f"Invalid value: {key!r}: {message}", key)
        for message in is_valid_label_value(item):
            raise FieldProblem(f"Invalid value: {item!r}: {message}", key)
        out[key] = item
    return out


def _capacity(value: object) -> dict[str, str]:
    """Node capacity as ``ValidateNode`` checks it: resource names and non-negative quantities."""
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping of resource names to quantities, got {value!r}")
    out: dict[str, str] = {}
    for name, amount in value.items():
        if not isinstance(name, str):
            raise FieldProblem(f"a resource name is a string, got {name!r}", str(name))
        for message in validate_resource_name(name):
            raise FieldProblem(f"Invalid value: {name!r}: {message}", name)
        quantity = _quantity(amount)
        for message in validate_resource_quantity_value(name, quantity):
            raise FieldProblem(f"Invalid value: {quantity!r}: {message}", name)
        out[name] = quantity
    return out


def _controller_name(value: object) -> str:
    if value not in RESTARTABLE_CONTROLLERS:
        valid = ", ".join(RESTARTABLE_CONTROLLERS)
        raise ValueError(f"unknown controller {value!r}: restartController takes one of: {valid}")
    return str(value)


def _jobset_name(value: object) -> str | None:
    """``suspend: mpi`` names the JobSet; ``suspend: true`` (or empty) means the only one."""
    if value is None or value is True:
        return None
    if isinstance(value, str) and value:
        return value
    raise ValueError(f"expected a JobSet name, or true when there is only one JobSet, got {value!r}")


Duration = Annotated[float, PlainValidator(parse_duration)]
DurationOrNever = Annotated[float, PlainValidator(_duration_or_never)]
Int = Annotated[int, Strict()]
NonNegInt = Annotated[int, Strict(), Field(ge=0, le=2**31 - 1)]
"""Indexes, attempts and counts: int32 in Kubernetes (``completions``, ``replicas``, ``restarts``)."""
Int64 = Annotated[int, Strict(), Field(ge=-(2**63), le=2**63 - 1)]
ExitCode = Annotated[int, Strict(), Field(ge=0, le=255)]
"""A container exit code: what ``waitpid`` can report, 0..255."""
PositiveInt = Annotated[int, Strict(), Field(ge=1, le=2**63 - 1)]
Bool = Annotated[bool, Strict()]
Quantity = Annotated[str, PlainValidator(_quantity)]
MilestoneField = Annotated[Milestone, PlainValidator(parse_milestone), PlainSerializer(str)]
PodRefField = Annotated[PodRef, PlainValidator(parse_pod_ref), PlainSerializer(str)]
JobSetName = Annotated[str | None, PlainValidator(_jobset_name)]
Rate = Annotated[float, PlainValidator(unit_fraction)]
Labels = Annotated[dict[str, str], PlainValidator(_label_map)]
Capacity = Annotated[dict[str, str], PlainValidator(_capacity)]
ControllerName = Annotated[str, PlainValidator(_controller_name)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


def _manifest(value: object) -> dict[str, Any]:
    """Manifests stay plain dicts: the workload layer (JobSet webhooks) validates them, as a cluster would.

    ``{file: ...}`` references are read by the loader, which knows the scenario's directory; one that
    reaches the model unresolved means the scenario was built without the loader.
    """
    if not isinstance(value, Mapping):
        raise ValueError("expected a JobSet manifest (a mapping) or {file: relative/path.yaml}")
    if set(value) == {"file"}:
        raise ValueError(
            "a {file: ...} manifest reference is resolved by load_scenario(); load the file with it"
        )
    return dict(value)


Manifest = Annotated[dict[str, Any], PlainValidator(_manifest)]


def _object_manifest(value: object) -> dict[str, Any]:
    """An ``objects`` item: an inline manifest of any kind the cluster serves (``apiVersion``, ``kind``)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str) \
            or not isinstance(value.get("apiVersion"), str):
        raise ValueError("expected an inline manifest with apiVersion and kind (a claim, a Job, ...)")
    return dict(value)


ObjectManifest = Annotated[dict[str, Any], PlainValidator(_object_manifest)]


# ---------------------------------------------------------------- cluster


class Taint(_Model, defer_build=True):
    """``validateNodeTaints`` (``pkg/apis/core/validation/validation.go``): a qualified-name key, a
    label-value value, one of the three effects."""

    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    time_added: str | None = None

    @field_validator("key")
    @classmethod
    def _key(cls, key: str) -> str:
        _problems([f"Invalid value: {key!r}: {m}" for m in is_qualified_name(key)])
        return key

    @field_validator("value")
    @classmethod
    def _value(cls, value: str) -> str:
        _problems([f"Invalid value: {value!r}: {m}" for m in is_valid_label_value(value)])
        return value


class NodePool(_Model, defer_build=True):
    """``count`` identical nodes; with ``count > 1`` they are named ``<name>-0``, ``<name>-1``, ..."""

    name: str
    count: Annotated[int, Strict(), Field(ge=0, le=MAX_NODES)] = 1
    capacity: Capacity = Field(default_factory=empty_dict)
    labels: Labels = Field(default_factory=empty_dict)
    taints: list[Taint] = Field(default_factory=empty_list)

    @model_validator(mode="after")
    def _node_names_are_subdomains(self) -> Self:
        """``ValidateNodeName`` is ``NameIsDNSSubdomain``: check the longest name the pool produces."""
        longest = self.node_names()[-1] if self.count else self.name
        problems = is_dns1123_subdomain(longest)
        if problems:
            raise FieldProblem(f"Invalid value: {longest!r}: {'; '.join(problems)}", "name")
        return self

    def node_names(self) -> list[str]:
        return [self.name] if self.count == 1 else [f"{self.name}-{i}" for i in range(self.count)]


class Latency(_Model):
    """Watch-to-reconcile delays of the cluster's controllers; all default to 0s (react at once).

    The Job controller's upstream 1 s batching of pod events applies on top of ``jobController``.
    """

    job_controller: Duration = 0.0
    jobset: Duration = 0.0
    scheduler: Duration = 0.0
    garbage_collector: Duration = 0.0
    endpoint_slice: Duration = 0.0
    """Format 1.1: pod/Service change -> EndpointSlice written (the batch period)."""


class Faults(_Model):
    """Faults injected into the controllers' API calls (``fakecluster.client.conflicts``); all default to
    none."""

    conflict_rate: Rate = 0.0
    """Fraction of the controllers' update/update_status/patch calls that fail with 409 Conflict."""


class Budget(_Model):
    """What one run may use (:mod:`fakecluster.scenario.limits`); unset: the documented defaults."""

    events: PositiveInt | None = None
    wall_seconds: Duration | None = None
    pods: PositiveInt | None = None


class ClusterSpec(_Model):
    """``nodes: None`` means the default: one node pool that fits every pod."""

    budget: Budget = Field(default_factory=Budget)
    nodes: list[NodePool] | None = None
    feature_gates: dict[str, Bool] = Field(default_factory=empty_dict)
    latency: Latency = Field(default_factory=Latency)
    faults: Faults = Field(default_factory=Faults)
    informer_lag: Duration = 0.0
    """How far the controllers' informer caches (their reads and watch events) trail the API server."""
    network: NetworkSpec = Field(default_factory=NetworkSpec)
    dns: DnsSpec = Field(default_factory=DnsSpec)
    pod_events: Bool | None = None
    """Record the kubelet's and the scheduler's Events about pods (``Scheduled``, ``Pulling``,
    ``Started``, ``BackOff``, ``Unhealthy``...). Unset: on exactly when an ``events`` expectation is about
    a pod (they are API writes, so they change the run's digest and cost time at scale)."""
    invariants: Bool = True
    """Check every invariant (``fakecluster.invariants`` and the workload's) during the run; a violation
    fails the scenario. Off only for benchmarks that measure the cluster alone."""
    shuffle_ties: Bool | NonNegInt = False
    """Run same-instant events in a seeded random order (:class:`fakecluster.clock.TieShufflingClock`):
    ``true`` is shuffle seed 0, a number another shuffle; ``false`` (default) the scheduling order."""

    def shuffle_seed(self) -> int | None:
        """The shuffle seed ``shuffleTies`` asks for, or None for the plain clock."""
        if isinstance(self.shuffle_ties, bool):
            return 0 if self.shuffle_ties else None
        return self.shuffle_ties

    @model_validator(mode="after")
    def _unique_node_names(self) -> Self:
        seen: set[str] = set()
        total = sum(pool.count for pool in self.nodes or [])
        if total > MAX_NODES:
            raise FieldProblem(f"{total} nodes are more than the {MAX_NODES} a cluster may have", "nodes")
        for i, pool in enumerate(self.nodes or []):
            for node in pool.node_names():
                if node in seen:
                    raise FieldProblem(f"node name '{node}' is used twice", f"nodes[{i}].name")
                seen.add(node)
        return self


# ---------------------------------------------------------------- pods


@dataclass(frozen=True, slots=True)
class PodIdentity:
    """What a pod rule can match on, read by the runner from the pod's labels."""

    jobset: str | None = None
    replicated_job: str | None = None
    job_index: int | None = None
    pod_index: int | None = None
    attempt: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)


class PodMatch(_Model, defer_build=True):
    jobset: str | None = None
    replicated_job: str | None = None
    job_index: NonNegInt | None = None
    pod_index: NonNegInt | None = None
    attempt: NonNegInt | None = None
    labels: dict[str, str] | None = None

    def matches(self, pod: PodIdentity) -> bool:
        """Every key given must fit; an absent key fits any pod."""
        pairs = (
            (self.jobset, pod.jobset),
            (self.replicated_job, pod.replicated_job),
            (self.job_index, pod.job_index),
            (self.pod_index, pod.pod_index),
            (self.attempt, pod.attempt),
        )
        if any(want is not None and want != have for want, have in pairs):
            return False
        return all(pod.labels.get(k) == v for k, v in (self.labels or {}).items())


class ExitSpec(_Model):
    """After running ``after`` seconds the container exits with ``code``; ``after`` is NEVER for ``never``."""

    after: Duration = 0.0
    code: ExitCode = 0

    _runs: list["ExitSpec"] = PrivateAttr(default_factory=empty_list)

    @property
    def never(self) -> bool:
        return math.isinf(self.after)

    @property
    def runs(self) -> list["ExitSpec"]:
        """Per successive run, when the file gave a list; empty: this one exit for every run."""
        return self._runs


def _exit_runs(values: list[object]) -> ExitSpec:
    """``exit: [{after, code}, ...]``: validated item by item, with the item's path in errors."""
    if not values:
        raise ValueError("expected at least one {after: <duration>, code: <int>} for the runs")
    runs = []
    for i, value in enumerate(values):
        if value == "never":
            runs.append(ExitSpec.model_construct(after=NEVER, code=0))
            continue
        try:
            runs.append(ExitSpec.model_validate(value))
        except ValidationError as err:
            first = err.errors()[0]
            loc = "".join(f".{part}" if isinstance(part, str) else f"[{part}]" for part in first["loc"])
            raise FieldProblem(first["msg"], f"[{i}]{loc}") from None
    spec = ExitSpec.model_construct(after=runs[0].after, code=runs[0].code)
    spec._runs = runs
    return spec


class ProbeBehaviour(_Model, defer_build=True):
    """How one probe kind answers: it fails during the first ``failFor`` of every container run."""

    fail_for: DurationOrNever


class ProbeRules(_Model, defer_build=True):
    """``probes: {startup|readiness|liveness: {failFor: <duration>|never}}`` (see the kubelet's prober)."""

    startup: ProbeBehaviour | None = None
    readiness: ProbeBehaviour | None = None
    liveness: ProbeBehaviour | None = None

    def fail_for(self) -> dict[str, float]:
        return {kind: rule.fail_for for kind in ("startup", "readiness", "liveness")
                if (rule := getattr(self, kind)) is not None}


MAX_PULL_FAILURES = 1_000_000
"""At the 300 s back-off cap a million failed pulls take ~9.5 years of virtual time, so a larger count is
``always`` in all but name; the bound also keeps the count a float without overflow (hostile input)."""


def _pull_failures(value: object) -> float:
    """``pullFailures``: how many image pulls fail before one succeeds, or ``always``."""
    if value == "always":
        return NEVER
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"expected a non-negative integer or 'always', got {value!r}")
    if value > MAX_PULL_FAILURES:
        raise ValueError(f"expected at most {MAX_PULL_FAILURES:,} failed pulls "
                         "(use 'always' for an image that never arrives)")
    return float(value)


PullFailures = Annotated[float, PlainValidator(_pull_failures)]


class PodRule(_Model, defer_build=True):
    """Timings for matching pods; unset fields fall through to the next matching rule."""

    match: PodMatch = Field(default_factory=PodMatch)
    schedule: Duration | None = None
    pull: Duration | None = None
    start: Duration | None = None
    ready: DurationOrNever | None = None
    exit: ExitSpec | None = None
    """One exit for every run of the container, or a list: one per successive run (its restarts), the
    last repeating (kept in :attr:`ExitSpec.runs`)."""
    terminate: Duration | None = None
    jitter: Jitter | None = None
    program: ProgramModel | None = None
    probes: ProbeRules | None = None
    pull_failures: PullFailures | None = None

    @model_validator(mode="after")
    def _exit_or_program(self) -> Self:
        if self.exit is not None and self.program is not None:
            raise FieldProblem("give 'exit' or 'program', not both: they are one choice", "program")
        return self

    @field_validator("exit", mode="before")
    @classmethod
    def _exit_never(cls, value: object) -> object:
        if value == "never":
            return ExitSpec.model_construct(after=NEVER, code=0)
        if isinstance(value, str):
            raise ValueError(f"expected {{after: <duration>, code: <int>}} or 'never', got {value!r}")
        if isinstance(value, list):
            return _exit_runs(value)
        return value


_TIMING_FIELDS = ("schedule", "pull", "start", "ready", "exit", "terminate", "jitter", "probes",
                  "pull_failures")


@dataclass(frozen=True, slots=True)
class ResolvedPodRule:
    """A pod's timings after merging the rules; ``None``: no rule set it (runner defaults / probes)."""

    schedule: float | None = None
    pull: float | None = None
    start: float | None = None
    ready: float | None = None
    exit: ExitSpec | None = None
    terminate: float | None = None
    jitter: float | dict[str, float] | None = None
    program: ProgramModel | None = None
    probes: ProbeRules | None = None
    pull_failures: float | None = None


def resolve_pod_rule(rules: list[PodRule], pod: PodIdentity) -> ResolvedPodRule:
    """Field by field, the first matching rule that sets a field wins (the doc's inheritance rule);
    ``exit`` and ``program`` are one choice: the first matching rule that sets either decides both."""
    chosen: dict[str, Any] = {}
    ending_decided = False
    for rule in rules:
        if not rule.match.matches(pod):
            continue
        for name in _TIMING_FIELDS:
            if name != "exit" and name not in chosen and getattr(rule, name) is not None:
                chosen[name] = getattr(rule, name)
        if not ending_decided and (rule.exit is not None or rule.program is not None):
            ending_decided = True
            chosen["exit"], chosen["program"] = rule.exit, rule.program
    return ResolvedPodRule(**chosen)


# ---------------------------------------------------------------- actions


class ObjectTarget(_Model):
    """Exactly one of ``jobset``, ``job`` or ``service``: the object an action addresses by name, in
    ``namespace`` (default: the JobSet's namespace for a JobSet, else that of the first JobSet)."""

    jobset: str | None = None
    job: str | None = None
    service: str | None = None
    namespace: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [k for k in ("jobset", "job", "service") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of jobset, job or service (got {', '.join(given) or 'none'})")
        return self

    @property
    def kind(self) -> str:
        return {"jobset": "JobSet", "job": "Job", "service": "Service"}[self._key()]

    @property
    def name(self) -> str:
        return str(getattr(self, self._key()))

    def _key(self) -> str:
        return next(k for k in ("jobset", "job", "service") if getattr(self, k) is not None)


class Patch(ObjectTarget, defer_build=True):
    merge: dict[str, Any]


class FailPod(_Model, defer_build=True):
    pod: PodRefField
    exit_code: ExitCode = 1


class PodTarget(_Model, defer_build=True):
    pod: PodRefField


class FailNode(_Model, defer_build=True):
    node: str


class DeleteTarget(ObjectTarget, defer_build=True):
    """``delete``: the object, and how its dependents go (``kubectl delete --cascade``)."""

    propagation_policy: Literal["Background", "Foreground", "Orphan"] = "Background"


_VERBS = {
    "suspend": "suspend", "resume": "resume", "fail_pod": "failPod", "delete_pod": "deletePod",
    "evict_pod": "evictPod", "fail_node": "failNode", "patch": "patch", "delete": "delete",
    "restart_controller": "restartController", "recover_node": "recoverNode", "delete_node": "deleteNode",
    "create": "create", "patch_status": "patchStatus",
}  # fmt: skip
_VERBS_WITHOUT_VALUE = ("suspend", "resume")
"""Verbs whose null value means something (``suspend:`` alone: the scenario's JobSet); for every other
a null (``patch:`` with nothing under it) is refused at load rather than played as no target."""


class RejectedAction(_Model, defer_build=True):
    """``rejected: {message: <substring>}`` on an action: the write must be refused; a list of substrings
    must all be in the refusal (a webhook refusing for several fields names each)."""

    message: str | list[str]

    @field_validator("message")
    @classmethod
    def _some_text(cls, message: str | list[str]) -> str | list[str]:
        if isinstance(message, list) and not message:
            raise ValueError("give at least one substring of the expected refusal")
        return message

    def substrings(self) -> list[str]:
        return [self.message] if isinstance(self.message, str) else list(self.message)


class Action(_Model, defer_build=True):
    """One intervention: ``at`` a time or ``when`` a milestone (+ ``after``), with exactly one verb."""

    at: Duration | None = None
    when: MilestoneField | None = None
    after: Duration | None = None
    suspend: JobSetName = None
    resume: JobSetName = None
    fail_pod: FailPod | None = None
    delete_pod: PodTarget | None = None
    evict_pod: PodTarget | None = None
    fail_node: FailNode | None = None
    recover_node: FailNode | None = None
    delete_node: FailNode | None = None
    patch: Patch | None = None
    patch_status: Patch | None = None
    """A JSON merge patch on the object's ``status`` subresource (``kubectl patch --subresource=status``)."""
    delete: DeleteTarget | None = None
    create: Manifest | None = None
    restart_controller: ControllerName | None = None
    rejected: RejectedAction | None = None
    """The API server must refuse the action, with a message containing ``rejected.message``."""

    @model_validator(mode="after")
    def _one_trigger_one_verb(self) -> Self:
        names = [name for name in _VERBS if name in self.model_fields_set]
        verbs = [_VERBS[name] for name in names]
        if len(verbs) != 1:
            got = ", ".join(verbs) if verbs else "none"
            raise ValueError(f"an action needs exactly one verb of {', '.join(_VERBS.values())} (got {got})")
        if (self.at is None) == (self.when is None):
            raise ValueError("an action needs exactly one of 'at' (a time) or 'when' (a milestone)")
        if self.after is not None and self.when is None:
            raise FieldProblem(
                "'after' delays a 'when' action; with 'at' put the delay into the time", "after"
            )
        if verbs[0] in UNSUPPORTED_ACTIONS:
            raise FieldProblem(
                f"action '{verbs[0]}' is not supported yet (planned for a later release)", verbs[0]
            )
        if getattr(self, names[0]) is None and names[0] not in _VERBS_WITHOUT_VALUE:
            raise FieldProblem(f"'{verbs[0]}' needs a value here, not null", verbs[0])
        return self

    @property
    def verb(self) -> str:
        """The verb as the file spells it (``failPod``)."""
        return next(alias for name, alias in _VERBS.items() if name in self.model_fields_set)


# ---------------------------------------------------------------- expectations


class Count(_Model):
    jobs: NonNegInt | None = None
    pods: NonNegInt | None = None
    services: NonNegInt | None = None
    jobsets: NonNegInt | None = None
    nodes: NonNegInt | None = None
    endpointslices: NonNegInt | None = None
    persistentvolumeclaims: NonNegInt | None = None


OBJECT_CHECK_KINDS = {"pods": "Pod", "jobs": "Job", "services": "Service", "endpointslices": "EndpointSlice",
                      "persistentvolumeclaims": "PersistentVolumeClaim"}
"""Version 1.1 object assertions under ``final``/``at``: key -> the API kind whose objects it addresses
(pods by pod reference ``workers[0/1]``, jobs and services by name, endpointslices by Service name)."""


class StateCheck(_Model, defer_build=True):
    """``jobset`` (subset of the one JobSet, or of the one named by its ``name:`` key), ``jobsets``
    (JobSet name -> subset), ``count`` (objects that exist), and the version 1.1 object assertions
    ``pods``, ``jobs``, ``services``, ``endpointslices`` (name -> subset)."""

    jobset: dict[str, Any] | None = None
    jobsets: dict[str, dict[str, Any]] | None = None
    count: Count | None = None
    pods: dict[str, dict[str, Any]] | None = None
    jobs: dict[str, dict[str, Any]] | None = None
    services: dict[str, dict[str, Any]] | None = None
    endpointslices: dict[str, dict[str, Any]] | None = None
    persistentvolumeclaims: dict[str, dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _something_to_check(self) -> Self:
        if self.jobset is not None and self.jobsets is not None:
            raise FieldProblem("give 'jobset' or 'jobsets', not both", "jobsets")
        if not self.checks_anything():
            raise ValueError(f"nothing to check: give {', '.join(STATE_KEYS)}")
        return self

    def checks_anything(self) -> bool:
        return any(getattr(self, key) is not None for key in STATE_KEYS)

    def objects(self) -> list[tuple[str, dict[str, dict[str, Any]]]]:
        """The object assertions given, as (key, name -> subset), in :data:`OBJECT_CHECK_KINDS` order."""
        return [(key, getattr(self, key)) for key in OBJECT_CHECK_KINDS if getattr(self, key) is not None]


STATE_KEYS = ("jobset", "jobsets", "count", *OBJECT_CHECK_KINDS)


def _ref_or_name(parse: Callable[[str], object], expected: str) -> Callable[[object], str]:
    """A validator of ``job:``/``pod:``: an object's name, or (with a ``[``) a reference ``parse`` reads
    (``[<jobset>/]<replicatedJob>[<jobIndex>]`` for a Job, ``...[<jobIndex>/<podIndex>]`` for a pod)."""

    def check(value: object) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"expected {expected}, got {value!r}")
        if "[" in value:
            parse(value)
        return value

    return check


_job_ref = _ref_or_name(parse_job_ref, "a Job name or a job reference such as 'workers[0]'")
_pod_ref_or_name = _ref_or_name(parse_pod_ref, "a pod reference such as 'workers[0/1]' or a pod name")


def _event_count(value: object, path: str) -> None:
    """An event item's ``count``: a whole number, or bounds ``{min: n, max: m}`` (either or both)."""
    def whole(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if isinstance(value, Mapping):
        if value and not set(value) - {"min", "max"} and all(whole(v) for v in value.values()):
            return
    elif whole(value):
        return
    raise FieldProblem(f"expected a count such as 3 or bounds {{min: 2, max: 5}}, got {value!r}", path)


class EventsCheck(_Model, defer_build=True):
    """Events of the JobSet, with ``job:`` of a Job, with ``pod:`` of the pods of a slot (or one pod by
    name): ``contains`` in order (subsequence), items may give ``count``; ``absent``: none may match;
    ``exactly``: these events and no others, in this order."""

    job: Annotated[str, PlainValidator(_job_ref)] | None = None
    pod: Annotated[str, PlainValidator(_pod_ref_or_name)] | None = None
    attempt: NonNegInt | None = None
    """With a pod reference: the JobSet restart attempt whose pods are meant (default: the last one)."""
    contains: list[dict[str, Any]] | None = Field(None, min_length=1)
    absent: list[dict[str, Any]] | None = Field(None, min_length=1)
    exactly: list[dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _something(self) -> Self:
        if self.contains is None and self.absent is None and self.exactly is None:
            raise ValueError("give contains, absent or exactly")
        if self.job is not None and self.pod is not None:
            raise FieldProblem("give 'job' or 'pod', not both", "pod")
        if self.attempt is not None and (self.pod is None or "[" not in self.pod):
            raise FieldProblem("'attempt' goes with a pod reference ('pod: workers[0/1]')", "attempt")
        for key in ("contains", "absent", "exactly"):
            for i, item in enumerate(getattr(self, key) or ()):
                if "count" in item:
                    _event_count(item["count"], f"{key}[{i}].count")
        return self

    @property
    def about_pods(self) -> bool:
        return self.pod is not None


class Rejected(_Model, defer_build=True):
    message: str


EXPECTATION_KINDS = (
    "order", "happens", "never", "final", "at", "events", "rejected", "gap", "stuck", "distribution",
)  # fmt: skip
_COMPANIONS = {
    "by": "happens", "after": "happens", "jobset": "at", "jobsets": "at", "count": "at",
    "pods": "at", "jobs": "at", "services": "at", "endpointslices": "at", "persistentvolumeclaims": "at",
}  # fmt: skip


class Expectation(_Model, defer_build=True):
    """One item of ``expect``; :attr:`kind` says which of the kinds it is."""

    order: list[MilestoneField] | None = Field(None, min_length=2)
    happens: MilestoneField | None = None
    by: Duration | None = None
    after: Duration | None = None
    never: MilestoneField | None = None
    final: StateCheck | None = None
    at: Duration | None = None
    jobset: dict[str, Any] | None = None
    jobsets: dict[str, dict[str, Any]] | None = None
    count: Count | None = None
    events: EventsCheck | None = None
    rejected: Rejected | None = None
    pods: dict[str, dict[str, Any]] | None = None
    jobs: dict[str, dict[str, Any]] | None = None
    services: dict[str, dict[str, Any]] | None = None
    endpointslices: dict[str, dict[str, Any]] | None = None
    persistentvolumeclaims: dict[str, dict[str, Any]] | None = None
    gap: Gap | None = None
    stuck: StuckField | None = None
    distribution: Distribution | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        kinds = [k for k in EXPECTATION_KINDS if k in self.model_fields_set]
        if len(kinds) != 1:
            got = ", ".join(kinds) if kinds else "none"
            raise ValueError(
                f"an expectation needs exactly one of {', '.join(EXPECTATION_KINDS)} (got {got})"
            )
        kind = kinds[0]
        if getattr(self, kind) is None:
            raise FieldProblem(f"'{kind}' needs a value", kind)
        for key, owner in _COMPANIONS.items():
            if key in self.model_fields_set and owner != kind:
                raise FieldProblem(f"'{key}' goes with '{owner}', not with '{kind}'", key)
        if kind == "happens" and self.by is not None and self.after is not None and self.after > self.by:
            raise FieldProblem("'after' is later than 'by': nothing can satisfy both", "after")
        if kind == "at" and self.jobset is not None and self.jobsets is not None:
            raise FieldProblem("give 'jobset' or 'jobsets', not both", "jobsets")
        if kind == "at" and not any(getattr(self, key) is not None for key in STATE_KEYS):
            raise ValueError(f"nothing to check at that time: give {', '.join(STATE_KEYS)}")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in EXPECTATION_KINDS if getattr(self, k) is not None)

    @property
    def state(self) -> StateCheck | None:
        """What a ``final`` or ``at`` expectation checks."""
        if self.final is not None:
            return self.final
        if self.at is not None:
            return StateCheck.model_construct(**{key: getattr(self, key) for key in STATE_KEYS})
        return None


# ---------------------------------------------------------------- the file


class Scenario(_Model):
    """A whole scenario file. Build with :func:`~fakecluster.scenario.loader.load_scenario`."""

    name: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=empty_list)
    seed: Int64 = 0
    until: Duration = 3600.0
    cluster: ClusterSpec = Field(default_factory=ClusterSpec)
    pods: list[PodRule] = Field(default_factory=empty_list)
    objects: list[ObjectManifest] = Field(default_factory=empty_list)
    """Objects that exist before the JobSets: created first, in order (a claim the JobSet must find)."""
    jobset: Manifest | None = None
    jobsets: list[Manifest] | None = None
    actions: list[Action] = Field(default_factory=empty_list)
    expect: list[Expectation] = Field(min_length=1)
    sweep: Sweep | None = None

    _source: Path | None = PrivateAttr(default=None)
    _lines: dict[str, int] = PrivateAttr(default_factory=empty_dict)
    _manifest_files: dict[str, tuple[Path, dict[str, int]]] = PrivateAttr(default_factory=empty_dict)
    """``{file: ...}`` manifests: scenario path (``jobsets[1]``) -> the manifest file and its lines."""

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, Mapping) and "name" not in data:
            return {**data, "name": (info.context or {}).get("default_name", "scenario")}
        return data

    @model_validator(mode="after")
    def _one_way_to_give_jobsets(self) -> Self:
        if self.until <= 0:
            raise FieldProblem("must be greater than 0s", "until")
        if self.jobset is not None and self.jobsets is not None:
            raise FieldProblem("give 'jobset' (one manifest) or 'jobsets' (several), not both", "jobsets")
        if self.jobset is None and self.jobsets is None:
            raise ValueError("no JobSet: give 'jobset' (one manifest) or 'jobsets' (several)")
        if self.jobsets is not None and not self.jobsets:
            raise FieldProblem("needs at least one manifest", "jobsets")
        seen: set[str] = set()
        for i, manifest in enumerate(self.manifests()):
            metadata = manifest.get("metadata")
            name = metadata.get("name") if isinstance(metadata, dict) else None
            if isinstance(name, str) and name in seen:
                raise FieldProblem(f"JobSet name '{name}' is used twice", f"jobsets[{i}].metadata.name")
            if isinstance(name, str):
                seen.add(name)
        return self

    @model_validator(mode="after")
    def _fail_node_names_a_declared_node(self) -> Self:
        """With ``cluster.nodes`` declared, every node name is known at load; without, the default
        node's name is an implementation detail, so an unknown name is an action error at run time."""
        if self.cluster.nodes is None:
            return self
        known = [n for pool in self.cluster.nodes for n in pool.node_names()]
        for i, action in enumerate(self.actions):
            for verb, target in (("failNode", action.fail_node), ("recoverNode", action.recover_node),
                                 ("deleteNode", action.delete_node)):
                if target is not None and target.node not in known:
                    raise FieldProblem(
                        f"no node named '{target.node}' (nodes: {', '.join(known) or 'none'})",
                        f"actions[{i}].{verb}.node",
                    )
        return self

    def manifests(self) -> list[dict[str, Any]]:
        """The JobSet manifests in file order, whichever of ``jobset``/``jobsets`` gave them."""
        return [self.jobset] if self.jobset is not None else list(self.jobsets or [])

    def snapshot_times(self) -> list[float]:
        """Sorted unique times of ``at:`` expectations: the runner snapshots the cluster at each."""
        return sorted({e.at for e in self.expect if e.at is not None})

    @property
    def source(self) -> Path | None:
        """The file this scenario was loaded from (``None`` if built in memory)."""
        return self._source

    def line_of(self, field_path: str) -> int | None:
        """The source line of ``field_path`` (or its nearest enclosing field), if loaded from a file."""
        return nearest_line(self._lines, field_path)

    def locate(self, field_path: str) -> tuple[Path | None, int | None]:
        """File and line of ``field_path``; a path inside a ``{file: ...}`` manifest points into that
        manifest file (``jobset.spec.replicatedJobs[0].replicas`` -> ``manifests/js.yaml:12``)."""
        for prefix, (file, lines) in self._manifest_files.items():
            if field_path == prefix or field_path.startswith((prefix + ".", prefix + "[")):
                inner = field_path[len(prefix) :].lstrip(".")
                line = nearest_line(lines, inner) if inner else None
                return (file, line) if line is not None else (self._source, self.line_of(prefix))
        return self._source, self.line_of(field_path)
