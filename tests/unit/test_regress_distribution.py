"""regress's distribution-level series (``latency_distribution``): one test per step and operation of the
night's latency quantiles against the baseline nights' own spread, named by the quantile that moved most."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import special

from ycsb_runner.nightly.distribution import (
    DISTRIBUTION,
    Prior,
    _trigamma_inverse,
    fit_prior,
    shift,
    suite_priors,
)
from ycsb_runner.nightly.regress import (
    CANNOT_TELL,
    NO_CHANGE,
    REGRESSION,
    RegressOptions,
    _correct,
    accept_rows,
    regress,
)
from ycsb_runner.runs.history import ACCEPT_COLUMNS, METRIC_COLUMNS, RUN_COLUMNS

AT = "2026-12-01T08:00:00.000Z"

# (metric, night-to-night spread of its log): p50 and p95 quiet, the tail noisier
QUANTILES = [("p50_us", 0.03), ("p95_us", 0.04), ("p99_us", 0.05), ("p999_us", 0.15), ("max_us", 0.4)]


def _history(
    tail: float, nights: int = 25, after: int = 2, seed: int = 5, steps: int = 2
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """*steps* steps (a, b, ...) of one operation each; from night *nights* on, p99.9 x *tail* and p99 +3 %
    when tail != 1."""
    rng = np.random.default_rng(seed)
    n = nights + after
    ids = [f"night-{i:03d}" for i in range(n)]
    runs = pd.DataFrame(
        {
            "run_id": ids,
            "suite": "s",
            "fingerprint": "f",
            "status": "completed",
            "started_at": [f"2026-01-{1 + i:02d}T02:00:00Z" for i in range(n)],
            "tags": [{} for _ in range(n)],
        }
    ).reindex(columns=RUN_COLUMNS)
    frames = []
    for step in "abcdefgh"[:steps]:
        for metric, spread in QUANTILES:
            value = 1000.0 * np.exp(spread * rng.standard_normal(n))
            if metric == "p999_us":
                value[nights:] *= tail
            if metric == "p99_us" and tail != 1:
                value[nights:] *= 1.03
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": ids,
                        "step": f"{step}-run",
                        "repetition": 1,
                        "phase": "run",
                        "mix": step,
                        "threads": 8,
                        "audit": "none",
                        "operation": "READ",
                        "metric": metric,
                        "value": value,
                    }
                )
            )
    return runs, pd.concat(frames, ignore_index=True)[METRIC_COLUMNS]


def _distribution(runs: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    opts = RegressOptions(metrics=("throughput_ops_s", "avg_us", "p99_us", DISTRIBUTION))  # no p999 series
    t = regress(runs, metrics, "s", opts).table
    return t[t["metric"] == DISTRIBUTION].set_index("mix")


def test_a_tail_that_moves_alone_flags_the_distribution_and_names_p999() -> None:
    t = _distribution(*_history(2.0))
    assert sorted(t.index) == ["a", "b"]
    assert (t["verdict"] == REGRESSION).all(), t[["verdict", "p_adjusted", "note"]]
    assert all("p99.9 moved most: x" in str(n) for n in t["note"])  # (tonight's test or yesterday's flag)
    assert t["change_pct"].astype(float).between(60, 160).all()  # x2 seen through the noise
    assert t["change_run"].isin(["night-024", "night-025"]).all()
    assert t["test"].map(lambda x: x == "distribution" or x.startswith("open since night 2")).all()


def test_a_flat_history_does_not_flag_the_distribution() -> None:
    for seed in range(5):
        t = _distribution(*_history(1.0, seed=seed))
        assert len(t) == 2 and t["verdict"].isin([NO_CHANGE, CANNOT_TELL]).all(), t[["verdict", "note"]]


def test_shift_standardises_by_each_quantile_own_spread() -> None:
    rng = np.random.default_rng(1)
    base = rng.standard_normal((30, 2)) * [0.01, 0.5]  # a quiet and a noisy quantile
    logq = np.vstack([base, [[0.05, 0.5], [0.05, 0.5]]])  # +5 % on the quiet one, +65 % on the noisy one
    s = shift(logq, ["p50_us", "max_us"], window=2, confirm=2, alpha=0.01)
    assert s is not None and s.quantile == "p50_us" and s.p_value < 0.01 and s.baseline == (0, 30)
    assert shift(logq[:4], ["p50_us", "max_us"], window=2, confirm=2, alpha=0.01) is None  # 2 baseline nights


def test_a_lasting_tail_change_stays_flagged_until_it_recovers() -> None:
    """20 nights after p99.9 doubled, its nights fill most of tonight's baseline (tonight's test alone sees
    little): the distribution stays a regression, open since the change, like a scalar slowdown."""
    runs, metrics = _history(2.0, after=20)
    t = _distribution(runs, metrics)
    assert (t["verdict"] == REGRESSION).all(), t[["verdict", "test", "note"]]
    assert (
        t["test"].str.startswith("open since night 2").all() and t["note"].str.contains("not recovered").all()
    )
    assert t["change_run"].isin(["night-024", "night-025"]).all()
    assert t["after_median"].astype(float).gt(1.6 * t["before_median"].astype(float)).all()
    # the same nights, with p99.9 back to its old level for the newest 4: recovered, no longer open
    back = metrics.copy()
    late = back["run_id"].isin(runs["run_id"].iloc[-4:]) & (back["metric"] == "p999_us")
    back.loc[late, "value"] /= 2.0
    t = _distribution(runs, back)
    assert not t["test"].str.startswith("open").any(), t[["verdict", "test", "note"]]
    assert (t["verdict"] != REGRESSION).all(), t[["verdict", "test", "note"]]


def test_a_lasting_tail_change_is_closed_by_its_acceptance() -> None:
    runs, metrics = _history(2.0, after=20)
    opts = RegressOptions(metrics=("throughput_ops_s", "avg_us", "p99_us", DISTRIBUTION))
    open_ = regress(runs, metrics, "s", opts)
    rows = [r for r in accept_rows(open_, by="alice", why="the new GC", at=AT) if r["metric"] == DISTRIBUTION]
    assert len(rows) == 2 and {r["change_run"] for r in rows} <= {"night-024", "night-025"}
    t = regress(runs, metrics, "s", opts, pd.DataFrame(rows, columns=ACCEPT_COLUMNS)).table
    t = t[t["metric"] == DISTRIBUTION]
    assert len(t) == 2 and (t["verdict"] != REGRESSION).all(), t[["verdict", "test", "note"]]
    assert not t["test"].str.startswith("open").any()


def test_an_operations_tail_is_one_member_of_its_steps_family() -> None:
    """A step of throughput, READ avg, p99, p99.9, max and their distribution: the step's family is three
    (throughput, avg, the distribution), the quantile series are corrected under their distribution."""
    p = {
        "throughput_ops_s": 0.2,
        "avg_us": 0.5,
        "p99_us": 0.3,
        "p999_us": 0.001,
        "max_us": 0.4,
        DISTRIBUTION: 0.001,
    }
    table = pd.DataFrame(
        [
            {"phase": "run", "mix": "a", "threads": 8, "audit": "none", "metric": m, "p_value": v}
            | {"operation": "OVERALL" if m == "throughput_ops_s" else "READ"}
            for m, v in p.items()
        ]
    )
    _correct(table, pd.Series(True, index=table.index), "holm")
    adjusted = table.set_index("metric")["p_adjusted"]
    # flat over six series, Holm within the step made both 6 x 0.001; as a family of three, 3 x 0.001
    assert adjusted["p999_us"] == pytest.approx(0.003) and adjusted[DISTRIBUTION] == pytest.approx(0.003)
    assert adjusted["p99_us"] >= adjusted[DISTRIBUTION] and adjusted["max_us"] >= adjusted[DISTRIBUTION]
    assert adjusted["throughput_ops_s"] == pytest.approx(0.4)  # Holm of (0.2, 0.5, 0.001) within three
    flat = table[table["metric"] != DISTRIBUTION].copy()  # no distribution row: every series a member
    _correct(flat, pd.Series(True, index=flat.index), "holm")
    assert flat.set_index("metric")["p_adjusted"]["p999_us"] == pytest.approx(0.005)


def test_one_moved_night_waits_for_a_second_under_confirm_2() -> None:
    runs, metrics = _history(4.0, after=1)  # the tail x4 on the newest night only
    opts = RegressOptions(metrics=("throughput_ops_s", "avg_us", "p99_us", DISTRIBUTION))
    t = regress(runs, metrics, "s", opts).table
    t = t[t["metric"] == DISTRIBUTION]
    assert len(t) == 2 and (t["verdict"] != REGRESSION).all(), t[["verdict", "note"]]
    assert t["note"].str.contains("newest night only").all()
    once = regress(runs, metrics, "s", replace(opts, confirm=1)).table  # --confirm 1: tonight alone tells
    assert (once.loc[once["metric"] == DISTRIBUTION, "verdict"] == REGRESSION).all()


def test_fit_prior_of_equal_variances_is_worth_the_other_series() -> None:
    """Ten series of one variance 0.04 on 20 degrees of freedom each: nothing beyond sampling error, so the
    prior is worth what the nine others hold (9 x 20) when their nights are independent, nothing when they
    all move together (one effective series), and its variance is 0.04 up to the log's bias correction."""
    var, df = np.full(10, 0.04), np.full(10, 20.0)
    prior = fit_prior(var, df, shared=0.0)
    assert prior is not None and prior.df == pytest.approx(180.0) and prior.series == 10
    assert prior.var == pytest.approx(0.04, rel=0.05)
    assert fit_prior(var, df, shared=1.0).df == 0.0  # type: ignore[union-attr]
    assert fit_prior(var, df, shared=0.5).df == pytest.approx((10 / 5.5 - 1) * 20)  # type: ignore[union-attr]
    assert fit_prior(var[:3], df[:3], shared=0.0) is None  # fewer than four series: no prior


