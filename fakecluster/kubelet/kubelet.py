"""Every node's kubelet: runs bound pods through real phases and status on the virtual clock.

Upstream: ``pkg/kubelet/kubelet.go`` (``SyncPod``, ``SyncTerminatingPod``), ``pkg/kubelet/pod_workers.go``,
``pkg/kubelet/kuberuntime/kuberuntime_manager.go`` (``computePodActions``: restarts and back-off) and
``pkg/kubelet/prober/``; the status it writes is built in :mod:`fakecluster.kubelet.pod_worker`.

For each pod bound to a node (``spec.nodeName`` set) the kubelet, with the pod's
:class:`~fakecluster.kubelet.pod_timings.PodTimings` (each delay plus a seeded jitter in ``[0, jitter]``,
drawn once per pod when it is admitted, in watch-event order):

1. admits it: ``startTime``, ``hostIP``, ``podIP``, sandbox ready, containers waiting in
   ``ContainerCreating`` (``PodInitializing`` when there are init containers);
2. after ``pull + start`` runs the init containers one by one (native sidecars stay running), then the
   regular containers: ``running``, ``started``, phase ``Running``;
3. marks containers ready after the rule's ``ready`` delay, or as their probe workers report
   (:mod:`fakecluster.kubelet.prober`: started at admission, ticking on ``periodSeconds`` from then,
   ``initialDelaySeconds``, thresholds, liveness/startup kills), or at once without probes;
4. ends containers after the rule's ``exit`` delay, or what their command line says
   (:mod:`fakecluster.kubelet.commands`), and applies the restart policy with the kubelet's crash-loop
   back-off (``pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff``: the first restart is
   immediate, then 10 s doubling to 300 s, reset after 10 min without a crash);
5. on ``deletionTimestamp`` stops the containers after ``terminate`` (143, SIGTERM honoured) or at the
   grace deadline (137, SIGKILL), writes the terminal phase (``Failed`` unless every container had
   exited 0, as since kubernetes#115331), then deletes the pod with grace 0. The object stays until its
   finalizers (the Job controller's ``batch.kubernetes.io/job-tracking``) are removed.

Zero delays chain within one clock event and the status is written once per instant, only when it
changed: a pod with all-zero timings goes from bound to Running+Ready in a single write. Work per event
is O(containers of that pod); nothing scans all pods and nothing deep-copies a pod.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from fakecluster.api.errors import ApiError
from fakecluster.api.objects import Obj
from fakecluster.api.watch import WatchEvent
from fakecluster.client.internal import InternalClient
from fakecluster.clock import Clock, Timer, rfc3339
from fakecluster.kubelet.commands import command_outcome
from fakecluster.kubelet.events import KubeletEvents
from fakecluster.kubelet.pod_timings import BehaviourResolver, draw_jitters
from fakecluster.kubelet.pod_worker import (
    INIT,
    NO_STEPS,
    REGULAR,
    RUNNING,
    SIDECAR,
    TERMINAL_PHASES,
    TERMINATED,
    UNKNOWN_MESSAGE,
    WAITING,
    ContainerRun,
    FinishedPod,
    PodWorker,
    build_status,
    container_id,
    go_duration,
)
from fakecluster.kubelet.prober import READINESS, STARTUP, Prober
from fakecluster.network.network import Network
from fakecluster.runtime import capped_backoff

BACKOFF_BASE = 10.0
"""``backOffPeriod`` (pkg/kubelet/kubelet.go)."""
MAX_CONTAINER_BACKOFF = 300.0
"""``MaxContainerBackOff``; an entry older than twice this is forgotten (``flowcontrol.Backoff``)."""
DEFAULT_GRACE = 30
SIGTERM_EXIT, SIGKILL_EXIT = 143, 137
DEADLINE_EXCEEDED_REASON = "DeadlineExceeded"
DEADLINE_EXCEEDED_MESSAGE = "Pod was active on the node longer than the specified deadline"
"""``reason``/``message`` of ``pkg/kubelet/active_deadline.go``."""
Step = Callable[..., None]


def pull_error_message(image: str) -> str:
    """containerd's answer for an image that cannot be resolved, as the kubelet reports it."""
    first, _, rest = image.partition("/")
    if not rest:
        ref = f"docker.io/library/{image}"
    elif "." in first or ":" in first or first == "localhost":
        ref = image
    else:
        ref = f"docker.io/{image}"
    if ":" not in ref.rsplit("/", 1)[-1] and "@" not in ref:
        ref += ":latest"
    return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
            f'failed to resolve reference "{ref}": {ref}: not found')


def _noop(_worker: PodWorker) -> None:
    """A step that changes nothing: used to run queued steps and re-sync status."""


