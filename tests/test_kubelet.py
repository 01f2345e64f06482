"""The emulated kubelet: phases, conditions, container states and their virtual times
(``pkg/kubelet/kubelet_pods.go``, ``pkg/kubelet/status/generate.go``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import pytest
from cluster_harness import PodWrites, run_to

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj, clone, get_condition
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.commands import CommandOutcome, command_outcome, script_outcome, sleep_seconds
from fakecluster.kubelet.pod_timings import NEVER, PodTimings
from fakecluster.kubelet.pod_worker import go_duration, image_id

SLEEP_FOREVER = ["sleep", "infinity"]


ZERO = PodTimings()


def make_cluster(timings: PodTimings | Callable[[Obj], PodTimings] = ZERO, seed: int = 0) -> Cluster:
    behaviour = timings if callable(timings) else (lambda _pod: timings)
    return Cluster(seed=seed, config=ClusterConfig(nodes=[NodePool("node")], behaviour=behaviour))


def container(name: str = "main", command: list[str] | None = None, **extra: Any) -> Obj:
    out: Obj = {"name": name, "image": "busybox:1.36", **extra}
    if command is not None:
        out["command"] = command
    return out


def make_pod(name: str = "p", containers: list[Obj] | None = None, restart: str = "Never",
             **spec: Any) -> Obj:
    containers = containers or [container(command=SLEEP_FOREVER)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"restartPolicy": restart, "containers": containers, **spec},
    }


def watched(timings: PodTimings | Callable[[Obj], PodTimings] = ZERO, pod: Obj | None = None, *,
            seed: int = 0) -> tuple[Cluster, PodWrites]:
    """A cluster (:func:`make_cluster`), a log of its pod writes, and ``pod`` (the default
    :func:`make_pod`) created; the clock has not moved."""
    cluster = make_cluster(timings, seed)
    rec = PodWrites(cluster)
    cluster.client().create(pod or make_pod())
    return cluster, rec


def phase_is(phase: str) -> Callable[[Obj], bool]:
    return lambda pod: (pod.get("status") or {}).get("phase") == phase


def ready(pod: Obj) -> bool:
    cond = get_condition(pod, "Ready")
    return cond is not None and cond["status"] == "True"


def status_of(cluster: Cluster, name: str = "p") -> Obj:
    return cluster.client().get("Pod", "default", name)["status"]


def cstatus(status: Obj, name: str = "main") -> Obj:
    """The named container's status; ``{}`` before the kubelet has reported any."""
    return next((c for c in status.get("containerStatuses") or () if c["name"] == name), {})


def cond(status: Obj, cond_type: str) -> Obj:
    """The condition of that type; ``{}`` if absent."""
    return next((c for c in status.get("conditions") or () if c["type"] == cond_type), {})


