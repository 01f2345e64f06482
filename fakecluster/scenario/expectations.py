"""Check a scenario's ``expect:`` list against what a run produced, one :class:`Failure` per broken item.

This is a pure function of the scenario and a :class:`RunResult`, so the runner, the pytest plugin and
unit tests share one definition of "passed". Each failure carries a one-line summary written for the
person reading a CI log (which expectation, what happened instead, at what virtual time) and the names
whose slice of the timeline explains it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from fakecluster.scenario import expectations_v11 as v11
from fakecluster.scenario.durations import format_seconds
from fakecluster.scenario.format import EventsCheck, Expectation, Scenario, StateCheck
from fakecluster.scenario.matching import show, subset_match
from fakecluster.scenario.milestones import Milestone, Shapes, parse_job_ref, parse_pod_ref, workload_shapes
from fakecluster.scenario.results import Failure, RunResult
from fakecluster.scenario.trace import Snapshot, TraceEvent

if TYPE_CHECKING:
    pass

__all__ = ["Failure", "RunResult", "check"]

_COUNT_KINDS = {"jobs": "Job", "pods": "Pod", "services": "Service", "jobsets": "JobSet", "nodes": "Node",
                "endpointslices": "EndpointSlice", "persistentvolumeclaims": "PersistentVolumeClaim"}


def check(scenario: Scenario, result: RunResult, shapes: Shapes | None = None) -> list[Failure]:
    """Every failed expectation, in file order. ``shapes`` defaults to the manifests' own shape."""
    if shapes is None:
        shapes = workload_shapes(scenario.manifests())
    failures: list[Failure] = []
    if result.rejection is not None and not any(e.rejected is not None for e in scenario.expect):
        failures.append(Failure(-1, f"the manifest was rejected: {result.rejection}"))
    for index, expectation in enumerate(scenario.expect):
        failure = _check_one(index, expectation, result, shapes)
        if failure is not None:
            failures.append(failure)
    return failures


def _check_one(index: int, exp: Expectation, result: RunResult, shapes: Shapes) -> Failure | None:
    head = f"expect[{index}] {exp.kind}"
    try:
        if exp.order is not None:
            return _order(index, head, exp.order, result, shapes)
        if exp.happens is not None:
            return _happens(index, head, exp.happens, exp, result=result, shapes=shapes)
        if exp.never is not None:
            return _never(index, head, exp.never, result, shapes)
        if exp.events is not None:
            check = exp.events
            events = _selected_events(check, result)
            return (_events(index, head, check.contains or [], events)
                    or _absent(index, head, check.absent or [], events)
                    or _exactly(index, head, check.exactly, events))
        if exp.rejected is not None:
            return _rejected(index, head, exp.rejected.message, result.rejection)
        if exp.gap is not None:
            return v11.check_gap(index, head, exp.gap, result, shapes)
        if exp.stuck is not None:
            return v11.check_stuck(index, head, exp.stuck, result)
        if exp.distribution is not None:
            return None  # judged over every run of the sweep (fakecluster.scenario.sweep)
        state = exp.state
        return _state(index, exp, state, result) if state is not None else None
    except ValueError as exc:
        return Failure(index, f"{head}: {exc}")


def _when(event: TraceEvent | None) -> str:
    return f"at {format_seconds(event.time)}" if event is not None else "never happened"


def _order(
    index: int, head: str, order: Sequence[Milestone], result: RunResult, shapes: Shapes
) -> Failure | None:
    related = [m.text for m in order]
    found = [m.find(result.trace, shapes) for m in order]
    missing = [f"'{m}'" for m, e in zip(order, found, strict=True) if e is None]
    if missing:
        ended = format_seconds(result.virtual_end)
        return Failure(index, f"{head}: {', '.join(missing)} never happened (run ended at {ended})", related)
    hits = [(m, e) for m, e in zip(order, found, strict=True) if e is not None]
    for (m1, e1), (m2, e2) in pairwise(hits):
        if (e1.time, e1.seq) >= (e2.time, e2.seq):
            same = ", the same event" if e1.seq == e2.seq else ""
            return Failure(
                index,
                f"{head}: '{m1}' ({_when(e1)}) is not before '{m2}' ({_when(e2)}{same})",
                related,
            )
    return None


def _happens(
    index: int, head: str, milestone: Milestone, exp: Expectation, *, result: RunResult, shapes: Shapes
) -> Failure | None:
    event = milestone.find(result.trace, shapes)
    related = [milestone.text]
    if event is None:
        ended = format_seconds(result.virtual_end)
        return Failure(index, f"{head}: '{milestone}' never happened (run ended at {ended})", related)
    if exp.by is not None and event.time > exp.by:
        return Failure(
            index,
            f"{head}: '{milestone}' happened {_when(event)}, after the deadline {format_seconds(exp.by)}",
            related,
        )
    if exp.after is not None and event.time < exp.after:
        return Failure(
            index,
            f"{head}: '{milestone}' happened {_when(event)}, before {format_seconds(exp.after)}",
            related,
        )
    return None


