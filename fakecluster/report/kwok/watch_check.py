#!/usr/bin/env python3
"""Check a scenario's ``order:`` expectations against ``kubectl get --watch`` output on a real cluster.

Written by ``fakecluster export`` next to the manifests and KWOK stages, and standard-library only, so it
runs wherever ``kubectl`` does. Live mode runs ``kubectl get pods|jobs|jobsets --watch
--output-watch-events -o json`` for the namespace, stamps every object with the time it arrived, derives
the same edges the fake cluster's trace has (Pod Created/Scheduled/Running/Ready/Succeeded/Failed/
Deleted, Job Created/Ready/Complete/Failed/Suspended/Resumed/Deleted, JobSet conditions turning True),
stops once every milestone the orders name has happened (or ``--linger`` seconds after every JobSet
finished, or at the timeout), saves the stamped stream
(``--save``), and checks each ``order:`` list with the scenario's milestone grammar. ``--replay FILE``
checks a saved stream instead.

Exit status: 0 all orders hold, 1 one does not, 2 usage or kubectl error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

KINDS = {"pods": "Pod", "jobs": "Job", "jobsets": "JobSet"}
LABELS = {
    "jobset": "jobset.sigs.k8s.io/jobset-name",
    "rjob": "jobset.sigs.k8s.io/replicatedjob-name",
    "job_index": "jobset.sigs.k8s.io/job-index",
    "pod_index": "batch.kubernetes.io/job-completion-index",
    "attempt": "jobset.sigs.k8s.io/restart-attempt",
}
TERMINAL = ("Completed", "Failed")
_TARGET = re.compile(r"^(?:(?P<jobset>[^/\s]+)/)?(?P<rjob>[a-z0-9]([-a-z0-9]*[a-z0-9])?)"
                     r"(?:(?P<ji>\d+)(?:/(?P<pi>\d+))?)?$")


def _true(obj: dict[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or ())


def _job_ready(job: dict[str, Any]) -> bool:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    want = spec.get("parallelism", 1)
    if spec.get("completions") is not None:
        want = min(want, spec["completions"])
    return (status.get("ready") or 0) + (status.get("succeeded") or 0) >= want


def _slot(obj: dict[str, Any]) -> dict[str, Any]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    slot: dict[str, Any] = {k: labels.get(v) for k, v in LABELS.items()}
    for key in ("job_index", "pod_index", "attempt"):
        slot[key] = int(slot[key]) if slot[key] is not None and str(slot[key]).isdigit() else None
    return slot


def edges(kind: str, watch_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    """The trace edges between two versions of an object, as the fake cluster's recorder names them."""
    if watch_type == "DELETED":
        return ["Deleted"] if kind != "JobSet" else []
    if old is None or watch_type == "ADDED":
        return ["Created"]  # as the recorder: an ADDED object is only created, whatever its status
    out: list[str] = []
    if kind == "Pod":
        if (obj.get("spec") or {}).get("nodeName") and not (old.get("spec") or {}).get("nodeName"):
            out.append("Scheduled")
        phase = (obj.get("status") or {}).get("phase")
        if phase != (old.get("status") or {}).get("phase") and phase in ("Running", "Succeeded", "Failed"):
            out.append(phase)
        if _true(obj, "Ready") and not _true(old, "Ready"):
            out.append("Ready")
    elif kind == "Job":
        if _job_ready(obj) and not _job_ready(old):
            out.append("Ready")
        for cond in ("Complete", "Failed"):
            if _true(obj, cond) and not _true(old, cond):
                out.append(cond)
        if _true(obj, "Suspended") and not _true(old, "Suspended"):
            out.append("Suspended")
        elif _true(old, "Suspended") and not _true(obj, "Suspended"):
            out.append("Resumed")
    else:
        for cond in (obj.get("status") or {}).get("conditions") or ():
            if cond.get("status") == "True" and not _true(old, cond.get("type", "")):
                out.append(cond["type"])
    return out


