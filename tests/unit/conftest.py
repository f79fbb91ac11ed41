"""Unit tests: no server, no JVM, no network. Asking for one of the fixtures that start them fails here,
so a slow test cannot slip into ``make test-fast`` unnoticed."""

from __future__ import annotations

import pytest


def _refuse(name: str):
    @pytest.fixture(scope="session", name=name)
    def fixture() -> None:
        pytest.fail(f"a unit test asked for {name!r} (server or JVM): move it to tests/integration")

    return fixture


ycsb = _refuse("ycsb")
java = _refuse("java")
java_path = _refuse("java_path")
