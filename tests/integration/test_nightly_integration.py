"""Acceptance of the nightly workflow with real runs: eleven "nights" of a scaled-down `quick` on the
embedded server (nights.py), the last three with the server throttled (stopped 80 % of the time, as
cpulimit does): a copy of the session's ``slow_server_nights`` (which the canary test judges with its
canaries; every regress here ignores them).
Judged as each night would be (``--until`` that night): regress flags the first slow night with --confirm 1
(exit 1), keeps the job failing on the second and third (the regression stays open), passes once the change
is accepted (``regress accept``), passes the unchanged history (exit 0) and cannot decide on two nights
(exit 2). Also: a bench killed with SIGKILL (the history survives it), and, not judged by speed, two benches
started at the same moment (one refused by the target lock).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from nights import NORMAL_NIGHTS, SLOW_NIGHTS, SMALL, copy_nights, night_values
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.install.embedded import ServerInfo
from ycsb_runner.nightly.changepoint import RECOVERED
from ycsb_runner.runs.history import SERIES_KEYS, SqliteHistory

# the tests of the nights are marked `alone` one by one: `make test` runs them with no worker beside them
ALONE = pytest.mark.alone
NIGHTS = NORMAL_NIGHTS + len(SLOW_NIGHTS)
SLOW_NIGHT = SLOW_NIGHTS[0]
# these nights' canaries (BasicDB ran 46-71 % slower on 3 of 8 normal nights beside other checkouts' tests
# on this shared host, and a change beginning on such a night is the environment's) are not judged here:
# test_canary_integration.py judges them
IGNORE_CANARIES = "--ignore-canaries"


@pytest.fixture(scope="module")
def nights(slow_server_nights: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This file's copy of the session's nights (its SIGKILL test adds a run to it)."""
    return copy_nights(slow_server_nights, tmp_path_factory.mktemp("nightly") / "results")


@ALONE
def test_every_night_is_in_the_history_with_its_tags(nights: Path) -> None:
    res = CliRunner().invoke(app, ["runs", "--results", str(nights), "--suite", "quick", "-f", "csv"])
    assert res.exit_code == 0, res.output
    runs = pd.read_csv(io.StringIO(res.stdout))
    assert runs["run_id"].tolist() == [f"night-{i}" for i in range(NIGHTS)]
    assert (runs["status"] == "completed").all() and runs["fingerprint"].nunique() == 1
    assert runs["tags"].iloc[SLOW_NIGHT] == f"night={SLOW_NIGHT},server=slow"
    assert runs["tags"].iloc[SLOW_NIGHT - 1] == f"night={SLOW_NIGHT - 1},server=normal"
    assert (nights / "latest").resolve() == (nights / f"night-{NIGHTS - 1}").resolve()


def _until(nights: Path, night: int) -> list[str]:
    """regress's view on the morning after *night*: the runs that started before it ended."""
    runs = SqliteHistory(nights / "history.sqlite").runs().set_index("run_id")
    return ["--until", str(runs.loc[f"night-{night}", "ended_at"])]


# The embedded server on a shared 2-core machine varies far more than 5 % from night to night (single
# latency nights 25 % off in runs here); the default --confirm 2 needs two changed nights, and here the
# unchanged history flagged nothing at --min-effect 5, 10 or 20. The unchanged-history check keeps a margin
# (20 %) so that CI's machine does not make it flaky. Beside other pytest-xdist workers the normal nights
# vary by tens of percent (a 10x slower night got only p=0.025 from 7 such nights), so the throttled night
# runs the server 30 ms in every second (a short period let the throttle's own sleeps overshoot on a busy
# machine: a 3 % share became ~12 %, only 8x slower): 40-50x slower, also beside 3 CPU burners here.
NOISY = ["--min-effect", "20"]


