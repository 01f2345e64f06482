"""Every problem at once, each where it is: workload-name errors are all listed, a manifest's bad field is
reported at its own line (inside the manifest file for ``{file: ...}``), and ``[...]`` inside a YAML flow
list gets a hint to quote it."""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_files import jobset_manifest, replicated_job

from fakecluster import ScenarioError, run_scenario, validate_scenario
from fakecluster.scenario.loader import load_scenario

MANIFEST = jobset_manifest(replicated_job(pods=2))


def write(tmp_path: Path, body: str, manifest: str = MANIFEST) -> Path:
    (tmp_path / "manifests").mkdir(exist_ok=True)
    (tmp_path / "manifests" / "js.yaml").write_text(manifest)
    path = tmp_path / "case.yaml"
    path.write_text(body)
    return path


def test_every_bad_workload_name_is_listed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "jobset: {file: manifests/js.yaml}\n"
        "expect:\n"
        "  - happens: all workers pods Ready\n"
        "  - never: first launcher pods Failed\n"
        "  - order: [first w pods Created, 'all w[3] pods Ready']\n",
    )
    problems = validate_scenario(path)
    assert [(p.line, p.field_path) for p in problems] == [
        (3, "expect[0].happens"),
        (4, "expect[1].never"),
        (5, "expect[2].order[1]"),
    ]
    assert "no replicated job 'workers'" in problems[0].message
    assert "no replicated job 'launcher'" in problems[1].message
    assert "job index 3 is out of range" in problems[2].message
    result = run_scenario(path)
    assert len(result.failures) == 3 and all(f.startswith(f"{path}:") for f in result.failures)


def test_a_bad_field_in_a_referenced_manifest_points_into_that_file(tmp_path: Path) -> None:
    bad = MANIFEST.replace("      replicas: 1\n", "      replicas: 1\n      replcas: 3\n")
    path = write(tmp_path, "jobset: {file: manifests/js.yaml}\nexpect: [{happens: jobset Completed}]\n", bad)
    (problem,) = validate_scenario(path)
    assert str(problem).startswith(
        f"{tmp_path / 'manifests' / 'js.yaml'}:8: jobset.spec.replicatedJobs[0].replcas:"
    )
    assert "unknown field" in problem.message


def test_several_bad_fields_in_an_inline_manifest_each_get_their_line(tmp_path: Path) -> None:
    inline = "".join("  " + line + "\n" for line in MANIFEST.splitlines())
    inline = inline.replace("replicas: 1", "replcas: 1").replace("parallelism: 2", "paralelism: 2")
    path = write(tmp_path, f"jobset:\n{inline}expect: [{{happens: jobset Completed}}]\n")
    problems = validate_scenario(path)
    by_path = {p.field_path: p.line for p in problems}
    assert by_path.get("jobset.spec.replicatedJobs[0].replcas") == 8, problems
    assert by_path.get("jobset.spec.replicatedJobs[0].template.spec.paralelism") == 11, problems


def test_a_good_file_validates_clean(tmp_path: Path) -> None:
    path = write(tmp_path, "jobset: {file: manifests/js.yaml}\nexpect: [{happens: jobset Completed}]\n")
    assert validate_scenario(path) == []


@pytest.mark.parametrize(
    "line",
    [
        "  - order: [all w[0] pods Ready, jobset Completed]\n",
        "  - {order: [jobset StartupPolicyCompleted, first w[0/1] pods Running]}\n",
    ],
)
def test_brackets_inside_a_flow_list_get_the_quoting_hint(tmp_path: Path, line: str) -> None:
    path = write(tmp_path, f"jobset: {{file: manifests/js.yaml}}\nexpect:\n{line}")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.line == 3
    assert "needs quotes" in str(info.value) and '["all node[0] pods Ready"' in str(info.value)


def test_several_problems_survive_pickling(tmp_path: Path) -> None:
    """pytest-xdist ships errors between processes."""
    import pickle

    path = write(tmp_path, "seed: x\nuntil: y\njobset: {file: manifests/js.yaml}\nexpect: []\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    copy = pickle.loads(pickle.dumps(info.value))
    assert str(copy) == str(info.value) and len(str(copy).splitlines()) == 3


def test_bad_names_and_a_rejected_manifest_come_out_together(tmp_path: Path) -> None:
    bad = MANIFEST.replace("      replicas: 1\n", "      replicas: 1\n      replcas: 3\n")
    body = "jobset: {file: manifests/js.yaml}\nexpect:\n  - happens: all workers pods Ready\n"
    path = write(tmp_path, body, bad)
    expected = [
        (path, 3, "expect[0].happens"),
        (tmp_path / "manifests" / "js.yaml", 8, "jobset.spec.replicatedJobs[0].replcas"),
    ]
    assert [(p.file, p.line, p.field_path) for p in validate_scenario(path)] == expected
    result = run_scenario(path)
    assert len(result.failures) == 2 and "no replicated job 'workers'" in result.failures[0]
    assert "unknown field" in result.failures[1]


def test_a_manifest_given_as_a_scenario_says_what_it_is(tmp_path: Path) -> None:
    path = write(tmp_path, "expect: []\n")
    manifest = tmp_path / "manifests" / "js.yaml"
    with pytest.raises(ScenarioError) as info:
        load_scenario(manifest)
    assert str(info.value).startswith(f"{manifest}:1: this is a Kubernetes manifest (kind JobSet)")
    assert "jobset: {file:" in str(info.value) and path.exists()
