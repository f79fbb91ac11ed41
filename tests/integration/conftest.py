"""Integration tests: real Java, the YCSB jars and the embedded server (fixtures in tests/conftest.py).

Every test in this folder is marked ``integration``, so ``-m "not integration"`` leaves them out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


# Module-scoped fixtures that are a real run (a bench, sshd hosts, a nightly history, a set of members):
# the tests that use one stay on one pytest-xdist worker (``make test``: ``--dist loadgroup``), so it runs
# once; every other test goes to whichever worker is free.
SHARED_RUNS = {
    "command_run",
    "tiny_run",
    "finished_run",
    "ssh_hosts",
    "three_client_run",
    "nights",
    "members",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
            if SHARED_RUNS & set(item.fixturenames):
                item.add_marker(pytest.mark.xdist_group(Path(str(item.fspath)).stem))
