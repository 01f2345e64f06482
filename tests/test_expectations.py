"""Subset matching and every expectation kind, each seen passing and failing."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakecluster.scenario.expectations import RunResult, check
from fakecluster.scenario.format import Scenario
from fakecluster.scenario.matching import subset_match
from fakecluster.scenario.trace import Snapshot, TraceEvent
from fakecluster.workload_plugin import GroupShape

# ---------------------------------------------------------------- subset_match

JOBSET_OBJ: dict[str, Any] = {
    "metadata": {"name": "mpi", "labels": {"a": "b"}},
    "spec": {"suspend": False, "replicatedJobs": [{"name": "node", "replicas": 2}]},
    "status": {
        "terminalState": "Failed",
        "conditions": [
            {"type": "StartupPolicyCompleted", "status": "True", "reason": "AllStarted"},
            {"type": "Completed", "status": "False", "reason": "FailedJobs"},
        ],
        "replicatedJobsStatus": [{"name": "launcher", "succeeded": 1}, {"name": "node", "ready": 2}],
        "args": ["a", "b"],
    },
}


@pytest.mark.parametrize(
    "expected",
    [
        {},
        {"status": {"terminalState": "Failed"}},
        {"status": {"conditions": [{"type": "Completed", "status": "False"}]}},
        {"status": {"conditions": [{"type": "StartupPolicyCompleted", "status": True}]}},
        {"status": {"replicatedJobsStatus": [{"name": "node", "ready": "2"}]}},
        {"status": {"restarts": 0, "restartsCountTowardsMax": 0}},
        {"spec": {"suspend": "false", "replicatedJobs": [{"name": "node"}]}},
        {"status": {"args": ["a", "b"]}},
        {"status": {"missingList": [], "missingMap": {}, "missingText": "", "gone": None}},
        {"metadata": {"labels": {"a": "b"}}},
    ],
)
def test_subset_match_passes(expected: dict[str, Any]) -> None:
    assert subset_match(expected, JOBSET_OBJ) == []


@pytest.mark.parametrize(
    ("expected", "lines"),
    [
        (
            {"status": {"conditions": [{"type": "Completed", "reason": "AllJobsCompleted"}]}},
            ["status.conditions[type=Completed].reason: expected 'AllJobsCompleted', got 'FailedJobs'"],
        ),
        (
            {"status": {"conditions": [{"type": "Failed", "status": "True"}]}},
            [
                "status.conditions[type=Failed]: expected an item with type 'Failed', got none"
                " (have: StartupPolicyCompleted, Completed)"
            ],
        ),
        (
            {
                "status": {
                    "replicatedJobsStatus": [{"name": "node", "ready": 3}],
                    "terminalState": "Completed",
                }
            },
            [
                "status.replicatedJobsStatus[name=node].ready: expected 3, got 2",
                "status.terminalState: expected 'Completed', got 'Failed'",
            ],
        ),
        ({"status": {"restarts": 1}}, ["status.restarts: expected 1, got nothing (the key is absent)"]),
        ({"status": {"args": ["a"]}}, ['status.args: expected ["a"], got ["a", "b"]']),
        ({"status": {"args": ["b", "a"]}}, ['status.args: expected ["b", "a"], got ["a", "b"]']),
        ({"status": "x"}, ["status: expected 'x', got {"]),
        ({"metadata": {"name": {"x": 1}}}, ["metadata.name: expected a mapping, got 'mpi'"]),
        ({"spec": {"suspend": True}}, ["spec.suspend: expected true, got false"]),
    ],
)
def test_subset_match_mismatch_lines(expected: dict[str, Any], lines: list[str]) -> None:
    problems = subset_match(expected, JOBSET_OBJ)
    assert len(problems) == len(lines)
    for problem, line in zip(problems, lines, strict=True):
        assert problem.startswith(line)


def test_subset_match_scalars_compare_as_strings() -> None:
    assert subset_match("True", True) == []
    assert subset_match(True, "True") == []
    assert subset_match(0, "0") == []
    assert subset_match("8", 8) == []
    assert subset_match(1, 1.0) == []
    assert subset_match(1, "2") == ["expected 1, got '2'"]
    assert subset_match("True", False) != []


def test_keyed_lists_match_duplicates_in_order() -> None:
    actual = [{"type": "A", "v": 1}, {"type": "A", "v": 2}]
    assert subset_match([{"type": "A", "v": 1}, {"type": "A", "v": 2}], actual) == []
    assert subset_match([{"type": "A", "v": 2}], actual) == ["[type=A].v: expected 2, got 1"]
    assert subset_match([{"type": "A"}, {"type": "A"}, {"type": "A"}], actual)[0].startswith(
        "[type=A]: expected"
    )


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
_json = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=5), children, max_size=4),
        st.lists(st.fixed_dictionaries({"name": st.text(max_size=3)}, optional={"v": children}), max_size=4),
        st.lists(st.fixed_dictionaries({"type": _scalars}, optional={"v": children}), max_size=4),
    ),
    max_leaves=20,
)


@given(_json)
def test_subset_match_is_reflexive(value: Any) -> None:
    assert subset_match(value, value) == []


@given(st.dictionaries(st.text(max_size=5), _json, max_size=5), st.data())
def test_subset_match_accepts_any_sub_mapping(actual: dict[str, Any], data: st.DataObject) -> None:
    keys = data.draw(st.lists(st.sampled_from(sorted(actual)), unique=True) if actual else st.just([]))
    assert subset_match({k: actual[k] for k in keys}, actual) == []


# ---------------------------------------------------------------- check(): helpers

MANIFEST = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "mpi"},
    "spec": {
        "replicatedJobs": [
            {"name": "launcher", "template": {"spec": {"completions": 1, "parallelism": 1}}},
            {"name": "node", "replicas": 1, "template": {"spec": {"completions": 2, "parallelism": 2}}},
        ]
    },
}
_seq = itertools.count()


def scenario(*expect: dict[str, Any]) -> Scenario:
    return Scenario.model_validate({"jobset": MANIFEST, "expect": list(expect)})


def ev(
    time: float, kind: str, event: str, rj: str | None = None, pi: int | None = None, **kw: Any
) -> TraceEvent:
    return TraceEvent(
        time=time,
        seq=next(_seq),
        kind=kind,
        namespace="default",
        name=kw.pop("name", f"mpi-{rj}-0-{pi}" if rj else "mpi"),
        event=event,
        jobset="mpi",
        replicated_job=rj,
        job_index=0 if rj else None,
        pod_index=pi,
        attempt=0 if rj else None,
        **kw,
    )


TRACE = [
    ev(0.0, "JobSet", "Created"),
    ev(0.0, "Pod", "Created", "node", 0),
    ev(0.0, "Pod", "Created", "node", 1),
    ev(2.0, "Pod", "Ready", "node", 0),
    ev(3.0, "Pod", "Ready", "node", 1),
    ev(3.0, "Pod", "Created", "launcher", 0),
    ev(8.0, "Pod", "Failed", "launcher", 0, detail="exit code 1"),
    ev(9.0, "JobSet", "Failed"),
]

FINAL_JOBSET = {
    "metadata": {"name": "mpi", "namespace": "default"},
    "status": {"terminalState": "Failed", "conditions": [{"type": "Failed", "status": "True"}]},
}


def result(**overrides: Any) -> RunResult:
    values: dict[str, Any] = {
        "trace": TRACE,
        "final": Snapshot(9.0, {"JobSet": [FINAL_JOBSET], "Job": [{}, {}], "Pod": [{}] * 3}),
        "snapshots": {2.5: Snapshot(2.5, {"JobSet": [FINAL_JOBSET], "Pod": [{}, {}]})},
        "events": [
            {
                "reason": "StartupPolicyInProgress",
                "type": "Normal",
                "note": "in order",
                "regarding": {"name": "mpi"},
            },
            {
                "reason": "FailedJobs",
                "type": "Warning",
                "message": "job mpi-launcher-0 failed: BackoffLimitExceeded",
            },
        ],
        "rejection": None,
        "virtual_end": 9.0,
        "seed": 7,
    }
    values.update(overrides)
    return RunResult(**values)


def summaries(*expect: dict[str, Any], **overrides: Any) -> list[str]:
    return [f.summary for f in check(scenario(*expect), result(**overrides))]


# ---------------------------------------------------------------- each kind


def test_order_passes_and_fails_with_times() -> None:
    assert summaries({"order": ["all node pods Ready", "first launcher pods Created"]}) == []
    assert summaries({"order": ["first node pods Created", "all node pods Ready", "jobset Failed"]}) == []
    [line] = summaries({"order": ["first launcher pods Created", "all node pods Created"]})
    assert line == (
        "expect[0] order: 'first launcher pods Created' (at 3.0s)"
        " is not before 'all node pods Created' (at 0.0s)"
    )


def test_order_uses_seq_for_equal_times() -> None:
    # node slot 1 became Ready (seq n) just before the launcher pod was created (seq n+1), both at 3.0s
    assert summaries({"order": ["all node pods Ready", "first launcher pods Created"]}) == []
    [line] = summaries({"order": ["first launcher pods Created", "all node pods Ready"]})
    assert "(at 3.0s) is not before" in line
    [line] = summaries({"order": ["first launcher pods Created", "all launcher pods Created"]})
    assert "the same event" in line


def test_order_reports_milestones_that_never_happened() -> None:
    [failure] = check(scenario({"order": ["jobset Completed", "first node pods Ready"]}), result())
    assert failure.summary == "expect[0] order: 'jobset Completed' never happened (run ended at 9.0s)"
    assert failure.related == ["jobset Completed", "first node pods Ready"]


def test_happens_with_by_and_after() -> None:
    assert (
        summaries({"happens": "jobset Failed"}, {"happens": "jobset Failed", "by": "9s", "after": "9s"}) == []
    )
    assert summaries({"happens": "jobset Completed"}) == [
        "expect[0] happens: 'jobset Completed' never happened (run ended at 9.0s)"
    ]
    assert summaries({"happens": "all node pods Ready", "by": "2s"}) == [
        "expect[0] happens: 'all node pods Ready' happened at 3.0s, after the deadline 2.0s"
    ]
    assert summaries({"happens": "all node pods Ready", "after": "5s"}) == [
        "expect[0] happens: 'all node pods Ready' happened at 3.0s, before 5.0s"
    ]


def test_never() -> None:
    assert summaries({"never": "first node pods Failed"}) == []
    assert summaries({"never": "first launcher pods Failed"}) == [
        "expect[0] never: 'first launcher pods Failed' happened at 8.0s"
        " (Pod default/mpi-launcher-0-0: exit code 1)"
    ]


def test_final_jobset_subset_and_counts() -> None:
    good = {"jobset": {"status": {"terminalState": "Failed", "restarts": 0}}, "count": {"jobs": 2, "pods": 3}}
    assert summaries({"final": good}) == []
    [line] = summaries(
        {
            "final": {
                "jobset": {
                    "status": {"terminalState": "Completed", "replicatedJobsStatus": [{"name": "node"}]}
                },
                "count": {"jobs": 0, "services": 0, "jobsets": 1},
            }
        }
    )
    assert line.startswith(
        "expect[0] final: jobset mpi: status.terminalState: expected 'Completed', got 'Failed'; "
    )
    assert "; jobset mpi: status.replicatedJobsStatus[name=node]: expected an item with name 'node'" in line
    assert "count.jobs: expected 0, got 2" in line
    assert "services" not in line and "jobsets" not in line


def test_final_picks_the_named_jobset_among_several() -> None:
    other = {"metadata": {"name": "other"}, "status": {"terminalState": "Completed"}}
    final = Snapshot(9.0, {"JobSet": [FINAL_JOBSET, other]})
    assert (
        summaries({"final": {"jobsets": {"other": {"status": {"terminalState": "Completed"}}}}}, final=final)
        == []
    )
    assert (
        summaries(
            {"final": {"jobset": {"name": "other", "status": {"terminalState": "Completed"}}}}, final=final
        )
        == []
    )
    meta = {"metadata": {"name": "mpi"}, "status": {"terminalState": "Failed"}}
    assert summaries({"final": {"jobset": meta}}, final=final) == []
    [line] = summaries({"final": {"jobset": {"status": {}}}}, final=final)
    assert "several JobSets exist (mpi, other)" in line
    [line] = summaries({"final": {"jobsets": {"gone": {}}}}, final=final)
    assert "JobSet 'gone' does not exist" in line
    [line] = summaries({"final": {"jobset": {"status": {}}}}, final=Snapshot(9.0, {}))
    assert "no JobSet exists" in line


def test_at_uses_the_snapshot_for_that_time() -> None:
    assert summaries({"at": "2.5s", "count": {"pods": 2, "jobs": 0}}) == []
    assert summaries({"at": "2.5s", "count": {"pods": 3}}) == [
        "expect[0] at 2.5s: count.pods: expected 3, got 2"
    ]
    [line] = summaries({"at": "2.5s", "jobset": {"status": {"terminalState": "Completed"}}})
    assert line.startswith("expect[0] at 2.5s: jobset mpi: status.terminalState")


def test_at_after_the_end_of_run_is_the_final_state_and_missing_snapshot_fails() -> None:
    assert summaries({"at": "1h", "count": {"pods": 3}}) == []
    assert summaries({"at": "1s", "count": {"pods": 0}}) == [
        "expect[0] at 1.0s: the run recorded no snapshot at that time"
    ]


def test_events_contains_in_order_as_a_subsequence() -> None:
    assert summaries({"events": {"contains": [{"reason": "FailedJobs"}]}}) == []
    ordered = [
        {"reason": "StartupPolicyInProgress", "type": "Normal", "regarding": {"name": "mpi"}},
        {"type": "Warning", "message": "BackoffLimitExceeded"},
    ]
    assert summaries({"events": {"contains": ordered}}) == []
    assert (
        summaries({"events": {"contains": [{"message": "in order"}, {"note": "mpi-launcher-0 failed"}]}})
        == []
    )
    [line] = summaries({"events": {"contains": ordered[::-1]}})
    assert line.startswith('expect[0] events: no event matching {"reason": "StartupPolicyInProgress"')
    assert "after the one matching contains[0]" in line
    assert "recorded: Normal/StartupPolicyInProgress, Warning/FailedJobs" in line
    [line] = summaries({"events": {"contains": [{"reason": "FailedJobs", "type": "Normal"}]}})
    assert "no event matching" in line
    [line] = summaries({"events": {"contains": [{"reason": "FailedJobs"}, {"reason": "FailedJobs"}]}})
    assert "after the one matching contains[0]" in line


def test_rejected() -> None:
    rejection = "admission webhook denied: DependsOn can't be set for the first ReplicatedJob"
    assert summaries({"rejected": {"message": "DependsOn can't be set"}}, rejection=rejection) == []
    assert summaries({"rejected": {"message": "other"}}, rejection=rejection) == [
        f"expect[0] rejected: the rejection {rejection!r} does not contain 'other'"
    ]
    assert summaries({"rejected": {"message": "x"}}) == [
        "expect[0] rejected: expected the manifest to be rejected with 'x', but it was accepted"
    ]


def test_unexpected_rejection_is_a_failure_and_other_expectations_still_run() -> None:
    failures = check(scenario({"happens": "jobset Completed"}), result(rejection="spec.x: Invalid value"))
    assert [(f.index, f.summary) for f in failures] == [
        (-1, "the manifest was rejected: spec.x: Invalid value"),
        (0, "expect[0] happens: 'jobset Completed' never happened (run ended at 9.0s)"),
    ]
    failures = check(
        scenario({"rejected": {"message": "Invalid"}}, {"never": "first node pods Created"}),
        result(rejection="spec.x: Invalid value"),
    )
    assert [f.index for f in failures] == [1]


def test_all_expectations_are_reported_with_their_index() -> None:
    failures = check(
        scenario({"happens": "jobset Failed"}, {"never": "jobset Failed"}, {"happens": "jobset Completed"}),
        result(),
    )
    assert [f.index for f in failures] == [1, 2]
    assert failures[0].related == ["jobset Failed"]


def test_shapes_can_be_passed_explicitly() -> None:
    shapes = {"mpi": {"node": GroupShape(1, 3), "launcher": GroupShape(1, 1)}}
    assert summaries({"happens": "all node pods Ready"}) == []
    failures = check(scenario({"happens": "all node pods Ready"}), result(), shapes)
    assert [f.summary for f in failures] == [
        "expect[0] happens: 'all node pods Ready' never happened (run ended at 9.0s)"
    ]


def test_unknown_replicated_job_in_all_is_a_failure_not_a_crash() -> None:
    [line] = summaries({"happens": "all ghost pods Ready"})
    assert "no JobSet has a replicated job 'ghost'" in line