# ---------------------------------------------------------------------------------------------- timeline
def test_pull_start_ready_timeline() -> None:
    cluster, rec = watched(PodTimings(pull=60, start=1, ready=2))
    cluster.run(30)
    status = status_of(cluster)
    assert status["phase"] == "Pending"
    assert cstatus(status)["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert cstatus(status)["started"] is False
    assert cond(status, "Initialized")["status"] == "True"
    assert cond(status, "PodReadyToStartContainers")["status"] == "True"
    for cond_type in ("Ready", "ContainersReady"):
        assert cond(status, cond_type)["status"] == "False"
        assert cond(status, cond_type)["reason"] == "ContainersNotReady"
        assert cond(status, cond_type)["message"] == "containers with unready status: [main]"
    assert status["hostIP"] == "172.18.0.2"
    assert status["podIP"] == "10.244.0.2"
    assert status["podIPs"] == [{"ip": "10.244.0.2"}]
    assert status["startTime"] == "2025-01-01T00:00:00Z"
    cluster.run(1000)
    assert rec.first("p", phase_is("Running")) == 61.0
    assert rec.first("p", ready) == 63.0
    status = status_of(cluster)
    assert cstatus(status)["state"] == {"running": {"startedAt": "2025-01-01T00:01:01Z"}}
    assert cstatus(status)["started"] is True
    assert cstatus(status)["ready"] is True
    assert cond(status, "ContainersReady")["status"] == "True"
    assert cond(status, "Ready")["lastTransitionTime"] == "2025-01-01T00:01:03Z"


def test_running_pod_keeps_transition_times_of_unchanged_conditions() -> None:
    cluster = make_cluster(PodTimings(pull=10, ready=5))
    cluster.client().create(make_pod())
    cluster.run(100)
    status = status_of(cluster)
    assert cond(status, "PodScheduled")["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert cond(status, "Initialized")["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert cond(status, "Ready")["lastTransitionTime"] == "2025-01-01T00:00:15Z"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]


def test_without_ready_rule_or_probe_ready_as_soon_as_running() -> None:
    cluster, rec = watched(PodTimings(pull=3, start=2))
    cluster.run(100)
    assert rec.first("p", phase_is("Running")) == 5.0
    assert rec.first("p", ready) == 5.0


def test_all_zero_timings_reach_running_and_ready_in_one_status_write() -> None:
    cluster, rec = watched()
    cluster.run(100)
    kubelet_writes = [p for _w, t, p in rec.events
                      if t == "MODIFIED" and (p.get("status") or {}).get("startTime")]
    assert len(kubelet_writes) == 1
    assert cluster.kubelet.status_writes == 1
    assert kubelet_writes[0]["status"]["phase"] == "Running"
    assert ready(kubelet_writes[0])


def test_ready_never_stays_unready() -> None:
    cluster, rec = watched(PodTimings(ready=NEVER))
    cluster.run(10_000)
    assert rec.first("p", phase_is("Running")) == 0.0
    assert rec.first("p", ready) is None


def test_status_writes_share_what_did_not_change() -> None:
    """The kubelet's status writes edit only what changed: a sub-object that says the same as in the
    previous version is that very object (the store copies on write, so sharing is safe), and the
    written values are what a full rebuild would write."""
    pod = make_pod(containers=[container("a", ["sleep", "5"]), container("b", SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(pull=1, ready=2), pod)
    cluster.run(100)
    versions = [p["status"] for _w, t, p in rec.of("p") if t == "MODIFIED" and p["status"].get("podIP")]
    before, after = next((v0, v1) for v0, v1 in itertools.pairwise(versions)
                         if cstatus(v1, "a").get("state", {}).get("terminated"))
    assert cstatus(after, "b") is cstatus(before, "b")  # b kept running: its status object is kept
    assert cstatus(after, "a") is not cstatus(before, "a")
    assert after["podIPs"] is before["podIPs"] and after["hostIPs"] is before["hostIPs"]
    for kept in ("PodScheduled", "PodReadyToStartContainers", "Initialized"):
        assert cond(after, kept) is cond(before, kept)
    assert cstatus(after, "a")["state"]["terminated"]["reason"] == "Completed"
    assert cond(after, "Ready")["message"] == "containers with unready status: [a]"
    admitted, started = versions[:2]  # started, not ready yet: the conditions say what they said
    assert started["phase"] == "Running" and started["conditions"] is admitted["conditions"]


# ---------------------------------------------------------------------------------------------- probes
def test_readiness_probe_initial_delay_decides_ready() -> None:
    probe = {"exec": {"command": ["true"]}, "initialDelaySeconds": 7, "periodSeconds": 3}
    pod = make_pod(containers=[container(command=SLEEP_FOREVER, readinessProbe=probe)])
    cluster, rec = watched(PodTimings(pull=4), pod)
    cluster.run(100)
    assert rec.first("p", phase_is("Running")) == 4.0
    # worker.go: ticks at 0, 3, 6, 9, 12 s from admission; 4 s (the start's manual trigger) and 9 s are
    # fewer than 7 whole seconds after the start, so 12 s is the first probe that counts (not 4 + 7 s).
    assert rec.first("p", ready) == 12.0


def test_startup_probe_gates_started_and_triggers_readiness_at_once() -> None:
    startup = {"exec": {"command": ["true"]}, "initialDelaySeconds": 20}
    readiness = {"exec": {"command": ["true"]}, "initialDelaySeconds": 5, "periodSeconds": 10}
    cluster, rec = watched(ZERO, make_pod(containers=[
        container(command=SLEEP_FOREVER, startupProbe=startup, readinessProbe=readiness)]))
    cluster.run(10)
    assert cstatus(status_of(cluster))["started"] is False
    cluster.run(100)
    assert rec.first("p", lambda p: cstatus(p["status"]).get("started") is True) == 20.0
    # prober_manager.go UpdatePodStatus: a started, not-ready container triggers the readiness worker at
    # once (manualTriggerCh) instead of waiting for its next period tick (which would be 25 s).
    assert rec.first("p", ready) == 20.0


def test_readiness_success_threshold_needs_consecutive_successes() -> None:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "successThreshold": 3}
    pod = make_pod(containers=[container(command=SLEEP_FOREVER, readinessProbe=probe)])
    cluster, rec = watched(PodTimings(pull=1), pod)
    cluster.run(100)
    # Successes at 1 s (start trigger), 5 s and 10 s: the third one reports Ready.
    assert rec.first("p", ready) == 10.0


def test_fail_for_keeps_readiness_false_until_the_window_ends() -> None:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10}
    pod = make_pod(containers=[container(command=SLEEP_FOREVER, readinessProbe=probe)])
    cluster, rec = watched(PodTimings(pull=2, probe_fail_for={"readiness": 30.0}), pod)
    cluster.run(200)
    assert rec.first("p", ready) == 40.0  # first tick at least 30 s after the start at 2 s


def test_liveness_failure_kills_and_restarts_the_container() -> None:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "failureThreshold": 2}
    pod = make_pod(restartPolicy="Always", containers=[
        container(command=SLEEP_FOREVER, livenessProbe=probe)])
    cluster, rec = watched(PodTimings(probe_fail_for={"liveness": math.inf}, terminate=2), pod)
    cluster.run(30)
    # The admission tick (0 s) finds no running container; failures at 5 s and 10 s: killed at 10 s,
    # SIGTERM honoured after 2 s, restarted at once (the first restart has no back-off).
    restarted = rec.first("p", lambda p: cstatus(p["status"]).get("restartCount") == 1)
    assert restarted == 12.0
    last = cstatus(status_of(cluster))["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (143, "Error")


def test_startup_failure_under_restart_policy_never_fails_the_pod() -> None:
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10, "failureThreshold": 3}
    pod = make_pod(restartPolicy="Never", terminationGracePeriodSeconds=0, containers=[
        container(command=SLEEP_FOREVER, startupProbe=probe)])
    cluster, rec = watched(PodTimings(probe_fail_for={"startup": math.inf}), pod)
    cluster.run(100)
    assert rec.first("p", phase_is("Failed")) == 30.0  # failures at 10, 20, 30 s; SIGKILL at once (grace 0)
    assert cstatus(status_of(cluster))["state"]["terminated"]["exitCode"] == 137


