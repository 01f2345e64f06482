"""pytest plugin (a ``pytest11`` entry point, so installing the package is enough): every scenario file is
one test item, and the ``fake_cluster`` fixture gives each Python test a fresh cluster.

Scenario files are the ``*.yaml``/``*.yml`` files under a folder named ``scenarios`` or, when the ini
option ``fakecluster_paths`` (or ``--fakecluster-paths``) names places, under those instead. A YAML file
whose top level is a Kubernetes manifest (``apiVersion`` + ``kind``) is not a scenario: it becomes a
skipped item, so ``-v`` names it and says why. ``-k``, ``-m`` (tags are markers), ``-x``, ``-n auto``
(xdist) and JUnit output work as for any test. ``--fakecluster-seed N`` overrides every scenario's seed;
``--fakecluster-seeds N`` plays each scenario with N consecutive seeds (from the override, or from the
file's own seed), one item each. A failing item shows which expectation failed, the seed and the slice of
the timeline that matters; the short summary (``-rA``, the ``FAILED`` lines) shows the first failed
expectation. ``--allow-dir DIR`` lets ``{file:}`` references read from DIR too; ``--fakecluster-report
DIR`` writes an HTML timeline per item and an index. Heavy imports wait until a scenario runs or the
fixture is used: the plugin is loaded by every pytest run in an environment that has the package. A
session that collected scenario files only freezes what collection built until it ends
(:func:`pytest_collection_finish`); any other session's collector is left alone.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import ReprEntryNative, ReprExceptionInfo, ReprFileLocation, ReprTraceback

if TYPE_CHECKING:
    from fakecluster.scenario.limits import RunLimits
    from fakecluster.scenario.runner import ScenarioResult
    from fakecluster.session import FakeCluster

__all__ = ["ScenarioFailed", "ScenarioFile", "ScenarioItem", "fake_cluster"]

_SUFFIXES = (".yaml", ".yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakecluster", "fakecluster scenarios")
    group.addoption(
        "--fakecluster-paths",
        action="append",
        default=[],
        metavar="PATHS",
        help="folders (space- or comma-separated, repeatable) whose *.yaml files are scenarios; "
        "default: the fakecluster_paths ini option, else every folder named 'scenarios'",
    )
    group.addoption(
        "--fakecluster-seed", type=int, default=None, metavar="N", help="play every scenario with seed N"
    )
    group.addoption(
        "--fakecluster-seeds",
        type=_positive,
        default=1,
        metavar="N",
        help="play every scenario with N consecutive seeds (a sweep), starting at --fakecluster-seed or "
        "the scenario's own seed",
    )
    group.addoption(
        "--allow-dir", action="append", default=[], metavar="DIR", dest="fakecluster_allow_dirs",
        help="let scenarios' {file:} references read from DIR too (repeatable)",
    )
    group.addoption("--fakecluster-report", metavar="DIR", type=Path, default=None,
                    help="write an HTML timeline per scenario item and an index.html into DIR")
    parser.addini(
        "fakecluster_paths",
        type="args",
        default=[],
        help="folders, relative to the rootdir, whose *.yaml files are fakecluster scenarios",
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"expected a positive number of seeds, got {value}")
    return value


def pytest_configure(config: pytest.Config) -> None:
    """Declare the fixture's marker; a new report run starts a new index (once, in the controlling
    process, before any xdist worker runs)."""
    config.addinivalue_line(
        "markers", "fake_cluster(**kwargs): keyword arguments of FakeCluster for the fake_cluster fixture"
    )
    directory = config.getoption("fakecluster_report", None)
    if directory is not None and not hasattr(config, "workerinput"):
        from fakecluster.report.writer import start_report

        start_report(directory)


def pytest_report_header(config: pytest.Config) -> str | None:
    roots = _scenario_roots(config)
    if config.option.verbose < 1:
        return None
    where = ", ".join(str(r) for r in roots) if roots else "folders named 'scenarios'"
    return f"fakecluster: scenarios from {where}"


def _scenario_roots(config: pytest.Config) -> list[Path]:
    """Where scenarios live: the command-line option (relative to the invocation directory) wins over the
    ini option (relative to the rootdir); an empty list means the default, folders named scenarios."""
    given = [p for value in config.getoption("fakecluster_paths") for p in re.split(r"[\s,]+", value) if p]
    if given:
        base = config.invocation_params.dir
        return [(base / p).resolve() for p in given]
    return [(config.rootpath / p).resolve() for p in config.getini("fakecluster_paths")]


def _is_scenario_path(path: Path, config: pytest.Config) -> bool:
    if path.suffix not in _SUFFIXES:
        return False
    roots = _scenario_roots(config)
    if not roots:
        return "scenarios" in path.parts[:-1]
    resolved = path.resolve()
    return any(resolved.is_relative_to(root) for root in roots)


def _limits(config: pytest.Config) -> RunLimits:
    from fakecluster.scenario.limits import RunLimits

    return RunLimits(allowed_dirs=tuple(Path(d) for d in config.getoption("fakecluster_allow_dirs") or ()))


_FROZEN = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """A session of scenario files only is a run of ours, as ``fakecluster run`` is: freeze every object
    collection left (pytest, its plugins, the imports, the items: all of them live until the session
    ends), so the cyclic collections between runs need not scan them (``scenarios/``: 5.1 -> 4.7 s).
    Undone at the end (:func:`pytest_unconfigure`), for pytest run in-process. A session that also
    collected anything else is the user's own, whose collector is left as it is."""
    items = session.items
    if items and all(isinstance(item, ScenarioItem | ManifestItem) for item in items):
        gc.freeze()
        session.config.stash[_FROZEN] = True


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_FROZEN, False):
        gc.unfreeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The index is written once, by the controlling process (xdist workers only write pages)."""
    directory = session.config.getoption("fakecluster_report", None)
    if directory is not None and not hasattr(session.config, "workerinput") and directory.exists():
        from fakecluster.report.writer import write_index

        write_index(directory)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_scenario_path(file_path, parent.config):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """One scenario file: one item, or one per seed of a sweep; a manifest: one skipped item."""

    def collect(self) -> Iterator[pytest.Item]:
        from fakecluster.scenario.discovery import manifest_kind, peek

        data = peek(self.path)
        kind = manifest_kind(data)
        if kind is not None:
            yield ManifestItem.from_parent(self, name=self.path.stem, kind=kind)
            return
        from fakecluster.scenario.selection import sweep_seeds

        override = self.config.getoption("fakecluster_seed")
        count = self.config.getoption("fakecluster_seeds")
        tags = _tags(data)
        own = data.get("seed") if isinstance(data, dict) else None
        for seed in sweep_seeds(own, override, count):
            name = self.path.stem if count == 1 else f"{self.path.stem}[seed={seed}]"
            yield ScenarioItem.from_parent(self, name=name, seed=seed, tags=tags)


class ManifestItem(pytest.Item):
    """A Kubernetes manifest kept next to the scenarios (referenced with ``{file: ...}``): not a test."""

    def __init__(self, *, kind: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.kind = kind
        # a skip marker (not pytest.skip() at run time) so the skip report points at the manifest file
        self.add_marker(pytest.mark.skip(reason=f"a Kubernetes manifest (kind {kind}), not a scenario"))

    def runtest(self) -> None:
        raise AssertionError("unreachable: the skip marker skips this item")  # pragma: no cover

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"manifest {self.path.name}"


class ScenarioFailed(Exception):
    def __init__(self, outcome: ScenarioResult) -> None:
        super().__init__(outcome.report)
        self.outcome = outcome


class ScenarioItem(pytest.Item):
    """Runs one scenario file (with a seed override in a sweep); tags become markers (``-m
    workers_first`` or ``-m workers-first``)."""

    def __init__(self, *, seed: int | None = None, tags: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        for tag in tags or []:
            # pytest's -m grammar accepts "workers-first" as one name, so keep the tag as written too
            for marker in dict.fromkeys((re.sub(r"\W", "_", tag), tag)):
                if not re.fullmatch(r"[\w.-]+", marker):
                    continue
                self.config.addinivalue_line("markers", f"{marker}: scenario tag {tag!r}")
                self.add_marker(marker)

    report_page: Path | None = None

    def runtest(self) -> None:
        from fakecluster.scenario.runner import run_scenario

        directory = self.config.getoption("fakecluster_report", None)
        if directory is None:
            outcome = run_scenario(self.path, seed=self.seed, limits=_limits(self.config))
        else:
            from fakecluster.report import run_for_report
            from fakecluster.report.writer import write_page

            outcome, lifecycle = run_for_report(self.path, limits=_limits(self.config), seed=self.seed)
            per_seed = self.config.getoption("fakecluster_seeds") > 1
            self.report_page = write_page(directory, outcome, lifecycle, per_seed=per_seed)
            self.user_properties.append(("report", str(self.report_page)))
        self.user_properties.append(("digest", outcome.digest))
        self.user_properties.append(("virtualEnd", outcome.virtual_end))
        self.user_properties.append(("seed", outcome.seed))
        if not outcome.passed:
            raise ScenarioFailed(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The scenario's report as the failure, and its first failed expectation as the "crash" line
        that ``-rA`` and the short summary print (a plain string would give them nothing to show).

        Built from pytest's own report classes so pytest-xdist can ship it between processes. Control
        characters from the file are escaped, so a hostile scenario cannot rewrite the terminal."""
        if not isinstance(excinfo.value, ScenarioFailed):
            return super().repr_failure(excinfo, style=style)
        from fakecluster.scenario.errors import escape_control

        outcome = excinfo.value.outcome
        first = escape_control(outcome.failures[0]) if outcome.failures else "scenario failed"
        text = "\n".join(escape_control(line) for line in outcome.report.splitlines())
        if self.report_page is not None:
            text += f"\nreport: {self.report_page.resolve().as_uri()}"
        entry = ReprEntryNative([text + "\n"])
        return ReprExceptionInfo(
            reprtraceback=ReprTraceback([entry], None, "native"),
            reprcrash=ReprFileLocation(str(self.path), 0, first),
        )

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.name}"


def _tags(data: Any) -> list[str]:
    """Tags for markers without a full load: a broken file (not UTF-8, a FIFO, an alias bomb, ...) still
    becomes an item and fails in ``runtest`` with its one-line error, instead of interrupting collection."""
    tags = data.get("tags") if isinstance(data, dict) else None
    return [str(t) for t in tags if isinstance(t, str | int)] if isinstance(tags, list) else []


@pytest.fixture
def fake_cluster(request: pytest.FixtureRequest) -> Iterator[FakeCluster]:
    """A fresh :class:`~fakecluster.FakeCluster` per test.

    Configure it with ``@pytest.mark.fake_cluster(nodes=[...], pods=[...], seed=3)`` (the keyword
    arguments of ``FakeCluster``); ``--fakecluster-seed`` sets the seed of tests that do not."""
    from fakecluster.session import FakeCluster

    marker = request.node.get_closest_marker("fake_cluster")
    kwargs: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    override = request.config.getoption("fakecluster_seed")
    if override is not None:
        kwargs.setdefault("seed", override)
    with FakeCluster(**kwargs) as cluster:  # closed after the test: its objects go at once
        yield cluster
