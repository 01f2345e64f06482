"""``benchmarks/network_cost.py`` and the run it compares against, ``scale.py --without-network``: the
ablation really leaves the network out (no EndpointSlice written, nothing indexed by the DNS server)
and nothing else, and the comparison runs end to end as whole processes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fakecluster.cluster import Cluster
from fakecluster.controllers.endpointslice import EndpointSliceController
from fakecluster.network.dns import DnsServer

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    """A benchmark script as a module, its folder on the path as when it runs (it imports its siblings,
    ``arguments``)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _service_and_ready_pod(cluster: Cluster) -> None:
    server = cluster.server
    server.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
                   "spec": {"clusterIP": "None", "selector": {"app": "a"}}})
    server.create({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}},
                   "spec": {"hostname": "p", "subdomain": "svc",
                            "containers": [{"name": "c", "image": "i"}]}})
    cluster.run(until=60)


def test_without_network_writes_no_slice_and_indexes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The ablation patches the two classes for the whole process: restored after the test.
    monkeypatch.setattr(EndpointSliceController, "__init__", EndpointSliceController.__init__)
    monkeypatch.setattr(DnsServer, "watch", DnsServer.watch)
    plain = Cluster(seed=1)
    _service_and_ready_pod(plain)
    assert plain.server.list("EndpointSlice", "default")
    assert plain.network.dns.answer("p.svc.default.svc.cluster.local") is not None

    _load("scale").without_network()
    ablated = Cluster(seed=1)
    _service_and_ready_pod(ablated)
    assert ablated.server.list("EndpointSlice", "default") == []
    assert ablated.network.dns.answer("p.svc.default.svc.cluster.local") is None
    pod = ablated.server.get("Pod", "default", "p")
    assert pod["status"]["phase"] == plain.server.get("Pod", "default", "p")["status"]["phase"] == "Running"


def test_the_comparison_runs_both_sides_as_whole_processes() -> None:
    network_cost = _load("network_cost")
    a, b, ratios = network_cost.compare(10, 1, False, *network_cost.COMPARISONS["network"])
    assert len(a.cpu) == len(b.cpu) == len(ratios) == 1
    assert a.cpu[0] > 0 and b.cpu[0] > 0
    assert ratios[0] == pytest.approx(a.cpu[0] / b.cpu[0])
    assert a.instructions is None and b.instructions is None


def test_scale_max_wall_seconds_is_each_runs_budget() -> None:
    """``--max-wall-seconds`` reaches the runner: a budget far below the run's length ends it at the first
    wall-clock look (4,096 events), which the default 120 s would not; ``network_cost.py --instructions``
    relies on it to count a 10,000-pod run under valgrind."""
    argv = [sys.executable, str(BENCHMARKS / "scale.py"), "--sizes", "1000", "--variant", "plain"]
    cut = subprocess.run([*argv, "--max-wall-seconds", "0.000001"], capture_output=True, text=True,
                         check=True)
    assert "budget exhausted after 4096 events" in cut.stdout
    assert "limit 1e-06 wall seconds" in cut.stdout
    whole = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert whole.stdout.rstrip().endswith(" ok")
