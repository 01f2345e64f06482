"""Drive a fake cluster from Python: :class:`FakeCluster`, the public face the YAML runner also stands on.

A scenario file is one way to say "these nodes, these pod behaviours, apply this, run, check"; a Python
test is another. Both go through this class, so a cluster built from keyword arguments behaves exactly
like one built from a file: the same pod rules (:mod:`fakecluster.scenario.pod_behaviour`), the same
workload plugin installation, the same trace recorder and milestones. Inputs use the scenario format's
vocabulary (``nodes=[{"name": "gpu", "count": 4}]``, ``pods=[{"match": {...}, "ready": "2s"}]``) and are
validated by the same models, so a typo is a :class:`~fakecluster.scenario.errors.ScenarioError` naming
the field, not a silently ignored key.

Reads go through the client protocol the controllers code against (:mod:`fakecluster.client.protocol`),
as the ``scenario`` user; :attr:`FakeCluster.cluster` is the assembled cluster, an escape hatch whose
shape may change between releases.
"""

from __future__ import annotations

import builtins
import copy
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, overload

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from fakecluster import wallclock_freeze as wallclock
from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone
from fakecluster.client import Client
from fakecluster.cluster import Cluster, ClusterConfig, NodePool, dismantle
from fakecluster.network import DnsConfig, NetworkConfig
from fakecluster.scenario import format as fmt
from fakecluster.scenario.actions import ActionPlayer
from fakecluster.scenario.durations import format_duration, parse_duration
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.factories import empty_list
from fakecluster.scenario.loader import problems_from_validation, validate_action, validate_milestone
from fakecluster.scenario.milestones import Milestone, MilestoneWatch, parse_milestone
from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.pod_behaviour import PodBehaviour
from fakecluster.scenario.programs import JobSetNetwork, jobset_network
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.timeline import render_timeline
from fakecluster.scenario.trace import TraceEvent
from fakecluster.workload_plugin import GroupShape, WorkloadPlugin, load_plugin

__all__ = ["FakeCluster", "MilestoneNotReached", "ProgressCallback"]

ProgressCallback = Callable[[float, int, int], None]
"""Called now and then during a run with (virtual seconds, events run, pods that exist)."""
_PROGRESS_EVERY = 512
"""Clock advances between progress callbacks: rare enough to cost nothing next to the events."""


class MilestoneNotReached(AssertionError):
    """``run(milestone=...)`` ended without the milestone; the message carries the run's timeline.

    An ``AssertionError`` so that pytest reports it as a failed check, not as an error in the test."""


class _Setup(BaseModel, defer_build=True):
    """The cluster-shaping keys of a scenario file (``seed``, ``cluster``, ``pods``), nothing else."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    seed: fmt.Int = 0
    cluster: fmt.ClusterSpec = Field(default_factory=fmt.ClusterSpec)
    pods: list[fmt.PodRule] = Field(default_factory=empty_list)


def network_config(spec: fmt.ClusterSpec) -> NetworkConfig:
    """The network component's settings for a ``cluster.network`` block (format 1.1)."""
    network = spec.network
    return NetworkConfig(reachable_after=network.reachable_after, syn_retries=network.syn_retries,
                         syn_loss=network.syn_loss)


def dns_config(spec: fmt.ClusterSpec) -> DnsConfig:
    """The DNS server's settings for a ``cluster.dns`` block (format 1.1)."""
    dns = spec.dns
    return DnsConfig(profile=dns.profile, cache=dns.cache, positive_ttl=dns.positive_ttl,
                     negative_ttl=dns.negative_ttl, propagation=dns.propagation)


