"""Steady state: the warm-up rule (MSER), the stationarity test, and steady-state figures from HDR logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram
from test_multi_merge import _write_log  # one writer of YCSB-shaped interval logs for the unit tests

from ycsb_runner.analyse.steady import mser_cut, stationarity, steady_state
from ycsb_runner.parse.merge import interval_series, read_client_logs, with_steady

LEVEL = 1000.0


def ramp_then_flat(seed: int, ramp: int = 20, flat: int = 100, noise: float = 0.01) -> np.ndarray:
    """Throughput per 1-s interval: a linear ramp over *ramp* intervals, then flat at LEVEL."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.linspace(0, LEVEL, ramp + 1)[1:], np.full(flat, LEVEL)])
    return y * (1 + rng.normal(0, noise, y.size))


@pytest.mark.parametrize("seed", range(20))
def test_warm_up_end_of_a_20_s_ramp_is_found_within_2_intervals(seed: int) -> None:
    cut = mser_cut(ramp_then_flat(seed))
    assert abs(cut.intervals - 20) <= 2 and cut.settled


def test_a_flat_series_loses_almost_nothing_and_a_ramp_that_never_ends_is_not_settled() -> None:
    flat = LEVEL * (1 + np.random.default_rng(7).normal(0, 0.02, 60))
    assert mser_cut(flat).intervals <= 2
    climbing = np.linspace(100, LEVEL, 60)
    cut = mser_cut(climbing)
    assert not cut.settled and cut.intervals > 20


def _drifting(seed: int, pct_per_min: float, n: int = 120, noise: float = 0.02) -> tuple[np.ndarray, ...]:
    t = np.arange(n) + 0.5
    y = LEVEL * (1 + pct_per_min / 100 * t / 60) * (1 + np.random.default_rng(seed).normal(0, noise, n))
    return t, y


@pytest.mark.parametrize("seed", range(10))
def test_a_drift_is_flagged_and_a_flat_series_is_not(seed: int) -> None:
    t, y = _drifting(seed, -8.0)
    falling = stationarity(t, y, np.ones_like(t))
    assert falling.drift and not falling.stationary
    assert falling.slope_low_pct_per_min < -8.0 * 0.5 and falling.slope_high_pct_per_min < 0
    said = falling.describe()  # the change over the 120 s measured, never a rate per minute
    assert "still falling" in said and "%/min" not in said and "over the last 120 s" in said
    assert f"{falling.slope_pct_per_min * 2:+.0f} %" in said
    t, y = _drifting(seed, 0.0)
    flat = stationarity(t, y, np.ones_like(t))
    assert flat.stationary and flat.describe() == ""
    assert 0.01 < flat.cv < 0.03  # the noise's 2 %


def test_the_slope_interval_covers_the_true_slope_about_95_percent_of_the_time_with_correlated_noise() -> (
    None
):
    rng = np.random.default_rng(5)
    t = np.arange(120) + 0.5
    covered = 0
    for _ in range(300):
        e = np.zeros(t.size)
        for i in range(1, t.size):  # AR(1) noise, as consecutive intervals of a real run are
            e[i] = 0.5 * e[i - 1] + rng.normal(0, 0.02)
        test = stationarity(t, LEVEL * (1 + e))
        covered += test.slope_low_pct_per_min <= 0 <= test.slope_high_pct_per_min
    assert covered / 300 >= 0.90


def test_a_small_but_significant_slope_below_the_effect_bound_is_not_a_drift() -> None:
    t, y = _drifting(1, -1.0, noise=0.001)  # -2 % over the 2 minutes: real, but under DRIFT_MIN_PCT
    test = stationarity(t, y)
    assert test.slope_high_pct_per_min < 0 and not test.drift


def test_a_stall_in_the_middle_is_flagged_even_without_a_trend() -> None:
    t = np.arange(60) + 0.5
    y = LEVEL * (1 + np.random.default_rng(3).normal(0, 0.02, 60))
    y[25:35] = 0.0
    test = stationarity(t, y, np.ones_like(t))
    assert test.stall and not test.stationary
    assert test.stall_s == 10.0 and test.stall_at_s == pytest.approx(25.0)
    one = y.copy()
    one[30] = 0.0
    one[25:30] = one[31:35] = LEVEL
    assert not stationarity(t, one).stall  # one slow interval is not a stall


# --- from HDR interval logs -------------------------------------------------------------------------------


@pytest.fixture
def ramped_logs(tmp_path: Path) -> tuple[Path, dict[str, list[list[int]]]]:
    """READ and UPDATE logs of one client: 20 s of ramp (few, slow operations), then 60 s flat."""
    rng = np.random.default_rng(11)
    values: dict[str, list[list[int]]] = {"READ": [], "UPDATE": []}
    for i in range(80):
        n = int(10 + 190 * min(i + 1, 20) / 20) + int(rng.integers(0, 3))
        for name, base in (("READ", 800), ("UPDATE", 1500)):
            slow = 5.0 if i < 20 else 1.0  # the warm-up is slow too
            values[name].append([int(base * slow * v) for v in rng.lognormal(0, 0.4, n)])
    d = tmp_path / "hdr"
    d.mkdir()
    for name, ivs in values.items():
        _write_log(d / f"{name}.hdr", name, 1_700_000_000.0 + (0.004 if name == "UPDATE" else 0), ivs)
    return d, values


