"""Rewrite ``tests/golden/milestones.json``: per scenario, its verdict and a digest of its *version-1*
trace events (pod, Job and JobSet lifecycle moments, with their times to the microsecond and names).

Format 1.1 promises that a scenario using none of its keys keeps every verdict and every milestone
time; the cluster now also writes EndpointSlices, which changes the full digest
(``tests/golden/digests.json``) but must leave these lines alone. ``tests/test_milestone_times.py``
compares. Run this only when a change is meant to move version-1 milestones, and say why.
"""

from __future__ import annotations

import hashlib
import runpy
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).with_name("milestones.json")
# update.py's library_records and write_golden (this folder is no package: it is loaded by its path)
_UPDATE = runpy.run_path(str(Path(__file__).with_name("update.py")))
V1_KINDS = ("Pod", "Job", "JobSet")
V1_POD_EVENTS = ("Created", "Scheduled", "Running", "Ready", "Succeeded", "Failed", "Deleted")


def v1_lines(trace: list) -> list[str]:  # type: ignore[type-arg]
    """The trace lines of version-1 moments, in trace order, without ``seq`` (new kinds of events may
    interleave; the order among these must not change)."""
    out = []
    for event in trace:
        if event.kind not in V1_KINDS:
            continue
        if event.kind == "Pod" and event.event not in V1_POD_EVENTS:
            continue
        out.append(event.key())
    return out


def current() -> dict[str, dict[str, object]]:
    def record(outcome: Any) -> dict[str, object]:
        lines = v1_lines(outcome.trace)
        return {
            "passed": outcome.passed,
            "moments": len(lines),
            "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest(),
        }

    # format 1.1 scenarios: no version-1 baseline to keep
    return _UPDATE["library_records"](record, skip=lambda rel: rel.startswith("scenarios/network/"))


def main() -> int:
    return int(_UPDATE["write_golden"](GOLDEN, current()))


if __name__ == "__main__":
    sys.exit(main())
