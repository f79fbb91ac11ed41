"""The run history: records read through RunResult, the SQLite store under kills and concurrent writers,
``history rebuild``, ``runs`` filters, and the MongoDB store against the embedded server."""

from __future__ import annotations

import io
import shutil
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.runs.history import (
    ACCEPT_COLUMNS,
    MongoHistory,
    RunFilter,
    open_history,
    rebuild,
    run_record,
    select_runs,
)
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


def test_mongodb_history_on_the_embedded_server(results: Path, mongo_url: str) -> None:
    """Several generators append to one MongoDB history: the same records as SQLite gives."""
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history = open_history(results, url)
    assert isinstance(history, MongoHistory)
    _, n = rebuild(results, url, log=lambda _m: None)
    assert n == 2
    local, _ = rebuild(results, log=lambda _m: None)
    ids = ["tencent-analyse", "audit-analyse"]
    key = ["run_id", "step", "operation", "metric"]
    mine = history.metrics(ids).sort_values(key).reset_index(drop=True)
    ref = local.metrics(ids).sort_values(key).reset_index(drop=True)
    assert len(mine) == len(ref) > 0
    assert mine["value"].tolist() == ref["value"].tolist()
    got = select_runs(history.runs(), RunFilter(suite="tencent-analyse-tiny"))
    assert got["run_id"].tolist() == ["tencent-analyse"]
    # the CLI through the environment variable, as a team's generators would
    res = CliRunner().invoke(app, ["runs", "-f", "csv"], env={"YCSB_RUNNER_HISTORY_URL": url})
    assert res.exit_code == 0 and set(pd.read_csv(io.StringIO(res.stdout))["run_id"]) == set(ids)
    history.index(run_record(RunResult.load(results / "tencent-analyse")))  # upsert, no duplicate
    assert len(history.runs()) == 2
    history._client.drop_database(db)


def test_a_mongodb_history_written_before_schema_4_is_read_with_each_runs_status(
    results: Path, mongo_url: str
) -> None:
    """A run document as ycsb-runner wrote it before schema 4 (its outcome under ``verdict``) is read with its
    status beside one indexed since (``status``), and ``runs --status`` filters both."""
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history = open_history(results, url)
    assert isinstance(history, MongoHistory)
    old = MongoHistory._doc(run_record(RunResult.load(results / "tencent-analyse")))
    del old["status"]
    old["verdict"] = "interrupted"  # (an interrupted run's, to tell the two apart)
    history._coll.insert_one(old)
    history.index(run_record(RunResult.load(results / "audit-analyse")))
    runs = history.runs()
    assert dict(zip(runs["run_id"], runs["status"], strict=True)) == {
        "tencent-analyse": "interrupted",
        "audit-analyse": "completed",
    }
    env = {"YCSB_RUNNER_HISTORY_URL": url}
    for status, listed in (("interrupted", ["tencent-analyse"]), ("completed", ["audit-analyse"])):
        res = CliRunner().invoke(app, ["runs", "-f", "csv", "--status", status], env=env)
        assert res.exit_code == 0 and pd.read_csv(io.StringIO(res.stdout))["run_id"].tolist() == listed
    history._client.drop_database(db)


def test_mongodb_history_keeps_accepted_changes(results: Path, mongo_url: str) -> None:
    """Acceptances go to their own collection, come back per suite as SQLite gives them, and a rebuild
    (which deletes the runs no folder has) keeps them."""
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history, _ = rebuild(results, url, log=lambda _m: None)
    local, _ = rebuild(results, log=lambda _m: None)
    row = {
        "suite": "tencent-analyse-tiny",
        "phase": "run",
        "mix": "read50_update50",
        "threads": np.int64(2),
        "audit": "none",
        "operation": "READ",
        "metric": "p99_us",
        "change_run": "tencent-analyse",
        "accepted_at_run": "tencent-analyse",
        "accepted_by": "alice",
        "accepted_at": "2026-12-01T08:00:00.000Z",
        "why": "new build",
    }
    later = {**row, "metric": "avg_us", "accepted_at": "2026-12-02T08:00:00.000Z", "why": "later"}
    for h in (history, local):
        h.accept([later])  # written first, newer: comes back second (oldest first by time)
        h.accept([row, {**row, "suite": "other"}])
    mine, ref = history.accepts("tencent-analyse-tiny"), local.accepts("tencent-analyse-tiny")
    assert mine.columns.tolist() == ACCEPT_COLUMNS and mine["why"].tolist() == ["new build", "later"]
    assert mine.astype(str).equals(ref.astype(str))
    shutil.rmtree(results / "audit-analyse")
    _, n = rebuild(results, url, log=lambda _m: None)
    assert n == 1 and len(history.runs()) == 1
    assert len(history.accepts("tencent-analyse-tiny")) == 2 and len(history.accepts("other")) == 1
    history._client.drop_database(db)


