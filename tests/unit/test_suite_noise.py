"""The noise model a suite's series share (``window.suite_noise``): pooled over the series of one host's
nights, shrunk toward by each series, and used by ``regress``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ycsb_runner.nightly.changepoint import judge_series
from ycsb_runner.nightly.regress import RegressOptions, regress
from ycsb_runner.nightly.window import SuiteNights, lag1_estimate, lag1_rho, night_effect, suite_noise
from ycsb_runner.runs.history import METRIC_COLUMNS, RUN_COLUMNS

SERIES, NIGHTS = 16, 27


def _suite(rng: np.random.Generator, rho: float, host: float = 0.8, series: int = SERIES) -> np.ndarray:
    """Log values of *series* series that share an AR(1) *rho* host component (*host* of the variance)."""
    h = np.empty(NIGHTS)
    h[0] = rng.standard_normal()
    for t in range(1, NIGHTS):
        h[t] = rho * h[t - 1] + np.sqrt(1 - rho * rho) * rng.standard_normal()
    return np.sqrt(host) * h[None, :] + np.sqrt(1 - host) * rng.standard_normal((series, NIGHTS))


def test_the_suite_knows_its_correlation_better_than_one_series_and_says_how_well() -> None:
    """Under independent series the pooled estimate is 16 series' worth; when most of the noise is the
    host's, the series err together and the standard error says so (it stays close to the spread of the
    estimates over suites), not the 1/sqrt(16) that independent series would give."""
    rng = np.random.default_rng(3)
    for host, rho in ((0.0, 0.0), (0.8, 0.5)):
        suites = [_suite(rng, rho, host) for _ in range(300)]
        pooled = [suite_noise(s) for s in suites]
        assert all(p is not None for p in pooled)
        est = np.array([p.rho for p in pooled if p is not None])
        se = np.array([p.se for p in pooled if p is not None])
        single = np.array([lag1_estimate(s[0]) for s in suites])
        assert abs(est.mean() - host * rho) < 0.05, est.mean()  # unbiased for the series' own correlation
        assert est.std() < single.std()
        assert 0.7 < np.median(se) / est.std() < 1.5, (np.median(se), est.std())
    independent = suite_noise(_suite(rng, 0.0, 0.0))
    shared = suite_noise(_suite(rng, 0.5, 0.9))
    assert independent is not None and shared is not None
    assert independent.effective > 10 and shared.effective < 3  # 16 series, but one host


def test_a_series_is_shrunk_toward_its_suite_unless_it_knows_itself() -> None:
    rng = np.random.default_rng(4)
    pooled = suite_noise(_suite(rng, 0.0, 0.0))
    assert pooled is not None and pooled.se < 0.1
    short = rng.standard_normal(12)
    own = lag1_estimate(short)
    r, se = pooled.combine(own, short.size)
    assert own is not None and abs(r - pooled.rho) < abs(own - pooled.rho) and se < np.sqrt(1 / 12)
    assert pooled.combine(None, 3) == (pooled.rho, pooled.se)  # too short for its own estimate
    long = rng.standard_normal(4000)  # its own estimate is better than the suite's
    assert pooled.combine(lag1_estimate(long), long.size)[0] == lag1_estimate(long)
    assert suite_noise(_suite(rng, 0.0, 0.0, series=3)) is None  # too few series to pool


def test_iid_series_of_a_suite_get_a_null_near_independence() -> None:
    """16 independent series: alone, each adds a standard error of its own estimate (about 0.19 at 27
    nights) and the nulls of 8 suites' series reach rho 0.4-0.7, 0.15-0.30 on average, which costs recall;
    with the suite's estimate none is above 0.2 and they average at most 0.2."""
    for seed in range(8):
        logs = _suite(np.random.default_rng(seed), 0.0, 0.0)
        alone = [lag1_rho(y) for y in logs]
        shared = SuiteNights(logs).before(NIGHTS)
        together = [lag1_rho(y, shared) for y in logs]
        assert max(together) <= 0.2 < max(alone) and np.mean(together) < np.mean(alone) - 0.05, seed


