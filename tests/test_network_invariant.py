"""The network invariant (``connectionOnlyToListeningReachablePod``): it holds on the real pod network,
and a network model broken on purpose (a SYN verdict that accepts a port nothing listens on, or a pod
reachable before its sandbox network is up) fails the run with the invariant's name, the virtual time
and both pods."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from fakecluster.network import network as network_module
from fakecluster.network.network import Network
from fakecluster.network.runs import PodNet, ProgramRun
from fakecluster.network.tcp import Outcome
from fakecluster.scenario.runner import run_scenario

NAME = "connectionOnlyToListeningReachablePod"

SCENARIO: dict[str, Any] = {
    "name": "clients dial a server that listens 5 s after its container starts",
    "seed": 3,
    "until": "5m",
    "cluster": {"network": {"reachableAfter": "2s"}},
    "pods": [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [7077], "startup": "5s"}},
        {
            "match": {"replicatedJob": "client"},
            "start": "1s",
            "program": {
                "connect": [{"replicatedJob": "server", "port": 7077}],
                "retry": {"interval": "1s"},
                "work": "10s",
            },
        },
    ],
    "jobset": {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "net"},
        "spec": {
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["client"]},
            "replicatedJobs": [
                {"name": "server", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "server", "image": "busybox:1.36", "command": ["serve"]}]}}}}},
                {"name": "client", "template": {"spec": {"completions": 2, "parallelism": 2, "template": {
                    "spec": {"containers": [{"name": "client", "image": "busybox:1.36",
                                             "command": ["dial"]}]}}}}},
            ],
        },
    },
    "expect": [
        {"order": ["all server pods Listening", "all client pods Connected"]},
        {"happens": "jobset Completed"},
    ],
}

VIOLATION = re.compile(
    rf"invariant {NAME} violated at t=(?P<t>[0-9.]+)s: default/(?P<client>net-client-0-\d-\w+) \([0-9.]+\) "
    r"connected to default/(?P<server>net-server-0-0-\w+) \([0-9.]+\) port 7077, (?P<why>.*)"
)


def _violations(failures: list[str]) -> list[re.Match[str]]:
    return [m for m in (VIOLATION.match(f) for f in failures) if m is not None]


def test_the_real_network_connects_only_to_listening_reachable_pods() -> None:
    result = run_scenario(copy.deepcopy(SCENARIO))
    assert result.passed, result.report


def _accept_any_port(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Network.judge

    def accepts_any_port(self: Network, src: PodNet, ip: str, port: int) -> tuple[Outcome, ProgramRun | None]:
        outcome, run = real(self, src, ip, port)
        dest = self._by_ip.get(ip)
        if outcome is Outcome.REFUSED and dest is not None and dest.run is not None:
            return Outcome.CONNECTED, dest.run  # the bug: a SYN to a closed port completes the handshake
        return outcome, run

    monkeypatch.setattr(network_module.Network, "judge", accepts_any_port)


def test_a_verdict_that_accepts_a_port_nothing_listens_on_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    _accept_any_port(monkeypatch)
    result = run_scenario(copy.deepcopy(SCENARIO))
    assert not result.passed
    found = _violations(result.failures)
    assert found, result.failures
    first = found[0]
    # the server's container starts at 0 s and its program listens only from 5 s on
    assert 2.0 <= float(first["t"]) < 5.0
    assert first["why"] == "which is not listening (program starting, listening on nothing)"
    assert result.report.startswith(first.group(0))  # the report leads with it, then the timeline
    assert "server" in result.report and "client" in result.report


def test_a_pod_reachable_before_its_sandbox_network_is_up_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network_module.Network, "reachable", lambda self, net: not net.stopped)
    scenario = copy.deepcopy(SCENARIO)
    scenario["cluster"]["network"]["reachableAfter"] = "20s"
    result = run_scenario(scenario)
    assert not result.passed
    found = _violations(result.failures)
    assert found, result.failures
    first = found[0]
    assert float(first["t"]) == 5.0  # the server listens at 5 s; its network is up only from 20 s
    assert first["why"].startswith("but the server pod is unreachable: its sandbox network is up only from "
                                   "t=20")


def test_only_the_invariant_catches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """With invariants off (``cluster.invariants: false``) the broken network passes every expectation:
    the clients connect early and finish early, which nothing else would notice."""
    _accept_any_port(monkeypatch)
    scenario = copy.deepcopy(SCENARIO)
    scenario["cluster"]["invariants"] = False
    scenario["expect"] = [{"happens": "jobset Completed"}]
    assert run_scenario(scenario).passed
