"""Issue 50: the history's schema 4 names a run's outcome ``status`` (schema 3 named it ``verdict``).

``tests/data/history/schema-3-two-runs.sqlite`` is a real schema-3 history written by main before schema 4
(its README says how): one completed run, one interrupted. Opened for writing, it is migrated (the column
renamed, nothing lost); only read (a read-only mount, where nothing can be migrated), it is read as it is, the
old column under its new name, and ``runs --status`` filters it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from cli_process import run_main
from read_only import read_only

from ycsb_runner.runs.history import SCHEMA_VERSION, SqliteHistory, run_record
from ycsb_runner.runs.model import RunResult

DATA = Path(__file__).parents[1] / "data"
SCHEMA_3 = DATA / "history" / "schema-3-two-runs.sqlite"
FORMAT_3 = DATA / "run_format_3" / "run-format-3"  # the completed run of that history
STATUSES = {"run-format-3": "completed", "run-interrupted": "interrupted"}


def _schema(db: Path) -> tuple[int, list[str]]:
    """The file's schema version and its runs table's columns, read without writing it."""
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        return version, [str(r[1]) for r in con.execute("PRAGMA table_info(runs)")]
    finally:
        con.close()


def _listed(results: Path, *option: str) -> list[str]:
    """The run ids ``runs --results RESULTS OPTION`` lists (exit 0 asserted)."""
    res = run_main("runs", "--results", str(results), "-f", "json", *option)
    assert res.returncode == 0, res.stderr
    return [r["run_id"] for r in json.loads(res.stdout)["rows"]]


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    shutil.copyfile(SCHEMA_3, results / "history.sqlite")
    return results


def test_a_schema_3_history_is_migrated_to_4_when_opened_for_writing(tmp_path: Path) -> None:
    results = _results(tmp_path)
    db = results / "history.sqlite"
    assert _schema(db)[0] == 3 and "verdict" in _schema(db)[1] and SCHEMA_VERSION == 4
    history = SqliteHistory(db)
    assert dict(zip(history.runs()["run_id"], history.runs()["status"], strict=True)) == STATUSES
    assert _schema(db)[0] == 3  # a read does not migrate

    metrics_before = len(history.metrics(list(STATUSES)))
    history.index(run_record(RunResult.load(FORMAT_3)))  # the completed run indexed again: a write
    version, columns = _schema(db)
    assert version == 4 and "status" in columns and "verdict" not in columns
    assert dict(zip(history.runs()["run_id"], history.runs()["status"], strict=True)) == STATUSES
    assert len(history.metrics(list(STATUSES))) == metrics_before > 0  # the same figures, nothing lost

    assert _listed(results, "--status", "completed") == ["run-format-3"]
    assert _listed(results, "--status", "interrupted") == ["run-interrupted"]
    assert _listed(results, "--verdict", "interrupted") == ["run-interrupted"]  # the old name, hidden
    both = run_main("runs", "--results", str(results), "--status", "completed", "--verdict", "failed")
    assert both.returncode == 2 and "--verdict is --status's old name" in both.stderr
    assert "--verdict" not in run_main("runs", "--help").stdout


def test_a_schema_3_history_on_a_read_only_mount_is_read_without_migrating(tmp_path: Path) -> None:
    results = _results(tmp_path)
    db = results / "history.sqlite"
    before = db.read_bytes()
    with read_only(results):
        assert _listed(results) == ["run-format-3", "run-interrupted"]
        assert _listed(results, "--status", "completed") == ["run-format-3"]
        assert _listed(results, "--status", "interrupted") == ["run-interrupted"]
        assert _listed(results, "--status", "failed") == []
        res = run_main("runs", "--results", str(results), "-f", "json")
        assert {r["run_id"]: r["status"] for r in json.loads(res.stdout)["rows"]} == STATUSES
    assert db.read_bytes() == before and _schema(db) == (3, _schema(SCHEMA_3)[1])
