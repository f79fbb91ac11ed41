"""``latency_distribution``: one test per step and operation of tonight's whole latency distribution.

The history keeps, per step cell and operation, the quantiles of each night's latency histogram (p50, p95,
p99, p99.9 and max, from the run folder's HDR histograms via operations.csv). A night is the vector of
their logarithms. The tested nights (the newest ``--confirm``) are compared with the baseline nights (the
ones before the newest ``--window``, at most ``MAX_BASELINE``) quantile by quantile: the shift of the mean
log-quantile, standardised by the baseline nights' own spread of that quantile (their night-to-night
standard deviation) and the exact variance of that contrast under AR(1) noise of the nights' correlation
(pooled over the quantiles, ``shift``), a two-sided t test on the baseline's degrees of freedom. The
series' p-value is the smallest quantile's, Bonferroni over the quantiles (valid whatever their
dependence), and its change the shift of the quantile that moved most (the smallest p: the largest
standardised shift when the quantiles have the same degrees of freedom): "p99.9 moved most: x2.00". So a
p99.9 or max that doubles under a flat p99 is one series of the step's family, corrected with the others
(``regress._correct``), and named by the quantile that moved.

**The suite's spread.** A baseline of 29 nights knows a quantile's spread on 28 degrees of freedom, and
the t test pays for it where a tail's flag is decided: at p 1e-5 it asks z 5.4 where a known spread asks
4.4. The suite's other steps know the same quantile's spread too. So each series' variance of a quantile
is moderated toward the suite's (empirical Bayes, Smyth 2004, as R's limma does for genes: ``Prior``,
``fit_prior``), the t test gaining the prior's degrees of freedom: as many as the series' variances agree
beyond their own sampling error, at most what the other series hold once the nights they share are
allowed for, none in a suite of fewer than four such series. A suite whose steps differ in spread keeps
each step's own.

A shift toward worse flagged on an earlier night stays flagged (``open_shift``) until that quantile
recovers or someone accepts it, as a scalar series' sustained slowdown does.

Pure over frames; ``regress`` adds its rows when ``latency_distribution`` is among ``--metric``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, special  # special: the t distribution of scipy.stats, without its 50 MB import

from ycsb_runner.nightly.changepoint import MAX_BASELINE, MIN_BASELINE
from ycsb_runner.nightly.window import RECOVERED, SUITE_MIN_SERIES, mean_squared_correlation
from ycsb_runner.runs.metrics import DISTRIBUTION_METRICS
from ycsb_runner.runs.series import SERIES_KEYS, SeriesNights

DISTRIBUTION = next(iter(DISTRIBUTION_METRICS))  # latency_distribution
QUANTILES = {"p50_us": "p50", "p95_us": "p95", "p99_us": "p99", "p999_us": "p99.9", "max_us": "max"}
OPERATION_KEYS = SERIES_KEYS[:-1]  # a step cell and an operation: one distribution series
MAX_PHI = 0.8  # the lag-1 correlation of the nights assumed, at most


@dataclass(frozen=True)
class Shift:
    """The distribution test of one step cell and operation's newest nights."""

    p_value: float
    quantile: str  # the metric of the quantile that moved most (p999_us)
    change_pct: float  # its change, tested nights' geometric mean vs the baseline's
    log_change: float  # the same as a difference of log values (a change past -100 % in floats stays finite)
    z: float
    detectable_pct: float  # the smallest change the quietest quantile would show at alpha
    baseline: tuple[int, int]  # [start, end) of the baseline nights
    moves: dict[str, float]  # every quantile's change in %

    @property
    def note(self) -> str:
        ratio = 1 + self.change_pct / 100
        said = f"x{ratio:.2f}" if ratio >= 1.5 or ratio <= 1 / 1.5 else f"{self.change_pct:+.1f} %"
        rest = ", ".join(f"{QUANTILES[q]} {v:+.0f} %" for q, v in self.moves.items() if q != self.quantile)
        return f"{QUANTILES[self.quantile]} moved most: {said} (z {self.z:.1f}); {rest}"


