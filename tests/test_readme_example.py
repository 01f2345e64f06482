"""The README's "Drive a cluster from Python" example runs as written (against the manifest and scenario
of the user-project test), so the documented API cannot drift from the real one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_user_project import HEAD_FIRST, MANIFEST

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    section = README.read_text().split("## Drive a cluster from Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "ray.yaml").write_text(MANIFEST)
    (tmp_path / "regressions" / "manifests").mkdir(parents=True)
    (tmp_path / "regressions" / "manifests" / "ray.yaml").write_text(MANIFEST)
    (tmp_path / "regressions" / "head-first.yaml").write_text(HEAD_FIRST)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "README.md", "exec"), namespace)
    result = namespace["result"]
    assert getattr(result, "passed", False), getattr(result, "report", "")
