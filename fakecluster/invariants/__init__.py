"""Invariants checked in every run: named rules over the watch stream and the cluster's state.

:mod:`.monitor` runs them at the right moments; :mod:`.kubernetes` holds the API server and built-in
controller rules; :mod:`.network` the pod network's; a workload plugin adds its own (JobSet:
``jobset/invariants.py``).
"""

from fakecluster.invariants.kubernetes import kubernetes_invariants
from fakecluster.invariants.monitor import (
    BaseInvariant,
    ClusterView,
    Invariant,
    InvariantMonitor,
    Report,
    Violation,
)
from fakecluster.invariants.network import network_invariants

__all__ = [
    "BaseInvariant",
    "ClusterView",
    "Invariant",
    "InvariantMonitor",
    "Report",
    "Violation",
    "kubernetes_invariants",
    "network_invariants",
]