@dataclass(frozen=True)
class Prior:
    """What the suite's distribution series say of one quantile's night-to-night variance (log values): the
    prior of an empirical-Bayes moderated variance (Smyth 2004, the ``squeezeVar`` of R's limma). A series'
    own variance s^2 on d degrees of freedom becomes (df * var + d s^2) / (df + d), on df + d."""

    var: float  # s0^2: the typical variance of this quantile in the suite
    df: float  # d0: how many degrees of freedom it is worth (0: none)
    series: int  # the series it was fitted on


def fit_prior(var: np.ndarray, df: np.ndarray, shared: float) -> Prior | None:
    """The prior of one quantile from its series' baseline variances *var* on *df* degrees of freedom each
    (Smyth's moment estimates on log variances), None with fewer than SUITE_MIN_SERIES series.

    The more the variances differ beyond what their own sampling error explains, the less the prior is
    worth (df 0 when they differ a lot: each series keeps its own). It is worth at most what the other
    series hold: (effective - 1) x their mean df, with *effective* = G / (1 + (G - 1) *shared*) the number
    of independent series G series of mean squared night-to-night correlation *shared* amount to (the
    errors of two variances correlate by about the square of their nights' correlation): a suite whose
    series all move with the host knows its spread no better than one series does."""
    ok = np.isfinite(var) & (var > 0) & (df > 0)
    var, df = var[ok], df[ok]
    g = int(var.size)
    if g < SUITE_MIN_SERIES:
        return None
    half = df / 2
    e = np.log(var) - special.digamma(half) + np.log(half)
    extra = float(e.var(ddof=1)) - float(special.polygamma(1, half).mean())
    effective = g / (1 + (g - 1) * min(max(shared, 0.0), 1.0))
    most = max(0.0, (effective - 1) * float(df.mean()))
    d0 = most if extra <= 0 else min(2 * _trigamma_inverse(extra), most)
    if d0 <= 0:
        return Prior(var=float(np.exp(e.mean())), df=0.0, series=g)
    return Prior(var=float(np.exp(e.mean() + special.digamma(d0 / 2) - math.log(d0 / 2))), df=d0, series=g)


