"""The kubelet's Events about pods: the reasons and messages of ``pkg/kubelet/events/event.go`` as the
kubelet writes them (``kuberuntime_container.go``, ``images/image_manager.go``, ``prober/prober.go``,
``kuberuntime_manager.go doBackOff``).

**Opt-in.** A real kubelet writes about ten Events per pod (Pulling, Pulled, Created, Started, Killing,
...), each an API write. Written for every pod they would be most of a large run's writes: the scale
benchmark would slow down and every recorded digest (which covers every write) would change, for
scenarios that never look at them. So the cluster records pod Events only when asked
(``ClusterConfig.pod_events``: the scenario key ``cluster.podEvents``, or a scenario that has an
``events`` expectation about a pod); otherwise :class:`~fakecluster.kubelet.kubelet.Kubelet` holds no
recorder and each emission point costs one ``None`` test. Turned on, they change nothing else: the
kubelet's steps, timers and status writes are the same (the Pulled event at the end of an image pull
is a timer of its own, not part of the pod's step chain).

They pass the legacy broadcaster's correlator, as the kubelet's do (``record.EventRecorder``:
de-duplication into ``count``, aggregation, the per-object spam filter; :class:`JobEventRecorder`), with
``source: {component: kubelet, host: <node>}`` and, for container events, the container's ``fieldPath``
(``spec.containers{name}``) in the regarding reference.

Where the fake has no real value to report: ``Pulled`` says ``Image size: 0 bytes`` (there are no
images); ``Unhealthy`` reports what the probe's handler would print for a refused connection (exec
probes print nothing). A crash-looping container's ``BackOff`` is recorded once per back-off (the
kubelet records it on every pod sync inside the back-off, which the correlator then counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakecluster.api.objects import Obj
from fakecluster.client.protocol import Client
from fakecluster.clock import Clock
from fakecluster.controllers.job.events import JobEventRecorder
from fakecluster.kubelet.pod_worker import go_seconds

if TYPE_CHECKING:
    from fakecluster.kubelet.pod_worker import ContainerRun, PodWorker

__all__ = ["COMPONENT", "KubeletEvents", "go_seconds"]

COMPONENT = "kubelet"
NORMAL, WARNING = "Normal", "Warning"
_PROBE_NAMES = {"startup": "Startup", "readiness": "Readiness", "liveness": "Liveness"}


class KubeletEvents:
    """``kl.recorder`` of every node's kubelet: one method per event the emulated kubelet can cause."""

    def __init__(self, client: Client, clock: Clock) -> None:
        self._recorder = JobEventRecorder(client, clock, component=COMPONENT)

    def _pod(self, worker: PodWorker) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"namespace": worker.namespace, "name": worker.name, "uid": worker.uid}}

    def _container(self, worker: PodWorker, c: ContainerRun, event_type: str, reason: str,
                   message: str) -> None:
        field = "spec.initContainers" if c.role != "regular" else "spec.containers"
        self._recorder.event(self._pod(worker), event_type, reason, message, host=worker.node,
                             field_path=f"{field}{{{c.name}}}")

    # ------------------------------------------------------------------ images
    def pulling(self, worker: PodWorker, c: ContainerRun) -> None:
        self._container(worker, c, NORMAL, "Pulling", f'Pulling image "{c.image}"')

    def pulled(self, worker: PodWorker, c: ContainerRun, seconds: float) -> None:
        took = go_seconds(seconds)
        self._container(worker, c, NORMAL, "Pulled", f'Successfully pulled image "{c.image}" in {took} '
                                                     f"({took} including waiting). Image size: 0 bytes.")

    def already_present(self, worker: PodWorker, c: ContainerRun) -> None:
        self._container(worker, c, NORMAL, "Pulled",
                        f'Container image "{c.image}" already present on machine')

    def pull_failed(self, worker: PodWorker, c: ContainerRun, error: str) -> None:
        self._container(worker, c, WARNING, "Failed", f'Failed to pull image "{c.image}": {error}')
        self._container(worker, c, WARNING, "Failed", "Error: ErrImagePull")

    def pull_back_off(self, worker: PodWorker, c: ContainerRun) -> None:
        self._container(worker, c, NORMAL, "BackOff", f'Back-off pulling image "{c.image}"')
        self._container(worker, c, WARNING, "Failed", "Error: ImagePullBackOff")

    # ------------------------------------------------------------------ containers
    def started(self, worker: PodWorker, c: ContainerRun) -> None:
        """``startContainer``: created, then started, in one instant here."""
        self._container(worker, c, NORMAL, "Created", f"Created container: {c.name}")
        self._container(worker, c, NORMAL, "Started", f"Started container {c.name}")

    def back_off(self, worker: PodWorker, c: ContainerRun) -> None:
        pod = f"{worker.name}_{worker.namespace}({worker.uid})"
        self._container(worker, c, WARNING, "BackOff",
                        f"Back-off restarting failed container {c.name} in pod {pod}")

    def killing(self, worker: PodWorker, c: ContainerRun, message: str = "") -> None:
        self._container(worker, c, NORMAL, "Killing", message or f"Stopping container {c.name}")

    def probe_kill(self, worker: PodWorker, c: ContainerRun, kind: str) -> None:
        self.killing(worker, c, f"Container {c.name} failed {kind} probe, will be restarted")

    def unhealthy(self, worker: PodWorker, c: ContainerRun, kind: str, probe: Obj) -> None:
        """``Unhealthy``: ``<Kind> probe failed: <output>``, once per failed probe."""
        self._container(worker, c, WARNING, "Unhealthy",
                        f"{_PROBE_NAMES.get(kind, kind)} probe failed: {_probe_output(worker, probe)}")


def _probe_output(worker: PodWorker, probe: Obj) -> str:
    """What the probe's handler reports for a failure: a refused connection (an exec probe: nothing)."""
    address = worker.pod_ip or ""
    if "httpGet" in probe:
        get = probe["httpGet"] or {}
        host = get.get("host") or address
        scheme = str(get.get("scheme") or "HTTP").lower()
        port = get.get("port", "")
        return (f'Get "{scheme}://{host}:{port}{get.get("path") or "/"}": dial tcp {host}:{port}: '
                "connect: connection refused")
    if "tcpSocket" in probe:
        sock = probe["tcpSocket"] or {}
        host = sock.get("host") or address
        return f"dial tcp {host}:{sock.get('port', '')}: connect: connection refused"
    if "grpc" in probe:
        return (f'timeout: failed to connect service "{address}:{(probe["grpc"] or {}).get("port", "")}" '
                "within 1s: context deadline exceeded")
    return ""