def _never(index: int, head: str, milestone: Milestone, result: RunResult, shapes: Shapes) -> Failure | None:
    event = milestone.find(result.trace, shapes)
    if event is None:
        return None
    detail = f": {event.detail}" if event.detail else ""
    what = f"{event.kind} {event.namespace}/{event.name}{detail}"
    return Failure(index, f"{head}: '{milestone}' happened {_when(event)} ({what})", [milestone.text])


def _event_matches(partial: Mapping[str, Any], event: Mapping[str, Any]) -> bool:
    """``message``/``note`` match the event's note or message, exactly or as a substring; the rest is a
    subset match (``regarding: {name: mpi}``)."""
    texts = [str(event[k]) for k in ("note", "message") if event.get(k) is not None]
    for key, want in partial.items():
        if key == "count":  # how often it happened: the series count, or the legacy count
            have = int((event.get("series") or {}).get("count") or event.get("deprecatedCount")
                       or event.get("count") or 1)
            if isinstance(want, Mapping):  # {min: 2} / {max: 5}: a bound, not a number
                if have < int(want.get("min", have)) or have > int(want.get("max", have)):
                    return False
            elif int(want) != have:
                return False
        elif key in ("message", "note"):
            if not any(str(want) == text or str(want) in text for text in texts):
                return False
        elif subset_match({key: want}, event):
            return False
    return True


def _events(
    index: int, head: str, contains: list[dict[str, Any]], events: list[dict[str, Any]]
) -> Failure | None:
    position = 0
    for number, partial in enumerate(contains):
        while position < len(events) and not _event_matches(partial, events[position]):
            position += 1
        if position == len(events):
            after = f" after the one matching contains[{number - 1}]" if number else ""
            recorded = ", ".join(f"{e.get('type', '?')}/{e.get('reason', '?')}" for e in events) or "none"
            return Failure(index, f"{head}: no event matching {show(partial)}{after}; recorded: {recorded}")
        position += 1
    return None


def _absent(
    index: int, head: str, absent: list[dict[str, Any]], events: list[dict[str, Any]]
) -> Failure | None:
    """``absent``: no recorded event matches any of these."""
    for number, partial in enumerate(absent):
        hit = next((e for e in events if _event_matches(partial, e)), None)
        if hit is not None:
            note = hit.get("note") or hit.get("message") or ""
            return Failure(index, f"{head}: absent[{number}] {show(partial)} was recorded: "
                                  f"{hit.get('type', '?')}/{hit.get('reason', '?')} {note!r}")
    return None


def _exactly(
    index: int, head: str, exactly: list[dict[str, Any]] | None, events: list[dict[str, Any]]
) -> Failure | None:
    """``exactly``: as many events as items, item i matching event i."""
    if exactly is None:
        return None
    recorded = ", ".join(f"{e.get('type', '?')}/{e.get('reason', '?')}" for e in events) or "none"
    if len(exactly) != len(events):
        return Failure(index, f"{head}: expected exactly {len(exactly)} event(s), got {len(events)}: "
                              f"{recorded}")
    for number, (partial, event) in enumerate(zip(exactly, events, strict=True)):
        if not _event_matches(partial, event):
            note = event.get("note") or event.get("message") or ""
            return Failure(index, f"{head}: exactly[{number}] {show(partial)} does not match event {number} "
                                  f"{event.get('type', '?')}/{event.get('reason', '?')} {note!r}; "
                                  f"recorded: {recorded}")
    return None


def _selected_events(check: EventsCheck, result: RunResult) -> list[dict[str, Any]]:
    """The recorded events an ``events`` expectation is about: the JobSet's, a Job's (by name or job
    reference) or the pods' of a slot (by pod reference, every pod that held it in the attempt) or of
    one pod by name. Raises ``ValueError`` for a reference that no object of the run ever had."""
    if check.job is not None:
        names = {_job_name(check.job, result)}
        source = result.job_events
    elif check.pod is not None:
        names = _pod_names(check.pod, check.attempt, result)
        source = result.pod_events
    else:
        return result.events
    return [e for e in source if (e.get("regarding") or {}).get("name") in names]


def _job_name(text: str, result: RunResult) -> str:
    if "[" not in text:
        return text
    ref = parse_job_ref(text)
    for event in result.trace:
        if (event.kind == "Job" and event.event == "Created" and event.replicated_job == ref.replicated_job
                and event.job_index == ref.job_index and ref.jobset in (None, event.jobset)):
            return event.name
    raise ValueError(f"no Job was created for {ref}")


