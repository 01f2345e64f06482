"""The scenario file layer: durations, loading, located errors, pod rules and workload validation."""

from __future__ import annotations

import math
import pickle
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from scenario_files import jobset_manifest

from fakecluster.scenario.durations import format_duration, format_seconds, parse_duration
from fakecluster.scenario.errors import MAX_PROBLEMS, ScenarioError, ScenarioProblems
from fakecluster.scenario.format import (
    UNSUPPORTED_ACTIONS,
    PodIdentity,
    PodRule,
    Scenario,
    resolve_pod_rule,
)
from fakecluster.scenario.loader import load_scenario, validate_against_workload
from fakecluster.scenario.milestones import workload_shapes
from fakecluster.workload_plugin import GroupShape

JOBSET = "jobset:\n" + jobset_manifest(
    "- name: launcher\n"
    "  template: {spec: {parallelism: 1, completions: 1, template: {spec: {containers: [{name: c}]}}}}\n",
    "- name: node\n"
    "  replicas: 2\n"
    "  template: {spec: {parallelism: 3, completions: 3, template: {spec: {containers: [{name: c}]}}}}\n",
    name="mpi",
    indent=2,
)
SHAPES = {"mpi": {"launcher": GroupShape(1, 1), "node": GroupShape(2, 3)}}


def write(tmp_path: Path, body: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def load_text(tmp_path: Path, body: str) -> Scenario:
    return load_scenario(write(tmp_path, body))


def load_error(tmp_path: Path, body: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_text(tmp_path, body)
    return info.value


# ---------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("250ms", 0.25),
        ("5s", 5.0),
        ("2m", 120.0),
        ("1h", 3600.0),
        ("1m30s", 90.0),
        ("1h30m", 5400.0),
        ("1h2m3s4ms", 3723.004),
        ("0.5s", 0.5),
        (".5s", 0.5),
        ("0s", 0.0),
        ("100ms", 0.1),
        ("12", 12.0),
        (7, 7.0),
        (2.5, 2.5),
        (" 5s ", 5.0),
    ],
)
def test_parse_duration_valid(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("-5s", "negative"),
        (-1, "negative"),
        ("5x", "cannot read"),
        ("s", "cannot read"),
        ("5 s", "cannot read"),
        ("1s1m", "largest to smallest"),
        ("1s1s", "largest to smallest"),
        ("", "empty"),
        ("abc", "cannot read"),
        (True, "expected a duration"),
        (None, "expected a duration"),
        ([1], "expected a duration"),
        (math.inf, "finite"),
        (math.nan, "finite"),
    ],
)
def test_parse_duration_invalid(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        parse_duration(value)


@given(st.integers(min_value=0, max_value=10**10))
def test_duration_round_trip_whole_milliseconds(millis: int) -> None:
    seconds = millis / 1000
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False)
       .map(lambda s: round(s, 6)))
def test_duration_round_trip_any_float(seconds: float) -> None:
    """Any whole-microsecond duration round-trips (format 1.1 "Time": durations are read to the
    microsecond)."""
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_duration_is_readable() -> None:
    assert format_duration(90) == "1m30s"
    assert format_duration(0.25) == "250ms"
    assert format_duration(3600) == "1h"
    assert format_duration(0) == "0s"
    assert format_duration(90.25) == "1m30.25s"
    assert format_seconds(12) == "12.0s"
    assert format_seconds(0.25) == "0.25s"


# ---------------------------------------------------------------- loading: the happy path


