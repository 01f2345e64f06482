"""Plays one scenario file on a fresh fake cluster and checks its expectations.

Data flows one way: scenario → cluster (API server ← controllers ← clock) → trace → expectations. The
only feedback is the one the format asks for: a ``when:`` action fires when its milestone shows up in
the trace, as a person watching the cluster would react.
"""

from __future__ import annotations

import hashlib
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakecluster import wallclock_freeze as wallclock
from fakecluster.apiserver.errors import ApiError
from fakecluster.cluster import Cluster, ClusterConfig
from fakecluster.scenario.discovery import discover
from fakecluster.scenario.errors import ScenarioError, combine
from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.loader import load_scenario, load_scenario_data, validate_against_workload
from fakecluster.scenario.milestones import Milestone, RJobShape
from fakecluster.scenario.timeline import render_failure, render_timeline
from fakecluster.scenario.trace import Snapshot, TraceEvent, trace_digest
from fakecluster.session import FakeCluster, ProgressCallback, running
from fakecluster.workload_plugin import WorkloadPlugin, load_plugin

__all__ = [
    "ScenarioOutcome",
    "ScenarioResult",
    "ScenarioRun",
    "discover",
    "run_scenario",
    "validate_scenario",
]

SNAPSHOT_KINDS = ("JobSet", "Job", "Pod", "Service", "Node")


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
    shapes: dict[str, dict[str, RJobShape]] = field(default_factory=dict)
    mentioned: list[Milestone] = field(default_factory=list)
    """The milestones the scenario's expectations and ``when:`` actions name, in file order."""

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
        }


ScenarioOutcome = ScenarioResult
"""The result's earlier name, kept for existing callers."""


def run_scenario(
    source: Path | str | Mapping[str, Any],
    *,
    seed: int | None = None,
    plugin: WorkloadPlugin | None = None,
    progress: ProgressCallback | None = None,
) -> ScenarioResult:
    """Load, play and check one scenario: a file path, or the file's content as a mapping.

    ``seed`` overrides the scenario's own (a seed sweep runs the same file once per seed). Bad input
    becomes a failed result listing every problem, each a located line; never an exception."""
    started = wallclock.real_perf_counter()
    path = None if isinstance(source, Mapping) else Path(source)

    def failed(name: str, used_seed: int, text: str, failures: list[str] | None = None) -> ScenarioResult:
        elapsed = wallclock.real_perf_counter() - started
        return ScenarioResult(path, name, used_seed, False, failures or [text], text, wall_seconds=elapsed)

    try:
        if isinstance(source, Mapping):
            scenario = load_scenario_data(source, name=str(source.get("name") or "scenario"))
        else:
            scenario = load_scenario(Path(source))
    except ScenarioError as err:
        name = path.stem if path is not None else "scenario"
        return failed(name, seed if seed is not None else 0, str(err), str(err).splitlines())
    if seed is not None:
        scenario = scenario.model_copy(update={"seed": seed})
    plugin = plugin or load_plugin()
    try:
        run = ScenarioRun(scenario, path, plugin)
        with running():
            outcome = run.play(progress=progress)
    except ScenarioError as err:
        return failed(scenario.name, scenario.seed, str(err), str(err).splitlines())
    except Exception:  # a bug in the cluster or controller: report it with the seed, do not crash the run
        text = (
            f"{path or scenario.name}: internal error while playing the scenario (seed {scenario.seed}):\n"
            f"{traceback.format_exc()}"
        )
        return failed(scenario.name, scenario.seed, text, [text.splitlines()[0]])
    outcome.wall_seconds = wallclock.real_perf_counter() - started
    return outcome


def validate_scenario(path: Path, *, plugin: WorkloadPlugin | None = None) -> list[ScenarioError]:
    """Load and check a scenario without playing it: every problem the loader, the workload names and
    the API server's admission of the manifests find (empty: the file is good)."""
    try:
        scenario = load_scenario(path)
        run = ScenarioRun(scenario, path, plugin or load_plugin())
    except ScenarioError as err:
        return _problems(err)
    return run.admission_problems()


def _problems(err: ScenarioError) -> list[ScenarioError]:
    return list(getattr(err, "problems", [err]))


class ScenarioRun:
    """One play of a scenario on a :class:`~fakecluster.session.FakeCluster`: the manifests, the actions,
    the snapshots and the verdict."""

    def __init__(self, scenario: Scenario, path: Path | None, plugin: WorkloadPlugin) -> None:
        self.scenario = scenario
        self.path = path
        self.plugin = plugin
        self.manifests = scenario.manifests()
        self.shapes: dict[str, dict[str, RJobShape]] = {}
        self.namespaces: dict[str, str] = {}
        self.rejections: list[str] = []
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
            except (TypeError, ValueError, AttributeError) as err:
                problems.extend(_problems(self._unreadable(i, err)))
                continue
            readable.append(i)
            self.shapes[name] = {g: RJobShape(s.replicas, s.pods_per_job) for g, s in groups.items()}
            self.namespaces[name] = (manifest.get("metadata") or {}).get("namespace") or "default"
        if not problems:  # names can only be checked against a complete set of shapes
            try:
                validate_against_workload(scenario, self.shapes)
            except ScenarioError as err:
                problems.extend(_problems(err))
        if problems:
            # every problem at once: what admission would say about the readable manifests, too
            raise combine(problems + self.admission_problems(readable))

    # ----------------------------------------------------------------- play
    def play(self, *, progress: ProgressCallback | None = None) -> ScenarioResult:
        session = FakeCluster._for_scenario(
            self.scenario, self.plugin, shapes=self.shapes, namespaces=self.namespaces, progress=progress
        )
        self.session = session
        self.cluster = cluster = session.cluster
        self.client = session.client
        self.recorder = session.recorder
        self.actions = session.actions
        self.actions.schedule(self.scenario.actions)
        expects_rejection = any(e.kind == "rejected" for e in self.scenario.expect)
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
            session.run(t)
            snapshots[t] = self._snapshot(t)
        session.run(until)
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
        return ScenarioResult(
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
            shapes=self.shapes,
            mentioned=self._mentioned_milestones(),
        )

    def admission_problems(self, indexes: list[int] | None = None) -> list[ScenarioError]:
        """What the API server would say about each manifest (or those at ``indexes``), on a scratch
        cluster (``validate``)."""
        if any(e.kind == "rejected" for e in self.scenario.expect):
            return []
        scratch = self._scratch_client()
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
        found.extend(a.when for a in self.scenario.actions if a.when is not None)
        return found

    def _manifest_path(self, index: int) -> str:
        return "jobset" if self.scenario.jobset is not None else f"jobsets[{index}]"

    def _error(self, message: str, field_path: str) -> ScenarioError:
        file, line = self.scenario.locate(field_path)
        return ScenarioError(
            message, file=file if file is not None else self.path, field_path=field_path, line=line
        )

    def _scratch_client(self) -> Any:
        with running():
            scratch = Cluster(self.scenario.seed, ClusterConfig())
            self.plugin.install(scratch, dict(self.scenario.cluster.feature_gates))
        return scratch.client("scenario")

    def _unreadable(self, index: int, err: Exception) -> ScenarioError:
        """A manifest too malformed to read its shape (``replicas: two``): let a scratch API server say
        why, as it would for the real create, so the line names the field; else report the raw error."""
        try:
            with running():
                self._scratch_client().create(self.manifests[index])
        except ApiError as api_err:
            return self._rejected(index, api_err)
        return self._error(f"cannot read the manifest: {err}", self._manifest_path(index))

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
