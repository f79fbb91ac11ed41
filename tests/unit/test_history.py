"""The run history: records read through RunResult, the SQLite store under kills and concurrent writers,
``history rebuild``, ``runs`` filters, and the MongoDB store against the embedded server."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.history import (
    SqliteHistory,
    rebuild,
    run_record,
)
from ycsb_runner.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _tag(folder: Path, **tags: str) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m["tags"] = tags
    (folder / "manifest.json").write_text(json.dumps(m))


def test_record_matches_the_run_folder(results: Path) -> None:
    run = RunResult.load(results / "tencent-analyse")
    rec = run_record(run)
    assert rec.run["suite"] == "tencent-analyse-tiny" and rec.run["verdict"] == "completed"
    assert rec.run["server_kind"] == "ferretdb" and rec.run["client_host"] == run.manifest.host["hostname"]
    m = pd.DataFrame(rec.metrics)
    steps = run.steps.set_index("step")
    tp = m[m["metric"] == "throughput_ops_s"].set_index("step")["value"]
    measured = steps[steps["phase"].isin(["load", "run"]) & (steps["verdict"] == "completed")]
    assert sorted(tp.index) == sorted(measured.index)
    assert (tp == measured.loc[tp.index, "throughput_ops_s"]).all()
    ops = run.operations
    read = ops[(ops["operation"] == "READ") & (ops["step"] == "03-run-read50_update50-t2-r2")].iloc[0]
    row = m[(m["step"] == read["step"]) & (m["operation"] == "READ")].set_index("metric")["value"]
    assert row["p99_us"] == read["p99_us"] and row["avg_us"] == read["average_latency_us"]
    assert "CLEANUP" not in set(m["operation"])


def test_fingerprint_follows_the_parameters(results: Path) -> None:
    run = RunResult.load(results / "tencent-analyse")
    before = run.manifest.fingerprint
    other = Path(shutil.copytree(results / "tencent-analyse", results / "renamed"))
    m = json.loads((other / "manifest.json").read_text())
    m["run_id"], m["tags"] = "renamed", {"server": "x"}  # another night, other tags: same series
    (other / "manifest.json").write_text(json.dumps(m))
    assert RunResult.load(other).manifest.fingerprint == before
    for step in m["steps"]:
        if step["phase"] == "run":
            step["properties"]["recordcount"] = "999"  # a changed parameter: a new series
    (other / "manifest.json").write_text(json.dumps(m))
    assert RunResult.load(other).manifest.fingerprint != before


def test_rebuild_runs_and_filters(results: Path) -> None:
    _tag(results / "tencent-analyse", server="7.0.12", sha="abc")
    history, n = rebuild(results, log=lambda _m: None)
    assert n == 2 and Path(history.where) == results / "history.sqlite"
    runner = CliRunner()
    res = runner.invoke(app, ["runs", "--results", str(results), "-f", "csv"])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(io.StringIO(res.stdout))
    assert set(table["run_id"]) == {"tencent-analyse", "audit-analyse"}
    res = runner.invoke(app, ["runs", "--results", str(results), "--tag", "server=7.0.12", "-f", "json"])
    assert [r["run_id"] for r in json.loads(res.stdout)["rows"]] == ["tencent-analyse"]
    assert json.loads(res.stdout)["rows"][0]["tags"] == "server=7.0.12,sha=abc"
    res = runner.invoke(
        app, ["runs", "--results", str(results), "--suite", "audit-analyse-tiny", "-f", "csv"]
    )
    assert pd.read_csv(io.StringIO(res.stdout))["run_id"].tolist() == ["audit-analyse"]
    res = runner.invoke(app, ["runs", "--results", str(results), "--since", "2099-01-01", "-f", "csv"])
    assert res.stdout.strip().count("\n") == 0  # the header only
    res = runner.invoke(app, ["runs", "--results", str(results), "--tag", "oops"])
    assert res.exit_code != 0 and "KEY=VALUE" in str(res.exception)


def test_rebuild_skips_damaged_folders_and_reindexing_replaces(results: Path) -> None:
    bad = results / "broken"
    bad.mkdir()
    (bad / "manifest.json").write_text("{ cut off")
    warnings: list[str] = []
    history, n = rebuild(results, log=warnings.append)
    assert n == 2 and "broken" in warnings[0]
    before = len(history.metrics(["tencent-analyse"]))
    history.index(run_record(RunResult.load(results / "tencent-analyse")))  # again: no duplicates
    assert len(history.metrics(["tencent-analyse"])) == before
    assert len(history.runs()) == 2


_WRITER = """
import os, signal, sys
from pathlib import Path
from ycsb_runner.history import SqliteHistory, run_record
from ycsb_runner.model import RunResult
h = SqliteHistory(Path(sys.argv[1]))
rec = run_record(RunResult.load(Path(sys.argv[2])))
rec.run["run_id"] = "half-written"
for row in rec.metrics:
    row["run_id"] = "half-written"
def body(con):
    h._write(con, rec)
    os.kill(os.getpid(), signal.SIGKILL)  # killed inside the transaction, after the rows were written
h._transaction(body)
"""


def test_a_writer_killed_mid_transaction_leaves_the_history_intact(results: Path) -> None:
    history, _ = rebuild(results, log=lambda _m: None)
    db = Path(history.where)
    before = history.runs()
    proc = subprocess.run(
        [sys.executable, "-c", _WRITER, str(db), str(results / "tencent-analyse")], check=False, timeout=120
    )
    assert proc.returncode == -signal.SIGKILL
    after = SqliteHistory(db).runs()
    assert sorted(after["run_id"]) == sorted(before["run_id"])
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM metrics WHERE run_id='half-written'").fetchone()[0] == 0


_CONCURRENT = """
import sys
from pathlib import Path
from ycsb_runner.history import SqliteHistory, run_record
from ycsb_runner.model import RunResult
h = SqliteHistory(Path(sys.argv[1]))
rec = run_record(RunResult.load(Path(sys.argv[2])))
for i in range(20):
    rid = f"{sys.argv[3]}-{i}"
    rec.run["run_id"] = rid
    for row in rec.metrics:
        row["run_id"] = rid
    h.index(rec)
"""


def test_concurrent_writers_all_land(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    procs = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT, str(db), str(RUNS / "tencent-analyse"), w])
        for w in ("a", "b", "c")
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    h = SqliteHistory(db)
    assert len(h.runs()) == 60
    per_run = h.metrics([f"b-{i}" for i in range(20)]).groupby("run_id").size()
    assert per_run.nunique() == 1 and len(per_run) == 20


def test_history_url_errors_are_one_line(results: Path) -> None:
    res = CliRunner().invoke(app, ["runs", "--history-url", "mongodb://u:secret@127.0.0.1:1/"])
    assert res.exit_code != 0
    assert "names no database" in str(res.exception) and "secret" not in str(res.exception)
    res = CliRunner().invoke(app, ["runs", "--history-url", "postgres://x/y"])
    assert "expected mongodb://" in str(res.exception)


def test_env_var_is_not_leaked_into_other_tests() -> None:
    assert "YCSB_RUNNER_HISTORY_URL" not in os.environ
