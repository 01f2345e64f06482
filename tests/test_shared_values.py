"""Equal immutable values that every pod would otherwise carry its own copy of are one shared object
(the store copies on write and nobody changes a stored object, which the snapshot guard checks): a
change that builds them per pod again would cost memory silently, so these tests pin the sharing."""

from __future__ import annotations

from fakecluster.api.objects import Obj, get_condition
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import PodTimings


def _pod(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}},
        "spec": {"restartPolicy": "Never",
                 "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"]}]},
    }


def _run_two_pods(until: float = 100) -> tuple[Cluster, Obj, Obj]:
    """Pods ``a`` and ``b`` on one node, run to ``until`` (at 100 s both have finished)."""
    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")],
                                                   behaviour=lambda _pod: PodTimings(pull=1)))
    client = cluster.client()
    client.create(_pod("a"))
    client.create(_pod("b"))
    cluster.run(until)
    return cluster, client.get("Pod", "default", "a"), client.get("Pod", "default", "b")


def test_default_tolerations_are_one_list_for_every_pod() -> None:
    _, a, b = _run_two_pods()
    assert a["spec"]["tolerations"] is b["spec"]["tolerations"]
    assert a["spec"]["tolerations"] == [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]


def test_pods_on_one_node_share_host_ips_and_a_same_second_pod_scheduled() -> None:
    _, a, b = _run_two_pods()
    assert a["status"]["phase"] == b["status"]["phase"] == "Succeeded"
    assert a["status"]["hostIPs"] is b["status"]["hostIPs"]
    assert a["status"]["podIPs"] != b["status"]["podIPs"]
    scheduled_a, scheduled_b = get_condition(a, "PodScheduled"), get_condition(b, "PodScheduled")
    assert scheduled_a is scheduled_b
    assert scheduled_a == {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                           "lastTransitionTime": "2025-01-01T00:00:00Z"}


def test_the_network_keeps_only_a_pods_identity() -> None:
    """The network's record of a sandboxed pod shares the stored metadata values and keeps no version
    of the pod: a whole admitted version would stay alive for the rest of the run."""
    cluster, a, _ = _run_two_pods()
    kept = cluster.network._by_uid[a["metadata"]["uid"]].identity()
    assert set(kept) == {"apiVersion", "kind", "metadata"}
    assert kept["metadata"]["labels"] is a["metadata"]["labels"]
    assert kept["metadata"]["name"] == "a" and kept["metadata"]["uid"] == a["metadata"]["uid"]


def test_a_jobs_pods_share_their_container_list() -> None:
    """Defaulting keeps a container list whose containers have every default already (the Job's
    template was defaulted when the Job was created), so the pods do not get one list each."""
    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")],
                                                   behaviour=lambda _pod: PodTimings(pull=1)))
    client = cluster.client()
    client.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
        "spec": {"parallelism": 3, "completions": 3, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"]}]}}},
    })
    cluster.run(3)
    pods = client.list("Pod", "default")
    assert len(pods) == 3
    first = pods[0]["spec"]["containers"]
    assert all(pod["spec"]["containers"] is first for pod in pods)
    assert first[0]["terminationMessagePath"] == "/dev/termination-log"


def test_the_storage_indexes_share_one_kind_key_per_object() -> None:
    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")]))
    client = cluster.client()
    client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                   "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                       {"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"]}]}}}})
    cluster.run(1)
    storage = cluster.server._storage
    pod = client.list("Pod", "default")[0]
    kind_key = storage.by_uid[pod["metadata"]["uid"]]
    assert kind_key == ("Pod", ("default", pod["metadata"]["name"]))
    assert next(k for k in storage.valid_specs if k == kind_key) is kind_key
    owner = pod["metadata"]["ownerReferences"][0]["uid"]
    assert next(k for k in storage.by_owner[owner] if k == kind_key) is kind_key


def test_endpoint_slice_trace_details_are_one_string_per_count() -> None:
    from fakecluster.scenario.recorder import _endpoints_detail

    assert _endpoints_detail(3) == "endpoints 3"
    assert _endpoints_detail(1 + 2) is _endpoints_detail(3)


def _run_job(pods: int) -> tuple[Cluster, list[Obj]]:
    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")],
                                                   behaviour=lambda _pod: PodTimings(pull=1)))
    client = cluster.client()
    client.create({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
        "spec": {"parallelism": pods, "completions": pods, "completionMode": "Indexed", "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "5"],
                            "resources": {"requests": {"cpu": "100m"}}}]}}},
    })
    cluster.run(100)
    return cluster, client.list("Pod", "default")


def test_a_jobs_pods_share_one_scheduling_request() -> None:
    """The scheduler's tally keeps each bound pod's request all run: pods holding the very same
    container list (a Job's) get the one request computed for the first of them."""
    cluster, pods = _run_job(3)
    assigned = cluster.scheduler._assigned
    requests = [assigned[pod["metadata"]["uid"]].request for pod in pods]
    assert all(request is requests[0] for request in requests)
    assert requests[0].resources == {"cpu": 100}


