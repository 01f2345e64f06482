"""The floor: what the per-pod event work of a Kubernetes-shaped simulation costs in this CPython, on
this machine, today, with nothing but the work itself.

Run on demand (never in CI): ``python benchmarks/floor.py [--pods 10000] [--repeat 5]``.

The performance issue puts "the physical floor for this work in CPython" at about 0.3 s for 10,000 pods:
per pod some 5 heap events, one validation and ~7 copy-on-write writes, each write delivered to 8
handlers. This program does exactly that and nothing else, in the cheapest Python that does it, so that a
closing note can give the ratio of a real run to the floor *measured beside it* rather than to a figure
from another day (this shared machine's speed drifts by up to 2 times from day to day):

- a pod is created from a template: one check of its body (the types of its few fields, what the API
  server's create of a templated pod still checks), a new ``metadata`` and ``status``;
- it is written seven times, as a pod is in a driver-first run (create, bind, four kubelet status
  writes: Pending with its IP, Running, Ready, Succeeded; the Job controller's finalizer removal). A
  write copies the top-level dict and the one branch it changes (copy-on-write: the stored versions
  share the rest), sets the ``resourceVersion``, stores the version and delivers one watch event, a
  tuple of type, new and old, to 8 handlers, each of which reads the field it cares about, compares it
  with the old version's by identity and returns;
- five timers per pod go through a heap (created, pulled, started, ready, exited), as on the virtual
  clock;
- the cyclic garbage collector is off while it plays, as a run plays.

What a real run does beyond this (scheduling, the kubelet's status, the Job and JobSet controllers'
counts, the trace, EndpointSlices, DNS, events, invariants) is the difference. Prints the event work's
median, fastest and slowest seconds over ``--repeat`` rounds in one process, and microseconds per pod.
The start-up is not the floor's: ``whole_process.py --floor`` compares each case's wall time less a
start-up-only process's with this model, round by round.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from arguments import at_least_one

Obj = dict[str, Any]
Event = tuple[str, Obj, "Obj | None"]
WRITES: tuple[tuple[str, str, Any], ...] = (
    ("spec", "nodeName", "node-0"),  # bind
    ("status", "phase", "Pending"),  # the kubelet's four status writes
    ("status", "phase", "Running"),
    ("status", "phase", "Ready"),
    ("status", "phase", "Succeeded"),
    ("metadata", "finalizers", []),  # the Job controller's finalizer removal
)
"""The six writes after the create, in a driver-first run's order: (the branch a write copies, the key it
sets there, the value)."""


def _handler(field: str) -> Callable[[Event], None]:
    """A handler that looks at one top-level part of the pod and returns when it is unchanged."""

    def handle(event: Event) -> None:
        _etype, new, old = event
        if old is not None and new.get(field) is old.get(field):
            return

    return handle


HANDLERS = tuple(_handler(field) for field in ("spec", "status", "metadata", "status", "spec",
                                                "status", "metadata", "status"))
"""Eight watchers of pods, as in a run: scheduler, kubelet, Job controller, node index, taint eviction,
PodGC, EndpointSlice controller, trace recorder (each reads a part; none acts)."""


def _valid(body: Obj) -> bool:
    meta = body["metadata"]
    return (type(meta.get("name")) is str and type(meta.get("labels")) is dict
            and type(body["spec"].get("containers")) is list)


def _write(store: dict[str, Obj], name: str, rv: int, write: tuple[str, str, Any], *,
           handlers: tuple[Callable[[Event], None], ...]) -> None:
    """Copy-on-write: a new top-level dict, a copy of the one branch the write changes and a new
    ``metadata`` (its ``resourceVersion``); every other part is the stored version's."""
    branch, key, value = write
    old = store[name]
    new = dict(old)
    changed = new[branch] = dict(old[branch])
    changed[key] = value
    meta = changed if branch == "metadata" else dict(old["metadata"])
    meta["resourceVersion"] = str(rv)
    new["metadata"] = meta
    store[name] = new
    event: Event = ("MODIFIED", new, old)
    for handler in handlers:
        handler(event)


def play(pods: int, handlers: tuple[Callable[[Event], None], ...] = HANDLERS) -> tuple[float, dict[str, Obj]]:
    """Seconds of event work for ``pods`` pods, each created, written six times and timed five times,
    and the store the pods are left in."""
    template: Obj = {"spec": {"containers": [{"name": "worker", "image": "python:3.11"}]},
                     "metadata": {"labels": {"app": "worker"}}}
    store: dict[str, Obj] = {}
    heap: list[tuple[float, int, str, int]] = []
    rv = 0
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as a run plays (fakecluster/session.py, ``running``)
    try:
        started = time.perf_counter()
        for i in range(pods):
            name = f"worker-{i}"
            body: Obj = {"apiVersion": "v1", "kind": "Pod", "spec": template["spec"],
                         "metadata": {"name": name, "labels": template["metadata"]["labels"]}}
            if not _valid(body):
                raise AssertionError(name)
            rv += 1
            body["metadata"]["resourceVersion"] = str(rv)
            body["status"] = {"phase": "Pending"}
            store[name] = body
            event: Event = ("ADDED", body, None)
            for handler in handlers:
                handler(event)
            for step in range(5):
                heapq.heappush(heap, (float(step), i * 5 + step, name, step))
        while heap:
            _at, _seq, name, step = heapq.heappop(heap)
            # The last timer (exited) makes two writes: Succeeded, then the finalizer removal.
            for write in WRITES[step:step + 2] if step == 4 else WRITES[step:step + 1]:
                rv += 1
                _write(store, name, rv, write, handlers=handlers)
        elapsed = time.perf_counter() - started
    finally:
        if gc_was_enabled:
            gc.enable()
    return elapsed, store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=at_least_one, default=10_000)
    parser.add_argument("--repeat", type=at_least_one, default=5)
    args = parser.parse_args()
    rounds = [play(args.pods)[0] for _ in range(args.repeat)]
    median = statistics.median(rounds)
    print(f"floor: {args.pods} pods, event work median {median:.3f} s (min {min(rounds):.3f}, "
          f"max {max(rounds):.3f}) over {args.repeat} rounds, {median / args.pods * 1e6:.1f} µs/pod")
    return 0


if __name__ == "__main__":
    sys.exit(main())