def _pod_names(text: str, attempt: int | None, result: RunResult) -> set[str]:
    if "[" not in text:
        return {text}
    ref = parse_pod_ref(text)
    created = [e for e in result.trace
               if e.kind == "Pod" and e.event == "Created" and e.replicated_job == ref.replicated_job
               and e.job_index == ref.job_index and e.pod_index == ref.pod_index
               and ref.jobset in (None, e.jobset)]
    if attempt is None:
        attempt = _final_attempt(created, result)
    names = {e.name for e in created if (e.attempt or 0) == attempt}
    if not names:
        raise ValueError(f"no pod was created in slot {ref} (attempt {attempt})")
    return names


def _final_attempt(created: list[TraceEvent], result: RunResult) -> int:
    """The attempt pod references address at the end of the run: the JobSet's ``status.restarts``, or
    the latest attempt seen if the JobSet is gone."""
    if not created:
        return 0
    owner = created[0].jobset
    workload = result.final.get("JobSet", owner) if owner is not None else None
    if workload is not None and result.plugin is not None:
        return result.plugin.current_attempt(workload)
    return max(e.attempt or 0 for e in created)


def _rejected(index: int, head: str, message: str, rejection: str | None) -> Failure | None:
    if rejection is None:
        return Failure(
            index, f"{head}: expected the manifest to be rejected with {message!r}, but it was accepted"
        )
    if message not in rejection:
        return Failure(index, f"{head}: the rejection {rejection!r} does not contain {message!r}")
    return None


def _state(index: int, exp: Expectation, state: StateCheck, result: RunResult) -> Failure | None:
    snapshot: Snapshot | None
    if exp.at is None:
        head, snapshot = f"expect[{index}] final", result.final
    else:
        head = f"expect[{index}] at {format_seconds(exp.at)}"
        snapshot = result.snapshots.get(exp.at)
        if snapshot is None and exp.at >= result.virtual_end:
            snapshot = result.final
        if snapshot is None:
            return Failure(index, f"{head}: the run recorded no snapshot at that time")
    if snapshot is None:
        return Failure(index, f"{head}: the run recorded no final snapshot")
    problems = _state_problems(state, snapshot)
    for key, by_name in state.objects():
        problems.extend(v11.object_problems(key, by_name, snapshot, result.plugin, result.ordinals))
    if not problems:
        return None
    return Failure(index, f"{head}: {'; '.join(problems)}", _related_rjobs(state))


def _state_problems(state: StateCheck, snapshot: Snapshot) -> list[str]:
    problems: list[str] = []
    if state.jobset is not None:
        subset = dict(state.jobset)
        name = subset.pop("name", None)
        target, problem = _pick_jobset(snapshot, name, subset)
        if problem:
            problems.append(problem)
        elif target is not None:
            label = (target.get("metadata") or {}).get("name", "?")
            problems.extend(f"jobset {label}: {p}" for p in subset_match(subset, target))
    for name, subset in (state.jobsets or {}).items():
        target = snapshot.get("JobSet", name)
        if target is None:
            problems.append(f"JobSet '{name}' does not exist")
        else:
            problems.extend(f"jobset {name}: {p}" for p in subset_match(subset, target))
    if state.count is not None:
        for key, kind in _COUNT_KINDS.items():
            want = getattr(state.count, key)
            have = len(snapshot.of_kind(kind))
            if want is not None and want != have:
                problems.append(f"count.{key}: expected {want}, got {have}")
    return problems


def _pick_jobset(
    snapshot: Snapshot, name: Any, subset: Mapping[str, Any]
) -> tuple[dict[str, Any] | None, str]:
    """The JobSet a ``jobset:`` subset is about: named by ``name:``/``metadata.name``, else the only one."""
    metadata = subset.get("metadata")
    if name is None and isinstance(metadata, Mapping):
        name = metadata.get("name")
    if name is not None:
        target = snapshot.get("JobSet", str(name))
        return target, "" if target is not None else f"JobSet '{name}' does not exist"
    jobsets = snapshot.of_kind("JobSet")
    if len(jobsets) == 1:
        return jobsets[0], ""
    if not jobsets:
        return None, "no JobSet exists"
    names = ", ".join(str((j.get("metadata") or {}).get("name")) for j in jobsets)
    return None, f"several JobSets exist ({names}): say which one with 'name:' or use 'jobsets:'"


def _related_rjobs(state: StateCheck) -> list[str]:
    """Replicated jobs a state check names in ``replicatedJobsStatus``: the timeline rows worth showing."""
    names: list[str] = []
    subsets = [state.jobset] if state.jobset is not None else list((state.jobsets or {}).values())
    for subset in subsets:
        status = subset.get("status") if isinstance(subset, Mapping) else None
        items = status.get("replicatedJobsStatus") if isinstance(status, Mapping) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping) and isinstance(item.get("name"), str):
                names.append(item["name"])
    names.extend(ref.split("[")[0].split("/")[-1] for ref in state.pods or {} if "[" in ref)
    return names
