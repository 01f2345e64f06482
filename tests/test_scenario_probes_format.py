"""The ``probes:`` key of a pods rule: parsed, inherited like the other timing fields, resolved into the
kubelet's ``probe_fail_for``, and bad input reported with file, line and field path."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from fakecluster.scenario.format import PodIdentity, resolve_pod_rule
from tests.test_scenario_format import JOBSET, load_error, load_text


def test_probes_parse_and_inherit(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, textwrap.dedent("""\
        pods:
          - match: {replicatedJob: node}
            probes:
              readiness: {failFor: 30s}
              liveness: {failFor: never}
          - match: {}
            probes: {startup: {failFor: 1m}}
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    node = resolve_pod_rule(scenario.pods, PodIdentity(replicated_job="node"))
    assert node.probes is not None and node.probes.fail_for() == {"readiness": 30.0, "liveness": math.inf}
    launcher = resolve_pod_rule(scenario.pods, PodIdentity(replicated_job="launcher"))
    assert launcher.probes is not None and launcher.probes.fail_for() == {"startup": 60.0}


def test_unknown_probe_kind_and_bad_duration_are_load_errors(tmp_path: Path) -> None:
    err = load_error(tmp_path, textwrap.dedent("""\
        pods:
          - match: {}
            probes: {readyness: {failFor: 30s}}
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    want = "case.yaml:3: pods[0].probes.readyness: unknown key 'readyness' (did you mean 'readiness'?)"
    assert want in str(err)
    err = load_error(tmp_path, textwrap.dedent("""\
        pods:
          - match: {}
            probes: {readiness: {failFor: soon}}
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    assert "pods[0].probes.readiness.failFor" in str(err)


def test_pull_failures_parse_and_reject_bad_values(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, textwrap.dedent("""\
        pods:
          - match: {replicatedJob: node}
            pullFailures: 2
          - match: {}
            pullFailures: always
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    assert resolve_pod_rule(scenario.pods, PodIdentity(replicated_job="node")).pull_failures == 2
    assert resolve_pod_rule(scenario.pods, PodIdentity(replicated_job="launcher")).pull_failures == math.inf
    err = load_error(tmp_path, textwrap.dedent("""\
        pods:
          - match: {}
            pullFailures: -1
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    assert "case.yaml:3: pods[0].pullFailures" in str(err) and "non-negative integer or 'always'" in str(err)


def test_exit_per_run_parses_and_reports_the_item_path(tmp_path: Path) -> None:
    scenario = load_text(tmp_path, textwrap.dedent("""\
        pods:
          - match: {}
            exit: [{after: 5s, code: 1}, {after: 30s, code: 0}]
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    rule = resolve_pod_rule(scenario.pods, PodIdentity(replicated_job="node"))
    assert rule.exit is not None and (rule.exit.after, rule.exit.code) == (5.0, 1)
    assert [(r.after, r.code) for r in rule.exit.runs] == [(5.0, 1), (30.0, 0)]
    err = load_error(tmp_path, textwrap.dedent("""\
        pods:
          - match: {}
            exit: [{after: 5s, code: 1}, {after: 30s, kode: 0}]
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    assert "pods[0].exit[1].kode" in str(err)


def test_huge_pull_failures_is_a_load_error_not_an_overflow(tmp_path: Path) -> None:
    """A 400-digit count used to raise OverflowError converting to float (an internal error)."""
    err = load_error(tmp_path, textwrap.dedent(f"""\
        pods:
          - match: {{}}
            pullFailures: {10**400}
        """) + JOBSET + "expect: [{happens: jobset Completed}]\n")
    assert "case.yaml:3: pods[0].pullFailures" in str(err) and "at most 1,000,000 failed pulls" in str(err)
