"""Change points and nightly verdicts over a run history (pure; numpy/scipy only).

``e_divisive`` is E-Divisive means (Matteson & James 2014, the method of MongoDB's performance CI,
Daly et al. ICPE 2020) with distance exponent 1: the split of a segment that maximises the divergence
of the two parts is kept when a permutation test says it beats what shuffled data reach, and the
parts are split again. Its change points mark where the last stable segment begins.

``judge_series`` turns one series (one value per night, oldest first) into a verdict about the newest
nights: the last k nights (k from *confirm* to *window*) against the stable segment before them, on log
values. The statistic of k nights is the least changed of them, in units of the segment's standard
deviation (the segment's outliers beyond 3.5 scaled MADs dropped, at most a tenth of its nights): a change
must show on every one of the k nights, so one outlier night moves nothing once k >= 2, while a real step
shows on all of them. The statistic is pivotal for Gaussian noise (it does not depend on the level or the
spread), so its null distribution, and that of the smallest p over the k tried, are simulated once per
segment length: the p-value is exact for Gaussian nightly noise and accounts for trying several k and
both directions.

``adjust`` corrects the p-values of many series at once (Holm or Benjamini-Hochberg).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from ycsb_runner.analyse.stats import scipy_stats

DEFAULT_PERMUTATIONS = 999
DEFAULT_SEED = 20261201
MIN_BASELINE = 3  # nights in a stable segment before the newest can be tested against it
MAX_BASELINE = 60  # the newest nights of a longer stable segment are the baseline
NULL_DRAWS = 20_000  # simulated series per segment length for the window test's null distribution
_P_FLOOR = 1 / (NULL_DRAWS + 1)  # the smallest p the simulation itself can give
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


def _segment_stats(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each row of *b* (shape (r, m)) without its outliers: the values beyond
    3.5 scaled MADs from the row's median, at most a tenth of the row's nights (none of fewer than 10:
    dropping one of a few nights makes the null's tail heavy; a 20x slower night got p = 0.002 from 7)."""
    m = b.shape[1]
    med = np.median(b, axis=1, keepdims=True)
    mad = 1.4826 * np.median(np.abs(b - med), axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.abs(b - med) / mad
    rank = np.argsort(np.argsort(-np.nan_to_num(dev, nan=0.0), axis=1, kind="stable"), axis=1)
    keep = ~((dev > 3.5) & (rank < m // 10))
    n = keep.sum(axis=1)
    mean = np.where(keep, b, 0.0).sum(axis=1) / n
    var = np.where(keep, (b - mean[:, None]) ** 2, 0.0).sum(axis=1) / (n - 1)
    return mean, np.sqrt(var)


def _least_change(b: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Per row: the fresh night closest to the segment above it (max), in segment standard deviations;
    small when every fresh night is low. The high side is the same statistic of the negated values."""
    mean, sd = _segment_stats(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (f.max(axis=1) - mean) / sd


@lru_cache(maxsize=256)
def _null(m: int, ks: tuple[int, ...]) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Simulated null of the window test for a segment of *m* nights before the longest window: per k the
    sorted statistic, and the sorted smallest one-sided p over the ks (same draws, nested windows)."""
    rng = np.random.default_rng(DEFAULT_SEED + 7919 * m + sum(ks))
    longest = max(ks)
    z = rng.standard_normal((NULL_DRAWS, m + longest))
    margins, ps = {}, []
    for k in ks:
        stat = _least_change(z[:, : m + longest - k], z[:, m + longest - k :])
        margins[k] = np.sort(stat)
        ps.append(_rank_p(margins[k], stat))  # per draw, so that the minimum is over one draw's windows
    return margins, np.sort(np.min(ps, axis=0))


def _rank_p(null: np.ndarray, observed: np.ndarray | float) -> np.ndarray:
    """P(null <= observed) with the +1 of a Monte Carlo p-value; *null* sorted."""
    return (1 + np.searchsorted(null, observed, side="right")) / (null.size + 1)


@dataclass(frozen=True)
class _Window:
    k: int
    p: float  # one-sided marginal p
    before: float
    after: float
    pct: float


def window_test(
    segment: np.ndarray, fresh: np.ndarray, ks: tuple[int, ...], min_effect_pct: float
) -> tuple[float, _Window | None]:
    """Two-sided p of the newest nights *fresh* (the last max(ks)) against *segment* (the nights before
    them), and the window (k nights, direction) that gave it; (1.0, None) when no window shows a change of
    at least *min_effect_pct* %. The p is the null probability of a smallest marginal p as small as the
    observed one, doubled for the two directions."""
    x = np.concatenate([segment, fresh])
    y = np.log(x) if np.all(x > 0) else x
    n, m = y.size, segment.size
    margins, smallest = _null(m, ks)
    best: _Window | None = None
    for k in ks:
        b, f = x[: n - k], x[n - k :]
        before, after = float(np.median(b)), float(np.median(f))
        pct = _pct(before, after)
        for sign in (1.0, -1.0):  # 1: the nights went down; -1: up
            if not sign * pct <= -min_effect_pct:
                continue
            stat = float(_least_change(sign * y[None, : n - k], sign * y[None, n - k :])[0])
            p = _marginal_p(margins[k], stat, n - k, k)
            if best is None or p < best.p:
                best = _Window(k, p, before, after, pct)
    if best is None:
        return 1.0, None
    combined = float(_rank_p(smallest, best.p)) if best.p >= _P_FLOOR else len(ks) * best.p
    return min(1.0, 2 * combined), best


def _marginal_p(null: np.ndarray, stat: float, m: int, k: int) -> float:
    """One-sided p of *stat* from the simulated *null*; beyond the simulated range (a change far larger
    than the noise) extrapolated with the t prediction tail of k independent nights."""
    if math.isnan(stat):
        return 1.0
    p = float(_rank_p(null, stat))
    if p > _P_FLOOR:
        return p
    return min(p, float(scipy_stats().t.cdf(stat / math.sqrt(1 + 1 / m), m - 1)) ** k)


def judge_series(
    values: np.ndarray | list[float],
    *,
    window: int = 3,
    confirm: int = 2,
    min_effect_pct: float = 0.0,
    cp_alpha: float = 0.01,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    accepted_from: int = 0,
) -> SeriesJudgement:
    """The newest night(s) of one series (one value per night, oldest first) against their history.

    The last k nights, for k from *confirm* to *window*, are tested against the stable segment before them
    (from the last E-Divisive change point older than the window, at most MAX_BASELINE nights); a window
    counts only if its median is at least *min_effect_pct* % off the segment's. *confirm* 1 lets tonight
    alone be a change; 2 (the default) needs two nights, so a single outlier night flags nothing.
    *accepted_from*: the night where an accepted change began; the nights before it are not the baseline.
    """
    if accepted_from > 0:  # for now: the nights since the accepted change alone, indices kept
        j = judge_series(
            np.asarray(values, dtype=float)[accepted_from:],
            window=window,
            confirm=confirm,
            min_effect_pct=min_effect_pct,
            cp_alpha=cp_alpha,
            permutations=permutations,
            seed=seed,
        )
        shift = tuple(c + accepted_from for c in j.change_points)
        start = j.change_index + accepted_from if j.change_index >= 0 else -1
        return replace(j, change_index=start, change_points=shift)
    x = np.asarray(values, dtype=float)
    if x.size < MIN_BASELINE + confirm or not np.all(np.isfinite(x)):
        return _untested(f"{x.size} nights: need at least {MIN_BASELINE + confirm}")
    cps_p = e_divisive(x, alpha=cp_alpha, permutations=permutations, seed=seed)
    cps = tuple(c for c, _ in cps_p)
    n = x.size
    older = [c for c in cps if c < n - window]
    start = older[-1] if older else 0
    ks = tuple(k for k in range(confirm, window + 1) if n - k - start >= MIN_BASELINE)
    if not ks:
        return _untested(
            f"only {n - confirm - start} nights since the change at night {start + 1}: need {MIN_BASELINE}",
            cps,
        )
    start = max(start, n - max(ks) - MAX_BASELINE)
    p, win = window_test(x[start : n - max(ks)], x[n - max(ks) :], ks, min_effect_pct)
    if win is None:
        b = float(np.median(x[start : n - max(ks)]))
        a = float(np.median(x[n - min(ks) :]))
        return SeriesJudgement(
            True,
            f"last {min(ks)}+ nights",
            1.0,
            b,
            a,
            _pct(b, a),
            n - min(ks),
            cps,
            f"no window of the last {max(ks)} nights moved {min_effect_pct:g} %",
        )
    return SeriesJudgement(
        True,
        f"last {win.k} nights" if win.k > 1 else "last night",
        p,
        win.before,
        win.after,
        win.pct,
        n - win.k,
        cps,
    )
