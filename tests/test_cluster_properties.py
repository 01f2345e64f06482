"""Stateful property test of a whole running cluster with JobSets: Hypothesis drives, invariants judge.

A :class:`ClusterMachine` boots a seeded cluster (1-3 nodes) with the JobSet plugin and one JobSet, then
interleaves rules: create another JobSet from a small generated shape, let virtual time pass (by a drawn
amount, or until quiet), fail or delete a pod, suspend or resume a JobSet, delete a child Job (Background),
fail or recover a node. After every step every invariant is checked; each cites the rule of the upstream file
it encodes (Kubernetes ``pkg/controller/...``, JobSet ``pkg/controllers/...``). They hold at one of three
moments:

- *always*: on the current state, or on every event of the API server's watch stream;
- *caught up*: nothing is due at the current instant, so the zero-latency reactions to the last write
  (JobSet reconcile, garbage collector) have run;
- *quiet*: nothing is due within ``QUIET`` (the Job controller's 1 s ``syncJobBatchPeriod``), so every
  batched Job sync triggered so far has run too.

Rules only sample the run at their ends, and many broken rules show for a second only (a duplicate pod
is deleted by the next sync), so the invariants on cluster state are also probed at every instant the
clock leaves (``Clock.on_advance``), with the moment known exactly: caught up always, quiet when the
next event is more than ``QUIET`` away.

A second cluster with the same seed receives the same rules in lockstep and must produce the same trace
digest after every step (trio's determinism test, for a whole cluster). Hypothesis shrinks a failing
run to a short rule sequence and prints it as the reproducer. The suite runs derandomized (root
``conftest.py``), so the examples, and the verdict, are the same on every run.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from fakecluster.api.batch_labels import JOB_TRACKING_FINALIZER
from fakecluster.api.objects import Obj, condition_true, controller_of
from fakecluster.api.watch import WatchEvent
from fakecluster.cluster import Cluster, ClusterConfig, NodePool
from fakecluster.kubelet.pod_timings import NEVER, PodTimings
from fakecluster.scenario.recorder import TraceRecorder
from fakecluster.scenario.trace import trace_digest
from jobset.api.v1alpha2 import jobset_types as api
from jobset.workload import plugin

NS = "default"
QUIET = 1.0
"""``syncJobBatchPeriod``: with nothing due within it, every batched Job sync and every reconcile has run."""
SUSPEND_SETTLE = 60.0
"""Default ``terminationGracePeriodSeconds`` (30 s) + PodGC's 20 s period for never-bound pods + slack."""
MAX_JOBSETS = 2
TERMINAL = ("Succeeded", "Failed")
COUNTERS = ("ready", "succeeded", "failed", "active", "suspended")


# ------------------------------------------------------------------------------------------ shapes
@dataclass(frozen=True, slots=True)
class ReplicatedJobShape:
    replicas: int
    parallelism: int
    completions: int
    indexed: bool
    restart_policy: str
    backoff_limit: int
    depends_on: str | None
    """``Ready``/``Complete`` on the previous ReplicatedJob (never on the first), or None."""
    timings: PodTimings


@dataclass(frozen=True, slots=True)
class JobSetShape:
    rjobs: tuple[ReplicatedJobShape, ...]
    in_order: bool
    failure_policy: Obj | None
    success_any: bool
    suspend: bool
    ttl: int | None


timings = st.builds(
    PodTimings,
    schedule=st.sampled_from([0.0, 0.5, 2.0]),
    pull=st.sampled_from([0.0, 1.0, 3.0]),
    start=st.sampled_from([0.0, 1.0]),
    ready=st.sampled_from([None, 0.0, 2.0]),
    exit_after=st.sampled_from([5.0, 1.0, 12.0, NEVER, 40.0]),
    exit_code=st.sampled_from([0, 0, 0, 1]),
    terminate=st.sampled_from([0.0, 2.0, 10.0]),
    jitter=st.sampled_from([0.0, 1.0]),
)


