"""One configuration: every ``YCSB_RUNNER_*`` variable the package reads is read by ``ycsb_runner.config`` and
no other module, and the documentation's page of environment variables lists exactly those (and the ones
the tests read)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ycsb_runner import config

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "ycsb_runner"
NAME = re.compile(r"\bYCSB_RUNNER_[A-Z][A-Z_]*[A-Z]\b")
OURS = {k for k, v in vars(config).items() if k.isupper() and isinstance(v, str)}  # config.RESULTS, ...


def _environ_reads(tree: ast.AST) -> list[ast.expr]:
    """The keys of ``os.environ.get(k)``, ``os.getenv(k)``, ``os.environ[k]`` and ``k in os.environ``."""

    def environ(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id == "environ"
        )

    out: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute | ast.Name):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id
            if name == "getenv" or (
                name == "get" and isinstance(func, ast.Attribute) and environ(func.value)
            ):
                out.append(node.args[0])
        elif isinstance(node, ast.Subscript) and environ(node.value):
            out.append(node.slice)
        elif isinstance(node, ast.Compare) and any(environ(c) for c in node.comparators):
            out.append(node.left)
    return out


def _named(key: ast.expr) -> bool:
    """Whether an environment key names one of ours: a ``YCSB_RUNNER_`` text or one of config's names."""
    if isinstance(key, ast.Constant):
        return isinstance(key.value, str) and key.value.startswith("YCSB_RUNNER_")
    last = key.attr if isinstance(key, ast.Attribute) else getattr(key, "id", "")
    return last in OURS or (last.endswith("_ENV") and last != "SUMMARY_ENV")  # SUMMARY_ENV: GitHub's


def test_no_module_but_config_reads_a_variable_of_ours() -> None:
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "config.py":
            continue
        keys = _environ_reads(ast.parse(path.read_text(encoding="utf-8")))
        readers += [f"{path.relative_to(ROOT)}:{k.lineno}" for k in keys if _named(k)]
    assert readers == []


def test_the_scan_finds_each_way_of_reading() -> None:
    source = (
        "import os\nfrom os import environ\nos.environ.get('YCSB_RUNNER_X')\nos.getenv('YCSB_RUNNER_Y')\n"
        "environ['YCSB_RUNNER_Z']\n'YCSB_RUNNER_W' in os.environ\nos.environ.get(HISTORY_ENV)\n"
        "os.environ.get('HOME')\nos.environ.get(ci.SUMMARY_ENV)\n"
    )
    keys = _environ_reads(ast.parse(source))
    assert [k.lineno for k in keys if _named(k)] == [3, 4, 5, 6, 7]


def test_every_name_the_package_says_is_one_config_reads() -> None:
    """A message or docstring naming ``YCSB_RUNNER_SOMETHING`` names a variable that is read."""
    said = {m for path in PACKAGE.rglob("*.py") for m in NAME.findall(path.read_text(encoding="utf-8"))}
    assert said == set(config.variables())
    constants = {v for k, v in vars(config).items() if k.isupper() and isinstance(v, str)}
    assert constants == set(config.variables())


def test_the_docs_list_every_variable_read() -> None:
    page = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(YCSB_RUNNER_[A-Z_]+)`", page, re.M))
    read = re.compile(r"environ(?:\.get\(|\[)\"(YCSB_RUNNER_[A-Z_]+)\"")
    tests_read = {m for path in (ROOT / "tests").rglob("*.py") for m in read.findall(path.read_text())}
    tests_only = tests_read - set(config.variables())
    # what `make test` reads
    assert tests_only == {"YCSB_RUNNER_SEEDS", "YCSB_RUNNER_TEST_JIT", "YCSB_RUNNER_TEST_FIGURES"}
    assert listed == set(config.variables()) | tests_only


def test_the_environment_is_read_when_asked_and_an_option_wins(monkeypatch) -> None:
    monkeypatch.setenv(config.HISTORY_URL, "/tmp/h.sqlite")
    monkeypatch.setenv(config.LOCK_DIR, "/tmp/locks")
    now = config.current()
    assert now.history_url == "/tmp/h.sqlite" and now.lock_dir == "/tmp/locks"
    assert now.history() == "/tmp/h.sqlite" and now.history("mongodb://h/db") == "mongodb://h/db"
    monkeypatch.delenv(config.HISTORY_URL)
    assert config.current().history() is None
    given = config.Config.from_env({"YCSB_RUNNER_NOTIFY": "https://a, https://b", "OTHER": "x"})
    assert given.notify == "https://a, https://b" and given.results == ""