def _history(logs: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A suite's history: series i is the throughput of step cell i // 4, operation i % 4."""
    runs, rows = [], []
    for t in range(logs.shape[1]):
        rid = f"night-{t:02d}"
        runs.append(
            {
                "run_id": rid,
                "suite": "quick",
                "fingerprint": "f",
                "status": "completed",
                "started_at": f"2026-11-{t + 1:02d}T02:00:00.000Z",
                "tags": {},
            }
        )
        for i, series in enumerate(logs):
            keys = {"phase": "run", "mix": f"m{i // 4}", "threads": 4, "audit": "none"}
            rows.append(
                {"run_id": rid, "step": f"02-run-m{i // 4}", "repetition": 1, **keys}
                | {"operation": f"OP{i % 4}", "metric": "avg_us", "value": 1000 * np.exp(0.03 * series[t])}
            )
    return pd.DataFrame(runs).reindex(columns=RUN_COLUMNS), pd.DataFrame(rows, columns=METRIC_COLUMNS)


def test_regress_judges_each_series_with_its_suites_noise() -> None:
    """regress's noise model of each series is judge_series' with the suite's noise of the nights before
    the window; on 16 independent series their nulls are within 0.1 of each other (0.2-0.3 here), where
    alone they spread from 0 to 0.5."""
    rng = np.random.default_rng(6)
    logs = _suite(rng, 0.0, 0.0)
    out = regress(*_history(logs), "quick", RegressOptions())
    # as regress sees them: log values, each series turned by its metric (a latency: lower is better)
    shared = SuiteNights(np.log(1000) + 0.03 * logs, -np.ones(SERIES))
    rhos: dict[str, list[float]] = {"suite": [], "alone": []}
    for row in out.table.to_dict("records"):
        i = 4 * int(row["mix"][1:]) + int(row["operation"][2:])
        y = 1000 * np.exp(0.03 * logs[i])
        view = shared.view(i, np.arange(NIGHTS), NIGHTS)
        with_suite = judge_series(y, worse=1, alpha=0.01 / 4, suite=view)
        alone = judge_series(y, worse=1, alpha=0.01 / 4)
        assert with_suite.noise is not None and alone.noise is not None
        assert row["noise"] == with_suite.noise.name, (row["noise"], with_suite.noise.name)
        rhos["suite"].append(with_suite.noise.rho)
        rhos["alone"].append(alone.noise.rho)
    spread = {k: max(v) - min(v) for k, v in rhos.items()}
    assert len(rhos["suite"]) == SERIES and spread["suite"] <= 0.1 and spread["alone"] >= 0.3, rhos


def test_the_night_effect_is_what_the_host_did_to_every_series_turned_by_better() -> None:
    """A slow host night lowers a throughput and raises a latency: turned by their signs both say 'slow';
    a step of a quarter of the series moves the median by a small part of the step; a series that is
    neither better higher nor lower is left out."""
    rng = np.random.default_rng(8)
    host = 0.04 * rng.standard_normal(NIGHTS)
    signs = np.array([1.0] * 8 + [-1.0] * 7 + [0.0])
    logs = signs[:, None] * host[None, :] + 0.01 * rng.standard_normal((SERIES, NIGHTS))
    logs[15] = 5.0 * rng.standard_normal(NIGHTS)  # wild, and left out
    logs[:4, 20:] -= 0.10  # four throughputs fell 10 % on night 20
    effect = night_effect(logs, signs)
    centred = host - np.median(host)
    assert np.abs(effect[:20] - centred[:20]).max() < 0.015
    assert np.abs(effect[20:] - centred[20:]).max() < 0.03  # (the step alone would move it 0.10)
    assert not night_effect(logs[:3], signs[:3]).any()  # too few series


def _judged(x: np.ndarray, shared: SuiteNights, i: int, with_effect: bool) -> bool:
    """Whether series *i* of the suite is a regression tonight (its last night), judged as regress does
    with the night effect or, without it, with the suite's correlation only."""
    n = x.shape[1]
    suite = shared.view(i, np.arange(n), n) if with_effect else shared.before
    j = judge_series(x[i], worse=-1, min_effect_pct=5, alpha=0.01, suite=suite)
    return bool(j.tested and (j.open or (j.p_value < 0.01 and j.change_pct <= -5)))


def test_removing_the_night_effect_finds_a_step_the_hosts_noise_hides_and_keeps_one_event() -> None:
    """16 throughputs with host noise AR(1) 0.5 (4 %) and their own (3 %): a 10 % step on 4 of them two
    nights ago is found on more of them once the night effect is removed (the host's noise is most of
    theirs); quiet series of the same suites are flagged no more often; and when all 16 step (the whole
    suite: the night effect moved), they are regressions as often as without it."""
    found, quiet, whole = {True: 0, False: 0}, {True: 0, False: 0}, {True: 0, False: 0}
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        h = np.empty(30)
        h[0] = rng.standard_normal()
        for t in range(1, 30):
            h[t] = 0.5 * h[t - 1] + np.sqrt(0.75) * rng.standard_normal()
        x = 1000 * np.exp(0.04 * h[None, :] + 0.03 * rng.standard_normal((SERIES, 30)))
        x[:4, 28:] *= 0.9
        shared = SuiteNights(np.log(x))
        for i in range(4):
            for with_effect in (True, False):
                found[with_effect] += _judged(x, shared, i, with_effect)
        for i in range(4, 8):
            for with_effect in (True, False):
                quiet[with_effect] += _judged(x, shared, i, with_effect)
        x[4:, 28:] *= 0.9  # now the whole suite
        everyone = SuiteNights(np.log(x))
        for i in (0, 5, 10, 15):
            for with_effect in (True, False):
                whole[with_effect] += _judged(x, everyone, i, with_effect)
    assert found[True] >= 10 and found[True] > found[False] + 3, found
    assert quiet[True] <= quiet[False], quiet  # (one night the host fell 9 % too: the suite moved)
    assert whole[True] == whole[False] > 0, whole  # the night effect's step is not removed


def test_the_night_effect_is_removed_only_when_the_suite_shares_its_nights() -> None:
    """Independent series share no night effect: removing the median of their deviations would only add
    its estimation noise (and judge each series twice), so regress does not; a shared host's is removed."""
    rng = np.random.default_rng(9)
    n = np.arange(NIGHTS)
    assert SuiteNights(_suite(rng, 0.0, 0.0)).view(0, n, NIGHTS).effect is None
    assert SuiteNights(_suite(rng, 0.5, 0.6)).view(0, n, NIGHTS).effect is not None
