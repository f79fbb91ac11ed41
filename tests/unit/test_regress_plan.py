"""``regress``'s plan for a "could not tell": the nights or repetitions a night that would let a series (and
the suite) detect --min-effect, from its own measured noise (synthetic histories as test_regress builds
them)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from history_rows import night_metrics, night_run
from test_regress import NOISE, _history, _nightly_history, _nights

from ycsb_runner.cli import app
from ycsb_runner.nightly import window
from ycsb_runner.nightly.regress import EXIT_UNDECIDED, RegressOptions, regress, step_minutes, suite_plan
from ycsb_runner.nightly.window import NoiseModel, detectable_pct, nights_needed
from ycsb_runner.runs.history import METRIC_COLUMNS, RUN_COLUMNS


def test_median_noise_and_repetitions() -> None:
    assert window.median_noise(1) == 1.0 and window.median_noise(2) == pytest.approx(1 / math.sqrt(2))
    assert window.median_noise(9) == pytest.approx(1.25 / 3)
    # noise to halve from one repetition: 1.25 / sqrt(r) <= 0.5 -> r >= 6.25
    assert window.repetitions_needed(1, 0.5) == 7
    assert window.repetitions_needed(3, 1.0) == 3  # already enough: today's
    assert window.repetitions_needed(1, 0.01) is None  # beyond MAX_REPETITIONS
    # detectable 10 % -> 5 %: the noise must shrink by log(0.95) / log(0.9)
    assert window.spread_ratio(10.0, 5.0) == pytest.approx(math.log(0.95) / math.log(0.9))
    assert window.spread_ratio(4.0, 5.0) == 1.0


def test_nights_needed_is_the_fewest_that_reach_the_effect() -> None:
    model = NoiseModel(4, 0.0, 0.02, 0.0)
    ks, level = (2, 3), 0.01
    more = nights_needed(model, ks, level, 5.0, 60)
    assert more is not None and more > 0
    grown = NoiseModel(4 + more, 0.0, 0.02, 0.0)
    assert detectable_pct(grown, ks, level, window.PLAN_DRAWS) <= 5.0
    shorter = window.baseline_lengths(4, 60)
    before = [m for m in shorter if m < 4 + more]
    if before:  # the length tried just before is not enough
        assert detectable_pct(NoiseModel(before[-1], 0.0, 0.02, 0.0), ks, level, window.PLAN_DRAWS) > 5.0
    assert nights_needed(NoiseModel(4, 0.0, 0.2, 0.0), ks, level, 5.0, 60) is None  # 20 % noise: never


def test_a_series_that_cannot_tell_needs_at_least_one_more_night() -> None:
    """At the threshold the plan's coarser nulls may find today's baseline enough where the judgement's did
    not: the plan then asks for one more night, never "0 more nights" beside "cannot tell"."""
    from types import SimpleNamespace

    from ycsb_runner.nightly.regress import _needs

    model = NoiseModel(12, 0.0, 0.02, 0.0)
    coarse = detectable_pct(model, (2, 3), 0.01, window.PLAN_DRAWS)
    opts = RegressOptions(window=3, confirm=2, min_effect_pct=coarse + 0.001)
    assert nights_needed(model, (2, 3), 0.01, opts.min_effect_pct, 60) == 0
    judged = SimpleNamespace(noise=model, detectable_pct=coarse + 0.01)  # the judgement's finer nulls
    assert _needs(judged, 1, opts, 0.01)["needs_nights"] == 1
    judged = SimpleNamespace(noise=model, detectable_pct=coarse - 0.01)  # it can: nothing more
    assert _needs(judged, 1, opts, 0.01)["needs_nights"] == 0


def test_could_not_tell_says_how_to_tell() -> None:
    short = regress(*_history(_nights(7)), "quick", RegressOptions())  # 4 baseline nights
    assert short.exit_code == EXIT_UNDECIDED and (short.table["verdict"] == "cannot tell").all()
    plan = short.plan
    assert plan["needs_nights"] is not None and plan["needs_nights"] > 0
    assert plan["needs_nights"] == short.table["needs_nights"].min()
    assert plan["needs_repetitions"] == short.table["needs_repetitions"].min() > 1
    assert f"to detect 5 %: {plan['needs_nights']} more night" in short.reason
    assert "no step durations in the history" in short.reason
    # a longer history of the same noise needs fewer more nights, or none
    ok = regress(*_history(_nights(16)), "quick", RegressOptions())
    assert (ok.table["needs_nights"] == 0).all() and (ok.table["needs_repetitions"] == 1).all()
    assert ok.plan["needs_nights"] == 0 and "to detect" not in ok.reason


def test_minutes_come_from_the_steps_durations() -> None:
    runs, metrics = _history(_nights(7))
    dur = metrics[metrics["metric"] == "throughput_ops_s"].assign(metric="duration_s", value=90.0)
    metrics = pd.concat([metrics, dur], ignore_index=True)
    out = regress(runs, metrics, "quick", RegressOptions())
    minutes = step_minutes(metrics, out.runs_used)
    assert list(minutes.values()) == [1.5]
    row = out.table.iloc[0]
    assert row["needs_minutes"] == pytest.approx((row["needs_repetitions"] - 1) * 1.5)
    plan = suite_plan(out.table, out.options, minutes)
    assert plan["extra_minutes"] == pytest.approx((plan["needs_repetitions"] - 1) * 1.5)
    assert f"(now 1; +{plan['extra_minutes']:.1f} min, for " in out.reason


def test_regress_plan_cli(tmp_path: Path) -> None:
    results = tmp_path / "results"
    runner = _nightly_history(results, NOISE)
    base = ["regress", "tencent-analyse-tiny", "--results", str(results), "--plan", "--min-effect", "5"]
    out = runner.invoke(app, [*base, "-f", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["rows"] and {"needs_nights", "needs_repetitions", "needs_minutes"} <= set(doc["rows"][0])
    assert "verdict" not in doc["rows"][0]  # a plan, not a judgement
    assert "plan for tencent-analyse-tiny" in out.stderr and "to detect 5 %" in out.stderr
    assert doc["needs_repetitions"] >= 1 and doc["min_effect_pct"] == 5
    short = runner.invoke(app, [*base, "--until", "2026-11-03"])
    assert short.exit_code == 2 and not short.stdout and short.stderr.startswith("no plan: "), short.output
    assert " ".join(short.stderr.split()).endswith("to measure the noise); exit 2")  # one line (wrapped)


def test_the_plan_repeats_run_steps_only() -> None:
    """A night loads once whatever ``repetitions`` says: the plan's repetitions are a run series' (the quiet
    quick history's plan said "2 repetitions a night (+0.0 min)" from a load series measured once a night
    beside run series measured twice), priced as every run step's extra repetitions."""
    rows = [  # phase, mix, operation, metric, detectable_pct, needs_repetitions, repetitions
        ("load", "load", "INSERT", "p99_us", 6.0, 2, 1),
        ("run", "a", "READ", "p99_us", 9.0, 5, 2),
        ("run", "b", "READ", "avg_us", 7.0, 4, 2),
    ]
    table = pd.DataFrame(
        rows,
        columns=["phase", "mix", "operation", "metric", "detectable_pct", "needs_repetitions", "repetitions"],
    ).assign(needs_nights=math.nan, threads=4, audit="none")
    minutes = {
        ("load", "load", "4", "none"): 3.0,
        ("run", "a", "4", "none"): 0.5,
        ("run", "b", "4", "none"): 1.0,
    }
    plan = suite_plan(table, RegressOptions(min_effect_pct=5.0), minutes)
    assert (plan["needs_repetitions"], plan["repetitions"], plan["repetitions_for"]) == (
        4,
        2,
        "b READ avg_us",
    )
    assert plan["extra_minutes"] == pytest.approx((4 - 2) * 1.5)  # the load's 3 minutes are not repeated
    assert "4 repetitions a night (now 2; +3.0 min, for b READ avg_us)" in plan["line"], plan["line"]
    only_load = suite_plan(table.iloc[:1], RegressOptions(min_effect_pct=5.0), minutes)
    assert only_load["needs_repetitions"] is None and "a night" not in only_load["line"]


