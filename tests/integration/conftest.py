"""Integration tests: real Java, the YCSB jars and the embedded server (fixtures in tests/conftest.py).

Every test in this folder is marked ``integration``, so ``-m "not integration"`` leaves them out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)
