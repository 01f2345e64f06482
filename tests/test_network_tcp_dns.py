"""The SYN schedule, reachability and the DNS server and caches, unit by unit and through the format's
worked examples (``scenario-format-1.1.md``, "Worked examples")."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakecluster.api.watch import WatchEvent
from fakecluster.clock import Clock
from fakecluster.network.config import DnsConfig
from fakecluster.network.dns import DnsCache, DnsServer, Resolver, qualify
from fakecluster.network.tcp import connect_deadline, syn_offsets
from tests.network_helpers import SERVER, play, steps, times


# ---------------------------------------------------------------- the SYN schedule
def test_kernel_syn_schedule_with_six_retries() -> None:
    assert syn_offsets(6) == (0, 1, 3, 7, 15, 31, 63)
    assert syn_offsets(6) is syn_offsets(6)  # one tuple per setting, kept by every connect attempt
    assert connect_deadline(6) == 127


@pytest.mark.parametrize(("retries", "deadline"), [(0, 1), (1, 3), (2, 7), (3, 15), (8, 511)])
def test_syn_schedule_in_general(retries: int, deadline: float) -> None:
    assert len(syn_offsets(retries)) == retries + 1
    assert connect_deadline(retries) == deadline == 2 ** (retries + 1) - 1


def test_timeout_cuts_the_schedule_and_a_syn_due_at_the_timeout_is_not_sent() -> None:
    assert syn_offsets(6, timeout=2) == (0, 1)
    assert syn_offsets(6, timeout=3) == (0, 1)
    assert syn_offsets(6, timeout=3.5) == (0, 1, 3)
    assert connect_deadline(6, timeout=5) == 5
    assert connect_deadline(6, timeout=500) == 127


# ---------------------------------------------------------------- DNS unit
def _slice(name: str, endpoints: list[tuple[str, str | None, bool]], service: str = "svc") -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"kubernetes.io/service-name": service}},
            "endpoints": [{"addresses": [ip], "conditions": {"ready": ready},
                           **({"hostname": host} if host else {}), "targetRef": {"uid": f"u-{ip}"}}
                          for ip, host, ready in endpoints]}


def test_records_answer_ready_endpoints_by_hostname_and_by_service_in_order() -> None:
    published: list[tuple[str, str, str]] = []
    server = DnsServer(Clock(), 0.0, lambda *a: published.append(a))
    server.apply("ADDED", _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.2", "b", False),
                                        ("10.0.0.3", "a", True)]))
    server.apply("ADDED", _slice("s2", [("10.0.0.4", None, True)]))
    assert server.answer("a.svc.ns.svc.cluster.local") == ("10.0.0.1", "10.0.0.3")
    assert server.answer("b.svc.ns.svc.cluster.local") is None  # not ready
    assert server.answer("svc.ns.svc.cluster.local") == ("10.0.0.1", "10.0.0.3", "10.0.0.4")
    assert server.answer("nope.ns.svc.cluster.local") is None
    assert [p[1] for p in published] == ["a.svc.ns.svc.cluster.local"] * 2
    server.apply("DELETED", _slice("s1", []))
    assert server.answer("a.svc.ns.svc.cluster.local") is None
    assert server.answer("svc.ns.svc.cluster.local") == ("10.0.0.4",)


def test_propagation_delays_what_the_server_answers() -> None:
    clock = Clock()
    server = DnsServer(clock, 2.0)

    server.watch(WatchEvent("ADDED", "EndpointSlice", _slice("s1", [("10.0.0.1", "a", True)]), None))
    clock.run(1.999)
    assert server.answer("a.svc.ns.svc.cluster.local") is None
    clock.run(2.0)
    assert server.answer("a.svc.ns.svc.cluster.local") == ("10.0.0.1",)


def test_cache_reuses_answers_while_less_than_ttl_has_passed_and_refetches_at_exactly_ttl() -> None:
    server = DnsServer(Clock(), 0.0)
    cache = DnsCache(positive_ttl=30.0, negative_ttl=5.0)
    name = "a.svc.ns.svc.cluster.local"
    assert cache.lookup(name, 1.0, server) == (None, False)
    server.apply("ADDED", _slice("s1", [("10.0.0.1", "a", True)]))
    assert cache.lookup(name, 5.999999, server) == (None, True)  # negative entry still live
    assert cache.lookup(name, 6.0, server) == (("10.0.0.1",), False)  # exactly 1 + 5: fetched afresh
    server.apply("MODIFIED", _slice("s1", [("10.0.0.9", "a", True)]))
    assert cache.lookup(name, 35.999, server) == (("10.0.0.1",), True)  # whatever changed meanwhile
    assert cache.lookup(name, 36.0, server) == (("10.0.0.9",), False)


@pytest.mark.parametrize(("profile", "mode", "positive", "negative"), [
    ("kubeadm", "none", 0.0, 0.0), ("kubeadm-1.31", "cluster", 30.0, 30.0), ("nodelocal", "node", 30.0, 5.0)])
def test_profiles(profile: str, mode: str, positive: float, negative: float) -> None:
    assert DnsConfig(profile=profile).effective() == (mode, positive, negative)  # type: ignore[arg-type]


def test_overrides_beat_the_profile() -> None:
    assert DnsConfig(profile="nodelocal", negative_ttl=1.0).effective() == ("node", 30.0, 1.0)
    assert DnsConfig(profile="kubeadm", cache="cluster").effective() == ("cluster", 30.0, 30.0)
    assert DnsConfig(profile="kubeadm-1.31", cache="none").effective()[0] == "none"


def test_node_cache_is_per_node_and_cluster_cache_is_shared() -> None:
    clock = Clock()
    server = DnsServer(clock, 0.0)
    name = "a.svc.ns.svc.cluster.local"
    node = Resolver(clock, server, DnsConfig(profile="nodelocal"))
    cluster = Resolver(clock, server, DnsConfig(profile="kubeadm-1.31"))
    node.resolve(name, "n1")
    cluster.resolve(name, "n1")
    server.apply("ADDED", _slice("s1", [("10.0.0.1", "a", True)]))
    assert node.resolve(name, "n1") == (None, True)
    assert node.resolve(name, "n2") == (("10.0.0.1",), False)
    assert cluster.resolve(name, "n2") == (None, True)
    none = Resolver(clock, server, DnsConfig())
    assert none.resolve(name, "n1") == (("10.0.0.1",), False)


def test_search_path() -> None:
    assert qualify("js-0.js", "team") == "js-0.js.team.svc.cluster.local"
    assert qualify("x.other.svc.cluster.local", "team") == "x.other.svc.cluster.local"
    assert qualify("svc", "default") == "svc.default.svc.cluster.local"


# ---------------------------------------------------------------- worked examples, end to end
def _lost_syns(tmp_path: Path, retry: dict | None = None, syn_loss: str | None = None) -> list[float]:
    client: dict = {"startup": "4s", "connect": [SERVER], "work": "5s"}
    if retry:
        client["retry"] = retry
    network = {"reachableAfter": "10s", **({"synLoss": syn_loss} if syn_loss else {})}
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "program": {"listen": [8050]}},
                              {"match": {"replicatedJob": "clients"}, "program": client}],
                   cluster={"network": network}, expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    return [t for t, what in steps(outcome, "clients") if what == "SYN lost"] + times(outcome, "clients",
                                                                                      "Connected")


def test_worked_example_1_lost_syns_follow_the_kernel(tmp_path: Path) -> None:
    assert _lost_syns(tmp_path) == [4.0, 5.0, 7.0, 11.0]


def test_worked_example_1_with_a_connect_timeout(tmp_path: Path) -> None:
    assert _lost_syns(tmp_path, {"timeout": "2s", "interval": "500ms"}) == [4.0, 5.0, 6.5, 7.5, 9.0, 10.0]


def test_per_packet_is_the_default_syn_loss(tmp_path: Path) -> None:
    assert _lost_syns(tmp_path, syn_loss="perPacket") == _lost_syns(tmp_path) == [4.0, 5.0, 7.0, 11.0]


def test_per_connection_a_lost_first_syn_loses_every_retransmission_until_etimedout(tmp_path: Path) -> None:
    """Worked example 1 on a ``perConnection`` path: the retransmission at 11 s would find the server
    reachable, but it is the same flow as the SYN lost at 4 s; the kernel gives up at 4 + 127 s and the
    next attempt, 1 s later (the default interval), is a new connect and connects."""
    assert _lost_syns(tmp_path, syn_loss="perConnection") == [4.0, 5.0, 7.0, 11.0, 19.0, 35.0, 67.0, 132.0]


def test_per_connection_with_a_connect_timeout_the_next_attempt_is_judged_afresh(tmp_path: Path) -> None:
    """Worked example 1 with ``retry: {timeout: 2s, interval: 500ms}``: attempts at 4, 6.5 and 9 lose their
    first SYN (the server answers from 10 s), so their retransmissions at 5, 7.5 and 10 are lost too
    (10 s included, though the server then answers); the attempt at 11.5 connects at once."""
    retry = {"timeout": "2s", "interval": "500ms"}
    assert _lost_syns(tmp_path, retry, "perConnection") == [4.0, 5.0, 6.5, 7.5, 9.0, 10.0, 11.5]
    assert _lost_syns(tmp_path, retry)[-1] == 10.0  # per packet: the SYN at 10 s connects


def test_per_connection_leaves_a_first_syn_that_connects_or_is_refused_alone(tmp_path: Path) -> None:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"startup": "2s", "listen": [8050]}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "retry": {"interval": "500ms"}, "work": "1s"}}],
        cluster={"network": {"synLoss": "perConnection"}}, expect=[{"happens": "jobset Completed"}])
    assert outcome.passed, outcome.failures
    seen = steps(outcome, "clients")
    assert [t for t, what in seen if what == "refused"] == [0.0, 0.5, 1.0, 1.5]
    assert times(outcome, "clients", "Connected") == [2.0]


def test_syn_loss_is_checked_when_the_file_loads(tmp_path: Path) -> None:
    from fakecluster.scenario.errors import ScenarioError
    from fakecluster.scenario.loader import load_scenario

    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ncluster:\n  network:\n    synLoss: perFlow\njobset: {}\nexpect: []\n")
    with pytest.raises(ScenarioError, match=r"cluster\.network\.synLoss: .*'perPacket' or 'perConnection'"):
        load_scenario(path)


def _negative_caching(tmp_path: Path, profile: str) -> tuple[list[float], list[tuple[float, str]]]:
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "schedule": "3.5s", "program": {"listen": [8050]}},
        {"match": {"replicatedJob": "clients"},
         "program": {"startup": "1s", "connect": [SERVER], "retry": {"interval": "1s"}, "work": "1s"}}],
        cluster={"dns": {"profile": profile}}, expect=[{"happens": "jobset Completed"}], name=profile)
    assert outcome.passed, outcome.failures
    return times(outcome, "clients", "Connected"), steps(outcome, "clients")


def test_worked_example_2_nodelocal_caches_the_nxdomain_for_5s(tmp_path: Path) -> None:
    connected, seen = _negative_caching(tmp_path, "nodelocal")
    assert connected == [6.0]
    assert [t for t, what in seen if what == "NXDOMAIN"] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_worked_example_2_kubeadm_does_not_cache(tmp_path: Path) -> None:
    connected, _ = _negative_caching(tmp_path, "kubeadm")
    assert connected == [4.0]


def test_kubeadm_131_caches_the_nxdomain_for_30s(tmp_path: Path) -> None:
    connected, _ = _negative_caching(tmp_path, "kubeadm-1.31")
    assert connected == [31.0]


def test_worked_example_3_giving_up_fails_the_container_and_the_job_backs_off(tmp_path: Path) -> None:
    from tests.network_helpers import jobset

    js = jobset(client_job={"backoffLimit": 3, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "launcher", "image": "mpi"}]}}})
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [22]}},
        {"match": {"replicatedJob": "clients"}, "program": {"connect": [SERVER], "retry": {"attempts": 1}}}],
        js=js, until="25s")
    gave_up = times(outcome, "clients", "GaveUp")
    failed = times(outcome, "clients", "Failed")
    created = times(outcome, "clients", "Created")
    assert gave_up[:2] == failed[:2] == [0.0, 10.0]
    assert created[:2] == [0.0, 10.0]  # the Job controller's 10 s back-off, then 20 s
    refused = [what for _, what in steps(outcome, "clients")]
    assert refused[:2] == ["resolved", "refused"]


def test_resolvable_when_the_record_is_published(tmp_path: Path) -> None:
    outcome = play(tmp_path, [{"match": {"replicatedJob": "server"}, "program": {"listen": [8050]}},
                              {"match": {"replicatedJob": "clients"}, "ready": "5s", "exit": "never"}],
                   js=__import__("tests.network_helpers", fromlist=["jobset"]).jobset(
                       network={"enableDNSHostnames": True, "publishNotReadyAddresses": False}),
                   cluster={"dns": {"propagation": "2s"}, "latency": {"endpointSlice": "1s"}})
    assert times(outcome, "server", "Resolvable") == [3.0]  # Ready at 0, slice at 1, DNS at 3
    assert times(outcome, "clients", "Resolvable") == [8.0]  # Ready at 5, slice at 6, DNS at 8


def test_durations_and_program_times_are_whole_microseconds(tmp_path: Path) -> None:
    """Format 1.1 "Time": durations are rounded to the microsecond when read, and thirty retries of
    100 ms after a first attempt at 0 land exactly on 3 s (no float drift)."""
    from fakecluster.scenario.durations import parse_duration

    assert parse_duration("1.0000006s") == 1.000001
    assert parse_duration(2.00000049) == 2.0
    outcome = play(tmp_path, [
        {"match": {"replicatedJob": "server"}, "program": {"listen": [8050], "startup": "3s"}},
        {"match": {"replicatedJob": "clients"},
         "program": {"connect": [SERVER], "retry": {"interval": "100ms"}}}])
    refused = [t for t, what in steps(outcome, "clients") if what == "refused"]
    assert len(refused) == 30 and refused[-1] == 2.9
    assert times(outcome, "clients", "Connected") == [3.0]


def test_a_hostname_answers_by_slice_then_first_sight_and_a_reindexed_endpoint_keeps_its_place() -> None:
    server = DnsServer(Clock(), 0.0)
    server.apply("ADDED", _slice("s1", [("10.0.0.1", "a", True)]))
    server.apply("ADDED", _slice("s2", [("10.0.0.2", "a", True)]))
    server.apply("MODIFIED", _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.3", "a", True)]))
    name = "a.svc.ns.svc.cluster.local"
    assert server.answer(name) == ("10.0.0.1", "10.0.0.3", "10.0.0.2")
    endpoints = _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.3", "a", True)])["endpoints"]
    endpoints[0]["addresses"] = ["10.0.0.9"]  # same pod (targetRef u-10.0.0.1), a new address
    server.apply("MODIFIED", {**_slice("s1", []), "endpoints": endpoints})
    assert server.answer(name) == ("10.0.0.9", "10.0.0.3", "10.0.0.2")
    server.apply("MODIFIED", _slice("s1", [("10.0.0.3", "a", False)]))
    assert server.answer(name) == ("10.0.0.2",)
    server.apply("DELETED", _slice("s2", []))
    assert server.answer(name) is None


def test_the_watch_events_count_of_shared_endpoints_is_used_only_against_the_version_taken_in_last() -> None:
    """A slice update whose event says which endpoints at each end are the old version's very objects is
    re-indexed in the middle only; a count given against another version than the one the server took in
    last is not trusted (the lists are compared), so the records are right either way."""
    server = DnsServer(Clock(), 0.0)
    first = _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.2", "b", True), ("10.0.0.3", "c", True)])
    server.apply("ADDED", first)
    ends = first["endpoints"]
    moved = _slice("x", [("10.0.0.9", "b", True)])["endpoints"][0]
    second = {**first, "endpoints": [ends[0], moved, ends[2]]}
    server.apply("MODIFIED", second, first, (1, 1))
    assert server.answer("b.svc.ns.svc.cluster.local") == ("10.0.0.9",)
    # A wrong count against a stale version: ignored, the lists are compared.
    third = {**second, "endpoints": [ends[0], ends[2]]}
    server.apply("MODIFIED", third, first, (3, 0))
    assert server.answer("b.svc.ns.svc.cluster.local") is None
    assert server.answer("svc.ns.svc.cluster.local") == ("10.0.0.1", "10.0.0.3")


def test_an_endpoint_replaced_by_one_the_records_read_the_same_leaves_them_as_they_are() -> None:
    """A `serving` flip under publishNotReadyAddresses changes nothing DNS serves; a replacement that
    changes the IP, the hostname or readiness is re-indexed (each checked against a fresh server)."""
    first = _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.2", "b", True), ("10.0.0.3", "c", True)])
    ends = first["endpoints"]
    flipped = {**ends[1], "conditions": {"ready": True, "serving": False}}
    for replacement, expected in (
        (flipped, ("10.0.0.2",)),
        ({**ends[1], "addresses": ["10.0.0.8"]}, ("10.0.0.8",)),
        ({**ends[1], "conditions": {"ready": False}}, None),
        ({**ends[1], "hostname": "z"}, None),
    ):
        server = DnsServer(Clock(), 0.0)
        server.apply("ADDED", first)
        second = {**first, "endpoints": [ends[0], replacement, ends[2]]}
        server.apply("MODIFIED", second, first, (1, 1))
        assert server.answer("b.svc.ns.svc.cluster.local") == expected, replacement
        fresh = DnsServer(Clock(), 0.0)
        fresh.apply("ADDED", second)
        assert fresh.answer("b.svc.ns.svc.cluster.local") == expected


def test_the_usual_slice_update_is_taken_in_without_the_general_path_and_serves_what_a_fresh_server_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One endpoint added, replaced (records the same, or not) or removed, against the version taken in
    last, with the same labels object: taken in without reading the slice's name (the general path is
    not called), and every name answers as on a server that took in only the final version. A version
    with other labels, a stale ``old`` or several endpoints changed goes the general way."""
    server = DnsServer(Clock(), 0.0, lambda *a: published.append(a))
    published: list[tuple[str, str, str]] = []
    first = _slice("s1", [("10.0.0.1", "a", True), ("10.0.0.2", "b", True)])
    server.apply("ADDED", first)
    a, b = first["endpoints"]
    c = _slice("x", [("10.0.0.3", "c", True)])["endpoints"][0]
    c_flipped = {**c, "conditions": {"ready": True, "serving": False}}
    c_moved = {**c, "addresses": ["10.0.0.9"]}
    c_unready = {**c, "conditions": {"ready": False}}
    steps = [([a, c, b], (1, 1)), ([a, c_flipped, b], (1, 1)), ([a, c_moved, b], (1, 1)),
             ([a, c_unready, b], (1, 1)), ([a, c, b], (1, 1)), ([a, b], (1, 1)), ([b], (0, 1))]
    general: list[str] = []
    take = server._take
    monkeypatch.setattr(server, "_take", lambda *args: (general.append(args[0]), take(*args)))
    version = first
    names = [f"{h}.svc.ns.svc.cluster.local" for h in "abc"] + ["svc.ns.svc.cluster.local"]
    for endpoints, shared in steps:
        following = {**version, "metadata": {**version["metadata"]}, "endpoints": endpoints}
        server.apply("MODIFIED", following, version, shared)
        version = following
        fresh = DnsServer(Clock(), 0.0)
        fresh.apply("ADDED", following)
        assert [server.answer(n) for n in names] == [fresh.answer(n) for n in names], endpoints
    assert general == []
    assert [p[1:] for p in published] == [("a.svc.ns.svc.cluster.local", "10.0.0.1"),
                                          ("b.svc.ns.svc.cluster.local", "10.0.0.2"),
                                          ("c.svc.ns.svc.cluster.local", "10.0.0.3")]
    labels = {"kubernetes.io/service-name": "svc"}  # equal, but not the very same object
    relabelled = {**version, "metadata": {**version["metadata"], "labels": labels}, "endpoints": [a, b]}
    server.apply("MODIFIED", relabelled, version, (0, 1))
    server.apply("MODIFIED", {**relabelled, "endpoints": [a]}, version, (1, 0))  # stale old
    assert general == ["MODIFIED", "MODIFIED"]
    assert server.answer("svc.ns.svc.cluster.local") == ("10.0.0.1",)
