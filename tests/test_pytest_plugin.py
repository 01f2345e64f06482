"""The pytest plugin: every ``*.yaml`` under a ``scenarios/`` folder is one test item; failures show
the failed expectation, the seed and the timeline; tags become markers; ``-k`` selects by file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster.scenario.runner import run_scenario

pytest_plugins = ["pytester"]

# the inner runs need only the scenario plugin (hypothesis's would re-import hypothesis in every run)
PLUGIN = ("-p", "fakecluster.pytest_plugin", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")

SCENARIO = """\
seed: {seed}
tags: {tags}
pods:
  - match: {{}}
    schedule: 1s
    start: 1s
    exit: {{after: 10s}}
jobset:
  apiVersion: jobset.x-k8s.io/v1alpha2
  kind: JobSet
  metadata: {{name: js}}
  spec:
    replicatedJobs:
      - name: w
        replicas: 1
        template:
          spec:
            parallelism: 2
            completions: 2
            template:
              spec:
                restartPolicy: Never
                containers: [{{name: c, image: busybox}}]
expect:
  - happens: jobset Completed
    by: {by}
"""


def _write(pytester: pytest.Pytester, path: str, *, seed: int = 1, tags: str = "[]", by: str = "60s") -> None:
    target = pytester.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(SCENARIO.format(seed=seed, tags=tags, by=by))


@pytest.fixture(scope="module", autouse=True)
def _warm_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Play one scenario in this process before the inner runs.

    The inner runs are in-process, and pytester drops every module they import when they end; the
    process-wide freeze (``fakecluster.wallclock_freeze``) outlives them, and freezegun imported again
    under an
    active freeze breaks. Importing everything a run needs up front avoids that (and the re-imports).
    """
    path: Path = tmp_path_factory.mktemp("warm") / "warm.yaml"
    path.write_text(SCENARIO.format(seed=0, tags="[]", by="60s"))
    assert run_scenario(path).passed


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """scenarios/ok.yaml passes; scenarios/sub/late.yaml (seed 42) misses its deadline."""
    _write(pytester, "scenarios/ok.yaml", tags="[smoke, workers-first]")
    _write(pytester, "scenarios/sub/late.yaml", seed=42, tags="[slow]", by="5s")
    _write(pytester, "manifests/not-a-scenario.yaml", by="5s")  # not under scenarios/: not collected
    return pytester


def test_one_item_per_scenario_file(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*PLUGIN, "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["scenarios/ok.yaml::ok", "scenarios/sub/late.yaml::late", "*2 tests collected*"]
    )
    result.stdout.no_fnmatch_line("*not-a-scenario*")


def test_passing_and_failing_scenarios(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "expect[0] happens: 'jobset Completed' happened at" in out
    assert "after the deadline 5.0s" in out
    assert "seed 42" in out
    assert "timeline" in out and "JobSet default/js" in out and "w-0  pods" in out
    result.stdout.fnmatch_lines(["FAILED scenarios/sub/late.yaml::late*"])
    assert "Traceback" not in out
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_tags_become_markers(suite: pytest.Pytester) -> None:
    slow = suite.runpytest(*PLUGIN, "-m", "slow", "--strict-markers")
    slow.assert_outcomes(failed=1, deselected=1)
    smoke = suite.runpytest(*PLUGIN, "-m", "smoke and not slow", "--strict-markers")
    smoke.assert_outcomes(passed=1, deselected=1)
    underscored = suite.runpytest(*PLUGIN, "-m", "workers_first", "--strict-markers")
    underscored.assert_outcomes(passed=1, deselected=1)
    as_written = suite.runpytest(*PLUGIN, "-m", "workers-first", "--strict-markers")
    as_written.assert_outcomes(passed=1, deselected=1)


def test_k_selects_by_file_name(suite: pytest.Pytester) -> None:
    suite.runpytest(*PLUGIN, "-k", "late").assert_outcomes(failed=1, deselected=1)
    suite.runpytest(*PLUGIN, "-k", "ok").assert_outcomes(passed=1, deselected=1)
    suite.runpytest(*PLUGIN, "-k", "not late").assert_outcomes(passed=1, deselected=1)


def test_a_broken_file_fails_its_item_with_one_line(pytester: pytest.Pytester) -> None:
    _write(pytester, "scenarios/ok.yaml")
    (pytester.path / "scenarios" / "broken.yaml").write_text("seed: 1\nsurprise: true\nexpect: []\n")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*scenarios/broken.yaml:2: surprise: unknown key 'surprise'*"])
    assert "Traceback" not in result.stdout.str()


def test_junit_output_carries_the_digest(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*PLUGIN, "-k", "ok", "--junitxml=report.xml")
    result.assert_outcomes(passed=1, deselected=1)
    xml = (suite.path / "report.xml").read_text()
    assert 'name="digest"' in xml and 'name="virtualEnd"' in xml
