"""``sweep`` and ``distribution`` (scenario format 1.1): per-seed runs equal single-seed files, the
figures (population sd, median of an even count, modes), the histogram, failures naming seeds, and the
``--json`` record."""

from __future__ import annotations

import copy
import hashlib
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml
from scenario_files import jobset_object, rjob_object

from fakecluster.cli import main
from fakecluster.scenario.errors import ScenarioError
from fakecluster.scenario.format_v11 import Distribution
from fakecluster.scenario.loader import load_scenario
from fakecluster.scenario.runner import run_scenario
from fakecluster.scenario.sweep import figures, histogram, judge_distribution, sweep_digest

JOBSET: dict[str, Any] = jobset_object(rjob_object(parallelism=2, completions=2))
PODS = [{"match": {}, "pull": "2s", "jitter": "2s", "exit": {"after": "5s"}}]


def write(tmp_path: Path, expect: list[dict[str, Any]], name: str = "s.yaml", **fields: Any) -> Path:
    data: dict[str, Any] = {"seed": 100, "sweep": {"seeds": 20}, "pods": copy.deepcopy(PODS)}
    data["jobset"] = copy.deepcopy(JOBSET)
    data.update(fields)
    data["expect"] = expect
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_figures_use_population_sd_and_the_mean_of_the_middle_two() -> None:
    values = [12.0, 13.0, 42.0, 11.0, 41.5, 12.5]
    f = figures(values, mode_gap=5.0)
    assert f.n == 6
    assert f.mean == pytest.approx(statistics.fmean(values))
    assert f.sd == pytest.approx(statistics.pstdev(values))
    assert f.median == pytest.approx((12.5 + 13.0) / 2)
    assert (f.min, f.max) == (11.0, 42.0)
    assert [(m.count, m.low, m.high) for m in f.modes] == [(4, 11.0, 13.0), (2, 41.5, 42.0)]
    assert len(figures(values, mode_gap=30.0).modes) == 1


def test_modes_have_a_median_and_the_slow_mode_offset_is_the_last_minus_the_first() -> None:
    f = figures([12.0, 13.0, 42.0, 11.0, 41.5, 12.5, 22.0], mode_gap=5.0)
    assert [m.median for m in f.modes] == [12.25, 22.0, 41.75]
    assert f.slow_mode_offset == pytest.approx(41.75 - 12.25)
    assert figures([12.0, 13.0, 14.0], mode_gap=5.0).slow_mode_offset == 0.0
    record = f.record()
    assert record["modes"][0] == {"count": 4, "min": 11.0, "max": 13.0, "median": 12.25}
    assert record["slowModeOffset"] == 29.5
    assert "slow mode +29.5s" in f.line()


def test_slow_mode_offset_bounds_the_distance_between_the_fast_and_the_slow_mode() -> None:
    runs: dict[int, float | None] = dict(enumerate([12.0, 12.5, 13.0, 22.1, 22.4, 12.2]))

    def judged(**spec: Any) -> list[str]:
        distribution = Distribution.model_validate({"of": "jobset Completed", **spec})
        return judge_distribution(1, distribution, runs).failures

    assert judged(slowModeOffset={"min": "9s", "max": "11s"}) == []  # 22.25 - 12.35
    (failure,) = judged(slowModeOffset={"min": "29s"})
    assert failure == ("expect[1] distribution of jobset Completed: slow mode offset 9.9s, expected at least"
                       " 29.0s (modes: 4 in 12.0s-13.0s; 2 in 22.1s-22.4s)")  # fmt: skip
    (failure,) = judged(slowModeOffset={"min": "1s"}, modeGap="1m")  # one mode: offset 0
    assert "slow mode offset 0.0s, expected at least 1.0s" in failure


def test_the_slow_mode_offset_of_a_sweep_is_in_its_json_record(tmp_path: Path) -> None:
    dist = {"distribution": {"of": "jobset Completed", "slowModeOffset": {"max": "10s"}}}
    outcome = run_scenario(write(tmp_path, [dist]))
    assert outcome.passed, outcome.report
    assert outcome.sweep is not None
    (record,) = outcome.sweep.record()["distributions"]
    assert record["slowModeOffset"] == round(record["modes"][-1]["median"] - record["modes"][0]["median"], 6)


