"""Read a scenario file into a :class:`~fakecluster.scenario.format.Scenario`, or say exactly what is wrong.

YAML is composed into nodes first, so every field path (``pods[0].exit.after``) can be mapped to the line
it was written on; pydantic then validates the plain data, and its first error (earliest in the file) is
turned into one :class:`ScenarioError` line. :func:`validate_against_workload` is the second pass that
needs the manifests' shape: it rejects milestones, pod references and pod rules naming replicated jobs
or JobSets that do not exist, so a typo fails at load instead of making ``never:`` pass vacuously.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from fakecluster.scenario import format as fmt
from fakecluster.scenario.errors import (
    FieldProblem,
    ScenarioError,
    ScenarioProblems,
    combine,
    escape_control,
    join_path,
    nearest_line,
)
from fakecluster.scenario.file_refs import RefusedReference, resolve_reference
from fakecluster.scenario.milestones import Milestone, PodRef, Shapes, parse_job_ref, parse_pod_ref
from fakecluster.scenario.reading import (
    MultipleDocuments,
    UnreadableFile,
    YamlProblem,
    parse_bounded_yaml,
    read_bounded_text,
)

__all__ = [
    "load_scenario", "load_scenario_data", "problems_from_validation", "validate_action",
    "validate_against_workload", "validate_milestone",
]  # fmt: skip

_EXPECTED = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "string_type": "a string", "bool_type": "true or false", "bool_parsing": "true or false",
    "float_type": "a number", "float_parsing": "a number", "dict_type": "a mapping",
    "model_type": "a mapping", "model_attributes_type": "a mapping", "list_type": "a list",
}  # fmt: skip


def load_scenario(path: Path, *, allowed_dirs: Iterable[Path] = ()) -> fmt.Scenario:
    """Load and validate one scenario file; every problem is a :class:`ScenarioError`, never a traceback.

    All problems found are reported at once (:class:`~fakecluster.scenario.errors.ScenarioProblems`),
    each with its own file, line and field path. Reading is bounded (:mod:`~fakecluster.scenario.reading`)
    and ``{file:}`` references stay inside the scenario's tree or ``allowed_dirs``
    (:mod:`~fakecluster.scenario.file_refs`)."""
    path = Path(path)
    try:
        text = read_bounded_text(path)
    except UnreadableFile as exc:
        raise ScenarioError(f"cannot read the scenario file: {exc}", file=path) from None
    problems: list[ScenarioError] = []
    data, lines = _parse_yaml(text, path, problems)
    if data is None:
        raise ScenarioError(
            "the file is empty; a scenario needs at least 'jobset' or 'jobsets' and 'expect'", file=path
        )
    if not isinstance(data, dict):
        raise ScenarioError(
            f"a scenario is a mapping of keys (jobset, expect, ...), got {_describe(data)}", file=path, line=1
        )
    if "apiVersion" in data and "kind" in data and "expect" not in data:
        raise ScenarioError(
            f"this is a Kubernetes manifest (kind {escape_control(str(data['kind']))}), not a scenario;"
            " a scenario references it with 'jobset: {file: <path relative to the scenario>}'",
            file=path,
            line=1,
        )
    return _build(
        data, path, lines=lines, base_dir=path.parent, default_name=path.stem, problems=problems,
        allowed_dirs=tuple(allowed_dirs),
    )


def load_scenario_data(
    data: Mapping[str, Any],
    *,
    name: str = "scenario",
    base_dir: Path | None = None,
    allowed_dirs: Iterable[Path] = (),
) -> fmt.Scenario:
    """Validate a scenario given as a mapping (the Python API's ``run_scenario({...})``); ``{file:}``
    manifest references are read relative to ``base_dir`` (default: the working directory), inside its
    tree or ``allowed_dirs``."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"a scenario is a mapping of keys (jobset, expect, ...), got {_describe(data)}")
    return _build(
        copy.deepcopy(dict(data)), None, lines={}, base_dir=base_dir or Path(), default_name=name,
        problems=[], allowed_dirs=tuple(allowed_dirs),
    )


def _build(
    data: dict[str, Any],
    path: Path | None,
    *,
    lines: dict[str, int],
    base_dir: Path,
    default_name: str,
    problems: list[ScenarioError],
    allowed_dirs: tuple[Path, ...] = (),
) -> fmt.Scenario:
    """Validate the plain data, collecting every problem before raising them together."""
    manifest_files, failed = _resolve_manifest_refs(
        data, path, base_dir, lines, problems, allowed_dirs=allowed_dirs
    )
    try:
        scenario = fmt.Scenario.model_validate(data, context={"default_name": default_name})
    except ValidationError as exc:
        found = problems_from_validation(exc, path, lines)
        problems.extend(p for p in _flatten(found) if not any(p.field_path.startswith(f) for f in failed))
        raise combine(problems) from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps documents far from the recursion limit
        raise ScenarioError("the document is nested too deeply to validate", file=path) from None
    if problems:
        raise combine(problems)
    scenario._source = path
    scenario._lines = lines
    scenario._manifest_files = manifest_files
    return scenario


def _flatten(error: ScenarioError) -> list[ScenarioError]:
    return list(error.problems) if isinstance(error, ScenarioProblems) else [error]


_FLOW_HINT = (
    "; a milestone or pod reference with [...] inside a [...] list or {...} mapping needs quotes,"
    ' e.g. order: ["all node[0] pods Ready", "first launcher pods Created"]'
)


def _parse_yaml(text: str, file: Path, problems: list[ScenarioError]) -> tuple[Any, dict[str, int]]:
    try:
        node, data = parse_bounded_yaml(text)
        lines: dict[str, int] = {}
        if node is not None:
            _map_lines(node, "", lines, file, problems, seen_nodes=set())
        return data, lines
    except YamlProblem as exc:
        hint = _FLOW_HINT if "got '['" in exc.message and "flow" in exc.message else ""
        raise ScenarioError(f"invalid YAML: {exc.message}{hint}", file=file, line=exc.line) from None


def _map_lines(
    node: yaml.Node,
    path: str,
    lines: dict[str, int],
    file: Path | None,
    problems: list[ScenarioError],
    *,
    seen_nodes: set[int],
) -> None:
    """Record the line of every key and list item, and collect duplicate keys (PyYAML keeps the last).

    A node reached again through an alias is not walked again (its lines are those of its first use):
    re-walking is what makes an alias bomb exponential."""
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                continue
            key = str(key_node.value)
            child = join_path(path, key)
            if key in seen:
                line = key_node.start_mark.line + 1
                problems.append(
                    ScenarioError(f"duplicate key '{key}'", file=file, field_path=child, line=line)
                )
                continue
            seen.add(key)
            lines[child] = key_node.start_mark.line + 1
            _map_lines(value_node, child, lines, file, problems, seen_nodes=seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = join_path(path, index)
            lines[child] = item.start_mark.line + 1
            _map_lines(item, child, lines, file, problems, seen_nodes=seen_nodes)


def _resolve_manifest_refs(
    data: dict[str, Any],
    file: Path | None,
    base_dir: Path,
    lines: dict[str, int],
    problems: list[ScenarioError],
    *,
    allowed_dirs: tuple[Path, ...] = (),
) -> tuple[dict[str, tuple[Path, dict[str, int]]], list[str]]:
    """Replace each ``{file: path}`` under jobset/jobsets by the manifest it points to.

    Returns the manifest files with their line maps (by scenario path) and the paths whose reference
    could not be read (their problems are in ``problems``; validation errors under them are noise)."""
    refs: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(data.get("jobset"), Mapping):
        refs.append(("jobset", data["jobset"]))
    if isinstance(data.get("jobsets"), list):
        refs.extend((f"jobsets[{i}]", v) for i, v in enumerate(data["jobsets"]) if isinstance(v, Mapping))
    files: dict[str, tuple[Path, dict[str, int]]] = {}
    failed: list[str] = []
    for path, value in refs:
        if "file" not in value or "apiVersion" in value or "kind" in value:
            continue
        try:
            manifest, target, manifest_lines = _read_manifest_ref(
                value, path, file, base_dir, lines, allowed_dirs=allowed_dirs
            )
        except ScenarioError as err:
            problems.append(err)
            failed.append(path)
            continue
        files[path] = (target, manifest_lines)
        if path == "jobset":
            data["jobset"] = manifest
        else:
            data["jobsets"][int(path[len("jobsets[") : -1])] = manifest
    return files, failed


def _read_manifest_ref(
    value: Mapping[str, Any],
    path: str,
    file: Path | None,
    base_dir: Path,
    lines: dict[str, int],
    *,
    allowed_dirs: tuple[Path, ...],
) -> tuple[dict[str, Any], Path, dict[str, int]]:
    """Read a referenced manifest, bounded and contained; errors name the reference, never its content."""
    def fail(message: str, sub: str = "file") -> ScenarioError:
        field_path = join_path(path, sub)
        return ScenarioError(message, file=file, field_path=field_path, line=nearest_line(lines, field_path))

    extra = sorted(str(k) for k in value if k != "file")
    if extra:
        raise fail(f"a manifest reference takes only 'file', not '{extra[0]}'", extra[0])
    ref = value["file"]
    if not isinstance(ref, str) or not ref:
        raise fail(f"expected a path to a YAML file relative to the scenario, got {_describe(ref)}")
    shown = escape_control(ref)
    try:
        # a scenario given as a mapping has no file: its references are relative to base_dir
        anchor = file if file is not None else base_dir / "scenario.yaml"
        target = resolve_reference(ref, anchor, allowed_dirs)
        text = read_bounded_text(target)
        node, document = parse_bounded_yaml(text)
    except (RefusedReference, UnreadableFile) as exc:
        raise fail(f"cannot read manifest file '{shown}': {exc}") from None
    except MultipleDocuments:
        document = None  # reported below, as for a document that is not a mapping
        node = None
    except YamlProblem as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        raise fail(f"manifest file '{shown}'{where} is not valid YAML") from None
    if node is None or not isinstance(document, dict):
        raise fail(f"manifest file '{shown}' must hold exactly one YAML mapping (a JobSet manifest)")
    manifest_lines: dict[str, int] = {}
    dup: list[ScenarioError] = []
    _map_lines(node, "", manifest_lines, target, dup, seen_nodes=set())
    if dup:
        raise combine(dup)
    return document, target, manifest_lines


# ---------------------------------------------------------------- pydantic errors -> one line


def problems_from_validation(exc: ValidationError, file: Path | None, lines: dict[str, int]) -> ScenarioError:
    """Every pydantic error as a located problem (one error, or :class:`ScenarioProblems`)."""
    return combine([_convert(err, file, lines) for err in exc.errors()])


def _convert(err: ErrorDetails, file: Path | None, lines: dict[str, int]) -> ScenarioError:
    path = ""
    for part in err["loc"]:
        path = join_path(path, part)
    kind, message = err["type"], err["msg"]
    ctx = err.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, FieldProblem) and cause.sub_path:
        sub = cause.sub_path
        path = f"{path}{sub}" if sub.startswith("[") else join_path(path, sub)
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        message = f"unknown key '{key}'{_suggest_key(tuple(err['loc']))}"
    elif kind == "missing":
        parent, _, key = path.rpartition(".")
        key = key or path
        return ScenarioError(
            f"missing required key '{key}'", file=file, field_path=parent, line=nearest_line(lines, parent)
        )
    elif kind == "value_error":
        message = str(cause) if cause is not None else message.removeprefix("Value error, ")
    elif kind in _EXPECTED:
        message = f"expected {_EXPECTED[kind]}, got {_describe(err['input'])}"
    elif kind == "too_short":
        n = ctx.get("min_length", 1)
        message = f"needs at least {n} item{'s' if n != 1 else ''}"
    elif kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        sign = ">=" if kind == "greater_than_equal" else ">"
        message = f"must be {sign} {bound}, got {_short(err['input'])}"
    elif kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        sign = "<=" if kind == "less_than_equal" else "<"
        message = f"must be {sign} {bound}, got {_short(err['input'])}"
    elif kind == "literal_error":
        message = f"expected {ctx.get('expected')}, got {_describe(err['input'])}"
    if isinstance(err.get("input"), list) and ("milestone" in message or "pod reference" in message):
        message += _FLOW_HINT
    return ScenarioError(message, file=file, field_path=path, line=nearest_line(lines, path))


def _short(value: object) -> str:
    """``repr`` of a value, cut to 40 characters: a 400-digit number is not worth echoing whole."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def _describe(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside a field's type (``list[PodRule] | None`` -> ``PodRule``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _suggest_key(loc: tuple[int | str, ...]) -> str:
    """Suggest the key the author meant, from the keys the model at that location accepts."""
    model: type[BaseModel] | None = fmt.Scenario
    for part in loc[:-1]:
        if model is None:
            return ""
        if isinstance(part, int):
            continue
        fields = {f.alias or name: f for name, f in model.model_fields.items()}
        model = _model_in(fields[part].annotation) if part in fields else None
    if model is None:
        return ""
    keys = sorted(f.alias or name for name, f in model.model_fields.items())
    close = difflib.get_close_matches(str(loc[-1]), keys, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


# ---------------------------------------------------------------- workload names


def validate_against_workload(scenario: fmt.Scenario, shapes: Shapes) -> None:
    """Refuse references to JobSets, replicated jobs or indexes that the manifests do not define.

    ``shapes`` maps JobSet name -> replicated job name -> :class:`GroupShape` (the runner computes it from
    the manifests). Raises :class:`ScenarioError` listing every bad reference, each with its path and
    line.
    """
    checker = _WorkloadChecker(scenario, shapes)
    checks: list[tuple[Any, ...]] = []
    for i, exp in enumerate(scenario.expect):
        for j, milestone in enumerate(exp.order or []):
            checks.append((checker.milestone, milestone, f"expect[{i}].order[{j}]"))
        for key in ("happens", "never"):
            if isinstance(getattr(exp, key), Milestone):
                checks.append((checker.milestone, getattr(exp, key), f"expect[{i}].{key}"))
        if exp.gap is not None:
            checks.append((checker.milestone, exp.gap.from_, f"expect[{i}].gap.from"))
            checks.append((checker.milestone, exp.gap.to, f"expect[{i}].gap.to"))
        if exp.distribution is not None:
            span, where = exp.distribution.of, f"expect[{i}].distribution.of"
            checks.append((checker.milestone, span.to, where if span.start is None else f"{where}.to"))
            if span.start is not None:
                checks.append((checker.milestone, span.start, f"{where}.from"))
        state = exp.state
        if state is not None:
            base = f"expect[{i}].final" if exp.final is not None else f"expect[{i}]"
            checks.append((checker.state, state, base))
        if exp.events is not None:
            checks.append((checker.events, exp.events, f"expect[{i}].events"))
    checks.extend((checker.action, action, f"actions[{i}]") for i, action in enumerate(scenario.actions))
    checks.extend((checker.pod_match, rule.match, f"pods[{i}].match") for i, rule in enumerate(scenario.pods))
    problems: list[ScenarioError] = []
    for check, *args in checks:
        try:
            check(*args)
        except ScenarioError as err:
            problems.append(err)
    if problems:
        raise combine(problems)


def validate_milestone(
    milestone: Milestone,
    shapes: Shapes,
    field_path: str = "milestone",
    rules: Sequence[fmt.PodRule] | None = None,
) -> None:
    """The workload check of one milestone outside a file (the Python API's ``run(milestone=...)``);
    ``rules`` are the cluster's ``pods`` rules, which a program milestone (``Connected``) needs."""
    _WorkloadChecker(None, shapes, rules).milestone(milestone, field_path)


def validate_action(action: fmt.Action, shapes: Shapes, field_path: str = "action") -> None:
    """The workload check of one action outside a file (the Python API's ``act(...)``)."""
    _WorkloadChecker(None, shapes).action(action, field_path)


class _WorkloadChecker:
    def __init__(
        self, scenario: fmt.Scenario | None, shapes: Shapes, rules: Sequence[fmt.PodRule] | None = None
    ) -> None:
        self.scenario = scenario
        self.shapes = shapes
        self.rules: list[fmt.PodRule] | None = (
            list(scenario.pods) if scenario is not None else None if rules is None else list(rules)
        )
        """The ``pods`` rules program milestones are checked against; None: not known, not checked."""
        self.created: set[str] = set()
        """JobSets a ``create`` action makes: object assertions may name them (``jobsets: {<name>: ...}``)."""
        for action in scenario.actions if scenario is not None else ():
            manifest = action.create or {}
            metadata = manifest.get("metadata")
            if manifest.get("kind") == "JobSet" and isinstance(metadata, Mapping) \
                    and isinstance(metadata.get("name"), str):
                self.created.add(metadata["name"])

    def fail(self, path: str, message: str) -> ScenarioError:
        if self.scenario is None:
            return ScenarioError(message, field_path=path)
        file, line = self.scenario.locate(path)
        return ScenarioError(message, file=file, field_path=path, line=line)

    def jobset(self, name: str | None, path: str, example: str) -> None:
        if name is None:
            if len(self.shapes) > 1:
                raise self.fail(
                    path, f"there are several JobSets ({_names(self.shapes)}): name one, e.g. {example}"
                )
        elif name not in self.shapes:
            raise self.fail(
                path, f"no JobSet named '{name}'{_hint(name, self.shapes)} (have: {_names(self.shapes)})"
            )

    def rjob(self, jobset: str | None, rjob: str, path: str) -> list[str]:
        if jobset is not None:
            self.jobset(jobset, path, "")
        owners = [js for js, rjobs in self.shapes.items() if rjob in rjobs and jobset in (None, js)]
        if not owners:
            known = {r for js, rjobs in self.shapes.items() if jobset in (None, js) for r in rjobs}
            where = f" in JobSet '{jobset}'" if jobset else ""
            raise self.fail(
                path, f"no replicated job '{rjob}'{where}{_hint(rjob, known)} (have: {_names(known)})"
            )
        return owners

    def indexes(
        self, owners: list[str], rjob: str, job_index: int | None, pod_index: int | None, path: str
    ) -> None:
        replicas = max(self.shapes[js][rjob].replicas for js in owners)
        pods = max(self.shapes[js][rjob].pods_per_job for js in owners)
        if job_index is not None and job_index >= replicas:
            raise self.fail(path, f"job index {job_index} is out of range: '{rjob}' has {replicas} Job(s)")
        if all(not self.shapes[js][rjob].indexed for js in owners):
            return  # a NonIndexed pod's index is its ordinal: replacements go beyond the pod count
        if pod_index is not None and pod_index >= pods:
            raise self.fail(path, f"pod index {pod_index} is out of range: '{rjob}' Jobs have {pods} pod(s)")

    def milestone(self, milestone: Milestone, path: str) -> None:
        if milestone.kind == "JobSet":
            self.jobset(
                milestone.jobset, path, f"'jobset {next(iter(self.shapes), 'NAME')} {milestone.event}'"
            )
            return
        rjob = milestone.replicated_job or ""
        owners = self.rjob(milestone.jobset, rjob, path)
        if milestone.jobset is None and len(owners) > 1:
            raise self.fail(
                path,
                f"replicated job '{rjob}' is in several JobSets ({_names(owners)}):"
                f" prefix it, e.g. '{owners[0]}/{rjob}'",
            )
        self.indexes(owners, rjob, milestone.job_index, milestone.pod_index, path)
        self.program_milestone(milestone, owners, path)

    def program_milestone(self, milestone: Milestone, owners: list[str], path: str) -> None:
        """Format 1.1: ``Connected`` needs a program with connect targets, ``Listening`` one with ports,
        in some rule that can match the replicated job's pods."""
        needs = {"Connected": "connect", "Listening": "listen"}.get(milestone.event)
        if needs is None or self.rules is None:
            return
        for rule in self.rules:
            match = rule.match
            if rule.program is None or match.replicated_job not in (None, milestone.replicated_job):
                continue
            if match.jobset is not None and match.jobset not in owners:
                continue
            if getattr(rule.program, needs):
                return
        what = "connect targets" if needs == "connect" else "ports it listens on"
        raise self.fail(path, f"'{milestone.event}' needs a program with {what} for the"
                              f" '{milestone.replicated_job}' pods; no pods rule gives one")

    def pod_ref(self, ref: PodRef, path: str) -> None:
        if ref.jobset is None and len(self.shapes) > 1:
            raise self.fail(
                path,
                f"there are several JobSets ({_names(self.shapes)}): prefix the pod reference,"
                f" e.g. '{next(iter(self.shapes))}/{ref}'",
            )
        owners = self.rjob(ref.jobset, ref.replicated_job, path)
        self.indexes(owners, ref.replicated_job, ref.job_index, ref.pod_index, path)

    def action(self, action: fmt.Action, path: str) -> None:
        if action.when is not None:
            self.milestone(action.when, f"{path}.when")
        verb = action.verb
        if verb in ("suspend", "resume"):
            self.jobset(
                getattr(action, verb), f"{path}.{verb}", f"'{verb}: {next(iter(self.shapes), 'NAME')}'"
            )
        for target in (action.fail_pod, action.delete_pod, action.evict_pod):
            if target is not None:
                self.pod_ref(target.pod, f"{path}.{verb}.pod")
        for obj in (action.patch, action.patch_status, action.delete):
            if obj is not None and obj.jobset is not None:
                self.jobset(obj.jobset, f"{path}.{verb}.jobset", "jobset: NAME")

    def events(self, check: fmt.EventsCheck, base: str) -> None:
        """Pod and job references of an ``events`` expectation name slots the manifests have."""
        if check.pod is not None and "[" in check.pod:
            self.pod_ref(parse_pod_ref(check.pod), f"{base}.pod")
        if check.job is not None and "[" in check.job:
            ref = parse_job_ref(check.job)
            path = f"{base}.job"
            if ref.jobset is None and len(self.shapes) > 1:
                raise self.fail(path, f"there are several JobSets ({_names(self.shapes)}): prefix the job"
                                      f" reference, e.g. '{next(iter(self.shapes))}/{ref}'")
            owners = self.rjob(ref.jobset, ref.replicated_job, path)
            self.indexes(owners, ref.replicated_job, ref.job_index, None, path)

    def state(self, state: fmt.StateCheck, base: str) -> None:
        for ref_text in state.pods or {}:
            if "[" in ref_text:  # a pod reference; any other key is a pod's own name
                path = join_path(join_path(base, "pods"), ref_text)
                try:
                    ref = parse_pod_ref(ref_text)
                except ValueError as exc:
                    raise self.fail(path, str(exc)) from None
                self.pod_ref(ref, path)
        for name in state.jobsets or {}:
            if name not in self.created:
                self.jobset(name, f"{base}.jobsets.{name}", "")
        if state.jobset is None:
            return
        metadata = state.jobset.get("metadata")
        named = state.jobset.get("name") or (metadata.get("name") if isinstance(metadata, Mapping) else None)
        path = f"{base}.jobset.name" if "name" in state.jobset else f"{base}.jobset"
        self.jobset(named if isinstance(named, str) else None, path, "with 'name: <jobset>' under 'jobset:'")

    def pod_match(self, match: fmt.PodMatch, path: str) -> None:
        if match.jobset is not None:
            self.jobset(match.jobset, f"{path}.jobset", "")
        if match.replicated_job is not None:
            owners = self.rjob(match.jobset, match.replicated_job, f"{path}.replicatedJob")
            self.indexes(owners, match.replicated_job, match.job_index, None, f"{path}.jobIndex")
            self.indexes(owners, match.replicated_job, None, match.pod_index, f"{path}.podIndex")


def _names(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def _hint(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
