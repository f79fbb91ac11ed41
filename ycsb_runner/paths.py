"""Where things live: the project checkout, the cache (jars, FerretDB, server state) and results."""

from __future__ import annotations

import os
import re
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path:
    """The checkout this package runs from (editable install); falls back to the current directory."""
    candidate = PACKAGE_DIR.parent
    if (candidate / "pyproject.toml").is_file():
        return candidate
    return Path.cwd()


def cache_dir() -> Path:
    """``$YCSB_RUNNER_CACHE`` or ``<project>/.cache``: downloaded jars, built binaries, server state."""
    env = os.environ.get("YCSB_RUNNER_CACHE")
    return Path(env).expanduser().resolve() if env else project_root() / ".cache"


HISTORY_FILE = "history.sqlite"  # <results>/history.sqlite unless a history URL is given
HISTORY_ENV = "YCSB_RUNNER_HISTORY_URL"


def results_dir() -> Path:
    """``$YCSB_RUNNER_RESULTS`` or ``<project>/results``: one folder per run."""
    env = os.environ.get("YCSB_RUNNER_RESULTS")
    return Path(env).expanduser().resolve() if env else project_root() / "results"


def templates_dir() -> Path:
    """The built-in Jinja2 templates (top-level ``templates/`` in a checkout, packaged in a wheel)."""
    for candidate in (project_root() / "templates", PACKAGE_DIR / "_templates"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("ycsb-runner templates folder not found")


def suites_dir() -> Path:
    """The built-in suite files."""
    return PACKAGE_DIR / "suites"


# Identifiers that become folder names (run ids, suite and mix names, and the step labels made of them):
# letters, digits, "_", "." and "-", starting with a letter or digit. No "/" or "..", so no path outside
# the results folder; no control character, so no extra line in a properties file or a log; no leading
# "=", "+", "-" or "@", so no formula when a spreadsheet opens a CSV that holds it.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def check_name(value: str, what: str) -> str:
    """*value* when it is a safe identifier (``SAFE_NAME``), else ``UserError`` naming *what* it is."""
    if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
        from ycsb_runner.errors import UserError

        raise UserError(
            f"{what} {value!r}: use letters, digits, '_', '.' and '-' (at most 100, starting with a letter "
            "or digit): it names a folder"
        )
    return value
