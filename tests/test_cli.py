"""``python -m fakecluster run PATH... [--json FILE] [-q]``, run as a user would, in a subprocess.

One line per scenario (``PASS|FAIL  path  virtual Ns  wall Nms  seed N``), a closing ``N passed, M
failed``, exit status 0 only if all passed; bad scenario files each give one line naming the file and
the field, never a traceback, and do not stop the good ones from running.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from scenario_files import ROOT, jobset_manifest, pods_rule, replicated_job, run_cli

LINE = re.compile(r"^(PASS|FAIL)  (\S+)  virtual (\d+\.\d)s  wall (\d+)ms  seed (\d+)$")
CLOSING = re.compile(r"^(\d+) passed, (\d+) failed$")

MANIFEST = jobset_manifest(replicated_job(replicas=2, pods=2), indent=2)
PODS = pods_rule("20s", jitter="500ms")
GOOD = f"""\
seed: 11
{PODS}jobset:
{MANIFEST}expect:
  - happens: jobset Completed
    after: 21s
    by: 30s
  - final:
      count: {{jobs: 2, pods: 4}}
"""
FAILING = GOOD.replace("    after: 21s\n    by: 30s", "    by: 10s")


def _scenario(top: str = "", actions: str = "", expect: str = "  - happens: jobset Completed\n") -> str:
    body = f"{top}{PODS}jobset:\n{MANIFEST}"
    if actions:
        body += f"actions:\n{actions}"
    return body + f"expect:\n{expect}"


# name -> (file text, text the one error line must contain besides the file name)
BAD: dict[str, tuple[str, str]] = {
    "invalid-yaml": ("seed: [1\nexpect: [\n", "invalid YAML"),
    "unknown-key": (_scenario(top="colour: blue\n"), "colour: unknown key"),
    "wrong-type": (_scenario(top="seed: eleven\n"), "seed: expected an integer"),
    "bad-duration": (_scenario(top="until: 5 fortnights\n"), "until: cannot read '5 fortnights'"),
    "pod-rule-duration": (_scenario().replace("schedule: 1s", "schedule: soon"), "pods[0].schedule:"),
    "no-such-rjob": (
        _scenario(expect="  - happens: all workers pods Ready\n"),
        "expect[0].happens: no replicated job 'workers'",
    ),
    "no-such-rjob-in-when": (
        _scenario(actions="  - when: first launcher pods Running\n    suspend: js\n"),
        "actions[0].when: no replicated job 'launcher'",
    ),
    "unknown-pod-event": (
        _scenario(expect="  - never: first w pods Exploded\n"),
        "expect[0].never: milestone 'first w pods Exploded': unknown pod event",
    ),
    "unknown-verb": (_scenario(actions="  - at: 5s\n    reboot: js\n"), "actions[0].reboot: unknown key"),
    "unknown-controller": (
        _scenario(actions="  - at: 5s\n    restartController: kubelet\n"),
        "actions[0].restartController: unknown controller 'kubelet'",
    ),
    "missing-manifest-file": (
        "jobset: {file: manifests/nowhere.yaml}\nexpect:\n  - happens: jobset Completed\n",
        "jobset.file: cannot read manifest file 'manifests/nowhere.yaml'",
    ),
    "schema-rejects": (
        _scenario().replace(
            "    replicatedJobs:\n", "    startupPolicy: {startupPolicyOrder: Banana}\n    replicatedJobs:\n"
        ),
        "jobset.spec.startupPolicy.startupPolicyOrder: the API server rejected the manifest: "
        'JobSet.jobset.x-k8s.io "js" is invalid: spec.startupPolicy.startupPolicyOrder',
    ),
    "webhook-rejects": (
        _scenario().replace(
            "        replicas: 2\n", "        replicas: 2\n        dependsOn: [{name: x, status: Ready}]\n"
        ),
        "jobset: the API server rejected the manifest: admission webhook",
    ),
    "manifest-unknown-field": (
        _scenario().replace("        replicas: 2\n", "        replicas: 2\n        replcas: 3\n"),
        ":15: jobset.spec.replicatedJobs[0].replcas: the API server rejected the manifest: "
        'JobSet.jobset.x-k8s.io "js" is invalid: spec.replicatedJobs[0].replcas: unknown field',
    ),
    "manifest-wrong-type": (
        _scenario().replace("        replicas: 2\n", "        replicas: two\n"),
        ":14: jobset.spec.replicatedJobs[0].replicas: the API server rejected the manifest: "
        'JobSet.jobset.x-k8s.io "js" is invalid: spec.replicatedJobs[0].replicas',
    ),
    "manifest-other-kind": (
        _scenario().replace("kind: JobSet", "kind: Deployment"),
        "jobset.kind: expected kind",
    ),
}


def test_every_bad_case_differs_from_the_good_base() -> None:
    for name, (text, _) in BAD.items():
        assert text != _scenario(), name


def cli(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *args, cwd=cwd, timeout=120)


def status_lines(stdout: str) -> list[re.Match[str]]:
    return [m for m in map(LINE.match, stdout.splitlines()) if m]


def closing(stdout: str) -> tuple[int, int]:
    match = CLOSING.match(stdout.splitlines()[-1])
    assert match, stdout
    return int(match[1]), int(match[2])


@pytest.fixture(scope="module")
def folder_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One good and many bad scenario files in one folder, run once for all the checks below."""
    folder = tmp_path_factory.mktemp("mixed")
    (folder / "good.yaml").write_text(GOOD)
    for name, (text, _) in BAD.items():
        (folder / f"{name}.yaml").write_text(text)
    (folder / "README.md").write_text("not a scenario\n")
    return folder, cli(folder)


