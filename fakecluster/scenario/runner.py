"""Plays one scenario file on a fresh fake cluster and checks its expectations.

Data flows one way: scenario → cluster (API server ← controllers ← clock) → trace → expectations. The
only feedback is the one the format asks for: a ``when:`` action fires when its milestone shows up in
the trace, as a person watching the cluster would react. The cluster is a
:class:`~fakecluster.session.FakeCluster`, the same one Python tests drive.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakecluster import wallclock_freeze as wallclock
from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.invariants import InvariantMonitor, kubernetes_invariants, network_invariants
from fakecluster.scenario.discovery import discover
from fakecluster.scenario.errors import ScenarioError, combine, escape_control
from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.limits import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_PODS,
    DEFAULT_MAX_WALL_SECONDS,
    BudgetExhausted,
    RunLimits,
    install_budget,
)
from fakecluster.scenario.loader import load_scenario, load_scenario_data, validate_against_workload
from fakecluster.scenario.milestones import Milestone
from fakecluster.scenario.programs import JobSetNetwork, check_targets, jobset_network
from fakecluster.scenario.schemas import check_state_keys, kind_schemas
from fakecluster.scenario.stuck import StuckProbe, measure_distributions
from fakecluster.scenario.timeline import render_failure, render_timeline
from fakecluster.scenario.trace import Snapshot, TraceEvent, TraceLog, trace_digest
from fakecluster.session import FakeCluster, ProgressCallback, running
from fakecluster.workload_plugin import GroupShape, WorkloadPlugin, load_plugin

__all__ = [
    "Observe",
    "ScenarioOutcome",
    "ScenarioResult",
    "ScenarioRun",
    "discover",
    "play_seed",
    "run_scenario",
    "validate_scenario",
]

SNAPSHOT_KINDS = ("JobSet", "Job", "Pod", "Service", "Node", "EndpointSlice", "PersistentVolumeClaim")


@dataclass(slots=True)
class ScenarioResult:
    """The typed result of one scenario run: what the CLI, the pytest item and Python callers read.

    ``path`` is None for a scenario given as a mapping. ``milestones`` and ``timeline`` are computed from
    the trace on demand, so a passing run in a large suite pays nothing for them."""

    path: Path | None
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
    shapes: dict[str, dict[str, GroupShape]] = field(default_factory=dict)
    mentioned: list[Milestone] = field(default_factory=list)
    """The milestones the scenario's expectations and ``when:`` actions name, in file order."""
    stuck: bool = False
    diagnosis: str = ""
    measures: dict[int, float | None] = field(default_factory=dict)
    """Per ``distribution`` expectation (by index in ``expect``): this run's time, None if it never
    happened (:mod:`fakecluster.scenario.sweep` aggregates them over seeds)."""
    sweep: Any = None
    """For a ``sweep`` scenario: its :class:`~fakecluster.scenario.sweep.SweepSummary`."""
    scenario: Scenario | None = None
    """The scenario as it was played (None if it did not load): the report reads its expectations and
    actions from it instead of loading the file again."""

    @property
    def milestones(self) -> dict[str, float | None]:
        """Each milestone the scenario names -> virtual time it happened (None: it never did)."""
        found: dict[str, float | None] = {}
        for milestone in self.mentioned:
            if milestone.text not in found:
                hit = milestone.find(self.trace, self.shapes)
                found[milestone.text] = None if hit is None else hit.time
        return found

    @property
    def timeline(self) -> str:
        """The whole run as the failure report shows it (per JobSet, replicated job and Job)."""
        return render_timeline(self.trace, self.shapes)

    def record(self) -> dict[str, Any]:
        """The ``--json`` record (format doc: path, passed, failures, virtualEnd, digest at least)."""
        if self.sweep is not None:
            return {**self._record(), **self.sweep.record()}
        return self._record()

    def _record(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path is not None else None,
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


ScenarioOutcome = ScenarioResult
"""The result's earlier name, kept for existing callers."""

Observe = Callable[[Cluster, WorkloadPlugin], None]
"""Called once the cluster is assembled, before anything is applied: a pure observer (a report's extra
watches) attaches itself here. It must not write to the cluster."""


def _failed_outcome(
    path: Path | None, name: str, seed: int, started: float, /, *texts: str
) -> ScenarioResult:
    """A failed outcome: ``texts`` is the message (one line per problem) and optionally the longer
    report."""
    message = texts[0]
    report = texts[1] if len(texts) > 1 else None
    return ScenarioResult(
        path, name, seed, False, message.splitlines() or [message], report if report is not None else message,
        wall_seconds=wallclock.real_perf_counter() - started,
    )


def run_scenario(
    source: Path | str | Mapping[str, Any],
    *,
    seed: int | None = None,
    plugin: WorkloadPlugin | None = None,
    limits: RunLimits | None = None,
    observe: Observe | None = None,
    progress: ProgressCallback | None = None,
    invariants: bool | None = None,
    shuffle_ties: int | None = None,
    sweep_seed: int | None = None,
) -> ScenarioResult:
    """Load, play and check one scenario (every seed of a ``sweep``): a file path, or the file's content
    as a mapping. ``sweep_seed``: of a sweep, play that one seed and return its own run, unfolded (what
    :func:`~fakecluster.scenario.sweep.run_sweep` plays for it; ``fakecluster run --workers`` plays a
    sweep's seeds apart and folds them with :func:`~fakecluster.scenario.sweep.fold_sweep`).

    ``seed`` overrides the scenario's own: the run is the file's with ``seed: <seed>`` (a ``sweep``
    then starts from it); the CLI's ``--seeds`` and the plugin's ``--fakecluster-seeds`` call this once
    per seed. ``limits`` carries the command line's bounds (:mod:`fakecluster.scenario.limits`);
    ``observe`` is called for every run (each seed of a sweep). Bad input becomes a failed result listing
    every problem, each a located line; anything unexpected becomes an "internal error" of this scenario
    alone (:func:`_internal_error`); never an exception. ``invariants`` overrides the scenario's
    ``cluster.invariants``, ``shuffle_ties`` (a shuffle seed) its ``cluster.shuffleTies``."""
    started = wallclock.real_perf_counter()
    limits = limits or RunLimits()
    path = None if isinstance(source, Mapping) else Path(source)
    label = path if path is not None else "scenario"
    name = path.stem if path is not None else str(source.get("name") or "scenario")  # type: ignore[union-attr]
    try:
        if isinstance(source, Mapping):
            scenario = load_scenario_data(source, name=name, allowed_dirs=limits.allowed_dirs)
        else:
            scenario = load_scenario(Path(source), allowed_dirs=limits.allowed_dirs)
    except ScenarioError as err:
        return _failed_outcome(path, name, seed if seed is not None else 0, started, str(err))
    except Exception as exc:  # a bug in the loader: one scenario fails, the others still run
        return _failed_outcome(
            path, name, seed or 0, started, *_internal_error(label, "loading", None, exc)
        )
    scenario = as_played(scenario, seed, shuffle_ties)
    plugin = plugin or load_plugin()
    play = functools.partial(play_seed, observe=observe, limits=limits, progress=progress,
                             invariants=invariants)
    if scenario.sweep is not None:
        if sweep_seed is not None:
            return play(scenario, path, plugin, sweep_seed)
        from fakecluster.scenario.sweep import run_sweep

        return run_sweep(scenario, path, plugin, play)
    return play(scenario, path, plugin, scenario.seed)


def as_played(scenario: Scenario, seed: int | None, shuffle_ties: int | None) -> Scenario:
    """``scenario`` with the command line's overrides: ``--seed`` (a sweep starts from it) and the
    ``--shuffle-ties`` seed."""
    if seed is not None and seed != scenario.seed:
        scenario = scenario.model_copy(update={"seed": seed})
    if shuffle_ties is not None:
        cluster = scenario.cluster.model_copy(update={"shuffle_ties": shuffle_ties})
        scenario = scenario.model_copy(update={"cluster": cluster})
    return scenario


def play_seed(
    scenario: Scenario,
    path: Path | None,
    plugin: WorkloadPlugin,
    seed: int,
    *,
    observe: Observe | None = None,
    limits: RunLimits | None = None,
    progress: ProgressCallback | None = None,
    invariants: bool | None = None,
) -> ScenarioResult:
    """Play a loaded scenario with ``seed`` (the file's own, or one of its sweep's): the same run as
    the file with ``seed: <seed>`` and no ``sweep`` key. A plain function of its arguments, so a sweep
    can map it over seeds in any executor."""
    started = wallclock.real_perf_counter()
    if seed != scenario.seed:
        scenario = scenario.model_copy(update={"seed": seed})
    label = path if path is not None else scenario.name
    try:
        run = ScenarioRun(scenario, path, plugin, limits)
        run.observe = observe
        run.invariants = invariants
        with running():
            try:
                outcome = run.play(progress=progress, defer_trace=True)
            finally:
                # Inside ``running()``, while the cyclic GC is still off: re-enabled first, its next
                # collection would walk the whole finished run (0.4 s per 10,000 pods) before we free it.
                run.close()
    except ScenarioError as err:
        return _failed_outcome(path, scenario.name, scenario.seed, started, str(err))
    except BudgetExhausted as exc:
        outcome = _failed_outcome(
            path, scenario.name, scenario.seed, started, f"{escape_control(str(label))}: {exc}"
        )
        outcome.virtual_end, outcome.events_run = exc.virtual_time, exc.events
        return outcome
    except Exception as exc:  # a bug in the cluster or controller: report it with the seed, run the others
        texts = _internal_error(label, "playing", scenario.seed, exc)
        return _failed_outcome(path, scenario.name, scenario.seed, started, *texts)
    outcome.wall_seconds = wallclock.real_perf_counter() - started
    return outcome


def validate_scenario(
    path: Path, *, plugin: WorkloadPlugin | None = None, limits: RunLimits | None = None
) -> list[ScenarioError]:
    """Load and check a scenario without playing it: every problem the loader, the workload names and
    the API server's admission of the manifests find (empty: the file is good)."""
    limits = limits or RunLimits()
    try:
        scenario = load_scenario(path, allowed_dirs=limits.allowed_dirs)
        run = ScenarioRun(scenario, path, plugin or load_plugin(), limits)
    except ScenarioError as err:
        return _problems(err)
    return run.admission_problems()


def _problems(err: ScenarioError) -> list[ScenarioError]:
    return list(getattr(err, "problems", [err]))


def _internal_error(path: Path | str, doing: str, seed: int | None, exc: BaseException) -> tuple[str, str]:
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
    """One play of a scenario on a :class:`~fakecluster.session.FakeCluster`: the manifests, the actions,
    the snapshots and the verdict."""

    def __init__(
        self, scenario: Scenario, path: Path | None, plugin: WorkloadPlugin, limits: RunLimits | None = None
    ) -> None:
        self.scenario = scenario
        self.path = path
        self.plugin = plugin
        self.limits = limits or RunLimits()
        self.invariants: bool | None = None
        """None: as the scenario says (``cluster.invariants``, default on); a bool overrides it."""
        self.manifests = scenario.manifests()
        self.shapes: dict[str, dict[str, GroupShape]] = {}
        self.networks: dict[str, JobSetNetwork] = {}
        self.namespaces: dict[str, str] = {}
        self.rejections: list[str] = []
        self.observe: Observe | None = None
        problems: list[ScenarioError] = []
        readable: list[int] = []
        for i, manifest in enumerate(self.manifests):
            if manifest.get("kind") != plugin.kind:
                problems.append(
                    self._error(
                        f"expected kind {plugin.kind!r}, got {manifest.get('kind')!r}",
                        f"{self._manifest_path(i)}.kind",
                    )
                )
                continue
            try:
                name, groups = plugin.shapes(manifest)
                if not isinstance(name, str) or not all(isinstance(g, str) for g in groups):
                    raise TypeError("the JobSet and its replicated jobs are named by strings")
                shapes = dict(groups)
                network = jobset_network(manifest, shapes)
            except (TypeError, ValueError, AttributeError, OverflowError) as err:
                problems.extend(_problems(self._unreadable(i, err)))
                continue
            readable.append(i)
            self.shapes[name] = shapes
            self.namespaces[name] = (manifest.get("metadata") or {}).get("namespace") or "default"
            self.networks[name] = network
        if not problems:  # names and the pod budget can only be checked against a complete set of shapes
            self._check_pod_budget()
            second_passes: tuple[Callable[[], None], ...] = (
                lambda: validate_against_workload(scenario, self.shapes),
                lambda: check_state_keys(scenario, kind_schemas(plugin), plugin.kind),
                lambda: check_targets(scenario, self.networks),
            )
            for second_pass in second_passes:
                try:
                    second_pass()
                except ScenarioError as err:
                    problems.extend(_problems(err))
        if problems:
            # every problem at once: what admission would say about the readable manifests, too
            raise combine(problems + self.admission_problems(readable))

    # ----------------------------------------------------------------- set-up
    def _check_pod_budget(self) -> None:
        """Refuse manifests asking for more pods than the budget before anything is created:
        ``replicas: 1000000000`` passes the webhook (an int32) and would then exhaust memory."""
        budget = self.scenario.cluster.budget
        limit = self.limits.max_pods or budget.pods or DEFAULT_MAX_PODS
        total = sum(g.replicas * g.pods_per_job for groups in self.shapes.values() for g in groups.values())
        if total > limit:
            raise self._error(
                f"the manifests ask for {total} pods, more than the limit of {limit} pods per scenario"
                " (raise it with cluster.budget.pods or --max-pods)",
                self._manifest_path(0),
            )

    def _install_budget(self, cluster: Cluster) -> None:
        budget = self.scenario.cluster.budget
        install_budget(
            cluster.clock,
            self.limits.max_events or budget.events or DEFAULT_MAX_EVENTS,
            self.limits.max_wall_seconds or budget.wall_seconds or DEFAULT_MAX_WALL_SECONDS,
            wallclock.real_perf_counter,
        )

    def _rule_note(self, pod: Obj) -> str | None:
        """What the ``pods`` rules fix for this pod that the diagnosis should say (``ready: never``
        overrides any probe; ``exit: never`` runs until deleted)."""
        return self.session.behaviour.note(pod)

    # ----------------------------------------------------------------- play
    def close(self) -> None:
        """After :meth:`play` (whatever its end): take the session's cluster apart so the run's objects
        are freed now, not by a full cyclic collection (:meth:`FakeCluster.close`); the result keeps
        only plain values."""
        session = vars(self).pop("session", None)
        for name in ("cluster", "client", "recorder", "actions"):
            vars(self).pop(name, None)
        if session is not None:
            session.close()
        unbuilt = vars(self).pop("_unbuilt", None)
        if unbuilt is not None:  # play(defer_trace=True): the outcome's trace, now the cluster is freed
            outcome, log = unbuilt
            outcome.trace = log.events()

    def play(self, *, progress: ProgressCallback | None = None, defer_trace: bool = False) -> ScenarioResult:
        """Play the scenario and check it. ``defer_trace``: the outcome's ``trace`` list is built by
        :meth:`close`, once the cluster is taken apart, instead of here: the events of a large run (some
        1.8 kB a pod) then take the place of the freed cluster instead of adding to it at the run's
        peak of memory (100,000 pods: some 90 MB less)."""
        try:
            session = FakeCluster._for_scenario(
                self.scenario,
                self.plugin,
                shapes=self.shapes,
                namespaces=self.namespaces,
                networks=self.networks,
                progress=progress,
                after_install=self._install_budget,
                observe=self.observe,
            )
        except ScenarioError as err:  # a node or feature gate refused at assembly: at its key in the file
            if err.file is not None or not err.field_path:
                raise
            raise self._error(err.message, err.field_path) from None
        self.session = session
        self.cluster = cluster = session.cluster
        self.client = session.client
        self.recorder = session.recorder
        self.actions = session.actions
        monitor = self._monitor(cluster)
        if monitor is not None:
            advance = cluster.clock.on_advance  # the session's: wall-clock freeze (and progress)

            def on_advance(when: float) -> None:
                if advance is not None:
                    advance(when)
                monitor.on_advance(when)

            cluster.clock.on_advance = on_advance
        self.actions.schedule(self.scenario.actions)
        expects_rejection = any(e.kind == "rejected" for e in self.scenario.expect)
        for i, obj in enumerate(self.scenario.objects):
            kind = self.plugin.kind if obj["kind"] == "JobSet" else obj["kind"]
            try:
                with running():
                    session.client.create(dict(obj, kind=kind))
            except ApiError as err:
                message = f"the API server rejected the object: {err.message}"
                raise self._error(message, f"objects[{i}]") from None
        for i, manifest in enumerate(self.manifests):
            try:
                session._apply_one(manifest)
            except ApiError as err:
                if not expects_rejection:
                    raise self._rejected(i, err) from None
                self.rejections.append(err.message)
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
        if monitor is not None:
            monitor.finish()
        log = self.recorder.trace
        recorded = len(log)
        events = list(self.recorder.events)
        virtual_end = cluster.clock.now
        action_errors = list(self.actions.errors)
        events_run = cluster.clock.events_run
        digest = hashlib.sha256((trace_digest(log) + self.recorder.write_digest()).encode()).hexdigest()
        probe = StuckProbe(cluster, self.recorder, self.plugin, self.shapes, rule_note=self._rule_note)
        stuck, diagnosis = probe.judge(final, stopped_by_until=stopped_by_until)
        # The checks read the recorder's compact log as it is; its events are built as a list for the
        # result only at the end (after close() under defer_trace). A probe that played the cluster on
        # recorded more: the run's trace is what was recorded until here, built now.
        trace: Sequence[TraceEvent] = log if len(log) == recorded else log.events()[:recorded]
        result = RunResult(
            trace=trace,
            final=final,
            snapshots=snapshots,
            events=events,
            job_events=list(self.recorder.job_events),
            pod_events=list(self.recorder.pod_events),
            ordinals=self.recorder.ordinals,
            rejection="\n".join(self.rejections) or None,
            virtual_end=virtual_end,
            seed=self.scenario.seed,
            stuck=stuck,
            diagnosis=diagnosis,
            plugin=self.plugin,
        )
        failures = check(self.scenario, result, shapes=self.shapes)
        violations = [str(v) for v in monitor.violations] if monitor is not None else []
        messages = [f.summary for f in failures] + action_errors + violations
        report = ""
        if messages:
            report = render_failure(self.scenario, result, failures, self.shapes)
            if action_errors or violations:
                report = "\n".join(action_errors + violations) + "\n" + report
        if stuck:
            report = (report + "\n" if report else "") + "stuck diagnosis:\n" + _indent(diagnosis)
        outcome = ScenarioResult(
            path=self.path,
            name=self.scenario.name,
            seed=self.scenario.seed,
            passed=not messages,
            failures=messages,
            report=report,
            virtual_end=result.virtual_end,
            digest=digest,
            events_run=events_run,
            shapes=self.shapes,
            mentioned=self._mentioned_milestones(),
            stuck=stuck,
            diagnosis=diagnosis,
            measures=measure_distributions(self.scenario, trace, self.shapes),
            scenario=self.scenario,
        )
        if trace is not log:
            outcome.trace = list(trace)
        elif defer_trace:
            self._unbuilt = (outcome, log)
            # Out of close()'s reach: taking the recorder apart would empty the log it holds.
            self.recorder.trace = TraceLog()
        else:
            outcome.trace = log.events()
        return outcome

    def admission_problems(self, indexes: list[int] | None = None) -> list[ScenarioError]:
        """What the API server would say about each manifest (or those at ``indexes``), on a scratch
        cluster (``validate``)."""
        if any(e.kind == "rejected" for e in self.scenario.expect):
            return []
        try:
            scratch = self._scratch_client()
        except ScenarioError as err:
            return _problems(err)
        problems: list[ScenarioError] = []
        for i, manifest in enumerate(self.manifests):
            if indexes is not None and i not in indexes:
                continue
            try:
                with running():
                    scratch.create(manifest)
            except ApiError as err:
                problems.extend(_problems(self._rejected(i, err)))
        return problems

    def _mentioned_milestones(self) -> list[Milestone]:
        found: list[Milestone] = []
        for exp in self.scenario.expect:
            found.extend(exp.order or [])
            found.extend(m for m in (exp.happens, exp.never) if isinstance(m, Milestone))
            if exp.gap is not None:
                found.extend((exp.gap.from_, exp.gap.to))
        found.extend(a.when for a in self.scenario.actions if a.when is not None)
        return found

    def _monitor(self, cluster: Cluster) -> InvariantMonitor | None:
        """Invariants are on unless the scenario (``cluster.invariants: false``) or the caller turns them
        off; they only read, so the trace is the same either way."""
        enabled = self.invariants if self.invariants is not None else self.scenario.cluster.invariants
        if not enabled:
            return None
        plugin_invariants = getattr(self.plugin, "invariants", None)
        workload = plugin_invariants() if callable(plugin_invariants) else []
        spec = self.scenario.cluster
        latencies = spec.latency.model_dump()
        # "quiet" must outlast every reaction still on its way: the Job controller's 1 s batching plus
        # each configured controller latency and the informer lag.
        window = 1.0 + sum(v for v in latencies.values() if isinstance(v, (int, float))) + spec.informer_lag
        if spec.faults.conflict_rate > 0:
            # a Conflict is retried after a rate-limited back-off of any length: quiet only when nothing
            # at all is left to run
            window = math.inf
        return InvariantMonitor(
            cluster.server, cluster.clock, [*kubernetes_invariants(), *network_invariants(), *workload],
            quiet_window=window, network=cluster.network,
        )

    def _manifest_path(self, index: int) -> str:
        return "jobset" if self.scenario.jobset is not None else f"jobsets[{index}]"

    def _error(self, message: str, field_path: str) -> ScenarioError:
        file, line = self.scenario.locate(field_path)
        return ScenarioError(
            message, file=file if file is not None else self.path, field_path=field_path, line=line
        )

    def _scratch_client(self) -> Any:
        """A bare cluster with the workload installed, for admission checks; an unknown or locked feature
        gate is the scenario's error, at its key."""
        with running():
            scratch = Cluster(self.scenario.seed, ClusterConfig())
            try:
                self.plugin.install(scratch, dict(self.scenario.cluster.feature_gates))
            except ValueError as err:
                raise self._error(str(err), "cluster.featureGates") from None
        return scratch.client("scenario")

    def _unreadable(self, index: int, err: Exception) -> ScenarioError:
        """A manifest too malformed to read its shape (``replicas: two``): let a scratch API server say
        why, as it would for the real create, so the line names the field; else report the raw error."""
        try:
            client = self._scratch_client()
            with running():
                client.create(self.manifests[index])
        except ScenarioError as gate_err:
            return gate_err
        except ApiError as api_err:
            return self._rejected(index, api_err)
        message = f"cannot read the manifest: {escape_control(str(err))}"
        return self._error(message, self._manifest_path(index))

    def _rejected(self, index: int, err: ApiError) -> ScenarioError:
        """An unexpected rejection is bad input: one line per field the API server names, at the line of
        that field inside the manifest (its file, for a ``{file: ...}`` manifest)."""
        base = self._manifest_path(index)
        head, sep, _ = err.message.partition(" is invalid: ")
        causes = [c for c in err.causes if c.field and c.field != "<nil>"]
        if not sep or not causes:
            return self._error(f"the API server rejected the manifest: {err.message}", base)
        if len(causes) == 1:  # keep the API server's own sentence, which users search for
            return self._error(
                f"the API server rejected the manifest: {err.message}", _join(base, causes[0].field)
            )
        return combine(
            [
                self._error(
                    f"the API server rejected the manifest: {head} is invalid: {cause}",
                    _join(base, cause.field),
                )
                for cause in causes
            ]
        )

    def _snapshot(self, t: float) -> Snapshot:
        server = self.cluster.server
        return Snapshot(time=t, objects={k: server.list(k) for k in SNAPSHOT_KINDS if k in server.kinds()})


def _join(base: str, field_path: str) -> str:
    """``jobset`` + ``spec.replicatedJobs[0].replicas`` (a Kubernetes field path) -> a scenario path."""
    return f"{base}{field_path}" if field_path.startswith("[") else f"{base}.{field_path}"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