class Trace:
    """Edges in arrival order: (time, seq, kind, name, event, slot)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, int, str, str, str, dict[str, Any]]] = []
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}

    def feed(self, t: float, kind: str, watch_type: str, obj: dict[str, Any]) -> None:
        name = (obj.get("metadata") or {}).get("name", "")
        old = self.objects.get((kind, name))
        if watch_type == "DELETED":
            self.objects.pop((kind, name), None)
        else:
            self.objects[(kind, name)] = obj
        for event in edges(kind, watch_type, obj, old):
            self.events.append((t, len(self.events), kind, name, event, _slot(obj)))

    def finished(self) -> bool:
        jobsets = [o for (k, _), o in self.objects.items() if k == "JobSet"]
        return bool(jobsets) and all(any(_true(o, c) for c in TERMINAL) for o in jobsets)


def find(phrase: str, trace: Trace, shapes: dict[str, dict[str, list[int]]]) -> tuple[float, int] | None:
    """When a milestone phrase happened, as ``Milestone.find`` does in ``fakecluster/scenario``."""
    words = phrase.split()
    if words[0] == "jobset":
        name = words[1] if len(words) == 3 else None
        for t, seq, kind, obj_name, event, _ in trace.events:
            if kind == "JobSet" and event == words[-1] and name in (None, obj_name):
                return t, seq
        return None
    quantifier, target, noun, event = words[:4]
    attempt = int(words[5]) if len(words) == 6 else 0
    match = _TARGET.match(target)
    if match is None:
        raise SystemExit(f"error: cannot read milestone {phrase!r}")
    kind = "Pod" if noun == "pods" else "Job"
    ji = int(match["ji"]) if match["ji"] is not None else None
    pi = int(match["pi"]) if match["pi"] is not None else None
    hits = [(t, seq, s) for t, seq, k, _n, e, s in trace.events
            if k == kind and e == event and s["rjob"] == match["rjob"]
            and (match["jobset"] is None or s["jobset"] == match["jobset"])
            and (ji is None or s["job_index"] == ji) and (pi is None or s["pod_index"] == pi)
            and (s["attempt"] or 0) == attempt]
    if quantifier == "first":
        return (hits[0][0], hits[0][1]) if hits else None
    remaining: set[tuple[str, int, int | None]] = set()
    for jobset, groups in shapes.items():
        if match["jobset"] not in (None, jobset) or match["rjob"] not in groups:
            continue
        replicas, pods = groups[match["rjob"]]
        for job_index in [ji] if ji is not None else range(replicas):
            if kind == "Job":
                remaining.add((jobset, job_index, None))
            else:
                remaining.update((jobset, job_index, p) for p in ([pi] if pi is not None else range(pods)))
    for t, seq, s in hits:
        remaining.discard((s["jobset"], s["job_index"], s["pod_index"] if kind == "Pod" else None))
        if not remaining:
            return t, seq
    return None


def check(spec: dict[str, Any], trace: Trace) -> list[str]:
    """One line per broken ``order:`` expectation."""
    problems = []
    for entry in spec["orders"]:
        found = [(m, find(m, trace, spec["shapes"])) for m in entry["order"]]
        missing = [m for m, hit in found if hit is None]
        if missing:
            problems.append(f"expect[{entry['index']}] order: never happened: {', '.join(missing)}")
            continue
        for (m1, h1), (m2, h2) in pairwise(found):
            if h1 is not None and h2 is not None and h1 >= h2:
                problems.append(f"expect[{entry['index']}] order: '{m1}' ({h1[0]:.3f}s) is not before "
                                f"'{m2}' ({h2[0]:.3f}s)")
                break
    return problems


def all_found(spec: dict[str, Any], trace: Trace) -> bool:
    """Every milestone the orders name has happened: nothing later can change the verdict."""
    return all(find(m, trace, spec["shapes"]) is not None for entry in spec["orders"] for m in entry["order"])


def watch(kubectl: str, namespace: str, timeout: float, save: str | None, *,
          done: Callable[[Trace], bool] | None = None, linger: float = 30.0) -> Trace:
    """Watch until ``done`` (checked once a second), or ``linger`` seconds after every JobSet finished
    (Jobs and pods are deleted after that), or ``timeout``."""
    trace = Trace()
    procs, decoders = {}, {}
    selector = selectors.DefaultSelector()
    for resource, kind in KINDS.items():
        argv = [kubectl, "get", resource, "-n", namespace, "--watch", "--output-watch-events", "-o", "json"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        selector.register(proc.stdout, selectors.EVENT_READ, kind)
        procs[kind], decoders[kind] = proc, ""
    # wall-clock-ok: this checker watches a real cluster through kubectl; its time-out is host time and
    # it never runs inside a simulated run.
    start = time.monotonic()
    finished_at: float | None = None
    try:
        with open(save or os.devnull, "w") as out:
            while time.monotonic() - start < timeout:
                now = time.monotonic()
                if finished_at is None and trace.finished():
                    finished_at = now
                lingered = finished_at is not None and now - finished_at > linger
                if lingered or (done is not None and done(trace)):
                    break
                for key, _ in selector.select(timeout=1.0):
                    chunk = key.fileobj.read()  # type: ignore[union-attr]
                    _drain(key.data, chunk, decoders, trace, out=out, start=start)
    finally:
        for proc in procs.values():
            proc.terminate()
    return trace


def _drain(kind: str, chunk: bytes | None, decoders: dict[str, str], trace: Trace, *, out: Any,
           start: float) -> None:
    """Feed every complete JSON object that has arrived on one watch; keep the partial rest."""
    if not chunk:
        return
    buffer = (decoders[kind] + chunk.decode()).lstrip()
    while buffer:
        try:
            record, end = json.JSONDecoder().raw_decode(buffer)
        except json.JSONDecodeError:
            break
        buffer = buffer[end:].lstrip()
        t = time.monotonic() - start
        trace.feed(t, kind, record.get("type") or "MODIFIED", record.get("object") or {})
        out.write(json.dumps({"t": t, "kind": kind, "type": record.get("type"),
                              "object": record.get("object")}) + "\n")
    decoders[kind] = buffer


def replay(path: str) -> Trace:
    trace = Trace()
    with open(path) as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                trace.feed(float(record["t"]), record["kind"], record.get("type") or "MODIFIED",
                           record["object"])
    return trace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("expectations", help="expectations.json written by fakecluster export")
    parser.add_argument("--replay", help="check a stream saved with --save instead of watching")
    parser.add_argument("--save", help="write the stamped watch stream here")
    parser.add_argument("--kubectl", default="kubectl")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to watch at most")
    parser.add_argument("--linger", type=float, default=30.0,
                        help="seconds to watch on after every JobSet finished, if milestones are missing")
    args = parser.parse_args(argv)
    with open(args.expectations) as f:
        spec = json.load(f)
    try:
        trace = replay(args.replay) if args.replay else watch(
            args.kubectl, spec["namespace"], args.timeout, args.save,
            done=lambda t: all_found(spec, t), linger=args.linger,
        )
    except OSError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    problems = check(spec, trace)
    for line in problems:
        print(f"FAIL {line}")
    print(f"{len(spec['orders']) - len(problems)} of {len(spec['orders'])} order expectations hold "
          f"({len(trace.events)} edges seen)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
