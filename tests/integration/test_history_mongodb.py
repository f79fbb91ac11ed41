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
from ycsb_runner.model import RunResult
from ycsb_runner.nightly.history import (
    ACCEPT_COLUMNS,
    MongoHistory,
    RunFilter,
    open_history,
    rebuild,
    run_record,
    select_runs,
)

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
    from ycsb_runner.nightly.alerts import Alert, alert_id
    from ycsb_runner.nightly.history import SERIES_KEYS

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
