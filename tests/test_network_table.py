"""``scenarios/network/table.py``: the README table comes from the runner's sweep records, verbatim."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "network_table", ROOT / "scenarios" / "network" / "table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(name: str, mean: float, modes: list[dict[str, Any]], slow: float | None = None,
            offset: float | None = None) -> dict[str, Any]:
    dist: dict[str, Any] = {"n": 20, "mean": mean, "sd": 1.5, "min": 10.0, "median": 12.0, "max": 42.0}
    dist["modes"] = modes
    if offset is not None:
        dist["slowModeOffset"] = offset
    if slow is not None:
        dist["slow"] = {"above": 30.0, "fraction": slow}
    return {"path": str(ROOT / "scenarios" / "network" / f"{name}.yaml"), "name": name, "passed": True,
            "distributions": [dist]}  # fmt: skip


def test_one_row_per_sweep_with_its_figures_modes_and_slow_share() -> None:
    table = _module().table
    records = [
        _record("b-timeout-5s", 16.5, [{"count": 20, "min": 11.0, "max": 17.5}]),
        _record("a-no-timeout", 25.8, [{"count": 11, "min": 11.8, "max": 14.0}, {"count": 9, "min": 41.6,
                                                                               "max": 42.1}], slow=0.45,
                offset=29.07),
        {"path": "x.yaml", "name": "not a sweep", "passed": True},
    ]  # fmt: skip
    lines = table(records, ROOT).splitlines()
    assert len(lines) == 4  # header, rule, two sweeps; the record without distributions is left out
    assert lines[2].startswith("| a-no-timeout | `scenarios/network/a-no-timeout.yaml` | 20 | 25.80 | 1.50 |")
    assert lines[2].endswith("| 11x 11.80-14.00 + 9x 41.60-42.10 | +29.07 | 45% above 30 s |")
    assert lines[3].startswith("| b-timeout-5s |") and lines[3].endswith("| 20x 11.00-17.50 | - | - |")


def test_the_comparison_computes_the_studys_figures_as_the_runner_does() -> None:
    module = _module()
    study = module.STUDY_RUNS["anyorder-no-timeout.yaml"]
    records = [
        _record("anyorder-no-timeout", 29.1, [{"count": 9, "min": 12.3, "max": 12.8},
                                              {"count": 11, "min": 42.0, "max": 42.9}],
                slow=0.55, offset=30.0),
        _record("depends-on-broker-ready", 17.3, [{"count": 20, "min": 15.9, "max": 18.6}], slow=0.0),
        _record("something-else", 1.0, [{"count": 20, "min": 1.0, "max": 1.0}]),
    ]  # fmt: skip
    lines = module.comparison(records).splitlines()
    assert len(lines) == 5
    assert lines[2] == ("| `anyorder-no-timeout.yaml` | 29.10 / 1.50 | +30.00 | 55% above 30 s"
                        " | 25.80 / 14.52 | +29.07 | 45% above 30 s |")  # fmt: skip
    assert len(study) == 20 and sum(v > 30 for v in study) == 9
    assert lines[3].startswith("| `depends-on-broker-ready.yaml` | 17.30 / 1.50 | - | 0% above 30 s |"
                               " not measured")
    assert lines[4] == "| `something-else.yaml` | 1.00 / 1.50 | - | - | not in the study | | |"


def test_the_readme_keeps_its_prose_and_replaces_only_the_table(tmp_path: Path) -> None:
    module = _module()
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n\n{module.BEGIN}\nold table\n{module.END}\n\nclosing words\n")
    module.write_readme("new table", readme)
    text = readme.read_text()
    assert "old table" not in text
    assert text == f"intro\n\n{module.BEGIN}\nnew table\n{module.END}\n\nclosing words\n"
    fresh = tmp_path / "fresh.md"
    module.write_readme("t", fresh)
    assert fresh.read_text() == f"{module.BEGIN}\nt\n{module.END}\n"
