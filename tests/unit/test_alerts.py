"""Alerts and their triage (issue 46): stable ids, the SQLite store (upsert that keeps a triage state,
recovery, an older history read and migrated), precision from triage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.nightly.alerts import (
    STATES,
    TRIAGE_STATES,
    Alert,
    alert_id,
    precision,
)
from ycsb_runner.nightly.history import SERIES_KEYS, SqliteHistory, series_id

SERIES = dict(zip(SERIES_KEYS, ["run", "a", "4", "none", "READ", "p99_us"], strict=True))


def make_alert(change_run: str = "night-08", suite: str = "quick", **kw: object) -> Alert:
    key = series_id(SERIES[k] for k in SERIES_KEYS)
    fields = {
        "alert_id": alert_id(suite, key, change_run),
        "suite": suite,
        "series": dict(SERIES),
        "direction": "regression",
        "change_pct": -40.0,
        "change_run": change_run,
        "raised_run": "night-09",
        "raised_at": "2026-11-10T02:00:00.000Z",
    } | kw
    return Alert(**fields)  # type: ignore[arg-type]


def test_states_and_ids() -> None:
    assert TRIAGE_STATES == ("acknowledged", "investigating", "invalid", "fixed", "backed-out", "wontfix")
    assert set(STATES) - set(TRIAGE_STATES) == {"untriaged", "accepted"}
    key = ("run", "a", "4", "none", "READ", "p99_us")
    a = alert_id("quick", key, "night-08")
    assert a == alert_id("quick", key, "night-08") and len(a) == 11 and a.startswith("a")
    assert len({a, alert_id("quick", key, "night-09"), alert_id("other", key, "night-08")}) == 3
    assert make_alert().series_key == key


def test_sqlite_round_trip_keeps_the_triage_state(tmp_path: Path) -> None:
    h = SqliteHistory(tmp_path / "history.sqlite")
    assert h.alerts() == []
    a = make_alert()
    h.record_alerts([a])
    assert h.alerts() == [a] and h.alerts("quick") == [a] and h.alerts("other") == []
    why = "\x1b[31mred</td><script>x</script> {'$where': '1'}"
    t = h.triage(a.alert_id, "invalid", "alice", why, "https://bugs/1")
    assert t.status == "invalid" and t.status_by == "alice" and t.why == why and t.first_triaged_at
    # a later judgement raises the same alert again: its change moves, its triage stays
    h.record_alerts([make_alert(change_pct=-41.0, raised_run="night-10")])
    (stored,) = h.alerts()
    assert stored.status == "invalid" and stored.why == why and stored.link == "https://bugs/1"
    assert stored.change_pct == -41.0 and stored.raised_run == "night-09"
    again = h.triage(a.alert_id, "fixed", "bob")
    assert again.first_triaged_at == t.first_triaged_at and again.status_at and again.why is None
    h.mark_recovered(a.alert_id, "night-12")
    h.mark_recovered(a.alert_id, "night-13")  # the first recovery is kept
    assert h.alerts()[0].recovered_run == "night-12" and not h.alerts()[0].open
    h.record_alerts([make_alert()])  # flagged again: no longer recovered
    assert h.alerts()[0].recovered_run is None


def test_triage_refuses_unknown_ids_states_and_no_one(tmp_path: Path) -> None:
    h = SqliteHistory(tmp_path / "history.sqlite")
    h.record_alerts([make_alert()])
    aid = make_alert().alert_id
    with pytest.raises(UserError, match="no alert 'a000'"):
        h.triage("a000", "invalid", "alice")
    with pytest.raises(UserError, match="expected one of"):
        h.triage(aid, "sort-of", "alice")
    with pytest.raises(UserError, match="expected one of"):
        h.triage(aid, "untriaged", "alice")
    with pytest.raises(UserError, match="--by is empty"):
        h.triage(aid, "invalid", "")
    assert h.alerts()[0].status == "untriaged"


def test_a_schema_2_history_is_read_then_migrated(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    h = SqliteHistory(path)
    h.delete_runs([])
    h.accept([])  # creates the file at the current schema
    con = sqlite3.connect(path)
    con.execute("DROP TABLE alerts")
    con.execute("PRAGMA user_version=2")
    con.commit()
    con.close()
    assert h.alerts() == [] and h.runs().empty  # read as it is, without writing it
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2
    h.record_alerts([make_alert()])  # a write migrates it
    assert len(h.alerts()) == 1
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3


def test_precision_from_triage() -> None:
    assert precision([]).triaged == 0 and "cannot be told" in precision([]).line()
    alerts = [
        make_alert("n1", status="invalid", first_triaged_at="2026-11-10T04:00:00.000Z"),  # 2 h
        make_alert("n2", status="fixed", first_triaged_at="2026-11-10T12:00:00.000Z"),  # 10 h
        make_alert("n3", status="acknowledged", first_triaged_at="2026-11-11T02:00:00.000Z"),  # 24 h
        make_alert("n4", status="invalid", first_triaged_at="2026-11-13T02:00:00.000Z"),  # 72 h
        make_alert("n5"),  # untriaged: not counted
    ]
    p = precision(alerts)
    assert (p.triaged, p.invalid, p.invalid_pct) == (4, 2, 50.0)
    assert p.median_h == pytest.approx(17.0) and p.p80_h == pytest.approx(24 + 0.4 * 48)
    assert p.line() == (
        "of 4 triaged alerts, 2 invalid (50.0 %); time from alert to first triage: median 17.0 h, p80 43.2 h"
    )