def test_fit_prior_of_variances_far_apart_is_worth_little() -> None:
    var = 0.04 * np.logspace(-1, 1, 10)  # x0.1 to x10: far beyond what 20 degrees of freedom scatter
    prior = fit_prior(var, np.full(10, 20.0), shared=0.0)
    assert prior is not None and prior.df < 5


def test_trigamma_inverse_inverts_trigamma() -> None:
    for y in (0.3, 3.7, 250.0):
        assert _trigamma_inverse(float(special.polygamma(1, y))) == pytest.approx(y, rel=1e-6)


def test_shift_with_a_prior_tests_on_its_spread_and_degrees_of_freedom() -> None:
    """By hand: 10 baseline nights alternating +-0.1 (no positive correlation: phi 0), variance 0.1 / 9;
    2 tested nights at +0.3 (window 2): the contrast's variance is 1/10 + 1/2 = 0.6 of the nights'. Alone:
    z = 0.3 / sqrt(0.6 x 0.1 / 9) = 3.67 on a t of 9 degrees of freedom. With a prior of variance 0.01 worth
    1e12 degrees of freedom: z = 0.3 / sqrt(0.6 x 0.01) = 3.87 on a normal."""
    logq = np.array([[0.1 * (-1) ** i] for i in range(10)] + [[0.3], [0.3]])
    alone = shift(logq, ["p999_us"], window=2, confirm=2, alpha=0.01)
    assert alone is not None and alone.z == pytest.approx(0.3 / math.sqrt(0.6 * 0.1 / 9))
    assert alone.p_value == pytest.approx(2 * special.stdtr(9, -alone.z))
    prior = {"p999_us": Prior(var=0.01, df=1e12, series=10)}
    known = shift(logq, ["p999_us"], window=2, confirm=2, alpha=0.01, priors=prior)
    assert known is not None and known.z == pytest.approx(0.3 / math.sqrt(0.6 * 0.01))
    assert known.p_value == pytest.approx(2 * special.ndtr(-known.z), rel=1e-4)
    other = shift(logq, ["p999_us"], window=2, confirm=2, alpha=0.01, priors={"max_us": prior["p999_us"]})
    assert other == alone  # a prior of another quantile changes nothing


