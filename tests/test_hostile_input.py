"""Hostile scenario files: each fails as one line naming the file, line and field, fast, never a
traceback or a hang; ``{file:}`` references stay inside the scenario tree; every bound says its limit."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from scenario_files import BASIC, jobset_manifest

from fakecluster.runtime import capped_backoff
from fakecluster.scenario.errors import ScenarioError, escape_control
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.reading import MAX_FILE_BYTES, UnreadableFile, read_bounded_text
from fakecluster.scenario.runner import run_scenario

BASE = BASIC
MANIFEST = jobset_manifest()


def write(folder: Path, text: str | bytes, name: str = "case.yaml") -> Path:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def error_of(path: Path, **kwargs: object) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, **kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)
    return info.value


def failure_of(path: Path, limits: RunLimits | None = None) -> str:
    outcome = run_scenario(path, limits=limits)
    assert not outcome.passed
    assert len(outcome.failures) == 1 and "Traceback" not in outcome.report
    return outcome.failures[0]


# ---------------------------------------------------------------- bounded reading


def test_the_base_scenario_passes(tmp_path: Path) -> None:
    assert run_scenario(write(tmp_path, BASE)).passed


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    err = error_of(fifo)
    assert "a FIFO (named pipe), not a regular file" in err.message


def test_a_device_is_refused_without_reading_it() -> None:
    err = error_of(Path("/dev/zero"))
    assert "a character device, not a regular file" in err.message


def test_a_file_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, b"#" * (MAX_FILE_BYTES + 1))
    assert "larger than the 10 MiB limit" in error_of(path).message
    with pytest.raises(UnreadableFile, match="larger than the 0 MiB"):
        read_bounded_text(write(tmp_path, "seed: 1\n", "small.yaml"), limit=4)


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, b"seed: 1\nname: \xff\n"))
    assert err.message == "cannot read the scenario file: not valid UTF-8 (byte 0xff on line 2)"


def test_a_raw_control_character_is_a_yaml_error_with_its_line(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "seed: 1\nname: a\x07b\n"))
    assert err.line == 2 and "control character U+0007" in err.message


def test_deep_nesting_is_refused_with_the_bound(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "seed: 1\ndescription: " + "[" * 500 + "]" * 500 + "\n"))
    assert err.line == 2 and "nested more than 100 levels deep" in err.message


def test_an_alias_bomb_is_refused_fast(tmp_path: Path) -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(9):
        prev, cur = chr(97 + i), chr(98 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    started = time.perf_counter()
    err = error_of(write(tmp_path, "\n".join(lines) + "\n" + BASE))
    assert time.perf_counter() - started < 2.0
    assert "aliases expand to more than 1,000,000 nodes" in err.message


def test_aliases_within_the_bound_still_work(tmp_path: Path) -> None:
    text = BASE.replace(
        "pods:\n  - match: {}\n    exit: {after: 10s}",
        "pods:\n  - &rule\n    match: {}\n    exit: {after: 10s}\n  - *rule",
    )
    assert len(load_scenario(write(tmp_path, text)).pods) == 2


def test_a_5000_digit_integer_is_a_yaml_error(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, "seed: " + "9" * 5000 + "\n"))
    assert (
        "a value cannot be read (Exceeds the limit (4300 digits) for integer string conversion" in err.message
    )


# ---------------------------------------------------------------- bounded values


@pytest.mark.parametrize(
    ("old", "new", "path", "message"),
    [
        ("seed: 1", "seed: 1\nuntil: \u0663\u0660s", "until", "cannot read '\u0663\u0660s' as a duration"),
        ("seed: 1", "seed: 1\nuntil: " + "9" * 400 + "s", "until", "longer than 10 years"),
        ("seed: 1", "seed: 1\nuntil: 87601h", "until", "longer than 10 years (87600h)"),
        ("seed: 1", "seed: 1\nuntil: 1000000h", "until", "longer than 10 years (87600h)"),
        ("after: 10s}", "after: 10s, code: -1}", "pods[0].exit.code", "must be >= 0, got -1"),
        ("after: 10s}", "after: 10s, code: " + "9" * 400 + "}", "pods[0].exit.code", "(400 characters)"),
        ("seed: 1", "seed: " + "9" * 30, "seed", "must be <= 9223372036854775807"),
        ("match: {}", "match: {jobIndex: 2147483648}", "pods[0].match.jobIndex", "must be <= 2147483647"),
    ],
)
def test_scalar_bounds(tmp_path: Path, old: str, new: str, path: str, message: str) -> None:
    err = error_of(write(tmp_path, BASE.replace(old, new, 1)))
    assert err.field_path == path and message in err.message


def cluster(tmp_path: Path, spec: str) -> ScenarioError:
    return error_of(write(tmp_path, BASE.replace("seed: 1", "seed: 1\ncluster:\n  " + spec)))


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ("nodes: [{name: n, count: 1000000000000000000}]", "cluster.nodes[0].count", "must be <= 5000"),
        (
            "nodes: [{name: a, count: 3000}, {name: b, count: 3000}]",
            "cluster.nodes",
            "6000 nodes are more than the 5000",
        ),
        ("nodes: [{name: Node_A}]", "cluster.nodes[0].name", "a lowercase RFC 1123 subdomain must consist"),
        (
            "nodes: [{name: " + "n" * 252 + ", count: 20}]",
            "cluster.nodes[0].name",
            "no more than 253 characters",
        ),
        (
            "nodes: [{name: n, capacity: {posd: 1}}]",
            "cluster.nodes[0].capacity.posd",
            "must be a standard resource type or fully qualified",
        ),
        (
            "nodes: [{name: n, capacity: {memory: 32Gii}}]",
            "cluster.nodes[0].capacity.memory",
            "unable to parse quantity's suffix",
        ),
        (
            "nodes: [{name: n, capacity: {cpu: '-1'}}]",
            "cluster.nodes[0].capacity.cpu",
            "must be greater than or equal to 0",
        ),
        (
            "nodes: [{name: n, capacity: {nvidia.com/gpu: '0.5'}}]",
            "cluster.nodes[0].capacity.nvidia.com/gpu",
            "must be an integer",
        ),
        (
            "nodes: [{name: n, labels: {'a b': x}}]",
            "cluster.nodes[0].labels.a b",
            "name part must consist of alphanumeric characters",
        ),
        (
            "nodes: [{name: n, labels: {a: " + "x" * 64 + "}}]",
            "cluster.nodes[0].labels.a",
            "must be no more than 63 characters",
        ),
        (
            "nodes: [{name: n, taints: [{key: 'bad key', effect: NoSchedule}]}]",
            "cluster.nodes[0].taints[0].key",
            "name part must consist of alphanumeric characters",
        ),
        ("budget: {events: 0}", "cluster.budget.events", "must be >= 1"),
    ],
)
def test_cluster_values_are_validated_as_kubernetes_does(
    tmp_path: Path, spec: str, path: str, message: str
) -> None:
    err = cluster(tmp_path, spec)
    assert err.field_path == path and message in err.message


def test_valid_cluster_values_are_accepted(tmp_path: Path) -> None:
    spec = (
        "nodes: [{name: gpu, count: 2, capacity: {cpu: '8', memory: 32Gi, nvidia.com/gpu: 4, pods: 110,"
        " hugepages-2Mi: 1Gi}, labels: {example.com/pool: a_b-1}, taints: [{key: example.com/gpu,"
        " value: present, effect: NoSchedule}]}]"
    )
    text = BASE.replace("seed: 1", "seed: 1\ncluster:\n  " + spec)
    text = text.replace(
        "restartPolicy: Never",
        "restartPolicy: Never\n                tolerations: [{key: example.com/gpu, operator: Exists}]",
    )
    assert run_scenario(write(tmp_path, text)).passed


def test_an_unknown_feature_gate_is_the_scenarios_error(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("seed: 1", "seed: 1\ncluster:\n  featureGates: {NoSuchGate: true}"))
    assert failure_of(path).endswith("cluster.featureGates: unrecognized feature gate: NoSuchGate")


def test_too_many_pods_names_the_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("replicas: 1", "replicas: 1000000000"))
    started = time.perf_counter()
    message = failure_of(path)
    assert time.perf_counter() - started < 5
    assert "ask for 1000000000 pods, more than the limit of 150000 pods per scenario" in message
    assert "cluster.budget.pods or --max-pods" in message
    assert "limit of 1 pods" in failure_of(
        write(tmp_path, BASE.replace("replicas: 1", "replicas: 2"), "two.yaml"), RunLimits(max_pods=1)
    )


RESTART_LOOP = (
    BASE.replace("seed: 1", "seed: 1\nuntil: 87600h")
    .replace("restartPolicy: Never", "restartPolicy: OnFailure")
    .replace("completions: 1", "completions: 1\n            backoffLimit: 2147483647")
    .replace("after: 10s}", "after: 1s, code: 1}")
    .replace("happens: jobset Completed", "never: jobset Completed")
)


def test_a_restart_loop_ends_by_the_event_budget(tmp_path: Path) -> None:
    path = write(
        tmp_path, RESTART_LOOP.replace("until: 87600h", "until: 87600h\ncluster: {budget: {events: 3000}}")
    )
    outcome = run_scenario(path)
    assert not outcome.passed
    assert "budget exhausted after 3000 events at virtual time" in outcome.failures[0]
    assert "raise cluster.budget.events or pass --max-events" in outcome.failures[0]
    assert outcome.events_run == 3000 and outcome.virtual_end > 0
    again = run_scenario(path)
    assert (again.failures, again.virtual_end) == (outcome.failures, outcome.virtual_end)  # deterministic


def test_the_command_line_budget_overrides_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path, RESTART_LOOP.replace("until: 87600h", "until: 87600h\ncluster: {budget: {events: 3000}}")
    )
    assert "after 500 events" in failure_of(path, RunLimits(max_events=500))


def test_the_wall_clock_budget_ends_a_run(tmp_path: Path) -> None:
    path = write(tmp_path, RESTART_LOOP)
    started = time.perf_counter()
    message = failure_of(path, RunLimits(max_wall_seconds=0.5))
    assert time.perf_counter() - started < 10
    assert "limit 0.5 wall seconds; raise cluster.budget.wallSeconds or pass --max-wall-seconds" in message


def test_conflicts_for_a_day_do_not_overflow_the_back_off(tmp_path: Path) -> None:
    text = BASE.replace("seed: 1", "seed: 1\nuntil: 24h\ncluster: {faults: {conflictRate: 1.0}}")
    text = text.replace("happens: jobset Completed", "never: jobset Completed")
    outcome = run_scenario(write(tmp_path, text))
    assert outcome.passed, outcome.report
    assert outcome.virtual_end == 86400


def test_capped_backoff_never_overflows() -> None:
    assert capped_backoff(0.005, 0, 1000.0) == 0.005
    assert capped_backoff(0.005, 3, 1000.0) == 0.04
    assert capped_backoff(0.005, 1024, 1000.0) == 1000.0
    assert capped_backoff(0.005, 10**6, 1000.0) == 1000.0


# ---------------------------------------------------------------- contained {file:} references


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project: pyproject.toml at the root, manifests/js.yaml, scenarios/ below, a secret outside."""
    root = tmp_path / "project"
    (root / "manifests").mkdir(parents=True)
    (root / "scenarios").mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "manifests" / "js.yaml").write_text(MANIFEST)
    (tmp_path / "secret.yaml").write_text("kind: TopSecretKind\nmetadata: {name: hunter2}\n")
    return root


