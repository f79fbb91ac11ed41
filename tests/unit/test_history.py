"""The run history: records read through RunResult, the SQLite store under kills and concurrent writers,
``history rebuild``, ``runs`` filters, the accepted changes (kept by a rebuild, added to an older file), and
the MongoDB store against the embedded server."""

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

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.runs.history import (
    ACCEPT_COLUMNS,
    SCHEMA_VERSION,
    SERIES_KEYS,
    SqliteHistory,
    rebuild,
    run_record,
    series_id,
)
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _tag(folder: Path, **tags: str) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m["tags"] = tags
    (folder / "manifest.json").write_text(json.dumps(m))


def test_record_matches_the_run_folder(results: Path) -> None:
    run = RunResult.load(results / "tencent-analyse")
    rec = run_record(run)
    assert rec.run["suite"] == "tencent-analyse-tiny" and rec.run["status"] == "completed"
    assert rec.run["server_kind"] == "ferretdb" and rec.run["client_host"] == run.manifest.host.hostname
    m = pd.DataFrame(rec.metrics)
    steps = run.steps.set_index("step")
    tp = m[m["metric"] == "throughput_ops_s"].set_index("step")["value"]
    measured = steps[steps["phase"].isin(["load", "run"]) & (steps["status"] == "completed")]
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
from ycsb_runner.runs.history import SqliteHistory, run_record
from ycsb_runner.runs.model import RunResult
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
from ycsb_runner.runs.history import SqliteHistory, run_record
from ycsb_runner.runs.model import RunResult
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


# --- accepted changes (regress accept) ---------------------------------------------------------------------


def _acceptance(metric: str = "throughput_ops_s", change_run: str = "night-08", **extra: object) -> dict:
    row = {
        "suite": "quick",
        "phase": "run",
        "mix": "a",
        "threads": np.int64(4),  # as read from a frame: stored as a plain integer
        "audit": "none",
        "operation": "OVERALL" if metric == "throughput_ops_s" else "READ",
        "metric": metric,
        "change_run": change_run,
        "accepted_at_run": "night-10",
        "accepted_by": "alice",
        "accepted_at": "2026-12-01T08:00:00.000Z",
        "why": "new build | on purpose",
    }
    return {**row, **extra}


def test_accepts_round_trip_per_suite(tmp_path: Path) -> None:
    h = SqliteHistory(tmp_path / "history.sqlite")
    assert h.accepts("quick").columns.tolist() == ACCEPT_COLUMNS and h.accepts("quick").empty
    h.accept([_acceptance(), _acceptance("p99_us")])
    h.accept([_acceptance(suite="other"), _acceptance(accepted_at="2026-12-02T08:00:00.000Z", why="later")])
    got = h.accepts("quick")
    assert got["metric"].tolist() == ["throughput_ops_s", "p99_us", "throughput_ops_s"]
    assert got["why"].tolist() == ["new build | on purpose", "new build | on purpose", "later"]
    assert got["threads"].tolist() == [4, 4, 4] and set(got["suite"]) == {"quick"}
    assert series_id(got.loc[0, SERIES_KEYS]) == ("run", "a", "4", "none", "OVERALL", "throughput_ops_s")
    assert series_id([None, float("nan"), 4.0]) == ("", "", "4")
    assert h.accepts("other")["suite"].tolist() == ["other"]


def test_rebuild_keeps_the_accepted_changes(results: Path) -> None:
    history, _ = rebuild(results, log=lambda _m: None)
    history.accept([_acceptance(suite="tencent-analyse-tiny")])
    shutil.rmtree(results / "audit-analyse")
    history, n = rebuild(results, log=lambda _m: None)
    assert n == 1 and len(history.runs()) == 1
    assert history.accepts("tencent-analyse-tiny")["accepted_by"].tolist() == ["alice"]


_OLD_SCHEMA = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, suite TEXT NOT NULL, fingerprint TEXT NOT NULL, verdict TEXT NOT NULL,
    started_at TEXT, ended_at TEXT, server_kind TEXT, server_version TEXT, client_host TEXT,
    tags TEXT NOT NULL, folder TEXT, error TEXT
);
CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, step TEXT NOT NULL,
    repetition INTEGER, phase TEXT, mix TEXT, threads INTEGER, audit TEXT, operation TEXT, metric TEXT,
    value REAL
);
INSERT INTO runs VALUES ('old-1', 'quick', 'f', 'completed', '2026-11-01T02:00:00.000Z', NULL, '', '', '',
    '{"night": "1"}', '', '');
