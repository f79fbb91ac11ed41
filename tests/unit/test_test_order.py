"""The slow-first order of `make test` (tests/conftest.py) names only work units that exist: a renamed file
or function must not silently drop out of it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_every_slow_unit_exists(pytestconfig: pytest.Config) -> None:
    conftest = pytestconfig.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py"))
    assert conftest is not None and conftest.SLOW_FIRST
    for scope in conftest.SLOW_FIRST:
        path, _, function = scope.partition("::")
        assert (ROOT / path).is_file(), path
        if function:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, scope
