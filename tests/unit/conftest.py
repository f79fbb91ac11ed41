"""Unit tests: no server, no JVM, no network. Asking for one of the fixtures that start them fails here,
so a slow test cannot slip into ``make test-fast`` unnoticed. Also the writable copies of the checked-in
runs (tests/data/runs) that several unit tests read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _refuse(name: str):
    @pytest.fixture(scope="session", name=name)
    def fixture() -> None:
        pytest.fail(f"a unit test asked for {name!r} (server or JVM): move it to tests/integration")

    return fixture


ycsb = _refuse("ycsb")
java = _refuse("java")
java_path = _refuse("java_path")


@pytest.fixture()
def tencent(tmp_path: Path) -> Path:
    """A writable copy of the Tencent-layout run (2 repetitions of read50_update50 and read100)."""
    return Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "tencent-analyse"))


@pytest.fixture()
def audit(tmp_path: Path) -> Path:
    """A writable copy of the audit off/on run (read50_update50, 2 repetitions per arm, interleaved)."""
    return Path(shutil.copytree(RUNS / "audit-analyse", tmp_path / "audit-analyse"))


def _reported(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    run = Path(shutil.copytree(RUNS / name, tmp_path_factory.mktemp("reported") / name))
    res = CliRunner().invoke(app, ["report", str(run)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    return run


@pytest.fixture(scope="session")
def tencent_reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the Tencent-layout run with the report ``ycsb-runner report`` wrote into it (report.html,
    report.md, report-figures/), written once a session for the tests that read it: not to be changed."""
    return _reported(tmp_path_factory, "tencent-analyse")


@pytest.fixture(scope="session")
def audit_reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audit off/on run with its report, as :func:`tencent_reported`."""
    return _reported(tmp_path_factory, "audit-analyse")
