"""kube-scheduler: a queue of unscheduled pods, the filter plugins JobSet pods meet, LeastAllocated
scoring and the Unschedulable condition. Upstream: ``pkg/scheduler``."""

from fakecluster.scheduler.scheduler import Scheduler

__all__ = ["Scheduler"]
