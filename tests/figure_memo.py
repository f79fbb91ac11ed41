"""The tests' figures, each drawn once per ``pytest`` run: most reports the tests write show the same
checked-in runs and histories, so of the 480 panels `make test-fast` drew (Dec 2026) 147 were different.

A panel is a ``functools.partial`` of a drawing function and its data (``present.document.Panel``). Its key
is the function's name and code location and the pickled data: the same key is the same drawing of the same
data, so a test gets the very bytes the tool would draw (``YCSB_RUNNER_TEST_FIGURES=check`` draws every
panel anyway and fails on any difference; ``=draw`` turns the memo off). Data that does not pickle (a
lambda inside) is drawn every time. A test that replaces ``png`` to watch the drawing sees every panel
drawn. The PNGs are shared by the run's pytest-xdist workers in one folder, removed at its end."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ycsb_runner.present import document
from ycsb_runner.report import plots, regress_report

# the run's folder: set by the controller, inherited by its workers (plumbing, not a setting)
FOLDER_ENV = "YCSB_TESTS_FIGURE_MEMO"
_PNG = plots.png


def _key(panel: Any) -> str | None:
    """The panel's key, or None when it cannot have one (not a partial, or data that does not pickle)."""
    if not isinstance(panel, functools.partial):
        return None
    code = getattr(panel.func, "__code__", None)
    if code is None:
        return None
    try:
        data = pickle.dumps((panel.args, sorted(panel.keywords.items())), protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    where = f"{panel.func.__module__}.{panel.func.__qualname__}:{code.co_filename}:{code.co_firstlineno}"
    return hashlib.sha256(where.encode() + b"\0" + data).hexdigest()


def _watched() -> bool:
    """A test has replaced ``png`` to see what is drawn."""
    return plots.png is not _PNG or regress_report.png is not _PNG


def _drawn(panel: Any) -> bytes:
    mode = os.environ.get("YCSB_RUNNER_TEST_FIGURES", "memo")  # or "check", "draw"
    folder = os.environ.get(FOLDER_ENV)
    key = None if mode == "draw" or not folder or _watched() else _key(panel)
    if key is None:
        return panel()
    path = Path(folder) / f"{key}.png"
    if path.is_file():
        kept = path.read_bytes()
        if mode == "check":
            assert panel() == kept, f"a memo of {panel.func.__qualname__} differs from its drawing"
        return kept
    png = panel()
    tmp = path.with_name(f"{key}.{os.getpid()}")
    tmp.write_bytes(png)
    tmp.replace(path)  # another worker may write the same panel at once
    return png


def _panels(self: document.Figure) -> list[bytes]:
    return [p if isinstance(p, bytes) else _drawn(p) for p in self.drawn]


def install() -> None:
    """``Figure.panels`` through the memo (``Figure.panels`` keeps its docstring and its drawing once)."""
    memo = functools.cached_property(_panels)
    memo.__set_name__(document.Figure, "panels")
    memo.__doc__ = document.Figure.panels.__doc__
    document.Figure.panels = memo  # type: ignore[method-assign]


def start() -> None:
    """The run's folder (the controller, or a run without workers)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ[FOLDER_ENV] = tempfile.mkdtemp(prefix="ycsb-runner-test-figures-")


def end() -> None:
    if not os.environ.get("PYTEST_XDIST_WORKER") and (folder := os.environ.pop(FOLDER_ENV, None)):
        shutil.rmtree(folder, ignore_errors=True)
