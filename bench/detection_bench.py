"""Detection quality of `ycsb-runner regress` on synthetic nightly series under the noise real nights have,
next to an oracle and Apache Otava 0.8.0.

    .venv/bin/python bench/detection_bench.py [--trials 100] [--no-otava] [--workers 2] [--nights 40]
        [--alpha 0.01]

Series of 40 nights shaped like nightly throughput (lower is worse), 5 % noise, replayed night by night as
cron would run them: on night t a detector sees nights 0..t and says whether night t is a regression (the
first 6 nights only build history). ycsb-runner is ``changepoint.judge_series`` as ``regress`` calls it for
one series (defaults: --alpha 0.01, --min-effect 5, --window 3, --confirm 2, a drop is worse), with its
lifecycle: a regression stays flagged until it recovers (nobody accepts in the replay).

Noise models (each without a change, for the false alarms):
iid Gaussian; AR(1) rho 0.5 and 0.8 (same marginal spread); a slow drift of -0.25 %/night; a two-level
regime (each night's host on one of two placements, +-3 %, plus 3 % noise) drawn independently each night
and sticky (the placement kept with probability 0.9 a night); Student t with 3 degrees of freedom; outlier
nights (5 % of nights 15-30 % slower); missing nights (a fifth of 50 nights never ran).

Figures per model: **alarms** per 100 nights (a night flagged when the night before was not: each one a
triage) and **nights flagged** per 100 (exit 1 nights, a lasting false alarm counted every night).

Changes (sustained, to the end of the series): a step down of 10 % at 5 % noise under iid and AR(1) 0.5
noise (the acceptance cells) and of 5 % and 20 % under iid, at a random night 12..30; an improvement of
10 % at a night 10..16 followed by a regression back to the old level 10 nights later. **recall**: the
share of series with an alarm toward worse within 3 nights of the (last) step (nights s, s+1, s+2); **kept**:
of the nights from that alarm to the end, the share flagged ("a sustained step stays flagged").

The **oracle** knows the level, the noise and its model: its score is the best of a few capped window
statistics of the last 1-3 nights, its threshold set on series without a step of the same model so that
it raises as many alarms per 100 nights as ycsb-runner did there (at least 0.1): what the data allow.
Apache Otava 0.8.0 (its own virtualenv, ``bench/reference_venvs.py``) at p < 0.05, at its default
p < 0.001 and at p < 0.0001 (the strictest of the three, and the only one under 1.0 false alarms per 100
nights under every noise model): an alarm on night t when it reports a change point at a night >= t-2
toward worse of at least 5 %, as first seen on night t. ``--alpha`` sets ycsb-runner's, to compare the two
at the same false alarms.

The **t-test** reference knows the noise model's family and correlation but, like every real detector,
estimates the level and the spread from the nights before the window: the best of exact one-sided two-sample
t tests of the last 1-3 (or 2-3) nights on log values (AR noise: on the innovations of the known filter), at
the same alarms per 100 nights. The oracle knows the level and the spread outright, which 12-30 nights of
history cannot tell: between the two lies what no detector can win back.

Measured (``--trials 100``, seed 11, 886 s on 2 busy cores): alarms per 100 nights 0.12 (missing nights) to
0.85 (outlier nights), all under 1.0 (drift 0.82, AR(1) 0.8 0.71, regime sticky 0.76); recall of a 10 % step
within 3 nights: iid 40.0 % (oracle 70.0 %, t-test 44.0 %: 91 % of it), AR(1) 0.5 24.0 % (oracle 68.0 %,
t-test 45.0 %, which knows rho); a sustained step kept flagged on 93.6 % / 91.1 % of the nights after its
alarm. Otava 0.8.0 on the same generator (100 series a row, stop 26): iid p<0.001 40 % at 0.26 alarms,
p<0.05 85 % at 5.1; AR(1) 0.5 p<0.001 48 % at 0.76. Issue 20's "90 % of the oracle" is not met and cannot be
by estimating the level and spread from the history: the t-test itself reaches 59-63 % of the oracle. Tuning
the correlation margin (``window.RHO_MARGIN``) and the baseline length trades iid recall against drift alarms
one for one (e.g. margin 0.5 and 20 nights: iid 43.5 %, drift 0.96 alarms in a window-only replay).

``--nights 80`` (the changes as far from the end: steps at nights 52..70; 100 trials, 3 Dec 2026, 997 s on one
core) asks what two more months of history buy. Alarms per 100 nights 0.11 (missing nights) to 0.93 (drift,
outlier nights), all under 1.0; Otava p<0.001 1.03 under AR(1) 0.5, 1.96 under AR(1) 0.8, 1.62 with outlier
nights. Recall of a 10 % step within 3 nights: iid 69.0 % at 0.34 alarms (oracle 84.0 %: 82 % of it; t-test
74.0 %; Otava p<0.001 53.0 % at 0.16, p<0.05 82.0 % at 4.78), AR(1) 0.5 39.0 % at 0.36 (oracle 57.0 %: 68 %;
t-test 46.0 %; Otava p<0.001 44.0 % at 1.03). An improvement undone 10 nights later: 5 % (Otava p<0.001 20 %):
10 nights after a change point are a short baseline. The 40-night gap to the oracle is mostly the short
baseline: with the correlation known, iid recall is 63.0 % at 40 nights (oracle 84.0 %) and 73.0 % at 80
(oracle 81.0 %: 90 % of it); AR(1) 0.5 27.5 % and 42.0 % (oracle 49.0 % and 54.0 %); the correlation
estimated, on the same 80-night series, 60.0 % and 33.0 % (``noise_model_variants.py [--nights 80]
--variant known --variant main``).

``--trials 150`` (3 Dec 2026, 368 s), after an open regression stopped closing on noise (``changepoint``:
RECOVERED 0.5 -> 0.25, OWN_CHANGE_NIGHTS): alarms per 100 nights 0.27 (missing nights) to 1.06 (drift; 1.02
before the change on the same series, 0.98 -> 0.92 on 400 other drifting series: the 150 are a high draw);
flagged nights rose (iid 1.00 -> 1.22, AR(1) 0.5 1.53 -> 2.14, drift 6.84 -> 8.37: a false alarm lasts
longer). Kept flagged after the alarm: 10 % step iid 93.6 -> 100.0 %, AR(1) 0.5 93.7 -> 98.0 %, 5 % step
47.3 -> 72.2 %; recall iid 42.7 -> 43.3 % at 0.29 (oracle 76.0 %, t-test 53.3 %), AR(1) 0.5 22.7 -> 24.0 %
at 0.37 (oracle 58.7 %, t-test 36.0 %). Otava on the same series: p < 0.001 iid 40.0 % at 0.22, AR(1) 0.5
43.3 % at 1.04 (and 1.86 under AR(1) 0.8, 1.59 with outlier nights); p < 0.0001 iid 16.7 % at 0.04, AR(1)
0.5 24.0 % at 0.24. At the same false alarms (``--alpha``, iid and AR(1) 0.5 only, 150 other series):
ours at alpha 0.02 iid 50.7 % at 0.43, AR(1) 0.5 35.3 % at 0.80, at 0.03 AR(1) 0.5 38.7 % at 1.10, where
Otava p < 0.001 had 48.7 % at 0.94: under AR(1) 0.5 Otava's default has more recall for as many false alarms,
bought by not allowing for the correlation, which costs it the 1.0 limit under AR(1) 0.8 and outlier nights.
Then (3 Dec 2026, ``--no-otava``, 249 s) a flag stands as the night that raised it saw the history (a later
night's change points no longer unflag it): alarms per 100 nights 0.27 (missing nights) to 1.00 (drift; was
1.06), AR(1) 0.5 0.35 (0.37); kept flagged 100.0 % (iid) and 98.8 % (AR(1) 0.5; the rest: one series whose
nights came back within 1.25 % of the old level, a recovery by the rule); recall unchanged (43.3 %, 24.0 %).

``--alphas 0.005,0.01,0.02,0.05 --curves-only`` (4 Dec 2026, 100 trials, seed 11, on a host with load
5-28): the curves of the acceptance cells, one series at a time (no suite: ``regress`` on a suite also
removes the suite's night effect, ``suite_bench.py``). The equal-false-alarm reading is linear
interpolation of recall between the two alphas of ycsb-runner's curve whose false alarms bracket Otava's
(``at_alarms``; "-" outside the curve). 10 % step, iid, (alarms per 100 nights, recall %): ycsb-runner
alpha 0.005 (0.18, 28.0), 0.01 (0.32, 40.0), 0.02 (0.50, 53.0), 0.05 (1.24, 66.0); the estimating oracle
at the same alarms 36.0, 44.0, 54.0, 73.0 (ycsb-runner 78, 91, 98, 90 % of it). Otava p<1e-05 (0.00, 2.0),
p<0.0001 (0.06, 15.0), p<0.001 (0.26, 40.0), p<0.01 (1.71, 69.0), p<0.05 (5.09, 85.0); ycsb-runner at
Otava p<0.001's 0.26 alarms: 35.2 (28.0 + (40.0 - 28.0) x (0.26 - 0.18) / (0.32 - 0.18)), 4.8 points
below Otava: one series alone, without its suite, does not reach Otava's recall at equal alarms.
10 % step, AR(1) 0.5: ycsb-runner alpha 0.005 (0.29, 17.0), 0.01 (0.53, 24.0), 0.02 (0.85, 31.0), 0.05
(1.44, 53.0); the estimating oracle (which knows rho) 38.0, 45.0, 50.0, 63.0 (45, 53, 62, 84 % of it);
Otava p<1e-05 (0.00, 11.0), p<0.0001 (0.15, 26.0), p<0.001 (0.76, 48.0), p<0.01 (3.29, 71.0), p<0.05
(7.06, 84.0); ycsb-runner at Otava p<0.001's 0.76 alarms 29.1, 19 points below (3700 s in all). One
series alone cannot estimate its correlation (see above): on a suite ``regress`` removes the night effect
the series share and is above Otava's curve (``suite_bench.py``).

``--trim-mads`` asks what the baseline's outlier cut (``window.TRIM_MADS``, 3.5 scaled MADs) costs (3 Dec
2026, 150 trials, ``--no-otava``). With none (``inf``) the worst alarms per 100 nights fell from 1.00 to
0.78 (drift; outlier nights 0.85 -> 0.41, AR(1) 0.8 0.71 -> 0.76, sticky regime 0.76 -> 0.61) at the same
recall (iid 44.7 %, AR(1) 0.5 24.0 %); at 5 MADs drift 0.82, outlier nights 0.57, recall 43.3 / 24.0 %.
A Gaussian null with the cut has a heavier tail (a cut baseline's standard deviation is small), so its
threshold is higher. Without the cut alpha could rise to about 0.013: at 0.015 drift is 1.08 and iid
recall 56.7 % (t-test 58.0 %), AR(1) 0.5 30.7 %. But on the real series (``realseries_bench.py
--trim-mads 5`` or ``inf``) one more real regression is late (google FirstVisualChange, point 44: flagged
on 47 instead of 45): 6/10 at 0.32 instead of 7/10 at 0.24. The cut stays: the real series decide.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference_venvs import OTAVA, ensure, run_json  # noqa: E402

from ycsb_runner.nightly import window  # noqa: E402
from ycsb_runner.nightly.changepoint import judge_series  # noqa: E402
from ycsb_runner.nightly.regress import RegressOptions  # noqa: E402

NIGHTS = 40
FIRST_JUDGED = 6
CV = 0.05
DEFAULTS = RegressOptions()
# Otava's p thresholds: a lenient one, its default, and the strictest that keeps it under 1.0 false alarms
# per 100 nights under every noise model (p < 0.001 is not: AR(1) 0.8 1.94, outlier nights 1.75)
OTAVA_PVALUES = (0.05, 0.001, 0.0001)
OTAVA_CURVE = (0.00001, 0.0001, 0.001, 0.01, 0.05)  # --alphas: Otava's curve over its p threshold


def _ar(rng: np.random.Generator, n: int, rho: float) -> np.ndarray:
    e = np.empty(n)
    e[0] = rng.standard_normal()
    for t in range(1, n):
        e[t] = rho * e[t - 1] + np.sqrt(1 - rho * rho) * rng.standard_normal()
    return e


def _regime(rng: np.random.Generator, n: int, stay: float) -> np.ndarray:
    level = np.empty(n)
    level[0] = rng.choice([-1.0, 1.0])
    for t in range(1, n):
        level[t] = level[t - 1] if rng.random() < stay else rng.choice([-1.0, 1.0])
    return 0.03 * level + 0.03 * rng.standard_normal(n)


def _outliers(rng: np.random.Generator, n: int) -> np.ndarray:
    x = 1 + CV * rng.standard_normal(n)
    bad = rng.random(n) < 0.05
    x[bad] *= 1 - rng.uniform(0.15, 0.30, bad.sum())
    return x - 1


def _missing(rng: np.random.Generator, n: int) -> np.ndarray:
    full = CV * rng.standard_normal(n + n // 4)
    return full[np.sort(rng.choice(full.size, n, replace=False))]


# each: (rng, nights) -> relative deviation of each night from the level
MODELS: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "iid": lambda rng, n: CV * rng.standard_normal(n),
    "AR(1) 0.5": lambda rng, n: CV * _ar(rng, n, 0.5),
    "AR(1) 0.8": lambda rng, n: CV * _ar(rng, n, 0.8),
    "drift -0.25 %/night": lambda rng, n: CV * rng.standard_normal(n) - 0.0025 * np.arange(n),
    "regime, each night": lambda rng, n: _regime(rng, n, 0.5),
    "regime, sticky": lambda rng, n: _regime(rng, n, 0.9),
    "t (3 df)": lambda rng, n: CV * rng.standard_t(3, n) / np.sqrt(3),
    "outlier nights": _outliers,
    "missing nights": _missing,
}
# (label, noise model, step (fraction), improvement first)
CHANGES = [
    ("10 % step, iid", "iid", 0.10, False),
    ("10 % step, AR(1) 0.5", "AR(1) 0.5", 0.10, False),
    ("5 % step, iid", "iid", 0.05, False),
    ("20 % step, iid", "iid", 0.20, False),
    ("+10 % then -10 %, iid", "iid", 0.10, True),
]


def make(rng: np.random.Generator, model: str, step: float = 0.0, improve_first: bool = False):
    x = 1000.0 * (1 + MODELS[model](rng, NIGHTS))
    if not step:
        return x, -1
    if improve_first:
        up = int(rng.integers(NIGHTS - 30, NIGHTS - 23))  # 10..16 of 40 nights
        x[up:] *= 1 + step
        s = up + 10
        x[s:] /= 1 + step
        return x, s
    s = int(rng.integers(NIGHTS - 28, NIGHTS - 9))  # 12..30 of 40 nights
    x[s:] *= 1 - step
    return x, s


def ours(
    x: np.ndarray,
    alpha: float | None = None,
    suite: Callable[[int], window.SuiteNoise | None] | None = None,
    view: Callable[[int], window.SuiteView] | None = None,
) -> list[int]:
    """The nights ycsb-runner flags (exit 1) when replayed night by night (at --alpha *alpha*, else the
    bench's; *suite*: the noise the suite's series share, as ``regress`` passed it before the night effect;
    *view*: what the series sees of its suite on night t (``window.SuiteNights.view``), as ``regress``
    passes it; neither by default)."""
    alpha = DEFAULTS.alpha if alpha is None else alpha
    flagged = []
    for t in range(FIRST_JUDGED, x.size):
        j = judge_series(
            x[: t + 1],
            window=DEFAULTS.window,
            confirm=DEFAULTS.confirm,
            min_effect_pct=DEFAULTS.min_effect_pct,
            alpha=alpha,
            permutations=DEFAULTS.permutations,
            worse=-1,
            suite=view(t) if view is not None else suite,
        )
        if j.tested and (j.open or (j.p_value < alpha and j.change_pct <= -DEFAULTS.min_effect_pct)):
            flagged.append(t)
    return flagged


def at_alarms(curve: list[tuple[float, float]], fa: float) -> float | None:
    """The recall of a (false alarms per 100 nights, recall) curve at *fa* false alarms, linear between the
    two points around it (None outside the curve)."""
    pts = sorted(curve)
    for (f0, r0), (f1, r1) in zip(pts, pts[1:], strict=False):
        if f0 <= fa <= f1:
            return r0 if f1 == f0 else r0 + (r1 - r0) * (fa - f0) / (f1 - f0)
    return pts[0][1] if len(pts) == 1 and pts[0][0] == fa else None


def _otava_point(py: Path, quiet: list[np.ndarray], series: list[np.ndarray], starts: list[int], p: float):
    """Otava at p < *p*: (alarms per 100 quiet nights, recall within 3 nights of the step)."""
    fa = _per_100([len(a) for a in otava(py, quiet, p)])
    got = otava(py, series, p)
    return fa, 100.0 * float(
        np.mean([any(s <= t <= s + 2 for t in a) for a, s in zip(got, starts, strict=True)])
    )


def print_curves(
    alphas: tuple[float, ...],
    quiet: dict[str, list[np.ndarray]],
    changed: dict[str, tuple[list[np.ndarray], list[int]]],
    py: Path | None,
    workers: int,
) -> None:
    """Recall against false alarms over ycsb-runner's alphas, the estimating oracle's at the same false
    alarms and Otava's over its p thresholds, for the acceptance cells (10 % steps under iid and AR(1)
    0.5); then ycsb-runner's recall read off its curve at each of Otava's false alarms."""
    from functools import partial

    for label, model, _, _ in CHANGES[:2]:
        series, starts = changed[label]
        ours_pts = []
        with ProcessPoolExecutor(workers) as pool:
            for a in alphas:
                q = list(pool.map(partial(ours, alpha=a), quiet[model], chunksize=4))
                c = list(pool.map(partial(ours, alpha=a), series, chunksize=4))
                ours_pts.append((_per_100([len(alarms_of(f)) for f in q]), recall_kept(c, starts)[0]))
        print(f"\ncurve, {label}: (false alarms per 100 nights, recall within 3 nights %)")
        q_arr, s_arr, st_arr = np.array(quiet[model]), np.array(series), np.array(starts)
        for a, (fa, r) in zip(alphas, ours_pts, strict=True):
            est = estimating_oracle(q_arr, s_arr, st_arr, model, fa)
            print(
                f"  ycsb-runner alpha {a:<7g} ({fa:5.2f}, {r:5.1f})   estimating oracle at {fa:.2f}: "
                f"{est:5.1f} (ycsb-runner {100 * r / est if est else float('nan'):.0f} % of it)",
                flush=True,
            )
        for p in OTAVA_CURVE if py else ():
            assert py is not None
            fa, r = _otava_point(py, quiet[model], series, starts, p)
            mine = at_alarms(ours_pts, fa)
            shown = "-" if mine is None else f"{mine:5.1f}"
            print(
                f"  otava p<{p:<9g} ({fa:5.2f}, {r:5.1f})   ycsb-runner at {fa:.2f} alarms: {shown}",
                flush=True,
            )


def alarms_of(flagged: list[int]) -> list[int]:
    """The nights that start a run of flagged nights."""
    return [t for t in flagged if t - 1 not in flagged]


_OTAVA_SCRIPT = r"""
import json, sys
from otava.analysis import compute_change_points
job = json.load(sys.stdin)
out = []
for series in job["series"]:
    alarms, seen = [], set()
    for t in range(job["first"], len(series)):
        cps, _ = compute_change_points(series[: t + 1], window_len=30, max_pvalue=job["p"], min_magnitude=0.0)
        for cp in cps:
            if cp.index in seen or cp.index < t - 2:
                continue
            seen.add(cp.index)
            if cp.stats.mean_2 < cp.stats.mean_1 * (1 - job["min_effect"] / 100):
                alarms.append(t)
                break
    out.append(alarms)
