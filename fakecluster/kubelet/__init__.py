"""The kubelet of every node: pod workers (phases, conditions, container states, probes, restarts,
graceful termination), the commands it understands, and the per-pod timings a scenario gives it.

Upstream: ``pkg/kubelet`` (``kubelet.go``, ``pod_workers.go``, ``status/status_manager.go``,
``prober/``, ``kuberuntime/``)."""

from fakecluster.kubelet.kubelet import Kubelet
from fakecluster.kubelet.pod_timings import PodTimings

__all__ = ["Kubelet", "PodTimings"]