@ALONE
def test_regress_flags_the_slow_night(nights: Path) -> None:
    # one slow night: --confirm 1 flags it tonight; the default (--confirm 2) waits for a second night
    single = [
        "regress",
        "quick",
        IGNORE_CANARIES,
        "--results",
        str(nights),
        *_until(nights, SLOW_NIGHT),
        "--confirm",
        "1",
    ]
    res = CliRunner().invoke(app, [*single, "-f", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    flagged = [r for r in doc["rows"] if r["verdict"] == "regression"]
    # Which of the 8 series passes Holm's threshold depends on how noisy the 7 normal nights were beside the
    # other test workers (load throughput 91 % down got p = 0.0028, p_adjusted 0.017, on a busy hour, while
    # the run phase's mean latency got through). A series may also place its change one night early, when
    # the night before the slow one was slow too (load throughput 93 instead of about 200 ops/s in a run
    # here: the change found was nights 6-7). So: the slow night is found on its own in some series, and
    # every flagged series is much worse.
    assert flagged, doc["rows"]
    assert any(
        row["change_run"] == f"night-{SLOW_NIGHT}" and "server=slow" in row["change_tags"] for row in flagged
    ), flagged
    for row in flagged:
        if _open_before(row, f"night-{SLOW_NIGHT}"):  # kept open by the lifecycle rule: not recovered
            assert _worse(nights, row, doc["newest_run"]) >= RECOVERED * doc["min_effect_pct"], row
            continue
        assert (
            (row["change_pct"] <= -20) if row["metric"] == "throughput_ops_s" else (row["change_pct"] >= 20)
        ), row
    table = CliRunner().invoke(app, single)
    assert table.exit_code == 1 and f"night-{SLOW_NIGHT}" in table.stdout
    waits = CliRunner().invoke(
        app,
        [
            "regress",
            "quick",
            IGNORE_CANARIES,
            "--results",
            str(nights),
            *_until(nights, SLOW_NIGHT),
            *NOISY,
            "-f",
            "json",
        ],
    )
    _no_alarm(waits, nights, allow_before=f"night-{SLOW_NIGHT}")  # the slow night alone waits for a second
    assert json.loads(waits.stdout)["confirm"] == 2


def _open_before(row: dict, run: str) -> bool:
    """An open regression that began before *run*."""
    order = [f"night-{i}" for i in range(NIGHTS)]
    return row["test"].startswith("open since") and order.index(row["change_run"]) < order.index(run)


def _worse(nights: Path, row: dict, newest: str) -> float:
    """How much worse (in %) the test measures a flagged series (``_measured_change``, toward worse)."""
    change = _measured_change(nights, row, newest)
    return -change if row["metric"] == "throughput_ops_s" else change


def _measured_change(nights: Path, row: dict, newest: str) -> float:
    """The test's own figure for a flagged series: the median of its nights from ``change_run`` to *newest*
    against the median of the normal nights before, in % (from the history's values, not from regress:
    nights.night_values)."""
    runs = SqliteHistory(nights / "history.sqlite").runs().set_index("run_id")
    values = night_values(nights, row)
    order = [f"night-{i}" for i in range(NIGHTS) if f"night-{i}" in values.index]
    start, end = order.index(row["change_run"]), order.index(newest)
    before = values[[r for r in order[:start] if runs.loc[r, "tags"].get("server") == "normal"]]
    after = values[order[start : end + 1]]
    return float((after.median() / before.median() - 1) * 100)


def _no_alarm(res: Any, nights: Path, *, allow_before: str | None = None) -> None:
    """No series regressed; exit 0 when some series could tell, else exit 2 saying it could not tell (these
    few nights of the embedded server beside other test workers vary by tens of percent): never a pass
    that was not judged.

    The test workers beside these "normal" nights can slow several nights in a row: in one fresh-clone run
    nights 5-7 ran at 122, 108 and 94 ops/s against 170-196 before, a change regress rightly keeps open. So an
    alarm is allowed when it began before *allow_before* (the first slow night) and the nights themselves,
    as this test measures them from the history, are still worse the flagged way by what keeps a regression
    open (RECOVERED x --min-effect: one flagged at 20 % stays open at 18 %, as in a run here)."""
    doc = json.loads(res.stdout)
    flagged = [r for r in doc["rows"] if r["verdict"] == "regression"]
    for row in flagged:
        assert allow_before is not None, res.output
        order = [f"night-{i}" for i in range(NIGHTS)]
        assert order.index(row["change_run"]) < order.index(allow_before), res.output
        least = doc["min_effect_pct"] * (RECOVERED if row["test"].startswith("open since") else 1.0)
        assert _worse(nights, row, doc["newest_run"]) >= least, row
    if flagged:
        assert res.exit_code == 1, res.output
        return
    verdicts = {r["verdict"] for r in doc["rows"]}
    if verdicts & {"no change", "improvement"}:
        assert res.exit_code == 0, res.output
    else:
        assert res.exit_code == 2 and verdicts <= {"cannot tell", "untested"}, res.output
        assert all(
            r["detectable_pct"] > doc["min_effect_pct"] for r in doc["rows"] if r["verdict"] == "cannot tell"
        )


def _figures(nights: Path, doc: dict) -> str:
    """What regress said per series, and each night's throughput: for the report of a failure."""
    cols = [
        "phase",
        "operation",
        "metric",
        "verdict",
        "change_pct",
        "p_value",
        "p_adjusted",
        "test",
        "change_run",
    ]
    rows = pd.DataFrame(doc["rows"])[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}")
    h = SqliteHistory(nights / "history.sqlite")
    m = h.metrics(h.runs()["run_id"].tolist())
    tp = m[m["metric"] == "throughput_ops_s"].pivot_table(index="phase", columns="run_id", values="value")
    return f"{rows}\nthroughput per night:\n{tp.round(1).to_string()}"


@ALONE
def test_a_regression_stays_open_until_it_is_accepted(nights: Path, tmp_path: Path) -> None:
    """The issue's acceptance: at the defaults, exit 1 on the second and the third slow night (nothing
    absorbs the slow nights into the baseline), exit 0 after `regress accept`."""
    history = tmp_path / "history.sqlite"  # a copy: the acceptance stays out of the other tests' history
    shutil.copy(nights / "history.sqlite", history)
    base = ["regress", "quick", IGNORE_CANARIES, "--results", str(nights), "--history-url", str(history)]
    runner = CliRunner()
    opened: set[str] = set()
    for night in SLOW_NIGHTS[1:]:
        res = runner.invoke(app, [*base, *_until(nights, night), "-f", "json"])
        doc = json.loads(res.stdout)
        flagged = [r for r in doc["rows"] if r["verdict"] == "regression"]
        assert res.exit_code == 1, f"night {night}: {doc['decision']}\n{_figures(nights, doc)}"
        # the slow nights' change (from the night before them to the newest: beside two CPU burners the run
        # phase of night 8 kept its speed, 107 ops/s, and its change began at night 9), or an earlier one the
        # normal nights really show
        slow = {f"night-{n}" for n in (SLOW_NIGHT - 1, *SLOW_NIGHTS)}
        for r in flagged:
            if r["change_run"] not in slow:
                change = _measured_change(nights, r, f"night-{SLOW_NIGHT - 1}")
                worse = -change if r["metric"] == "throughput_ops_s" else change
                assert worse >= doc["min_effect_pct"], (r, change, _figures(nights, doc))
        opened |= {r["change_run"] for r in flagged}
    table = runner.invoke(app, base)
    assert table.exit_code == 1 and "open since night-" in table.stdout, table.output
    accept_argv = ["regress", "accept", "quick", *base[2:]]
    accept = runner.invoke(
        app, [*accept_argv, "--why", "throttled server: the new normal", "--by", "ci", "-f", "json"]
    )
    assert accept.exit_code == 0, accept.output
    rows = json.loads(accept.stdout)["rows"]
    # the flagged series, and any series of the same change that their acceptance brings over the threshold
    # (regress accept takes those too: one in a make test beside two CPU burners, UPDATE p99)
    assert len(rows) >= len(flagged) and {r["accepted_by"] for r in rows} == {"ci"}
    assert {r["change_run"] for r in rows} <= opened, rows
    after = runner.invoke(app, [*base, "-f", "json"])
    assert after.exit_code == 0, after.output
    doc = json.loads(after.stdout)
    accepted = [r for r in doc["rows"] if r["verdict"] == "accepted"]
    assert not [r for r in doc["rows"] if r["verdict"] == "regression"]
    # every accepted series is applied, with its newest acceptance: a series can take two, an earlier change
    # and the slow nights' change that shows once the first is accepted (beside two CPU burners: 8 rows, the
    # throughput accepted at night-3 and night-8, READ avg at night-5 and night-8, 6 series applied); those
    # whose change is recent (settling) show "accepted", and one that began earlier (a fresh clone's run
    # here: 8 accepted, 7 settling) is judged again from its change
    series = {tuple(r[k] for k in SERIES_KEYS) for r in rows}
    assert len(doc["accepts"]) == len(series), doc["accepts"]
    night = lambda run_id: int(run_id.removeprefix("night-"))  # noqa: E731
    newest = {
        key: max((r["change_run"] for r in rows if tuple(r[k] for k in SERIES_KEYS) == key), key=night)
        for key in series
    }  # a follow-up acceptance is of a later change
    assert {tuple(a[k] for k in SERIES_KEYS): a["change_run"] for a in doc["accepts"]} == newest
    assert len(accepted) == sum(bool(a["settling"]) for a in doc["accepts"]) >= 1, doc["accepts"]
    assert {a["change_run"] for a in doc["accepts"]} <= opened | {r["change_run"] for r in rows}
    table = runner.invoke(app, base)
    assert table.exit_code == 0 and "accepted night-" in table.stdout and "by ci at" in table.stdout
    again = runner.invoke(app, [*accept_argv, "--why", "again"])
    assert isinstance(again.exception, UserError) and again.exception.exit_code == 2
    assert str(again.exception).startswith("nothing open to accept in quick")


@ALONE
def test_regress_passes_the_unchanged_history(nights: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "regress",
            "quick",
            IGNORE_CANARIES,
            "--results",
            str(nights),
            "--tag",
            "server=normal",
            *NOISY,
            "-f",
            "json",
        ],
    )
    _no_alarm(res, nights, allow_before=f"night-{SLOW_NIGHT}")


@ALONE
def test_regress_cannot_decide_on_two_nights(nights: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "regress",
            "quick",
            IGNORE_CANARIES,
            "--results",
            str(nights),
            "--tag",
            "night=0",
            "--tag",
            "server=normal",
        ],
    )
    assert res.exit_code == 2
    res = CliRunner().invoke(
        app,
        [
            "regress",
            "quick",
            IGNORE_CANARIES,
            "--results",
            str(nights),
            "-f",
            "json",
            "--since",
            "2099-01-01",
        ],
    )
    assert res.exit_code == 2 and json.loads(res.stdout)["exit_code"] == 2