def test_histogram_has_one_row_per_bin_and_counts_every_value() -> None:
    rows = histogram([1.0, 2.0, 2.0, 10.0], bins=3)
    assert len(rows) == 3
    assert [int(r.split()[-1]) for r in rows] == [3, 0, 1]
    assert histogram([5.0, 5.0]) == ["     5.0s  ## 2"]


def test_each_run_is_the_file_with_that_seed_and_no_sweep(tmp_path: Path) -> None:
    swept = run_scenario(write(tmp_path, [{"happens": "jobset Completed"}]))
    assert swept.passed, swept.report
    assert swept.sweep is not None
    assert swept.sweep.seeds == list(range(100, 120))
    digests = [r.digest for r in swept.sweep.runs]
    assert len(set(digests)) > 1  # the jitter really differs per seed
    for i in (0, 7, 19):
        single = write(tmp_path, [{"happens": "jobset Completed"}], name=f"single-{i}.yaml", seed=100 + i)
        data = yaml.safe_load(single.read_text())
        del data["sweep"]
        single.write_text(yaml.safe_dump(data))
        assert run_scenario(single).digest == digests[i]
    assert swept.digest == hashlib.sha256("".join(digests).encode()).hexdigest() == sweep_digest(digests)
    assert swept.virtual_end == max(r.virtual_end for r in swept.sweep.runs)


def test_distribution_bounds_and_slow_fraction(tmp_path: Path) -> None:
    ok = {
        "distribution": {
            "of": "jobset Completed",
            "mean": {"min": "8s", "max": "14s"},
            "sd": {"max": "4s"},
            "min": {"min": "8s"},
            "max": {"max": "17s"},
            "median": {"min": "8s"},
            "modes": {"max": 2},
            "slow": {"above": "30s", "fraction": {"max": 0}},
        }
    }
    outcome = run_scenario(write(tmp_path, [ok]))
    assert outcome.passed, outcome.report
    bad = {"distribution": {"of": "jobset Completed", "mean": {"max": "5s"},
                            "slow": {"above": "10s", "fraction": {"max": 0}}}}  # fmt: skip
    outcome = run_scenario(write(tmp_path, [bad]))
    assert not outcome.passed
    assert any(
        "distribution of jobset Completed: mean" in f and "expected at most 5.0s" in f
        for f in outcome.failures
    )
    assert any("of runs above 10.0s, expected at most 0%" in f for f in outcome.failures)


def test_a_span_distribution_measures_from_one_milestone_to_another(tmp_path: Path) -> None:
    span = {"distribution": {"of": {"from": "all w pods Running", "to": "all w pods Succeeded"},
                             "min": {"min": "5s"}, "max": {"max": "5s"}}}  # fmt: skip
    pods = [{"match": {}, "pull": "2s", "exit": {"after": "5s"}}]  # no jitter: every span is 5 s
    outcome = run_scenario(write(tmp_path, [span], pods=pods))
    assert outcome.passed, outcome.report
    assert outcome.sweep is not None
    assert set(outcome.sweep.distributions[0].values.values()) == {5.0}


def test_a_milestone_missing_in_some_runs_names_the_seeds(tmp_path: Path) -> None:
    dist = {"distribution": {"of": "all w pods Failed", "mean": {"max": "1h"}}}
    outcome = run_scenario(write(tmp_path, [dist], sweep={"seeds": 3}))
    assert outcome.failures == [
        "expect[0] distribution of all w pods Failed: never happened in seeds 100, 101, 102"
    ]


def test_an_ordinary_expectation_failing_in_one_seed_names_it(tmp_path: Path) -> None:
    outcome = run_scenario(write(tmp_path, [{"happens": "jobset Completed", "by": "12s"}]))
    assert not outcome.passed
    assert all(f.startswith("seed 1") and "after the deadline 12.0s" in f for f in outcome.failures)
    assert outcome.sweep is not None
    failed = [r.seed for r in outcome.sweep.runs if not r.passed]
    assert [f.split(":")[0] for f in outcome.failures] == [f"seed {s}" for s in failed]


