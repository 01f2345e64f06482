"""``fakecluster run --junit-xml FILE``: the JUnit XML that CI systems (GitHub, GitLab, Jenkins) read.

One ``testcase`` per scenario run, named like the pytest item (``late`` or ``late[seed=43]`` in a sweep)
with the scenario's folder as ``classname``; a failed run carries its first failed expectation as the
``failure`` message and the whole report as its text; every case records its seed, virtual end and trace
digest as properties, as the pytest plugin does. Written with the standard library's ElementTree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fakecluster.scenario.runner import ScenarioResult

__all__ = ["write_junit_xml"]


def write_junit_xml(target: Path, results: Sequence[tuple[str, ScenarioResult]]) -> None:
    """``results``: (test name, result) per run, in run order."""
    failures = sum(1 for _, r in results if not r.passed)
    total_time = sum(r.wall_seconds for _, r in results)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="fakecluster",
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{total_time:.3f}",
    )
    for name, result in results:
        classname = result.path.parent.as_posix().replace("/", ".") if result.path is not None else ""
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=name, time=f"{result.wall_seconds:.3f}"
        )
        properties = ET.SubElement(case, "properties")
        for key, value in (
            ("seed", result.seed),
            ("virtualEnd", result.virtual_end),
            ("digest", result.digest),
        ):
            ET.SubElement(properties, "property", name=key, value=str(value))
        if not result.passed:
            failure = ET.SubElement(case, "failure", message=result.failures[0] if result.failures else "")
            failure.text = result.report or "\n".join(result.failures)
    ET.indent(suites)
    target.write_text(ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n", encoding="utf-8")