def _bench_cmd(url: str, results: Path, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "ycsb_runner", "bench", "quick", "--results", str(results)]
    for s in SMALL:
        argv += ["--set", s]
    return [*argv, "--no-monitors", "--no-report", "--no-canaries", "-f", "json", *extra]


def test_two_benches_at_once_one_is_refused(server: ServerInfo, tmp_path: Path) -> None:
    env = dict(os.environ, MONGODB_URL=server.url, YCSB_RUNNER_LOCK_DIR=str(tmp_path / "locks"))
    procs = [
        subprocess.Popen(
            _bench_cmd(server.url, tmp_path / "results", "--run-id", f"twin-{i}", "--tag", f"twin={i}"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in (0, 1)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    loser = next(i for i, p in enumerate(procs) if p.returncode == 2)
    winner = 1 - loser
    err = outs[loser][1]
    assert "another bench is running against" in err and f"pid {procs[winner].pid}" in err
    assert "Traceback" not in err
    summary = json.loads(outs[winner][0])
    assert summary["run_id"] == f"twin-{winner}" and summary["status"] == "completed"
    assert summary["tags"] == {"twin": str(winner)} and Path(summary["run_dir"]).is_dir()
    assert any(r["throughput_ops_s"] > 0 for r in summary["rows"])
    # the lock is gone with its holder: a third bench runs (--no-lock not needed)
    third = subprocess.run(
        _bench_cmd(server.url, tmp_path / "results", "--run-id", "third"),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert third.returncode == 0, third.stderr


@ALONE
def test_history_survives_a_bench_killed_with_sigkill(
    nights: Path, server: ServerInfo, tmp_path: Path
) -> None:
    db = nights / "history.sqlite"
    before = SqliteHistory(db).runs()
    env = dict(os.environ, MONGODB_URL=server.url, YCSB_RUNNER_LOCK_DIR=str(tmp_path / "locks"))
    proc = subprocess.Popen(
        _bench_cmd(server.url, nights, "--run-id", "killed", "--set", "maxexecutiontime=20"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    steps = nights / "killed" / "steps.csv"
    deadline = time.time() + 120
    while time.time() < deadline and not (steps.exists() and "run" in steps.read_text()):
        time.sleep(0.5)
    time.sleep(2)  # inside the run phase
    os.killpg(proc.pid, signal.SIGKILL)  # YCSB's JVM too
    proc.wait(timeout=30)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    after = SqliteHistory(db).runs()
    assert after["run_id"].tolist() == before["run_id"].tolist()  # the killed run never got indexed
    res = CliRunner().invoke(
        app,
        ["history", "rebuild", "--results", str(nights)],
        env={"YCSB_RUNNER_LOCK_DIR": str(tmp_path / "locks")},
    )
    assert res.exit_code == 0, res.output
    runs = SqliteHistory(db).runs().set_index("run_id")
    if "killed" not in runs.index:  # the whole of what rebuild said (an assert message would be cut)
        pytest.fail(f"{res.output}\n{sorted(p.name for p in (nights / 'killed').iterdir())}")
    assert runs.loc["killed", "status"] == "killed" and len(runs) == NIGHTS + 1
    # the newest run was killed: regress cannot judge it
    res = CliRunner().invoke(app, ["regress", "quick", IGNORE_CANARIES, "--results", str(nights)])
    assert res.exit_code == 2 and "killed" in res.stderr