@st.composite
def jobset_shapes(draw: st.DrawFn) -> JobSetShape:
    count = draw(st.integers(1, 3))
    startup = draw(st.sampled_from(["AnyOrder", "InOrder", "DependsOn"]))
    rjobs = []
    for i in range(count):
        depends_on = None
        if startup == "DependsOn" and i > 0:
            depends_on = draw(st.sampled_from([None, "Ready", "Complete"]))
        rjobs.append(ReplicatedJobShape(
            replicas=draw(st.integers(1, 3)),
            parallelism=draw(st.integers(1, 3)),
            completions=draw(st.integers(1, 3)),
            indexed=draw(st.booleans().map(lambda b: not b)),
            restart_policy=draw(st.sampled_from(["Never", "OnFailure"])),
            backoff_limit=draw(st.integers(0, 2)),
            depends_on=depends_on,
            timings=draw(timings),
        ))
    failure_policy: Obj | None = None if draw(st.integers(0, 3)) == 3 else draw(st.builds(
        lambda n, strategy, rules: {"maxRestarts": n, "restartStrategy": strategy, "rules": rules},
        st.sampled_from([1, 2, 0]),
        st.sampled_from(["Recreate", "BlockingRecreate"]),
        st.sampled_from([
            [],
            [{"name": "failFirst", "action": "FailJobSet", "targetReplicatedJobs": ["r0"]}],
            [{"name": "restartOnBackoff", "action": "RestartJobSet",
              "onJobFailureReasons": ["BackoffLimitExceeded"]}],
        ]),
    ))
    return JobSetShape(
        rjobs=tuple(rjobs),
        in_order=startup == "InOrder",
        failure_policy=failure_policy,
        success_any=draw(st.booleans()),
        suspend=draw(st.integers(0, 3)) == 3,
        ttl=draw(st.sampled_from([None, None, 0, 30])),
    )


def jobset_manifest(name: str, shape: JobSetShape) -> Obj:
    rjobs = []
    for i, r in enumerate(shape.rjobs):
        job_spec: Obj = {
            "parallelism": r.parallelism,
            "completions": r.completions,
            "backoffLimit": r.backoff_limit,
            "template": {"spec": {"restartPolicy": r.restart_policy,
                                  "containers": [{"name": "c", "image": "busybox:1"}]}},
        }
        if not r.indexed:
            job_spec["completionMode"] = "NonIndexed"
        rjob: Obj = {"name": f"r{i}", "replicas": r.replicas, "template": {"spec": job_spec}}
        if r.depends_on is not None:
            rjob["dependsOn"] = [{"name": f"r{i - 1}", "status": r.depends_on}]
        rjobs.append(rjob)
    spec: Obj = {"replicatedJobs": rjobs, "suspend": shape.suspend,
                 "successPolicy": {"operator": "Any" if shape.success_any else "All"}}
    if shape.in_order:
        spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    if shape.failure_policy is not None:
        spec["failurePolicy"] = shape.failure_policy
    if shape.ttl is not None:
        spec["ttlSecondsAfterFinished"] = shape.ttl
    return {"apiVersion": api.API_VERSION, "kind": api.KIND, "metadata": {"name": name, "namespace": NS},
            "spec": spec}


# ------------------------------------------------------------------------------------------ pod helpers
def phase(pod: Obj) -> str | None:
    return (pod.get("status") or {}).get("phase")


def deleting(obj: Obj) -> bool:
    return obj["metadata"].get("deletionTimestamp") is not None


def pod_active(pod: Obj) -> bool:
    """``controller.FilterActivePods``: not terminal and not being deleted
    (``pkg/controller/controller_utils.go``)."""
    return phase(pod) not in TERMINAL and not deleting(pod)


def pod_terminating(pod: Obj) -> bool:
    """``status.terminating``: Pending or Running with a deletionTimestamp
    (``pkg/controller/job/job_controller.go``)."""
    return phase(pod) not in TERMINAL and deleting(pod)