def ref_scenario(folder: Path, ref: str, name: str = "case.yaml") -> Path:
    text = (
        BASE[: BASE.index("jobset:")]
        + f"jobset: {{file: {json.dumps(ref)}}}\n"
        + BASE[BASE.index("expect:") :]
    )
    return write(folder, text, name)


def test_a_reference_inside_the_tree_is_read(tree: Path) -> None:
    assert run_scenario(ref_scenario(tree / "scenarios", "../manifests/js.yaml")).passed


@pytest.mark.parametrize(
    "ref", ["../../secret.yaml", "{root}/../secret.yaml", "/etc/passwd", "/proc/self/environ"]
)
def test_a_reference_outside_the_tree_is_refused_without_its_content(tree: Path, ref: str) -> None:
    err = error_of(ref_scenario(tree / "scenarios", ref.format(root=tree)))
    assert err.field_path == "jobset.file" and "resolves outside the scenario tree" in err.message
    assert "--allow-dir" in err.message
    assert "TopSecretKind" not in str(err) and "hunter2" not in str(err)


def test_a_symlink_out_of_the_tree_is_refused(tree: Path) -> None:
    (tree / "manifests" / "link.yaml").symlink_to(tree.parent / "secret.yaml")
    err = error_of(ref_scenario(tree / "scenarios", "../manifests/link.yaml"))
    assert "resolves outside the scenario tree" in err.message and "hunter2" not in str(err)


