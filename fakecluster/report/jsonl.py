"""The trace as data: JSON lines with a stable, documented schema (``fakecluster-trace/1``).

One header line per scenario, then one line per :class:`~fakecluster.scenario.trace.TraceEvent` in trace
order. Keys are fixed and always present (``null`` when a coordinate does not apply), so a reader can rely
on them without probing; ``docs/trace-format.md`` is the contract. Several scenarios may share one file:
each header starts that scenario's events. The header's ``digest`` is the run's digest (trace and every
write); its ``traceDigest`` is what the events alone hash to (``fakecluster.scenario.trace.trace_digest``),
which is how a reader can tell that a file is complete and unedited.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fakecluster.scenario.trace import TraceEvent

__all__ = ["SCHEMA", "TraceFile", "TraceFormatError", "event_record", "read_traces", "write_trace"]

SCHEMA = "fakecluster-trace/1"
"""Bumped only if a key changes meaning or disappears; new keys may be added within a version."""


class TraceFormatError(ValueError):
    """A line of a trace file that is not in the schema: the message names the file and line."""


@dataclass(slots=True)
class TraceFile:
    """One scenario's header and events, as read back from a JSON-lines file."""

    header: dict[str, Any]
    events: list[TraceEvent] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.header.get("scenario") or self.header.get("path") or "")


def header_record(*, path: str, name: str, seed: int, passed: bool, digest: str, trace_digest: str,
                  virtual_end: float, events: int) -> dict[str, Any]:
    """The line that opens a scenario's events."""
    return {
        "schema": SCHEMA,
        "scenario": name,
        "path": path,
        "seed": seed,
        "passed": passed,
        "virtualEnd": round(virtual_end, 6),
        "digest": digest,
        "traceDigest": trace_digest,
        "events": events,
    }


def event_record(event: TraceEvent) -> dict[str, Any]:
    """One event line: ``t`` (virtual seconds), ``seq``, the object, its workload slot, event, detail."""
    return {
        "t": round(event.time, 6),
        "seq": event.seq,
        "kind": event.kind,
        "namespace": event.namespace,
        "name": event.name,
        "slot": {
            "jobset": event.jobset,
            "replicatedJob": event.replicated_job,
            "jobIndex": event.job_index,
            "podIndex": event.pod_index,
            "attempt": event.attempt,
        },
        "event": event.event,
        "detail": event.detail,
    }


def write_trace(out: IO[str], header: dict[str, Any], trace: Iterable[TraceEvent]) -> None:
    """Append one scenario (header, then events) to an open text file."""
    out.write(json.dumps(header, sort_keys=True) + "\n")
    for event in trace:
        out.write(json.dumps(event_record(event), sort_keys=True, ensure_ascii=False) + "\n")


_SLOT_KEYS = ("jobset", "replicatedJob", "jobIndex", "podIndex", "attempt")


def _event_from(record: dict[str, Any]) -> TraceEvent:
    slot = record["slot"]
    if not isinstance(slot, dict):
        raise TypeError("'slot' must be an object")
    for key in _SLOT_KEYS:
        slot.setdefault(key, None)
    if not isinstance(record["t"], int | float) or not isinstance(record["seq"], int):
        raise TypeError("'t' must be a number and 'seq' an integer")
    return TraceEvent(float(record["t"]), record["seq"], str(record["kind"]), str(record["namespace"]),
                      str(record["name"]), str(record["event"]), slot["jobset"], slot["replicatedJob"],
                      slot["jobIndex"], slot["podIndex"], slot["attempt"], str(record.get("detail") or ""))


def read_traces(path: Path) -> list[TraceFile]:
    """Every scenario in a trace file; :class:`TraceFormatError` names the file and line of a bad one."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TraceFormatError(f"{path}: cannot read: {err.strerror or err}") from None
    return list(_parse(path, text.splitlines()))


def _parse(path: Path, lines: list[str]) -> Iterator[TraceFile]:
    current: TraceFile | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise TraceFormatError(f"{path}:{number}: not JSON: {err.msg}") from None
        if not isinstance(record, dict):
            raise TraceFormatError(f"{path}:{number}: expected a JSON object")
        if "schema" in record:
            if record["schema"] != SCHEMA:
                raise TraceFormatError(
                    f"{path}:{number}: schema: unsupported {record['schema']!r}, expected {SCHEMA!r}"
                )
            if current is not None:
                yield current
            current = TraceFile(record)
            continue
        if current is None:
            raise TraceFormatError(f"{path}:{number}: an event before the first header line ({SCHEMA})")
        try:
            current.events.append(_event_from(record))
        except KeyError as err:
            raise TraceFormatError(f"{path}:{number}: missing key {err.args[0]!r}") from None
        except (TypeError, ValueError) as err:
            raise TraceFormatError(f"{path}:{number}: {err}") from None
    if current is None:
        raise TraceFormatError(f"{path}: no header line ({SCHEMA}): not a fakecluster trace")
    yield current