def test_equal_job_pod_classes_are_one_tuple() -> None:
    """The Job controller's view keeps one class per pod: equal ones (the same state and index in two
    Jobs) are one shared tuple."""
    from fakecluster.controllers.job.pod_view import pod_class, pod_facts

    pod = {"metadata": {"uid": "u1", "ownerReferences": [{"uid": "job", "controller": True}],
                        "annotations": {"batch.kubernetes.io/job-completion-index": "0"}},
           "status": {"phase": "Succeeded"}}
    other = {**pod, "metadata": {**pod["metadata"], "uid": "u2"}}
    first = pod_class(pod_facts(pod, "job", True), False)
    second = pod_class(pod_facts(other, "job", True), False)
    assert first is second
    assert first.index == 0 and first.failed is False
    # The facts a class is made from hold no pod's identity either: equal ones are one tuple too.
    assert pod_facts(pod, "job", True) is pod_facts(other, "job", True)
    running = {**other, "status": {"phase": "Running"}}
    assert pod_facts(running, "job", True) is not pod_facts(pod, "job", True)


def test_the_recorder_forgets_a_finished_pods_slot() -> None:
    """The trace recorder's per-labels memo of a pod's workload coordinates is dropped once the pod has
    finished, so it does not hold an entry per pod for the rest of the run."""
    from fakecluster.scenario.recorder import TraceRecorder
    from fakecluster.workload_plugin import Slot

    class _Plugin:
        kind = "ConfigMap"

        def slot_of(self, obj: Obj) -> Slot | None:
            return None

    cluster = Cluster(seed=0, config=ClusterConfig(nodes=[NodePool("node")],
                                                   behaviour=lambda _pod: PodTimings(pull=1)))
    recorder = TraceRecorder(cluster, _Plugin())  # type: ignore[arg-type]
    client = cluster.client()
    client.create(_pod("a"))
    cluster.run(3)
    assert len(recorder._slots) == 1
    cluster.run(100)
    assert client.get("Pod", "default", "a")["status"]["phase"] == "Succeeded"
    assert recorder._slots == {}
    assert [e.event for e in recorder.trace if e.name == "a"][-1] == "Succeeded"


def test_a_finished_pods_worker_is_a_small_stand_in() -> None:
    """A pod the kubelet is done with (its last status written, no timer left) is kept as its identity
    only until it is deleted; what the kubelet still does for it (a failPod, a node stop and start) is
    what it did for the done worker: nothing."""
    from fakecluster.kubelet.pod_worker import FinishedPod

    cluster, a, _ = _run_two_pods()
    kubelet = cluster.kubelet
    kept = kubelet._pods[a["metadata"]["uid"]]
    assert isinstance(kept, FinishedPod)
    assert (kept.namespace, kept.name, kept.node) == ("default", "a", a["spec"]["nodeName"])
    kubelet.fail_container("default", "a", 1)
    kubelet.stop_node(kept.node)
    kubelet.start_node(kept.node)
    cluster.run(200)
    assert cluster.client().get("Pod", "default", "a")["status"] == a["status"]
    cluster.client().delete("Pod", "default", "a")
    cluster.run(300)
    assert a["metadata"]["uid"] not in kubelet._pods


def test_kubelet_timers_share_their_callback_and_step() -> None:
    """Each timer a running pod's worker has pending holds the kubelet's one bound ``_fire`` and one
    bound method per step, not new equal ones of its own; the timers that ran have left its lists."""
    cluster, _, _ = _run_two_pods(until=3)
    workers = list(cluster.kubelet._pods.values())
    timers = [t for w in workers for t in (*w.timers, *(t for c in w.containers for t in c.timers))]  # type: ignore[union-attr]
    assert len(timers) >= 2
    assert not any(t.cancelled for t in timers)
    assert all(t.callback is timers[0].callback for t in timers)
    steps: dict[object, object] = {}
    for t in timers:
        assert steps.setdefault(t.args[1], t.args[1]) is t.args[1]


def test_a_pods_dns_name_is_one_string_for_the_network_and_its_record() -> None:
    """The pod's network record and the hostname record of its ready endpoint hold one interned FQDN."""
    from fakecluster.network.dns import pod_fqdn

    name = pod_fqdn("h", "svc", "ns")
    assert name == "h.svc.ns.svc.cluster.local"
    assert pod_fqdn("h", "svc", "ns") is name
    from fakecluster.clock import Clock
    from fakecluster.network.dns import DnsServer

    server = DnsServer(Clock(), 0.0)
    server.apply("ADDED", {"metadata": {"name": "s", "namespace": "ns",
                                        "labels": {"kubernetes.io/service-name": "svc"}},
                           "endpoints": [{"addresses": ["10.0.0.1"], "hostname": "h",
                                          "conditions": {"ready": True}, "targetRef": {"uid": "u"}}]})
    assert next(iter(server._hosts)) is name

