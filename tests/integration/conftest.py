"""Integration tests: real Java, the YCSB jars and the embedded server (fixtures in tests/conftest.py).

Every test in this folder is marked ``integration``, so ``-m "not integration"`` leaves them out."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ycsb_runner.install.embedded import ServerInfo

HERE = Path(__file__).parent
# the helpers this folder shares with the docs figures' tools: throttle.py (cpulimit's SIGSTOP/SIGCONT) and
# loopback_sshd.py (load-generator hosts on loopback ports), one definition each in tools/
sys.path.insert(0, str(HERE.parents[1] / "tools"))


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
    canary test continues a copy of it with a throttled load generator, ``slow_server_nights`` another with
    a throttled server (all `alone`)."""
    from nights import ahead_of_other_workers, run_normal_nights  # (this folder's helper)

    results = tmp_path_factory.mktemp("normal-nights")
    with ahead_of_other_workers(server.pid):
        run_normal_nights(server.url, results)
    return results


@pytest.fixture(scope="session")
def slow_server_nights(
    normal_nights: Path, server: ServerInfo, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The normal nights continued by three nights with the server throttled (nights.py's SLOW_NIGHTS, with
    their canaries), made once a session: the nightly test and the canary test judge them, each in its own
    copy (``copy_nights``: the nightly test adds a killed run)."""
    from nights import ahead_of_other_workers, copy_nights, run_slow_server_nights

    results = copy_nights(normal_nights, tmp_path_factory.mktemp("slow-server-nights") / "results")
    with ahead_of_other_workers(server.pid):
        run_slow_server_nights(server.url, server.pid, results)
    return results