def cluster_config(spec: fmt.ClusterSpec, behaviour: PodBehaviour) -> ClusterConfig:
    """The assembly settings for a ``cluster:`` block of the scenario format."""
    latency = spec.latency
    config = ClusterConfig(
        behaviour=behaviour,
        feature_gates=dict(spec.feature_gates),
        job_controller_latency=latency.job_controller,
        scheduler_latency=latency.scheduler,
        gc_latency=latency.garbage_collector,
        conflict_rate=spec.faults.conflict_rate,
        informer_lag=spec.informer_lag,
        endpoint_slice_latency=latency.endpoint_slice,
        network=network_config(spec),
        dns=dns_config(spec),
        shuffle_ties=spec.shuffle_seed(),
        pod_events=bool(spec.pod_events),
    )
    if spec.nodes is not None:
        config.nodes = [
            NodePool(
                name=pool.name,
                count=pool.count,
                capacity=dict(pool.capacity) or NodePool("x").capacity,
                labels=dict(pool.labels),
                taints=[t.model_dump(by_alias=True, exclude_none=True) for t in pool.taints],
            )
            for pool in spec.nodes
        ]
    return config


@contextmanager
def running() -> Iterator[None]:
    """Stray wall-clock reads see virtual time, and the cyclic GC (which rescans the whole, acyclic,
    object graph: superlinear in pods) stays off while the cluster works; both restore on exit."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with wallclock.virtual_time():
            yield
    finally:
        if gc_was_enabled:
            gc.enable()


class FakeCluster:
    """A fresh, deterministic cluster with the workload plugin (JobSet) installed.

    ``FakeCluster(seed=3, nodes=[{"name": "cpu", "count": 4, "capacity": {"cpu": 8}}],
    pods=[{"match": {"replicatedJob": "workers"}, "ready": "5s"}])``: every keyword takes the value the
    scenario file's key of that name takes (``nodes``, ``featureGates``, ``latency``, ``faults``,
    ``informerLag``, ``network``, ``dns`` and ``shuffleTies`` live under ``cluster:`` in a file).
    :meth:`from_dict` takes the file's own mapping.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        nodes: Sequence[Mapping[str, Any]] | None = None,
        pods: Sequence[Mapping[str, Any]] | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        latency: Mapping[str, Any] | None = None,
        faults: Mapping[str, Any] | None = None,
        informer_lag: float | str = 0.0,
        network: Mapping[str, Any] | None = None,
        dns: Mapping[str, Any] | None = None,
        shuffle_ties: bool | int = False,
        workload: str = "jobset",
    ) -> None:
        cluster: dict[str, Any] = {"informerLag": informer_lag, "shuffleTies": shuffle_ties}
        for key, value in (("nodes", nodes), ("featureGates", feature_gates), ("latency", latency),
                           ("faults", faults), ("network", network), ("dns", dns)):  # fmt: skip
            if value is not None:
                cluster[key] = value
        setup = _validate({"seed": seed, "cluster": cluster, "pods": list(pods or [])})
        self._start(setup.seed, setup.cluster, setup.pods, load_plugin(workload))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, workload: str = "jobset") -> FakeCluster:
        """Build from a scenario-shaped mapping with the keys ``seed``, ``cluster`` and ``pods``."""
        setup = _validate(data)
        self = cls.__new__(cls)
        self._start(setup.seed, setup.cluster, setup.pods, load_plugin(workload))
        return self

    @classmethod
    def _for_scenario(
        cls,
        scenario: fmt.Scenario,
        plugin: WorkloadPlugin,
        *,
        shapes: dict[str, dict[str, GroupShape]],
        namespaces: dict[str, str],
        networks: dict[str, JobSetNetwork] | None = None,
        progress: ProgressCallback | None = None,
        after_install: Callable[[Cluster], None] | None = None,
        observe: Callable[[Cluster, WorkloadPlugin], None] | None = None,
    ) -> FakeCluster:
        """The runner's entry: an already validated scenario; ``shapes``/``namespaces``/``networks`` are
        shared.
        ``after_install`` runs once the workload is installed (the run's budget), ``observe`` once the
        recorder watches (a report's extra observer)."""
        self = cls.__new__(cls)
        spec = scenario.cluster
        if spec.pod_events is None and any(e.events is not None and e.events.about_pods
                                           for e in scenario.expect):
            spec = spec.model_copy(update={"pod_events": True})  # asked about pod Events: record them
        self._start(
            scenario.seed,
            spec,
            scenario.pods,
            plugin,
            shapes=shapes,
            namespaces=namespaces,
            networks=networks,
            source=scenario.source,
            progress=progress,
            after_install=after_install,
            observe=observe,
        )
        return self

    def _start(
        self,
        seed: int,
        spec: fmt.ClusterSpec,
        rules: Sequence[fmt.PodRule],
        plugin: WorkloadPlugin,
        *,
        shapes: dict[str, dict[str, GroupShape]] | None = None,
        namespaces: dict[str, str] | None = None,
        networks: dict[str, JobSetNetwork] | None = None,
        source: Path | None = None,
        progress: ProgressCallback | None = None,
        after_install: Callable[[Cluster], None] | None = None,
        observe: Callable[[Cluster, WorkloadPlugin], None] | None = None,
    ) -> None:
        """Assemble in the order every recorded run has used (the golden digests depend on it).

        A node the API server refuses and an unknown or locked feature gate are
        :class:`ScenarioError` at their scenario key (``cluster.nodes``, ``cluster.featureGates``)."""
        self.plugin = plugin
        self.seed = seed
        self.shapes: dict[str, dict[str, GroupShape]] = {} if shapes is None else shapes
        self.namespaces: dict[str, str] = {} if namespaces is None else namespaces
        self.networks: dict[str, JobSetNetwork] = {} if networks is None else networks
        """Per workload: what a pod rule's ``program`` targets are templated from (format 1.1)."""
        self.generated: dict[str, str] = {}
        """A workload created by ``generateName`` -> its name (actions may name it by the prefix)."""
        self.ordinals = PodOrdinals(plugin)
        """NonIndexed pods' ordinals, shared by the pods rules, the trace, actions and assertions."""
        self.behaviour = PodBehaviour(rules, plugin, self.networks, self.ordinals)
        with running():
            try:
                self.cluster = Cluster(seed, cluster_config(spec, self.behaviour))
            except ApiError as err:  # a node the API server refuses, which the format's checks let through
                raise ScenarioError(
                    f"the API server rejected a node: {err.message}", field_path="cluster.nodes"
                ) from None
            clock = self.cluster.clock
            clock.on_advance = wallclock.move_to if progress is None else self._progress(progress)
            wallclock.move_to(0.0)
            self.client: Client = self.cluster.client("scenario")
            """The client protocol the controllers use, acting as the ``scenario`` user."""
            gates = dict(spec.feature_gates)
            try:
                self.controller = plugin.install(self.cluster, gates, latency=spec.latency.jobset)
            except ValueError as err:
                raise ScenarioError(str(err), field_path="cluster.featureGates") from None
            if after_install is not None:
                after_install(self.cluster)
            self.recorder = TraceRecorder(self.cluster, plugin, self.ordinals)
            if observe is not None:
                observe(self.cluster, plugin)
            self.actions = ActionPlayer(
                self.cluster,
                plugin,
                self.controller,
                self.recorder,
                path=source or Path("FakeCluster"),
                shapes=self.shapes,
                namespaces=self.namespaces,
                generated=self.generated,
            )

    def _progress(self, callback: ProgressCallback) -> Callable[[float], None]:
        """The clock's advance hook, reporting every few hundred advances (it only reads)."""
        advances = 0

        def on_advance(now: float) -> None:
            nonlocal advances
            wallclock.move_to(now)
            advances += 1
            if advances % _PROGRESS_EVERY == 0:
                callback(now, self.cluster.clock.events_run, self.cluster.server.count("Pod"))

        return on_advance

    # ----------------------------------------------------------------- writing

    @overload
    def apply(self, manifest: Mapping[str, Any]) -> Obj: ...
    @overload
    def apply(self, manifest: str) -> list[Obj]: ...

    def apply(self, manifest: Mapping[str, Any] | str) -> Obj | list[Obj]:
        """Create a manifest (a dict) or every document of a YAML text; returns what was stored.

        Admission runs as on a real API server: a rejected manifest raises
        :class:`~fakecluster.api.errors.ApiError` (``reason`` ``Invalid``, ``AlreadyExists``, ...).
        """
        if isinstance(manifest, str):
            return [self._apply_one(copy.deepcopy(doc)) for doc in _documents(manifest)]
        if not isinstance(manifest, Mapping):
            raise TypeError(f"apply() takes a manifest dict or YAML text, not {type(manifest).__name__}")
        return self._apply_one(copy.deepcopy(dict(manifest)))

    def _apply_one(self, manifest: Obj) -> Obj:
        """Create one manifest as given (the runner passes its own, uncopied); learn a workload's shape
        first, so milestones and pod references can name its replicated jobs."""
        key = None
        if manifest.get("kind") == self.plugin.kind:
            try:
                key, groups = self.plugin.shapes(manifest)
                shapes = dict(groups)
                network = jobset_network(manifest, shapes)
            except (TypeError, ValueError, AttributeError):
                key = None  # too malformed to read: the API server's rejection below says why
            else:
                self.shapes[key] = shapes
                self.namespaces[key] = (manifest.get("metadata") or {}).get("namespace") or "default"
                self.networks[key] = network
        with running():
            created = self.client.create(manifest)
        name = created["metadata"]["name"]
        if key is not None and key != name and key in self.shapes:
            # a generateName workload is known by its prefix until the API server names it
            self.generated[key] = name
            self.shapes[name] = self.shapes.pop(key)
            self.namespaces[name] = self.namespaces.pop(key)
            del self.networks[key]
            self.networks[name] = jobset_network(created, self.shapes[name])  # templated by its real name
        return clone(created)

    def act(self, action: Mapping[str, Any]) -> None:
        """Do one scenario action now (``{"failPod": {"pod": "workers[0/1]"}}``, ``{"suspend": True}``),
        or later with the file's ``at``/``when``/``after`` keys (failures of those: :attr:`action_errors`).

        A bad action raises :class:`ScenarioError` naming the field; one the cluster refuses now raises
        ``ApiError`` (the API server's answer) or ``LookupError`` (no running pod in that slot)."""
        data = dict(action)
        immediate = "at" not in data and "when" not in data
        if immediate:
            data["at"] = self.now
        try:
            parsed = fmt.Action.model_validate(data)
        except ValidationError as exc:
            raise problems_from_validation(exc, None, {}) from None
        validate_action(parsed, self.shapes)
        if not immediate:
            self.actions.schedule([parsed])
            return
        with running():
            self.actions.apply_now(parsed)

    # ----------------------------------------------------------------- time

    def run(self, until: float | str | None = None, *, milestone: str | None = None) -> float:
        """Advance virtual time; returns the virtual time reached.

        ``until`` is an absolute virtual time (``90``, ``"10m"``). The run ends at ``until`` if work is
        left by then, else at the last event (as a scenario's ``virtualEnd``). With ``milestone``
        (``"all workers pods Ready"``) the run stops at the event that makes it happen and returns that
        time; ``until`` (default: one hour from now) bounds the wait, and :class:`MilestoneNotReached`
        is raised if it does not happen by then.
        """
        if until is None and milestone is None:
            raise TypeError("run() needs until (a virtual time) or milestone (a milestone to wait for)")
        limit = self.now + 3600.0 if until is None else _time(until, "until")
        if milestone is None:
            self._run_to(limit)
            return self.now
        target = self._milestone(milestone)
        watch = MilestoneWatch(target)  # reads each event once, not the whole trace per event
        hit = watch.advance(self.recorder.trace, self.shapes)
        if hit is not None:
            return hit.time

        def stop_when_reached(event: TraceEvent) -> None:
            if target.matches(event) and watch.advance(self.recorder.trace, self.shapes) is not None:
                self.cluster.clock.stop()

        self.recorder.listeners.append(stop_when_reached)
        try:
            with running():
                wallclock.move_to(self.now)
                work_left = self.cluster.run(limit)
        finally:
            self.recorder.listeners.remove(stop_when_reached)
        hit = watch.advance(self.recorder.trace, self.shapes)
        if hit is None:
            if work_left:
                self.cluster.clock.advance_to(limit)
            raise MilestoneNotReached(
                f"'{milestone}' did not happen by {format_duration(limit)} (seed {self.seed});"
                f" timeline:\n{self.timeline()}"
            )
        return hit.time

    def _run_to(self, until: float) -> None:
        with running():
            wallclock.move_to(self.now)  # several clusters in one test: stray clock reads see this one's
            if self.cluster.run(until):
                self.cluster.clock.advance_to(until)  # work is left: the run ends at `until`

    def close(self) -> None:
        """Take the cluster apart (:meth:`Cluster.close <fakecluster.cluster.Cluster.close>`): its objects
        are freed at once instead of by a full cyclic garbage collection. The session is unusable
        afterwards; objects already read from it stay valid. ``with FakeCluster() as cluster:`` and the
        ``fake_cluster`` fixture close it for you."""
        cluster = vars(self).get("cluster")
        if cluster is None:
            return
        cluster.close()
        dismantle(*vars(self).values())  # the workload controller, recorder and action player
        vars(self).clear()

    def __enter__(self) -> FakeCluster:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def now(self) -> float:
        """Virtual seconds since the cluster started."""
        return self.cluster.clock.now

    # ----------------------------------------------------------------- reading

    def get(self, kind: str, name: str, namespace: str = "default") -> Obj:
        """One object (a copy: the client hands out the store's read-only snapshot), through the
        controllers' client; ``NotFound`` if absent."""
        return clone(self.client.get(kind, namespace, name))

    def list(
        self, kind: str, namespace: str | None = None, *, labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        """Objects of a kind (copies), optionally in one namespace and matching ``labels``."""
        found = self.client.list(kind, namespace, labels=dict(labels) if labels else None)
        return [clone(obj) for obj in found]

    # (after the ``list`` verb above, the builtin is spelt ``builtins.list`` in annotations)
    @property
    def trace(self) -> builtins.list[TraceEvent]:
        """What happened so far, in order (the events milestones and the digest are computed from)."""
        return self.recorder.trace.events()

    @property
    def events(self) -> builtins.list[Obj]:
        """The Kubernetes Events the workload's controller emitted, in order."""
        return list(self.recorder.events)

    @property
    def action_errors(self) -> builtins.list[str]:
        """Scheduled actions (``at``/``when``) that could not be applied, one line each."""
        return list(self.actions.errors)

    def milestone(self, text: str) -> float | None:
        """Virtual time at which a milestone (``"first launcher pods Running"``) happened, or None."""
        hit = self._milestone(text).find(self.recorder.trace, self.shapes)
        return None if hit is None else hit.time

    def happened(self, text: str) -> bool:
        """Whether a milestone has happened yet."""
        return self.milestone(text) is not None

    def timeline(self, related: Sequence[str] | None = None, width: int = 100) -> str:
        """The run so far as the failure report shows it; ``related`` narrows it to replicated jobs."""
        return render_timeline(self.recorder.trace, self.shapes, list(related) if related else None, width)

    def _milestone(self, text: str) -> Milestone:
        try:
            milestone = parse_milestone(text)
        except ValueError as exc:
            raise ScenarioError(str(exc), field_path="milestone") from None
        validate_milestone(milestone, self.shapes, rules=self.behaviour.rules)
        return milestone


def _validate(data: Mapping[str, Any]) -> _Setup:
    if not isinstance(data, Mapping):
        raise ScenarioError(f"expected a mapping with seed, cluster and pods, got {type(data).__name__}")
    try:
        return _Setup.model_validate(dict(data))
    except ValidationError as exc:
        raise problems_from_validation(exc, None, {}) from None


def _time(value: float | str, name: str) -> float:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ScenarioError(str(exc), field_path=name) from None


def _documents(text: str) -> list[Obj]:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ScenarioError(f"invalid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict):
            raise ScenarioError(f"document {i + 1} is not a mapping (a Kubernetes manifest)")
    return docs
