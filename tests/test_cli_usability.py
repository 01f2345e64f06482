"""The command line people expect: selection (-k, -m), seeds and sweeps, -x, -v, JUnit XML, list,
validate, --version and --help, quiet ends on a closed pipe and Ctrl-C, a live line only on a terminal."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from scenario_files import ROOT, interruptible, jobset_manifest, pods_rule, replicated_job
from scenario_files import run_cli as cli


def scenario(*, seed: object, tags: str, by: str, pods: int, description: str) -> str:
    return f"""\
seed: {seed}
description: {description}
tags: {tags}
{pods_rule(jitter="500ms")}jobset:
{jobset_manifest(replicated_job(pods=pods), indent=2)}expect:
  - happens: all w pods Running
  - happens: jobset Completed
    by: {by}
"""


LINE = re.compile(r"^(PASS|FAIL)  (\S+)  virtual (\d+\.\d)s  wall (\d+)ms  seed (\d+)$")


def write(
    path: Path, *, seed: int = 1, tags: str = "[]", by: str = "60s", pods: int = 2, description: str = "a run"
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scenario(seed=seed, tags=tags, by=by, pods=pods, description=description))
    return path


def runs(stdout: str) -> list[tuple[str, str, int]]:
    return [(m[1], Path(m[2]).name, int(m[5])) for m in map(LINE.match, stdout.splitlines()) if m]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite")
    write(
        root / "driver-first" / "ray-head.yaml",
        seed=3,
        tags="[smoke, workers-first]",
        description="Ray head first",
    )
    write(root / "slow" / "late.yaml", seed=42, tags="[slow]", by="5s", description="misses its deadline")
    write(root / "plain.yaml", seed=5, description="no tags")
    (root / "manifests").mkdir()
    (root / "manifests" / "js.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    return root


def test_k_selects_by_path_words(folder: Path) -> None:
    result = cli("run", folder, "-k", "ray or plain")
    assert runs(result.stdout) == [("PASS", "ray-head.yaml", 3), ("PASS", "plain.yaml", 5)], result.stdout
    assert result.returncode == 0
    assert [r[1] for r in runs(cli("run", folder, "-k", "not (ray or plain)").stdout)] == ["late.yaml"]
    assert [r[1] for r in runs(cli("run", folder, "-k", "DRIVER-first").stdout)] == ["ray-head.yaml"]


def test_m_selects_by_tag_expression(folder: Path) -> None:
    assert [r[1] for r in runs(cli("run", folder, "-m", "smoke and not slow").stdout)] == ["ray-head.yaml"]
    assert [r[1] for r in runs(cli("run", folder, "-m", "workers_first").stdout)] == ["ray-head.yaml"]
    assert [r[1] for r in runs(cli("run", folder, "-m", "slow").stdout)] == ["late.yaml"]


def test_a_bad_expression_is_a_usage_error(folder: Path) -> None:
    result = cli("run", folder, "-k", "ray and (")
    assert result.returncode == 2
    assert "cannot read the selection expression" in result.stderr and "Traceback" not in result.stderr


def test_seed_and_sweep(folder: Path) -> None:
    one = cli("run", folder / "plain.yaml", "--seed", "9")
    assert runs(one.stdout) == [("PASS", "plain.yaml", 9)]
    sweep = cli("run", folder / "plain.yaml", folder / "slow", "--seeds", "3", "--json", folder / "s.json")
    assert runs(sweep.stdout) == [
        ("PASS", "plain.yaml", 5), ("PASS", "plain.yaml", 6), ("PASS", "plain.yaml", 7),
        ("FAIL", "late.yaml", 42), ("FAIL", "late.yaml", 43), ("FAIL", "late.yaml", 44),
    ]  # fmt: skip
    assert sweep.stdout.splitlines()[-1] == "3 passed, 3 failed"
    import json

    digests = [r["digest"] for r in json.loads((folder / "s.json").read_text())][:3]
    assert len(set(digests)) == 3  # jittered pods: each seed its own trace
    from_nine = cli("run", folder / "plain.yaml", "--seeds", "2", "--seed", "9")
    assert [r[2] for r in runs(from_nine.stdout)] == [9, 10]


def test_exitfirst_stops_after_the_first_failure(folder: Path) -> None:
    result = cli("run", folder / "slow", folder / "plain.yaml", "-x")
    assert runs(result.stdout) == [("FAIL", "late.yaml", 42)]
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed" and result.returncode == 1


def test_verbose_prints_milestone_times(folder: Path) -> None:
    result = cli("run", folder / "plain.yaml", "-v")
    lines = result.stdout.splitlines()
    assert re.fullmatch(r" +\d+\.\ds  all w pods Running", lines[1]), lines
    assert re.fullmatch(r" +\d+\.\ds  jobset Completed", lines[2]), lines


def test_junit_xml(folder: Path) -> None:
    target = folder / "junit.xml"
    result = cli("run", folder, "--junit-xml", target, "-q")
    assert result.returncode == 1
    suite = ET.parse(target).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("3", "1")
    cases = {c.get("name") or "": c for c in suite.iter("testcase")}
    assert sorted(cases) == ["late", "plain", "ray-head"]
    failure = cases["late"].find("failure")
    assert failure is not None and (failure.get("message") or "").startswith(
        "expect[1] happens: 'jobset Completed'"
    )
    assert "timeline" in (failure.text or "")
    assert cases["plain"].find("failure") is None
    props = {p.get("name"): p.get("value") for p in cases["plain"].iter("property")}
    assert props["seed"] == "5" and len(props["digest"] or "") == 64


def test_list_shows_tags_and_descriptions_and_skips_manifests(folder: Path) -> None:
    result = cli("list", folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"{folder / 'driver-first' / 'ray-head.yaml'}  [smoke, workers-first]  Ray head first",
        f"{folder / 'plain.yaml'}  []  no tags",
        f"{folder / 'slow' / 'late.yaml'}  [slow]  misses its deadline",
        "3 scenarios",
    ]
    assert cli("list", folder, "-m", "slow").stdout.splitlines()[-1] == "1 scenario"


def test_list_shortens_long_descriptions_unless_verbose(tmp_path: Path) -> None:
    words = "a long description of what this scenario proves, " * 6
    write(tmp_path / "long.yaml", description=words)
    short = cli("list", tmp_path).stdout.splitlines()[0]
    assert short.endswith("...") and len(short.split("  ")[-1]) == 100
    full = cli("list", tmp_path, "-v").stdout.splitlines()[0]
    assert full.endswith(words.strip())


def test_validate_lists_every_problem_without_running(tmp_path: Path) -> None:
    good = write(tmp_path / "good.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        scenario(seed="x", tags="[]", by="soon", pods=2, description="d")
        .replace("schedule: 1s", "schedul: 1s")
        .replace("all w pods Running", "all workers pods Running")
    )
    result = cli("validate", tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"INVALID  {bad}  (3 problems)"
    assert lines[1] == f"  {bad}:1: seed: expected an integer, got 'x'"
    assert lines[2].startswith(f"  {bad}:6: pods[0].schedul: unknown key 'schedul'")
    assert lines[3].startswith(f"  {bad}:29: expect[1].by: cannot read 'soon'")
    assert lines[4] == f"OK       {good}"
    assert lines[-1] == "1 valid, 1 invalid"
    assert "PASS" not in result.stdout  # nothing was played
    only_workload = cli("validate", tmp_path / "wl.yaml")
    assert only_workload.returncode == 1
    (tmp_path / "wl.yaml").write_text(scenario(seed=1, tags="[]", by="1m", pods=2, description="d")
                                      .replace("all w pods", "all workers pods"))  # fmt: skip
    names = cli("validate", tmp_path / "wl.yaml")
    assert "expect[0].happens: no replicated job 'workers'" in names.stdout and names.returncode == 1


def test_version_and_help() -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.strip() == "fakecluster 0.1.0"
    help_text = cli("--help").stdout
    assert "examples:" in help_text and "fakecluster run scenarios/" in help_text and "``" not in help_text
    run_help = cli("run", "--help").stdout
    for option in ("-k EXPR", "-m TAGS", "--seed N", "--seeds N", "-x", "--json FILE", "--junit-xml FILE"):
        assert option in run_help, option


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("fakecluster")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("fakecluster ")


def test_a_closed_pipe_ends_quietly(folder: Path) -> None:
    many = [folder / "plain.yaml"] * 40
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakecluster", "run", *map(str, many)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_ctrl_c_ends_quietly(tmp_path: Path) -> None:
    big = write(tmp_path / "big.yaml", pods=3000, by="1h")
    # the file a few times over: one play takes about a second now, and the signal must land mid-run
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakecluster", "run", *[str(big)] * 20],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=interruptible,  # noqa: PLW1509 -- one signal() call, no lock a thread could hold
    )  # fmt: skip
    time.sleep(2.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    assert stderr.strip() == "interrupted" and "Traceback" not in stderr


def run_on_a_terminal(*args: str) -> tuple[str, str]:
    """``fakecluster`` with ``args``, stderr on a pseudo-terminal 150 columns wide: (what was drawn
    there, stdout). The command must succeed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fakecluster", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "COLUMNS": "150"},
    )  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert proc.stdout is not None
    stdout = proc.stdout.read().decode()
    assert proc.wait(timeout=60) == 0
    os.close(leader)
    return seen.decode(errors="replace"), stdout


def test_progress_line_on_a_terminal_only(tmp_path: Path) -> None:
    path = write(tmp_path / "wide.yaml", pods=400)
    drawn, stdout = run_on_a_terminal("run", str(path))
    assert "wide" in drawn and "events" in drawn and "pods 400" in drawn, drawn
    assert runs(stdout) == [("PASS", "wide.yaml", 1)]  # results go to stdout, untouched by the bar
    piped = cli("run", path)
    assert piped.stderr == ""  # not a terminal: no bar


def test_an_unwritable_report_file_is_a_one_line_error(folder: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "r.json"
    early = cli("run", folder / "plain.yaml", "--json", target)
    assert early.returncode == 2 and "PASS" not in early.stdout  # refused before anything runs
    assert early.stderr.strip().endswith(f"cannot write {target}: no such directory {target.parent}")
    (tmp_path / "dir.xml").mkdir()
    late = cli("run", folder / "plain.yaml", "--junit-xml", tmp_path / "dir.xml")
    assert late.returncode == 1 and runs(late.stdout) == [("PASS", "plain.yaml", 5)]
    assert late.stderr.strip() == f"ERROR cannot write {tmp_path / 'dir.xml'}: Is a directory"