def test_load_full_scenario(tmp_path: Path) -> None:
    scenario = load_text(
        tmp_path,
        JOBSET
        + """\
until: 30m
seed: 4
tags: [workers-first]
cluster:
  featureGates: {SomeGate: true}
  nodes:
    - {name: pool-a, count: 2, capacity: {cpu: 8, memory: 32Gi, pods: 110}, labels: {a: b}}
pods:
  - match: {replicatedJob: node, jobIndex: 1}
    ready: never
    exit: {after: 30s, code: 3}
  - exit: never
    jitter: 0.5s
actions:
  - when: all node pods Ready
    after: 5s
    failPod: {pod: "node[0/1]", exitCode: 137}
  - {at: 1m, suspend: mpi}
  - {at: 2m, resume: true}
  - {at: 3m, patch: {jobset: mpi, merge: {spec: {ttlSecondsAfterFinished: 5}}}}
  - {at: 4m, delete: {service: mpi}}
  - {at: 5m, deletePod: {pod: "node[1/2]"}}
expect:
  - order: [all node pods Ready, first launcher pods Created]
  - {happens: jobset Completed, by: 90s, after: 10s}
  - never: first launcher pods Failed
  - final: {jobset: {status: {restarts: 0}}, count: {jobs: 2}}
  - {at: 20s, count: {pods: 1}}
  - {at: 10s, jobset: {status: {}}}
  - events: {contains: [{reason: X}]}
  - rejected: {message: nope}
""",
    )
    assert scenario.name == "case"
    assert (scenario.until, scenario.seed, scenario.tags) == (1800.0, 4, ["workers-first"])
    assert scenario.cluster.feature_gates == {"SomeGate": True}
    pool = scenario.cluster.nodes[0] if scenario.cluster.nodes else None
    assert pool is not None and pool.capacity == {"cpu": "8", "memory": "32Gi", "pods": "110"}
    assert pool.node_names() == ["pool-a-0", "pool-a-1"]
    assert scenario.pods[0].ready == math.inf and scenario.pods[0].exit is not None
    assert (scenario.pods[0].exit.after, scenario.pods[0].exit.code) == (30.0, 3)
    assert scenario.pods[1].exit is not None and scenario.pods[1].exit.never
    assert [a.verb for a in scenario.actions] == [
        "failPod",
        "suspend",
        "resume",
        "patch",
        "delete",
        "deletePod",
    ]
    fail = scenario.actions[0]
    assert fail.when is not None and fail.when.event == "Ready" and fail.after == 5.0
    assert (
        fail.fail_pod is not None and str(fail.fail_pod.pod) == "node[0/1]" and fail.fail_pod.exit_code == 137
    )
    assert scenario.actions[1].suspend == "mpi" and scenario.actions[2].resume is None
    assert scenario.actions[3].patch is not None and scenario.actions[3].patch.kind == "JobSet"
    assert scenario.actions[4].delete is not None and scenario.actions[4].delete.name == "mpi"
    assert [e.kind for e in scenario.expect] == [
        "order", "happens", "never", "final", "at", "at", "events", "rejected",
    ]  # fmt: skip
    assert scenario.snapshot_times() == [10.0, 20.0]
    assert scenario.manifests()[0]["metadata"]["name"] == "mpi"
    assert scenario.source == tmp_path / "case.yaml"
    assert scenario.line_of("expect[0].order[1]") == scenario.line_of("expect[0].order")
    validate_against_workload(scenario, workload_shapes(scenario.manifests()))


def test_name_defaults_to_file_stem_and_can_be_given(tmp_path: Path) -> None:
    body = JOBSET + "expect: [{happens: jobset Completed}]\n"
    assert load_scenario(write(tmp_path, body, "startup-order.yaml")).name == "startup-order"
    assert load_text(tmp_path, "name: given\n" + body).name == "given"


def test_manifest_from_file_relative_to_scenario(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")  # the tree root: references may reach up to it
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "js.yaml").write_text("kind: JobSet\nmetadata: {name: from-file}\n")
    (tmp_path / "sub").mkdir()
    scenario = load_scenario(
        write(
            tmp_path / "sub",
            "jobsets: [{file: ../manifests/js.yaml}]\nexpect: [{happens: jobset Completed}]\n",
        )
    )
    assert scenario.manifests() == [{"kind": "JobSet", "metadata": {"name": "from-file"}}]


# ---------------------------------------------------------------- loading: errors with file, line, path