PRAGMA user_version=1;
"""


def test_a_history_of_schema_1_gains_the_accepts_and_alerts_tables(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    con = sqlite3.connect(db)
    con.executescript(_OLD_SCHEMA)
    con.close()
    h = SqliteHistory(db)
    assert h.accepts("quick").empty  # opened: the table was added
    assert h.runs()["run_id"].tolist() == ["old-1"] and h.runs()["tags"][0] == {"night": "1"}
    h.accept([_acceptance()])
    assert len(SqliteHistory(db).accepts("quick")) == 1  # opened again: nothing re-created
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    assert h.alerts() == []  # the alerts table was added too
    con.execute("PRAGMA user_version=9")
    con.commit()
    con.close()
    with pytest.raises(UserError, match="newer than this ycsb-runner's 4") as err:
        SqliteHistory(db).runs()
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("status", ["killed", "completed"])
def test_rebuild_lists_a_killed_run_whose_operations_were_cut(tmp_path: Path, status: str) -> None:
    """A run SIGKILLed while its files were written is still listed (as killed, without figures: it is never
    judged); the same damage in a completed run skips the folder with a warning (its figures would lie)."""
    from ycsb_runner.runs.history import rebuild

    dst = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "results" / "cut"))
    m = json.loads((dst / "manifest.json").read_text())
    m["run_id"], m["status"] = "cut", status
    (dst / "manifest.json").write_text(json.dumps(m))
    (dst / "operations.csv").write_text("run_id,st")  # cut in its header: no operation column
    said: list[str] = []
    history, n = rebuild(tmp_path / "results", log=said.append)
    runs = history.runs()
    if status == "killed":
        assert n == 1 and runs["status"].tolist() == ["killed"], said
        assert history.metrics(["cut"]).empty and any(
            "cut (killed) indexed without figures" in x for x in said
        )
    else:
        assert n == 0 and any("skipped cut" in line for line in said), said


def _as_findmax(folder: Path, run_id: str, found: int | None, limit_us: float = 10_000.0) -> Path:
    """A copy of the run folder as if findmax had run it: its run steps are the probes."""
    from ycsb_runner.findmax import search as fm

    m = json.loads((folder / "manifest.json").read_text())
    m["run_id"] = run_id
    opts = fm.FindmaxOptions(mix="read50_update50", bound=fm.Bound("p99", limit_us), threads=2)
    probes = [
        fm.Probe(s["step"], 100 * (i + 1), s["throughput_ops_s"], 5000.0, "READ", 0.0, True)
        for i, s in enumerate(x for x in m["steps"] if x["phase"] == "run")
    ]
    m["findmax"] = {**fm.summary(opts, probes, 100, True), "max_ops_s": found}
    out = folder.parent / run_id
    shutil.copytree(folder, out)
    (out / "manifest.json").write_text(json.dumps(m))
    return out


def test_a_findmax_run_records_its_found_rate_not_its_probes(results: Path) -> None:
    from ycsb_runner.nightly.regress import RegressOptions, regress

    src = results / "tencent-analyse"
    rec = run_record(RunResult.load(_as_findmax(src, "fm-1", 1234)))
    m = pd.DataFrame(rec.metrics)
    assert set(m["phase"]) == {"load", "findmax"}  # the probes' own figures follow their targets: left out
    row = m[m["phase"] == "findmax"].iloc[0]
    assert (row["metric"], row["value"], row["mix"], row["threads"]) == (
        "findmax_ops_s",
        1234,
        "read50_update50",
        2,
    )
    # other probe targets, same bound: one series; another bound: another series
    a = RunResult.load(results / "fm-1").manifest
    b = RunResult.load(_as_findmax(src, "fm-2", 999)).manifest
    c = RunResult.load(_as_findmax(src, "fm-3", 999, limit_us=5000.0)).manifest
    b.findmax.probes[0]["target"] = 777
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert a.fingerprint != RunResult.load(src).manifest.fingerprint
    # regress judges it higher-is-better: eight nights near 1000, then two at 700
    values = [1000, 1010, 990, 1005, 995, 1002, 998, 1003, 700, 690]
    recs = [run_record(RunResult.load(_as_findmax(src, f"night-{i:02d}", v))) for i, v in enumerate(values)]
    runs = pd.DataFrame([r.run for r in recs])
    metrics = pd.DataFrame([row for r in recs for row in r.metrics])
    out = regress(runs, metrics, "tencent-analyse-tiny", RegressOptions()).table
    found = out[out["metric"] == "findmax_ops_s"].iloc[0]
    assert found["verdict"] == "regression" and found["direction"] == "worse"


def test_record_times_are_the_manifests_own_text(results: Path) -> None:
    folder = results / "tencent-analyse"
    written = json.loads((folder / "manifest.json").read_text())
    rec = run_record(RunResult.load(folder))
    assert written["started_at"] and written["ended_at"]
    assert (rec.run["started_at"], rec.run["ended_at"]) == (written["started_at"], written["ended_at"])