def test_mongodb_history_keeps_alerts_and_their_triage(results: Path, mongo_url: str) -> None:
    """Alerts on MongoDB as on SQLite: upsert keeps the triage state, a hostile why is stored verbatim
    (a value, never an operator), recovery keeps the first run, unknown ids are one-line errors."""
    import pytest

    from ycsb_runner.errors import UserError
    from ycsb_runner.runs.alerts import Alert, alert_id
    from ycsb_runner.runs.history import SERIES_KEYS

    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history = open_history(results, url)
    local = open_history(results)
    series = dict(zip(SERIES_KEYS, ["run", "a", "4", "none", "READ", "p99_us"], strict=True))
    a = Alert(
        alert_id("quick", tuple(series.values()), "night-08"),
        "quick",
        series,
        "regression",
        -40.0,
        "night-08",
        "night-09",
        "2026-11-10T02:00:00.000Z",
    )
    why = "\x1b[31m<b>x</b> {'$where': 'sleep(1)'}"
    for h in (history, local):
        h.record_alerts([a])
        assert h.alerts("quick") == [a] and h.alerts("other") == []
        h.triage(a.alert_id, "invalid", "alice", why, "https://bugs/1")
        h.record_alerts([Alert(**{**a.record(), "change_pct": -41.0})])
        h.mark_recovered(a.alert_id, "night-12")
        h.mark_recovered(a.alert_id, "night-13")
        with pytest.raises(UserError, match="no alert"):
            h.triage("a000", "invalid", "alice")
    (mine,), (ref,) = history.alerts(), local.alerts()
    assert mine.status == "invalid" and mine.why == why and mine.change_pct == -41.0
    assert mine.recovered_run == "night-12" and mine.link == "https://bugs/1"
    assert {**mine.record(), "status_at": 0, "first_triaged_at": 0} == {
        **ref.record(),
        "status_at": 0,
        "first_triaged_at": 0,
    }
    history._client.drop_database(db)


def test_mongodb_history_remembers_the_notifications_sent(results: Path, mongo_url: str) -> None:
    """The notification memory (regress --notify) on MongoDB as on SQLite: each (alert, event) once, the
    first time kept, a hostile event text stored as a value."""
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history = open_history(results, url)
    local = open_history(results)
    for h in (history, local):
        assert h.notified() == set()
        h.record_notified("a0123456789", "opened", "2026-11-10T02:00:00.000Z")
        h.record_notified("a0123456789", "opened", "2026-11-11T02:00:00.000Z")
        h.record_notified("a0123456789", "{'$gt': ''}", "2026-11-11T02:00:00.000Z")
    assert (
        history.notified() == local.notified() == {("a0123456789", "opened"), ("a0123456789", "{'$gt': ''}")}
    )
    doc = history._notifications.find_one({"_id": "a0123456789/opened"})
    assert doc["sent_at"] == "2026-11-10T02:00:00.000Z"
    history._client.drop_database(db)


def test_triage_round_trip_on_a_mongodb_history(tmp_path: Path, mongo_url: str) -> None:
    """Issue 46 on the MongoDB back-end, through the commands: regress raises the alerts, triage one
    invalid, `alerts --status untriaged` no longer lists it, the precision is shown, a hostile why (HTML,
    $where) is stored verbatim and shown as text, accept marks the rest accepted, prune keeps an open
    alert's nights."""
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
    from test_regress import _nightly_folders

    results = tmp_path / "results"
    _nightly_folders(results, [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0, 0.6, 0.6, 0.6])
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    env = {"YCSB_RUNNER_HISTORY_URL": url, "COLUMNS": "200"}
    runner = CliRunner()
    where = ["--results", str(results)]
    assert runner.invoke(app, ["history", "rebuild", *where], env=env).exit_code == 0
    suite = "tencent-analyse-tiny"
    res = runner.invoke(app, ["regress", suite, *where, "-f", "json"], env=env)
    assert res.exit_code == 1, res.output
    flagged = [r for r in json.loads(res.stdout)["rows"] if r["alert_id"]]
    n = len(flagged)  # every series of the slow nights: one alert each, stored in MongoDB
    assert (
        n >= 11 and len(MongoHistory(url).alerts()) == n and {r["triage"] for r in flagged} == {"untriaged"}
    )
    aid = flagged[0]["alert_id"]
    why = '<img src=x onerror=alert(1)> {"$where": "sleep(1000)"}'
    res = runner.invoke(
        app, ["regress", "triage", aid, "--status", "invalid", "--why", why, "--by", "alice"], env=env
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["alerts", "--status", "untriaged", "-f", "json"], env=env)
    doc = json.loads(res.stdout)
    assert len(doc["rows"]) == n - 1 and aid not in {r["alert_id"] for r in doc["rows"]}
    assert doc["precision"]["line"].startswith("of 1 triaged alerts, 1 invalid (100.0 %)")
    (row,) = json.loads(runner.invoke(app, ["alerts", "--status", "invalid", "-f", "json"], env=env).stdout)[
        "rows"
    ]
    assert row["why"] == why and row["status_by"] == "alice"
    stored = MongoHistory(url)
    assert [a.why for a in stored.alerts() if a.alert_id == aid] == [why]
    res = runner.invoke(app, ["regress", suite, *where, "-f", "json"], env=env)
    assert {r["triage"] for r in json.loads(res.stdout)["rows"] if r["alert_id"] == aid} == {"invalid"}
    # open alerts keep their nights (their baseline begins at night-00): prune removes nothing
    res = runner.invoke(app, ["history", "prune", *where, "--keep", "3", "--dry-run", "-f", "csv"], env=env)
    assert res.exit_code == 0 and len(pd.read_csv(io.StringIO(res.stdout))) == 0, res.output
    res = runner.invoke(
        app, ["regress", "accept", suite, *where, "--why", "new build", "--by", "bob"], env=env
    )
    assert res.exit_code == 0, res.output
    states = {a.status for a in stored.alerts() if a.alert_id != aid}
    assert states == {"accepted"}
    dry = runner.invoke(app, ["history", "prune", *where, "--keep", "3", "--dry-run", "-f", "csv"], env=env)
    real = runner.invoke(app, ["history", "prune", *where, "--keep", "3", "-f", "csv"], env=env)
    gone = pd.read_csv(io.StringIO(dry.stdout))["run_id"].tolist()
    assert len(gone) == 8 and pd.read_csv(io.StringIO(real.stdout))["run_id"].tolist() == gone
    assert sorted(stored.runs()["run_id"]) == ["night-08", "night-09", "night-10"]
    assert not any((results / r).exists() for r in gone)
    stored._client.drop_database(db)
