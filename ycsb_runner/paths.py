"""Where things live: the checkout (when the package runs from one), the cache (jars, FerretDB, server
state), results, and the sources set-up builds (the binding's ``java/``, the FerretDB launcher).

Two ways to run: from a checkout (``make setup``: an editable install), where the cache is
``<checkout>/.cache`` and results go to ``<checkout>/results``; or as an installed package (``pipx install``,
``pip install`` of the wheel), where the cache is the platform's user cache folder
(``$XDG_CACHE_HOME/ycsb-runner``, i.e. ``~/.cache/ycsb-runner`` on Linux) and results go to ``./results`` of
the current folder. ``$YCSB_RUNNER_CACHE`` and ``$YCSB_RUNNER_RESULTS`` override either.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
APP_NAME = "ycsb-runner"

# What set-up builds from, in a checkout and (copied there by the wheel's build: pyproject.toml's
# force-include) inside the installed package.
_SOURCES = {
    "java": ("java", "_java"),  # the binding: pom.xml and src/
    "ferretdb": ("tools/ferretdb", "_ferretdb"),  # the FerretDB launcher: go.mod, go.sum, main.go
    "templates": ("templates", "_templates"),  # the built-in Jinja2 templates
}


def checkout_root() -> Path | None:
    """The checkout this package runs from (an editable install: the package folder beside
    ``pyproject.toml`` and ``java/``), or None for an installed package."""
    candidate = PACKAGE_DIR.parent
    if (candidate / "pyproject.toml").is_file() and (candidate / "java" / "pom.xml").is_file():
        return candidate
    return None


def user_cache_dir() -> Path:
    """The platform's user cache folder of ycsb-runner (platformdirs: ``$XDG_CACHE_HOME/ycsb-runner``,
    else ``~/.cache/ycsb-runner``, on Linux)."""
    import platformdirs

    return platformdirs.user_cache_path(APP_NAME, appauthor=False)


def cache_dir() -> Path:
    """``$YCSB_RUNNER_CACHE``, else ``<checkout>/.cache`` in a checkout, else the user cache folder:
    downloaded jars, built binaries, server state."""
    from ycsb_runner import config

    env = config.current().cache
    if env:
        return Path(env).expanduser().resolve()
    root = checkout_root()
    return root / ".cache" if root is not None else user_cache_dir()


HISTORY_FILE = "history.sqlite"  # <results>/history.sqlite unless a history URL is given


def results_dir() -> Path:
    """``$YCSB_RUNNER_RESULTS``, else ``<checkout>/results`` in a checkout, else ``./results`` of the
    current folder: one folder per run."""
    from ycsb_runner import config

    env = config.current().results
    if env:
        path = Path(env).expanduser().resolve()
        if path.exists() and not path.is_dir():
            from ycsb_runner.errors import UserError

            raise UserError(
                f"{config.RESULTS}={env} is a file, not a folder: point it at the results folder (one "
                "folder per run), or unset it"
            )
        return path
    root = checkout_root()
    return (root if root is not None else Path.cwd()) / "results"


def source_dir(name: str) -> Path:
    """The sources of *name* (``java``, ``ferretdb``, ``templates``): the checkout's folder, else the copy
    the package carries. (Where set-up builds from; nothing is ever written there.)"""
    in_checkout, in_package = _SOURCES[name]
    root = checkout_root()
    return root / in_checkout if root is not None else PACKAGE_DIR / in_package


def templates_dir() -> Path:
    """The built-in Jinja2 templates (top-level ``templates/`` in a checkout, packaged in a wheel)."""
    folder = source_dir("templates")
    if not folder.is_dir():
        raise FileNotFoundError(f"ycsb-runner templates folder not found ({folder})")
    return folder


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


def point_latest(results: Path, run_root: Path) -> None:
    """``results/latest`` -> the newest run folder (a relative symlink, replaced atomically)."""
    link, tmp = results / "latest", results / f".latest.{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(run_root.name)
        os.replace(tmp, link)
    except OSError:  # a file system without symlinks: the link is a convenience
        tmp.unlink(missing_ok=True)