def test_a_suite_of_like_steps_tests_the_tail_on_the_suites_spread() -> None:
    """Eight steps of one noise: each distribution row is moderated toward the suite's spread (said in its
    noise), and a doubled p99.9 shows a smaller p than its own baseline alone gives; a flat suite of eight
    flags nothing."""
    runs, metrics = _history(2.0, steps=8)
    t = _distribution(runs, metrics)
    assert len(t) == 8 and (t["verdict"] == REGRESSION).all(), t[["verdict", "p_adjusted", "note"]]
    assert t["noise"].eq("baseline quantiles, the suite's").all()
    names = [q for q, _ in QUANTILES]
    cells = []
    for step in "abcdefgh":
        wide = metrics[metrics["mix"] == step].pivot(index="run_id", columns="metric", values="value")
        cells.append((np.log(wide[names].to_numpy(float)), names, np.arange(len(wide))))
    priors = suite_priors(cells, window=3)
    assert sorted(priors) == sorted(names) and all(p.series == 8 and p.df > 0 for p in priors.values())
    for logq, _, _ in cells:
        alone = shift(logq, names, window=3, confirm=2, alpha=0.01)
        pooled = shift(logq, names, window=3, confirm=2, alpha=0.01, priors=priors)
        assert alone is not None and pooled is not None and pooled.p_value < alone.p_value
    for seed in range(3):
        flat = _distribution(*_history(1.0, seed=seed, steps=8))
        assert len(flat) == 8 and flat["verdict"].isin([NO_CHANGE, CANNOT_TELL]).all(), flat[
            ["verdict", "note"]
        ]