def test_error_string_is_one_line_with_every_known_part(tmp_path: Path) -> None:
    err = ScenarioError("bad\nthing", file=Path("a.yaml"), field_path="pods[0]", line=3)
    assert str(err) == "a.yaml:3: pods[0]: bad thing"
    assert str(ScenarioError("m", file=Path("a.yaml"))) == "a.yaml: m"
    assert str(ScenarioError("m", field_path="x")) == "x: m"
    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.line, copy.field_path) == (str(err), 3, "pods[0]")


def test_invalid_yaml_reports_the_line(tmp_path: Path) -> None:
    err = load_error(tmp_path, "expect:\n  - happens: [unclosed\nname: x\n")
    assert err.line == 3 and "invalid YAML" in err.message
    assert str(err).startswith(f"{tmp_path / 'case.yaml'}:3: invalid YAML")


def test_tab_indentation_is_invalid_yaml_with_line(tmp_path: Path) -> None:
    err = load_error(tmp_path, "name: a\nexpect:\n\t- happens: jobset Completed\n")
    assert err.line == 3 and "invalid YAML" in err.message


def test_unknown_top_level_key_names_path_line_and_suggestion(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "untill: 5m\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "untill"
    assert err.line == 12
    assert "unknown key 'untill'" in err.message and "did you mean 'until'" in err.message


def test_unknown_nested_key_has_full_path(tmp_path: Path) -> None:
    err = load_error(
        tmp_path,
        JOBSET + "pods:\n  - match: {replicatedJob: node}\n    exit: {after: 3s, cod: 1}\n"
        "expect: [{happens: jobset Completed}]\n",
    )
    assert (err.field_path, err.line) == ("pods[0].exit.cod", 14)


def test_wrong_type_says_what_was_expected(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "seed: abc\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "seed" and err.message == "expected an integer, got 'abc'"
    err = load_error(tmp_path, JOBSET + "pods: {a: 1}\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "pods" and err.message == "expected a list, got a mapping"
    err = load_error(tmp_path, JOBSET + "tags: [1]\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "tags[0]" and "expected a string" in err.message


def test_bad_duration_points_at_the_field(tmp_path: Path) -> None:
    body = JOBSET + "pods:\n  - exit:\n      after: 5 minutes\nexpect: [{happens: jobset Completed}]\n"
    err = load_error(tmp_path, body)
    assert (err.field_path, err.line) == ("pods[0].exit.after", 14)
    assert "cannot read '5 minutes' as a duration" in err.message
    assert not err.message.startswith("Value error")


def test_negative_until_is_refused(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "until: -1s\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "until" and "negative" in err.message
    err = load_error(tmp_path, JOBSET + "until: 0s\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "until" and "greater than 0s" in err.message


def test_both_jobset_and_jobsets(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "jobsets: [{kind: JobSet}]\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "jobsets" and err.line == 12 and "not both" in err.message


def test_no_jobset_at_all(tmp_path: Path) -> None:
    err = load_error(tmp_path, "expect: [{happens: jobset Completed}]\n")
    assert "no JobSet" in err.message


def test_missing_expect_and_empty_expect(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET)
    assert err.message == "missing required key 'expect'" and err.field_path == ""
    err = load_error(tmp_path, JOBSET + "expect: []\n")
    assert err.field_path == "expect" and "at least 1 item" in err.message


def test_missing_manifest_file_is_named(tmp_path: Path) -> None:
    err = load_error(tmp_path, "jobset: {file: nowhere/js.yaml}\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "jobset.file" and err.line == 1
    assert "nowhere/js.yaml" in err.message


def test_manifest_file_with_two_documents_is_refused(tmp_path: Path) -> None:
    (tmp_path / "two.yaml").write_text("kind: JobSet\n---\nkind: JobSet\n")
    err = load_error(tmp_path, "jobsets:\n  - file: two.yaml\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "jobsets[0].file" and err.line == 2 and "exactly one" in err.message


def test_manifest_reference_with_extra_key(tmp_path: Path) -> None:
    err = load_error(tmp_path, "jobset: {file: a.yaml, seed: 1}\nexpect: [{happens: jobset Completed}]\n")
    assert err.field_path == "jobset.seed" and "only 'file'" in err.message


def test_unknown_milestone_event_in_expectation(tmp_path: Path) -> None:
    body = JOBSET + "expect:\n  - order:\n      - all node pods Ready\n      - first launcher pods Startd\n"
    err = load_error(tmp_path, body)
    assert (err.field_path, err.line) == ("expect[0].order[1]", 15)
    assert "unknown pod event 'Startd'" in err.message


def test_unknown_jobset_condition_in_when(tmp_path: Path) -> None:
    body = (
        JOBSET
        + "actions:\n  - {when: jobset Done, suspend: mpi}\nexpect: [{happens: jobset Completed}]\n"
    )
    err = load_error(tmp_path, body)
    assert err.field_path == "actions[0].when" and "unknown JobSet condition 'Done'" in err.message


@pytest.mark.parametrize(
    ("verb", "value"),
    [("evictPod", '{pod: "node[0/1]"}'), ("failNode", "{node: pool-a-1}"), ("restartController", "jobset")],
)
def test_fault_action_verbs_load(tmp_path: Path, verb: str, value: str) -> None:
    """The verbs the contract reserved for faults are all playable now: none is refused at load."""
    assert not UNSUPPORTED_ACTIONS
    body = JOBSET + f"actions:\n  - at: 10s\n    {verb}: {value}\nexpect: [{{happens: jobset Completed}}]\n"
    scenario = load_text(tmp_path, body)
    assert [a.verb for a in scenario.actions] == [verb]
    assert scenario.actions[0].at == 10.0


@pytest.mark.parametrize(
    ("action", "path", "fragment"),
    [
        ("{at: 1s, suspend: mpi, resume: mpi}", "actions[0]", "exactly one verb"),
        ("{at: 1s}", "actions[0]", "exactly one verb"),
        ("{suspend: mpi}", "actions[0]", "exactly one of 'at'"),
        ("{at: 1s, when: jobset Completed, suspend: mpi}", "actions[0]", "exactly one of 'at'"),
        ("{at: 1s, after: 2s, suspend: mpi}", "actions[0].after", "'after' delays a 'when'"),
        ("{at: 1s, failPod: {pod: node}}", "actions[0].failPod.pod", "pod reference"),
        ("{at: 1s, patch: {jobset: a, job: b, merge: {}}}", "actions[0].patch", "exactly one of jobset"),
        ("{at: 1s, patch: {jobset: a}}", "actions[0].patch", "missing required key 'merge'"),
        ("{at: 1s, suspend: false}", "actions[0].suspend", "JobSet name"),
    ],
)
def test_action_shape_errors(tmp_path: Path, action: str, path: str, fragment: str) -> None:
    err = load_error(tmp_path, JOBSET + f"actions:\n  - {action}\nexpect: [{{happens: jobset Completed}}]\n")
    assert err.field_path == path and fragment in err.message


@pytest.mark.parametrize(
    ("item", "path", "fragment"),
    [
        ("{happens: jobset Completed, never: jobset Failed}", "expect[0]", "exactly one of"),
        ("{by: 5s}", "expect[0]", "exactly one of"),
        ("{never: jobset Failed, by: 5s}", "expect[0].by", "'by' goes with 'happens'"),
        ("{final: {count: {jobs: 1}}, count: {pods: 1}}", "expect[0].count", "goes with 'at'"),
        ("{happens: jobset Completed, by: 5s, after: 9s}", "expect[0].after", "later than 'by'"),
        ("{order: [jobset Completed]}", "expect[0].order", "at least 2 items"),
        ("{final: {}}", "expect[0].final", "nothing to check"),
        ("{at: 5s}", "expect[0]", "nothing to check"),
        ("{final: {count: {pod: 1}}}", "expect[0].final.count.pod", "did you mean 'pods'"),
        ("{final: {count: {pods: -1}}}", "expect[0].final.count.pods", "must be >= 0"),
        ("{events: {contains: []}}", "expect[0].events.contains", "at least 1 item"),
        ("{rejected: {}}", "expect[0].rejected", "missing required key 'message'"),
        ("{happens: 'first node[0/1] jobs Ready'}", "expect[0].happens", "jobs take [<jobIndex>]"),
        ("{happens: }", "expect[0].happens", "needs a value"),
    ],
)
def test_expectation_shape_errors(tmp_path: Path, item: str, path: str, fragment: str) -> None:
    err = load_error(tmp_path, JOBSET + f"expect:\n  - {item}\n")
    assert err.field_path == path and fragment in err.message


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "seed: 1\nseed: 2\nexpect: [{happens: jobset Completed}]\n")
    assert (err.field_path, err.line) == ("seed", 13) and "duplicate key" in err.message


def test_several_problems_are_all_listed_one_per_line_in_file_order(tmp_path: Path) -> None:
    err = load_error(tmp_path, JOBSET + "seed: x\nuntil: y\nexpect: [{happens: jobset Completed}]\n")
    assert isinstance(err, ScenarioProblems)
    assert (err.field_path, err.line) == ("seed", 12)  # the first one locates the error as a whole
    lines = str(err).splitlines()
    assert [line.split(": ")[:2] for line in lines] == [
        [f"{tmp_path / 'case.yaml'}:12", "seed"],
        [f"{tmp_path / 'case.yaml'}:13", "until"],
    ]
    assert "expected an integer, got 'x'" in lines[0] and "cannot read 'y'" in lines[1]


def test_problems_of_every_pass_are_listed_together(tmp_path: Path) -> None:
    """Duplicate keys (YAML pass) and schema errors (model pass) come out of one load."""
    body = JOBSET + "seed: 1\nseed: 2\nuntil: soon\nexpect: [{happens: jobset Completed}]\ncolour: red\n"
    err = load_error(tmp_path, body)
    lines = str(err).splitlines()
    assert len(lines) == 3, lines
    assert "duplicate key 'seed'" in lines[0] and ":13: " in lines[0]
    assert "until: cannot read 'soon'" in lines[1] and ":14: " in lines[1]
    assert "colour: unknown key 'colour'" in lines[2] and ":16: " in lines[2]


def test_the_list_is_capped(tmp_path: Path) -> None:
    pods = "".join(f"  - {{schedule: bad{i}}}\n" for i in range(MAX_PROBLEMS + 5))
    err = load_error(tmp_path, JOBSET + f"pods:\n{pods}expect: [{{happens: jobset Completed}}]\n")
    lines = str(err).splitlines()
    assert len(lines) == MAX_PROBLEMS + 1
    assert lines[-1] == "... and 5 more problems"
    assert all(f"pods[{i}].schedule" in lines[i] for i in range(MAX_PROBLEMS))


@pytest.mark.parametrize(
    ("body", "fragment"),
    [("", "empty"), ("- a\n- b\n", "mapping of keys"), ("just text\n", "mapping of keys")],
)
def test_files_that_are_not_scenarios(tmp_path: Path, body: str, fragment: str) -> None:
    assert fragment in load_error(tmp_path, body).message


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "absent.yaml")


def test_taint_and_node_pool_validation(tmp_path: Path) -> None:
    body = JOBSET + "cluster:\n  nodes:\n    - {name: a, taints: [{key: k, effect: Sometimes}]}\n"
    err = load_error(tmp_path, body + "expect: [{happens: jobset Completed}]\n")
    assert err.field_path == "cluster.nodes[0].taints[0].effect" and "NoSchedule" in err.message
    body = JOBSET + "cluster:\n  nodes: [{name: a, count: 2}, {name: a-1}]\n"
    err = load_error(tmp_path, body + "expect: [{happens: jobset Completed}]\n")
    assert err.field_path == "cluster.nodes[1].name" and "'a-1' is used twice" in err.message


def test_duplicate_jobset_names(tmp_path: Path) -> None:
    body = "jobsets:\n  - {metadata: {name: a}}\n  - {metadata: {name: a}}\n"
    body += "expect: [{happens: jobset a Completed}]\n"
    err = load_error(tmp_path, body)
    assert err.field_path == "jobsets[1].metadata.name" and err.line == 3


# ---------------------------------------------------------------- pod rules


def test_pod_rules_inherit_field_by_field() -> None:
    rules = [
        PodRule.model_validate({"match": {"replicatedJob": "node", "podIndex": 1}, "ready": "9s"}),
        PodRule.model_validate({"match": {"replicatedJob": "node"}, "ready": "2s", "pull": "60s"}),
        PodRule.model_validate({"match": {"labels": {"app": "x"}}, "exit": {"after": "30s", "code": 1}}),
        PodRule.model_validate({"start": "1s", "pull": "5s"}),
    ]
    slot1 = resolve_pod_rule(rules, PodIdentity(replicated_job="node", pod_index=1, labels={"app": "x"}))
    assert (slot1.ready, slot1.pull, slot1.start, slot1.schedule) == (9.0, 60.0, 1.0, None)
    assert slot1.exit is not None and (slot1.exit.after, slot1.exit.code) == (30.0, 1)
    slot0 = resolve_pod_rule(rules, PodIdentity(replicated_job="node", pod_index=0))
    assert (slot0.ready, slot0.pull, slot0.exit) == (2.0, 60.0, None)
    other = resolve_pod_rule(rules, PodIdentity(replicated_job="launcher"))
    assert (other.ready, other.pull, other.start) == (None, 5.0, 1.0)


def test_pod_match_keys_must_all_fit() -> None:
    rule = PodRule.model_validate({"match": {"jobset": "a", "jobIndex": 0, "attempt": 1}, "pull": "1s"})
    assert rule.match.matches(PodIdentity(jobset="a", job_index=0, attempt=1))
    assert not rule.match.matches(PodIdentity(jobset="a", job_index=0, attempt=0))
    assert not rule.match.matches(PodIdentity(jobset="b", job_index=0, attempt=1))


# ---------------------------------------------------------------- validation against the workload


def scenario_with(tmp_path: Path, extra: str) -> Scenario:
    return load_text(tmp_path, JOBSET + extra)


@pytest.mark.parametrize(
    ("extra", "path", "fragment"),
    [
        ("expect: [{happens: all nodes pods Ready}]\n", "expect[0].happens", "no replicated job 'nodes'"),
        ("expect: [{order: [jobset Completed, first workr pods Ready]}]\n", "expect[0].order[1]", "'workr'"),
        ("expect: [{never: first other/node pods Ready}]\n", "expect[0].never", "no JobSet named 'other'"),
        (
            "expect: [{happens: 'first node[2] pods Ready'}]\n",
            "expect[0].happens",
            "job index 2 is out of range",
        ),
        ("expect: [{happens: 'first node[0/3] pods Ready'}]\n", "expect[0].happens", "pod index 3"),
        ("expect: [{happens: jobset other Completed}]\n", "expect[0].happens", "no JobSet named 'other'"),
        (
            "actions: [{when: all nod pods Ready, suspend: mpi}]\nexpect: [{happens: jobset Completed}]\n",
            "actions[0].when",
            "did you mean 'node'",
        ),
        (
            "actions: [{at: 1s, failPod: {pod: 'worker[0/0]'}}]\nexpect: [{happens: jobset Completed}]\n",
            "actions[0].failPod.pod",
            "no replicated job 'worker'",
        ),
        (
            "actions: [{at: 1s, deletePod: {pod: 'node[5/0]'}}]\nexpect: [{happens: jobset Completed}]\n",
            "actions[0].deletePod.pod",
            "job index 5",
        ),
        (
            "actions: [{at: 1s, suspend: other}]\nexpect: [{happens: jobset Completed}]\n",
            "actions[0].suspend",
            "no JobSet named 'other'",
        ),
        (
            "pods: [{match: {replicatedJob: worker}, pull: 1s}]\nexpect: [{happens: jobset Completed}]\n",
            "pods[0].match.replicatedJob",
            "no replicated job 'worker'",
        ),
        (
            "pods: [{match: {jobset: other}, pull: 1s}]\nexpect: [{happens: jobset Completed}]\n",
            "pods[0].match.jobset",
            "no JobSet named 'other'",
        ),
        ("expect: [{final: {jobsets: {other: {}}}}]\n", "expect[0].final.jobsets.other", "no JobSet"),
    ],
)
def test_validate_against_workload_rejects_unknown_names(
    tmp_path: Path, extra: str, path: str, fragment: str
) -> None:
    scenario = scenario_with(tmp_path, extra)
    with pytest.raises(ScenarioError) as info:
        validate_against_workload(scenario, SHAPES)
    err = info.value
    assert err.field_path == path and fragment in err.message
    assert err.file == tmp_path / "case.yaml" and err.line is not None


def test_several_jobsets_need_names(tmp_path: Path) -> None:
    shapes = {"a": {"node": GroupShape(1, 1)}, "b": {"node": GroupShape(1, 1), "solo": GroupShape(1, 1)}}
    base = "jobsets: [{metadata: {name: a}}, {metadata: {name: b}}]\n"
    cases = [
        ("expect: [{happens: jobset Completed}]\n", "expect[0].happens", "several JobSets"),
        ("expect: [{happens: all node pods Ready}]\n", "expect[0].happens", "prefix it, e.g. 'a/node'"),
        (
            "actions: [{at: 1s, deletePod: {pod: 'solo[0/0]'}}]\nexpect: [{happens: jobset a Completed}]\n",
            "actions[0].deletePod.pod",
            "prefix the pod reference",
        ),
        (
            "actions: [{at: 1s, suspend: true}]\nexpect: [{happens: jobset a Completed}]\n",
            "actions[0].suspend",
            "",
        ),
        ("expect: [{final: {jobset: {status: {}}}}]\n", "expect[0].final.jobset", "name: <jobset>"),
    ]
    for extra, path, fragment in cases:
        scenario = load_text(tmp_path, base + extra)
        with pytest.raises(ScenarioError) as info:
            validate_against_workload(scenario, shapes)
        assert info.value.field_path == path and fragment in info.value.message, extra
    fine = load_text(
        tmp_path,
        base + "actions: [{at: 1s, deletePod: {pod: 'b/solo[0/0]'}}]\n"
        "expect: [{happens: all solo pods Ready}, {happens: all b/node pods Ready},"
        " {final: {jobset: {name: a}}}, {happens: jobset b Completed}]\n",
    )
    validate_against_workload(fine, shapes)


def test_workload_shapes_reads_replicas_and_completions() -> None:
    manifest = {
        "metadata": {"name": "x"},
        "spec": {
            "replicatedJobs": [
                {"name": "a", "replicas": 3, "template": {"spec": {"completions": 4, "parallelism": 2}}},
                {"name": "b", "template": {"spec": {"parallelism": 2}}},
                {"name": "c"},
                "garbage",
            ]
        },
    }
    assert workload_shapes([manifest, {"kind": "JobSet"}]) == {
        "x": {"a": GroupShape(3, 4), "b": GroupShape(1, 2), "c": GroupShape(1, 1)}
    }


_KEYS = st.sampled_from(
    ["jobset", "jobsets", "expect", "pods", "actions", "cluster", "nodes", "match", "exit", "after", "at",
     "when", "order", "happens", "final", "count", "failPod", "pod", "file", "until", "seed", "ready", "x"]
)  # fmt: skip
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.sampled_from(
        ["5s", "never", "all node pods Ready", "node[0/1]", "jobset Completed", "", "-1s", "x.yaml"]
    ),
)
_DOCS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=15,
)


@given(st.dictionaries(_KEYS, _DOCS, max_size=6))
def test_any_input_gives_a_scenario_or_a_scenario_error(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    try:
        load_scenario(path)
    except ScenarioError as err:
        # one located line per problem, each naming the file
        assert all(line.startswith((str(path), "...")) for line in str(err).splitlines())
