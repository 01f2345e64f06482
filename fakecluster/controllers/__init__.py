"""kube-controller-manager's controllers, reduced to what JobSet observes: Job (``job/``), TTL after
finished, garbage collector, node lifecycle, taint eviction and PodGC. Upstream: ``pkg/controller``."""
