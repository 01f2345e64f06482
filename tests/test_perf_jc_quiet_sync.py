"""The Job controller's quiet-sync skip (fakecluster/controllers/job/job_controller.py, ``QuietSync``):
a sync it skips must be one the full ``syncJob`` would run without any effect.

Random Jobs (a table of specs: NonIndexed, Indexed, work queue, per-index back-off, pod failure
policy, deadline, OnFailure restarts, podReplacementPolicy Failed, suspend) on the hand-driven harness
of tests/test_job_controller.py, their pods moved at random (bound, running, ready or not, restarted,
finished, failed, deleted, relabelled, status rewritten without a change of class), the Jobs suspended,
resumed, and expectations left unsatisfied. Beside every skip the full sync runs on a client that
records every call, and must call nothing, queue nothing and change no controller state.
"""

from __future__ import annotations

import gc
import random
from typing import Any

import pytest

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.controllers.job import job_controller
from fakecluster.controllers.job.job_controller import JobController, QuietSync
from fakecluster.controllers.job.status import BackoffRecord
from fakecluster.controllers.job.sync import JobSync
from tests import test_job_controller
from tests.test_job_controller import NS, Harness

SPECS: list[dict[str, Any]] = [
    {"parallelism": 2, "completions": 3},
    {"parallelism": 3, "completions": 3, "completionMode": "Indexed", "backoffLimit": 2},
    {"parallelism": 2},
    {"parallelism": 3, "completions": 3, "completionMode": "Indexed", "backoffLimitPerIndex": 1,
     "maxFailedIndexes": 1},
    {"parallelism": 2, "completions": 2, "podFailurePolicy": {"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
    {"parallelism": 2, "completions": 4, "activeDeadlineSeconds": 40},
    {"parallelism": 2, "completions": 2, "backoffLimit": 3,
     "template_spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}},
    {"parallelism": 3, "completions": 3, "completionMode": "Indexed", "podReplacementPolicy": "Failed"},
    {"parallelism": 2, "completions": 2, "suspend": True},
]


class RecordingClient:
    """The controller's client, recording every call made through it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return recorded


class CheckedJobController(JobController):
    """Runs the full sync beside every skip and checks that it would have done nothing."""

    skips = 0

    def _still_quiet(self, quiet: QuietSync, job: Obj, backoff: BackoffRecord | None,
                     satisfied: bool) -> bool:
        if not super()._still_quiet(quiet, job, backoff, satisfied):
            return False
        before = self._state()
        client = RecordingClient(self._client)
        effects: list[Any] = []
        record = BackoffRecord() if backoff is None else backoff
        sync = JobSync(client, self._clock, job, record,  # type: ignore[arg-type]
                       save_backoff=effects.append, record_event=lambda *event: effects.append(event),
                       expectations=self._expectations, pod_views=self._pod_views)
        assert sync.run() is None
        assert client.calls == []
        assert effects == []
        assert self._state() == before
        assert sync.quiet
        CheckedJobController.skips += 1
        return True

    def _state(self) -> Any:
        expectations = {key: (exp.adds, list(exp.deletes), exp.since)
                        for key, exp in self._expectations._by_job.items()}
        views = {uid: (view.moves, len(view.written)) for uid, view in self._pod_views.by_uid.items()}
        return dict(self._backoff), expectations, views


def random_step(rng: random.Random, h: Harness, names: list[str]) -> None:
    """One random change to a Job's pods, or to a Job."""
    name = rng.choice(names)
    pods = h.pod_names(name)
    op = rng.random()
    try:
        conditions = (h.api.get("Job", NS, name).get("status") or {}).get("conditions") or ()
        if any(c["type"] in ("Complete", "Failed") for c in conditions) or op < 0.01:
            # A Job recreated under the same name (JobSet's restarts): another object, another uid.
            h.api.delete("Job", NS, name, propagation_policy="Background")
            h.create_job(name, **rng.choice(SPECS))
        elif op < 0.08:
            h.api.patch("Job", NS, name, {"spec": {"suspend": rng.random() < 0.5}})
        elif op < 0.12:
            h.jobs._expectations.expect_creations((NS, name), rng.randrange(1, 3))
        elif not pods:
            return
        elif op < 0.35:
            h.run_pod(rng.choice(pods), ready=rng.random() < 0.6, restarts=rng.randrange(2))
        elif op < 0.5:
            pod = rng.choice(pods)
            if not h.api.get("Pod", NS, pod)["spec"].get("nodeName"):
                h.server.bind(NS, pod, "node")
        elif op < 0.6:
            h.finish_pod(rng.choice(pods), exit_code=rng.choice([0, 0, 0, 1, 42]))
        elif op < 0.63:  # a failed pod's status rewritten: the failure policy may match it now
            failed = [p["metadata"]["name"] for p in h.pods(name) if p["status"].get("phase") == "Failed"]
            if failed:
                h.finish_pod(rng.choice(failed), exit_code=rng.choice([1, 42]))
        elif op < 0.65:
            h.api.delete("Pod", NS, rng.choice(pods))
        elif op < 0.8:
            label = {"metadata": {"labels": {"step": str(rng.randrange(9))}}}
            h.api.patch("Pod", NS, rng.choice(pods), label)
        else:  # a status write that changes no count: the kubelet's probes and pulls
            pod = rng.choice(pods)
            h.api.patch("Pod", NS, pod, {"status": {"message": str(rng.randrange(9))}}, subresource="status")
    except ApiError:
        pass  # a conflicting or invalid random write changes nothing


@pytest.mark.parametrize("seed", range(12))
def test_every_skipped_sync_would_have_done_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(test_job_controller, "JobController", CheckedJobController)
    rng = random.Random(seed)
    h = Harness(terminate_after=rng.choice([None, 2.0]))
    names = []
    for i, spec in enumerate(rng.sample(SPECS, 4)):
        names.append(f"j{i}")
        h.create_job(f"j{i}", **spec)
    CheckedJobController.skips = 0
    for _ in range(300):
        # now and then past the expectations' timeout (5 min)
        h.run_until(h.clock.now + (301.0 if rng.random() < 0.02 else rng.choice([0.2, 0.7, 1.3, 5.0])))
        for _ in range(rng.randrange(1, 3)):
            random_step(rng, h, names)
    h.run_until(h.clock.now + 120)
    assert CheckedJobController.skips > 10, CheckedJobController.skips
    assert isinstance(h.jobs, CheckedJobController)
    assert job_controller.QuietSync is QuietSync


def test_a_failed_pod_rewritten_to_match_the_failure_policy_is_not_skipped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pod's class stays (Failed, finalizer gone), only the pod object is new: the sync before read
    it (the failure policy's rules), so it was not quiet and the next one runs, and fails the Job."""
    monkeypatch.setattr(test_job_controller, "JobController", CheckedJobController)
    h = Harness()
    h.create_job("j", **SPECS[4])
    h.run_until(1)
    first, _ = h.pod_names("j")
    h.run_pod(first)
    h.run_until(3)
    h.finish_pod(first, exit_code=1)
    h.run_until(10)
    assert not h.api.get("Job", NS, "j")["status"].get("conditions")
    h.api.patch("Pod", NS, first, {"metadata": {"labels": {"step": "1"}}})
    h.run_until(15)
    h.finish_pod(first, exit_code=42)
    h.run_until(20)
    conditions = h.api.get("Job", NS, "j")["status"]["conditions"]
    assert [c["reason"] for c in conditions][:1] == ["PodFailurePolicy"]


def test_syncs_leave_no_cycle_behind() -> None:
    """The cyclic GC is off while a cluster runs (fakecluster/session.py), so a sync object caught in
    a reference cycle (say, a bound method of its own stored on it) would never be freed."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        h = Harness()
        h.create_job("j", **SPECS[1])
        h.run_until(2)
        h.run_all("j")
        h.run_until(5)
        for name in h.pod_names("j"):
            h.finish_pod(name)
        h.run_until(20)
        assert (h.status("j").get("succeeded") or 0) == 3
        assert not [obj for obj in gc.get_objects() if isinstance(obj, JobSync)]
    finally:
        if was_enabled:
            gc.enable()
