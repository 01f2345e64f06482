"""Each program verb (format 1.1 ``program:``) on the real kubelet, Job controller and JobSet controller:
listen, connect, retry (interval, backoff, maxInterval, timeout, attempts, giveUpAfter, exitCode), waitFor
(connected, peers, targetsWorking, timeout), work (duration, forever, untilDisconnected), ready, probes,
container restarts, per-phase jitter, and the load errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakecluster.network.probes import program_probe_succeeds
from tests.network_helpers import SERVER, events_of, jobset, play, steps, times

LISTEN = {"match": {"replicatedJob": "server"}, "program": {"listen": [8050]}}


def test_listen_records_listening_after_startup(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"},
                               "program": {"listen": [8050], "startup": "3s"}}])
    assert times(outcome, "server", "Running") == [0.0]
    assert times(outcome, "server", "Listening") == [3.0]


def test_refused_then_retry_interval_backoff_and_max_interval(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "startup": "20s"}},
        {"match": {"replicatedJob": "clients"}, "program": {
            "connect": [SERVER], "work": "1s",
            "retry": {"interval": "1s", "backoff": 2, "maxInterval": "4s"}}}],
        expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    refused = [t for t, what in steps(outcome, "clients") if what == "refused"]
    assert refused == [0.0, 1.0, 3.0, 7.0, 11.0, 15.0, 19.0]  # +1, +2, +4, then capped at 4
    assert times(outcome, "clients", "Connected") == [23.0]


def test_give_up_after_abandons_syns_in_flight_and_exits_with_the_retry_exit_code(tmp_path: Path) -> None:
    js = jobset(client_job={"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "w", "image": "x"}]}}})
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050]}},
        {"match": {"replicatedJob": "clients"}, "program": {
            "connect": [SERVER], "retry": {"giveUpAfter": "60s", "exitCode": 3}}}],
        cluster={"network": {"reachableAfter": "1h"}}, js=js, until="2m")
    assert times(outcome, "clients", "GaveUp") == [60.0]
    failed = [e for e in events_of(outcome, "clients") if e.event == "Failed"]
    assert failed[0].time == 60.0 and failed[0].detail == "exitCode=3"
    assert [t for t, what in steps(outcome, "clients") if what == "SYN lost"] == [0.0, 1.0, 3.0, 7.0, 15.0,
                                                                                 31.0]


def test_wait_for_peers_then_work_duration_and_until_disconnected_exits_zero(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"},
         "program": {"listen": [8050], "waitFor": {"peers": 2}, "work": "20s"}},
        {"match": {"replicatedJob": "clients", "podIndex": 1}, "start": "5s"},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "work": "untilDisconnected"}}],
        js=jobset(clients=2), expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    assert times(outcome, "server", "Working") == [5.0]
    assert times(outcome, "clients", "Succeeded") == [25.0, 25.0]


def test_until_disconnected_exits_with_disconnect_code_when_the_peer_did_not_finish(tmp_path: Path) -> None:
    js = jobset(client_job={"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "w", "image": "x"}]}}})
    outcome = play(tmp_path, [
        LISTEN,
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "work": "untilDisconnected", "disconnectExitCode": 7}}],
        js=js, until="1m", )
    assert not [e for e in events_of(outcome, "clients") if e.event == "Failed"]
    outcome = play(tmp_path, [
        LISTEN,
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "work": "untilDisconnected", "disconnectExitCode": 7}}],
        js=js, until="1m", name="killed")
    # nothing killed the server in the first run; now delete it and watch the client lose its peer
    body = (tmp_path / "killed.yaml").read_text().replace(
        "expect:", "actions:\n- at: 10s\n  deletePod: {pod: 'server[0/0]'}\nexpect:")
    (tmp_path / "killed.yaml").write_text(body)
    from fakecluster.scenario.runner import run_scenario

    outcome = run_scenario(tmp_path / "killed.yaml")
    failed = [e for e in events_of(outcome, "clients") if e.event == "Failed"]
    assert failed and failed[0].time == 10.0 and failed[0].detail == "exitCode=7"


def test_targets_working_is_a_rendezvous_barrier(tmp_path: Path) -> None:
    """PyTorch c10d: rank 0 starts its work when all ranks are connected; the others start theirs when
    rank 0 has."""
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"},
         "program": {"listen": [29500], "waitFor": {"peers": 3}, "work": "30s"}},
        {"match": {"replicatedJob": "clients", "podIndex": 2}, "pull": "8s"},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": ["js-server-0-0.js:29500"], "waitFor": "targetsWorking", "work": "30s"}}],
        js=jobset(clients=3), expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    assert sorted(times(outcome, "clients", "Connected")) == [0.0, 0.0, 8.0]
    assert times(outcome, "server", "Working") == [8.0]
    assert times(outcome, "clients", "Working") == [8.0, 8.0, 8.0]


def test_wait_for_timeout_exits_with_its_exit_code(tmp_path: Path) -> None:
    js = jobset(server_job={"template": {"spec": {"restartPolicy": "Never",
                                                  "containers": [{"name": "s", "image": "x"}]}}})
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"},
         "program": {"listen": [8050], "waitFor": {"peers": 5, "timeout": "30s", "exitCode": 4}}},
        {"match": {"replicatedJob": "clients"}, "program": {"connect": [SERVER]}}], js=js, until="1m")
    assert times(outcome, "server", "GaveUp") == [30.0]
    failed = [e for e in events_of(outcome, "server") if e.event == "Failed"]
    assert failed[0].time == 30.0 and failed[0].detail == "exitCode=4"


def test_connection_closed_before_work_goes_back_to_retrying(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "waitFor": {"peers": 2}}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "waitFor": "targetsWorking", "retry": {"interval": "500ms"}}}],
        until="40s", name="closing")
    body = (tmp_path / "closing.yaml").read_text().replace(
        "expect:", "actions:\n- at: 10s\n  deletePod: {pod: 'server[0/0]'}\nexpect:")
    (tmp_path / "closing.yaml").write_text(body)
    from fakecluster.scenario.runner import run_scenario

    outcome = run_scenario(tmp_path / "closing.yaml")
    seen = steps(outcome, "clients")
    assert (10.0, "closed") in seen
    assert (10.5, "NXDOMAIN") in seen  # retrying; the server's record went with its endpoint


def test_a_container_restart_restarts_the_program(tmp_path: Path) -> None:
    """restartPolicy OnFailure: the giving-up program's container restarts (kubelet back-off 0 s, then
    10 s) and each start runs the program afresh, until the server listens at 15 s."""
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "startup": "15s"}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "retry": {"attempts": 1}, "work": "1s"}}],
        js=jobset(client_job={"backoffLimit": 6}), expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    assert times(outcome, "clients", "GaveUp") == [0.0, 0.0, 10.0]
    assert times(outcome, "clients", "Connected") == [30.0]


def test_ready_follows_the_program_state(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "ready": "1s",
         "program": {"listen": [8050], "startup": "4s", "ready": "listening"}},
        {"match": {"replicatedJob": "clients"}, "program": {"connect": [SERVER], "ready": "connected"}}])
    assert times(outcome, "server", "Ready") == [4.0]  # program.ready beats the rule's ready
    assert times(outcome, "clients", "Ready") == [4.0]


def test_tcp_socket_readiness_probe_succeeds_at_the_first_tick_after_listening(tmp_path: Path) -> None:
    probe = {"tcpSocket": {"port": 8050}, "initialDelaySeconds": 2, "periodSeconds": 5}
    js = jobset(server_job={"template": {"spec": {"containers": [
        {"name": "s", "image": "x", "readinessProbe": probe}]}}})
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"},
                               "program": {"listen": [8050], "startup": "8s"}}], js=js)
    # the prober ticks every 5 s from admission (0 s: skipped, initialDelaySeconds 2), listening from 8
    assert times(outcome, "server", "Ready") == [10.0]
    assert program_probe_succeeds(probe, {}, [9999]) is False
    assert program_probe_succeeds(probe, {}, [8050]) is True
    exec_probe = {"exec": {"command": ["true"]}, "initialDelaySeconds": 3}
    assert program_probe_succeeds(exec_probe, {}, []) is None
    named = {"httpGet": {"port": "http"}}
    spec = {"ports": [{"name": "http", "containerPort": 8080}]}
    assert program_probe_succeeds(named, spec, [8080]) is True
    assert program_probe_succeeds({"httpGet": {"port": "metrics"}}, spec, [8080]) is False


def test_replicated_job_targets_expand_to_every_slot_and_exclude_self(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "clients"},
         "program": {"listen": [22], "work": "1s",
                     "connect": [{"replicatedJob": "clients", "port": 22, "excludeSelf": True}]}},
        LISTEN], js=jobset(clients=3), expect=[{"happens": "all clients pods Connected"}])
    assert outcome.passed, outcome.failures
    resolved = [e.detail for e in outcome.trace if e.kind == "Connect" and e.event == "resolved"
                and e.pod_index == 0]
    assert sorted({d.split()[1] for d in resolved}) == ["js-clients-0-1.js:22", "js-clients-0-2.js:22"]


def test_own_name_resolves_from_etc_hosts(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"},
         "program": {"listen": [8050], "connect": ["{jobset}-server-0-0.{subdomain}:8050"], "work": "1s"}}],
        cluster={"dns": {"propagation": "1h"}})
    assert times(outcome, "server", "Connected") == [0.0]
    assert any("(/etc/hosts)" in e.detail for e in outcome.trace if e.kind == "Connect")


def test_per_phase_jitter_jitters_only_the_named_delays(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "pull": "1s", "start": "1s",
                               "jitter": {"pull": "9s"}, "program": {"listen": [8050]}}])
    running = times(outcome, "server", "Running")[0]
    assert 2.0 <= running <= 11.0 and running != 2.0
    assert round(running * 1e6) == running * 1e6  # whole microseconds


def test_exit_and_program_in_one_rule_is_a_load_error(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "exit": {"after": "1s"},
                               "program": {"listen": [1]}}])
    assert not outcome.passed
    assert "one choice" in outcome.failures[0] and "pods[0].program" in outcome.failures[0]


def test_connected_milestone_without_connect_targets_is_a_load_error(tmp_path: Path) -> None:
    outcome = play(tmp_path, [LISTEN], expect=[{"happens": "all server pods Connected"}])
    assert not outcome.passed and "needs a program with connect targets" in outcome.failures[0]


def test_non_indexed_replicated_job_target_is_a_load_error(tmp_path: Path) -> None:
    js = jobset(server_job={"completionMode": "NonIndexed"})
    outcome = play(tmp_path, [{"match": {"replicatedJob": "clients"},
                               "program": {"connect": [{"replicatedJob": "server", "port": 1}]}}], js=js)
    assert not outcome.passed and "NonIndexed" in outcome.failures[0]


def test_bad_program_keys_are_load_errors_with_their_path(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "program": {"lisen": [1]}}])
    assert not outcome.passed and "lisen" in outcome.failures[0]
    outcome = play(tmp_path, [{"match": {"replicatedJob": "clients"},
                               "program": {"connect": ["{jobsett}-x:1"]}}], name="placeholder")
    assert not outcome.passed and "unknown placeholder {jobsett}" in outcome.failures[0]


def test_program_states_say_what_each_pod_waits_for(tmp_path: Path) -> None:
    """The read-only accessor the stuck diagnosis prints: state, ports, attempts, last error, peers."""
    from fakecluster.scenario.loader import load_scenario
    from fakecluster.scenario.runner import ScenarioRun
    from fakecluster.workload_plugin import load_plugin

    play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "waitFor": {"peers": 3}}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER, "js-nobody-0-0.js:1"], "retry": {"interval": "5s"}}}],
        until="12s", name="stuck")
    path = tmp_path / "stuck.yaml"
    run = ScenarioRun(load_scenario(path), path, load_plugin())
    seen: list[Any] = []

    def observe(cluster: Any, _plugin: Any) -> None:
        """Read the view at ``until``: after the run, the stuck look-ahead plays the cluster on."""
        def read() -> None:
            states = cluster.network.program_states()
            seen.append((states, {s.pod: cluster.network.program_state(s.namespace, s.pod) for s in states}))

        cluster.clock.call_at(12.0, read)

    run.observe = observe
    run.play()
    at_until, lookup = seen[0]
    states = {s.pod.split("-")[1]: s for s in at_until}
    server, client = states["server"], states["clients"]
    assert (server.state, server.listening, server.peers, server.waiting_for) == ("waiting", (8050,), 1,
                                                                                   "1/3 peers")
    assert client.state == "waiting" and client.waiting_for == "targets connected 1/2"
    reached, missing = client.targets
    assert reached == ("js-server-0-0.js:8050", 1, True, False, "")
    assert missing == ("js-nobody-0-0.js:1", 3, False, False, "NXDOMAIN")  # attempts at 0, 5, 10 s
    assert lookup[client.pod] == client and lookup[server.pod] == server
    assert run.cluster.network.program_state("default", "no-such-pod") is None
