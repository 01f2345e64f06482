"""Every library scenario keeps its verdict, end time and trace digest (``tests/golden/digests.json``).

A refactor must not change behaviour: any changed trace shows up here with the list of scenarios it
touched. A change that is meant to change traces regenerates the file (``python tests/golden/update.py``)
and says why in its commit message.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

GOLDEN_DIR = Path(__file__).with_name("golden")


def _current() -> dict[str, dict[str, object]]:
    spec = importlib.util.spec_from_file_location("golden_update", GOLDEN_DIR / "update.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result: dict[str, dict[str, object]] = module.current()
    return result


def test_every_scenario_keeps_its_golden_digest() -> None:
    golden: dict[str, dict[str, object]] = json.loads((GOLDEN_DIR / "digests.json").read_text())
    now = _current()
    added = sorted(set(now) - set(golden))
    removed = sorted(set(golden) - set(now))
    changed = sorted(p for p in set(now) & set(golden) if now[p] != golden[p])
    problems = [f"changed: {p}: {golden[p]} -> {now[p]}" for p in changed]
    problems += [f"new scenario without a golden digest: {p}" for p in added]
    problems += [f"golden digest of a scenario that is gone: {p}" for p in removed]
    assert not problems, "\n".join(
        [f"{len(problems)} scenario(s) differ from tests/golden/digests.json", *problems,
         "if the change is meant to change traces: python tests/golden/update.py"]
    )
