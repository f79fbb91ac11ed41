"""The canaries: their history rows, when one moved, and regress's verdict with them (pure, over history
frames shaped as a bench writes them)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from history_rows import night_metrics, night_run

from ycsb_runner.execute.canary import CpuMark, host_shares
from ycsb_runner.nightly import canary
from ycsb_runner.nightly.regress import (
    ENVIRONMENT,
    EXIT_OK,
    EXIT_REGRESSION,
    EXIT_UNDECIDED,
    REGRESSION,
    RegressOptions,
    regress,
)
from ycsb_runner.runs.history import CANARY, METRIC_COLUMNS, RUN_COLUMNS, canary_rows
from ycsb_runner.runs.model import CanariesRecord

CV = 0.02  # the database's series, night to night
CANARY_CV = 0.03


def _figures(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    tp = 1000 * np.exp(CV * rng.standard_normal(n))
    lat = 2000 * np.exp(CV * rng.standard_normal(n))
    ops = 1.4e6 * np.exp(CANARY_CV * rng.standard_normal(n))
    return tp, lat, ops


def _history(
    n: int,
    *,
    client_slow: tuple[int, ...] = (),
    server_slow: tuple[int, ...] = (),
    client_factor: float = 0.2,
    server_factor: float = 0.3,
    canaries: bool = True,
    seed: int = 3,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """*n* nights of one run step (throughput, READ avg and p99) and their canaries; on *client_slow* nights
    the load generator runs *client_factor* of the time (its BasicDB capacity and the database's throughput
    fall alike, latencies rise), on *server_slow* nights the server (the canaries do not move)."""
    tp, lat, ops = _figures(n, seed)
    runs, rows = [], []
    for i in range(n):
        rid = f"night-{i:02d}"
        runs.append(night_run(i))
        slow = (client_factor if i in client_slow else 1.0) * (server_factor if i in server_slow else 1.0)
        figures = {"throughput_ops_s": tp[i] * slow, "avg_us": lat[i] / slow, "p99_us": 5 * lat[i] / slow}
        rows += night_metrics(rid, figures)
        if canaries:
            capacity = ops[i] * (client_factor if i in client_slow else 1.0)
            section = {
                "load_generator": [
                    {"client": "local", "threads": 1, "ops_s": {"before": capacity, "after": capacity}}
                ],
                "rtt_us": {"before": 180.0 + i % 3, "after": 181.0},
                "host": {"steal_pct": 0.1, "others_cpu_pct": 3.0 + (i % 4)},
            }
            rows += canary_rows(rid, CanariesRecord.from_json(section))
    return pd.DataFrame(runs).reindex(columns=RUN_COLUMNS), pd.DataFrame(rows, columns=METRIC_COLUMNS)


def test_canary_rows_are_series_of_their_own() -> None:
    section = {
        "load_generator": [{"client": "local", "threads": 1, "ops_s": {"before": 1.0e6, "after": 2.0e6}}],
        "rtt_us": {"before": 150.0},
        "host": {"steal_pct": 0.5, "others_cpu_pct": None, "why_not": "the server runs on this host"},
    }
    rows = pd.DataFrame(canary_rows("r1", CanariesRecord.from_json(section)))
    assert (rows["phase"] == CANARY).all() and (rows["step"] == CANARY).all()
    got = {(r.mix, r.operation, r.metric, r.repetition): r.value for r in rows.itertuples()}
    assert got == {
        ("load-generator", "local", "canary_ops_s", 0): 1.0e6,
        ("load-generator", "local", "canary_ops_s", 1): 2.0e6,
        ("round-trip", "PING", "canary_rtt_us", 0): 150.0,
        ("host", "OVERALL", "canary_steal_pct", 0): 0.5,
    }  # what was not measured is no row (None, a missing "after")
    assert canary_rows("r1", None) == []


def test_host_shares_leave_out_our_own_cpu() -> None:
    first = CpuMark(0.0, busy=100.0, total=400.0, steal=1.0, ours=50.0, server_pid=7)
    last = CpuMark(10.0, busy=160.0, total=420.0, steal=2.0, ours=95.0, server_pid=7)
    steal, others, why = host_shares(first, last)
    assert steal == pytest.approx(5.0) and others == pytest.approx(75.0) and why == ""  # (60 - 45) / 20
    restarted = CpuMark(10.0, busy=160.0, total=420.0, steal=2.0, ours=95.0, server_pid=8)
    assert host_shares(first, restarted)[1] is None and "restarted" in host_shares(first, restarted)[2]


def test_a_canary_moves_only_beyond_its_own_noise_and_floor() -> None:
    rng = np.random.default_rng(5)
    values = 1.4e6 * np.exp(0.03 * rng.standard_normal(15))
    ids = [f"n{i}" for i in range(15)]
    assert canary.night_moves("canary_ops_s", "local", values, ids) == []
    slow = values.copy()
    slow[12] *= 0.6  # 40 % less capacity
    slow[13] *= 0.95  # within the noise
    moved = canary.night_moves("canary_ops_s", "local", slow, ids)
    assert [m.run_id for m in moved] == ["n12"]
    pct = 100 * (1 - slow[12] / np.median(slow[:12]))  # against the median of the nights before
    assert moved[0].text == f"the load generator local was {pct:.0f} % slower on n12" and 35 < pct < 45
    # a noisy canary (15 % night to night): 25 % less is above the floor but within its noise
    noisy = 1.4e6 * np.exp(0.15 * rng.standard_normal(15))
    noisy[12] = 0.75 * np.median(noisy[:12])
    assert "n12" not in [m.run_id for m in canary.night_moves("canary_ops_s", "local", noisy, ids)]
    # a quiet canary (0.1 % noise): 5 % is beyond its noise but under its floor (10 %)
    quiet = 1.4e6 * np.exp(0.001 * rng.standard_normal(15))
    quiet[12] *= 0.95
    assert canary.night_moves("canary_ops_s", "local", quiet, ids) == []
    # a longer round trip and more CPU taken by others are worse; a shorter one is not
    rtt = np.full(10, 180.0) + rng.standard_normal(10)
    rtt[8], rtt[9] = 400.0, 90.0
    assert [m.run_id for m in canary.night_moves("canary_rtt_us", "PING", rtt, ids)] == ["n8"]
    others = np.array([3.0, 5.0, 4.0, 6.0, 4.0, 60.0])
    got = canary.night_moves("canary_others_cpu_pct", "OVERALL", others, ids)
    assert [m.run_id for m in got] == ["n5"] and math.isclose(got[0].slowdown, math.log(96 / 40))


def test_a_slower_load_generator_is_the_environment_not_a_regression() -> None:
    """The load generator throttled on the newest three nights: the database's series fall as its capacity
    does; regress says environment (exit 2), names the canary, and --ignore-canaries flags them (exit 1)."""
    runs, metrics = _history(12, client_slow=(9, 10, 11))
    first = regress(runs.iloc[:10], metrics, "quick", RegressOptions())  # one slow night: nothing to confirm
    assert first.exit_code != EXIT_REGRESSION
    assert any("load generator local was 80 % slower on night-09" in line for line in first.canary_lines)
    for n in (11, 12):
        out = regress(runs.iloc[:n], metrics, "quick", RegressOptions())
        assert out.exit_code == EXIT_UNDECIDED, out.reason
        assert set(out.table["verdict"]) == {ENVIRONMENT}
        assert "the load generator local was 80 % slower on night-09" in out.reason
        assert out.summary()["environment"] == 3 and out.events[0]["canaries"]
        ignored = regress(runs.iloc[:n], metrics, "quick", RegressOptions(canaries=False))
        assert ignored.exit_code == EXIT_REGRESSION and set(ignored.table["verdict"]) == {REGRESSION}
        assert ignored.canary_lines == ["canaries ignored (--ignore-canaries)"]


def test_a_slower_server_after_a_slower_load_generator_is_a_regression_from_its_second_night() -> None:
    """Three nights of a throttled load generator, then a throttled server: the load generator's nights are
    left out of the baseline once older than the window; the server's change is a regression (exit 1) from
    its second night, with the canaries quiet on it."""
    runs, metrics = _history(15, client_slow=(9, 10, 11), server_slow=(12, 13, 14))
    codes = [regress(runs.iloc[:n], metrics, "quick", RegressOptions()).exit_code for n in (13, 14, 15)]
    assert codes[0] == EXIT_UNDECIDED and codes[1:] == [EXIT_REGRESSION, EXIT_REGRESSION], codes
    out = regress(runs.iloc[:14], metrics, "quick", RegressOptions())
    assert set(out.table["verdict"]) == {REGRESSION}
    assert all("left out, their canaries moved: night-09, night-10" in n for n in out.table["note"])
    assert out.events[0]["most"] and "one change at" in out.reason


def test_a_change_far_larger_than_the_canary_is_the_database() -> None:
    """The load generator 20 % slower on the nights the server became 10x slower: the change is far larger
    than the canary's (log 2.3 against 4 x log 1.25 = 0.89), a regression."""
    runs, metrics = _history(
        12, client_slow=(10, 11), server_slow=(10, 11), client_factor=0.8, server_factor=0.1
    )
    out = regress(runs, metrics, "quick", RegressOptions())
    verdicts = dict(zip(out.table["metric"], out.table["verdict"], strict=True))
    # the load generator's own tail (p99) is not bounded by its slowdown: it cannot tell that one
    assert out.exit_code == EXIT_REGRESSION and verdicts == {
        "throughput_ops_s": REGRESSION,
        "avg_us": REGRESSION,
        "p99_us": ENVIRONMENT,
    }
    stands = out.table[out.table["verdict"] == REGRESSION]
    assert all("yet the change stands" in n for n in stands["note"])


