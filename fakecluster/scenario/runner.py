"""Plays one scenario file on a fresh fake cluster and checks its expectations.

Data flows one way: scenario → cluster (API server ← controllers ← clock) → trace → expectations. The
only feedback is the one the format asks for: a ``when:`` action fires when its milestone shows up in
the trace, as a person watching the cluster would react.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import math
import os
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fakecluster import wallclock_freeze as wallclock
from fakecluster.api.objects import Obj
from fakecluster.apiserver.errors import ApiError
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import PodTimings
from fakecluster.network import DnsConfig, NetworkConfig
from fakecluster.scenario.actions import ActionPlayer
from fakecluster.scenario.errors import ScenarioError, escape_control
from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import PodIdentity, Scenario, resolve_pod_rule
from fakecluster.scenario.limits import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_PODS,
    DEFAULT_MAX_WALL_SECONDS,
    BudgetExhausted,
    RunLimits,
    install_budget,
)
from fakecluster.scenario.loader import load_scenario, validate_against_workload
from fakecluster.scenario.milestones import RJobShape
from fakecluster.scenario.programs import JobSetNetwork, check_targets, jobset_network, program_spec
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.schemas import check_state_keys, kind_schemas
from fakecluster.scenario.stuck import StuckProbe, measure_distributions
from fakecluster.scenario.timeline import render_failure
from fakecluster.scenario.trace import Snapshot, TraceEvent, trace_digest
from fakecluster.workload_plugin import WorkloadPlugin, load_plugin

SNAPSHOT_KINDS = ("JobSet", "Job", "Pod", "Service", "Node", "EndpointSlice")


@dataclass(slots=True)
class ScenarioOutcome:
    """What the CLI and the pytest item report for one scenario file."""

    path: Path
    name: str
    seed: int
    passed: bool
    failures: list[str]
    report: str
    virtual_end: float = 0.0
    wall_seconds: float = 0.0
    digest: str = ""
    events_run: int = 0
    trace: list[TraceEvent] = field(default_factory=list)
    shapes: dict[str, dict[str, RJobShape]] = field(default_factory=dict)
    stuck: bool = False
    diagnosis: str = ""
    measures: dict[int, float | None] = field(default_factory=dict)
    """Per ``distribution`` expectation (by index in ``expect``): this run's time, None if it never
    happened (:mod:`fakecluster.scenario.sweep` aggregates them over seeds)."""
    sweep: Any = None
    """For a ``sweep`` scenario: its :class:`~fakecluster.scenario.sweep.SweepSummary`."""

    def record(self) -> dict[str, Any]:
        """The ``--json`` record (format doc: path, passed, failures, virtualEnd, digest at least)."""
        if self.sweep is not None:
            return {**self._record(), **self.sweep.record()}
        return self._record()

    def _record(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "name": self.name,
            "seed": self.seed,
            "passed": self.passed,
            "failures": self.failures,
            "virtualEnd": round(self.virtual_end, 6),
            "wallSeconds": round(self.wall_seconds, 6),
            "events": self.events_run,
            "digest": self.digest,
            "stuck": self.stuck,
        }


def network_config(scenario: Scenario) -> NetworkConfig:
    spec = scenario.cluster.network
    return NetworkConfig(reachable_after=spec.reachable_after, syn_retries=spec.syn_retries)


def dns_config(scenario: Scenario) -> DnsConfig:
    spec = scenario.cluster.dns
    return DnsConfig(profile=spec.profile, cache=spec.cache, positive_ttl=spec.positive_ttl,
                     negative_ttl=spec.negative_ttl, propagation=spec.propagation)


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Path]]:
    """Scenario files under the given files/folders, sorted; and the paths that do not exist."""
    files: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        try:
            if path.is_dir():
                files.extend(
                    sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
                )
            elif path.exists():
                files.append(path)  # named explicitly: a FIFO or device fails as that scenario, with why
            else:
                missing.append(path)
        except (OSError, ValueError):  # a NUL in the name, an unreadable folder
            missing.append(path)
    return files, missing


Observe = Callable[[Cluster, WorkloadPlugin], None]
"""Called once the cluster is assembled, before anything is applied: a pure observer (a report's extra
watches) attaches itself here. It must not write to the cluster."""


def _failed_outcome(
    path: Path, name: str, seed: int, started: float, /, *texts: str
) -> ScenarioOutcome:
    """A failed outcome: ``texts`` is the one-line message and optionally the longer report."""
    message = texts[0]
    report = texts[1] if len(texts) > 1 else None
    return ScenarioOutcome(
        path, name, seed, False, [message], report if report is not None else message,
        wall_seconds=wallclock.real_perf_counter() - started,
    )


def run_scenario(
    path: Path,
    *,
    plugin: WorkloadPlugin | None = None,
    limits: RunLimits | None = None,
    observe: Observe | None = None,
) -> ScenarioOutcome:
    """Load, play and check one file (every seed of a ``sweep``). Bad input becomes a failed outcome with
    a one-line error; anything unexpected becomes an "internal error" of this scenario alone
    (:func:`_internal_error`), never a crash of the whole run. ``limits`` carries the command line's
    bounds (:mod:`fakecluster.scenario.limits`); ``observe`` is called for every run (each seed of a
    sweep)."""
    started = wallclock.real_perf_counter()
    limits = limits or RunLimits()
    try:
        scenario = load_scenario(path, allowed_dirs=limits.allowed_dirs)
    except ScenarioError as err:
        return _failed_outcome(path, path.stem, 0, started, str(err))
    except Exception as exc:  # a bug in the loader: one scenario fails, the others still run
        return _failed_outcome(path, path.stem, 0, started, *_internal_error(path, "loading", None, exc))
    plugin = plugin or load_plugin()
    play = functools.partial(play_seed, observe=observe, limits=limits)
    if scenario.sweep is not None:
        from fakecluster.scenario.sweep import run_sweep

        return run_sweep(scenario, path, plugin, play)
    return play(scenario, path, plugin, scenario.seed)


def play_seed(
    scenario: Scenario,
    path: Path,
    plugin: WorkloadPlugin,
    seed: int,
    *,
    observe: Observe | None = None,
    limits: RunLimits | None = None,
) -> ScenarioOutcome:
    """Play a loaded scenario with ``seed`` (the file's own, or one of its sweep's): the same run as
    the file with ``seed: <seed>`` and no ``sweep`` key. A plain function of its arguments, so a sweep
    can map it over seeds in any executor."""
    started = wallclock.real_perf_counter()
    if seed != scenario.seed:
        scenario = scenario.model_copy(update={"seed": seed})
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the cyclic collector rescans the whole (acyclic) object graph: superlinear in pods
    try:
        run = ScenarioRun(scenario, path, plugin, limits)
        run.observe = observe
        with wallclock.virtual_time():
            outcome = run.play()
    except ScenarioError as err:
        return _failed_outcome(path, scenario.name, scenario.seed, started, str(err))
    except BudgetExhausted as exc:
        outcome = _failed_outcome(
            path, scenario.name, scenario.seed, started, f"{escape_control(str(path))}: {exc}"
        )
        outcome.virtual_end, outcome.events_run = exc.virtual_time, exc.events
        return outcome
    except Exception as exc:  # a bug in the cluster or controller: report it with the seed, run the others
        return _failed_outcome(
            path, scenario.name, scenario.seed, started, *_internal_error(path, "playing", scenario.seed, exc)
        )
    finally:
        if gc_was_enabled:
            gc.enable()
    outcome.wall_seconds = wallclock.real_perf_counter() - started
    return outcome


def _internal_error(path: Path, doing: str, seed: int | None, exc: BaseException) -> tuple[str, str]:
    """One line naming the exception and where it was raised, with a hint to report it; the report adds
    the traceback only when ``FAKECLUSTER_TRACEBACK=1`` (a user's terminal gets no Python traceback)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    detail = escape_control(" ".join(str(exc).split()))[:200]
    with_seed = f" (seed {seed})" if seed is not None else ""
    line = (
        f"{escape_control(str(path))}: internal error while {doing} the scenario{with_seed}:"
        f" {type(exc).__name__}{where}: {detail} -- a fakecluster bug: please report it with this file"
    )
    report = line
    if os.environ.get("FAKECLUSTER_TRACEBACK") == "1":
        report += "\n" + "".join(traceback.format_exception(exc))
    return line, report


class ScenarioRun:
    """One play of a scenario: the cluster, the recorder, the actions and the snapshots."""

    def __init__(
        self, scenario: Scenario, path: Path, plugin: WorkloadPlugin, limits: RunLimits | None = None
    ) -> None:
        self.scenario = scenario
        self.path = path
        self.plugin = plugin
        self.limits = limits or RunLimits()
        self.manifests = scenario.manifests()
        self.shapes: dict[str, dict[str, RJobShape]] = {}
        self.networks: dict[str, JobSetNetwork] = {}
        self.namespaces: dict[str, str] = {}
        for i, manifest in enumerate(self.manifests):
            if manifest.get("kind") != plugin.kind:
                raise ScenarioError(
                    f"expected kind {plugin.kind!r}, got {manifest.get('kind')!r}",
                    file=path,
                    field_path=f"{self._manifest_path(i)}.kind",
                    line=scenario.line_of(f"{self._manifest_path(i)}.kind"),
                )
            try:
                name, groups = plugin.shapes(manifest)
                if not isinstance(name, str) or not all(isinstance(g, str) for g in groups):
                    raise TypeError("the JobSet and its replicated jobs are named by strings")
                shapes = {g: RJobShape(s.replicas, s.pods_per_job) for g, s in groups.items()}
                network = jobset_network(manifest, shapes)
            except (TypeError, ValueError, AttributeError, OverflowError) as err:
                raise self._unreadable(i, err) from None
            self.shapes[name] = shapes
            self.namespaces[name] = (manifest.get("metadata") or {}).get("namespace") or "default"
            self.networks[name] = network
        self._check_pod_budget()
        validate_against_workload(scenario, self.shapes)
        check_state_keys(scenario, kind_schemas(plugin), plugin.kind)
        check_targets(scenario, self.networks)
        self._timings: dict[str, PodTimings] = {}
        self._timings_by_rules: dict[tuple[int, ...], PodTimings] = {}
        self.rejections: list[str] = []
        self.observe: Observe | None = None

    # ----------------------------------------------------------------- set-up
    def _check_pod_budget(self) -> None:
        """Refuse manifests asking for more pods than the budget before anything is created:
        ``replicas: 1000000000`` passes the webhook (an int32) and would then exhaust memory."""
        budget = self.scenario.cluster.budget
        limit = self.limits.max_pods or budget.pods or DEFAULT_MAX_PODS
        total = sum(g.replicas * g.pods_per_job for groups in self.shapes.values() for g in groups.values())
        if total > limit:
            raise ScenarioError(
                f"the manifests ask for {total} pods, more than the limit of {limit} pods per scenario"
                " (raise it with cluster.budget.pods or --max-pods)",
                file=self.path,
                field_path=self._manifest_path(0),
                line=self.scenario.line_of(self._manifest_path(0)),
            )

    def _install_budget(self, cluster: Cluster) -> None:
        budget = self.scenario.cluster.budget
        install_budget(
            cluster.clock,
            self.limits.max_events or budget.events or DEFAULT_MAX_EVENTS,
            self.limits.max_wall_seconds or budget.wall_seconds or DEFAULT_MAX_WALL_SECONDS,
            wallclock.real_perf_counter,
        )

    def _install_plugin(self, cluster: Cluster) -> Any:
        """Install the workload; an unknown or locked feature gate is the scenario's error, at its key."""
        gates = dict(self.scenario.cluster.feature_gates)
        try:
            return self.plugin.install(cluster, gates, latency=self.scenario.cluster.latency.jobset)
        except ValueError as err:
            raise ScenarioError(
                str(err), file=self.path, field_path="cluster.featureGates",
                line=self.scenario.line_of("cluster.featureGates"),
            ) from None

    def _config(self) -> ClusterConfig:
        latency = self.scenario.cluster.latency
        config = ClusterConfig(
            behaviour=self._behaviour,
            feature_gates=dict(self.scenario.cluster.feature_gates),
            job_controller_latency=latency.job_controller,
            scheduler_latency=latency.scheduler,
            gc_latency=latency.garbage_collector,
            conflict_rate=self.scenario.cluster.faults.conflict_rate,
            informer_lag=self.scenario.cluster.informer_lag,
            endpoint_slice_latency=latency.endpoint_slice,
            network=network_config(self.scenario),
            dns=dns_config(self.scenario),
        )
        if self.scenario.cluster.nodes is not None:
            config.nodes = [
                NodePool(
                    name=pool.name,
                    count=pool.count,
                    capacity=dict(pool.capacity) or NodePool("x").capacity,
                    labels=dict(pool.labels),
                    taints=[t.model_dump(by_alias=True, exclude_none=True) for t in pool.taints],
                )
                for pool in self.scenario.cluster.nodes
            ]
        return config

    def _behaviour(self, pod: Obj) -> PodTimings:
        """Resolve the ``pods:`` rules for a pod once (by uid) into the timings the emulators use.

        What the rules resolve to depends only on which of them match, so pods matching the same rules
        (all workers of a replicated job, typically) share one resolution."""
        uid = pod["metadata"]["uid"]
        cached = self._timings.get(uid)
        if cached is not None:
            return cached
        slot = self.plugin.slot_of(pod)
        identity = PodIdentity(
            jobset=slot.owner if slot else None,
            replicated_job=slot.group if slot else None,
            job_index=slot.job_index if slot else None,
            pod_index=slot.pod_index if slot else None,
            attempt=slot.attempt if slot else None,
            labels=pod["metadata"].get("labels") or {},
        )
        matching = tuple(i for i, rule in enumerate(self.scenario.pods) if rule.match.matches(identity))
        timings = self._timings_by_rules.get(matching)
        if timings is None:
            timings = self._timings_by_rules[matching] = self._resolve(identity)
        if timings.program is not None:  # templated per pod: its own targets
            rule = resolve_pod_rule(self.scenario.pods, identity)
            assert rule.program is not None
            js = self.networks.get(identity.jobset or "")
            timings = replace(timings, program=program_spec(rule.program, identity, js))
        self._timings[uid] = timings
        return timings

    def _rule_note(self, pod: Obj) -> str | None:
        """What the ``pods`` rules fix for this pod that the diagnosis should say (``ready: never``
        overrides any probe; ``exit: never`` runs until deleted)."""
        timings = self._timings.get(pod["metadata"]["uid"])
        if timings is None:
            return None
        notes = []
        if timings.ready is not None and math.isinf(timings.ready):
            notes.append("pods rule: ready never")
        if timings.exit_after is not None and math.isinf(timings.exit_after):
            notes.append("pods rule: exit never")
        return ", ".join(notes) or None

    def _resolve(self, identity: PodIdentity) -> PodTimings:
        rule = resolve_pod_rule(self.scenario.pods, identity)
        jitter = rule.jitter if isinstance(rule.jitter, dict) else None
        return PodTimings(
            schedule=rule.schedule or 0.0,
            pull=rule.pull or 0.0,
            start=rule.start or 0.0,
            ready=rule.ready,
            exit_after=rule.exit.after if rule.exit is not None else None,
            exit_code=rule.exit.code if rule.exit is not None else 0,
            terminate=rule.terminate or 0.0,
            jitter=0.0 if jitter is not None else (rule.jitter or 0.0),  # type: ignore[arg-type]
            jitter_by_phase=tuple(sorted(jitter.items())) if jitter else (),
            program=program_spec(rule.program, identity, self.networks.get(identity.jobset or ""))
            if rule.program is not None else None,
        )

    # ----------------------------------------------------------------- play
    def play(self) -> ScenarioOutcome:
        try:
            cluster = Cluster(self.scenario.seed, self._config())
        except ApiError as err:  # a node the API server refuses, which the format's checks let through
            raise ScenarioError(
                f"the API server rejected a node: {err.message}", file=self.path, field_path="cluster.nodes",
                line=self.scenario.line_of("cluster.nodes"),
            ) from None
        cluster.clock.on_advance = wallclock.move_to
        wallclock.move_to(0.0)
        self.cluster = cluster
        self.client = cluster.client("scenario")
        controller = self._install_plugin(cluster)
        self._install_budget(cluster)
        self.recorder = TraceRecorder(cluster, self.plugin)
        if self.observe is not None:
            self.observe(cluster, self.plugin)
        self.actions = ActionPlayer(
            cluster,
            self.plugin,
            controller,
            self.recorder,
            path=self.path,
            shapes=self.shapes,
            namespaces=self.namespaces,
        )
        self.actions.schedule(self.scenario.actions)
        expects_rejection = any(e.kind == "rejected" for e in self.scenario.expect)
        for i, manifest in enumerate(self.manifests):
            try:
                created = self.client.create(manifest, readonly=True)
            except ApiError as err:
                if not expects_rejection:
                    raise self._rejected(i, err) from None
                self.rejections.append(err.message)
            else:
                self._adopt_generated_name(manifest, created)
        snapshots: dict[float, Snapshot] = {}
        until = self.scenario.until
        for t in self.scenario.snapshot_times():
            if t > until:
                break
            cluster.run(t)
            snapshots[t] = self._snapshot(t)
        stopped_by_until = cluster.run(until)
        if stopped_by_until:
            cluster.clock.advance_to(until)  # stopped by `until`, not by quiescence: the run ends at `until`
        final = self._snapshot(cluster.clock.now)
        trace = list(self.recorder.trace)
        events = list(self.recorder.events)
        virtual_end = cluster.clock.now
        action_errors = list(self.actions.errors)
        events_run = cluster.clock.events_run
        digest = hashlib.sha256((trace_digest(trace) + self.recorder.write_digest()).encode()).hexdigest()
        probe = StuckProbe(cluster, self.recorder, self.plugin, self.shapes, rule_note=self._rule_note)
        stuck, diagnosis = probe.judge(final, stopped_by_until=stopped_by_until)
        result = RunResult(
            trace=trace,
            final=final,
            snapshots=snapshots,
            events=events,
            rejection="\n".join(self.rejections) or None,
            virtual_end=virtual_end,
            seed=self.scenario.seed,
            stuck=stuck,
            diagnosis=diagnosis,
            plugin=self.plugin,
        )
        failures = check(self.scenario, result, shapes=self.shapes)
        messages = [f.summary for f in failures] + action_errors
        report = ""
        if messages:
            report = render_failure(self.scenario, result, failures, self.shapes)
            if action_errors:
                report = "\n".join(action_errors) + "\n" + report
        if stuck:
            report = (report + "\n" if report else "") + "stuck diagnosis:\n" + _indent(diagnosis)
        return ScenarioOutcome(
            path=self.path,
            name=self.scenario.name,
            seed=self.scenario.seed,
            passed=not messages,
            failures=messages,
            report=report,
            virtual_end=result.virtual_end,
            digest=digest,
            events_run=events_run,
            trace=result.trace,
            shapes=self.shapes,
            stuck=stuck,
            diagnosis=diagnosis,
            measures=measure_distributions(self.scenario, trace, self.shapes),
        )

    def _manifest_path(self, index: int) -> str:
        return "jobset" if self.scenario.jobset is not None else f"jobsets[{index}]"

    def _unreadable(self, index: int, err: Exception) -> ScenarioError:
        """A manifest too malformed to read its shape (``replicas: two``): let a scratch API server say
        why, as it would for the real create, so the line names the field; else report the raw error."""
        scratch = Cluster(self.scenario.seed, ClusterConfig())
        self._install_plugin(scratch)
        try:
            scratch.client("scenario").create(self.manifests[index])
        except ApiError as api_err:
            return self._rejected(index, api_err)
        field_path = self._manifest_path(index)
        return ScenarioError(
            f"cannot read the manifest: {err}",
            file=self.path,
            field_path=field_path,
            line=self.scenario.line_of(field_path),
        )

    def _adopt_generated_name(self, manifest: Obj, created: Obj) -> None:
        """A ``generateName`` JobSet is known by its prefix until the API server names it; from then on
        milestones, pod references and checks address the real name."""
        name = created["metadata"]["name"]
        key, _ = self.plugin.shapes(manifest)
        if key != name and key in self.shapes:
            self.shapes[name] = self.shapes.pop(key)
            self.namespaces[name] = self.namespaces.pop(key)

    def _rejected(self, index: int, err: ApiError) -> ScenarioError:
        """An unexpected rejection is bad input: one line naming the file, the manifest and the reason."""
        field_path = self._manifest_path(index)
        return ScenarioError(
            f"the API server rejected the manifest: {err.message}",
            file=self.path,
            field_path=field_path,
            line=self.scenario.line_of(field_path),
        )

    def _snapshot(self, t: float) -> Snapshot:
        server = self.cluster.server
        return Snapshot(time=t, objects={k: server.list(k) for k in SNAPSHOT_KINDS if k in server.kinds()})


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
