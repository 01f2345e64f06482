"""Mutation campaign and API fuzz: the figures behind "hostile input never breaks a run".

    .venv/bin/python benchmarks/hostile_campaign.py                 # both, default sizes
    .venv/bin/python benchmarks/hostile_campaign.py --mutants 500 --api-calls 5000

Part 1 mutates every library scenario (its ``{file:}`` manifests inlined) in a fixed, seeded way: a
hostile value at a random field, a hostile snippet at a random offset, a random cut. Each mutant is
played with ``run_scenario`` and classed by outcome: ``passed``, ``failed-cleanly`` (a one-line error or an
expectation failure), ``budget`` (ended by the run budget), ``internal-error`` (the runner caught a
bug), ``escaped`` (an exception left ``run_scenario``: the whole run would have died), ``traceback`` (a
Python traceback reached the report) and ``slow`` (over 30 s). The last four must be zero.

Part 2 drives the API server with random JSON bodies and options (create, update, status, patch,
delete, evict) and counts answers: successes, ``ApiError`` by code, other exceptions (must be zero),
and failed writes that changed the store (partial writes, must be zero).

Slow and noisy on a shared machine, so it is a script, not a test (the tests run a bounded sample).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import io
import json
import random
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

from fakecluster.api.errors import ApiError
from fakecluster.cluster import Cluster
from fakecluster.scenario.runner import run_scenario
from jobset.workload import plugin

ROOT = Path(__file__).resolve().parents[1]

HOSTILE_VALUES: list[Any] = [
    10**400, -1, 2**31, -(2**63) - 1, 1e308, 0, "", "\u0663\u0660s", "9" * 400 + "s", "1000000h", "32Gii",
    "posd", "UPPER_case", "a\nb", "\x1b[2J", "x" * 300, None, True, [], {}, [[[[[[]]]]]], 10**18,
    {"file": "/dev/zero"}, {"file": "../../../etc/passwd"}, {"name": True}, "never", 1.5, "0.0001ms",
    {"a": "b"}, "1e18", 1000000000, "-1",
]  # fmt: skip
HOSTILE_SNIPPETS = [
    "\x00", "\x07", "\t", ": ", "- ", "&a ", "*a", "{", "]", "!!python/object ", "'", '"', "\ufeff", "---\n",
    "\n  ", "9" * 50, "<<: *a\n", "[" * 300,
]  # fmt: skip


# inline_refs, value_paths and set_at are what tests/test_hostile_fuzz.py and tests/test_hostile_apiserver.py
# mutate with too (their bounded sample of this campaign).


def inline_refs(data: Any, source: Path) -> Any:
    """Replace ``{file: ...}`` manifests by their content, so a mutant can live in a temporary folder."""

    def read(item: Any) -> Any:
        if isinstance(item, dict) and set(item) == {"file"}:
            return yaml.safe_load((source.parent / item["file"]).read_text())
        return item

    if isinstance(data, dict):
        if "jobset" in data:
            data["jobset"] = read(data["jobset"])
        if isinstance(data.get("jobsets"), list):
            data["jobsets"] = [read(m) for m in data["jobsets"]]
    return data


def value_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path (keys and indexes) of every value in a JSON tree, the root's ``()`` first."""
    out = [prefix]
    if isinstance(node, dict):
        for key in node:
            out += value_paths(node[key], (*prefix, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            out += value_paths(item, (*prefix, i))
    return out


def set_at(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``node`` with the value at ``path`` replaced by ``value`` (in place; a root path returns ``value``)."""
    if not path:
        return value
    node[path[0]] = set_at(node[path[0]], path[1:], value)
    return node


def mutants(count: int, rng: random.Random) -> list[tuple[str, str]]:
    library = sorted(p for p in (ROOT / "scenarios").rglob("*.yaml"))
    out: list[tuple[str, str]] = []
    while len(out) < count:
        source = library[len(out) % len(library)]
        data = inline_refs(yaml.safe_load(source.read_text()), source)
        operator = rng.choice(["value", "value", "snippet", "cut"])
        if operator == "value":
            path = rng.choice(value_paths(data)[1:])
            value = copy.deepcopy(rng.choice(HOSTILE_VALUES))
            text = yaml.safe_dump(set_at(data, path, value), allow_unicode=True)
        else:
            text = yaml.safe_dump(data, allow_unicode=True)
            at = rng.randrange(len(text) + 1)
            if operator == "snippet":
                text = text[:at] + rng.choice(HOSTILE_SNIPPETS) + text[at:]
            else:
                text = text[:at] + text[at + rng.randrange(1, 30) :]
        out.append((f"{source.relative_to(ROOT)}:{operator}", text))
    return out


def campaign(count: int, seed: int) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    try:
        from fakecluster.scenario.limits import RunLimits
    except ImportError:  # a tree from before the limits (for "before" figures): run without them
        limits = None
    else:
        limits = RunLimits(max_wall_seconds=30)
    with tempfile.TemporaryDirectory() as folder:
        for i, (origin, text) in enumerate(mutants(count, random.Random(seed))):
            path = Path(folder) / f"mutant-{i}.yaml"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            started = time.perf_counter()
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    outcome = run_scenario(path, limits=limits) if limits else run_scenario(path)
            except BaseException as exc:  # the class the campaign exists to find
                counts["escaped"] += 1
                print(f"ESCAPED {origin}: {type(exc).__name__}: {exc}"[:300])
                continue
            if time.perf_counter() - started > 30:
                counts["slow"] += 1
            if "Traceback" in outcome.report:
                counts["traceback"] += 1
            elif outcome.passed:
                counts["passed"] += 1
            elif any("internal error" in f for f in outcome.failures):
                counts["internal-error"] += 1
                print(f"INTERNAL {origin}: {outcome.failures[0]}"[:300])
            elif any("budget exhausted" in f for f in outcome.failures):
                counts["budget"] += 1
            else:
                counts["failed-cleanly"] += 1
    return counts


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.5:
        # A copy: a later mutation of the same body may write into the value (a shared [] or {} once
        # became part of itself, and the next walk over a body recursed without end).
        leaf = rng.choice([*HOSTILE_VALUES[:22], "default", "p", "svc", "js", "abc.def", 7, False])
        return copy.deepcopy(leaf)
    if roll < 0.75:
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = ["name", "namespace", "labels", "ownerReferences", "finalizers", "uid", "controller", "a"]
    return {rng.choice(keys): _json_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _body(rng: random.Random) -> Any:
    body: dict[str, Any] = {"kind": rng.choice(["Pod", "Service", "JobSet", "Job", "Node", 5, None])}
    if rng.random() < 0.7:
        body["apiVersion"] = rng.choice(["v1", "batch/v1", "jobset.x-k8s.io/v1alpha2", 3])
    if rng.random() < 0.9:
        meta = {k: _json_value(rng) for k in rng.sample(
            ["name", "generateName", "namespace", "labels", "annotations", "finalizers", "ownerReferences",
             "resourceVersion", "uid"], rng.randrange(1, 4))}  # fmt: skip
        if rng.random() < 0.5:
            meta["name"] = rng.choice(["p", "svc", "new", "js"])
        body["metadata"] = meta if rng.random() < 0.95 else _json_value(rng)
    if rng.random() < 0.6:
        body["spec"] = _json_value(rng)
    return body


def _valid_objects() -> list[dict[str, Any]]:
    """Valid objects of each kind; a mutant of one reaches deeper than random JSON (strategies, webhooks)."""
    container = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
    template: dict[str, Any] = {"metadata": {"labels": {"app": "a"}},
                "spec": {"restartPolicy": "Never", "containers": [container]}}  # fmt: skip
    library = ROOT / "scenarios" / "driver-first" / "spark-driver-first.yaml"
    jobset = inline_refs(yaml.safe_load(library.read_text()), library).get("jobset")
    objects = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new", "namespace": "default"},
         "spec": {"nodeName": "node", "terminationGracePeriodSeconds": 30, **template["spec"]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc2"},
         "spec": {"clusterIP": "None", "selector": {"app": "a"}, "ports": [{"port": 80}]}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job"},
         "spec": {"completions": 2, "parallelism": 2, "completionMode": "Indexed", "template": template}},
    ]  # fmt: skip
    return [*objects, jobset] if isinstance(jobset, dict) else objects


VALID = _valid_objects()


def _mutated(rng: random.Random) -> Any:
    body = json.loads(json.dumps(rng.choice(VALID)))
    for _ in range(rng.randrange(1, 3)):
        path = rng.choice(value_paths(body)[1:])
        body = set_at(body, path, _json_value(rng))
    return body


def _snapshot(server: Any) -> str:
    objects = {kind: {repr(k): v for k, v in sorted(store.items())}
               for kind, store in server._objects.items()}  # fmt: skip
    return json.dumps({"objects": objects, "rv": server.writes}, sort_keys=True, default=repr)


def api_fuzz(calls: int, seed: int) -> collections.Counter[str]:
    rng = random.Random(seed)
    counts: collections.Counter[str] = collections.Counter()
    cluster = None
    for i in range(calls):
        if i % 200 == 0:
            cluster = Cluster(0)
            plugin.install(cluster, {})
            cluster.client("admin").create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                            "spec": {"nodeName": "node", "containers": [
                                                {"name": "c", "image": "busybox"}]}})  # fmt: skip
        assert cluster is not None
        server = cluster.server
        op = rng.choice(["create", "update", "update_status", "patch", "delete", "evict"])
        kind = rng.choice(["Pod", "Service", "JobSet", "Job"])
        ns: Any = rng.choice(["default", "default", 5])
        name: Any = rng.choice(["p", "svc", "js", _json_value(rng)])
        grace = rng.choice([None, 0, 30, 10**18, _json_value(rng)])
        body = _body(rng) if rng.random() < 0.5 else _mutated(rng)
        before = _snapshot(server)
        try:
            if op == "create":
                server.create(body)
            elif op in ("update", "update_status"):
                server.update(body, subresource="status" if op == "update_status" else None)
            elif op == "patch":
                server.patch(kind, ns, name, body)
            elif op == "delete":
                preconditions = rng.choice([None, body])
                server.delete(kind, ns, name, grace_period_seconds=grace, preconditions=preconditions)
            else:
                server.evict(ns, name, grace_period_seconds=grace)
            counts["ok"] += 1
        except ApiError as err:
            counts[f"ApiError {err.code}"] += 1
            if _snapshot(server) != before:
                counts["partial write"] += 1
        except Exception as exc:  # the class the fuzz exists to find
            counts[f"raised {type(exc).__name__}"] += 1
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"RAISED {op} {type(exc).__name__} at {frame.filename}:{frame.lineno}: {exc}"[:300])
        for k in server.kinds():
            try:
                server.list(k)
            except Exception:
                counts["list broken"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=2725)
    parser.add_argument("--api-calls", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.mutants:
        counts = campaign(args.mutants, args.seed)
        print(f"mutation campaign: {sum(counts.values())} mutants in {time.perf_counter() - started:.0f}s")
        for key in ("passed", "failed-cleanly", "budget", "internal-error", "escaped", "traceback", "slow"):
            print(f"  {key:15} {counts.get(key, 0)}")
    if args.api_calls:
        started = time.perf_counter()
        counts = api_fuzz(args.api_calls, args.seed)
        print(f"API fuzz: {args.api_calls} calls in {time.perf_counter() - started:.0f}s")
        for key, value in sorted(counts.items()):
            print(f"  {key:20} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
