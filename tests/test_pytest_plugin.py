"""The pytest plugin: every ``*.yaml`` under a ``scenarios/`` folder is one test item; failures show
the failed expectation, the seed and the timeline; tags become markers; ``-k`` selects by file name."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from scenario_files import jobset_manifest, pods_rule, replicated_job

from fakecluster.scenario.runner import run_scenario

pytest_plugins = ["pytester"]

# the scenario plugin comes from the package's pytest11 entry point, as in a user's project; hypothesis's
# plugin is kept out (it would re-import hypothesis in every inner run)
PLUGIN = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")

def scenario(*, seed: int, tags: str, by: str) -> str:
    return f"""\
seed: {seed}
tags: {tags}
{pods_rule()}jobset:
{jobset_manifest(replicated_job(pods=2), indent=2)}expect:
  - happens: jobset Completed
    by: {by}
"""


def _write(pytester: pytest.Pytester, path: str, *, seed: int = 1, tags: str = "[]", by: str = "60s") -> None:
    target = pytester.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(scenario(seed=seed, tags=tags, by=by))


@pytest.fixture(scope="module", autouse=True)
def _warm_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Play one scenario in this process before the inner runs.

    The inner runs are in-process, and pytester drops every module they import when they end; the
    process-wide freeze (``fakecluster.wallclock_freeze``) outlives them, and freezegun imported again
    under an
    active freeze breaks. Importing everything a run needs up front avoids that (and the re-imports).
    """
    path: Path = tmp_path_factory.mktemp("warm") / "warm.yaml"
    path.write_text(scenario(seed=0, tags="[]", by="60s"))
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


# ---------------------------------------------------------------- a user's layout: other folders, manifests

MANIFEST = jobset_manifest(replicated_job(pods=2))
BY_REFERENCE = """\
pods: [{match: {}, schedule: 1s, start: 1s, exit: {after: 10s}}]
jobset: {file: manifests/js.yaml}
expect:
  - happens: jobset Completed
    by: 60s
"""


@pytest.fixture
def user_repo(pytester: pytest.Pytester) -> pytest.Pytester:
    """regressions/ holds a scenario, a manifest it references and an inline scenario; scenarios/ one
    more (collected only by default)."""
    (pytester.path / "regressions" / "manifests").mkdir(parents=True)
    (pytester.path / "regressions" / "manifests" / "js.yaml").write_text(MANIFEST)
    (pytester.path / "regressions" / "by-reference.yaml").write_text(BY_REFERENCE)
    _write(pytester, "regressions/inline.yaml")
    _write(pytester, "scenarios/default-place.yaml")
    return pytester


def test_ini_option_chooses_the_scenario_folders(user_repo: pytest.Pytester) -> None:
    user_repo.makeini("[pytest]\nfakecluster_paths = regressions\n")
    result = user_repo.runpytest(*PLUGIN, "-v", "-rs")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*fakecluster: scenarios from *regressions*",
            "regressions/by-reference.yaml::by-reference PASSED*",
            "regressions/inline.yaml::inline PASSED*",
            "regressions/manifests/js.yaml::js SKIPPED*",
            "SKIPPED [[]1[]] regressions/manifests/js.yaml*: "
            "a Kubernetes manifest (kind JobSet), not a scenario",
        ]
    )
    result.stdout.no_fnmatch_line("*default-place*")


def test_command_line_option_wins_over_the_ini(user_repo: pytest.Pytester) -> None:
    user_repo.makeini("[pytest]\nfakecluster_paths = regressions\n")
    result = user_repo.runpytest(*PLUGIN, "--fakecluster-paths", "scenarios", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["scenarios/default-place.yaml::default-place", "*1 test collected*"])
    result.stdout.no_fnmatch_line("*regressions*")
    both = user_repo.runpytest(*PLUGIN, "--fakecluster-paths=scenarios,regressions/inline.yaml", "--co", "-q")
    both.stdout.fnmatch_lines(["*2 tests collected*"])


def test_without_configuration_only_scenarios_folders_are_collected(user_repo: pytest.Pytester) -> None:
    result = user_repo.runpytest(*PLUGIN, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["scenarios/default-place.yaml::default-place", "*1 test collected*"])


# ---------------------------------------------------------------- seeds and failure summaries


def test_seed_override_reaches_the_run_and_the_report(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*PLUGIN, "-k", "late", "--fakecluster-seed", "7", "--junitxml=r.xml")
    result.assert_outcomes(failed=1, deselected=1)
    assert "seed 7" in result.stdout.str() and "seed 42" not in result.stdout.str()
    assert '<property name="seed" value="7"' in (suite.path / "r.xml").read_text()


