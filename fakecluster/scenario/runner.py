"""Plays one scenario file on a fresh fake cluster and checks its expectations.

Data flows one way: scenario → cluster (API server ← controllers ← clock) → trace → expectations. The
only feedback is the one the format asks for: a ``when:`` action fires when its milestone shows up in
the trace, as a person watching the cluster would react.
"""

from __future__ import annotations

import gc
import hashlib
import traceback
from collections.abc import Iterable
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
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import PodIdentity, Scenario, resolve_pod_rule
from fakecluster.scenario.loader import load_scenario, validate_against_workload
from fakecluster.scenario.milestones import RJobShape
from fakecluster.scenario.programs import JobSetNetwork, check_targets, jobset_network, program_spec
from fakecluster.scenario.recorder import TraceRecorder
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

    def record(self) -> dict[str, Any]:
        """The ``--json`` record (format doc: path, passed, failures, virtualEnd, digest at least)."""
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
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            missing.append(path)
    return files, missing


def run_scenario(path: Path, *, plugin: WorkloadPlugin | None = None) -> ScenarioOutcome:
    """Load, play and check one file. Bad input becomes a failed outcome with a one-line error."""
    started = wallclock.real_perf_counter()
    try:
        scenario = load_scenario(path)
    except ScenarioError as err:
        return ScenarioOutcome(
            path,
            path.stem,
            0,
            False,
            [str(err)],
            str(err),
            wall_seconds=wallclock.real_perf_counter() - started,
        )
    plugin = plugin or load_plugin()
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the cyclic collector rescans the whole (acyclic) object graph: superlinear in pods
    try:
        run = ScenarioRun(scenario, path, plugin)
        with wallclock.virtual_time():
            outcome = run.play()
    except ScenarioError as err:
        return ScenarioOutcome(
            path,
            scenario.name,
            scenario.seed,
            False,
            [str(err)],
            str(err),
            wall_seconds=wallclock.real_perf_counter() - started,
        )
    except Exception:  # a bug in the cluster or controller: report it with the seed, do not crash the run
        text = (
            f"{path}: internal error while playing the scenario (seed {scenario.seed}):\n"
            f"{traceback.format_exc()}"
        )
        return ScenarioOutcome(
            path,
            scenario.name,
            scenario.seed,
            False,
            [text.splitlines()[0]],
            text,
            wall_seconds=wallclock.real_perf_counter() - started,
        )
    finally:
        if gc_was_enabled:
            gc.enable()
    outcome.wall_seconds = wallclock.real_perf_counter() - started
    return outcome


class ScenarioRun:
    """One play of a scenario: the cluster, the recorder, the actions and the snapshots."""

    def __init__(self, scenario: Scenario, path: Path, plugin: WorkloadPlugin) -> None:
        self.scenario = scenario
        self.path = path
        self.plugin = plugin
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
            except (TypeError, ValueError, AttributeError) as err:
                raise self._unreadable(i, err) from None
            self.shapes[name] = {g: RJobShape(s.replicas, s.pods_per_job) for g, s in groups.items()}
            self.namespaces[name] = (manifest.get("metadata") or {}).get("namespace") or "default"
            self.networks[name] = jobset_network(manifest, self.shapes[name])
        validate_against_workload(scenario, self.shapes)
        check_targets(scenario, self.networks)
        self._timings: dict[str, PodTimings] = {}
        self._timings_by_rules: dict[tuple[int, ...], PodTimings] = {}
        self.rejections: list[str] = []

    # ----------------------------------------------------------------- set-up
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
        cluster = Cluster(self.scenario.seed, self._config())
        cluster.clock.on_advance = wallclock.move_to
        wallclock.move_to(0.0)
        self.cluster = cluster
        self.client = cluster.client("scenario")
        controller = self.plugin.install(
            cluster, dict(self.scenario.cluster.feature_gates), latency=self.scenario.cluster.latency.jobset
        )
        self.recorder = TraceRecorder(cluster, self.plugin)
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
        if cluster.run(until):
            cluster.clock.advance_to(until)  # stopped by `until`, not by quiescence: the run ends at `until`
        final = self._snapshot(cluster.clock.now)
        result = RunResult(
            trace=self.recorder.trace,
            final=final,
            snapshots=snapshots,
            events=self.recorder.events,
            rejection="\n".join(self.rejections) or None,
            virtual_end=cluster.clock.now,
            seed=self.scenario.seed,
        )
        failures = check(self.scenario, result, shapes=self.shapes)
        action_errors = self.actions.errors
        messages = [f.summary for f in failures] + action_errors
        report = ""
        if messages:
            report = render_failure(self.scenario, result, failures, self.shapes)
            if action_errors:
                report = "\n".join(action_errors) + "\n" + report
        digest = hashlib.sha256(
            (trace_digest(result.trace) + self.recorder.write_digest()).encode()
        ).hexdigest()
        return ScenarioOutcome(
            path=self.path,
            name=self.scenario.name,
            seed=self.scenario.seed,
            passed=not messages,
            failures=messages,
            report=report,
            virtual_end=result.virtual_end,
            digest=digest,
            events_run=cluster.clock.events_run,
            trace=result.trace,
        )

    def _manifest_path(self, index: int) -> str:
        return "jobset" if self.scenario.jobset is not None else f"jobsets[{index}]"

    def _unreadable(self, index: int, err: Exception) -> ScenarioError:
        """A manifest too malformed to read its shape (``replicas: two``): let a scratch API server say
        why, as it would for the real create, so the line names the field; else report the raw error."""
        scratch = Cluster(self.scenario.seed, ClusterConfig())
        self.plugin.install(scratch, dict(self.scenario.cluster.feature_gates))
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
