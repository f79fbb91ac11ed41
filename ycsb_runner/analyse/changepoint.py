"""Change points and nightly verdicts over a run history (pure; numpy/scipy only).

``e_divisive`` is E-Divisive means (Matteson & James 2014, the method of MongoDB's performance CI,
Daly et al. ICPE 2020) with distance exponent 1: the split of a segment that maximises the divergence
of the two parts is kept when a permutation test says it beats what shuffled data reach, and the
parts are split again. ``judge_series`` turns one series (one value per night, oldest first) into a
verdict about the newest night(s):

* a change point among the last ``window`` nights: the nights since it against the segment before it,
  with the change point's permutation p-value (which accounts for the search over splits);
* otherwise the newest night against the last stable segment (the nights since the last change point),
  a prediction t-test on log values (the newest value as one new draw of the segment), outliers beyond
  3.5 MADs dropped from the segment first.

``adjust`` corrects the p-values of many series at once (Holm or Benjamini-Hochberg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

DEFAULT_PERMUTATIONS = 999
DEFAULT_SEED = 20261201
MIN_BASELINE = 3  # nights in a stable segment before the newest can be tested against it
HOLM = "holm"
BH = "bh"


def _q_stats(z: np.ndarray, min_size: int) -> np.ndarray:
    """E-Divisive q for every split tau of each row of *z* (shape (r, n)); -inf where a part is too small."""
    r, n = z.shape
    d = np.abs(z[:, :, None] - z[:, None, :])  # (r, n, n)
    s = d.cumsum(axis=1).cumsum(axis=2)  # s[:, i, j] = sum of d[:, :i+1, :j+1]
    total = s[:, -1, -1]
    q = np.full((r, n + 1), -np.inf)
    for tau in range(min_size, n - min_size + 1):
        m = n - tau
        within_x = s[:, tau - 1, tau - 1]  # sum over the X block (both orders)
        cross = s[:, tau - 1, -1] - within_x  # X rows, Y columns
        within_y = total - within_x - 2 * cross
        mean_x = within_x / (tau * (tau - 1)) if tau > 1 else 0.0
        mean_y = within_y / (m * (m - 1)) if m > 1 else 0.0
        e = 2 * cross / (tau * m) - mean_x - mean_y
        q[:, tau] = (tau * m / n) * e
    return q


def best_split(
    z: np.ndarray, *, min_size: int = 2, permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED
) -> tuple[int, float]:
    """(tau, permutation p-value) of the best split of *z*; (-1, 1.0) when it is too short to split."""
    n = z.size
    if n < 2 * min_size:
        return -1, 1.0
    q = _q_stats(z[None, :], min_size)[0]
    tau = int(np.argmax(q))
    observed = q[tau]
    rng = np.random.default_rng(seed + n)
    perms = np.argsort(rng.random((permutations, n)), axis=1)
    null = _q_stats(z[perms], min_size).max(axis=1)
    p = (1 + int(np.sum(null >= observed - 1e-12 * abs(observed)))) / (permutations + 1)
    return tau, p


def e_divisive(
    values: np.ndarray | list[float],
    *,
    alpha: float = 0.05,
    min_size: int = 2,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> list[tuple[int, float]]:
    """Change points of *values* as (index where the new segment starts, permutation p), sorted."""
    x = np.asarray(values, dtype=float)
    found: list[tuple[int, float]] = []
    todo = [(0, x.size)]
    while todo:
        lo, hi = todo.pop()
        tau, p = best_split(x[lo:hi], min_size=min_size, permutations=permutations, seed=seed)
        if tau < 0 or p >= alpha:
            continue
        found.append((lo + tau, p))
        todo += [(lo, lo + tau), (lo + tau, hi)]
    return sorted(found)


def adjust(p_values: list[float], method: str = HOLM) -> list[float]:
    """Holm (family-wise error) or Benjamini-Hochberg (false discovery rate) adjusted p-values (NaN stays)."""
    idx = [i for i, p in enumerate(p_values) if p == p]
    out = [math.nan] * len(p_values)
    m = len(idx)
    if not m:
        return out
    order = sorted(idx, key=lambda i: p_values[i])
    if method == HOLM:
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[i]))
            out[i] = running
    elif method == BH:
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i = order[rank]
            running = min(running, m * p_values[i] / (rank + 1))
            out[i] = min(1.0, running)
    else:
        raise ValueError(f"unknown correction {method!r}")
    return out


@dataclass(frozen=True)
class SeriesJudgement:
    """What one series says about the newest night(s); ``tested`` False when it could not say."""

    tested: bool
    test: str
    p_value: float
    before_median: float
    after_median: float
    change_pct: float
    change_index: int  # the night where the change began (index into the series), -1 when untested
    change_points: tuple[int, ...]
    note: str = ""


def _untested(note: str, cps: tuple[int, ...] = ()) -> SeriesJudgement:
    nan = math.nan
    return SeriesJudgement(False, "none", nan, nan, nan, nan, -1, cps, note)


def _pct(before: float, after: float) -> float:
    return 100.0 * (after - before) / abs(before) if before else math.nan


def _drop_outliers(x: np.ndarray) -> np.ndarray:
    med = np.median(x)
    mad = 1.4826 * np.median(np.abs(x - med))
    if mad == 0:
        return x
    keep = np.abs(x - med) <= 3.5 * mad
    return x[keep] if keep.sum() >= MIN_BASELINE else x


def prediction_p(baseline: np.ndarray, new: float | np.ndarray) -> float:
    """Two-sided p of the mean of *new* (one or more nights) being drawn like *baseline*: the t prediction
    interval of a mean of k new values, on the log scale."""
    fresh = np.atleast_1d(np.asarray(new, dtype=float))
    if np.any(fresh <= 0) or np.any(baseline <= 0):
        b, x = baseline, fresh
    else:
        b, x = np.log(baseline), np.log(fresh)
    m, k = b.size, x.size
    sd = float(np.std(b, ddof=1))
    diff = float(np.mean(x)) - float(np.mean(b))
    if sd == 0:
        return 1.0 if diff == 0 else 0.0
    t = diff / (sd * math.sqrt(1 / k + 1 / m))
    return float(2 * sps.t.sf(abs(t), m - 1))


def judge_series(
    values: np.ndarray | list[float],
    *,
    window: int = 3,
    confirm: int = 1,
    agree_pct: float = 0.0,
    cp_alpha: float = 0.05,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> SeriesJudgement:
    """The newest night(s) of one series (one value per night, oldest first) against their history.

    *confirm* > 1: a change must show on that many newest nights (an outlier night alone raises nothing):
    the direct test compares the mean of the last *confirm* nights with the segment before them, and only
    when each of them is at least *agree_pct* percent off that segment's median in the same direction.
    """
    x = np.asarray(values, dtype=float)
    if x.size < MIN_BASELINE + 1 or not np.all(np.isfinite(x)):
        return _untested(f"{x.size} nights: need at least {MIN_BASELINE + 1}")
    cps_p = e_divisive(x, alpha=cp_alpha, permutations=permutations, seed=seed)
    cps = tuple(c for c, _ in cps_p)
    n = x.size
    if cps and confirm <= n - cps[-1] <= window:
        c, p = cps_p[-1]
        start = cps[-2] if len(cps) > 1 else 0
        before, after = x[start:c], x[c:]
        b, a = float(np.median(before)), float(np.median(after))
        offs = [_pct(b, float(v)) for v in x[n - confirm :]]
        if confirm > 1 and not (all(o >= agree_pct for o in offs) or all(o <= -agree_pct for o in offs)):
            return SeriesJudgement(
                True, "e-divisive", 1.0, b, a, _pct(b, a), c, cps, "the last nights disagree"
            )
        return SeriesJudgement(True, "e-divisive", p, b, a, _pct(b, a), c, cps)
    k = max(1, confirm)
    before = [c for c in cps if c <= n - k]
    start = before[-1] if before else 0
    baseline = x[start : n - k]
    if baseline.size < MIN_BASELINE:
        return _untested(
            f"only {baseline.size} nights since the change at night {start + 1}: need {MIN_BASELINE}", cps
        )
    baseline = _drop_outliers(baseline)
    fresh = x[n - k :]
    b, a = float(np.median(baseline)), float(np.median(fresh))
    test = "prediction-t" if k == 1 else f"prediction-t (last {k} nights)"
    offs = [_pct(b, float(v)) for v in fresh]
    if k > 1 and not (all(o >= agree_pct for o in offs) or all(o <= -agree_pct for o in offs)):
        return SeriesJudgement(True, test, 1.0, b, a, _pct(b, a), n - k, cps, "the last nights disagree")
    return SeriesJudgement(True, test, prediction_p(baseline, fresh), b, a, _pct(b, a), n - k, cps)
