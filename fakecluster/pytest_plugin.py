"""pytest plugin: each scenario file under a ``scenarios/`` folder is one test item.

So ``-k``, ``-x``, ``-n auto`` (xdist) and JUnit output work as for any test. A failing item shows which
expectation failed, the seed, and the slice of the timeline that matters (see ``timeline.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fakecluster.scenario.errors import escape_control
from fakecluster.scenario.limits import RunLimits
from fakecluster.scenario.reading import UnreadableFile, YamlProblem, parse_bounded_yaml, read_bounded_text
from fakecluster.scenario.runner import ScenarioOutcome, run_scenario


def _is_scenario(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml") and "scenarios" in path.parts[:-1]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fakecluster")
    group.addoption(
        "--allow-dir", action="append", default=[], metavar="DIR", dest="fakecluster_allow_dirs",
        help="let scenarios' {file:} references read from DIR too (repeatable)",
    )
    group.addoption("--fakecluster-report", metavar="DIR", type=Path, default=None,
                    help="write an HTML timeline per scenario item and an index.html into DIR")


def _limits(config: pytest.Config) -> RunLimits:
    return RunLimits(allowed_dirs=tuple(Path(d) for d in config.getoption("fakecluster_allow_dirs") or ()))


def pytest_configure(config: pytest.Config) -> None:
    """A new run starts a new index (once, in the controlling process, before any xdist worker runs)."""
    directory = config.getoption("fakecluster_report", None)
    if directory is not None and not hasattr(config, "workerinput"):
        from fakecluster.report.writer import start_report

        start_report(directory)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The index is written once, by the controlling process (xdist workers only write pages)."""
    directory = session.config.getoption("fakecluster_report", None)
    if directory is not None and not hasattr(session.config, "workerinput") and directory.exists():
        from fakecluster.report.writer import write_index

        write_index(directory)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_scenario(file_path):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self) -> Any:
        yield ScenarioItem.from_parent(self, name=self.path.stem)


class ScenarioFailed(Exception):
    def __init__(self, outcome: ScenarioOutcome) -> None:
        super().__init__(outcome.report)
        self.outcome = outcome


class ScenarioItem(pytest.Item):
    """Runs one scenario file; tags become markers (``-m workers_first`` or ``-m workers-first``)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for tag in _peek_tags(self.path):
            # pytest's -m grammar accepts "workers-first" as one name, so keep the tag as written too
            for marker in dict.fromkeys((re.sub(r"\W", "_", tag), tag)):
                if not re.fullmatch(r"[\w.-]+", marker):
                    continue
                self.config.addinivalue_line("markers", f"{marker}: scenario tag {tag!r}")
                self.add_marker(marker)

    report_page: Path | None = None

    def runtest(self) -> None:
        directory = self.config.getoption("fakecluster_report", None)
        if directory is None:
            outcome = run_scenario(self.path, limits=_limits(self.config))
        else:
            from fakecluster.report import run_for_report
            from fakecluster.report.writer import write_page

            outcome, lifecycle = run_for_report(self.path, limits=_limits(self.config))
            self.report_page = write_page(directory, outcome, lifecycle)
            self.user_properties.append(("report", str(self.report_page)))
        self.user_properties.append(("digest", outcome.digest))
        self.user_properties.append(("virtualEnd", outcome.virtual_end))
        if not outcome.passed:
            raise ScenarioFailed(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            text = "\n".join(escape_control(line) for line in excinfo.value.outcome.report.splitlines())
            if self.report_page is not None:
                text += f"\nreport: {self.report_page.resolve().as_uri()}"
            return text
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.name}"


def _peek_tags(path: Path) -> list[str]:
    """Tags for markers without a full load: a broken file (not UTF-8, a FIFO, an alias bomb, ...) still
    becomes an item and fails in ``runtest`` with its one-line error, instead of interrupting collection."""
    try:
        _, data = parse_bounded_yaml(read_bounded_text(path))
    except (UnreadableFile, YamlProblem):
        return []
    tags = data.get("tags") if isinstance(data, dict) else None
    return [str(t) for t in tags if isinstance(t, str | int)] if isinstance(tags, list) else []