def test_an_allowed_dir_lets_a_reference_out(tree: Path) -> None:
    (tree.parent / "shared").mkdir()
    (tree.parent / "shared" / "js.yaml").write_text(MANIFEST)
    path = ref_scenario(tree / "scenarios", "../../shared/js.yaml")
    assert "outside the scenario tree" in error_of(path).message
    assert run_scenario(path, limits=RunLimits(allowed_dirs=(tree.parent / "shared",))).passed


def test_without_a_marker_the_root_is_the_scenarios_folder(tmp_path: Path) -> None:
    (tmp_path / "js.yaml").write_text(MANIFEST)
    (tmp_path / "sub").mkdir()
    assert load_scenario(ref_scenario(tmp_path, "js.yaml")).manifests()[0]["kind"] == "JobSet"
    assert "outside the scenario tree" in error_of(ref_scenario(tmp_path / "sub", "../js.yaml")).message


def test_a_nul_or_control_character_in_a_reference_is_refused(tree: Path) -> None:
    for ref in ("js\x00.yaml", "js\x1b[2J.yaml"):
        err = error_of(ref_scenario(tree / "scenarios", ref))
        assert "the path contains a control character" in err.message and "\x1b" not in str(err)


def test_parse_errors_of_referenced_files_do_not_echo_them(tree: Path) -> None:
    (tree / "manifests" / "bad.yaml").write_text("kind: JobSet\nsecret: [hunter2\n")
    err = error_of(ref_scenario(tree / "scenarios", "../manifests/bad.yaml"))
    assert "is not valid YAML" in err.message and "hunter2" not in str(err)
    (tree / "manifests" / "dir.yaml").mkdir()
    assert (
        "a directory, not a regular file"
        in error_of(ref_scenario(tree / "scenarios", "../manifests/dir.yaml")).message
    )


# ---------------------------------------------------------------- printed names


def test_control_characters_in_printed_names_are_escaped(tmp_path: Path) -> None:
    assert escape_control("a\x1b[2Jb\nc\u2028") == "a\\x1b[2Jb\\x0ac\\u2028"
    err = ScenarioError("bad \x1b[31m value", file=tmp_path / "x\x1by.yaml", line=3)
    assert "\x1b" not in str(err) and "x\\x1by.yaml:3" in str(err)


def test_an_unexpected_exception_is_one_scenarios_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakecluster.scenario import runner

    def explode(self: object, **_: object) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(runner.ScenarioRun, "play", explode)
    outcome = run_scenario(write(tmp_path, BASE))
    assert not outcome.passed and "Traceback" not in outcome.report
    assert (
        "internal error while playing the scenario (seed 1): KeyError at test_hostile_input.py"
        in outcome.failures[0]
    )
    assert "a fakecluster bug: please report it with this file" in outcome.failures[0]
