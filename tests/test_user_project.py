"""A real user's repository, end to end: a throwaway project with its own pyproject, a ``regressions/``
folder (scenarios and the manifest they reference) and a Python test using the ``fake_cluster`` fixture.
This checkout is *installed* into a fresh virtual environment (a wheel build, as ``pip install
fakecluster`` does; nothing of the source tree is importable there), then ``pytest`` and the
``fakecluster`` command run in the project as a user would run them.

The new environment gets its dependencies (pydantic, pytest, ...) by a ``.pth`` line pointing at this
environment's site-packages, so the test needs no network and no second download; the package itself is
installed with ``--no-deps``. The install is the slow part (a wheel build), so one test does it once and
then makes every check (as separate tests, pytest-xdist would install once per worker).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from scenario_files import ROOT, jobset_manifest, replicated_job

MANIFEST = jobset_manifest(
    replicated_job("head", container="head", image="rayproject/ray"),
    replicated_job("workers", replicas=2, pods=2, container="worker", image="rayproject/ray"),
    name="ray",
    spec="  startupPolicy: {startupPolicyOrder: InOrder}\n",
)
HEAD_FIRST = """\
description: Ray workers are created only once the head is Ready
tags: [ray, startup]
pods:
  - match: {replicatedJob: head}
    ready: 5s
  - match: {}
    schedule: 1s
    start: 2s
    exit: {after: 30s}
jobset: {file: manifests/ray.yaml}
expect:
  - order: [all head pods Ready, first workers pods Created]
  - happens: jobset Completed
    by: 2m
"""
TOO_FAST = HEAD_FIRST.replace("by: 2m", "by: 10s").replace("description: Ray workers", "description: Ray")
PYTHON_TEST = """
from pathlib import Path

import pytest

from fakecluster import FakeCluster

MANIFEST = Path(__file__).parents[1] / "regressions" / "manifests" / "ray.yaml"


@pytest.mark.fake_cluster(pods=[{"match": {"replicatedJob": "head"}, "ready": "5s"}])
def test_workers_wait_for_the_head(fake_cluster: FakeCluster) -> None:
    fake_cluster.apply(MANIFEST.read_text())
    head_ready = fake_cluster.run(milestone="all head pods Ready")
    workers_created = fake_cluster.run(milestone="first workers pods Created")
    assert head_ready >= 5.0 and workers_created >= head_ready


def test_fixture_is_fresh(fake_cluster: FakeCluster) -> None:
    assert fake_cluster.list("JobSet") == []
"""


def _copy_checkout(target: Path) -> Path:
    """The files a source distribution holds, so the build never writes into this checkout."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, target / name)
    for package in ("fakecluster", "jobset"):
        shutil.copytree(ROOT / package, target / package, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the user's project, the fresh environment's bin/) with this package installed from a wheel."""
    base = tmp_path_factory.mktemp("user")
    env = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", env], check=True)
    purelib = Path(sysconfig.get_paths(vars={"base": str(env), "platbase": str(env)})["purelib"])
    (purelib / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    (base / "src").mkdir()
    source = _copy_checkout(base / "src")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "-q", "--no-deps",
         "--no-cache-dir", str(source)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    repo = base / "ray-regressions"
    (repo / "regressions" / "manifests").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [project]
            name = "ray-regressions"
            version = "0"

            [tool.pytest.ini_options]
            fakecluster_paths = ["regressions"]
            addopts = "-p no:cacheprovider"
            """
        )
    )
    (repo / "regressions" / "manifests" / "ray.yaml").write_text(MANIFEST)
    (repo / "regressions" / "head-first.yaml").write_text(HEAD_FIRST)
    (repo / "regressions" / "too-fast.yaml").write_text(TOO_FAST)
    (repo / "tests" / "test_ray.py").write_text(PYTHON_TEST)
    return repo, env / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH", "COV_"))}
    env["COLUMNS"] = "200"
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True,
        check=False, timeout=300,
    )  # fmt: skip


def test_a_users_repository(tmp_path_factory: pytest.TempPathFactory) -> None:
    project = _install(tmp_path_factory)
    _check_the_package_is_really_installed(project)
    _check_pytest_in_the_users_repository(project)
    _check_the_command_line_in_the_users_repository(project)


def _check_the_package_is_really_installed(project: tuple[Path, Path]) -> None:
    repo, bin_dir = project
    probe = _run(
        bin_dir, "python", "-c",
        "import fakecluster, jobset, pathlib; p = pathlib.Path(fakecluster.__file__).parent;"
        " print(p); print((p / 'py.typed').is_file()); print(fakecluster.__version__)",
        cwd=repo,
    )  # fmt: skip
    where, typed, version = probe.stdout.split()
    assert Path(where).is_relative_to(bin_dir.parent), where  # the environment's copy, not this checkout
    assert typed == "True" and version == "0.1.0"


def _check_pytest_in_the_users_repository(project: tuple[Path, Path]) -> None:
    repo, bin_dir = project
    result = _run(bin_dir, "python", "-m", "pytest", "-v", "-rfs", cwd=repo)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr  # too-fast.yaml fails, as it should
    for line in (
        "regressions/head-first.yaml::head-first PASSED",
        "regressions/too-fast.yaml::too-fast FAILED",
        "regressions/manifests/ray.yaml::ray SKIPPED",
        "tests/test_ray.py::test_workers_wait_for_the_head PASSED",
        "tests/test_ray.py::test_fixture_is_fresh PASSED",
    ):
        assert line in out, out
    assert "FAILED regressions/too-fast.yaml::too-fast - expect[1] happens: 'jobset Completed'" in out
    assert "a Kubernetes manifest (kind JobSet), not a scenario" in out
    assert "1 failed, 3 passed, 1 skipped" in out
    assert "Traceback" not in out


def _check_the_command_line_in_the_users_repository(project: tuple[Path, Path]) -> None:
    repo, bin_dir = project
    run = _run(bin_dir, "fakecluster", "run", "regressions", "-m", "ray", "-k", "head", cwd=repo)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("PASS  regressions/head-first.yaml  ")
    assert run.stdout.splitlines()[-1] == "1 passed, 0 failed"
    validate = _run(bin_dir, "fakecluster", "validate", "regressions", cwd=repo)
    assert validate.returncode == 0, validate.stdout
    assert validate.stdout.splitlines()[-1] == "2 valid, 0 invalid"  # the manifest is not a scenario
