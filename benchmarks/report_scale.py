"""Report benchmark: the scale scenario with 10,000 worker pods, played with the report's observer.

Run on demand: ``python benchmarks/report_scale.py [--workers 10000] [--pods-per-job 1000] [--browser]``.
Prints the run's wall time without and with the lifecycle observer, the page's build time and size, and
(with ``--browser``) how long the system Chromium takes to load it and fold a lane.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))

from arguments import at_least_one
from scale import scenario

from fakecluster.report import run_for_report, write_page
from fakecluster.scenario.runner import run_scenario
from fakecluster.wallclock_freeze import real_perf_counter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=at_least_one, default=10_000)
    parser.add_argument("--pods-per-job", type=at_least_one, default=1000)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scale.yaml"
        path.write_text(yaml.safe_dump(scenario(args.workers, args.pods_per_job)))
        started = real_perf_counter()
        plain = run_scenario(path)
        plain_wall = real_perf_counter() - started
        started = real_perf_counter()
        outcome, lifecycle = run_for_report(path)
        observed_wall = real_perf_counter() - started
        started = real_perf_counter()
        page = write_page(Path(tmp) / "report", outcome, lifecycle)
        page_wall = real_perf_counter() - started
        print(f"pods {args.workers}  trace events {len(outcome.trace)}  lifecycle edges {len(lifecycle)}")
        print(f"run {plain_wall:.2f}s  run with observer {observed_wall:.2f}s  page {page_wall:.2f}s  "
              f"size {page.stat().st_size / 1e6:.2f} MB  passed {plain.passed and outcome.passed}")
        if args.browser:
            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
                tab = browser.new_page(viewport={"width": 1400, "height": 900})
                started = real_perf_counter()
                tab.goto(page.as_uri())
                loaded = real_perf_counter() - started
                started = real_perf_counter()
                tab.locator(".row.lane .label").last.click()
                tab.locator("#zin").click()
                interact = real_perf_counter() - started
                tab.screenshot(path=str(Path(tmp) / "shot.png"))
                browser.close()
            print(f"browser load {loaded:.2f}s  fold + zoom {interact:.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
