"""Hostile input at the two front doors: the CLI and the pytest plugin. A broken file (not UTF-8, a FIFO,
an ANSI-laden name) is one failing item with its one-line error; the others still run; the flags that
raise limits and allow folders work."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from scenario_files import BASIC, jobset_manifest

from fakecluster.cli import main
from fakecluster.scenario.runner import run_scenario

pytest_plugins = ["pytester"]
# the scenario plugin comes from the package's pytest11 entry point (registering it again with -p fails)
PLUGIN = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

GOOD = BASIC


@pytest.fixture(scope="module", autouse=True)
def _warm_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Import everything a run needs before pytester's in-process runs (see test_pytest_plugin.py)."""
    path: Path = tmp_path_factory.mktemp("warm") / "warm.yaml"
    path.write_text(GOOD)
    assert run_scenario(path).passed


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["run", *args])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_broken_files_fail_one_by_one_and_the_good_one_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "ansi.yaml").write_text(GOOD.replace("seed: 1", 'seed: 1\nname: "\\x1b[2Jgone"').replace(
        "happens: jobset Completed", "happens: jobset Failed\n    by: 1s"))  # fmt: skip
    status, out = run_cli(capsys, str(tmp_path / "latin1.yaml"), str(tmp_path / "pipe.yaml"), "/dev/zero",
                          str(tmp_path / "ansi.yaml"), str(tmp_path / "good.yaml"))  # fmt: skip
    assert status == 1 and "Traceback" not in out and "\x1b" not in out
    assert f"PASS  {tmp_path / 'good.yaml'}" in out
    assert "not valid UTF-8 (byte 0xe9 on line 1)" in out
    assert "a FIFO (named pipe), not a regular file" in out
    assert "/dev/zero: cannot read the scenario file: a character device, not a regular file" in out
    assert "scenario '\\x1b[2Jgone' failed" in out
    assert out.rstrip().endswith("1 passed, 4 failed")


def test_json_into_a_missing_folder_is_an_error_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    status, out = run_cli(capsys, str(tmp_path / "good.yaml"), "--json", "/nonexistent/x.json")
    assert status == 2
    assert out.strip() == (
        "fakecluster: error: cannot write /nonexistent/x.json: no such directory /nonexistent"
    )


def test_max_events_on_the_command_line_ends_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    status, out = run_cli(capsys, str(tmp_path / "good.yaml"), "--max-events", "3")
    assert status == 1 and "budget exhausted after 3 events at virtual time" in out
    with pytest.raises(SystemExit):
        main(["run", str(tmp_path / "good.yaml"), "--max-events", "\u0663"])
    assert "expected a whole number >= 1" in capsys.readouterr().err


def test_allow_dir_lets_a_reference_leave_the_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared, scenarios = tmp_path / "shared", tmp_path / "project"
    shared.mkdir()
    scenarios.mkdir()
    (shared / "js.yaml").write_text(jobset_manifest())
    text = (
        GOOD[: GOOD.index("jobset:")] + "jobset: {file: ../shared/js.yaml}\n" + GOOD[GOOD.index("expect:") :]
    )
    (scenarios / "ref.yaml").write_text(text)
    status, out = run_cli(capsys, str(scenarios / "ref.yaml"))
    assert status == 1 and "resolves outside the scenario tree" in out
    status, out = run_cli(capsys, str(scenarios / "ref.yaml"), "--allow-dir", str(shared))
    assert status == 0 and "1 passed, 0 failed" in out


def test_pytest_collects_broken_files_as_failing_items(pytester: pytest.Pytester) -> None:
    scenarios = pytester.path / "scenarios"
    scenarios.mkdir()
    (scenarios / "ok.yaml").write_text(GOOD)
    (scenarios / "latin1.yaml").write_bytes(b"tags: [x]\nname: caf\xe9\n")
    names = "abcdefghi"
    levels = [f"{b}: &{b} [" + ", ".join([f"*{a}"] * 10) + "]\n" for a, b in itertools.pairwise(names)]
    (scenarios / "bomb.yaml").write_text("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(levels))
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "Traceback" not in out and "error" not in out.splitlines()[-1].lower()
    assert "not valid UTF-8 (byte 0xe9 on line 2)" in out
    assert "aliases expand to more than 1,000,000 nodes" in out


def test_pytest_allow_dir_option(pytester: pytest.Pytester) -> None:
    shared = pytester.path / "shared"
    shared.mkdir()
    (pytester.path / "project" / "scenarios").mkdir(parents=True)
    (pytester.path / "project" / "pyproject.toml").write_text("")
    (shared / "js.yaml").write_text(jobset_manifest())
    text = (
        GOOD[: GOOD.index("jobset:")]
        + "jobset: {file: ../../shared/js.yaml}\n"
        + GOOD[GOOD.index("expect:") :]
    )
    (pytester.path / "project" / "scenarios" / "ref.yaml").write_text(text)
    pytester.runpytest(*PLUGIN, "project").assert_outcomes(failed=1)
    pytester.runpytest(*PLUGIN, "project", "--allow-dir", str(shared)).assert_outcomes(passed=1)
