"""A/B statistics: false-positive rate, detection of a clear shift, small n, NaNs, the long A/B table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ycsb_runner.analyse import stats
from ycsb_runner.analyse.stats import ab_table, compare_groups, summarize


@pytest.mark.parametrize("n", [3, 5, 8])
def test_aa_comparisons_are_mostly_no_significant_change(n: int) -> None:
    rng = np.random.default_rng(1234 + n)
    verdicts = [
        compare_groups(rng.normal(10_000, 400, n), rng.normal(10_000, 400, n), resamples=2000).verdict
        for _ in range(100)
    ]
    same = verdicts.count(stats.NOT_SIGNIFICANT)
    print(f"\nA/A n={n}: {same}/100 no significant change")
    assert same >= 90
    assert set(verdicts) <= {stats.NOT_SIGNIFICANT, stats.INCREASE, stats.DECREASE}


@pytest.mark.parametrize(("n", "test"), [(3, stats.TEST_WELCH), (5, stats.TEST_MANN_WHITNEY)])
def test_clear_shift_is_detected(n: int, test: str) -> None:
    rng = np.random.default_rng(7)
    detected = 0
    for _ in range(20):
        a = rng.normal(10_000, 300, n)  # throughput audit off
        b = rng.normal(8_300, 300, n)  # audit on: -17%, like the Alibaba mixed workloads
        c = compare_groups(a, b, higher_is_better=True, resamples=2000)
        assert c.test == test
        if c.verdict == stats.DECREASE:
            detected += 1
            assert c.direction == "worse"
            assert c.ci_high < 0 and c.change_pct < -10
    assert detected >= 18


def test_direction_follows_orientation() -> None:
    a, b = [500.0, 510, 490, 505, 495], [700.0, 690, 710, 705, 695]  # latency up 40%
    assert compare_groups(a, b, higher_is_better=False).direction == "worse"
    assert compare_groups(a, b, higher_is_better=True).direction == "better"
    up = compare_groups(a, b)
    assert up.verdict == stats.INCREASE and up.direction == "n/a"
    assert up.change == pytest.approx(200.0) and up.change_pct == pytest.approx(40.0)
    assert up.a_median == 500.0 and up.b_median == 700.0
    assert up.p_value == pytest.approx(2 / math.comb(10, 5))  # exact: complete separation
    same = compare_groups(a, [505.0, 495, 500, 510, 490], higher_is_better=False)
    assert same.verdict == stats.NOT_SIGNIFICANT and same.direction == "same"


def test_test_choice_follows_attainable_p() -> None:
    assert stats.min_mann_whitney_p(3, 3) > 0.05 and stats.min_mann_whitney_p(4, 4) < 0.05
    assert compare_groups([1.0, 2, 3, 4], [5.0, 6, 7, 8]).test == stats.TEST_MANN_WHITNEY
    c = compare_groups([1.0, 2, 3], [5.0, 6, 7])
    assert c.test == stats.TEST_WELCH and "Welch" in c.note
    assert compare_groups([1.0, 2], [3.0, 4.1]).test == stats.TEST_WELCH


def test_n_of_one_is_too_small() -> None:
    for a, b in (([100.0], [90.0]), ([100.0], [90.0, 91, 89]), ([], [1.0, 2.0])):
        c = compare_groups(a, b, higher_is_better=True)
        assert c.verdict == stats.N_TOO_SMALL and c.test == stats.TEST_NONE
        assert math.isnan(c.p_value) and math.isnan(c.ci_low) and not c.significant
        assert c.direction == "n/a"
    c = compare_groups([100.0], [90.0])
    assert c.change == -10.0 and c.n_a == 1  # the plain numbers are still reported


def test_nans_are_dropped() -> None:
    a, b = [10.0, 11, 9, 10.5, 9.5], [12.0, 13, 12.5, 11.5, 12.2]
    with_nan = compare_groups([*a, float("nan"), None], [float("nan"), *b, float("inf")])
    clean = compare_groups(a, b)
    assert with_nan.n_a == 5 and with_nan.n_b == 5
    for field in ("a_mean", "b_mean", "p_value", "ci_low", "ci_high"):
        assert getattr(with_nan, field) == getattr(clean, field)
    assert "dropped from A+B" in with_nan.note
    all_nan = compare_groups([float("nan")] * 3, b)
    assert all_nan.verdict == stats.N_TOO_SMALL and math.isnan(all_nan.a_mean)
    assert math.isnan(all_nan.change_pct)


def test_zero_variance() -> None:
    same = compare_groups([5.0, 5.0, 5.0], [5.0, 5.0])
    assert same.verdict == stats.NOT_SIGNIFICANT and same.p_value == 1.0 and same.test == stats.TEST_EXACT
    diff = compare_groups([5.0, 5.0, 5.0], [6.0, 6.0, 6.0])
    assert diff.verdict == stats.INCREASE and diff.test == stats.TEST_EXACT
    one_side = compare_groups([5.0, 5.0, 5.0, 5.0, 5.0], [5.0, 5.1, 4.9, 5.2, 4.8])
    assert one_side.verdict == stats.NOT_SIGNIFICANT and not math.isnan(one_side.p_value)
    zero_base = compare_groups([0.0, 0.0], [1.0, 2.0])
    assert math.isnan(zero_base.change_pct) and zero_base.change == 1.5


def test_bootstrap_is_deterministic_and_covers() -> None:
    a, b = np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 3, 4, 5, 7])
    assert stats.bootstrap_mean_diff_ci(a, b) == stats.bootstrap_mean_diff_ci(a, b)
    assert stats.bootstrap_mean_diff_ci(a, b, seed=1) != stats.bootstrap_mean_diff_ci(a, b, seed=2)
    rng = np.random.default_rng(99)
    covered = 0
    for _ in range(100):
        lo, hi = stats.bootstrap_mean_diff_ci(rng.normal(0, 1, 10), rng.normal(1, 1, 10), resamples=2000)
        covered += lo <= 1.0 <= hi
    print(f"\nbootstrap 95% CI coverage at n=10: {covered}/100")
    assert covered >= 85


def test_summarize() -> None:
    s = summarize([10.0, 12.0, 14.0, float("nan")])
    assert s["n"] == 3 and s["mean"] == 12.0 and s["median"] == 12.0
    assert s["stdev"] == pytest.approx(2.0) and s["min"] == 10.0 and s["max"] == 14.0
    half = 4.302652729911275 * 2.0 / math.sqrt(3)  # t(0.975, df=2)
    assert s["ci_low"] == pytest.approx(12.0 - half) and s["ci_high"] == pytest.approx(12.0 + half)
    assert s["cv_pct"] == pytest.approx(100 * 2 / 12)
    one = summarize([7.0])
    assert one["n"] == 1 and one["mean"] == 7.0 and math.isnan(one["stdev"]) and math.isnan(one["ci_low"])
    none = summarize([])
    assert none["n"] == 0 and math.isnan(none["mean"])


def _runs() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for workload, drop in (("A", 0.82), ("C", 1.0)):
        for rep in range(5):
            for audit in ("off", "on"):
                factor = drop if audit == "on" else 1.0
                rows.append(
                    {
                        "workload": workload,
                        "threads": 32,
                        "audit": audit,
                        "rep": rep,
                        "throughput_ops": 20_000 * factor * rng.normal(1, 0.01),
                        "read_avg_latency_us": 800 / factor * rng.normal(1, 0.01),
                    }
                )
    return pd.DataFrame(rows)


def test_ab_table_long_form() -> None:
    df = _runs()
    orientation = {"throughput_ops": True, "read_avg_latency_us": False}
    t = ab_table(
        df,
        ["workload", "threads"],
        "audit",
        ["throughput_ops", "read_avg_latency_us"],
        "off",
        "on",
        higher_is_better=orientation,
    )
    assert list(t.columns) == ["workload", "threads", *stats.AB_COLUMNS]
    assert len(t) == 4
    by = t.set_index(["workload", "metric"])
    a_tp = by.loc[("A", "throughput_ops")]
    assert a_tp["verdict"] == stats.DECREASE and a_tp["direction"] == "worse"
    assert a_tp["change_pct"] == pytest.approx(-18, abs=2) and a_tp["n_a"] == 5
    assert by.loc[("A", "read_avg_latency_us"), "verdict"] == stats.INCREASE
    assert by.loc[("A", "read_avg_latency_us"), "direction"] == "worse"
    assert by.loc[("C", "throughput_ops"), "verdict"] == stats.NOT_SIGNIFICANT
    assert (t["test"] == stats.TEST_MANN_WHITNEY).all()


def test_ab_table_missing_arm_no_groups_and_orientation() -> None:
    df = _runs()
    df = df[~((df["workload"] == "C") & (df["audit"] == "on"))]
    t = ab_table(
        df, ["workload"], "audit", ["throughput_ops"], "off", "on", higher_is_better={"throughput_ops": None}
    )
    c = t.set_index("workload").loc["C"]
    assert c["verdict"] == stats.N_TOO_SMALL and c["n_b"] == 0
    assert (t["direction"] == "n/a").all()
    flat = ab_table(df[df["workload"] == "A"], [], "audit", ["throughput_ops"], "off", "on")
    assert list(flat.columns) == list(stats.AB_COLUMNS) and len(flat) == 1
    with pytest.raises(KeyError, match="nope"):
        ab_table(df, ["nope"], "audit", ["throughput_ops"], "off", "on")
