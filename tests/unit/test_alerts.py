"""Alerts and their triage (issue 46): stable ids, the SQLite store (upsert that keeps a triage state,
recovery, an older history read and migrated), precision from triage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.runs.alerts import (
    STATES,
    TRIAGE_STATES,
    Alert,
    alert_id,
    precision,
)
from ycsb_runner.runs.history import SERIES_KEYS, SqliteHistory, series_id

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
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 4


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


# --- regress raises them, triage and alerts on the command line ------------------------------------------

TINY = "tencent-analyse-tiny"
NOISE = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0]


@pytest.fixture
def slow(tmp_path: Path) -> Path:
    from test_regress import _nightly_history

    results = tmp_path / "results"
    _nightly_history(results, [*NOISE, 0.6, 0.6, 0.6])  # eight normal nights, three 40 % slower
    return results


def _json(res: object) -> dict:
    import json

    assert res.exit_code in (0, 1), res.output  # type: ignore[attr-defined]
    return json.loads(res.stdout)  # type: ignore[attr-defined]


# the tiny suite's series that a slower server moves: throughput, average, p99 and max latency and the
# latency distribution of its steps' operations (every one regresses on the slow nights)
FLAGGED = 19


def test_regress_raises_alerts_and_triage_round_trip(slow: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    doc = _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    flagged = [r for r in doc["rows"] if r["verdict"] == "regression"]
    assert len(flagged) == FLAGGED and all(r["alert_id"] and r["triage"] == "untriaged" for r in flagged)
    assert all(r["alert_id"] == "" for r in doc["rows"] if r["verdict"] != "regression")
    h = SqliteHistory(slow / "history.sqlite")
    assert {a.alert_id for a in h.alerts(TINY)} == {r["alert_id"] for r in flagged}
    again = _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))  # the same ids, no new alert
    assert {r["alert_id"] for r in again["rows"]} == {r["alert_id"] for r in doc["rows"]}
    assert len(h.alerts()) == FLAGGED
    res = runner.invoke(app, ["regress", TINY, *where], env={"COLUMNS": "80"})
    assert f"{FLAGGED} alert(s) untriaged" in res.stderr + res.stdout
    aid = flagged[0]["alert_id"]
    why = '<b>noise</b> {"$where": "sleep(1000)"} & co'
    res = runner.invoke(
        app,
        ["regress", "triage", aid, "--status", "invalid", "--why", why, "--by", "alice", *where],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    untriaged = _json(runner.invoke(app, ["alerts", *where, "--status", "untriaged", "-f", "json"]))
    assert len(untriaged["rows"]) == FLAGGED - 1 and aid not in {r["alert_id"] for r in untriaged["rows"]}
    assert untriaged["precision"]["triaged"] == 1 and untriaged["precision"]["invalid"] == 1
    (inv,) = _json(runner.invoke(app, ["alerts", TINY, *where, "--status", "invalid", "-f", "json"]))["rows"]
    assert (inv["alert_id"], inv["status_by"], inv["why"]) == (aid, "alice", why)  # verbatim
    res = runner.invoke(app, ["alerts", *where])
    assert "of 1 triaged alerts, 1 invalid (100.0 %)" in res.stderr and aid in res.stdout
    # regress shows the state where it shows the row
    doc = _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    assert {r["triage"] for r in doc["rows"] if r["alert_id"] == aid} == {"invalid"}
    # refused: no one, unknown states and ids, control characters, a link that is not http(s)
    for args, says in [
        (["--status", "invalid", "--by", ""], "--by is empty"),
        (["--status", "accepted"], "expected one of acknowledged"),
        (["--status", "invalid", "--why", "a\x1b[31mb"], "control character U+001B"),
        (["--status", "invalid", "--link", "javascript:alert(1)"], "expected an http(s) URL"),
    ]:
        res = runner.invoke(app, ["regress", "triage", aid, *args, *where])
        assert isinstance(res.exception, UserError) and res.exception.exit_code == 2, args
        assert says in str(res.exception), args
    res = runner.invoke(app, ["regress", "triage", "a0000000000", "--status", "fixed", *where])
    assert isinstance(res.exception, UserError) and "no alert 'a0000000000'" in str(res.exception)
    assert h.alerts()[0].status in ("untriaged", "invalid") and len(h.alerts()) == FLAGGED


def test_a_plan_records_no_alert(slow: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    res = runner.invoke(app, ["regress", TINY, "--plan", "--min-effect", "5", *where])
    assert res.exit_code in (0, 2) and "plan for" in res.output + res.stderr, res.output
    assert SqliteHistory(slow / "history.sqlite").alerts() == []  # a plan judges nothing
    _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    assert len(SqliteHistory(slow / "history.sqlite").alerts()) == FLAGGED


def test_accept_marks_the_alerts_accepted(slow: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    res = runner.invoke(app, ["regress", "accept", TINY, *where, "--why", "new build", "--by", "bob"])
    assert res.exit_code == 0, res.output  # no regress ran before: accept raises the alerts itself
    h = SqliteHistory(slow / "history.sqlite")
    got = h.alerts(TINY)
    assert len(got) == FLAGGED and {(a.status, a.status_by, a.why) for a in got} == {
        ("accepted", "bob", "new build")
    }
    assert not any(a.open for a in got)


def test_accept_keeps_a_state_triage_closed(slow: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    doc = _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    first, second = [r["alert_id"] for r in doc["rows"] if r["alert_id"]][:2]
    h = SqliteHistory(slow / "history.sqlite")
    h.triage(first, "invalid", "alice", "noise")
    h.triage(second, "investigating", "alice")
    assert runner.invoke(app, ["regress", "accept", TINY, *where, "--why", "new build"]).exit_code == 0
    states = {a.alert_id: a.status for a in h.alerts()}
    assert states[first] == "invalid" and states[second] == "accepted"
    assert sum(s == "accepted" for s in states.values()) == FLAGGED - 1


def test_a_hostile_why_is_stored_verbatim_and_printed_escaped(slow: Path) -> None:
    """A why with ESC (written by another tool through the library) comes back as it was stored, and the
    terminal table shows it escaped."""
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    h = SqliteHistory(slow / "history.sqlite")
    aid = h.alerts()[0].alert_id
    why = '\x1b[2J\x1b[31m<script>alert(1)</script> {"$where": "1"}'
    h.triage(aid, "investigating", "mallory", why)
    assert [a.why for a in h.alerts() if a.alert_id == aid] == [why]  # the triaged alert's, verbatim
    res = runner.invoke(
        app, ["alerts", *where, "--status", "investigating", "--wide"], env={"COLUMNS": "250"}
    )
    assert res.exit_code == 0 and "\x1b" not in res.stdout and "<script>" in res.stdout
    assert "\\x1b" in res.stdout or "^[" in res.stdout or "␛" in res.stdout


def test_an_alert_recovers_when_its_series_shows_no_change(tmp_path: Path) -> None:
    from test_regress import _nightly_history

    from ycsb_runner.cli import app

    results = tmp_path / "results"
    runner = _nightly_history(results, [*NOISE, 0.6, 0.6, 0.6, *NOISE])  # slower for three nights, then back
    where = ["--results", str(results)]
    assert runner.invoke(app, ["regress", TINY, *where, "--until", "2026-11-10"]).exit_code == 1
    h = SqliteHistory(results / "history.sqlite")
    assert len(h.alerts()) == FLAGGED and all(a.open for a in h.alerts())
    # the newest night "cannot tell" a 5 % change: that is no recovery
    assert runner.invoke(app, ["regress", TINY, *where]).exit_code == 2
    assert all(a.open for a in h.alerts())
    res = runner.invoke(app, ["regress", TINY, *where, "--min-effect", "20", "-f", "json"])
    assert res.exit_code == 0  # no regression
    verdicts = {series_id(r[k] for k in SERIES_KEYS): r["verdict"] for r in _json(res)["rows"]}
    recovered = {a.alert_id for a in h.alerts() if a.recovered_run == "night-18"}
    # exactly the alerts whose series now shows no change recovered; one that cannot tell stays open
    assert recovered == {
        a.alert_id for a in h.alerts() if verdicts[series_id(a.series[k] for k in SERIES_KEYS)] == "no change"
    }
    assert len(recovered) >= FLAGGED - 4 and all(a.open for a in h.alerts() if a.alert_id not in recovered)
    assert {a.status for a in h.alerts()} == {"untriaged"}


def test_a_rebuild_keeps_the_alerts_and_the_report_shows_their_state(slow: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    runner = CliRunner()
    where = ["--results", str(slow)]
    doc = _json(runner.invoke(app, ["regress", TINY, *where, "-f", "json"]))
    aid = next(r["alert_id"] for r in doc["rows"] if r["alert_id"])
    h = SqliteHistory(slow / "history.sqlite")
    h.triage(aid, "investigating", "alice", "<i>looking</i>")
    assert runner.invoke(app, ["history", "rebuild", *where]).exit_code == 0
    assert len(h.alerts()) == FLAGGED and {a.status for a in h.alerts() if a.alert_id == aid} == {
        "investigating"
    }
    out = tmp_path / "report"
    assert runner.invoke(app, ["regress", TINY, *where, "--report", str(out)]).exit_code == 1
    md, page = (out / "regress.md").read_text(), (out / "regress.html").read_text()
    assert f"| {aid} investigating |" in md and aid in page and "untriaged" in page
