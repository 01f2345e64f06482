"""The CLI contract under mutated library scenarios: whatever a mutant holds, the run prints one line per
scenario and no traceback, the unmutated scenario next to it still runs and passes, and it ends in bounded
time. Hypothesis mutates a few library scenarios (derandomized, a bounded number of examples); the
broader campaign that reports counts per outcome class is ``benchmarks/hostile_campaign.py``."""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.hostile_campaign import inline_refs, set_at, value_paths
from fakecluster.cli import main

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = [
    ROOT / "scenarios" / "failure" / "failure-without-policy.yaml",
    ROOT / "scenarios" / "startup" / "three-tier-inorder.yaml",
    ROOT / "scenarios" / "suspend" / "suspend-while-running.yaml",
]
GOOD = ROOT / "scenarios" / "failure" / "failpod-action-backoff.yaml"

HOSTILE_VALUES: list[Any] = [
    10**400, -1, 2**31, -(2**63) - 1, 1e308, 0, "", "\u0663\u0660s", "9" * 400 + "s", "1000000h", "32Gii",
    "posd", "UPPER_case", "a\nb", "\x1b[2J", "x" * 300, None, True, [], {}, [[[[[[]]]]]],
    {"file": "/dev/zero"}, {"file": "../../../etc/passwd"}, {"name": True}, "never", 1.5, "0.0001ms",
]  # fmt: skip


@st.composite
def mutants(draw: st.DrawFn) -> str:
    source = draw(st.sampled_from(LIBRARY))
    data = inline_refs(yaml.safe_load(source.read_text()), source)
    paths = value_paths(data)[1:]
    kind = draw(st.sampled_from(["value", "value", "text", "bytes"]))
    if kind == "value":
        path = draw(st.sampled_from(paths))
        return yaml.safe_dump(set_at(data, path, draw(st.sampled_from(HOSTILE_VALUES))), allow_unicode=True)
    text = yaml.safe_dump(data, allow_unicode=True)
    at = draw(st.integers(min_value=0, max_value=len(text)))
    if kind == "text":
        insert = draw(st.sampled_from(["\x00", "\x07", "\t", ": ", "- ", "&a ", "*a", "{", "]", "!!python/x ",
                                       "'", "\"", "\ufeff", "---\n", "\n  ", "9" * 50]))  # fmt: skip
        return text[:at] + insert + text[at:]
    cut = draw(st.integers(min_value=0, max_value=20))
    return text[:at] + text[at + cut :]


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(mutants())
def test_a_mutant_never_breaks_the_run(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        mutant = Path(folder) / "mutant.yaml"
        mutant.write_text(text, encoding="utf-8", errors="surrogateescape")
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["run", str(mutant), str(GOOD), "--max-wall-seconds", "20"])
        elapsed = time.perf_counter() - started
    printed = out.getvalue() + err.getvalue()
    assert "Traceback" not in printed, printed
    assert "internal error" not in printed, printed
    lines = printed.splitlines()
    assert any(line.startswith(("PASS  ", "FAIL  ")) and "mutant.yaml" in line for line in lines), printed
    assert any(line.startswith("PASS  ") and str(GOOD) in line for line in lines), printed
    assert status in (0, 1)
    assert elapsed < 60
