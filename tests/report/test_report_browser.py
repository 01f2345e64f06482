"""A generated report in a real browser: Debian's Chromium, driven through Playwright's Python API.

The page must render its lanes (the DOM holds one lane per replicated job, Job rows, folded pod rows),
its script must run (axis ticks, folding, zoom, tooltip), and a screenshot is kept as an artifact in
``$FAKECLUSTER_ARTIFACTS`` (default ``build/artifacts``). No browser is downloaded: without the system
Chromium this test fails with the command that installs it. It is never skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_synthetic import many_pods

from fakecluster.report import run_for_report, write_index, write_page
from fakecluster.report.model import build_timeline
from fakecluster.report.page import PageData, render_page

ROOT = Path(__file__).parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
INSTALL_HINT = (
    "no browser at /usr/bin/chromium: install Debian's package with `apt-get install -y chromium`"
    " (scripts/test.sh does it)"
)


def _artifacts() -> Path:
    directory = Path(os.environ.get("FAKECLUSTER_ARTIFACTS") or ROOT / "build" / "artifacts")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def require_chromium(path: str = CHROMIUM) -> None:
    """Fail (never skip) with the install command when the system browser is missing."""
    if not Path(path).exists():
        pytest.fail(INSTALL_HINT.replace(CHROMIUM, path), pytrace=False)


def test_a_missing_browser_fails_with_the_install_hint(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        require_chromium(str(tmp_path / "no-chromium"))
    assert "apt-get install -y chromium" in str(failed.value)
    require_chromium()  # and this machine has it


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("report")
    outcome, lifecycle = run_for_report(ROOT / "scenarios/startup/three-tier-inorder.yaml")
    page = write_page(directory, outcome, lifecycle)
    write_index(directory)
    return page


def test_lanes_render_and_the_script_works(browser, report: Path) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(report.as_uri())
    lanes = page.locator(".row.lane .label").all_inner_texts()
    assert [text.split(" \N{MIDDLE DOT} ")[0] for text in lanes] == [
        "tf-ps-training/db", "tf-ps-training/ps", "tf-ps-training/worker", "other objects"]
    jobs = page.locator('.row.job:not([data-lane="3"])')
    assert jobs.count() == 4  # db, 2 ps, worker
    others = page.locator('.row.job[data-lane="3"]')  # the Service's EndpointSlice, folded away
    assert others.count() >= 1 and others.first.is_hidden()
    page.locator(".row.lane .label").nth(3).click()
    assert others.first.is_visible() and "EndpointSlice" in others.first.inner_text()
    assert page.locator("#axis div").count() >= 3  # the script drew the time axis
    hidden = page.locator(".row.pod.hidden").count()
    assert hidden == page.locator(".row.pod").count() == 7  # pods start folded under their Job
    page.locator(".row.job.has-pods .label").nth(3).click()  # expand the worker Job
    assert page.locator(".row.pod:not(.hidden)").count() == 4
    page.locator(".row.lane .label").first.click()  # fold the db lane: its Job row hides
    assert page.locator('.row.job[data-lane="0"].hidden').count() == 1
    box = page.locator('.row.pod:not(.hidden) rect.seg[data-state="ready"]').first.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tip = page.locator("#tip")
    assert tip.is_visible() and "ready:" in tip.inner_text() and "tf-ps-training-worker-0" in tip.inner_text()
    page.locator("#zin").click()
    view = page.locator("svg.tl").first.get_attribute("viewBox")
    assert view is not None and float(view.split()[2]) < float(page.locator("#timeline").get_attribute(
        "data-end") or 0)
    page.screenshot(path=str(_artifacts() / "report-three-tier-inorder.png"), full_page=True)
    assert (_artifacts() / "report-three-tier-inorder.png").stat().st_size > 10_000
    assert errors == []


def test_failure_link_zooms_to_its_moment(browser, report: Path) -> None:
    page = browser.new_page()
    page.goto(report.as_uri())
    link = page.locator("section.expect a.goto").first
    moment = float(link.get_attribute("data-t") or "nan")
    link.click()
    box = page.locator("svg.tl").first.get_attribute("viewBox") or ""
    start, _, width, _ = (float(v) for v in box.split())
    assert start <= moment <= start + width
    index = page.goto((report.parent / "index.html").as_uri())
    assert index is not None and page.locator("#scenarios tbody tr").count() == 1


def test_ten_thousand_pods_stay_usable(browser, tmp_path: Path) -> None:
    timeline = build_timeline(many_pods(10, 1000), end=40)
    html = render_page(PageData(name="big", path="big.yaml", passed=True, seed=0, virtual_end=40,
                                wall_seconds=0, digest="d", events=0, failures=[], timeline=timeline))
    file = tmp_path / "big.html"
    file.write_text(html)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(file.as_uri())
    assert page.locator(".row.lane").count() == 1
    assert page.locator("polygon.density").count() > 10
    page.locator("#zin").click()
    page.screenshot(path=str(_artifacts() / "report-10000-pods.png"))
