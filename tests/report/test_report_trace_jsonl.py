"""The trace as JSON lines: the documented keys, a lossless round trip, and one-line errors for bad files."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from fakecluster.report import SCHEMA, TraceFormatError, read_traces, trace_header, write_trace
from fakecluster.scenario.runner import run_scenario
from fakecluster.scenario.trace import trace_digest

SCENARIO = Path(__file__).parents[2] / "scenarios/driver-first/ray-head-first-inorder.yaml"
EVENT_KEYS = {"t", "seq", "kind", "namespace", "name", "slot", "event", "detail"}
SLOT_KEYS = {"jobset", "replicatedJob", "jobIndex", "podIndex", "attempt"}


@pytest.fixture(scope="module")
def outcome():
    return run_scenario(SCENARIO)


def _write(outcome, path: Path) -> None:
    with path.open("w") as out:
        write_trace(out, trace_header(outcome), outcome.trace)


def test_every_line_has_the_documented_keys(outcome, tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    _write(outcome, file)
    lines = [json.loads(line) for line in file.read_text().splitlines()]
    header, events = lines[0], lines[1:]
    assert header["schema"] == SCHEMA
    assert header["digest"] == outcome.digest and header["seed"] == outcome.seed
    assert len(events) == len(outcome.trace) == header["events"]
    for record in events:
        assert set(record) == EVENT_KEYS
        assert set(record["slot"]) == SLOT_KEYS
    pods = [r for r in events if r["kind"] == "Pod"]
    assert pods and all(r["slot"]["replicatedJob"] in ("head", "workers") for r in pods)
    assert [r["seq"] for r in events] == sorted(r["seq"] for r in events)


def test_round_trip_reproduces_the_trace_digest(outcome, tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    _write(outcome, file)
    (read,) = read_traces(file)
    assert trace_digest(read.events) == trace_digest(outcome.trace) == read.header["traceDigest"]
    assert read.name == outcome.name


def test_several_scenarios_share_one_file(outcome, tmp_path: Path) -> None:
    buffer = io.StringIO()
    write_trace(buffer, trace_header(outcome), outcome.trace)
    write_trace(buffer, {**trace_header(outcome), "scenario": "second"}, outcome.trace[:3])
    file = tmp_path / "two.jsonl"
    file.write_text(buffer.getvalue())
    first, second = read_traces(file)
    assert len(first.events) == len(outcome.trace) and len(second.events) == 3
    assert second.name == "second"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no header line"),
        ('{"t": 1}\n', ":1: an event before the first header line"),
        ('{"schema": "other/9"}\n', ":1: schema: unsupported 'other/9'"),
        (f'{{"schema": "{SCHEMA}"}}\nnot json\n', ":2: not JSON"),
        (f'{{"schema": "{SCHEMA}"}}\n{{"t": 1, "seq": 0}}\n', ":2: missing key 'slot'"),
        (f'{{"schema": "{SCHEMA}"}}\n[1]\n', ":2: expected a JSON object"),
    ],
)
def test_bad_files_get_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bad.jsonl"
    file.write_text(text)
    with pytest.raises(TraceFormatError) as err:
        read_traces(file)
    assert message in str(err.value) and str(file) in str(err.value)
    assert "\n" not in str(err.value)