def test_interval_series_adds_the_measurements_of_one_tick(ramped_logs) -> None:
    d, values = ramped_logs
    series = interval_series(read_client_logs({"local": d})["local"])
    assert series.ops.size == 80
    assert series.ops[0] == len(values["READ"][0]) + len(values["UPDATE"][0])
    assert series.ops.sum() == sum(len(v) for vs in values.values() for v in vs)


def test_steady_percentiles_are_those_of_one_histogram_of_the_kept_intervals(ramped_logs) -> None:
    d, values = ramped_logs
    logs = read_client_logs({"local": d})
    steady = steady_state(logs)
    cut = steady.warmup_s["local"]
    assert 18.0 <= cut <= 22.0 and steady.rule == "MSER"
    first = int(round(cut))
    ops = pd.DataFrame({"section": ["READ", "UPDATE"], "p99_us": [1.0, 2.0]})
    out = with_steady(ops, steady.kept, [50.0, 99.0, 99.9])
    for name in ("READ", "UPDATE"):
        one = HdrHistogram(1, 3_600_000_000, 3)
        kept = [v for iv in values[name][first:] for v in iv]
        for v in kept:
            one.record_value(v)
        row = out[out["section"] == name].iloc[0]
        assert row["steady_operations"] == len(kept)
        for p in (50.0, 99.0, 99.9):
            assert row[f"steady_p{p:g}_us"] == one.get_value_at_percentile(p)
        assert row["steady_max_latency_us"] == one.get_max_value()
        assert row["p99_us"] == ops.set_index("section").at[name, "p99_us"]  # the whole-run column stays
    assert steady.stationary and steady.warnings() == []


def test_a_fixed_warmup_wins_over_the_rule(ramped_logs) -> None:
    d, _ = ramped_logs
    steady = steady_state(read_client_logs({"local": d}), fixed_warmup_s=5.0)
    assert steady.rule == "warmup_s" and steady.warmup_s == {"local": 5.0}
    assert steady.figures()["warmup_end_s"] == 5.0
    assert min(iv.start_s for log in steady.kept["local"] for iv in log.intervals) == 5.0


def test_each_client_gets_its_own_cut_and_a_stalled_one_is_named(tmp_path: Path) -> None:
    """Three load generators: b starts 7 s after a and ramps up over 10 intervals instead of 20; c has no
    ramp but its connection stalls for 8 s. The cut follows each client's own ramp; only c is named. (A
    stall inside the kept window raises its variance so much that it can hide a short ramp from the
    rule's tolerance: c has none.)"""
    rng = np.random.default_rng(4)
    dirs = {}
    spec = (("a", 0.0, 20, None), ("b", 7.0, 10, None), ("c", 3.0, 1, 50))
    for client, offset, ramp, stall in spec:
        ivs = []
        for i in range(90):
            n = int(200 * min(i + 1, ramp) / ramp) + int(rng.integers(0, 3))
            if stall is not None and stall <= i < stall + 8:
                n = 0
            ivs.append([int(v) for v in rng.integers(500, 5000, n)])
        d = tmp_path / client
        d.mkdir()
        _write_log(d / "READ.hdr", "READ", 1_700_000_000.0 + offset, ivs)
        dirs[client] = d
    steady = steady_state(read_client_logs(dirs))
    assert abs(steady.warmup_s["a"] - 20) <= 2 and abs(steady.warmup_s["b"] - 10) <= 2
    assert steady.warmup_s["c"] <= 2
    assert steady.tests["a"].stationary and steady.tests["b"].stationary and steady.tests["c"].stall
    (warning,) = steady.warnings()
    assert warning.startswith("client c: not stationary: throughput stalled")
    assert steady.figures()["stationary"] is False and steady.figures()["steady_stall_s"] == 8.0
    firsts = {
        c: min(iv.start_s + (log.start_time_s or 0) for log in ls for iv in log.intervals)
        for c, ls in steady.kept.items()
    }
    assert firsts["b"] - firsts["a"] == pytest.approx(7 + steady.warmup_s["b"] - steady.warmup_s["a"])


def test_a_15_s_step_is_said_over_its_15_s_never_per_minute_and_a_shorter_one_is_too_short_to_judge() -> None:
    """The issue's case: a step whose steady window is 15 s of 1-s intervals rising steeply is said as the
    change over those 15 s; under ``MIN_STEADY_INTERVALS`` intervals the same rise is not a drift but
    "too short to judge" (no not-stationary verdict)."""
    from ycsb_runner.analyse.steady import SteadyState

    t = np.arange(15) + 0.5
    y = LEVEL * (1 + 0.05 * t) * (1 + np.random.default_rng(3).normal(0, 0.01, t.size))
    rising = stationarity(t, y, np.ones_like(t))
    said = rising.describe()
    assert rising.drift and "%/min" not in said and "over the last 15 s" in said
    change = rising.window_change_pct()[0]
    assert 40 < change < 90 and f"{change:+.0f} %" in said  # ~ +5 % of the start a second, over 15 s
    short = stationarity(t[:6], y[:6], np.ones(6))
    assert not short.drift and short.stationary and short.figures()["stationary"] is None
    state = SteadyState("MSER", {"local": 0.0}, {"local": True}, {"local": short}, {})
    warned = " ".join(state.warnings())
    assert "too short to judge" in warned and "not stationary" not in warned and "%/min" not in warned
