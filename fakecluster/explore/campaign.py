"""``fakecluster explore``: random scenarios from the workload's generator, run with every invariant on,
a failure shrunk by Hypothesis to a minimal scenario file.

A campaign of N examples from base seed S is cut into chunks; chunk i runs ``CHUNK`` examples of one
Hypothesis search seeded with ``S/i`` (``@seed``), so each chunk is deterministic on its own and the
chunks can run anywhere (:mod:`.executors`): the findings of a campaign depend only on S and N, not on
which executor ran it or in what order the chunks finished. Within a chunk, a failing example is shrunk
(Hypothesis replays the minimal example last, so the last failure seen is the minimal one) and becomes
a :class:`Finding` holding the scenario file's text.

What counts as a finding: an invariant violated, an expectation of the drawn file failed (the drawn
files expect liveness: the workload finishes), or an internal error. A drawn intervention that could not
apply (its pod had already finished) is noise of the generator, not a finding.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

CHUNK = 25
"""Examples per chunk: small enough to spread a campaign over many workers, large enough that the per-chunk
start-up (loading the plugin) is a small share."""


class _Failed(Exception):
    """Raised inside the Hypothesis test so that it shrinks; carries the failure's signature."""


@dataclass(frozen=True, slots=True)
class ChunkSpec:
    """One unit of work: chunk ``index`` of the campaign seeded ``base_seed``."""

    base_seed: int
    index: int
    examples: int
    workload: str = "jobset"
    shrink: bool = True
    shrink_runs: int = 100
    """Runs the shrinker may spend on one finding; after that every further candidate counts as passing,
    so Hypothesis settles on the smallest failure found so far. A count, not a time: the result is the
    same on a slow machine."""
    shuffle_ties: bool = False
    """Run every drawn scenario with ``cluster.shuffleTies: true`` (same-instant events in an order drawn
    from the scenario's seed); the written finding keeps the key, so it fails the same way when run."""

    @property
    def seed(self) -> int:
        """The chunk's Hypothesis seed, derived from the base seed by a hash (stable across machines)."""
        digest = hashlib.sha256(f"{self.base_seed}/{self.index}".encode()).digest()
        return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True, slots=True)
class Finding:
    """A failure, shrunk: what failed and the scenario file that reproduces it."""

    chunk: int
    signature: str
    failures: tuple[str, ...]
    scenario: dict[str, Any]

    def file_text(self, base_seed: int) -> str:
        data: dict[str, Any] = dict(self.scenario)
        data["name"] = f"explore finding: {self.signature}"
        data["description"] = (
            f"Found by `fakecluster explore --seed {base_seed}` (chunk {self.chunk}) and shrunk. "
            f"It fails with: {self.failures[0]}"
        )
        data["tags"] = ["regression", "explore"]
        ordered: dict[str, Any] = {k: data[k] for k in ("name", "description", "tags") if k in data}
        ordered.update({k: v for k, v in data.items() if k not in ordered})
        return yaml.safe_dump(ordered, sort_keys=False, width=110)


@dataclass(slots=True)
class ChunkResult:
    index: int
    examples_run: int
    findings: list[Finding] = field(default_factory=list)
    fingerprint: str = ""
    """SHA-256 over the trace digest of every run of the chunk, in order: equal fingerprints mean the
    chunk drew and ran exactly the same scenarios with exactly the same traces."""


def signature_of(failures: Iterable[str]) -> str | None:
    """What kind of failure this is, or None if it is only generator noise (an action that could not
    apply): ``invariant <name>``, ``expectation <text>`` or ``internal error``."""
    for text in failures:
        if text.startswith("invariant "):
            return " ".join(text.split()[:2])
    for text in failures:
        if "internal error" in text:
            return "internal error"
    for text in failures:
        if ": actions[" not in text:
            return "expectation " + text.split(": ")[-1][:80]
    return None


def run_drawn(scenario: dict[str, Any], workdir: Path) -> tuple[str | None, list[str], str]:
    """Run one drawn scenario through the ordinary runner: its signature (None: passed), its failures and
    its trace digest."""
    from fakecluster.scenario.runner import run_scenario

    path = workdir / "drawn.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    outcome = run_scenario(path)
    if outcome.passed:
        return None, [], outcome.digest
    return signature_of(outcome.failures), outcome.failures, outcome.digest


def with_shuffled_ties(scenario: dict[str, Any]) -> dict[str, Any]:
    """The drawn scenario with ``cluster.shuffleTies: true`` (a new dict; the drawn one is untouched)."""
    return {**scenario, "cluster": {**(scenario.get("cluster") or {}), "shuffleTies": True}}


def _strategy(workload: str) -> st.SearchStrategy[dict[str, Any]]:
    from fakecluster.workload_plugin import load_plugin

    plugin = load_plugin(workload)
    factory: Callable[[], st.SearchStrategy[dict[str, Any]]] | None = getattr(
        plugin, "scenario_strategy", None
    )
    if factory is None:
        raise LookupError(f"workload plugin {workload!r} has no scenario generator (scenario_strategy)")
    return factory()


_CONSTANTS_LOCK = threading.Lock()
_constants_state: dict[str, Any] = {"depth": 0, "getter": None}


