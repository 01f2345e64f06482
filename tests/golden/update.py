"""Rewrite ``tests/golden/digests.json`` from the scenarios as they run now.

Run it only when a change is *meant* to change traces, and say in the commit message which scenarios
changed and why: ``python tests/golden/update.py``. The test that reads the file is
``tests/test_golden_digests.py``. ``milestones.py`` beside it plays the library with the same
:func:`library_records` and writes its file with :func:`write_golden`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("digests.json")


def library_records(
    record: Callable[[Any], dict[str, object]], skip: Callable[[str], bool] = lambda rel: False
) -> dict[str, dict[str, object]]:
    """``record(outcome)`` of every library scenario (but those whose repo-relative path ``skip`` names),
    keyed by that path, in path order."""
    from fakecluster.scenario.runner import discover, run_scenario

    files, _missing = discover([ROOT / "scenarios"])
    records: dict[str, dict[str, object]] = {}
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if not skip(rel):
            records[rel] = record(run_scenario(path))
    return dict(sorted(records.items()))


def current() -> dict[str, dict[str, object]]:
    """Verdict, virtual end and trace digest of every library scenario, keyed by repo-relative path."""
    return library_records(
        lambda outcome: {
            "passed": outcome.passed,
            "virtualEnd": round(outcome.virtual_end, 6),
            "digest": outcome.digest,
        }
    )


def write_golden(golden: Path, records: dict[str, dict[str, object]]) -> int:
    golden.write_text(json.dumps(records, indent=1) + "\n")
    print(f"wrote {golden.relative_to(ROOT)}")
    return 0


def main() -> int:
    return write_golden(GOLDEN, current())


if __name__ == "__main__":
    sys.exit(main())
