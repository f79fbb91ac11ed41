"""The window test of ``regress``: are the newest k nights of a series off the stable nights before them?

Everything here is on log values (a change is a ratio) and pure numpy.

**The statistic.** For a window of the k newest nights, the *least changed* of them, in units of the
baseline's standard deviation: ``(max(fresh) - mean(baseline)) / sd(baseline)`` for a drop (the same on the
negated values for a rise). A change must show on every night of the window, so one outlier night moves
nothing once k >= 2, while a real step shows on all of them. The baseline's mean and standard deviation
leave out its outliers (beyond 3.5 scaled MADs, at most a tenth of its nights, none of fewer than 10).

**The noise model.** Nightly series are not independent: consecutive nights share a host, a data age, a
placement. The baseline's lag-1 autocorrelation (bias-corrected, rounded *up* to a multiple of 0.1, capped
at 0.9) is the noise model: Gaussian AR(1) nights with that correlation, of which independent nights
(rho = 0) are a special case. The statistic does not depend on the level or the spread, so its null
distribution depends only on the baseline's length, the windows tried and rho: it is simulated once per
(length, windows, rho) and cached.

**Calibrated tails.** A regression that fails a job is judged after a correction over many series, so the
p-values that matter are far below what plain simulation reaches (1 / draws). The simulation therefore
samples by importance: a quarter of the draws each with the window's nights shifted down by 0, 2, 4 and 6
standard deviations of the innovations, weighted by the likelihood ratio of the unshifted model against the
mixture (the balance heuristic). The weighted share below a value estimates its null probability without
bias, down to about 1e-12, with no assumption that the k nights are independent of each other or of the
baseline. The smallest p over the windows tried has its own (weighted) null distribution from the same
draws, and the two directions double it.

**The suite's night effect.** The series of a suite run on one host the same night, and a slow night is
slow for most of them: ``night_effect`` (the median over the series of their deviation from their own
median, each turned so that worse is down) estimates it from the suite, and ``regress`` judges each series
without it (``changepoint.judge_series`` with a ``SuiteView``), so that a change of a few series stands
out of what is left of the noise; a change of the whole suite moves the night effect itself and is judged
on the series' own values (measured in ``bench/suite_bench.py``).

**The spread of the suite's series of one metric.** A baseline of a few nights that happen to be quiet is
not its series' noise (a step's max latency: one ~100 ms event lands in a 15-s step or not): the baseline's
standard deviation is at least its series' own over all its nights before the window, levels' shifts left
out, shrunk toward that of the suite's series of its metric by how well it is known (``SpreadPrior``).

**The detectable effect.** The shift that puts the least changed night of a full window exactly on the
threshold of a given level: smaller changes cannot reach it at this noise and length.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

DEFAULT_SEED = 20261201
TILTS = (0.0, 2.0, 3.5, 5.0, 7.0)  # shifts (innovation sds) of the newest nights in the importance sampler
NULL_DRAWS = 21_000  # shared equally by the proposals
RHO_STEP = 0.1
CAP = 2.0  # how much further than the window's least changed night any of its nights counts (sds)
RHO_MAX = 0.9
RHO_MARGIN = 1.0  # standard errors added to the estimated correlation
# a baseline night this many scaled MADs from the median is an outlier (see segment_stats); looser or no
# trimming gave fewer synthetic false alarms and missed one more real regression (bench/detection_bench.py)
TRIM_MADS = 3.5
RECOVERED = 0.25  # a night back within this share of min-effect of the level before it shows no change


@dataclass(frozen=True)
class NoiseModel:
    """The baseline as the window test sees it (log values)."""

    nights: int
    level: float  # mean of the log values (outliers left out)
    spread: float  # their standard deviation
    rho: float  # the AR(1) correlation of the null

    @property
    def spread_pct(self) -> float:
        return 100.0 * math.expm1(self.spread)

    @property
    def name(self) -> str:
        return "independent nights" if self.rho == 0 else f"AR(1) rho={self.rho:.1f}"


@dataclass(frozen=True)
class Window:
    """The window that gave the smallest p."""

    k: int
    p: float  # one-sided marginal p of this window
    before: float  # median of the baseline (values, not logs)
    after: float  # median of the window
    pct: float


def segment_stats(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each row of *b* (shape (r, m)) without its outliers: the values beyond
    TRIM_MADS (3.5) scaled MADs from the median, at most a tenth of the row's nights (none of fewer than 10:
    dropping one of a few nights makes the null's tail heavy)."""
    m = b.shape[1]
    if m < 10:
        return b.mean(axis=1), b.std(axis=1, ddof=1)
    med = np.median(b, axis=1, keepdims=True)
    mad = 1.4826 * np.median(np.abs(b - med), axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        dev = np.abs(b - med) / mad
    dev = np.nan_to_num(dev, nan=0.0)
    most = np.partition(dev, m - m // 10, axis=1)[:, m - m // 10 :: m]  # the (m // 10)-th largest
    keep = ~((dev > TRIM_MADS) & (dev >= most))
    n = keep.sum(axis=1)
    mean = np.where(keep, b, 0.0).sum(axis=1) / n
    var = np.where(keep, (b - mean[:, None]) ** 2, 0.0).sum(axis=1) / (n - 1)
    return mean, np.sqrt(var)


def least_change(b: np.ndarray, f: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Per row: how far the fresh nights *f* are below the baseline *b*, in baseline standard deviations:
    the mean of their deviations, none counted more than CAP beyond the least changed night (one outlier
    night cannot make a window), when every fresh night is below the baseline's mean; else the highest
    deviation (>= 0: no drop). The standard deviation is at least *floor* (``spread_floor``).
    The rise is the same statistic of the negated values."""
    return _least_change(*segment_stats(b), f, floor)


def _least_change(mean: np.ndarray, sd: np.ndarray, f: np.ndarray, floor: float) -> np.ndarray:
    """``least_change`` from the baseline's ``segment_stats`` (the same for both directions, negated mean)."""
    sd = np.maximum(sd, floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (f - mean[:, None]) / sd[:, None]
    top = z.max(axis=1)
    return np.where(top < 0, np.maximum(z, top[:, None] - CAP).mean(axis=1), top)


def lag1_estimate(y: np.ndarray) -> float | None:
    """The lag-1 autocorrelation of *y* with its small-sample bias removed ((1 + 3 rho) / m, Kendall); None
    when there are fewer than 4 values or they do not vary."""
    m = y.size
    if m < 4:
        return None
    d = y - y.mean()
    denom = float(d @ d)
    if denom <= 0:
        return None
    r = float(d[:-1] @ d[1:]) / denom
    return r + (1 + 3 * max(r, 0.0)) / m


def _lag1_variance(r: float, m: int) -> float:
    """The sampling variance of a lag-1 estimate *r* from *m* values (Bartlett: (1 - r^2) / m)."""
    return max(1 - r * r, 0.0) / m


def _cautious(r: float, se: float) -> float:
    """*r* with RHO_MARGIN standard errors *se* added, rounded up to a multiple of RHO_STEP, in [0,
    RHO_MAX]."""
    r = min(max(r + RHO_MARGIN * se, 0.0), RHO_MAX)
    return round(math.ceil(r / RHO_STEP - 1e-9) * RHO_STEP, 1)


def lag1_rho(y: np.ndarray, suite: SuiteNoise | None = None) -> float:
    """The noise model's correlation from log values *y*: :func:`lag1_estimate` with RHO_MARGIN standard
    errors added, rounded up to a multiple of RHO_STEP, in [0, RHO_MAX] (0 when there is no estimate): the
    null stays on the cautious side of the estimate. With *suite* (the series of the suite that *y* is one
    of, :func:`suite_noise`), the estimate is shrunk toward the suite's (:meth:`SuiteNoise.combine`)."""
    r = lag1_estimate(y)
    if suite is not None:
        return _cautious(*suite.combine(r, y.size))
    if r is None:
        return 0.0
    return _cautious(r, math.sqrt(_lag1_variance(r, y.size)))


# a suite's pooled estimate is used when at least this many of its series have an estimate
SUITE_MIN_SERIES = 4


@dataclass(frozen=True)
class SuiteNoise:
    """The lag-1 correlation that the series of one suite share (one host, the same nights): the mean of
    their bias-corrected estimates, its standard error allowing for their dependence, and how much the
    series' own correlations differ.

    The series of a suite are not independent: a night that is slow for the host is slow for most of them,
    so their estimates err together. With c the mean squared correlation between two series' nights, the
    errors of two estimates correlate by about c (a shared component of share s gives c = s^2), and the
    mean of N estimates has the variance of N / (1 + (N - 1) c) independent ones (``effective``): pooling
    helps most when the series share least, and a correlation that comes only from the host is known no
    better than one series knows it."""

    rho: float  # the pooled estimate
    se: float  # its standard error
    tau2: float  # the variance of the series' true correlations around it (0: they share one)
    series: int
    effective: float

    @property
    def shared(self) -> float:
        """c, the mean squared correlation between two series' nights (from *effective*)."""
        return (self.series / self.effective - 1) / (self.series - 1) if self.series > 1 else 1.0

    def combine(self, r: float | None, m: int) -> tuple[float, float]:
        """(estimate, standard error) for one series with its own estimate *r* from *m* nights: shrunk toward
        the suite's by its own sampling variance against how much the series differ (tau2); its own alone
        once it knows itself as well as the suite does (a long series). The standard error adds the two
        parts' (they are not independent: the sum is an upper bound)."""
        if r is None:
            return self.rho, self.se
        v = _lag1_variance(r, m)
        if v <= self.se**2:
            return r, math.sqrt(v)
        w = self.tau2 / (self.tau2 + v)
        return w * r + (1 - w) * self.rho, w * math.sqrt(v) + (1 - w) * self.se


def suite_noise(nights: np.ndarray) -> SuiteNoise | None:
    """The suite's shared correlation from *nights* (log values; a row per series, a column per night, NaN
    where a series has no value), None when fewer than SUITE_MIN_SERIES series have an estimate. Each
    series' estimate is :func:`lag1_estimate` of its own values."""
    est, var, rows = [], [], []
    for row in nights:
        y = row[~np.isnan(row)]
        r = lag1_estimate(y)
        if r is not None:
            est.append(r)
            var.append(_lag1_variance(r, y.size))
            rows.append(row)
    n = len(est)
    if n < SUITE_MIN_SERIES:
        return None
    r, v = np.array(est), np.array(var)
    c = mean_squared_correlation(np.array(rows))
    effective = n / (1 + (n - 1) * c)
    rho = float(r.mean())
    se = math.sqrt(float(v.mean()) / effective)
    tau2 = max(0.0, float(r.var(ddof=1)) - float(v.mean()) * (1 - c))
    return SuiteNoise(rho, se, tau2, n, effective)


@dataclass(frozen=True)
class SpreadPrior:
    """The spread (log variance) that the suite's series of one metric share, for a series whose own nights
    are too few to know its spread: the mean of their log variances (each over its level-free nights,
    :func:`level_free_log_var`, made unbiased for its degrees of freedom) and how much the series' true log
    variances differ (*tau2*, at least TAU2_MIN).

    A spread from 3 nights is known within a factor of about 2 either way (its log variance has a standard
    deviation of 1.3), and an extreme-value series (a step's max: one ~100 ms event in the step or not) can
    look quiet for 3 nights and bimodal over 10: its noise is a property of the metric as much as of the
    series. So a series' own log variance (over all its nights before the window, not only the baseline's)
    is shrunk toward the metric's by its own sampling variance against *tau2* (as ``SuiteNoise.combine``
    shrinks the correlation): a series with few nights takes about its metric's spread, one with many keeps
    about its own. The window test then uses the larger of that and its baseline's own spread
    (:func:`least_spread`): the suite can only widen a series' noise, never make a test more confident than
    its own nights allow (the null, simulated for the baseline's length, then errs on the cautious side)."""

    mu: float  # mean unbiased log variance of the metric's series
    tau2: float  # variance of their true log variances around it
    series: int

    def shrink(self, own: np.ndarray | float, nu: np.ndarray | float) -> np.ndarray:
        """The log variance of series whose own (unbiased) is *own* with *nu* degrees of freedom (NaN or nu
        < 1: none of its own, the metric's), shrunk toward the metric's."""
        own, nu = np.asarray(own, dtype=float), np.asarray(nu, dtype=float)
        w = self.tau2 / (self.tau2 + _log_var_variance(np.maximum(nu, 1)))
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(own) & (nu >= 1), w * own + (1 - w) * self.mu, self.mu)


# the series of one metric are taken to differ in true log variance by at least this much (a standard
# deviation of 0.5: spreads within a factor of about 1.3 of each other), whatever a few series estimate: a
# series that has measured its own spread over many nights keeps about it (60 nights: 88 % of the weight;
# 16: 62 %; 4: 21 %), where an estimate of 0 (the series of a metric share one spread) gave every series its
# metric's however long its own history (tests/unit/test_alerts.py: nights that recovered "cannot tell")
TAU2_MIN = 0.25
MIN_SPREAD_NIGHTS = 3  # nights a series needs to count in its metric's spread (changepoint.MIN_BASELINE)
SPREAD_NIGHTS = 60  # the nights before a night that a spread is measured over (changepoint.MAX_BASELINE)
# a step between consecutive nights is a shift of level (cut out of the spread) when it is TRIM_MADS scaled
# MADs of the series' steps or more, none of the smallest three quarters, and the series has this many steps
SHIFT_MIN_STEPS = 6


def _log_var_bias(nu: np.ndarray | float) -> np.ndarray:
    """E[log(s^2 / sigma^2)] for a sample variance with *nu* degrees of freedom (Gaussian values)."""
    half = np.asarray(nu, dtype=float) / 2
    return special.digamma(half) - np.log(half)


def _log_var_variance(nu: np.ndarray | float) -> np.ndarray:
    """Var[log s^2] for a sample variance with *nu* degrees of freedom (Gaussian values)."""
    return special.polygamma(1, np.asarray(nu, dtype=float) / 2)


def level_free_log_var(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of log values *rows* (a column per night, NaN where none): the log of its variance around the
    levels it held, made unbiased for its degrees of freedom, and those degrees of freedom (nu = values -
    levels; log variance NaN where nu < 1 or the values do not vary). A level holds until a shift: a step
    from one value to the next of TRIM_MADS (3.5) scaled MADs of the row's steps or more (a Gaussian
    night's step reaches it about once in 2,000), at most a quarter of the steps, none in a row of fewer
    than SHIFT_MIN_STEPS. So a change of level (a regression, the slow nights of a throttled server) is not
    counted as noise, while a noisy or bimodal series' frequent jumps are (they make its MAD)."""
    r, n = rows.shape
    ok = ~np.isnan(rows)
    if n < 2:  # (no night before the first ones judged: a window as long as the history)
        return np.full(r, np.nan), ok.sum(axis=1) - 1.0
    last = np.maximum.accumulate(np.where(ok, np.arange(n), -1), axis=1)  # the newest value at or before
    prev = np.concatenate([np.full((r, 1), -1), last[:, :-1]], axis=1)  # ... and before each night
    has = ok & (prev >= 0)
    step = np.abs(np.where(has, rows - np.take_along_axis(rows, np.maximum(prev, 0), axis=1), np.nan))
    steps = has.sum(axis=1)
    cut = steps >= SHIFT_MIN_STEPS
    shift = np.zeros_like(has)
    if cut.any():
        s = step[cut]
        mad = 1.4826 * np.nanmedian(s, axis=1)  # 0: a quantised series, whose steps are its noise
        limit = np.where(mad > 0, np.maximum(TRIM_MADS * mad, np.nanquantile(s, 0.75, axis=1)), np.inf)
        with np.errstate(invalid="ignore"):
            shift[cut] = has[cut] & (s > limit[:, None])
    level = np.arange(r)[:, None] * (n + 1) + np.cumsum(shift, axis=1)  # one number per row and level
    x = np.where(ok, rows, 0.0)
    count = np.bincount(level[ok], minlength=r * (n + 1))
    mean = np.bincount(level[ok], weights=x[ok], minlength=r * (n + 1)) / np.maximum(count, 1)
    ss = np.where(ok, (x - mean[level]) ** 2, 0.0).sum(axis=1)
    nu = (ok.sum(axis=1) - shift.sum(axis=1) - 1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        logs = np.where((nu >= 1) & (ss > 0), np.log(ss / nu) - _log_var_bias(np.maximum(nu, 1)), np.nan)
    return logs, nu


def spread_prior(logs: np.ndarray, nu: np.ndarray) -> SpreadPrior | None:
    """The spread that series of one metric share, from their unbiased log variances *logs* with *nu*
    degrees of freedom (:func:`level_free_log_var`); None when fewer than 2 of them have
    MIN_SPREAD_NIGHTS - 1 degrees of freedom and vary."""
    use = np.isfinite(logs) & (nu >= MIN_SPREAD_NIGHTS - 1)
    if use.sum() < 2:
        return None
    own, sampling = logs[use], _log_var_variance(nu[use])
    # the variance of the series' log variances is known within sqrt(2 / (n - 1)) of itself: one standard
    # error off it, so that a few series that happened to differ do not make each its own (the cautious
    # side, as lag1_rho's RHO_MARGIN); TAU2_MIN below
    total = float(own.var(ddof=1)) * (1 - math.sqrt(2 / (own.size - 1)))
    tau2 = max(TAU2_MIN, total - float(sampling.mean()))
    return SpreadPrior(float(own.mean()), tau2, int(use.sum()))


def least_spread(log_var: np.ndarray | float, nights: int) -> float:
    """The least spread (log standard deviation) of a baseline of *nights* nights of a series whose log
    variance is *log_var* (``SpreadPrior.shrink``): as large as such a baseline's own typically is (a sample
    standard deviation of few nights is smaller than the true one: its log variance is biased by
    ``_log_var_bias``), so that a baseline that happens to be quiet is judged at its series' spread."""
    v = float(log_var)
    if nights < 2 or not math.isfinite(v):
        return 0.0
    return math.exp((v + float(_log_var_bias(nights - 1))) / 2)


def mean_squared_correlation(rows: np.ndarray) -> float:
    """The mean, over pairs of rows, of the squared correlation of their common (non-NaN) values."""
    x = rows - np.nanmean(rows, axis=1, keepdims=True)
    ok = ~np.isnan(x)
    x = np.where(ok, x, 0.0)
    both = ok.astype(float) @ ok.T.astype(float)  # common values of each pair
    cov = x @ x.T
    ss = (x * x) @ ok.T.astype(float)  # [i, j]: sum of row i's squares where row j has a value too
    with np.errstate(divide="ignore", invalid="ignore"):
        corr2 = cov**2 / (ss * ss.T)
        bias = 1.0 / (both - 1)  # what the squared correlation of two independent series averages
        corr2 = (corr2 - bias) / (1 - bias)
    n = rows.shape[0]
    off = ~np.eye(n, dtype=bool) & np.isfinite(corr2) & (both >= 4)
    return float(np.clip(corr2[off], 0.0, 1.0).mean()) if off.any() else 1.0


# the night effect is removed when the suite's series share at least this mean squared correlation: not
# when they are independent (about 0.002 between 365-night series), where removing it gains nothing and
# judging each series twice cost bench/regress_scale_bench.py 63.6 CPU-s where it took 32.1; in
# bench/suite_bench.py's suites (the host 64 % of the variance) it was 0.05-0.8 on every night of 20 suites
# per host model
NIGHT_EFFECT_SHARED = 0.02


def night_effect(nights: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """What each night (a column of log values *nights*, a row per series) did to the suite as a whole: the
    median over the series of their deviation from their own median night, each series turned by its sign
    in *signs* (1: higher is better, -1: lower is better, 0: left out) so that a slow night is negative for
    all. 0 on a night with fewer than SUITE_MIN_SERIES series. The median leaves out the few series that
    changed on their own (a step of a quarter of the series moves it by about a tenth of the step)."""
    turned = np.where(signs[:, None] != 0, nights * signs[:, None], np.nan)
    count = (~np.isnan(turned)).sum(axis=0)
    out = np.zeros(nights.shape[1])
    rows = ~np.all(np.isnan(turned), axis=1)
    ok = count >= SUITE_MIN_SERIES
    if rows.sum() < SUITE_MIN_SERIES or not ok.any():
        return out
    dev = turned[rows] - np.nanmedian(turned[rows], axis=1, keepdims=True)
    out[ok] = np.nanmedian(dev[:, ok], axis=0)
    return out


# a series' log variance over the nights before a night (its index in the series' values), shrunk toward its
# metric's in the suite (``SpreadPrior.shrink``); None: none to use
SpreadAt = Callable[[int], float | None]


@dataclass(frozen=True)
class SuiteView:
    """What one series sees of its suite, given the index of a night in the series' own values: the noise the
    suite's series share over the nights before it, raw (*noise*) and without the suite's night effect
    (*residual*), and the night effect on the series' own nights (*effect*, log, the series' sign applied:
    subtracting it removes what the host did to every series that night; None: no effect to remove)."""

    noise: Callable[[int], SuiteNoise | None]
    residual: Callable[[int], SuiteNoise | None]
    effect: np.ndarray | None
    spread: SpreadAt | None = None  # its log variance shrunk toward its metric's (``SpreadPrior``) ...
    residual_spread: SpreadAt | None = None  # ... and without the night effect


class SuiteNights:
    """The log values of a suite's series, a row per series and a column per night (oldest first; NaN where a
    series has no value), and the suite's noise over the nights before a night (:func:`suite_noise`, computed
    once per night: the series of a suite ask for the same nights). *signs*: per series 1 when higher is
    better, -1 when lower is, 0 when neither (left out of the night effect); all 1 by default. *metrics*: per
    series its metric, for the spread the series of one metric share (``SpreadPrior``; none without)."""

    def __init__(
        self, nights: np.ndarray, signs: np.ndarray | None = None, metrics: list[str] | None = None
    ) -> None:
        self.nights = nights
        self.signs = np.ones(nights.shape[0]) if signs is None else np.asarray(signs, dtype=float)
        self.metrics = np.asarray(metrics, dtype=object) if metrics is not None else None
        self._before: dict[int, SuiteNoise | None] = {}
        self._residual: dict[int, SuiteNoise | None] = {}
        self._effect: dict[int, np.ndarray] = {}
        self._spreads: dict[tuple[int, bool], np.ndarray] = {}

    def spreads_before(self, night: int, residual: bool = False) -> np.ndarray:
        """Per series, its log variance over the last SPREAD_NIGHTS nights before *night* (its levels'
        shifts left out, :func:`level_free_log_var`) shrunk toward that of its metric's series
        (``SpreadPrior.shrink``; NaN: its metric has no spread to share or the series does not vary); with
        *residual*, once each series' night effect is removed."""
        key = (night, residual)
        if key not in self._spreads:
            assert self.metrics is not None
            lo = max(0, night - SPREAD_NIGHTS)
            rows = self.nights[:, lo:night]
            if residual:
                rows = rows - self.signs[:, None] * self.effect(night)[None, lo:night]
            logs, nu = level_free_log_var(rows)
            out = np.full(rows.shape[0], np.nan)
            for metric in set(self.metrics):
                mine = np.flatnonzero(self.metrics == metric)
                prior = spread_prior(logs[mine], nu[mine])
                if prior is not None:  # a series too short for its own takes the metric's; a flat one none
                    keep = np.isfinite(logs[mine]) | (nu[mine] < 1)
                    out[mine] = np.where(keep, prior.shrink(logs[mine], nu[mine]), np.nan)
            self._spreads[key] = out
        return self._spreads[key]

    def spread_at(self, row: int, night: int, residual: bool = False) -> float | None:
        """Series *row*'s shrunk log variance over the nights before *night* (``spreads_before``)."""
        v = float(self.spreads_before(night, residual)[row])
        return v if math.isfinite(v) else None

    def before(self, night: int) -> SuiteNoise | None:
        """The suite's noise over the nights before *night* (a column)."""
        if night not in self._before:
            self._before[night] = suite_noise(self.nights[:, :night])
        return self._before[night]

    def effect(self, upto: int) -> np.ndarray:
        """The suite's night effect (:func:`night_effect`, turned: a slow night is negative) on each night
        before *upto*, from those nights only."""
        if upto not in self._effect:
            self._effect[upto] = night_effect(self.nights[:, :upto], self.signs)
        return self._effect[upto]

    def residual_before(self, night: int) -> SuiteNoise | None:
        """The suite's noise over the nights before *night* once each series' night effect is removed."""
        if night not in self._residual:
            own = self.signs[:, None] * self.effect(night)[None, :]
            self._residual[night] = suite_noise(self.nights[:, :night] - own)
        return self._residual[night]

    def view(self, row: int, at: np.ndarray, upto: int) -> SuiteView:
        """What series *row* sees, its values on the nights (columns) *at*, the night effect from the nights
        before *upto* (columns; the newest night judged + 1): none when the series is neither better higher
        nor lower, or the suite's series share less than NIGHT_EFFECT_SHARED of a correlation."""
        sign, noise = self.signs[row], self.before(upto)
        shared = noise is not None and noise.shared >= NIGHT_EFFECT_SHARED
        effect = sign * self.effect(upto)[at] if sign and shared else None
        known = self.metrics is not None  # (the spreads need each series' metric)
        return SuiteView(
            lambda k: self.before(int(at[k])),
            lambda k: self.residual_before(int(at[k])),
            effect,
            (lambda k: self.spread_at(row, int(at[k]))) if known else None,
            (lambda k: self.spread_at(row, int(at[k]), residual=True)) if known else None,
        )


@dataclass(frozen=True)
class _WeightedCdf:
    values: np.ndarray  # sorted
    cum: np.ndarray  # cumulative weights / draws, aligned with values
    upper: np.ndarray  # cum plus two standard errors of the importance-sampling estimate

    def p(self, x: np.ndarray | float) -> np.ndarray:
        """Null probability of a value <= x; below every draw, the smallest draw's (a floor, not 0)."""
        i = np.searchsorted(self.values, x, side="right")
        return self.cum[np.maximum(i, 1) - 1]

    def p_upper(self, x: np.ndarray | float) -> np.ndarray:
        """The same, at the upper end of its 95 % interval: where few draws fell, the estimate is cautious."""
        i = np.searchsorted(self.values, x, side="right")
        return self.upper[np.maximum(i, 1) - 1]


def _weighted_cdf(values: np.ndarray, w: np.ndarray) -> _WeightedCdf:
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(w[order]) / w.size
    second = np.cumsum(w[order] ** 2) / w.size
    se = np.sqrt(np.maximum(second - cum**2, 0.0) / w.size)
    return _WeightedCdf(values[order], cum, cum + 2 * se)


def _ar1(e: np.ndarray, rho: float, start: np.ndarray) -> np.ndarray:
    """Stationary unit-variance AR(1) paths from innovations *e* (rows) and a N(0, 1) *start*."""
    x = np.empty_like(e)
    scale = math.sqrt(1 - rho * rho)
    prev = start
    for t in range(e.shape[1]):
        prev = rho * prev + scale * e[:, t]
        x[:, t] = prev
    return x


@dataclass(frozen=True)
class Null:
    margins: dict[int, _WeightedCdf]  # per window length k: the statistic
    smallest: _WeightedCdf  # the smallest marginal p over the windows tried


def _ar1_quad(y: np.ndarray, rho: float) -> np.ndarray:
    """y' Q y per row, Q the precision matrix of a stationary unit-variance AR(1) vector (tridiagonal)."""
    inner = (1 + rho * rho) * np.einsum("ij,ij->i", y, y) - rho * rho * (y[:, 0] ** 2 + y[:, -1] ** 2)
    return (inner - 2 * rho * np.einsum("ij,ij->i", y[:, :-1], y[:, 1:])) / (1 - rho * rho)


def _likeliest_drop(m: int, k: int, longest: int, rho: float) -> np.ndarray:
    """The most likely shape (under the AR(1) model) of a series whose newest k nights are each one unit
    below the mean of the nights before them: Sigma A' (A Sigma A')^-1 1, with A the k constraints."""
    n = m + longest
    idx = np.arange(n)
    sigma = rho ** np.abs(idx[:, None] - idx[None, :])
    a = np.zeros((k, n))
    a[:, : n - k] = -1.0 / (n - k)
    a[np.arange(k), n - k + np.arange(k)] += 1.0
    sa = sigma @ a.T
    return -(sa @ np.linalg.solve(a @ sa, np.ones(k)))


def _proposals(m: int, ks: tuple[int, ...], rho: float) -> list[tuple[float, np.ndarray]]:
    """The importance sampler's proposals (scale, shift): draws of the model scaled by *scale*, then
    lowered along the likeliest shape of a drop of each window; short baselines also get narrower draws
    (their small standard deviations are the other way to an extreme statistic)."""
    longest = max(ks)
    props = [(1.0, np.zeros(m + longest))]
    for k in ks:
        shape = _likeliest_drop(m, k, longest, rho)
        props += [(1.0, d * shape) for d in TILTS if d > 0]
        if m < 15:
            props += [(0.6, d * shape) for d in (1.5, 3.0, 4.5)]
    return props


NULL_ROWS = 2048  # the draws a null's statistics are computed for at once: their temporaries stay near 1 MB


def _in_rows(stat: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """*stat* (row-wise) of the rows of *x*, NULL_ROWS at a time: the same values as at once, without the
    temporaries of all of a null's draws in memory together (issue 46: a site of 200 series judged in under
    200 MB)."""
    return np.concatenate([stat(x[lo : lo + NULL_ROWS]) for lo in range(0, len(x), NULL_ROWS)])


def null(m: int, ks: tuple[int, ...], rho: float, draws: int = NULL_DRAWS) -> Null:
    """The importance-sampled null of the window test for *m* baseline nights before the longest window
    (*draws*: fewer for a plan's what-ifs, ``PLAN_DRAWS``), simulated once per process for each (m, ks, rho,
    draws) however the arguments are written."""
    return _simulated_null(int(m), tuple(ks), float(rho), int(draws))


@lru_cache(maxsize=1024)
def _simulated_null(m: int, ks: tuple[int, ...], rho: float, draws: int) -> Null:
    rng = np.random.default_rng(DEFAULT_SEED + 7919 * m + 104729 * sum(ks) + int(round(rho * 10)))
    longest = max(ks)
    n = m + longest
    props = _proposals(m, ks, rho)
    per = draws // len(props)
    draws = per * len(props)
    x = _ar1(rng.standard_normal((draws, n)), rho, rng.standard_normal(draws))
    for j, (scale, v) in enumerate(props):
        x[j * per : (j + 1) * per] = scale * x[j * per : (j + 1) * per] + v
    # log(proposal j / model) at each draw: q_j(x) = p((x - v) / scale) / scale^n
    base = _ar1_quad(x, rho) / 2
    log_ratio = np.stack(
        [
            base - _in_rows(lambda r, s=scale, v=v: _ar1_quad((r - v) / s, rho), x) / 2 - n * math.log(scale)
            for scale, v in props
        ],
        axis=1,
    )
    top = log_ratio.max(axis=1)
    w = 1.0 / (np.exp(log_ratio - top[:, None]).mean(axis=1) * np.exp(top))
    margins, ps = {}, []
    for k in ks:
        stat = np.nan_to_num(_in_rows(lambda r, c=n - k: least_change(r[:, :c], r[:, c:]), x), nan=np.inf)
        margins[k] = _weighted_cdf(stat, w)
        ps.append(margins[k].p(stat))
    return Null(margins, _weighted_cdf(np.min(ps, axis=0), w))


def pct_change(before: float, after: float) -> float:
    return 100.0 * (after - before) / abs(before) if before else math.nan


def _logs(x: np.ndarray) -> np.ndarray:
    return np.log(x) if np.all(x > 0) else x


def noise_model(baseline: np.ndarray, floor: float = 0.0) -> NoiseModel:
    """The noise of *baseline* (values); its spread at least *floor* (:func:`spread_floor`)."""
    y = _logs(np.asarray(baseline, dtype=float))
    mean, sd = segment_stats(y[None, :])
    return NoiseModel(y.size, float(mean[0]), max(float(sd[0]), floor), lag1_rho(y))


def spread_floor(baseline: np.ndarray, log_var: float | None) -> float:
    """The least spread of *baseline* (values) of a series whose log variance is *log_var* (its own over its
    nights shrunk toward its metric's, ``SpreadPrior.shrink``; None: none): :func:`least_spread`, 0 when there
    is none or the baseline does not vary or is not positive (judged as without the suite)."""
    x = np.asarray(baseline, dtype=float)
    if log_var is None or not np.all(x > 0) or np.ptp(x) == 0:
        return 0.0
    return least_spread(log_var, x.size)


def marginal_ps(y: np.ndarray, m: int, ks: tuple[int, ...], rho: float, floor: float = 0.0) -> np.ndarray:
    """One-sided p of each window and direction for each row of log values *y* (shape (r, m + max(ks))):
    shape (r, len(ks), 2), direction 0 a drop, 1 a rise. *floor*: the least baseline standard deviation
    (``least_change``; the null is that of the baseline's own, which a wider one only makes cautious)."""
    nl = null(m, ks, rho)
    n = y.shape[1]
    out = np.empty((y.shape[0], len(ks), 2))
    for i, k in enumerate(ks):
        mean, sd = segment_stats(y[:, : n - k])  # the baseline's: the rise's is the same, its mean negated
        for j, sign in enumerate((1.0, -1.0)):
            stat = _least_change(sign * mean, sd, sign * y[:, n - k :], floor)
            out[:, i, j] = np.where(np.isnan(stat), 1.0, nl.margins[k].p(np.nan_to_num(stat, nan=0.0)))
    return out


def combined_p(smallest: np.ndarray | float, m: int, ks: tuple[int, ...], rho: float) -> np.ndarray:
    """Two-sided p of the smallest marginal p over the windows tried (both directions)."""
    return np.minimum(1.0, 2 * null(m, ks, rho).smallest.p_upper(smallest))


def window_test(
    segment: np.ndarray,
    fresh: np.ndarray,
    ks: tuple[int, ...],
    min_effect_pct: float,
    rho: float | None = None,
    spread: float = 0.0,
) -> tuple[float, Window | None]:
    """Two-sided p of the newest nights *fresh* (the last max(ks)) against *segment* (the nights before
    them), and the window (k nights, direction) that gave it; (1.0, None) when no window shows a change of
    at least *min_effect_pct* %. The p is the null probability of a smallest marginal p as small as the
    observed one, doubled for the two directions. *rho*: the noise model's correlation (default: the
    segment's own, :func:`lag1_rho`); *spread*: the least standard deviation of the segment's logs
    (``spread_floor``; default 0: each baseline its own)."""
    x = np.concatenate([segment, fresh]).astype(float)
    y = _logs(x)
    n, m = y.size, segment.size
    if rho is None:
        rho = lag1_rho(y[:m])
    ps = marginal_ps(y[None, :], m, ks, rho, spread)[0]
    found: list[Window] = []
    for i, k in enumerate(ks):
        before, after = float(np.median(x[: n - k])), float(np.median(x[n - k :]))
        pct = pct_change(before, after)
        nights = np.array([pct_change(before, float(v)) for v in x[n - k :]])
        for j, sign in enumerate((1.0, -1.0)):  # 1: the nights went down; -1: up
            # the window's median moved min_effect, and each of its nights is off by more than RECOVERED of it
            # (a night back within that is no change, as for recovery: it cannot confirm one; a normal night
            # beside the first changed one had dated a change a night early, flagged a night early)
            if sign * pct <= -min_effect_pct and np.all(sign * nights < -RECOVERED * min_effect_pct):
                found.append(Window(k, float(ps[i, j]), before, after, pct))
    if not found:
        return 1.0, None
    smallest = min(w.p for w in found)
    # the longest window about as strong as the strongest: the change began at its first night
    best = max((w for w in found if w.p <= max(1.5 * smallest, 1e-12)), key=lambda w: w.k)
    return float(combined_p(smallest, m, ks, rho)), best


def detectable_pct(model: NoiseModel, ks: tuple[int, ...], level: float, draws: int = NULL_DRAWS) -> float:
    """The smallest change (in %, as a drop) that a full window of max(ks) nights must show to reach a
    two-sided p below *level* against this baseline: every night of the window that far off, no noise."""
    return 100.0 * -math.expm1(_threshold(model.nights, ks, model.rho, level, draws) * model.spread)


@lru_cache(maxsize=1024)
def _threshold(m: int, ks: tuple[int, ...], rho: float, level: float, draws: int) -> float:
    """The statistic (baseline standard deviations, a drop) at which a full window of max(ks) nights
    reaches a two-sided p of *level* after *m* baseline nights: by bisection on the combined p (the same
    for every series of that length and correlation: worked out once)."""
    nl = null(m, ks, rho, draws)
    lo, hi = -80.0, 0.0
    for _ in range(40):
        mid = (lo + hi) / 2
        p = float(np.minimum(1.0, 2 * nl.smallest.p_upper(nl.margins[max(ks)].p(mid))))
        lo, hi = (mid, hi) if p < level else (lo, mid)
    return hi


# --- what would detect a change: more nights, more repetitions a night --------------------------------------

# the night's value is the median of its repetitions: of r independent Gaussian repetitions its standard
# deviation is about 1.25 sigma / sqrt(r) (sqrt(pi / 2), already 1.16 at r = 3), of 2 their mean's, sigma /
# sqrt(2). Only the repetitions' own variance falls so: a slow host night is not averaged away by repeating
# on it. Once a history holds nights of several repetitions, their ranges measure the repetitions' own
# variance and the rest of the night-to-night spread is the night's own (night_share); before that, the
# model takes all of it as the repetitions' own, the optimistic end (a quiet `quick` history of 12 nights of
# 2 repetitions on a 2-core host: 80-90 % of most run series' night-to-night variance was the night's own).
MEDIAN_FACTOR = 1.25
MAX_REPETITIONS = 25  # beyond this a plan says "not with repetitions"
# a plan's what-if baselines are simulated with fewer draws (a fifth: about 0.3 s each on a loaded 2-core
# host); the detectable change they give moves by a few tenths of a percent point
PLAN_DRAWS = NULL_DRAWS // 5


def median_noise(r: int) -> float:
    """The standard deviation of the median of *r* repetitions, in units of one repetition's."""
    if r <= 1:
        return 1.0
    return 1 / math.sqrt(2) if r == 2 else MEDIAN_FACTOR / math.sqrt(r)


def spread_ratio(detectable: float, target_pct: float) -> float:
    """By how much the noise must shrink (a factor <= 1) for a series that detects *detectable* % to detect
    *target_pct* %: the detectable change is 1 - exp(h * spread) with h set by the baseline's length, the
    windows and the correlation alone (:func:`detectable_pct`)."""
    if not (detectable == detectable and 0 < target_pct < 100) or detectable <= target_pct:
        return 1.0
    if detectable >= 100:
        return 0.0
    return math.log1p(-target_pct / 100) / math.log1p(-detectable / 100)


def repetitions_needed(now: int, ratio: float, shared: float = 0.0) -> int | None:
    """The fewest repetitions a night whose median's noise is at most *ratio* times that of the median of
    *now* repetitions (:func:`median_noise`), when a share *shared* of that variance is the night's own
    (:func:`night_share`: repeating on the same night does not average it away; 0, the optimistic end,
    when unmeasured); None beyond MAX_REPETITIONS."""
    now = max(1, now)
    for r in range(now, MAX_REPETITIONS + 1):
        left = shared + (1 - shared) * (median_noise(r) / median_noise(now)) ** 2
        if math.sqrt(left) <= ratio + 1e-12:
            return r
    return None


# E[R^2] / sigma^2 for the range R of n independent Gaussian draws (d2(n)^2 + d3(n)^2, the control-chart
# constants: 2 for two draws, whose range squared over 2 is their sample variance): a night's squared range of
# repetitions over it estimates one repetition's variance without bias
RANGE_SQUARED = {2: 2.0, 3: 3.655, 4: 5.013, 5: 6.157, 6: 7.140, 7: 8.006, 8: 8.778, 9: 9.474, 10: 10.109}
MIN_REPEATED_NIGHTS = 3  # nights of 2 or more repetitions before the night's own share is measured


def repetition_var(low: np.ndarray, high: np.ndarray, n: np.ndarray) -> float | None:
    """One repetition's variance within a night (log values): the mean over the nights of 2 to 10
    repetitions of ln(high / low)^2 / RANGE_SQUARED[n]; None with fewer than MIN_REPEATED_NIGHTS such nights
    (or a value that is not positive)."""
    low, high, n = (np.asarray(a, float) for a in (low, high, n))
    ok = (
        (n >= 2)
        & (n <= max(RANGE_SQUARED))
        & (low > 0)
        & (high >= low)
        & np.isfinite(low)
        & np.isfinite(high)
    )
    if ok.sum() < MIN_REPEATED_NIGHTS:
        return None
    c = np.array([RANGE_SQUARED[int(k)] for k in n[ok]])
    return float(np.mean(np.log(high[ok] / low[ok]) ** 2 / c))


def night_share(night_var: float, rep_var: float | None, now: int) -> float:
    """The share of a night's value's variance (*night_var*, the night-to-night spread squared, log values)
    that is the night's own (the host's state, the server's start): what the median of *now* repetitions
    of variance *rep_var* does not explain; 0 when the repetitions' variance is unmeasured (None)."""
    if rep_var is None or not night_var > 0:
        return 0.0
    return float(min(1.0, max(0.0, 1.0 - rep_var * median_noise(now) ** 2 / night_var)))


def baseline_lengths(now: int, most: int) -> list[int]:
    """The baseline lengths ``regress`` uses beyond *now* nights, up to *most* (``changepoint``'s cut:
    every length to 10, then multiples of 5 to 30, then of 10)."""
    every = [*range(now + 1, 11), *range(15, 31, 5), *range(40, most + 1, 10)]
    return sorted({m for m in every if now < m <= most})


def nights_needed(
    model: NoiseModel, ks: tuple[int, ...], level: float, target_pct: float, most: int
) -> int | None:
    """How many more baseline nights at today's noise (its spread and correlation) let a full window show a
    change of *target_pct* % at *level* (:func:`detectable_pct`): 0 when it already does, None when even
    *most* nights do not. Bisection over the lengths ``regress`` uses (a null simulated per length tried)."""
    if detectable_pct(model, ks, level, PLAN_DRAWS) <= target_pct:
        return 0
    lengths = baseline_lengths(model.nights, most)

    def enough(m: int) -> bool:
        grown = NoiseModel(m, model.level, model.spread, model.rho)
        return detectable_pct(grown, ks, level, PLAN_DRAWS) <= target_pct

    if not lengths or not enough(lengths[-1]):
        return None
    lo, hi = 0, len(lengths) - 1  # lengths[hi] is enough
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(lengths[mid]) else (mid + 1, hi)
    return lengths[hi] - model.nights
