"""Scale benchmark: a driver-first JobSet with 1,000 / 2,000 / 4,000 / 8,000 worker pods run to completion.

Run on demand (never in CI): ``python benchmarks/scale.py [--sizes 1000 2000] [--pods-per-job 500]``;
``--connect`` also runs the format-1.1 variant in which the driver's program listens and every worker's
program connects to it (DNS, TCP, program milestones) and works 30 s instead of ``sleep 30``;
``--variant when`` adds one ``when: all workers pods Running`` action;
``--invariants`` checks the invariants as scenario runs do, ``--shuffle-ties`` shuffles same-instant events.
``--without-network`` is for measuring the network's cost only (``benchmarks/network_cost.py``): the
cluster runs without its EndpointSlice controller and without the DNS server's EndpointSlice watch, so
no slice is written and nothing is indexed; everything else is as in the plain run.
Prints pods, events (clock callbacks run), API writes, wall seconds and virtual seconds per wall second.
The scenario goes through the real runner, so the figures include the trace recorder and the checks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from arguments import at_least_one

from fakecluster.cli import import_for_good
from fakecluster.wallclock_freeze import real_perf_counter

if TYPE_CHECKING:
    from fakecluster.api.watch import WatchEvent
    from fakecluster.clock import Clock


def scenario(workers: int, pods_per_job: int) -> dict[str, object]:
    replicas = max(workers // pods_per_job, 1)
    per_job = workers // replicas
    container = {"name": "worker", "image": "python:3.11", "command": ["sleep", "30"]}
    return {
        "name": f"scale-{workers}",
        "seed": 1,
        "until": "2h",
        "pods": [
            {
                "match": {"replicatedJob": "driver"},
                "pull": "5s",
                "start": "1s",
                "ready": "2s",
                "exit": "never",
            },
            {
                "match": {"replicatedJob": "workers"},
                "pull": "20s",
                "start": "1s",
                "ready": "1s",
                "jitter": "5s",
            },
        ],
        "jobset": {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "scale"},
            "spec": {
                "startupPolicy": {"startupPolicyOrder": "InOrder"},
                "successPolicy": {"operator": "All", "targetReplicatedJobs": ["workers"]},
                "replicatedJobs": [
                    {
                        "name": "driver",
                        "template": {
                            "spec": {
                                "template": {
                                    "spec": {
                                        "containers": [
                                            {"name": "driver", "image": "spark:3.5.0", "command": ["driver"]}
                                        ]
                                    }
                                }
                            }
                        },
                    },
                    {
                        "name": "workers",
                        "replicas": replicas,
                        "template": {
                            "spec": {
                                "parallelism": per_job,
                                "completions": per_job,
                                "backoffLimit": 0,
                                "template": {"spec": {"containers": [container]}},
                            }
                        },
                    },
                ],
            },
        },
        "expect": [
            {"order": ["all driver pods Ready", "first workers pods Created"]},
            {"happens": "jobset Completed"},
        ],
    }


def connect_scenario(workers: int, pods_per_job: int) -> dict[str, object]:
    """The same run with programs: the driver listens on 7077, each worker connects to
    ``scale-driver-0-0.scale:7077`` (retrying every second) and then works 30 s."""
    body = scenario(workers, pods_per_job)
    body["name"] = f"scale-connect-{workers}"
    pods: list[dict[str, object]] = body["pods"]  # type: ignore[assignment]
    driver, worker = pods
    del driver["exit"]
    driver["program"] = {"listen": [7077]}
    worker["program"] = {"connect": ["{jobset}-driver-0-0.{subdomain}:7077"], "work": "30s"}
    body["expect"] = [*body["expect"], {"happens": "all workers pods Connected"}]  # type: ignore[list-item]
    return body


def when_scenario(workers: int, pods_per_job: int) -> dict[str, object]:
    """The plain run with one ``when:`` action, as a regression scenario has them: once every worker is
    Running, a label is patched onto the JobSet. The action waits on a milestone over all the workers,
    so it is asked after each worker's Running event (quadratic in pods while that re-read the trace)."""
    body = scenario(workers, pods_per_job)
    body["name"] = f"scale-when-{workers}"
    label = {"metadata": {"labels": {"all-running": "yes"}}}
    body["actions"] = [{"when": "all workers pods Running", "patch": {"jobset": "scale", "merge": label}}]
    return body


