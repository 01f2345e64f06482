"""The invariant monitor and ``noDeletedObjectWithoutFinalizers``: an API server that keeps a deleted,
finalizer-free Job is caught, and the stream-tracked check reports exactly what a scan of the whole
store at each caught-up moment reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.writes import WritePath
from fakecluster.invariants import kubernetes as kubernetes_module
from fakecluster.invariants.monitor import MAX_VIOLATIONS_PER_INVARIANT, BaseInvariant, ClusterView, Report
from fakecluster.scenario import runner
from fakecluster.scenario.runner import run_scenario

ROOT = Path(__file__).resolve().parents[1]
RESTARTS = ROOT / "scenarios/upstream/failure-policy-restartjobset-action.yaml"
NAME = "noDeletedObjectWithoutFinalizers"


class ScanForUnfinalized(BaseInvariant):
    """The reference: every stored Job, Service and Node, at every caught-up moment."""

    name = NAME

    def caught_up(self, view: ClusterView, report: Report) -> None:
        for kind in ("Job", "Service", "Node"):
            for obj in view.list(kind):
                meta = obj["metadata"]
                if meta.get("deletionTimestamp") and not meta.get("finalizers"):
                    report(f"{kind} {meta.get('namespace', '')}/{meta['name']}: deletionTimestamp set, no "
                           "finalizers, still stored")


def _keep_deleted_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = WritePath._should_remove

    def keep_jobs(self: WritePath, rtype: ResourceType, obj: dict[str, object]) -> bool:
        return False if obj.get("kind") == "Job" else real(self, rtype, obj)

    monkeypatch.setattr(WritePath, "_should_remove", keep_jobs)


def test_the_real_api_server_removes_them() -> None:
    assert run_scenario(RESTARTS).passed


def test_an_api_server_that_keeps_a_finalized_job_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep_deleted_jobs(monkeypatch)
    result = run_scenario(RESTARTS)
    ours = [f for f in result.failures if f.startswith(f"invariant {NAME} violated at t=")]
    assert ours, result.failures
    assert len(ours) == MAX_VIOLATIONS_PER_INVARIANT
    assert "Job default/restartjobset-action-example-" in ours[0]
    assert ours[0].endswith(": deletionTimestamp set, no finalizers, still stored")


def test_the_stream_tracked_check_reports_what_a_full_scan_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    _keep_deleted_jobs(monkeypatch)
    tracked = [f for f in run_scenario(RESTARTS).failures if f.startswith(f"invariant {NAME}")]
    real = kubernetes_module.kubernetes_invariants

    def with_the_scan() -> list[object]:
        return [ScanForUnfinalized() if inv.name == NAME else inv for inv in real()]

    monkeypatch.setattr(runner, "kubernetes_invariants", with_the_scan)
    scanned = [f for f in run_scenario(RESTARTS).failures if f.startswith(f"invariant {NAME}")]
    assert scanned == tracked
