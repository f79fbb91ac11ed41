"""Integration tests: real Java, the YCSB jars and the embedded server (fixtures in tests/conftest.py).

Every test in this folder is marked ``integration``, so ``-m "not integration"`` leaves them out."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ycsb_runner.install.embedded import ServerInfo

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)


WaitForOnRun = Callable[[Path, subprocess.Popen], Path]


@pytest.fixture
def wait_for_on_run() -> WaitForOnRun:
    """Wait (up to 90 s) until a bench started in *proc* writing to *results* runs an audit-"on" step and
    YCSB has printed a status line in it; returns that step's stderr.txt."""

    def wait(results: Path, proc: subprocess.Popen, timeout: float = 90) -> Path:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert proc.poll() is None, "the bench ended before the 'on' run started"
            for err in results.glob("*/steps/*-run-*-audit-on-*/stderr.txt"):
                if re.search(r"\d+ sec: \d+ operations", err.read_text(errors="replace")):
                    return err
            time.sleep(0.1)
        raise AssertionError("the 'on' run did not start in time")

    return wait


@pytest.fixture(scope="session")
def normal_nights(server: ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results folder of nights.py's eight normal nights (with their canaries), made once a session: the
    nightly and the canary tests each continue a copy of it with their own slow nights (both `alone`)."""
    from nights import ahead_of_other_workers, run_normal_nights  # (this folder's helper)

    results = tmp_path_factory.mktemp("normal-nights")
    with ahead_of_other_workers(server.pid):
        run_normal_nights(server.url, results)
    return results