def test_json_record_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = {"distribution": {"of": "jobset Completed", "mean": {"max": "1h"}}}
    path = write(tmp_path, [{"happens": "jobset Completed"}, dist])
    out = tmp_path / "r.json"
    assert main(["run", str(path), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "sweep: 20 seeds (100..119), 20 passed" in printed
    assert "n 20, mean" in printed and "#" in printed
    (record,) = json.loads(out.read_text())
    assert {"path", "passed", "failures", "virtualEnd", "digest"} <= set(record)
    assert record["seeds"] == list(range(100, 120))
    assert len(record["digests"]) == 20 and [r["digest"] for r in record["runs"]] == record["digests"]
    assert record["digest"] == sweep_digest(record["digests"])
    (figs,) = record["distributions"]
    assert figs["n"] == 20 and set(figs) >= {"mean", "sd", "min", "median", "max", "modes", "values"}
    assert figs["min"] <= figs["median"] <= figs["max"]


def test_a_twenty_seed_sweep_of_a_small_scenario_is_fast(tmp_path: Path) -> None:
    outcome = run_scenario(write(tmp_path, [{"happens": "jobset Completed"}]))
    assert outcome.passed
    assert outcome.wall_seconds < 2.0  # typically ~0.3 s; generous for a loaded CI machine


@pytest.mark.parametrize(
    ("sweep", "message"),
    [({"seeds": 0}, "must be >= 1"), ({"seed": 3}, "missing required key 'seeds'"),
     ({"seeds": "20"}, "expected an integer")],
)  # fmt: skip
def test_bad_sweep_is_a_load_error(tmp_path: Path, sweep: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=r"sweep"):
        load_scenario(write(tmp_path, [{"happens": "jobset Completed"}], sweep=sweep))
    try:
        load_scenario(write(tmp_path, [{"happens": "jobset Completed"}], sweep=sweep))
    except ScenarioError as err:
        assert message in str(err)


def test_bad_distribution_is_a_load_error(tmp_path: Path) -> None:
    dist = {"distribution": {"of": "jobset Completed", "mean": {"min": "5s", "max": "1s"}}}
    with pytest.raises(ScenarioError, match=r"expect\[0\]\.distribution\.mean\.max: 'max' is smaller"):
        load_scenario(write(tmp_path, [dist]))
    dist = {"distribution": {"of": "jobset Completed", "man": {"min": "5s"}}}
    with pytest.raises(ScenarioError, match=r"unknown key 'man' \(did you mean 'mean'\?\)"):
        load_scenario(write(tmp_path, [dist]))
    dist = {"distribution": {"of": "all x pods Ready", "mean": {"min": "5s"}}}
    outcome = run_scenario(write(tmp_path, [dist]))
    assert (
        "expect[0].distribution.of" in outcome.failures[0] and "no replicated job 'x'" in outcome.failures[0]
    )


def test_a_slow_mode_offset_needs_a_bound(tmp_path: Path) -> None:
    dist = {"distribution": {"of": "jobset Completed", "slowModeOffset": {}}}
    with pytest.raises(ScenarioError, match=r"distribution\.slowModeOffset: give min, max or both"):
        load_scenario(write(tmp_path, [dist]))


def test_a_slow_fraction_outside_zero_to_one_is_a_load_error(tmp_path: Path) -> None:
    dist = {"distribution": {"of": "jobset Completed", "slow": {"above": "3s", "fraction": {"max": 2}}}}
    with pytest.raises(
        ScenarioError, match=r"distribution\.slow\.fraction\.max: must be within \[0, 1\], got 2"
    ):
        load_scenario(write(tmp_path, [dist]))


def test_a_load_error_found_when_playing_is_reported_once_not_per_seed(tmp_path: Path) -> None:
    outcome = run_scenario(write(tmp_path, [{"final": {"jobset": {"status": {"restart": 0}}}}]))
    assert not outcome.passed
    (message,) = outcome.failures
    assert "unknown key 'restart' for kind JobSet (did you mean 'restarts'?)" in message
    assert not message.startswith("seed ")