def completion_index(pod: Obj) -> int | None:
    value = (pod["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-completion-index")
    return int(value) if value is not None and value.isdigit() else None


def parse_intervals(text: str | None) -> set[int]:
    """``"1,3-5"`` → {1, 3, 4, 5}: the ``completedIndexes`` wire form."""
    out: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def job_finished(job: Obj) -> bool:
    return condition_true(job, "Complete") or condition_true(job, "Failed")


def jobset_finished(js: Obj) -> bool:
    return condition_true(js, api.JOBSET_COMPLETED) or condition_true(js, api.JOBSET_FAILED)


def owned_by(obj: Obj, uid: str) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == uid


# ------------------------------------------------------------------------------------------ watch monitor
@dataclass
class StreamMonitor:
    """Checks the rules about *every* write on the API server's watch stream of all kinds; a broken rule
    is kept in ``violations[rule]`` for the invariant of that name to report."""

    last_rv: int = 0
    violations: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    pods_created: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """Per Job uid: pods ever created with that Job as controller (an upper bound for its counters)."""
    parallelism: dict[str, int] = field(default_factory=dict)
    """Per Job uid: its ``spec.parallelism``."""
    active_pods: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    """Per active pod uid: its Job's uid and its completion index."""
    suspended_since: dict[str, float] = field(default_factory=dict)
    """Per JobSet uid: when ``spec.suspend`` last turned true (absent while not suspended)."""
    now: Callable[[], float] = lambda: 0.0

    def on_event(self, event: WatchEvent) -> None:
        obj, old = event.object, event.old
        meta = obj["metadata"]
        where = f"t={self.now():g} {event.type} {event.kind} {meta['name']}"
        rv = int(meta["resourceVersion"])
        if rv <= self.last_rv:  # etcd3/store.go: one monotonic revision, events in RV order
            self._violate("stream", f"{where}: resourceVersion {rv} after {self.last_rv}")
        self.last_rv = max(rv, self.last_rv)
        if event.kind == "Pod":
            self._on_pod(where, event.type, obj)
        elif event.kind == api.KIND:
            self._on_jobset(where, event.type, obj, old)
        elif event.kind == "Job":
            self.parallelism[meta["uid"]] = obj["spec"].get("parallelism", 1)
            if event.type != "MODIFIED" or old is None:
                return
            for counter in ("succeeded", "failed"):  # job_controller.go: `failed` is monotonic
                new_value = (obj.get("status") or {}).get(counter, 0)
                old_value = (old.get("status") or {}).get(counter, 0)
                if new_value < old_value:
                    self._violate("stream", f"{where}: status.{counter} {old_value} -> {new_value}")

    def _violate(self, rule: str, message: str) -> None:
        self.violations[rule].append(message)

    def _on_pod(self, where: str, etype: str, pod: Obj) -> None:
        """Keep the set of active pods per Job and completion index; check both limits on each write."""
        uid = pod["metadata"]["uid"]
        ref = controller_of(pod)
        if ref is None or ref.get("kind") != "Job":
            return
        if etype == "ADDED":
            self.pods_created[ref["uid"]] += 1
        self.active_pods.pop(uid, None)
        if etype == "DELETED" or not pod_active(pod):
            return
        job, index = ref["uid"], completion_index(pod)
        siblings = [i for j, i in self.active_pods.values() if j == job]
        self.active_pods[uid] = (job, index)
        if index is not None and index in siblings:
            self._violate("index", f"{where}: a second active pod for index {index} of {ref['name']}")
        limit = self.parallelism.get(job, 1)
        if len(siblings) + 1 > limit:
            self._violate("parallelism",
                f"{where}: {len(siblings) + 1} active pods of {ref['name']} > parallelism {limit}")

    def _on_jobset(self, where: str, etype: str, js: Obj, old: Obj | None) -> None:
        uid = js["metadata"]["uid"]
        spec, status = js.get("spec") or {}, js.get("status") or {}
        suspended = bool(spec.get("suspend"))
        was = old is not None and bool((old.get("spec") or {}).get("suspend"))
        if suspended and not was:
            self.suspended_since[uid] = self.now()
        elif not suspended:
            self.suspended_since.pop(uid, None)
        self._check_jobset_status(where, spec, status, js)
        if etype != "MODIFIED" or old is None:
            return
        # jobset_controller.go reconcile: finished is final
        for cond in (api.JOBSET_COMPLETED, api.JOBSET_FAILED):
            if condition_true(old, cond) and not condition_true(js, cond):
                self._violate("stream", f"{where}: lost condition {cond}=True")
        old_state = (old.get("status") or {}).get("terminalState")
        if old_state and (js.get("status") or {}).get("terminalState") != old_state:
            self._violate("stream", f"{where}: terminalState {old_state} changed")
        new_restarts = status.get("restarts") or 0
        old_restarts = (old.get("status") or {}).get("restarts") or 0
        if new_restarts < old_restarts:  # failure_policy.go: restarts only ever incremented
            self._violate("stream", f"{where}: status.restarts {old_restarts} -> {new_restarts}")

    def _check_jobset_status(self, where: str, spec: Obj, status: Obj, js: Obj) -> None:
        """Rules about each written JobSet status on its own."""
        finished = [c for c in (api.JOBSET_COMPLETED, api.JOBSET_FAILED) if condition_true(js, c)]
        if len(finished) > 1 or status.get("terminalState", "") != "".join(finished):
            # jobset_controller.go setCondition: terminalState "Completed"/"Failed" is set together with that
            # condition
            self._violate("stream", f"{where}: terminalState {status.get('terminalState')!r}, {finished}")
        counted = status.get("restartsCountTowardsMax") or 0
        budget = (spec.get("failurePolicy") or {}).get("maxRestarts") or 0
        if counted > budget:  # failure_policy.go: RestartJobSet fails the JobSet once the budget is used up
            self._violate("stream", f"{where}: restartsCountTowardsMax {counted} > maxRestarts {budget}")
        names = [s.get("name") for s in status.get("replicatedJobsStatus") or ()]
        if names != sorted(names, reverse=True):  # jobset_controller.go: sorted in place, by name descending
            self._violate("stream", f"{where}: replicatedJobsStatus order {names}")


# ------------------------------------------------------------------------------------------ the world
Action = tuple[Any, ...]


class World:
    """One cluster and the actions the machine applies to it; the machine drives two in lockstep."""

    def __init__(self, seed: int, nodes: int, *, monitored: bool) -> None:
        self.shapes: dict[str, JobSetShape] = {}
        config = ClusterConfig(nodes=[NodePool("node", count=nodes)], behaviour=self._behaviour)
        self.cluster = Cluster(seed, config)
        plugin.install(self.cluster, {})
        self.client = self.cluster.client()
        self.recorder = TraceRecorder(self.cluster, plugin)
        self.target = 0.0
        self.failed_nodes: list[str] = []
        self.last_recovery = -math.inf
        self.monitor: StreamMonitor | None = None
        self.probe: Callable[[], None] | None = None
        """Called at every instant virtual time leaves (see :meth:`_on_advance`); set by the machine."""
        self._moment: tuple[float, bool] | None = None
        """During a probe: the instant whose state is checked, and whether it is quiet."""
        self._instant = 0.0
        self._probed = (-1, False)
        """Server writes and quietness at the last probe: an unchanged state is not checked again."""
        if monitored:
            self.monitor = StreamMonitor(now=lambda: self.cluster.clock.now)
            self.cluster.server.watch(None, self.monitor.on_event)
            self.cluster.clock.on_advance = self._on_advance

    def _on_advance(self, when: float) -> None:
        """The clock is about to run the events at ``when``: every event up to the instant it leaves has
        run, so the cluster is caught up as of that instant, and quiet if ``when`` is more than ``QUIET``
        later. Probing here checks the invariants at every instant, not only at the end of a rule."""
        left, self._instant = self._instant, when
        writes, quiet = self.cluster.server.writes, when > left + QUIET
        probed_writes, probed_quiet = self._probed
        if self.probe is None or (writes == probed_writes and (probed_quiet or not quiet)):
            return
        self._probed = (writes, quiet)
        self._moment = (left, quiet)
        try:
            self.probe()
        finally:
            self._moment = None

    def _behaviour(self, pod: Obj) -> PodTimings:
        labels = pod["metadata"].get("labels") or {}
        shape = self.shapes.get(labels.get(api.JOBSET_NAME_KEY, ""))
        rjob = labels.get(api.REPLICATED_JOB_NAME_KEY, "")
        if shape is None or not rjob.startswith("r"):
            return PodTimings()
        return shape.rjobs[int(rjob[1:])].timings

    @property
    def now(self) -> float:
        """The instant the cluster's state belongs to (during a probe: the instant being left)."""
        return self._moment[0] if self._moment is not None else self.cluster.clock.now

    def caught_up(self) -> bool:
        """Nothing due now: every zero-latency reaction (JobSet reconcile, GC) to the last write has run."""
        if self._moment is not None:
            return True
        due = self.cluster.clock.next_time()
        return due is None or due > self.now

    def quiet(self) -> bool:
        """Nothing due within ``QUIET``: every batched sync and reconcile triggered so far has run."""
        if self._moment is not None:
            return self._moment[1]
        due = self.cluster.clock.next_time()
        return due is None or due > self.now + QUIET

    def digest(self) -> str:
        return trace_digest(self.recorder.trace) + self.recorder.write_digest()

    def list(self, kind: str) -> list[Obj]:
        return sorted(self.client.list(kind, NS), key=lambda o: o["metadata"]["name"])

    def nodes(self) -> list[str]:
        return sorted(n["metadata"]["name"] for n in self.client.list("Node"))

    # ------------------------------------------------------------------ actions
    def apply(self, action: Action) -> None:
        name, *args = action
        getattr(self, f"do_{name}")(*args)

    def do_create(self, shape: JobSetShape) -> None:
        name = f"js-{len(self.shapes)}"
        self.shapes[name] = shape
        self.client.create(jobset_manifest(name, shape))

    def do_advance(self, seconds: float) -> None:
        self.target = max(self.target, self.now) + seconds
        self.cluster.run(self.target)
        self.cluster.clock.advance_to(self.target)

    def do_settle(self) -> None:
        """Run until quiet (at most 10 virtual minutes)."""
        for _ in range(600):
            if self.quiet():
                return
            self.do_advance(1.0)

    def _live_pods(self) -> list[Obj]:
        return [p for p in self.list("Pod") if phase(p) == "Running" and not deleting(p)
                and p["spec"].get("nodeName") not in self.failed_nodes]

    def do_fail_pod(self, pick: int, exit_code: int) -> None:
        pods = self._live_pods()
        if pods:
            self.cluster.kubelet.fail_container(NS, pods[pick % len(pods)]["metadata"]["name"], exit_code)

    def do_delete_pod(self, pick: int) -> None:
        pods = [p for p in self.list("Pod") if pod_active(p)]
        if pods:
            self.client.delete("Pod", NS, pods[pick % len(pods)]["metadata"]["name"])

    def do_suspend(self, pick: int, suspend: bool) -> None:
        jobsets = [js for js in self.list(api.KIND) if not deleting(js)]
        if jobsets:
            name = jobsets[pick % len(jobsets)]["metadata"]["name"]
            self.client.patch(api.KIND, NS, name, {"spec": {"suspend": suspend}})

    def do_delete_job(self, pick: int) -> None:
        jobs = [j for j in self.list("Job") if not deleting(j)]
        if jobs:
            name = jobs[pick % len(jobs)]["metadata"]["name"]
            self.client.delete("Job", NS, name, propagation_policy="Background")

    def do_fail_node(self, pick: int) -> None:
        healthy = [n for n in self.nodes() if n not in self.failed_nodes]
        if len(healthy) >= 2:  # keep one node up, else nothing can run and nothing is evicted
            node = healthy[pick % len(healthy)]
            self.cluster.node_lifecycle.fail_node(node)
            self.failed_nodes.append(node)

    def do_recover_node(self, pick: int) -> None:
        if self.failed_nodes:
            node = self.failed_nodes.pop(pick % len(self.failed_nodes))
            self.cluster.node_lifecycle.recover_node(node)
            self.last_recovery = self.now


# ------------------------------------------------------------------------------------------ the machine
INVARIANTS: list[str] = []
"""The machine's invariants on cluster state, which :meth:`World.probe` runs between rules too."""
Method = Callable[["ClusterMachine"], None]


def checked() -> Callable[[Method], Method]:
    """``@invariant()`` that also records the method in :data:`INVARIANTS`."""

    def register(method: Method) -> Method:
        INVARIANTS.append(method.__name__)
        return invariant()(method)

    return register


@dataclass
class Coverage:
    """How often each conditional invariant actually compared something (the file's own sanity check)."""

    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def hit(self, name: str) -> None:
        self.counts[name] += 1


COVERAGE = Coverage()


class ClusterMachine(RuleBasedStateMachine):
    """Rules drive a cluster (and its lockstep twin); invariants check the one with the watch monitor."""

    def __init__(self) -> None:
        super().__init__()
        self.world: World
        self.twin: World

    def _apply(self, *action: Any) -> None:
        self.world.apply(action)
        self.twin.apply(action)

    @initialize(seed=st.integers(0, 2**16), nodes=st.integers(1, 3), shape=jobset_shapes())
    def boot(self, seed: int, nodes: int, shape: JobSetShape) -> None:
        """Every run starts with a cluster and one JobSet; ``create_jobset`` may add another."""
        self.world = World(seed, nodes, monitored=True)
        self.twin = World(seed, nodes, monitored=False)
        self.world.probe = self._check_state
        self._apply("create", shape)

    def _check_state(self) -> None:
        for name in INVARIANTS:
            getattr(self, name)()

    # ------------------------------------------------------------------ rules
    @precondition(lambda self: len(self.world.shapes) < MAX_JOBSETS)
    @rule(shape=jobset_shapes())
    def create_jobset(self, shape: JobSetShape) -> None:
        self._apply("create", shape)

    @rule(seconds=st.sampled_from([1.0, 0.5, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 400.0]))
    def advance(self, seconds: float) -> None:
        self._apply("advance", seconds)

    @rule()
    def settle(self) -> None:
        self._apply("settle")

    @rule(pick=st.integers(0, 30), exit_code=st.sampled_from([1, 0, 2, 137]))
    def fail_pod(self, pick: int, exit_code: int) -> None:
        self._apply("fail_pod", pick, exit_code)

    @rule(pick=st.integers(0, 30))
    def delete_pod(self, pick: int) -> None:
        self._apply("delete_pod", pick)

    @rule(pick=st.integers(0, 3), suspend=st.booleans())
    def suspend(self, pick: int, suspend: bool) -> None:
        self._apply("suspend", pick, suspend)

    @rule(pick=st.integers(0, 30))
    def delete_job(self, pick: int) -> None:
        self._apply("delete_job", pick)

    @precondition(lambda self: len(self.world.nodes()) >= 2)
    @rule(pick=st.integers(0, 2))
    def fail_node(self, pick: int) -> None:
        self._apply("fail_node", pick)

    @precondition(lambda self: bool(self.world.failed_nodes))
    @rule(pick=st.integers(0, 2))
    def recover_node(self, pick: int) -> None:
        self._apply("recover_node", pick)

    # ------------------------------------------------------------------ always
    @invariant()
    def same_seed_same_trace(self) -> None:
        """trio's ``test_scheduler_determinism``: the same rules on a fresh cluster with the same seed
        give the same trace and write log."""
        assert self.world.digest() == self.twin.digest(), "the lockstep twin diverged"

    @checked()
    def watch_stream_rules_hold(self) -> None:
        """Per write: resourceVersion strictly increases (``storage/etcd3/store.go``); a JobSet's
        Completed/Failed condition and terminalState are never lost and come together
        (``jobset_controller.go`` ``reconcile``, ``setCondition``); ``restarts`` never decreases and
        ``restartsCountTowardsMax`` stays within ``maxRestarts`` (``failure_policy.go``);
        ``replicatedJobsStatus`` is in descending name order (``calculateReplicatedJobStatuses``); a Job's
        ``succeeded``/``failed`` never decrease (``job_controller.go``)."""
        self._assert_no_violations("stream")

    @checked()
    def one_active_pod_per_completion_index(self) -> None:
        """``job_controller.go`` ``manageJob``, at every pod write: Indexed Jobs create pods only for indexes
        no active pod covers (``firstPendingIndexes``), so at most one active pod per (Job, completion index).
        A duplicate is deleted on the next sync, a second later, so only the watch stream reliably sees
        one."""
        self._assert_no_violations("index")

    @checked()
    def active_pods_within_parallelism(self) -> None:
        """``job_controller.go`` ``manageJob``, at every pod write: ``wantActive <= parallelism`` and surplus
        pods are deleted before any creation."""
        self._assert_no_violations("parallelism")

    @checked()
    def finished_jobs_have_no_live_pods(self) -> None:
        """``job_controller.go``: ``active`` is 0 for finished Jobs and ``terminating`` must be 0 (the
        terminal condition waits for terminating pods, 1.31+); none of their pods is live afterwards."""
        pods = self._pods_by_job()
        for job in self.world.list("Job"):
            if not job_finished(job):
                continue
            status = job.get("status") or {}
            counts = self._recount(pods.get(job["metadata"]["uid"], []))
            assert counts == (0, 0, 0), f"{job['metadata']['name']}: active/ready/terminating pods {counts}"
            stored = (status.get("active", 0), status.get("ready", 0), status.get("terminating", 0))
            assert stored == (0, 0, 0), f"{job['metadata']['name']}: status active/ready/terminating {stored}"

    @checked()
    def suspended_jobset_has_no_running_pods(self) -> None:
        """``jobset_controller.go`` ``suspendJobs`` + ``job_controller.go``: a suspended JobSet suspends its
        Jobs, whose active pods are deleted; after their grace period (and PodGC's pass for never-bound ones)
        none is still running. Pods on a node whose kubelet is down cannot finish terminating and are left
        out."""
        world = self.world
        monitor = world.monitor
        assert monitor is not None
        for js in world.list(api.KIND):
            since = monitor.suspended_since.get(js["metadata"]["uid"])
            if since is None or world.now < max(since, world.last_recovery) + SUSPEND_SETTLE:
                continue
            COVERAGE.hit("suspended")
            for pod in world.list("Pod"):
                labels = pod["metadata"].get("labels") or {}
                if labels.get(api.JOBSET_NAME_KEY) != js["metadata"]["name"]:
                    continue
                if pod["spec"].get("nodeName") in world.failed_nodes:
                    continue
                assert phase(pod) in TERMINAL, (
                    f"{pod['metadata']['name']} is {phase(pod)} {world.now - since:g}s after "
                    f"{js['metadata']['name']} was suspended")

    # ------------------------------------------------------------------ caught up
    @checked()
    def replicated_jobs_status_is_a_recount(self) -> None:
        """``getChildJobs`` / ``calculateReplicatedJobStatuses`` (``jobset_controller.go``): one entry per
        spec ReplicatedJob counting the current attempt's Jobs only: ``ready`` = unfinished with
        succeeded+ready >= min(parallelism, completions), ``active`` = unfinished with status.active > 0,
        ``suspended`` = unfinished with spec.suspend, ``succeeded``/``failed`` = Complete/Failed condition
        True."""
        if not self.world.caught_up():
            return
        jobs = self.world.list("Job")
        for js in self.world.list(api.KIND):
            if deleting(js):
                continue
            COVERAGE.hit("replicatedJobsStatus")
            expected = recount_replicated_jobs(js, jobs)
            stored = {s["name"]: tuple(s.get(c, 0) for c in COUNTERS)
                      for s in (js.get("status") or {}).get("replicatedJobsStatus") or ()}
            assert stored == expected, (
                f"{js['metadata']['name']} {COUNTERS}: status {stored} != recount {expected}")

    @checked()
    def owner_references_point_to_live_owners(self) -> None:
        """``pkg/controller/garbagecollector/garbagecollector.go``: once the garbage collector has run, an
        object none of whose owners exists (by uid) is deleted; so every object not being deleted has live
        owners."""
        if not self.world.caught_up():
            return
        server = self.world.cluster.server
        for kind in ("Pod", "Job", "Service", api.KIND):
            for obj in self.world.list(kind):
                if deleting(obj):
                    continue
                for ref in obj["metadata"].get("ownerReferences") or ():
                    COVERAGE.hit("ownerReferences")
                    assert server.get_by_uid(ref["uid"]) is not None, (
                        f"{kind} {obj['metadata']['name']}: owner {ref['kind']} {ref['name']} is gone")

    @checked()
    def finished_jobset_has_no_active_jobs(self) -> None:
        """``jobset_controller.go`` ``reconcile`` / ``success_policy.go``: the reconcile after Completed or
        Failed deletes every active child Job (foreground); so at quiescence each is finished or being
        deleted."""
        if not self.world.caught_up():
            return
        jobs = self.world.list("Job")
        for js in self.world.list(api.KIND):
            if not jobset_finished(js):
                continue
            COVERAGE.hit("finishedJobSet")
            for job in jobs:
                if owned_by(job, js["metadata"]["uid"]):
                    assert job_finished(job) or deleting(job), (
                        f"{job['metadata']['name']} is active although {js['metadata']['name']} finished")

    @checked()
    def suspended_jobset_suspends_its_jobs(self) -> None:
        """``jobset_controller.go`` ``suspendJobs``: while ``spec.suspend`` is true each reconcile sets
        ``spec.suspend=true`` on every active Job of the current attempt, and new Jobs are created
        suspended."""
        if not self.world.caught_up():
            return
        jobs = self.world.list("Job")
        for js in self.world.list(api.KIND):
            if not js["spec"].get("suspend") or jobset_finished(js) or deleting(js):
                continue
            restarts = (js.get("status") or {}).get("restarts") or 0
            for job in jobs:
                labels = job["metadata"].get("labels") or {}
                if (not owned_by(job, js["metadata"]["uid"]) or int(labels[api.RESTARTS_KEY]) < restarts
                        or job_finished(job) or deleting(job)):
                    continue
                COVERAGE.hit("suspendedJobs")
                assert job["spec"].get("suspend"), (
                    f"{job['metadata']['name']} runs although {js['metadata']['name']} is suspended")

    # ------------------------------------------------------------------ quiet
    @checked()
    def job_status_matches_its_pods(self) -> None:
        """``job_controller.go`` (``syncJob``, ``trackJobStatusAndRemoveFinalizers``), once the controller has
        synced: ``active``/``ready``/``terminating`` equal the recount from the Job's pods; nothing is left in
        ``uncountedTerminatedPods``; Indexed ``succeeded`` is the size of ``completedIndexes``, which holds
        every succeeded pod's index; ``succeeded``/``failed`` cover the pods that ended undisturbed and never
        exceed the pods ever created."""
        if not self.world.quiet():
            return
        monitor = self.world.monitor
        assert monitor is not None
        pods = self._pods_by_job()
        for job in self.world.list("Job"):
            name, uid = job["metadata"]["name"], job["metadata"]["uid"]
            status = job.get("status") or {}
            own = pods.get(uid, [])
            succeeded, failed = status.get("succeeded", 0), status.get("failed", 0)
            assert succeeded + failed <= monitor.pods_created[uid], (
                f"{name}: succeeded {succeeded} + failed {failed} > {monitor.pods_created[uid]} pods created")
            if job_finished(job):
                continue
            COVERAGE.hit("jobStatus")
            stored = (status.get("active", 0), status.get("ready", 0), status.get("terminating", 0))
            assert stored == self._recount(own), (
                f"{name} (active, ready, terminating): status {stored} != pods {self._recount(own)}")
            uncounted = status.get("uncountedTerminatedPods") or {}
            assert not any(uncounted.values()), f"{name}: uncountedTerminatedPods {uncounted}"
            if deleting(job):
                continue
            undisturbed = [p for p in own if not deleting(p)]
            done = [p for p in undisturbed if phase(p) == "Succeeded"]
            if job["spec"].get("completionMode") == "Indexed":
                completed = parse_intervals(status.get("completedIndexes"))
                assert succeeded == len(completed), f"{name}: succeeded {succeeded} vs {completed}"
                missing = {completion_index(p) for p in done} - completed
                assert not missing, f"{name}: succeeded indexes {missing} not in completedIndexes"
            else:
                assert succeeded >= len(done), f"{name}: succeeded {succeeded} < {len(done)} pods"
            ended = sum(1 for p in undisturbed if phase(p) == "Failed")
            assert failed >= ended, f"{name}: failed {failed} < {ended} failed pods"

    @checked()
    def terminated_pods_lose_the_tracking_finalizer(self) -> None:
        """``job_controller.go`` ``trackJobStatusAndRemoveFinalizers``: a terminated (or deleted) pod's
        ``batch.kubernetes.io/job-tracking`` finalizer is removed once the pod is counted, and finished or
        deleted Jobs release all their pods."""
        if not self.world.quiet():
            return
        for pod in self.world.list("Pod"):
            if JOB_TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ()):
                assert phase(pod) not in TERMINAL and not deleting(pod), (
                    f"{pod['metadata']['name']} ({phase(pod)}, deleting={deleting(pod)}) keeps the finalizer")

    # ------------------------------------------------------------------ helpers
    def _assert_no_violations(self, rule: str) -> None:
        monitor = self.world.monitor
        assert monitor is not None
        found = monitor.violations[rule]
        assert not found, "\n".join(found[:5] + [f"... {len(found) - 5} more"] * (len(found) > 5))

    def _pods_by_job(self) -> dict[str, list[Obj]]:
        pods: dict[str, list[Obj]] = defaultdict(list)
        for pod in self.world.list("Pod"):
            ref = controller_of(pod)
            if ref is not None and ref.get("kind") == "Job":
                pods[ref["uid"]].append(pod)
        return pods

    @staticmethod
    def _recount(pods: list[Obj]) -> tuple[int, int, int]:
        active = [p for p in pods if pod_active(p)]
        ready = sum(1 for p in active if condition_true(p, "Ready"))
        return len(active), ready, sum(1 for p in pods if pod_terminating(p))