def _finished_noop() -> None:
    """What a :class:`FinishedPod`'s re-sync after a kubelet restart does: nothing (as ``_fire`` does for
    any done worker), scheduled all the same so the clock runs the same sequence of calls."""


def _all_terminated(containers: list[ContainerRun]) -> bool:
    """Whether every container of ``containers`` has terminated: a loop, not ``all()`` over a generator,
    whose resumptions from C cost more (this runs at every container exit)."""
    for c in containers:  # noqa: SIM110 -- see above
        if c.state != TERMINATED:
            return False
    return True


def runs_program(worker: PodWorker, c: ContainerRun) -> bool:
    """The program runs in ``program.container``, else in the pod's first regular container."""
    program = worker.timings.program
    if program is None:
        return False
    if program.container is not None:
        return c.name == program.container
    return bool(worker.containers) and c is worker.containers[0]


class Kubelet:
    """The kubelets of all nodes, as one watcher.

    ``client``: its API access (user ``system:node``), with the donated status writes of
    :class:`~fakecluster.client.internal.InternalClient`; ``rng``: its own seeded stream (per-pod
    jitter); ``behaviour``: each pod's timings; ``network``: the pod network its sandboxes join and its
    containers' programs run on (the kubelet attaches itself as the network's container runtime)."""

    def __init__(self, client: InternalClient, clock: Clock, rng: random.Random, *,
                 behaviour: BehaviourResolver, network: Network) -> None:
        self.clock = clock
        self.client = client
        self._rng = rng
        self._behaviour = behaviour
        self._pods: dict[str, PodWorker | FinishedPod] = {}
        """Every pod bound to one of the nodes until it is deleted; a done one as a :class:`FinishedPod`
        once nothing is pending for it (its last status written in :meth:`_fire`, or made terminal by
        another writer in :meth:`_on_pod`)."""
        self._uids: dict[str, dict[str, str]] = {}
        """namespace -> pod name -> uid of the pods in :attr:`_pods`: by namespace, not by a (namespace,
        name) key, so the one key per pod is its name, not a tuple of some 64 bytes of its own."""
        self._by_node: dict[str, dict[str, None]] = {}
        """Worker uids per node, so a node event costs O(pods on that node)."""
        self._stopped_nodes: dict[str, list[tuple[list[Timer], Timer]]] = {}
        """Nodes whose kubelet is down, with the timers it had pending (and the lists they belong to)."""
        self._host_ips: dict[str, str] = {}
        self._pod_ips = 0
        self._stamp_second = -1
        self._stamp = ""
        self.status_writes = 0
        self._fire_later: Callable[..., None] = self._fire
        """:meth:`_fire` bound once, for the timers :meth:`_after` sets: every timer holds its callback
        and args, and a pod's fired timers stay in its lists until it stops (:meth:`stop_node` reads
        the lists, passing over the timers that ran), so a bound-method object per timer would be some
        200 bytes per running pod."""
        self._steps: dict[Step, Step] = {}
        """The steps :meth:`_after` has set timers for, each its own key: ``self._pulled`` makes a new,
        equal bound method at every use, and the timer keeps it; this keeps one of each."""
        self.errors: list[str] = []
        self.network = network
        self.network.attach_runtime(self)
        self.events: KubeletEvents | None = None
        """The pod Events recorder, when the cluster records them (opt-in: :mod:`.events`)."""
        self.prober = Prober(self.clock, fire=self._fire, kill=self._probe_kill,
                             on_started=self._probe_started, listening=self._program_listening,
                             on_failed=self._probe_failed)
        self.client.watch("Pod", self._on_pod)

    # ------------------------------------------------------------------ public
    def fail_container(self, namespace: str, name: str, exit_code: int, container: str | None = None) -> None:
        """The scenario ``failPod`` action: the pod's running containers (or only ``container``) exit now
        with ``exit_code``; the restart policy then applies as for any other exit."""
        worker = self._pods.get(self._uids.get(namespace, {}).get(name, ""))
        if worker is None:
            raise ValueError(f"pod {namespace}/{name} is not running on any node")
        if isinstance(worker, FinishedPod) or worker.done or worker.terminating \
                or worker.node in self._stopped_nodes:
            return
        targets = (worker.containers if container is None
                   else [c for c in worker.all_containers() if c.name == container])
        for c in targets:
            if c.state == RUNNING:
                worker.queue_step(self._container_exited, (c, c.run_id, exit_code))
        self._fire(worker, _noop)

    def program_exited(self, worker: PodWorker, c: ContainerRun, run: int, exit_code: int) -> None:
        """The container's program ended (its work done, or it gave up): the container exits with that
        code, and the restart policy applies as for any exit (:mod:`fakecluster.network`)."""
        self._fire(worker, self._container_exited, c, run, exit_code)

    def program_ready(self, worker: PodWorker, c: ContainerRun, run: int) -> None:
        """``program.ready`` reached: the container is ready until it stops."""
        self._fire(worker, self._container_ready, c, run)

    def stop_node(self, node_name: str) -> None:
        """The node's kubelet dies: every pod on it freezes where it is. Pending timers are cancelled (and
        kept for :meth:`start_node`; a timer that already ran reads as cancelled, so no past step runs
        twice after the restart), nothing on the node writes pod status or deletes a pod any more, so
        a graceful deletion is never completed here: the pod stays ``Terminating`` until something else
        (PodGC, a force delete) removes it. Pods bound to the node later are never admitted."""
        if node_name in self._stopped_nodes:
            return
        saved: list[tuple[list[Timer], Timer]] = []
        for uid in self._by_node.get(node_name, {}):
            worker = self._pods[uid]
            if isinstance(worker, FinishedPod):
                continue  # done, and had no timer left when it became the stand-in
            for owner in (worker.timers, *(c.timers for c in worker.all_containers())):
                for timer in owner:
                    if not timer.cancelled:
                        timer.cancel()
                        saved.append((owner, timer))
        self._stopped_nodes[node_name] = saved

    def start_node(self, node_name: str) -> None:
        """The kubelet comes back (its containers kept running): frozen timers resume, those already due
        at once, and every pod on the node is re-synced (admitted if it never was, killed if it was
        deleted meanwhile, its status rewritten, e.g. ``Ready`` again after the node controller's
        ``MarkPodsNotReady``)."""
        saved = self._stopped_nodes.pop(node_name, None)
        if saved is None:
            return
        for uid in list(self._by_node.get(node_name, {})):  # first: a missed deletion beats a due exit
            worker = self._pods[uid]
            if isinstance(worker, FinishedPod):
                self.clock.call_soon(_finished_noop)  # the call _fire would skip: the same clock sequence
            else:
                self.clock.call_soon(self._fire, worker, self._resync)
        now = self.clock.now
        for owner, timer in saved:
            if timer in owner:  # else the worker dropped its timers meanwhile (made terminal, deleted)
                owner.remove(timer)
                owner.append(self.clock.call_at(max(timer.when, now), timer.callback, *timer.args))

    def _resync(self, worker: PodWorker) -> None:
        """First sync after a kubelet restart: what the dead kubelet missed."""
        if worker.start_time is None:
            self._admit(worker)
            return
        try:
            pod = self.client.get("Pod", worker.namespace, worker.name)
        except ApiError:
            return
        if pod["metadata"].get("deletionTimestamp") is not None:
            self._on_deletion(worker)

    # ------------------------------------------------------------------ watch
    def _on_pod(self, event: WatchEvent) -> None:
        pod = event.object
        meta = pod["metadata"]
        uid = meta["uid"]
        worker = self._pods.get(uid)
        if event.type == "DELETED":
            self.network.pod_stopped(uid)
            if worker is not None:
                if isinstance(worker, PodWorker):
                    worker.cancel_timers()
                    worker.done = True
                del self._pods[uid]
                self.prober.forget(uid)
                self._by_node.get(worker.node, {}).pop(uid, None)
                names = self._uids.get(worker.namespace, {})
                if names.get(worker.name) == uid:
                    del names[worker.name]
            return
        if worker is None:
            if pod["spec"].get("nodeName") and (pod.get("status") or {}).get("phase") not in TERMINAL_PHASES:
                self._add(pod)
            return
        if isinstance(worker, FinishedPod) or worker.done:
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            if worker.failed_reason is not None:
                return  # this kubelet failed it (active deadline) and is stopping its containers
            worker.cancel_timers()  # someone else (PodGC, an evictor) made it terminal: it stays so
            worker.done = True
            self._pods[uid] = FinishedPod(worker)  # nothing pending: its timers and steps just went
        elif meta.get("deletionTimestamp") is not None:
            self.clock.call_soon(self._fire, worker, self._on_deletion)
        elif worker.readiness_gates and event.old is not None:
            old_conditions = (event.old.get("status") or {}).get("conditions")
            if old_conditions != (pod.get("status") or {}).get("conditions"):
                self.clock.call_soon(self._fire, worker, _noop)

    def _add(self, pod: Obj) -> None:
        timings = self._behaviour(pod)
        jitters = draw_jitters(self._rng, timings)
        worker = PodWorker(pod, timings, jitters)
        self._pods[worker.uid] = worker
        self._uids.setdefault(worker.namespace, {})[worker.name] = worker.uid
        self._by_node.setdefault(worker.node, {})[worker.uid] = None
        self.clock.call_soon(self._fire, worker, self._admit)

    # ------------------------------------------------------------------ step machinery
    def _fire(self, worker: PodWorker, step: Step, *args: Any) -> None:
        """Run one step, every zero-delay step it queued, then write the status once if it changed.
        Nothing runs for a pod whose node's kubelet is down (:meth:`stop_node`)."""
        if worker.done or worker.node in self._stopped_nodes:
            return
        step(worker, *args)
        immediate = worker.immediate  # read after the step: it may have queued the first
        if immediate:
            while immediate:
                queued, queued_args = immediate.pop(0)
                queued(worker, *queued_args)
            worker.immediate = NO_STEPS  # emptied: the shared empty list again
        # Let go of the timers at the head of the pod's and its regular containers' lists that ran (or
        # were cancelled): a running pod would otherwise keep every timer it ever had (its pull, its
        # readiness), some 64 bytes each, until it stops. Only here, on a node whose kubelet is up: a
        # stopped node's lists hold the timers it froze (cancelled) for start_node to set again.
        # Two loops, not one over a tuple of the pod and its containers: that tuple, built at every
        # step, cost 9 M instructions at 2,000 pods.
        timers = worker.timers
        while timers and timers[0].cancelled:
            del timers[0]
        for c in worker.containers:
            timers = c.timers
            while timers and timers[0].cancelled:
                del timers[0]
        self._sync(worker)
        if worker.done:
            worker.retire()  # its last status is written: nothing will run for it again
            if worker.idle() and self._pods.get(worker.uid) is worker:
                self._pods[worker.uid] = FinishedPod(worker)
        if worker.delete_after_sync:
            worker.delete_after_sync = False
            try:
                self.client.delete("Pod", worker.namespace, worker.name, grace_period_seconds=0,
                                   preconditions={"uid": worker.uid})
            except ApiError as err:
                self._record(err)

    def _after(self, worker: PodWorker, timers: list[Timer], delay: float, step: Step, *args: Any) -> None:
        """Run ``step`` after ``delay`` (never for ``inf``; in this same instant for 0)."""
        if delay == math.inf:
            return
        if delay <= 0:
            worker.queue_step(step, args)
        else:
            step = self._steps.setdefault(step, step)
            timers.append(self.clock.call_later(delay, self._fire_later, worker, step, *args))

    def _sync(self, worker: PodWorker) -> None:
        """The status manager: write ``build_status`` if it differs from the stored status."""
        try:
            pod = self.client.get("Pod", worker.namespace, worker.name)
        except ApiError:
            return
        if pod["metadata"]["uid"] != worker.uid:
            return
        if worker.terminal and pod["metadata"].get("deletionTimestamp") is not None:
            # status_manager.go syncPod -> canBeDeleted: a terminal pod being deleted is deleted with
            # grace 0 after this write, even if it stopped on its own before the kubelet acted on the
            # deletion (it exited in the instant it was deleted), else it stays Terminating for good
            worker.delete_after_sync = True
        second = self._stamp_second  # _timestamp's own test, without its call in the usual case
        status = build_status(worker, pod, self._stamp if second <= self.clock.now < second + 1
                              else self._timestamp())
        if status == pod.get("status"):
            return
        update = dict(pod)
        update["status"] = status
        try:
            # The hottest write path of the cluster: the status is built fresh for this write and never
            # touched again, so it is handed over (donated) instead of being copied by the server.
            self.client.update_status_donated(update)
        except ApiError as err:
            self._record(err)
            return
        self.status_writes += 1

    def _timestamp(self) -> str:
        """``clock.timestamp()``, formatted once per virtual second (metav1.Time has second precision)."""
        second = int(self.clock.now)
        if second != self._stamp_second:
            self._stamp_second = second
            self._stamp = rfc3339(second)
        return self._stamp

    def _record(self, err: ApiError) -> None:
        if len(self.errors) < 20:
            self.errors.append(f"{self.clock.now:.3f}s {err.message}")

    # ------------------------------------------------------------------ lifecycle steps
    def _admit(self, worker: PodWorker) -> None:
        """``HandlePodAdditions`` + sandbox creation: IPs, start time, containers waiting to be created."""
        try:
            pod = self.client.get("Pod", worker.namespace, worker.name)
            self.client.get("Node", "", worker.node)
        except ApiError:
            worker.done = True  # gone already, or bound to a node that has no kubelet
            return
        if pod["metadata"]["uid"] != worker.uid:
            worker.done = True
            return
        if pod["metadata"].get("deletionTimestamp") is not None:
            self._on_deletion(worker)
            return
        host_ip = self._host_ip(worker.node)
        pod_ip = self._next_pod_ip()
        worker.admitted(self._timestamp(), host_ip, pod_ip)
        self.network.sandbox_created(worker.uid, pod, worker.node, pod_ip)
        timings = worker.timings
        program = timings.program
        by_program = (next((c for c in worker.containers if runs_program(worker, c)), None)
                      if program is not None and program.ready is not None else None)
        self.prober.add_pod(worker, readiness_by_rule=timings.ready is not None,
                            readiness_by_program=by_program)
        if worker.active_deadline is not None:
            self._after(worker, worker.timers, max(worker.active_deadline, 0.0), self._deadline_exceeded)
        if self.events is not None:
            self._pull_started(worker, timings.pull + worker.jitters.pull, timings.pull_failures > 0)
        if timings.pull_failures > 0:
            self._after(worker, worker.timers, timings.pull + worker.jitters.pull, self._pull_failed, 1)
            return
        delay = timings.pull + worker.jitters.pull + timings.start + worker.jitters.start
        self._after(worker, worker.timers, delay, self._advance_init)

    # ------------------------------------------------------------------ image pull failures
    def _pulling(self, worker: PodWorker) -> list[ContainerRun]:
        """The containers whose image the kubelet pulls first: the first init container, else all."""
        return worker.init_containers[:1] if worker.init_containers else worker.containers

    def _pull_started(self, worker: PodWorker, seconds: float, fails: bool) -> None:
        """Events of the pull at admission (only with pod Events on): ``Pulling`` now and ``Pulled`` when
        it ends (a timer of its own, outside the pod's step chain), or ``already present`` for an image
        that needs no pull (``IfNotPresent``/``Never`` and no pull time)."""
        assert self.events is not None
        pulled = []
        for c in self._pulling(worker):
            if not fails and seconds <= 0 and c.spec.get("imagePullPolicy") in ("IfNotPresent", "Never"):
                self.events.already_present(worker, c)
                continue
            self.events.pulling(worker, c)
            pulled.append(c)
        if pulled and not fails:
            self._after(worker, worker.timers, seconds, self._pulled_events, pulled, seconds)

    def _pulled_events(self, worker: PodWorker, containers: list[ContainerRun], seconds: float) -> None:
        if self.events is not None:
            for c in containers:
                self.events.pulled(worker, c, seconds)

    def _pull_failed(self, worker: PodWorker, attempt: int) -> None:
        """Pull ``attempt`` failed (``pkg/kubelet/images/image_manager.go``: ``ErrImagePull``); the image
        back-off (10 s doubling to 300 s, ``flowcontrol.Backoff``) starts now. The pod worker re-syncs
        after ``backOffPeriod`` (10 s; its jitter is not modelled): within the back-off the container
        shows ``ImagePullBackOff`` until it ends, after it the pull is retried at once."""
        for c in self._pulling(worker):
            c.waiting_reason = "ErrImagePull"
            c.waiting_message = pull_error_message(c.image)
            if self.events is not None:
                self.events.pull_failed(worker, c, c.waiting_message)
        backoff = capped_backoff(BACKOFF_BASE, attempt - 1, MAX_CONTAINER_BACKOFF)
        self._after(worker, worker.timers, BACKOFF_BASE, self._pull_resync, attempt, self.clock.now + backoff)

    def _pull_resync(self, worker: PodWorker, attempt: int, retry_at: float) -> None:
        now = self.clock.now
        if now >= retry_at:
            self._pull_retry(worker, attempt)
            return
        for c in self._pulling(worker):
            c.waiting_reason = "ImagePullBackOff"
            c.waiting_message = f'Back-off pulling image "{c.image}"'
            if self.events is not None:
                self.events.pull_back_off(worker, c)
        self._after(worker, worker.timers, retry_at - now, self._pull_retry, attempt)

    def _pull_retry(self, worker: PodWorker, attempt: int) -> None:
        timings = worker.timings
        if self.events is not None:
            pulling = self._pulling(worker)
            for c in pulling:
                self.events.pulling(worker, c)
            if attempt >= timings.pull_failures:
                self._after(worker, worker.timers, timings.pull, self._pulled_events, pulling, timings.pull)
        if attempt < timings.pull_failures:
            self._after(worker, worker.timers, timings.pull, self._pull_failed, attempt + 1)
            return
        self._after(worker, worker.timers, timings.pull + timings.start, self._pulled)

    def _pulled(self, worker: PodWorker) -> None:
        """The pull finally succeeded: the containers start as after a first-time pull."""
        default = "PodInitializing" if worker.init_containers else "ContainerCreating"
        for c in self._pulling(worker):
            c.waiting_reason, c.waiting_message = default, None
        self._advance_init(worker)

    def _advance_init(self, worker: PodWorker) -> None:
        """Start init containers in order (a sidecar only has to be started, a regular one to have exited
        0), then every regular container (``computeInitContainerActions``)."""
        if worker.terminating or worker.terminal:
            return
        while worker.init_index < len(worker.init_containers):
            c = worker.init_containers[worker.init_index]
            if c.role == SIDECAR:
                if not c.ever_ran:
                    self._start(worker, c)
                if not c.started:
                    return
            elif not (c.state == TERMINATED and c.exit_code == 0):
                if not c.ever_ran:
                    self._start(worker, c)
                return
            worker.init_index += 1
        if not worker.regular_started:
            worker.regular_started = True
            for c in worker.containers:
                self._start(worker, c)

    def _start(self, worker: PodWorker, c: ContainerRun) -> None:
        """The runtime starts (or restarts) ``c``; schedule its startup, readiness and exit."""
        c.cancel_timers()
        if c.ever_ran:
            c.restart_count += 1
        c.ever_ran = True
        c.run_id += 1
        run = c.run_id
        c.state = RUNNING
        c.started_at = self._timestamp()
        c.terminated = None
        c.waiting_message = None
        c.ready = False
        c.container_id = container_id(worker.uid, c.name, c.restart_count)
        if self.events is not None:
            if c.restart_count == 0 and c not in self._pulling(worker):
                self._image_of_later_container(worker, c)
            self.events.started(worker, c)
        timings, jitters = worker.timings, worker.jitters
        program = timings.program if c.role == REGULAR and runs_program(worker, c) else None
        if c.role == INIT:
            c.started = True
        elif program is not None and program.ready is not None:
            c.started = True  # the program marks it ready (program_ready)
        elif timings.ready is not None:
            c.started = True
            self._after(worker, c.timers, timings.ready + jitters.ready, self._container_ready, c, run)
        else:  # the probe workers decide; without a probe of a kind its answer is "yes" at once
            c.started = not self.prober.has_probe(worker, c, STARTUP)
            c.ready = c.started and not self.prober.has_probe(worker, c, READINESS)
            self.prober.container_run_started(worker, c)
        if c.role == REGULAR and timings.exit_after is not None:
            exit_after, exit_code = timings.exit_after, timings.exit_code
            if timings.exit_runs:
                exit_after, exit_code = timings.exit_runs[min(c.restart_count, len(timings.exit_runs) - 1)]
            self._after(worker, c.timers, exit_after + jitters.exit_after, self._container_exited,
                        c, run, exit_code)
            return
        if program is not None:
            work = program.work + jitters.work if 0 <= program.work < math.inf else program.work
            self.network.container_started(worker.uid, program, worker=worker, container=c, run_id=run,
                                           startup=program.startup + jitters.startup, work=work)
            return
        outcome = command_outcome(c.spec)
        if outcome is None and c.role == INIT:
            self._after(worker, c.timers, 0.0, self._container_exited, c, run, 0)  # assume it succeeds
        elif outcome is not None:
            self._after(worker, c.timers, outcome.seconds, self._container_exited, c, run, outcome.exit_code)

    def _image_of_later_container(self, worker: PodWorker, c: ContainerRun) -> None:
        """A container whose image was not pulled at admission (after the first init container): the
        pull takes no time here, so the kubelet reports the image present, or pulled at once."""
        assert self.events is not None
        if c.spec.get("imagePullPolicy") in ("IfNotPresent", "Never"):
            self.events.already_present(worker, c)
        else:
            self.events.pulling(worker, c)
            self.events.pulled(worker, c, 0.0)

    def _probe_failed(self, worker: PodWorker, c: ContainerRun, kind: str, probe: Obj) -> None:
        if self.events is not None:
            self.events.unhealthy(worker, c, kind, probe)

    def _container_started(self, worker: PodWorker, c: ContainerRun, run: int) -> None:
        if c.run_id != run:
            return
        c.started = True
        if c.role == SIDECAR and not worker.regular_started:
            self._advance_init(worker)

    def _container_ready(self, worker: PodWorker, c: ContainerRun, run: int) -> None:
        if c.run_id == run:
            c.ready = True

    def _program_listening(self, worker: PodWorker, c: ContainerRun) -> tuple[int, ...] | None:
        """For the prober: the ports ``c``'s program listens on now; ``None``: ``c`` runs no program."""
        if not runs_program(worker, c):
            return None
        return self.network.listening(worker.uid, c)

    def _probe_started(self, worker: PodWorker, c: ContainerRun) -> None:
        """A startup probe succeeded: a sidecar may let the next init container start."""
        if c.role == SIDECAR and not worker.regular_started:
            self._advance_init(worker)

    def _probe_kill(self, worker: PodWorker, c: ContainerRun, kind: str) -> None:
        """A liveness or startup probe failed ``failureThreshold`` times: the kubelet kills the container
        (``killContainer`` with the pod's grace period: SIGTERM, honoured after ``terminate``, else SIGKILL
        at the deadline) and the restart policy applies as for any exit."""
        if c.state != RUNNING or worker.terminating:
            return
        if self.events is not None:
            self.events.probe_kill(worker, c, kind)
        grace = worker.grace_period
        stop = worker.timings.terminate
        delay, code = (stop, SIGTERM_EXIT) if stop < grace else (float(grace), SIGKILL_EXIT)
        self._after(worker, c.timers, delay, self._container_exited, c, c.run_id, code)

    def _container_exited(self, worker: PodWorker, c: ContainerRun, run: int, exit_code: int) -> None:
        if c.run_id != run or c.state != RUNNING or worker.terminating:
            return
        self._stop(c, exit_code, "Completed" if exit_code == 0 else "Error")
        self.network.container_stopped(worker.uid, c)
        if c.role == SIDECAR:
            restart = True
        elif c.role == INIT:
            restart = exit_code != 0 and worker.restart_policy != "Never"
        else:
            policy = worker.restart_policy
            restart = policy == "Always" or (policy == "OnFailure" and exit_code != 0)
        if restart:
            self._schedule_restart(worker, c)
        elif c.role == INIT:
            if exit_code == 0:
                self._advance_init(worker)
            else:
                self._finish(worker)  # failedInitialization with restartPolicy Never
        elif c.role == REGULAR and _all_terminated(worker.containers):
            self._finish(worker)

    def _stop(self, c: ContainerRun, exit_code: int, reason: str) -> None:
        c.cancel_timers()
        c.run_id += 1
        c.state = TERMINATED
        c.terminated = {"exitCode": exit_code, "reason": reason, "startedAt": c.started_at,
                        "finishedAt": self._timestamp(), "containerID": c.container_id}
        c.ready = c.role == INIT and exit_code == 0
        c.started = False

    def _schedule_restart(self, worker: PodWorker, c: ContainerRun) -> None:
        """``doBackOff``: restart at once unless a back-off entry from the previous restart is live."""
        now = self.clock.now
        expired = c.backoff == 0 or now - c.backoff_updated > 2 * MAX_CONTAINER_BACKOFF
        delay = 0.0 if expired else c.backoff
        next_backoff = BACKOFF_BASE if expired else min(c.backoff * 2, MAX_CONTAINER_BACKOFF)
        c.last_terminated = c.terminated
        c.terminated = None
        c.state = WAITING
        c.waiting_reason = "CrashLoopBackOff"
        c.waiting_message = (f"back-off {go_duration(delay)} restarting failed container={c.name} "
                             f"pod={worker.name}_{worker.namespace}({worker.uid})")
        if self.events is not None and delay > 0:
            self.events.back_off(worker, c)
        self._after(worker, c.timers, delay, self._restart, c, c.run_id, next_backoff)

    def _restart(self, worker: PodWorker, c: ContainerRun, run: int, next_backoff: float) -> None:
        if c.run_id != run or worker.terminating or worker.terminal:
            return
        c.backoff = next_backoff
        c.backoff_updated = self.clock.now
        self._start(worker, c)

    def _finish(self, worker: PodWorker) -> None:
        """Every regular container is done for good (or init failed under ``Never``): stop the sidecars
        (in reverse order, SIGTERM) and leave the pod in its terminal phase."""
        for c in reversed(worker.init_containers):
            if c.role == SIDECAR:
                self._settle(c, SIGTERM_EXIT, unknown_if_never_ran=False)
        self._stopped(worker)

    def _stopped(self, worker: PodWorker) -> None:
        """Every container has stopped: no timer left, the pod terminal, its sandbox and network gone."""
        worker.cancel_timers()
        worker.terminal = True
        worker.sandbox_ready = False
        worker.done = True
        self.network.pod_stopped(worker.uid)

    def _settle(self, c: ContainerRun, exit_code: int, *, unknown_if_never_ran: bool) -> None:
        """Bring ``c`` to a terminated state as the pod stops."""
        if c.state == RUNNING:
            self._stop(c, exit_code, "Error")
        elif c.state == WAITING and c.last_terminated is not None:
            c.cancel_timers()
            c.state = TERMINATED
            c.terminated = c.last_terminated
            c.waiting_message = None
        elif c.state == WAITING and unknown_if_never_ran:
            c.cancel_timers()
            c.state = TERMINATED
            c.terminated = {"exitCode": SIGKILL_EXIT, "reason": "ContainerStatusUnknown",
                            "message": UNKNOWN_MESSAGE, "startedAt": None, "finishedAt": None}

    # ------------------------------------------------------------------ active deadline
    def _deadline_exceeded(self, worker: PodWorker) -> None:
        """``activeDeadlineHandler.ShouldEvict`` (``pkg/kubelet/active_deadline.go``): the pod has been
        active on the node ``activeDeadlineSeconds`` since its ``startTime``. The status turns ``Failed``
        with reason ``DeadlineExceeded`` at once, then the containers are killed with the pod's grace
        period (SIGTERM honoured after ``terminate``, else SIGKILL) and the pod stays, Failed."""
        if worker.terminal or worker.terminating:
            return
        worker.failed_reason = (DEADLINE_EXCEEDED_REASON, DEADLINE_EXCEEDED_MESSAGE)
        worker.cancel_timers()
        for c in worker.all_containers():
            c.cancel_timers()
        running = any(c.state == RUNNING for c in worker.all_containers())
        self._killing_events(worker)
        stop = worker.timings.terminate + worker.jitters.terminate
        delay, code = (stop, SIGTERM_EXIT) if stop < worker.grace_period else \
            (float(worker.grace_period), SIGKILL_EXIT)
        self._after(worker, worker.timers, delay if running else 0.0, self._deadline_kill, code)

    def _deadline_kill(self, worker: PodWorker, code: int) -> None:
        for c in worker.all_containers():
            self._settle(c, code, unknown_if_never_ran=True)
        worker.cancel_timers()
        worker.terminal = True
        worker.sandbox_ready = False
        worker.done = True

    # ------------------------------------------------------------------ deletion
    def _on_deletion(self, worker: PodWorker) -> None:
        """``deletionTimestamp`` seen (again): SIGTERM now, SIGKILL at the grace deadline. A later delete
        with a shorter grace period moves the deadline earlier (``killPodWithSyncResult`` is re-run)."""
        if worker.terminal:
            return
        try:
            pod = self.client.get("Pod", worker.namespace, worker.name)
        except ApiError:
            return
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        grace = DEFAULT_GRACE if grace is None else max(int(grace), 0)
        now = self.clock.now
        if worker.stop_requested_at is None:
            worker.terminating = True
            worker.cancel_timers()
            worker.stop_requested_at = now
            self._killing_events(worker)
            if any(c.state == RUNNING for c in worker.all_containers()):
                natural = now + worker.timings.terminate + worker.jitters.terminate
            else:
                natural = now  # nothing is running: the sandbox goes at once
            worker.kill_at, worker.kill_code = natural, SIGTERM_EXIT
        deadline = now + grace
        if deadline < worker.kill_at or (deadline == worker.kill_at and worker.kill_at == now):
            worker.kill_at, worker.kill_code = deadline, SIGKILL_EXIT
        elif worker.timers:
            return  # the scheduled stop still stands
        for timer in worker.timers:
            timer.cancel()
        worker.timers.clear()
        self._after(worker, worker.timers, worker.kill_at - now, self._killed)

    def _killing_events(self, worker: PodWorker) -> None:
        """``killContainer``'s ``Killing`` event for every running container (pod Events on only)."""
        if self.events is not None:
            for c in worker.all_containers():
                if c.state == RUNNING:
                    self.events.killing(worker, c)

    def _killed(self, worker: PodWorker) -> None:
        """The containers have stopped: terminal status (``podIsTerminal``), then delete with grace 0."""
        if worker.done:
            return
        code = worker.kill_code
        for c in worker.all_containers():
            self._settle(c, code, unknown_if_never_ran=True)
        self._stopped(worker)
        worker.delete_after_sync = True

    # ------------------------------------------------------------------ addresses
    def _host_ip(self, node: str) -> str:
        ip = self._host_ips.get(node)
        if ip is None:
            n = len(self._host_ips)
            ip = self._host_ips[node] = f"172.18.{n // 250}.{n % 250 + 2}"
        return ip

    def _next_pod_ip(self) -> str:
        """Pod IPs from 10.244.0.2 upwards, in admission order (deterministic, never reused)."""
        value = (10 << 24) + (244 << 16) + 2 + self._pod_ips
        self._pod_ips += 1
        return f"{value >> 24 & 255}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"