json.dump(out, sys.stdout)
"""


def otava(py: Path, series: list[np.ndarray], p: float) -> list[list[int]]:
    job = {
        "series": [s.tolist() for s in series],
        "first": FIRST_JUDGED,
        "p": p,
        "min_effect": DEFAULTS.min_effect_pct,
    }
    return run_json(py, _OTAVA_SCRIPT, job)


def _oracle_stat(x: np.ndarray, model: str, clip: float) -> np.ndarray:
    """Per series and night: the best window score of the last 1-3 nights, in units of the known noise
    around the known level (AR noise: of its innovations, after the known filter), capped at *clip*."""
    z = (1000.0 - x) / (1000.0 * CV)
    if model.startswith("AR"):
        rho = float(model.split()[-1])
        z = np.concatenate([z[:, :1], (z[:, 1:] - rho * z[:, :-1]) / np.sqrt(1 - rho * rho)], axis=1)
    z = np.clip(z, -clip, clip)
    out = np.full(x.shape, -np.inf)
    for k in (1, 2, 3):
        win = np.lib.stride_tricks.sliding_window_view(z, k, axis=1).mean(axis=2) * np.sqrt(k)
        out[:, k - 1 :] = np.maximum(out[:, k - 1 :], win)
    return out


def oracle(
    quiet: np.ndarray, changed: np.ndarray, starts: np.ndarray, model: str, alarms_per_100: float
) -> float:
    """Recall within 3 nights of the oracle raising *alarms_per_100* alarms per 100 quiet nights."""
    night = np.arange(NIGHTS)[None, :]
    window = (night >= starts[:, None]) & (night <= starts[:, None] + 2)
    share = max(alarms_per_100, 0.1) / 100
    best = 0.0
    for clip in (1.5, 2.0, 2.5, 3.0, np.inf):
        threshold = np.quantile(_oracle_stat(quiet, model, clip)[:, FIRST_JUDGED:], 1 - share)
        hit = (_oracle_stat(changed, model, clip) > threshold) & window
        best = max(best, 100.0 * float(hit.any(axis=1).mean()))
    return best


def _estimating_p(x: np.ndarray, model: str, ks: tuple[int, ...]) -> np.ndarray:
    """Per series and night: the smallest exact one-sided p over windows of the last k nights (k in *ks*)
    of a two-sample t test of the window against every night before it, on log values (AR noise: on the
    innovations, after the known filter). It knows the noise model's family and correlation, and estimates
    the level and the spread from the nights before the window, as every real detector must."""
    from scipy import stats

    z = np.log(x)
    if model.startswith("AR"):
        rho = float(model.split()[-1])
        z = np.concatenate([np.full((z.shape[0], 1), np.nan), z[:, 1:] - rho * z[:, :-1]], axis=1)
    out = np.ones(x.shape)
    for t in range(FIRST_JUDGED, x.shape[1]):
        for k in ks:
            base, win = z[:, : t + 1 - k], z[:, t + 1 - k : t + 1]
            base = base[:, ~np.isnan(base[0])]
            m = base.shape[1]
            se = base.std(axis=1, ddof=1) * np.sqrt(1 / k + 1 / m)
            out[:, t] = np.minimum(out[:, t], stats.t.sf((base.mean(axis=1) - win.mean(axis=1)) / se, m - 1))
    return out


def estimating_oracle(
    quiet: np.ndarray, changed: np.ndarray, starts: np.ndarray, model: str, alarms_per_100: float
) -> float:
    """Recall within 3 nights of the best exact t test that must estimate the level and the spread
    (``_estimating_p``, windows of 1-3 or 2-3 nights), at *alarms_per_100* alarms per 100 quiet nights."""
    night = np.arange(NIGHTS)[None, :]
    window = (night >= starts[:, None]) & (night <= starts[:, None] + 2)
    share = max(alarms_per_100, 0.1) / 100
    best = 0.0
    for ks in ((1, 2, 3), (2, 3)):
        threshold = np.quantile(_estimating_p(quiet, model, ks)[:, FIRST_JUDGED:], share)
        hit = (_estimating_p(changed, model, ks) < threshold) & window
        best = max(best, 100.0 * float(hit.any(axis=1).mean()))
    return best


def _per_100(counts: list[int]) -> float:
    return 100.0 * sum(counts) / ((NIGHTS - FIRST_JUDGED) * len(counts))


def recall_kept(flagged: list[list[int]], starts: list[int]) -> tuple[float, float]:
    caught, kept = 0, []
    for f, s in zip(flagged, starts, strict=True):
        first = [t for t in alarms_of(f) if s <= t <= s + 2]
        if first:
            caught += 1
            kept.append(sum(1 for t in f if t >= first[0]) / (NIGHTS - first[0]))
    return 100.0 * caught / len(starts), 100.0 * float(np.mean(kept)) if kept else float("nan")


def main() -> None:
    global NIGHTS, DEFAULTS  # noqa: PLW0603 - every helper reads the series length and options from here
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100, help="series per model and change (default 100)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-otava", action="store_true", help="skip Apache Otava")
    ap.add_argument(
        "--nights",
        type=int,
        default=NIGHTS,
        help=f"nights per series (default {NIGHTS}; changes as far from the end)",
    )
    ap.add_argument(
        "--alpha",
        type=float,
        default=DEFAULTS.alpha,
        help=f"ycsb-runner's --alpha (default {DEFAULTS.alpha:g}): the false-alarm/recall trade-off",
    )
    ap.add_argument(
        "--trim-mads",
        type=float,
        default=window.TRIM_MADS,
        help=f"what if baseline outliers were cut at N MADs (default {window.TRIM_MADS:g}; inf: none)",
    )
    ap.add_argument(
        "--alphas",
        default="",
        help="also print recall-versus-false-alarm curves over these alphas (e.g. 0.005,0.01,0.02,0.05) "
        "for the 10 %% steps under iid and AR(1) 0.5, with the estimating oracle and Otava's curve",
    )
    ap.add_argument("--curves-only", action="store_true", help="with --alphas: only the curves")
    args = ap.parse_args()
    NIGHTS = args.nights
    window.TRIM_MADS = args.trim_mads  # (the workers are forked: they see it)
    DEFAULTS = replace(DEFAULTS, alpha=args.alpha)
    py, why = (None, "skipped (--no-otava)") if args.no_otava else ensure(OTAVA)
    print(f"Apache Otava 0.8.0: {py}" if py else f"Apache Otava 0.8.0: not run: {why}")
    rng = np.random.default_rng(args.seed)
    started = time.time()
    quiet = {m: [make(rng, m)[0] for _ in range(args.trials)] for m in MODELS}
    changed = {}
    for label, model, step, up in CHANGES:
        made = [make(rng, model, step, up) for _ in range(args.trials)]
        changed[label] = ([m[0] for m in made], [m[1] for m in made])
    if args.alphas and args.curves_only:
        print_curves(tuple(float(a) for a in args.alphas.split(",")), quiet, changed, py, args.workers)
        print(f"({time.time() - started:.0f} s)")
        return
    jobs = [s for m in MODELS for s in quiet[m]] + [s for lab in changed for s in changed[lab][0]]
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(ours, jobs, chunksize=4))
    flagged_quiet = {m: results[i * args.trials : (i + 1) * args.trials] for i, m in enumerate(MODELS)}
    base = len(MODELS) * args.trials
    flagged_changed = {
        lab: results[base + i * args.trials : base + (i + 1) * args.trials] for i, lab in enumerate(changed)
    }
    print(
        f"{args.trials} series of {NIGHTS} nights per row; nights {FIRST_JUDGED}..{NIGHTS - 1} judged; "
        f"--alpha {DEFAULTS.alpha:g} --min-effect {DEFAULTS.min_effect_pct:g} --window {DEFAULTS.window} "
        f"--confirm {DEFAULTS.confirm}; baseline outliers beyond {window.TRIM_MADS:g} MADs"
    )
    otavas = OTAVA_PVALUES if py else ()
    head = f"{'no change: per 100 nights':28} {'alarms':>7} {'flagged':>8}"
    print(head + "".join(f" {'otava p<' + format(p, 'g'):>15}" for p in otavas))
    our_alarms = {}
    for m in MODELS:
        alarms = [len(alarms_of(f)) for f in flagged_quiet[m]]
        our_alarms[m] = _per_100(alarms)
        line = f"{m:28} {our_alarms[m]:7.2f} {_per_100([len(f) for f in flagged_quiet[m]]):8.2f}"
        for p in otavas:
            assert py is not None
            line += f" {_per_100([len(a) for a in otava(py, quiet[m], p)]):15.2f}"
        print(line, flush=True)
    print(
        f"{'change':28} {'recall':>7} {'kept':>8} {'oracle':>7} {'t-test':>7}"
        + "".join(f" {'':>15}" for _ in otavas)
    )
    for label, model, _, _ in CHANGES:
        series, starts = changed[label]
        recall, kept = recall_kept(flagged_changed[label], starts)
        orc = oracle(np.array(quiet[model]), np.array(series), np.array(starts), model, our_alarms[model])
        est = estimating_oracle(
            np.array(quiet[model]), np.array(series), np.array(starts), model, our_alarms[model]
        )
        line = f"{label:28} {recall:6.1f}% {kept:7.1f}% {orc:6.1f}% {est:6.1f}%"
        for p in otavas:
            assert py is not None
            got = otava(py, series, p)
            hit = [any(s <= t <= s + 2 for t in a) for a, s in zip(got, starts, strict=True)]
            line += f" {'recall ' + format(100 * np.mean(hit), '.1f') + '%':>15}"
        print(line, flush=True)
    if args.alphas:
        print_curves(tuple(float(a) for a in args.alphas.split(",")), quiet, changed, py, args.workers)
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