def recount_replicated_jobs(js: Obj, jobs: list[Obj]) -> dict[str, tuple[int, ...]]:
    """``getChildJobs`` / ``calculateReplicatedJobStatuses`` (``jobset_controller.go``), written out
    independently of ``jobset.controller.child_jobs``."""
    restarts = (js.get("status") or {}).get("restarts") or 0
    counts = {r["name"]: dict.fromkeys(COUNTERS, 0) for r in js["spec"]["replicatedJobs"]}
    for job in jobs:
        ref = controller_of(job)
        if ref is None or ref.get("uid") != js["metadata"]["uid"]:
            continue
        labels = job["metadata"].get("labels") or {}
        if int(labels[api.RESTARTS_KEY]) < restarts:
            continue
        entry = counts.get(labels.get(api.REPLICATED_JOB_NAME_KEY, ""))
        if entry is None:
            continue
        status, spec = job.get("status") or {}, job["spec"]
        finished = next((c["type"] for c in status.get("conditions") or ()
                         if c["type"] in ("Complete", "Failed") and c["status"] == "True"), None)
        if finished == "Complete":
            entry["succeeded"] += 1
        elif finished == "Failed":
            entry["failed"] += 1
        else:
            pods_count = spec.get("parallelism", 1)
            if spec.get("completions") is not None:
                pods_count = min(pods_count, spec["completions"])
            entry["ready"] += int(status.get("succeeded", 0) + (status.get("ready") or 0) >= pods_count)
            entry["active"] += int((status.get("active") or 0) > 0)
            entry["suspended"] += int(bool(spec.get("suspend")))
    return {name: tuple(entry[c] for c in COUNTERS) for name, entry in counts.items()}


MACHINE_SETTINGS = settings(
    max_examples=250,
    stateful_step_count=30,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
"""About 40 ms of wall time per example (two clusters, probes included), so ~10 s for the file. A
throwaway mutant for every invariant (a controller or server rule broken on purpose) was caught within
these examples, most within the first 50; the examples change whenever this machine's source does."""


def test_cluster_invariants_hold_under_random_interventions() -> None:
    """Runs the machine, then checks that each conditional invariant compared something at all."""
    run_state_machine_as_test(ClusterMachine, settings=MACHINE_SETTINGS)
    for name in ("replicatedJobsStatus", "jobStatus", "ownerReferences", "finishedJobSet", "suspended",
                 "suspendedJobs"):
        assert COVERAGE.counts[name] > 0, f"invariant {name} never compared anything: {dict(COVERAGE.counts)}"