def test_folder_with_bad_files_exits_1_and_the_good_one_still_passes(
    folder_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    _, result = folder_run
    assert result.returncode == 1, result.stdout + result.stderr
    lines = {Path(m[2]).name: m for m in status_lines(result.stdout)}
    assert sorted(lines) == sorted(["good.yaml", *(f"{name}.yaml" for name in BAD)])
    assert lines["good.yaml"][1] == "PASS"
    assert all(lines[f"{name}.yaml"][1] == "FAIL" for name in BAD)
    assert closing(result.stdout) == (1, len(BAD))
    assert "Traceback" not in result.stdout and "Traceback" not in result.stderr
    assert "internal error" not in result.stdout


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_bad_file_gives_one_line_naming_the_file_and_the_field(
    folder_run: tuple[Path, subprocess.CompletedProcess[str]], name: str
) -> None:
    folder, result = folder_run
    path = folder / f"{name}.yaml"
    out = result.stdout.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith(f"FAIL  {path}  "))
    report = []
    for line in out[start + 1 :]:
        if LINE.match(line) or CLOSING.match(line):
            break
        report.append(line)
    assert len(report) == 1, "\n".join(report)
    error = report[0].strip()
    assert error.startswith(f"{path}:"), error
    assert BAD[name][1] in error, error
    assert "Traceback" not in error


def test_all_passing_exits_0_with_one_line_each(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    sub = tmp_path / "nested" / "deeper"
    sub.mkdir(parents=True)
    (sub / "b.yml").write_text(GOOD.replace("seed: 11", "seed: 12"))
    result = cli(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = status_lines(result.stdout)
    assert [(m[1], m[2], m[5]) for m in lines] == [
        ("PASS", str(tmp_path / "a.yaml"), "11"),
        ("PASS", str(sub / "b.yml"), "12"),
    ]
    for m in lines:
        assert 21.0 <= float(m[3]) <= 40.0  # virtual end: after the 20 s pods, at most a little later
    assert result.stdout.splitlines() == [m[0] for m in lines] + ["2 passed, 0 failed"]
    assert result.stderr == ""


def test_a_failing_scenario_prints_its_report_and_exits_1(tmp_path: Path) -> None:
    assert FAILING != GOOD
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "late.yaml").write_text(FAILING)
    result = cli(tmp_path / "good.yaml", tmp_path / "late.yaml")
    assert result.returncode == 1
    assert [m[1] for m in status_lines(result.stdout)] == ["PASS", "FAIL"]
    assert "expect[0] happens: 'jobset Completed' happened at" in result.stdout
    assert "seed 11" in result.stdout and "timeline" in result.stdout
    assert closing(result.stdout) == (1, 1)


def test_quiet_prints_only_failures_and_the_closing_line(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "late.yaml").write_text(FAILING)
    result = cli(tmp_path, "-q")
    assert result.returncode == 1
    assert [(m[1], Path(m[2]).name) for m in status_lines(result.stdout)] == [("FAIL", "late.yaml")]
    assert closing(result.stdout) == (1, 1)


def test_json_records_and_digests_are_stable(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "late.yaml").write_text(FAILING)
    (tmp_path / "broken.yaml").write_text("expect: [\n")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert cli(tmp_path, "--json", first, "-q").returncode == 1
    assert cli(tmp_path, "--json", second, "-q").returncode == 1
    records = json.loads(first.read_text())
    assert [Path(r["path"]).name for r in records] == ["broken.yaml", "good.yaml", "late.yaml"]
    broken, good, late = records
    for record in (good, late):
        assert {"path", "passed", "failures", "virtualEnd", "digest"} <= set(record)
        assert re.fullmatch(r"[0-9a-f]{64}", record["digest"]), record["digest"]
        assert isinstance(record["virtualEnd"], float) and record["virtualEnd"] > 20.0
        assert record["seed"] == 11
    assert good["passed"] is True and good["failures"] == []
    assert late["passed"] is False and len(late["failures"]) == 1
    assert late["failures"][0].startswith("expect[0] happens:")
    assert good["digest"] == late["digest"]  # same run, only the expectation differs
    assert broken["passed"] is False and len(broken["failures"]) == 1
    assert str(tmp_path / "broken.yaml") in broken["failures"][0]
    again = json.loads(second.read_text())
    assert [r["digest"] for r in again] == [r["digest"] for r in records]
    assert [r["virtualEnd"] for r in again] == [r["virtualEnd"] for r in records]


def test_json_digest_changes_with_the_seed_of_a_jittered_scenario(tmp_path: Path) -> None:
    (tmp_path / "s11.yaml").write_text(GOOD)
    (tmp_path / "s12.yaml").write_text(GOOD.replace("seed: 11", "seed: 12"))
    out = tmp_path / "r.json"
    assert cli(tmp_path, "--json", out, "-q").returncode == 0
    digests = [r["digest"] for r in json.loads(out.read_text())]
    assert len(set(digests)) == 2


def test_a_nonexistent_path_is_reported_and_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    missing = tmp_path / "no-such-dir"
    result = cli(tmp_path / "good.yaml", missing)
    assert result.returncode != 0
    assert str(missing) in result.stdout + result.stderr
    assert [m[1] for m in status_lines(result.stdout)] == ["PASS"]
    assert "Traceback" not in result.stderr
    only_missing = cli(missing)
    assert only_missing.returncode != 0
    assert str(missing) in only_missing.stdout + only_missing.stderr


def test_relative_paths_are_printed_as_given(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "good.yaml").write_text(GOOD)
    result = cli("scenarios", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [m[2] for m in status_lines(result.stdout)] == ["scenarios/good.yaml"]