def test_a_sweep_runs_one_item_per_seed(suite: pytest.Pytester) -> None:
    result = suite.runpytest(*PLUGIN, "--fakecluster-seeds", "3", "-v", "--junitxml=r.xml")
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(
        [
            "scenarios/ok.yaml::ok[[]seed=1[]] PASSED*",
            "scenarios/ok.yaml::ok[[]seed=2[]] PASSED*",
            "scenarios/ok.yaml::ok[[]seed=3[]] PASSED*",
            "scenarios/sub/late.yaml::late[[]seed=42[]] FAILED*",
        ]
    )
    xml = (suite.path / "r.xml").read_text()
    assert all(f'name="seed" value="{s}"' in xml for s in (1, 2, 3, 42, 43, 44))
    from_seven = suite.runpytest(*PLUGIN, "--fakecluster-seeds=2", "--fakecluster-seed=7", "-k", "ok", "-v")
    from_seven.stdout.fnmatch_lines(["*ok[[]seed=7[]] PASSED*", "*ok[[]seed=8[]] PASSED*"])


def test_short_summary_shows_the_first_failed_expectation(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # room for the whole line
    result = suite.runpytest(*PLUGIN, "-rA")
    result.stdout.fnmatch_lines(
        [
            "*short test summary info*",
            "PASSED scenarios/ok.yaml::ok",
            "FAILED scenarios/sub/late.yaml::late - "
            "expect[[]0[]] happens: 'jobset Completed' happened at 13.0s, after the deadline 5.0s",
        ]
    )


def test_short_summary_survives_xdist(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = suite.runpytest_subprocess(*PLUGIN, "-n", "2", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED scenarios/sub/late.yaml::late - expect[[]0[]] happens: 'jobset Completed' happened*"]
    )
    assert "timeline" in result.stdout.str()


# ---------------------------------------------------------------- the fake_cluster fixture

FIXTURE_TESTS = '''
import pytest

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "js"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {
        "parallelism": 1, "completions": 1,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}}]},
}


def test_default_cluster_runs_a_jobset(fake_cluster):
    fake_cluster.apply(JOBSET)
    assert fake_cluster.run(milestone="all w pods Running") == 0.0
    assert len(fake_cluster.list("Pod")) == 2


@pytest.mark.fake_cluster(pods=[{"match": {}, "schedule": "1s", "start": "2s", "exit": {"after": "5s"}}])
def test_marker_configures_the_cluster(fake_cluster):
    fake_cluster.apply(JOBSET)
    assert fake_cluster.run(milestone="jobset Completed") >= 8.0
    print("SEED", fake_cluster.seed)


def test_each_test_gets_a_fresh_cluster(fake_cluster):
    assert fake_cluster.list("JobSet") == [] and fake_cluster.now == 0.0
'''


def test_fixture_gives_each_test_a_fresh_configured_cluster(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_fixture=FIXTURE_TESTS)
    result = pytester.runpytest(*PLUGIN, "-s", "--fakecluster-seed", "5")
    result.assert_outcomes(passed=3)
    assert "SEED 5" in result.stdout.str()


FREEZE_PROBE = """
import gc, json, pathlib
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with open(pathlib.Path(__file__).with_name("frozen.jsonl"), "a") as out:
        out.write(json.dumps({"item": item.name, "frozen": gc.get_freeze_count()}) + "\\n")
    yield
"""


def _frozen_counts(pytester: pytest.Pytester) -> list[int]:
    lines = (pytester.path / "frozen.jsonl").read_text().splitlines()
    return [json.loads(line)["frozen"] for line in lines]


def test_a_session_of_scenarios_only_runs_frozen_and_thaws_at_the_end(suite: pytest.Pytester) -> None:
    """What collection built is frozen while the scenarios run (no cyclic collection rescans it), and
    thawed when the session ends: the in-process pytest leaves this process as it found it."""
    suite.makeconftest(FREEZE_PROBE)
    before = gc.get_freeze_count()
    suite.runpytest(*PLUGIN).assert_outcomes(passed=1, failed=1)
    counts = _frozen_counts(suite)
    assert len(counts) == 2 and all(count > before + 10_000 for count in counts), counts
    assert gc.get_freeze_count() == before


def test_a_session_with_python_tests_too_leaves_the_collector_alone(suite: pytest.Pytester) -> None:
    suite.makeconftest(FREEZE_PROBE)
    suite.makepyfile(test_plain="def test_plain():\n    assert True\n")
    before = gc.get_freeze_count()
    suite.runpytest(*PLUGIN).assert_outcomes(passed=2, failed=1)
    assert _frozen_counts(suite) == [before] * 3
