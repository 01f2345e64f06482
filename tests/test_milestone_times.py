"""Format 1.1's promise to existing scenarios: every verdict and every version-1 milestone moment (pod,
Job and JobSet lifecycle events, names and times to the microsecond, in order) is what it was before
the network came in. ``tests/golden/milestones.json`` was written by ``tests/golden/milestones.py``
before the EndpointSlice controller existed; only the full digest (which covers every write) moved.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

GOLDEN_DIR = Path(__file__).with_name("golden")


def test_every_existing_scenario_keeps_verdict_and_milestone_times() -> None:
    spec = importlib.util.spec_from_file_location("golden_milestones", GOLDEN_DIR / "milestones.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    golden: dict[str, dict[str, object]] = json.loads((GOLDEN_DIR / "milestones.json").read_text())
    now: dict[str, dict[str, object]] = module.current()
    problems = [f"{p}: {golden.get(p)} -> {now.get(p)}" for p in sorted(set(golden) | set(now))
                if golden.get(p) != now.get(p)]
    assert not problems, "\n".join(["version-1 moments moved:", *problems])