def test_no_canaries_is_said_and_changes_nothing() -> None:
    runs, metrics = _history(12, server_slow=(10, 11), canaries=False)
    out = regress(runs, metrics, "quick", RegressOptions())
    assert out.exit_code == EXIT_REGRESSION
    assert out.canary_lines == ["no canaries in these runs (bench measures them unless --no-canaries)"]
    quiet = regress(*_history(12), "quick", RegressOptions())
    assert quiet.exit_code == EXIT_OK and quiet.canary_lines == [
        "3 canary series: none moved on the newest 3 nights"
    ]


def test_a_canary_whose_two_probes_of_a_night_differ_has_that_much_noise() -> None:
    """Three steady nights make a tiny MAD; the two probes of each night differing by 30 % say the canary's
    noise is about 15 %: a night 35 % slower is within 4 of it, one 90 % slower is not."""
    ids = [f"n{i}" for i in range(6)]
    values = np.array([1.0e6, 1.01e6, 0.99e6, 1.0e6, 0.65e6, 0.1e6])
    within = np.full(6, np.log(1.3) / 2)
    assert [m.run_id for m in canary.night_moves("canary_ops_s", "local", values, ids)] == ["n4", "n5"]
    assert [m.run_id for m in canary.night_moves("canary_ops_s", "local", values, ids, within)] == ["n5"]


def test_other_processes_cpu_is_recorded_not_judged() -> None:
    """Other processes' CPU rises when the run leaves CPU idle (a slower server on a shared host): a night
    where it went from 3-6 % to 80 % with the server throttled is the database's regression."""
    runs, metrics = _history(12, server_slow=(10, 11))
    busy = (metrics["metric"] == "canary_others_cpu_pct") & metrics["run_id"].isin(["night-10", "night-11"])
    metrics.loc[busy, "value"] = 80.0
    out = regress(runs, metrics, "quick", RegressOptions())
    assert out.exit_code == EXIT_REGRESSION and set(out.table["verdict"]) == {REGRESSION}, out.reason