def test_a_repetitions_range_measures_one_repetitions_spread() -> None:
    rng = np.random.default_rng(3)
    reps = np.exp(0.04 * rng.standard_normal((400, 3)))  # 4 % a repetition, 400 nights of 3
    var = window.repetition_var(reps.min(axis=1), reps.max(axis=1), np.full(400, 3))
    assert var is not None and math.sqrt(var) == pytest.approx(0.04, rel=0.05)
    one = np.ones(5)
    assert window.repetition_var(one, one * 1.1, one) is None  # nights of one repetition measure nothing
    assert window.repetition_var(one[:2], one[:2] * 1.1, one[:2] * 2) is None  # two nights: too few
    assert window.night_share(0.04**2, None, 2) == 0.0  # unmeasured: the optimistic end
    assert window.night_share(0.04**2, 0.04**2, 1) == 0.0  # all of it the repetitions'
    assert window.night_share(0.04**2, 0.04**2, 2) == pytest.approx(0.5)  # the median of 2 halves it
    # half of the variance the night's own: 4 repetitions instead of 1 leave sqrt(0.5 + 0.5 * 1.25^2 / 4)
    assert window.repetitions_needed(1, 0.85, shared=0.5) == 4
    assert window.repetitions_needed(1, 0.7, shared=0.5) is None  # never below sqrt(0.5)
    assert window.repetitions_needed(1, 0.7) == 4  # unmeasured: as before