# ---------------------------------------------------------------------------------------------- exit
def test_sleep_command_exits_zero_and_pod_succeeds() -> None:
    cluster, rec = watched(PodTimings(pull=2), make_pod(containers=[container(command=["sleep", "30"])]))
    cluster.run(1000)
    assert rec.first("p", phase_is("Succeeded")) == 32.0
    status = status_of(cluster)
    assert cstatus(status)["state"]["terminated"] == {
        "exitCode": 0, "reason": "Completed", "startedAt": "2025-01-01T00:00:02Z",
        "finishedAt": "2025-01-01T00:00:32Z", "containerID": cstatus(status)["containerID"]}
    assert cstatus(status)["ready"] is False
    for cond_type in ("Ready", "ContainersReady"):
        assert cond(status, cond_type)["status"] == "False"
        assert cond(status, cond_type)["reason"] == "PodCompleted"
    assert cond(status, "Initialized")["reason"] == "PodCompleted"
    assert cond(status, "PodReadyToStartContainers")["status"] == "False"
    assert cluster.client().get("Pod", "default", "p")["metadata"].get("deletionTimestamp") is None


def test_shell_script_of_echo_and_sleep_steps() -> None:
    script = 'echo "starting; really"\nsleep 1m && sleep 0.5; echo done\nsleep 30s'
    cluster, rec = watched(ZERO, make_pod(containers=[container(command=["/bin/sh", "-c", script])]))
    cluster.run(1000)
    assert rec.first("p", phase_is("Succeeded")) == 90.5