VARIANTS = {"plain": scenario, "connect": connect_scenario, "when": when_scenario}


def without_network() -> None:
    """Measurement only: every cluster made from now on has no EndpointSlice controller (it watches
    nothing and writes no slice) and its DNS server takes in no slice. What a scenario with a Service
    costs because of the network is then the difference to the plain run; a scenario that needs
    slices, DNS names or programs cannot pass this way (the plain, ``when`` and ``--invariants`` runs
    do not need them)."""
    from fakecluster.controllers import endpointslice
    from fakecluster.network.dns import DnsServer
    from fakecluster.runtime import Controller

    def idle_controller(self: endpointslice.EndpointSliceController, client: object, clock: Clock,
                        rng: object, *, latency: float = 0.0) -> None:
        self.writes = 0
        self.controller = Controller(clock, endpointslice.COMPONENT, lambda key: None, latency=latency)

    def take_in_nothing(self: DnsServer, event: WatchEvent) -> None:
        return None

    endpointslice.EndpointSliceController.__init__ = idle_controller  # type: ignore[method-assign]
    DnsServer.watch = take_in_nothing  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=at_least_one, nargs="+", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--pods-per-job", type=at_least_one, default=500)
    parser.add_argument("--connect", action="store_true", help="also run the connect-program variant")
    parser.add_argument("--variant", choices=list(VARIANTS), default=None,
                        help="run only this variant (benchmarks/whole_process.py times one per process)")
    parser.add_argument("--invariants", action="store_true",
                        help="check the invariants during the run, as scenario runs do (default: off, the "
                             "cluster alone)")
    parser.add_argument("--shuffle-ties", action="store_true",
                        help="same-instant events in a seeded random order (cluster.shuffleTies: true)")
    parser.add_argument("--max-wall-seconds", type=float, default=None,
                        help="each run's wall-clock budget (default: the runner's, 120 s); a run under "
                             "valgrind takes some 30x as long, so instruction counts of large runs raise it")
    parser.add_argument("--without-network", action="store_true",
                        help="measurement only: no EndpointSlice controller, no DNS indexing")
    parser.add_argument("--start-up-only", action="store_true",
                        help="start as for a run (interpreter, imports, freeze), then exit: the process "
                             "`whole_process.py --floor` subtracts from each case to get its event work")
    args = parser.parse_args()
    import_for_good()  # as `fakecluster run` starts: the runner imported, then frozen (fakecluster/cli.py)
    if args.start_up_only:
        return 0
    from fakecluster.scenario.limits import RunLimits
    from fakecluster.scenario.runner import run_scenario

    limits = RunLimits(max_wall_seconds=args.max_wall_seconds)

    if args.without_network:
        without_network()

    variants = [("plain", scenario)] + ([("connect", connect_scenario)] if args.connect else [])
    if args.variant is not None:
        variants = [(args.variant, VARIANTS[args.variant])]
    print(f"{'run':>8} {'pods':>6} {'jobs':>5} {'events':>8} {'wall s':>8} {'cpu s':>7} {'virtual s':>10} "
          f"{'virt/wall':>10}  result")
    with tempfile.TemporaryDirectory() as tmp:
        for (label, build), size in [(v, s) for s in args.sizes for v in variants]:
            path = Path(tmp) / f"scale-{label}-{size}.yaml"
            path.write_text(yaml.safe_dump(build(size, args.pods_per_job)))
            cpu = time.process_time()
            started = real_perf_counter()
            outcome = run_scenario(path, invariants=args.invariants, limits=limits,
                                   shuffle_ties=0 if args.shuffle_ties else None)
            wall = real_perf_counter() - started
            cpu = time.process_time() - cpu
            jobs = max(size // args.pods_per_job, 1) + 1  # the workers' Jobs and the driver's
            status = "ok" if outcome.passed else "FAILED: " + "; ".join(outcome.failures)[:200]
            print(
                f"{label:>8} {size:>6} {jobs:>5} {outcome.events_run:>8} {wall:>8.2f} {cpu:>7.2f} "
                f"{outcome.virtual_end:>10.1f} "
                f"{outcome.virtual_end / wall:>10.1f}  {status}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