def _trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = *x* (Newton's method from 0.5 + 1/x, as Smyth's limma does)."""
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        dif = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += dif
        if -dif / y < 1e-8:
            break
    return y


def lag1_pooled(centred: np.ndarray) -> float:
    """The night-to-night (lag-1) correlation of the baseline nights, pooled over the quantiles (*centred*:
    nights x quantiles, each column around its mean) and corrected for the bias of the estimate around an
    estimated mean, about -(1 + 4 phi) / n (Kendall 1954; Marriott and Pope 1954), in [0, MAX_PHI].

    Pooled: the correlation is the nights' (a host, a JVM, a checkpoint schedule), shared by the quantiles;
    one estimate from all of them varies less than each one's. Corrected: uncorrected, a 27-night baseline
    of AR(1) 0.3 noise reads about 0.22 and a 10-night one about 0.11, which made the test too quick to
    flag on correlated nights. Fewer than 5 nights cannot tell: MAX_PHI (the cautious end)."""
    n = centred.shape[0]
    den = float((centred**2).sum())
    if n <= 4 or den <= 0:
        return MAX_PHI if n <= 4 else 0.0
    raw = float((centred[1:] * centred[:-1]).sum()) / den
    return float(np.clip((n * raw + 1) / (n - 4), 0.0, MAX_PHI))


def _ar1(phi: float, m: int) -> np.ndarray:
    """The correlation matrix of *m* consecutive nights of AR(1) noise of lag-1 correlation *phi*."""
    return linalg.toeplitz(phi ** np.arange(m))


def baseline_nights(n_nights: int, window: int) -> tuple[int, int]:
    """[start, end) of the baseline nights of a series of *n_nights*: the ones before the newest *window*,
    at most MAX_BASELINE of them."""
    end = n_nights - window
    return max(0, end - MAX_BASELINE), end


def spread(base: np.ndarray) -> tuple[np.ndarray, float]:
    """Each quantile's night-to-night variance over the baseline nights *base* (nights x quantiles, log
    values) and their pooled lag-1 correlation (``lag1_pooled``): the sum of squares around the baseline's
    mean over n - 1'R1/n, which removes the bias of that mean under AR(1) noise (n - 1 for independent
    nights)."""
    n = base.shape[0]
    centred = base - base.mean(axis=0)
    phi = lag1_pooled(centred)
    mean_var = float(_ar1(phi, n).sum()) / n  # n Var(baseline mean) / sigma^2: 1 for independent nights
    return (centred**2).sum(axis=0) / max(n - mean_var, 1.0), phi


def shift(
    logq: np.ndarray,
    names: list[str],
    *,
    window: int,
    confirm: int,
    alpha: float,
    priors: dict[str, Prior] | None = None,
) -> Shift | None:
    """The test of *logq* (nights x quantiles, oldest first, log values; *names* its quantiles' metrics):
    the newest *confirm* nights against the nights before the newest *window*. None when the baseline has
    fewer than MIN_BASELINE nights.

    Per quantile, the shift of the tested nights' mean log value from the baseline's, over its standard
    error under AR(1) noise of the pooled correlation (``lag1_pooled``), computed exactly for these nights:
    the contrast's variance w'Rw (w: 1/k on the k tested nights, -1/n on the n baseline nights, 0 on the
    nights between) in units of the quantile's night-to-night variance (``spread``). The large-sample
    inflation (1 + phi) / (1 - phi) it replaces overstated the variance of a mean of 2 nights, (1 + phi) /
    2, by 1 / (1 - phi): at phi 0.3 a doubled p99.9 at 15 % spread showed z 4.6 where the noise allows 5.4
    (bench/tail_bench.py). With *priors* (per quantile's metric, ``suite_priors``), that variance is
    moderated toward the suite's (``Prior``), and the t test has the prior's degrees of freedom added to
    the baseline's n - 1."""
    n_nights = logq.shape[0]
    start, end = baseline_nights(n_nights, window)
    if end - start < MIN_BASELINE or not names:
        return None
    base, tested = logq[start:end], logq[n_nights - confirm :]
    n, k = base.shape[0], tested.shape[0]
    var, phi = spread(base)
    df = np.full(len(names), n - 1.0)
    for j, name in enumerate(names):
        prior = (priors or {}).get(name)
        if prior is not None and prior.df > 0:
            var[j] = (prior.df * prior.var + df[j] * var[j]) / (prior.df + df[j])
            df[j] += prior.df
    r = _ar1(phi, n_nights - start)
    w = np.zeros(n_nights - start)
    w[:n], w[-k:] = -1.0 / n, 1.0 / k
    se = np.sqrt(var * float(w @ r @ w))
    diff = tested.mean(axis=0) - base.mean(axis=0)
    floor = 1e-9  # a quantile flat on every baseline night: any move is huge, none is nothing
    z = diff / np.maximum(se, floor)
    q = len(names)
    each = 2 * special.stdtr(df, -np.abs(z))
    most = int(np.lexsort((-np.abs(z), each))[0])  # the smallest p (the largest |z| among equal ones)
    crit = -special.stdtrit(df, alpha / (2 * q))  # t.isf, per quantile
    return Shift(
        p_value=float(min(1.0, q * each[most])),
        quantile=names[most],
        change_pct=100.0 * math.expm1(float(diff[most])),
        log_change=float(diff[most]),
        z=float(z[most]),
        detectable_pct=100.0 * math.expm1(float((crit * se).min())),
        baseline=(start, end),
        moves={name: 100.0 * math.expm1(float(d)) for name, d in zip(names, diff, strict=True)},
    )


def suite_priors(cells: list[tuple[np.ndarray, list[str], np.ndarray]], window: int) -> dict[str, Prior]:
    """Per quantile's metric, the prior (``fit_prior``) of the suite's distribution series *cells*: each as
    (its log quantiles, nights x quantiles; their metrics; the index of each night among the suite's), from
    each one's baseline nights as ``shift`` takes them tonight. The series' shared correlation is the mean
    squared correlation of their baseline nights (``window``'s, of the suite's scalar series)."""
    found: dict[str, tuple[list[float], list[float], list[np.ndarray]]] = {}
    width = 1 + max((int(at.max()) for _, _, at in cells if at.size), default=0)
    for logq, names, at in cells:
        start, end = baseline_nights(logq.shape[0], window)
        if end - start < MIN_BASELINE:
            continue
        var, _ = spread(logq[start:end])
        for j, name in enumerate(names):
            row = np.full(width, np.nan)
            row[at[start:end]] = logq[start:end, j]
            v, d, rows = found.setdefault(name, ([], [], []))
            v.append(float(var[j]))
            d.append(end - start - 1.0)
            rows.append(row)
    priors = {}
    for name, (v, d, rows) in found.items():
        if len(rows) < SUITE_MIN_SERIES:
            continue
        prior = fit_prior(np.array(v), np.array(d), mean_squared_correlation(np.array(rows)))
        if prior is not None and prior.df > 0:
            priors[name] = prior
    return priors


def open_shift(
    logq: np.ndarray,
    names: list[str],
    *,
    window: int,
    confirm: int,
    alpha: float,
    min_effect_pct: float,
    priors: dict[str, Prior] | None = None,
) -> tuple[int, Shift] | None:
    """The earliest shift toward worse (a slower quantile) that the test flagged on an earlier night and that
    has not recovered since, as (the number of nights that night saw, the test then); None when there is
    none. Flagged: p below *alpha* (``regress`` gives the strictest threshold of its correction, as for a
    scalar series' open regression) and the quantile that moved most at least *min_effect_pct* % slower.
    Recovered: on some night since, the median of the newest *window* nights of that quantile was back
    within ``window.RECOVERED`` of *min_effect_pct* % of its baseline then (closed for good: a later
    move is a new one for tonight's test). So a lasting change of the distribution stays flagged, as a
    scalar series' sustained slowdown does, until it recovers or someone accepts it (the history from an
    accepted change on is all *logq* holds). *priors*: tonight's (``suite_priors``), for every night's
    test."""
    n = logq.shape[0]
    if n <= MIN_BASELINE + window:
        return None
    cum = np.vstack([np.zeros(logq.shape[1]), np.cumsum(logq, axis=0)])
    medians = np.median(np.lib.stride_tricks.sliding_window_view(logq, window, axis=0), axis=-1)
    moved, kept = math.log1p(min_effect_pct / 100), math.log1p(RECOVERED * min_effect_pct / 100)
    for e in range(MIN_BASELINE + window, n):  # the test as night e - 1 ran it, on nights [0, e)
        start, end = baseline_nights(e, window)
        base = (cum[end] - cum[start]) / (end - start)
        since = medians[e - window + 1 :].min(axis=0)  # the windows ending on the nights after it
        candidate = ((cum[e] - cum[e - confirm]) / confirm - base >= moved) & (since - base >= kept)
        if not candidate.any():
            continue  # (cheap: most nights are not the start of anything)
        s = shift(logq[:e], names, window=window, confirm=confirm, alpha=alpha, priors=priors)
        if s is not None and s.p_value < alpha and candidate[names.index(s.quantile)] and s.z > 0:
            return e, s
    return None


def distribution_rows(
    metrics: pd.DataFrame,
    order: dict[str, int],
    newest_id: str,
    *,
    window: int,
    confirm: int,
    alpha: float,
    open_alpha: float | None = None,
    min_effect_pct: float = 0.0,
    start_of: Callable[[tuple, list[str]], int] = lambda key, runs: 0,
) -> tuple[list[dict[str, Any]], dict[tuple, SeriesNights]]:
    """One regress row per step cell and operation measured in the newest run with at least two quantiles
    on every night (*metrics*: the history's finite metric rows of the runs in *order*), and its nights for
    the report (the values of the quantile that moved most). *start_of* (series keys, its runs): the first
    night its baseline may use (an accepted change's); a series whose baseline after it is too short has an
    ``untested`` row. With *open_alpha*, a shift toward worse flagged on an earlier night and not recovered
    (``open_shift``) is an open row (``_open``: a regression until it recovers or is accepted)."""
    cells = _cells(metrics, order, newest_id, start_of)
    priors = suite_priors(
        [(c.logq, list(c.wide.columns), np.array([order[r] for r in c.runs[c.start :]])) for c in cells],
        window,
    )
    rows: list[dict[str, Any]] = []
    values: dict[tuple, SeriesNights] = {}
    for cell in cells:
        judged = _judged(
            cell,
            priors,
            window=window,
            confirm=confirm,
            alpha=alpha,
            open_alpha=open_alpha,
            min_effect_pct=min_effect_pct,
        )
        if judged is not None:
            rows.append(judged[0])
            values[cell.key] = judged[1]
    return rows, values


@dataclass(frozen=True)
class _Cell:
    """One step cell and operation's nights: its series keys, its nights' quantiles (a run per row, oldest
    first), its runs, the first night of its baseline and the log quantiles from there."""

    key: tuple
    wide: pd.DataFrame
    runs: list[str]
    start: int
    logq: np.ndarray


def _cells(
    metrics: pd.DataFrame, order: dict[str, int], newest_id: str, start_of: Callable[[tuple, list[str]], int]
) -> list[_Cell]:
    """The cells ``distribution_rows`` tests: measured in the newest run, with two quantiles or more."""
    m = metrics[metrics["metric"].isin(QUANTILES) & metrics["run_id"].isin(order)]
    if m.empty:
        return []
    nightly = m.groupby([*OPERATION_KEYS, "metric", "run_id"], dropna=False)["value"].median().reset_index()
    cells = []
    for key, part in nightly.groupby(OPERATION_KEYS, dropna=False, sort=True):
        wide = part.pivot(index="run_id", columns="metric", values="value")
        wide = wide[[q for q in QUANTILES if q in wide.columns]].dropna()
        wide = wide[(wide > 0).all(axis=1)]
        wide = wide.loc[sorted(wide.index, key=order.__getitem__)]
        if wide.shape[1] < 2 or wide.empty or wide.index[-1] != newest_id:
            continue
        runs = [str(r) for r in wide.index]
        skey = (*key, DISTRIBUTION)
        start = start_of(skey, runs)
        cells.append(_Cell(skey, wide, runs, start, np.log(wide.to_numpy(float)[start:])))
    return cells


def _judged(
    cell: _Cell,
    priors: dict[str, Prior],
    *,
    window: int,
    confirm: int,
    alpha: float,
    open_alpha: float | None,
    min_effect_pct: float,
) -> tuple[dict[str, Any], SeriesNights] | None:
    """The regress row of one cell and its nights (None: no row, too few nights to test)."""
    wide, runs, start, logq = cell.wide, cell.runs, cell.start, cell.logq
    row: dict[str, Any] = dict(zip(SERIES_KEYS, cell.key, strict=True))
    names = list(wide.columns)
    s = shift(logq, names, window=window, confirm=confirm, alpha=alpha, priors=priors)
    if s is None:
        if not start:
            return None
        # an accepted change too recent: its row says so (regress holds it as accepted)
        row.update(nights=len(runs), _runs=runs, _open=False, verdict="untested", test="none")
        row["note"] = "too few nights since the accepted change to test the distribution"
        return row, _nights(runs, wide[wide.columns[-1]].to_numpy(float))
    found = None
    if open_alpha is not None:
        found = open_shift(
            logq,
            names,
            window=window,
            confirm=confirm,
            alpha=open_alpha,
            min_effect_pct=min_effect_pct,
            priors=priors,
        )
    seen, s = found if found is not None else (logq.shape[0], s)
    began = start + _began(logq[:seen, names.index(s.quantile)], s, 0, window, confirm)
    if found is None and confirm > 1 and s.p_value < alpha and began > len(runs) - confirm:
        # its newest night alone moved: one night does not confirm a change (--confirm), tomorrow tells
        row.update(nights=len(runs), _runs=runs, _open=False, verdict="untested", test="none")
        row["note"] = f"moved on its newest night only: {confirm} nights confirm a change (--confirm)"
        return row, _nights(runs, wide[s.quantile].to_numpy(float))
    flagged = s
    s = Shift(**{**s.__dict__, "baseline": (s.baseline[0] + start, s.baseline[1] + start)})
    tail = np.log(wide[s.quantile].to_numpy(float))
    before = float(np.exp(tail[s.baseline[0] : s.baseline[1]].mean()))
    after = float(np.exp(tail[-confirm:].mean()))
    row.update(
        nights=len(runs),
        _runs=runs,
        _open=found is not None,
        verdict="",
        before_median=before,
        after_median=after,
        change_pct=s.change_pct,
        p_value=s.p_value,
        test="distribution",
        note=s.note,
        detectable_pct=s.detectable_pct,
        window_nights=confirm,
        change_run=runs[began],
        baseline_from=runs[s.baseline[0]],
        baseline_nights=s.baseline[1] - s.baseline[0],
        noise="baseline quantiles" + (", the suite's" if s.quantile in priors else ""),
    )
    if found is not None:  # as the scalar series' open regression: tonight's nights against the flag's
        after = float(np.exp(np.median(tail[-window:])))
        row.update(
            after_median=after,
            change_pct=100.0 * (after / before - 1),
            test=f"open since night {began + 1}",
            note=f"flagged on night {start + seen} ({flagged.note}), not recovered",
        )
    v = _nights(runs, wide[s.quantile].to_numpy(float))
    v.change_index, v.baseline = began, s.baseline
    v.noise_source = f"the baseline nights' spread of each quantile ({s.quantile} shown)" + _moderated(
        priors, s
    )
    return row, v


def _moderated(priors: dict[str, Prior], s: Shift) -> str:
    """What the suite's prior added to the spread of the quantile that moved most ("" when none)."""
    prior = priors.get(s.quantile)
    if prior is None or prior.df <= 0:
        return ""
    return (
        f", moderated toward the suite's spread of {QUANTILES[s.quantile]} over {prior.series} series"
        f" (worth {prior.df:.0f} degrees of freedom)"
    )


def _nights(runs: list[str], value: np.ndarray) -> SeriesNights:
    """A distribution series' nights for the report: one quantile's value a night."""
    v = pd.DataFrame({"run_id": runs, "value": value})
    v["low"], v["high"], v["n"] = v["value"], v["value"], 1
    return SeriesNights(v)


def _began(x: np.ndarray, s: Shift, start: int, window: int, confirm: int) -> int:
    """The night the shift began (an index of the series' nights): the earliest of the newest *window* from
    which every night of the quantile that moved most (*x*: its log values from night *start*, up to the
    night tested) is past half its shift, in its direction; the first tested night when not even the
    newest is. (Counted from the newest: a flag raised when only its newest night had moved began there.)"""
    base = x[s.baseline[0] - start : s.baseline[1] - start].mean()
    half = s.log_change / 2
    n = len(x)
    first = n - confirm
    for i in range(n - 1, max(n - window, s.baseline[1] - start) - 1, -1):
        if ((x[i] - base - half) * half) > 0:
            first = i
        else:
            break
    return start + first