def test_shell_exit_code_fails_pod() -> None:
    main = container(command=["bash", "-c"], args=["sleep 4; exit 3"])
    cluster, rec = watched(ZERO, make_pod(containers=[main]))
    cluster.run(1000)
    assert rec.first("p", phase_is("Failed")) == 4.0
    terminated = cstatus(status_of(cluster))["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert cond(status_of(cluster), "Ready")["reason"] == "PodFailed"


def test_unknown_command_runs_until_deleted() -> None:
    cluster = make_cluster()
    cluster.client().create(make_pod(containers=[container(command=["python", "train.py"])]))
    assert cluster.run(1_000_000) is False  # nothing left to happen: no timer for an exit
    assert status_of(cluster)["phase"] == "Running"


@pytest.mark.parametrize(("argv", "expected"), [
    (["sleep", "30"], CommandOutcome(30.0)),
    (["/bin/sleep", "1m", "30s"], CommandOutcome(90.0)),
    (["sleep", "0.5"], CommandOutcome(0.5)),
    (["sleep", "infinity"], CommandOutcome(math.inf)),
    (["sh", "-c", "sleep 10 && echo ok"], CommandOutcome(10.0)),
    (["sh", "-ec", "true; sleep 2h"], CommandOutcome(7200.0)),
    (["sh", "-c", "sleep 5; exit 2; sleep 100"], CommandOutcome(5.0, 2)),
    (["sh", "-c", "sleep 5 | cat"], None),
    (["sh", "-c", "sleep 5 || true"], None),
    (["sh", "-c", "sleep $DELAY"], None),
    (["sh", "-c", "until nslookup x; do sleep 1; done"], None),
    (["sleep"], None),
    (["sleep", "ten"], None),
    (["python", "-c", "sleep 1"], None),
])
def test_command_outcome(argv: list[str], expected: CommandOutcome | None) -> None:
    assert command_outcome({"name": "c", "command": argv}) == expected


def test_args_without_command_are_the_command_line() -> None:
    assert command_outcome({"name": "c", "args": ["sleep", "3"]}) == CommandOutcome(3.0)
    assert command_outcome({"name": "c"}) is None
    assert sleep_seconds(["2d"]) == 172800.0
    assert script_outcome("echo 'a && b'; sleep 1") == CommandOutcome(1.0)
    assert script_outcome("echo 'unterminated") is None


def test_exit_rule_overrides_command() -> None:
    pod = make_pod(containers=[container(command=["sleep", "3"])])
    cluster, rec = watched(PodTimings(start=1, exit_after=12, exit_code=7), pod)
    cluster.run(1000)
    assert rec.first("p", phase_is("Failed")) == 13.0
    assert cstatus(status_of(cluster))["state"]["terminated"]["exitCode"] == 7


def test_pod_ends_when_all_containers_have_terminated() -> None:
    cluster, rec = watched(ZERO, make_pod(containers=[
        container("zeta", command=["sleep", "10"]), container("alpha", command=["sleep", "20"])]))
    cluster.run(15)
    status = status_of(cluster)
    assert status["phase"] == "Running"
    assert [c["name"] for c in status["containerStatuses"]] == ["alpha", "zeta"]  # sorted like the kubelet
    assert cstatus(status, "zeta")["state"]["terminated"]["exitCode"] == 0
    assert cond(status, "Ready")["message"] == "containers with unready status: [zeta]"
    cluster.run(1000)
    assert rec.first("p", phase_is("Succeeded")) == 20.0


def test_one_failed_container_under_never_fails_the_pod_once_all_stopped() -> None:
    cluster, rec = watched(ZERO, make_pod(containers=[
        container("a", command=["sh", "-c", "sleep 5; exit 1"]), container("b", command=["sleep", "9"])]))
    cluster.run(1000)
    assert rec.first("p", phase_is("Failed")) == 9.0


# ---------------------------------------------------------------------------------------------- restarts
def test_on_failure_restarts_with_crash_loop_back_off() -> None:
    cluster, rec = watched(PodTimings(exit_after=5, exit_code=1), make_pod(restart="OnFailure"))
    cluster.run(1000)

    def restarts(n: int) -> Callable[[Obj], bool]:
        def check(pod: Obj) -> bool:
            main = cstatus(pod["status"])
            return main.get("restartCount") == n and "running" in main["state"]
        return check

    # crash at 5 → restarted at once; crash at 10 → back-off 10 s; crash at 25 → 20 s; crash at 50 → 40 s
    assert [rec.first("p", restarts(n)) for n in (1, 2, 3, 4)] == [5.0, 20.0, 45.0, 90.0]
    assert {p["status"]["phase"] for _w, _t, p in rec.events} == {"Pending", "Running"}
    cluster2 = make_cluster(PodTimings(exit_after=5, exit_code=1))
    cluster2.client().create(make_pod(restart="OnFailure"))
    cluster2.run(12)
    status = cstatus(status_of(cluster2))
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert status["state"]["waiting"]["message"].startswith(
        "back-off 10s restarting failed container=main pod=p_default(")
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["lastState"]["terminated"]["finishedAt"] == "2025-01-01T00:00:10Z"
    assert status["restartCount"] == 1
    assert status_of(cluster2)["phase"] == "Running"
    assert cond(status_of(cluster2), "Ready")["status"] == "False"


def test_back_off_is_capped_at_five_minutes() -> None:
    cluster, rec = watched(PodTimings(exit_after=1, exit_code=1), make_pod(restart="OnFailure"))
    cluster.run(3000)
    starts = sorted({float(w) for w, _t, p in rec.events
                     if p.get("status", {}).get("containerStatuses")
                     and "running" in cstatus(p["status"])["state"]})
    gaps = [round(b - a, 3) for a, b in itertools.pairwise(starts)]
    assert gaps[:8] == [1.0, 11.0, 21.0, 41.0, 81.0, 161.0, 301.0, 301.0]
    assert go_duration(300) == "5m0s"


def test_on_failure_exit_zero_succeeds() -> None:
    cluster, rec = watched(PodTimings(exit_after=5, exit_code=0), make_pod(restart="OnFailure"))
    cluster.run(1000)
    assert rec.first("p", phase_is("Succeeded")) == 5.0
    assert cstatus(status_of(cluster))["restartCount"] == 0


def test_restart_policy_always_restarts_successful_exits() -> None:
    cluster = make_cluster(PodTimings(exit_after=5, exit_code=0))
    cluster.client().create(make_pod(restart="Always"))
    cluster.run(100)
    status = status_of(cluster)
    assert status["phase"] == "Running"
    assert cstatus(status)["restartCount"] >= 3
    assert cstatus(status)["lastState"]["terminated"]["reason"] == "Completed"


def test_fail_container_applies_restart_policy() -> None:
    cluster = make_cluster(PodTimings(pull=1))
    rec = PodWrites(cluster)
    cluster.client().create(make_pod("never"))
    cluster.client().create(make_pod("onfailure", restart="OnFailure"))
    run_to(cluster, 10)
    cluster.kubelet.fail_container("default", "never", 137)
    cluster.kubelet.fail_container("default", "onfailure", 2)
    cluster.run(100)
    assert rec.first("never", phase_is("Failed")) == 10.0
    assert cstatus(status_of(cluster, "never"))["state"]["terminated"]["exitCode"] == 137
    onfailure = cstatus(status_of(cluster, "onfailure"))
    assert onfailure["restartCount"] == 1
    assert onfailure["lastState"]["terminated"]["exitCode"] == 2
    assert "running" in onfailure["state"]
    with pytest.raises(ValueError, match="not running on any node"):
        cluster.kubelet.fail_container("default", "missing", 1)


# ------------------------------------------------------------------------------------------ init containers
def test_init_containers_run_in_order_before_regular_containers() -> None:
    cluster, rec = watched(PodTimings(pull=2), make_pod(
        initContainers=[container("setup", command=["sleep", "10"]),
                        container("migrate", command=["sleep", "5"])],
        containers=[container(command=["sleep", "1"])]))
    cluster.run(5)
    status = status_of(cluster)
    assert status["phase"] == "Pending"
    assert cond(status, "Initialized")["message"] == "containers with incomplete status: [setup migrate]"
    assert cstatus(status)["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert "running" in status["initContainerStatuses"][0]["state"]
    cluster.run(1000)
    assert rec.first("p", lambda p: cond(p["status"], "Initialized").get("status") == "True") == 17.0
    assert rec.first("p", phase_is("Running")) == 17.0
    assert rec.first("p", phase_is("Succeeded")) == 18.0
    init = status_of(cluster)["initContainerStatuses"]
    assert [(s["name"], s["ready"], s["state"]["terminated"]["exitCode"]) for s in init] == [
        ("setup", True, 0), ("migrate", True, 0)]


def test_failed_init_container_fails_pod_under_never() -> None:
    cluster = make_cluster()
    cluster.client().create(make_pod(initContainers=[container("setup", command=["sh", "-c", "exit 1"])]))
    cluster.run(100)
    status = status_of(cluster)
    assert status["phase"] == "Failed"
    assert status["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 1


def test_sidecar_keeps_running_and_stops_when_main_container_completes() -> None:
    sidecar = container("proxy", command=SLEEP_FOREVER, restartPolicy="Always")
    main = container(command=["sleep", "8"])
    cluster, rec = watched(ZERO, make_pod(initContainers=[sidecar], containers=[main]))
    cluster.run(4)
    status = status_of(cluster)
    assert status["phase"] == "Running"
    assert status["initContainerStatuses"][0]["started"] is True
    assert ready(cluster.client().get("Pod", "default", "p"))
    cluster.run(100)
    assert rec.first("p", phase_is("Succeeded")) == 8.0
    assert "terminated" in status_of(cluster)["initContainerStatuses"][0]["state"]


# ---------------------------------------------------------------------------------------------- deletion
def test_graceful_deletion_ends_failed_then_removed() -> None:
    cluster, rec = watched(PodTimings(terminate=5))
    client = cluster.client()
    run_to(cluster, 10)
    client.delete("Pod", "default", "p")
    cluster.run(100)
    failed = rec.first("p", phase_is("Failed"))
    assert failed == 15.0
    assert rec.deleted_at("p") == 15.0
    last = rec.last_status()
    terminated = cstatus(last)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (143, "Error")
    assert cond(last, "Ready")["reason"] == "PodFailed"


def test_deleted_pod_with_finalizer_stays_failed_until_finalizer_removed() -> None:
    pod = make_pod()
    pod["metadata"]["finalizers"] = ["example.com/hold"]
    cluster, rec = watched(PodTimings(terminate=2), pod)
    client = cluster.client()
    run_to(cluster, 1)
    client.delete("Pod", "default", "p")
    cluster.run(100)
    stored = clone(client.get("Pod", "default", "p"))
    assert stored["status"]["phase"] == "Failed"
    assert stored["metadata"]["deletionGracePeriodSeconds"] == 0
    assert rec.first("p", phase_is("Failed")) == 3.0
    stored["metadata"]["finalizers"] = []
    client.update(stored)
    cluster.run(200)
    with pytest.raises(ApiError):
        client.get("Pod", "default", "p")


@pytest.mark.parametrize(
    ("timings", "pod", "delete_at", "gone_at", "terminated"),
    [
        pytest.param(PodTimings(terminate=60), make_pod(terminationGracePeriodSeconds=10), 3, 13.0,
                     {"exitCode": 137}, id="terminate is capped by the grace period"),
        pytest.param(PodTimings(pull=100, terminate=20), make_pod(), 10, 10.0,
                     {"reason": "ContainerStatusUnknown"}, id="deleted before its containers started"),
    ],
)
def test_deleted_pod_ends_failed(
    timings: PodTimings, pod: Obj, delete_at: float, gone_at: float, terminated: Obj
) -> None:
    cluster, rec = watched(timings, pod)
    run_to(cluster, delete_at)
    cluster.client().delete("Pod", "default", "p")
    cluster.run(1000)
    assert rec.deleted_at("p") == gone_at
    last = rec.last_status()
    assert last["phase"] == "Failed"
    state = cstatus(last)["state"]["terminated"]
    assert {k: state[k] for k in terminated} == terminated


def test_shorter_grace_on_second_delete_kills_earlier() -> None:
    cluster, rec = watched(PodTimings(terminate=60))
    client = cluster.client()
    run_to(cluster, 1)
    client.delete("Pod", "default", "p")
    run_to(cluster, 5)
    client.delete("Pod", "default", "p", grace_period_seconds=2)
    cluster.run(1000)
    assert rec.deleted_at("p") == 7.0


def test_finished_pod_is_deleted_at_once_without_kubelet_writes() -> None:
    cluster, rec = watched(ZERO, make_pod(containers=[container(command=["sleep", "1"])]))
    client = cluster.client()
    run_to(cluster, 10)
    writes = cluster.kubelet.status_writes
    client.delete("Pod", "default", "p")
    assert rec.deleted_at("p") == 10.0
    cluster.run(100)
    assert cluster.kubelet.status_writes == writes


# ---------------------------------------------------------------------------------------------- shared state
def test_conditions_owned_by_others_survive_kubelet_writes() -> None:
    cluster = make_cluster(PodTimings(pull=5))
    client = cluster.client()
    client.create(make_pod())
    cluster.run(1)
    pod = clone(client.get("Pod", "default", "p"))
    disruption = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                  "message": "Eviction API: evicting", "lastTransitionTime": "2025-01-01T00:00:01Z"}
    pod["status"]["conditions"].append(disruption)
    client.update_status(pod)
    cluster.run(100)
    status = status_of(cluster)
    assert status["phase"] == "Running"
    assert cond(status, "DisruptionTarget")["reason"] == "EvictionByEvictionAPI"
    assert status["qosClass"] == "BestEffort"


def test_readiness_gates_hold_ready_until_condition_true() -> None:
    cluster = make_cluster()
    client = cluster.client()
    client.create(make_pod(readinessGates=[{"conditionType": "example.com/gate"}]))
    cluster.run(5)
    ready_cond = cond(status_of(cluster), "Ready")
    assert (ready_cond["status"], ready_cond["reason"]) == ("False", "ReadinessGatesNotReady")
    assert ready_cond["message"] == (
        'corresponding condition of pod readiness gate "example.com/gate" does not exist.')
    assert cond(status_of(cluster), "ContainersReady")["status"] == "True"
    pod = clone(client.get("Pod", "default", "p"))
    pod["status"]["conditions"].append({"type": "example.com/gate", "status": "True"})
    client.update_status(pod)
    cluster.run(10)
    assert cond(status_of(cluster), "Ready")["status"] == "True"


def test_kubelet_never_mutates_watch_snapshots() -> None:
    cluster = make_cluster(PodTimings(pull=1, ready=1, exit_after=3, terminate=1))
    snapshots: list[tuple[Obj, Obj]] = []
    cluster.client().watch("Pod", lambda e: snapshots.append((e.object, clone(e.object))))
    client = cluster.client()
    client.create(make_pod("a", restart="OnFailure"))
    client.create(make_pod("b"))
    run_to(cluster, 20)
    client.delete("Pod", "default", "a")
    cluster.run(100)
    assert len(snapshots) > 10
    for shared, copy in snapshots:
        assert shared == copy


# ---------------------------------------------------------------------------------------------- jitter
def _times(seed: int) -> tuple[float | None, float | None, float | None]:
    cluster, rec = watched(PodTimings(pull=10, start=1, ready=2, exit_after=30, jitter=5), seed=seed)
    cluster.run(1000)
    return rec.first("p", phase_is("Running")), rec.first("p", ready), rec.first("p", phase_is("Succeeded"))


def test_jitter_is_deterministic_per_seed() -> None:
    first = _times(1)
    assert first == _times(1)
    assert first != _times(2)
    running, readied, done = first
    assert running is not None and readied is not None and done is not None
    assert 11.0 <= running <= 21.0
    assert 2.0 <= readied - running <= 7.0
    assert 30.0 <= done - running <= 35.0


def test_image_id_drops_tag_and_is_stable() -> None:
    assert image_id("registry.k8s.io/pause:3.9").startswith("registry.k8s.io/pause@sha256:")
    assert image_id("localhost:5000/app").startswith("localhost:5000/app@sha256:")
    assert image_id("busybox") == image_id("busybox") != image_id("busybox:1.36")


# ------------------------------------------------------------------------------ activeDeadlineSeconds
def test_pod_active_deadline_fails_the_pod_and_kills_its_containers() -> None:
    pod = make_pod(restartPolicy="Never", activeDeadlineSeconds=60,
                   containers=[container(command=SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(pull=5, terminate=3), pod)
    cluster.run(100)
    # pkg/kubelet/active_deadline.go: 60 s after startTime (admission at 0 s), not after the start at 5 s.
    assert rec.first("p", phase_is("Failed")) == 60.0
    status = status_of(cluster)
    assert (status["reason"], status["message"]) == (
        "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")
    terminated = cstatus(status)["state"]["terminated"]
    assert terminated["exitCode"] == 143  # SIGTERM honoured after 3 s, within the 30 s grace period
    assert cluster.client().get("Pod", "default", "p")["status"]["phase"] == "Failed"


def test_pod_without_active_deadline_keeps_running() -> None:
    pod = make_pod(restartPolicy="Never", containers=[container(command=SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(), pod)
    cluster.run(1000)
    assert rec.first("p", phase_is("Failed")) is None


# ------------------------------------------------------------------------------ image pull failures
def waiting_of(pod: Obj) -> tuple[str | None, str | None]:
    waiting = cstatus(pod["status"]).get("state", {}).get("waiting") or {}
    return waiting.get("reason"), waiting.get("message")


def test_failed_pulls_show_err_image_pull_then_image_pull_back_off_and_retry_with_back_off() -> None:
    pod = make_pod(containers=[container(command=SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(pull=2, start=1, pull_failures=3), pod)
    cluster.run(200)
    reasons = lambda want: rec.first("p", lambda p: waiting_of(p)[0] == want)  # noqa: E731
    # Attempt 1 fails at 2 s; the 10 s re-sync finds the 10 s back-off over: attempt 2 at 12 s fails at
    # 14 s; re-sync at 24 s within its 20 s back-off: ImagePullBackOff until 34 s; attempt 3 fails at
    # 36 s; back-off 40 s (ImagePullBackOff from 46 s) until 76 s; attempt 4 succeeds: running at 79 s.
    assert reasons("ErrImagePull") == 2.0
    assert reasons("ImagePullBackOff") == 24.0
    assert rec.first("p", phase_is("Running")) == 79.0
    at = {when: pod for when, _etype, pod in rec.events}
    assert waiting_of(at[24.0])[1] == 'Back-off pulling image "busybox:1.36"'
    assert waiting_of(at[2.0])[1] == (
        'rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/busybox:1.36": '
        'failed to resolve reference "docker.io/library/busybox:1.36": docker.io/library/busybox:1.36: '
        'not found')


def test_pull_that_always_fails_never_runs() -> None:
    pod = make_pod(containers=[container(command=SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(pull=1, pull_failures=math.inf), pod)
    cluster.run(3000)
    assert rec.first("p", phase_is("Running")) is None
    assert waiting_of({"status": status_of(cluster)})[0] in ("ErrImagePull", "ImagePullBackOff")


def test_exit_per_run_changes_between_container_restarts() -> None:
    pod = make_pod(restartPolicy="OnFailure", containers=[container(command=SLEEP_FOREVER)])
    cluster, rec = watched(PodTimings(exit_after=5, exit_code=1, exit_runs=((5.0, 1), (30.0, 0))), pod)
    cluster.run(200)
    # Run 1 exits 1 at 5 s and restarts at once; run 2 exits 0 after 30 s: the pod succeeds at 35 s.
    assert rec.first("p", phase_is("Succeeded")) == 35.0
    assert cstatus(status_of(cluster))["restartCount"] == 1


def test_a_recovered_node_runs_only_the_steps_still_due(monkeypatch: pytest.MonkeyPatch) -> None:
    """``stop_node`` saves the pod workers' timers for ``start_node``: only those still to run. A timer
    that had fired before the failure (the pod's pull, long done at 60 s) must not run again when the
    kubelet comes back at 180 s; before the fix, ``_advance_init`` ran a second time then."""
    from pathlib import Path

    from fakecluster.kubelet import kubelet as kubelet_module
    from fakecluster.scenario.runner import run_scenario

    fired: list[tuple[float, str, str]] = []
    original = kubelet_module.Kubelet._fire

    def spy(self: Any, worker: Any, step: Any, *args: Any) -> None:
        fired.append((self.clock.now, worker.name, getattr(step, "__name__", str(step))))
        original(self, worker, step, *args)

    monkeypatch.setattr(kubelet_module.Kubelet, "_fire", spy)
    root = Path(__file__).resolve().parents[1]
    path = root / "scenarios/node-failure/node-recovers-before-eviction-pods-kept.yaml"
    assert run_scenario(path).passed
    before = {(name, step) for when, name, step in fired if when < 60}
    at_recovery = [(name, step) for when, name, step in fired if when == 180]
    assert at_recovery, "the recovered pod resyncs"
    assert not [s for s in at_recovery if s in before and s[1] != "_resync"], at_recovery


def test_a_timer_that_ran_reads_as_cancelled() -> None:
    from fakecluster.clock import Clock

    clock = Clock()
    ran: list[int] = []
    first = clock.call_at(1.0, ran.append, 1)
    second = clock.call_at(2.0, ran.append, 2)
    clock.run(1.5)
    assert ran == [1] and first.cancelled and not second.cancelled



def test_a_timer_that_ran_lets_go_of_its_arguments() -> None:
    """The clock drops a timer's arguments once it has run: the kubelet keeps a pod's timers in its
    lists until the pod stops, and a fired timer holding the pod worker and its step (some 80 bytes)
    for the rest of the pod's life is memory per running pod. A pending one keeps them."""
    from fakecluster.clock import Clock

    clock = Clock()
    ran: list[tuple[str, int]] = []
    first = clock.call_at(1.0, lambda *args: ran.append(args), "first", 1)
    second = clock.call_at(2.0, lambda *args: ran.append(args), "second", 2)
    clock.run(1.5)
    assert ran == [("first", 1)] and first.args == () and second.args == ("second", 2)


def test_a_running_pods_lists_hold_only_timers_still_to_run_and_a_recovered_node_runs_them() -> None:
    """At 10 s the pod below has pulled and turned ready: those timers have left its lists, and the
    exit set at its start is all they hold. The node's kubelet stops at 10 s and comes back at 20 s:
    that exit still runs, at 53 s as set, and the timers that had run are not run again."""
    pod = make_pod(containers=[container(command=["sleep", "50"])])
    cluster, rec = watched(PodTimings(pull=2, start=1, ready=3), pod)
    cluster.run(10)
    worker: Any = cluster.kubelet._pods[cluster.client().get("Pod", "default", "p")["metadata"]["uid"]]
    timers = [*worker.timers, *(t for c in worker.all_containers() for t in c.timers)]
    assert [(t.when, t.cancelled) for t in timers] == [(2 + 1 + 50, False)]  # started at 3 s, sleeps 50 s
    cluster.kubelet.stop_node(worker.node)
    cluster.run(20)
    cluster.kubelet.start_node(worker.node)
    cluster.run(200)
    assert rec.first("p", phase_is("Succeeded")) == 53.0
    assert rec.first("p", phase_is("Running")) == 3.0


def test_queued_steps_never_touch_the_shared_empty_list() -> None:
    """A pod with no zero-delay step queued holds the one shared empty list; queuing one (a failPod
    action, zero-delay restarts) gives the pod a list of its own and hands it back once run."""
    from fakecluster.kubelet.pod_worker import NO_STEPS

    pod = make_pod(restart="Always", containers=[container(command=SLEEP_FOREVER)])
    cluster, _ = watched(PodTimings(), pod)
    cluster.run(5)
    worker: Any = cluster.kubelet._pods[cluster.client().get("Pod", "default", "p")["metadata"]["uid"]]
    assert worker.immediate is NO_STEPS
    cluster.kubelet.fail_container("default", "p", 3)
    assert NO_STEPS == [] and worker.immediate is NO_STEPS
    cluster.run(60)
    assert cstatus(status_of(cluster))["restartCount"] >= 1  # the failure ran: the container restarted
    assert NO_STEPS == []