def _repeated_nights(night_cv: float, rep_cv: float, n: int = 14, seed: int = 5):
    """A history of *n* nights of 2 repetitions each of a run step's READ avg_us: a night's own offset
    (*night_cv*) shared by both repetitions, each repetition's own noise (*rep_cv*)."""
    rng = np.random.default_rng(seed)
    runs, metrics = [], []
    for i in range(n):
        run = night_run(i)
        runs.append(run)
        night = rng.standard_normal() * night_cv
        for rep in (1, 2):
            value = 2000 * math.exp(night + rep_cv * rng.standard_normal())
            (row,) = night_metrics(run["run_id"], {"avg_us": value})
            metrics.append({**row, "repetition": rep})
    return pd.DataFrame(runs).reindex(columns=RUN_COLUMNS), pd.DataFrame(metrics, columns=METRIC_COLUMNS)


def test_repetitions_do_not_average_away_the_nights_own_spread() -> None:
    """With its nights' repetitions the plan measures how much of a series' spread is the night's own: a
    history whose nights differ (a host's state) is told repetitions will not do; one whose repetitions
    differ is told how many (the quiet quick history on this 2-core host: 77-85 % the night's own on most
    run series, where the plan of its first nights had asked for 2 repetitions a night)."""
    opts = RegressOptions(min_effect_pct=5.0)
    nightly = regress(*_repeated_nights(night_cv=0.05, rep_cv=0.01), "quick", opts).table.iloc[0]
    assert nightly["night_share_pct"] > 80 and nightly["detectable_pct"] > 2
    assert math.isnan(nightly["needs_repetitions"])  # "too many": never at that share
    repeated = regress(*_repeated_nights(night_cv=0.0, rep_cv=0.05), "quick", opts).table.iloc[0]
    assert repeated["night_share_pct"] < 30 and repeated["detectable_pct"] > 2
    assert 2 < repeated["needs_repetitions"] <= window.MAX_REPETITIONS
