"""Rewrite ``tests/golden/digests.json`` from the scenarios as they run now.

Run it only when a change is *meant* to change traces, and say in the commit message which scenarios
changed and why: ``python tests/golden/update.py``. The test that reads the file is
``tests/test_golden_digests.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("digests.json")


def current() -> dict[str, dict[str, object]]:
    """Verdict, virtual end and trace digest of every library scenario, keyed by repo-relative path."""
    from fakecluster.scenario.runner import discover, run_scenario

    files, _missing = discover([ROOT / "scenarios"])
    records: dict[str, dict[str, object]] = {}
    for path in files:
        outcome = run_scenario(path)
        records[path.relative_to(ROOT).as_posix()] = {
            "passed": outcome.passed,
            "virtualEnd": round(outcome.virtual_end, 6),
            "digest": outcome.digest,
        }
    return dict(sorted(records.items()))


def main() -> int:
    GOLDEN.write_text(json.dumps(current(), indent=1) + "\n")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