@contextmanager
def _without_local_constants() -> Iterator[None]:
    """Draw as if no local module were imported.

    Hypothesis (from about 6.131) mixes into its draws constants mined from every *local* module in
    ``sys.modules`` (``hypothesis/internal/conjecture/providers.py``, ``_get_local_constants``), and the
    pool grows as modules are imported, also lazily in the middle of a campaign. So what a seed drew
    depended on what the process had imported before: ``fakecluster explore`` (which imports
    ``fakecluster.cli``), ``campaign()`` from Python, a pytest worker that collected other modules and a
    Dask worker all drew different scenarios from the same seed. For the length of a chunk the local
    pool is empty and the constant cache starts cold (re-entrant and thread-safe: a Dask worker plays
    chunks in threads); the internals it touches are looked up defensively, and if a Hypothesis
    version lacks them nothing is changed."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout
        yield
        return
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    constants = getattr(providers, "Constants", None)
    if not hasattr(providers, "_get_local_constants") or cache is None or constants is None:
        yield  # pragma: no cover - a Hypothesis without local constants draws the same anyway
        return
    empty = constants()
    with _CONSTANTS_LOCK:
        if _constants_state["depth"] == 0:
            _constants_state["getter"] = providers._get_local_constants
            providers._get_local_constants = lambda: empty
            cache.cache.clear()
        _constants_state["depth"] += 1
    try:
        yield
    finally:
        with _CONSTANTS_LOCK:
            _constants_state["depth"] -= 1
            if _constants_state["depth"] == 0:
                providers._get_local_constants = _constants_state["getter"]
                cache.cache.clear()


def run_chunk(spec: ChunkSpec) -> ChunkResult:
    """Run one chunk (in any process): ``spec.examples`` drawn scenarios, the first failure shrunk."""
    result = ChunkResult(spec.index, 0)
    last: dict[str, Any] = {}
    fingerprint = hashlib.sha256()
    phases = [Phase.generate, Phase.shrink] if spec.shrink else [Phase.generate]

    with tempfile.TemporaryDirectory(prefix="fakecluster-explore-") as tmp:
        workdir = Path(tmp)

        @seed(spec.seed)
        @settings(
            max_examples=spec.examples,
            database=None,
            deadline=None,
            derandomize=False,
            phases=phases,
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
        )
        @given(_strategy(spec.workload))
        def probe(scenario: dict[str, Any]) -> None:
            if spec.shuffle_ties:
                scenario = with_shuffled_ties(scenario)
            signature: str | None = None
            if last and scenario == last["scenario"]:
                signature = last["signature"]  # Hypothesis replays the smallest failure at the end
            elif not last or last["shrink_runs"] < spec.shrink_runs:
                if last:
                    last["shrink_runs"] += 1
                result.examples_run += 1
                signature, failures, digest = run_drawn(scenario, workdir)
                fingerprint.update(digest.encode())
                if signature is not None:
                    last.update(signature=signature, failures=tuple(failures), scenario=scenario,
                                shrink_runs=last.get("shrink_runs", 0))
            if signature is not None:
                raise _Failed(signature)

        try:
            with _without_local_constants():
                probe()
        except _Failed:
            result.findings.append(
                Finding(spec.index, last["signature"], last["failures"], last["scenario"])
            )
    result.fingerprint = fingerprint.hexdigest()
    return result


@dataclass(slots=True)
class CampaignResult:
    base_seed: int
    examples_run: int
    chunks_run: int
    findings: list[Finding]
    fingerprint: str = ""
    """SHA-256 over the chunks' fingerprints in chunk order: the whole campaign's identity."""

    def write(self, out: Path) -> list[Path]:
        """One scenario file per finding, named by signature and chunk; returns the paths."""
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for finding in self.findings:
            slug = "".join(c if c.isalnum() else "-" for c in finding.signature.lower()).strip("-")[:60]
            path = out / f"explore-{self.base_seed}-{finding.chunk}-{slug}.yaml"
            path.write_text(finding.file_text(self.base_seed))
            paths.append(path)
        return paths


def campaign(
    examples: int,
    *,
    base_seed: int = 0,
    executor: Executor | None = None,
    workload: str = "jobset",
    deadline: Callable[[], bool] | None = None,
    shrink: bool = True,
    max_findings: int | None = None,
    shrink_runs: int = 100,
    shuffle_ties: bool = False,
) -> CampaignResult:
    """Run ``examples`` drawn scenarios in chunks, on ``executor`` (None: in this process). ``deadline``
    (a time budget, checked between chunks) may stop submitting chunks early; the chunks that ran give
    the same findings whatever ran them. ``max_findings`` stops after the chunk that brings the count to
    it (in chunk order, so the result is the same whatever runs the chunks; an executor may have run
    later chunks in vain). ``shuffle_ties`` runs every drawn scenario with same-instant events shuffled
    (:func:`with_shuffled_ties`)."""
    specs = [
        ChunkSpec(base_seed, i, min(CHUNK, examples - i * CHUNK), workload, shrink, shrink_runs, shuffle_ties)
        for i in range((examples + CHUNK - 1) // CHUNK)
    ]
    results: list[ChunkResult] = []
    if executor is None:
        for spec in specs:
            if deadline is not None and deadline():
                break
            results.append(run_chunk(spec))
            if max_findings is not None and sum(len(r.findings) for r in results) >= max_findings:
                break
    else:
        futures = []
        for spec in specs:
            if deadline is not None and deadline():
                break
            futures.append(executor.submit(run_chunk, spec))
        results = [f.result() for f in futures]
    results.sort(key=lambda r: r.index)
    if max_findings is not None:
        kept: list[ChunkResult] = []
        for chunk in results:
            kept.append(chunk)
            if sum(len(c.findings) for c in kept) >= max_findings:
                break
        results = kept
    findings = [f for r in results for f in r.findings]
    fingerprint = hashlib.sha256("".join(r.fingerprint for r in results).encode()).hexdigest()
    return CampaignResult(
        base_seed, sum(r.examples_run for r in results), len(results), findings, fingerprint
    )
