"""Same-instant shuffling (``cluster.shuffleTies``, ``--shuffle-ties``): deterministic by seed, different
seeds give different same-instant orders, causes still precede their zero-delay effects, off changes
nothing, and the real controllers pass the scenario suite with it on.

The few scenarios listed in :data:`TIE_PINNED` fail under some shuffles for a reason in the file, not in
a controller: their expectations name the winner of a race between events of one instant (which of
several pods created together gets the last free node, whether a user action at 0 s comes before the
JobSet's first reconcile), which a real cluster also decides either way; one regression file is that
very race, pinned in its failing order.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from fakecluster import FakeCluster
from fakecluster.clock import Clock, TieShufflingClock
from fakecluster.explore.campaign import campaign
from fakecluster.scenario.runner import run_scenario
from fakecluster.scenario.trace import TraceEvent

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

TIE_PINNED = {
    "exclusive-placement/more-jobs-than-domains-one-leader-pending.yaml":
        "names the shard whose leader is parked; the three leaders are created in one instant",
    "startup-edge/unschedulable-pool-too-small-then-capacity-freed.yaml":
        "both JobSets are applied at 0 s and the file expects the eval pod to win a node first, then "
        "names the trainer pod that fits",
    "node-failure/backoff-limit-zero-lost-node-restarts-jobset.yaml":
        "names the worker pod that lands on the node that fails; both are scheduled in one instant",
    "node-failure/backoff-limit-zero-lost-pod-blocks-job-failure.yaml":
        "names the worker pod that lands on the node that fails; both are scheduled in one instant",
    "naming/foreign-job-with-the-same-name-job-creation-failed.yaml":
        "its `create` action at 0 s races the JobSet's first reconcile at 0 s",
    "regressions/pod-exiting-as-it-is-deleted-does-not-block-a-restart.yaml":
        "it is about a deletion and an exit in one instant; with the exit first, the delete finds no "
        "running pod",
    "network/headless-service-deleted-mid-run.yaml":
        "an executor's first DNS lookup and the EndpointSlice write that publishes the driver share an "
        "instant; the file bounds the connect by that instant",
}

SMALL = SCENARIOS / "upstream/simple-paralleljobs.yaml"


def _tie_order(clock_seed: int, count: int = 20) -> list[int]:
    clock = TieShufflingClock(random.Random(clock_seed))
    ran: list[int] = []
    for i in range(count):
        clock.call_at(1.0, ran.append, i)
    clock.run(10.0)
    return ran


def test_same_seed_same_order_and_other_seeds_other_orders() -> None:
    assert _tie_order(1) == _tie_order(1)
    orders = {tuple(_tie_order(seed)) for seed in range(5)}
    assert len(orders) == 5
    assert all(sorted(order) == list(range(20)) for order in orders)


def test_the_plain_clock_keeps_scheduling_order() -> None:
    clock = Clock()
    ran: list[int] = []
    for i in range(20):
        clock.call_at(1.0, ran.append, i)
    clock.run(10.0)
    assert ran == list(range(20))


@pytest.mark.parametrize("seed", range(20))
def test_a_zero_delay_effect_runs_after_everything_already_due(seed: int) -> None:
    """trio's batches: what an event schedules for its own instant runs after every event that was due
    at that instant before it ran; times still come in order."""
    clock = TieShufflingClock(random.Random(seed))
    ran: list[str] = []

    def cause(name: str) -> None:
        ran.append(name)
        clock.call_soon(ran.append, f"effect of {name}")

    for name in ("a", "b", "c"):
        clock.call_at(1.0, cause, name)
    clock.call_at(2.0, ran.append, "later")
    clock.call_at(0.5, ran.append, "earlier")
    clock.run(10.0)
    assert ran[0] == "earlier" and ran[-1] == "later"
    assert sorted(ran[1:4]) == ["a", "b", "c"]
    assert sorted(ran[4:7]) == ["effect of a", "effect of b", "effect of c"]


def test_advance_to_starts_a_fresh_batch() -> None:
    clock = TieShufflingClock(random.Random(0))
    ran: list[str] = []
    clock.call_at(1.0, ran.append, "due")
    clock.advance_to(1.0)
    clock.call_soon(ran.append, "scheduled at the instant")
    clock.run(1.0)
    assert ran == ["due", "scheduled at the instant"]


def _instants(trace: list[TraceEvent]) -> dict[float, list[tuple[object, ...]]]:
    """Per instant, what happened in order, by slot (pod names carry random suffixes)."""
    by_time: dict[float, list[tuple[object, ...]]] = defaultdict(list)
    for e in trace:
        by_time[e.time].append((e.kind, e.replicated_job, e.job_index, e.pod_index, e.attempt, e.event))
    return by_time


def test_a_shuffled_run_is_reproducible_and_another_shuffle_reorders_an_instant() -> None:
    first, again = run_scenario(SMALL, shuffle_ties=3), run_scenario(SMALL, shuffle_ties=3)
    assert first.passed and again.passed, first.report
    assert first.digest == again.digest
    others = [run_scenario(SMALL, shuffle_ties=s) for s in (4, 5, 6)]
    assert all(o.passed for o in others)
    assert len({first.digest, *(o.digest for o in others)}) > 1
    mine = _instants(first.trace)
    reordered = [
        t for o in others for t, events in _instants(o.trace).items()
        if t in mine and events != mine[t] and sorted(events, key=repr) == sorted(mine[t], key=repr)
    ]
    assert reordered, "no instant with the same events in another order"


def test_off_by_default_and_false_is_the_plain_clock() -> None:
    plain = run_scenario(SMALL)
    text = SMALL.read_text()
    assert "cluster:" not in text
    off = run_scenario({**_load(SMALL), "cluster": {"shuffleTies": False}})
    assert off.digest == plain.digest
    true = run_scenario({**_load(SMALL), "cluster": {"shuffleTies": True}})
    assert true.digest == run_scenario(SMALL, shuffle_ties=0).digest != plain.digest


def _load(path: Path) -> dict[str, object]:
    import yaml

    data: dict[str, object] = yaml.safe_load(path.read_text())
    data["jobset"] = {"file": str(path.parent / "../../manifests/upstream/simple-paralleljobs.yaml")}
    return data


def test_the_python_api_takes_it() -> None:
    assert isinstance(FakeCluster(shuffle_ties=2).cluster.clock, TieShufflingClock)
    assert type(FakeCluster().cluster.clock) is Clock


def test_a_bad_value_is_a_load_error() -> None:
    result = run_scenario({**_load(SMALL), "cluster": {"shuffleTies": "yes"}})
    assert not result.passed
    assert "cluster.shuffleTies" in result.report


SUITE = sorted(p.relative_to(SCENARIOS).as_posix() for p in SCENARIOS.rglob("*.yaml"))


@pytest.mark.parametrize("shuffle", [1, 2])
@pytest.mark.parametrize("scenario", [s for s in SUITE if s not in TIE_PINNED])
def test_the_real_controllers_pass_the_suite_with_ties_shuffled(scenario: str, shuffle: int) -> None:
    result = run_scenario(SCENARIOS / scenario, shuffle_ties=shuffle)
    assert result.passed, result.report


@pytest.mark.parametrize("scenario", sorted(TIE_PINNED))
def test_a_pinned_scenario_really_pins_a_same_instant_race(scenario: str) -> None:
    """The files left out above are left out for a reason that still holds: each exists, passes with the
    plain clock, and fails under one of the first eight shuffle seeds (else unpin it)."""
    assert scenario in SUITE
    assert run_scenario(SCENARIOS / scenario).passed
    verdicts = [run_scenario(SCENARIOS / scenario, shuffle_ties=shuffle).passed for shuffle in range(1, 9)]
    assert not all(verdicts), f"{scenario} passes with ties shuffled: {TIE_PINNED[scenario]} no longer holds"


def test_the_command_lines_take_it(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "fakecluster", "run", str(SMALL), "--shuffle-ties", "-q"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert run.returncode == 0 and "1 passed, 0 failed" in run.stdout, run.stdout + run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "fakecluster", "run", str(SMALL), "--shuffle-seed", "-1"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert bad.returncode == 2 and "--shuffle-seed must be 0 or more" in bad.stderr
    explore = subprocess.run(
        [sys.executable, "-m", "fakecluster", "explore", "--seeds", "25", "--workers", "1", "--shuffle-ties",
         "--out", str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert explore.returncode == 0, explore.stdout + explore.stderr
    assert "25 scenarios in 1 chunks, 0 findings" in explore.stdout


def test_a_shuffled_campaign_is_deterministic_and_differs_from_the_plain_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKECLUSTER_CHECK_SNAPSHOTS", raising=False)
    shuffled = campaign(25, base_seed=9, shuffle_ties=True)
    assert shuffled.findings == [], [f.failures for f in shuffled.findings]
    assert campaign(25, base_seed=9, shuffle_ties=True).fingerprint == shuffled.fingerprint
    assert campaign(25, base_seed=9).fingerprint != shuffled.fingerprint
