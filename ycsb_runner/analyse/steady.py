"""Steady state of a run step: where its warm-up ends, and whether what follows is stationary.

**Warm-up end (MSER).** The series is the step's throughput per status interval, from its HDR interval
logs (each value is already the mean over one interval, i.e. a batch mean, so no further batching: MSER
with batch size 1). For every truncation ``d`` in ``0 .. n // 2`` MSER's statistic is the variance of the
values kept over their number, ``var(y[d:]) / (n - d)``; its minimum trades the bias of keeping the ramp
against the noise of keeping fewer values. Past the warm-up the statistic is flat within its own sampling
noise, and the raw minimum then lands anywhere in that flat part (it over-truncates); so the cut is the
*first* ``d`` whose statistic is within one standard error of the minimum (a variance's relative standard
error, ``sqrt(2 / (n - d_min - 1))``), the one-standard-error rule of model selection. A minimum at
``n // 2`` says the run never settled (no steady state found). A suite's fixed ``warmup_s`` wins over the
rule. The tolerance is relative to the kept window's variance: a stall inside the window raises it so much
that a short ramp before it may be kept (the step is flagged for the stall anyway). With 1 % noise a ramp
of 20 intervals is cut within 2 intervals of its end; the noisier the series, the earlier the cut (at 5 %
noise about 4 intervals early: the last part of the ramp is within the noise).

**Stationarity.** Over the kept intervals: the least-squares slope of throughput against time, in % of
the window's mean per minute (stored; said as the change over the window it was measured on, never
extrapolated: ``describe``), with a 95 % interval whose standard error is widened for the residuals'
lag-1 autocorrelation (effective sample size ``n (1 - r) / (1 + r)``); and the coefficient of variation
of the intervals. A step is *not stationary* when the slope's interval excludes 0 and the fitted change
over the window is at least ``DRIFT_MIN_PCT`` of the mean (a drift; judged only over
``MIN_STEADY_INTERVALS`` intervals or more, fewer are "too short to judge"), or when throughput stayed below
``STALL_SHARE`` of the median for ``STALL_MIN_INTERVALS`` intervals or more in a row (a stall).

Pure functions of arrays; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ycsb_runner.analyse import MIN_STEADY_INTERVALS

DRIFT_MIN_PCT = 5.0  # fitted change over the steady window, % of its mean, that counts as a drift
STALL_SHARE = 0.10  # an interval below 10 % of the median throughput is stalled
STALL_MIN_INTERVALS = 2  # consecutive stalled intervals that make a stall
WARMUP_RULE = "MSER (batch 1, first truncation within one standard error of the minimum)"


@dataclass(frozen=True)
class Cut:
    """Where the warm-up ends: drop the first ``intervals`` values; ``settled`` False when the rule's
    minimum is at half the series (the run never reached a steady state)."""

    intervals: int
    settled: bool


def mser_cut(values: np.ndarray | list[float]) -> Cut:
    """The warm-up truncation of *values* (see the module's doc). Fewer than 4 values: no cut. Pure."""
    y = np.asarray(values, dtype="float64")
    n = y.size
    if n < 4:
        return Cut(0, True)
    ds = np.arange(0, n // 2 + 1)
    stat = np.array([y[d:].var() / (n - d) for d in ds])
    best = int(stat.argmin())
    tol = math.sqrt(2.0 / max(n - best - 1, 1))
    first = int(np.flatnonzero(stat <= stat[best] * (1.0 + tol) + 1e-300)[0])
    return Cut(first, settled=best < n // 2 or n // 2 == 0)


@dataclass(frozen=True)
class Stationarity:
    """The trend test and spread of a steady-state window of *n* intervals."""

    n: int
    window_s: float
    mean_ops_s: float
    cv: float
    slope_pct_per_min: float
    slope_low_pct_per_min: float
    slope_high_pct_per_min: float
    stall_s: float  # the longest stall (0: none)
    stall_at_s: float  # its start, seconds from the window's start
    drift: bool
    stall: bool

    @property
    def stationary(self) -> bool:
        return not (self.drift or self.stall)

    @property
    def judged(self) -> bool:
        """Enough intervals for the trend test (``MIN_STEADY_INTERVALS``); fewer: "too short to judge"."""
        return self.n >= MIN_STEADY_INTERVALS

    def window_change_pct(self) -> tuple[float, float, float]:
        """The fitted change over the window it was measured on, % of its mean, with its 95 % interval: the
        slope times the window, never extrapolated beyond it."""
        per = self.window_s / 60.0
        return (
            self.slope_pct_per_min * per,
            self.slope_low_pct_per_min * per,
            self.slope_high_pct_per_min * per,
        )

    def describe(self) -> str:
        """One line for a step's warnings ("" when stationary): the trend over the window it was measured
        on ("+75 % over the last 15 s"), never a rate per minute of a shorter window."""
        parts = []
        if self.drift:
            way = "falling" if self.slope_pct_per_min < 0 else "rising"
            change, low, high = self.window_change_pct()
            parts.append(
                f"throughput still {way}: {change:+.0f} % over the last {self.window_s:.0f} s "
                f"(95 % interval {low:+.0f} to {high:+.0f} %)"
            )
        if self.stall:
            parts.append(
                f"throughput stalled below {STALL_SHARE:.0%} of its median for {self.stall_s:.0f} s, "
                f"{self.stall_at_s:.0f} s into the steady-state window"
            )
        return ("not stationary: " + "; ".join(parts)) if parts else ""

    def figures(self, prefix: str = "steady_") -> dict[str, float | bool | None]:
        return {
            f"{prefix}intervals": self.n,
            f"{prefix}cv": self.cv,
            f"{prefix}slope_pct_per_min": self.slope_pct_per_min,
            f"{prefix}slope_low_pct_per_min": self.slope_low_pct_per_min,
            f"{prefix}slope_high_pct_per_min": self.slope_high_pct_per_min,
            f"{prefix}stall_s": self.stall_s,
            # too few intervals and no stall: not "stationary", but "cannot tell" (None)
            "stationary": None if not self.judged and self.stationary else self.stationary,
        }


def _t_quantile(df: float) -> float:
    """The 97.5 % quantile of Student's t (scipy, imported here: only bench pays for it)."""
    from ycsb_runner.analyse.stats import scipy_stats

    return float(scipy_stats().t.ppf(0.975, max(df, 1.0)))


def _longest_run(mask: np.ndarray) -> tuple[int, int]:
    """(length, start index) of the longest run of True in *mask*."""
    best, best_at, run = 0, 0, 0
    for i, m in enumerate(mask):
        run = run + 1 if m else 0
        if run > best:
            best, best_at = run, i - run + 1
    return best, best_at


def stationarity(
    mid_s: np.ndarray, throughput: np.ndarray, length_s: np.ndarray | None = None
) -> Stationarity:
    """The trend and stall test over a steady-state window (interval midpoints in s, ops/s). Pure."""
    t = np.asarray(mid_s, dtype="float64")
    y = np.asarray(throughput, dtype="float64")
    lengths = np.asarray(length_s, dtype="float64") if length_s is not None else None
    n = y.size
    mean = float(y.mean()) if n else float("nan")
    window = float(t[-1] - t[0]) if n > 1 else 0.0
    if lengths is not None and n:
        window = float((t[-1] + lengths[-1] / 2) - (t[0] - lengths[0] / 2))
    cv = float(y.std(ddof=1) / mean) if n > 1 and mean > 0 else float("nan")
    nan = float("nan")
    slope = low = high = nan
    drift = False
    if n >= 4 and mean > 0 and float(np.ptp(t)) > 0:
        tc = t - t.mean()
        sxx = float(tc @ tc)
        b = float(tc @ (y - mean)) / sxx
        resid = y - mean - b * tc
        d = resid - resid.mean()
        denom = float(d @ d)
        r = float(d[:-1] @ d[1:]) / denom if denom > 0 else 0.0
        r = min(max(r, 0.0), 0.9)
        n_eff = max(n * (1 - r) / (1 + r), 3.0)
        s2 = denom / max(n - 2, 1)
        se = math.sqrt(s2 / sxx) * math.sqrt(n / n_eff)
        half = _t_quantile(n_eff - 2) * se
        scale = 60.0 * 100.0 / mean
        slope, low, high = b * scale, (b - half) * scale, (b + half) * scale
        change_pct = abs(b) * float(np.ptp(t)) * 100.0 / mean
        # a trend is judged only over enough intervals: fewer are "too short to judge", never a drift
        drift = (low > 0 or high < 0) and change_pct >= DRIFT_MIN_PCT and n >= MIN_STEADY_INTERVALS
    stall_n, stall_at = _longest_run(y < STALL_SHARE * float(np.median(y))) if n else (0, 0)
    stall = stall_n >= STALL_MIN_INTERVALS
    step = float(np.median(lengths)) if lengths is not None and n else (window / max(n - 1, 1))
    return Stationarity(
        n=n,
        window_s=window,
        mean_ops_s=mean,
        cv=cv,
        slope_pct_per_min=slope,
        slope_low_pct_per_min=low,
        slope_high_pct_per_min=high,
        stall_s=float(stall_n * step) if stall else 0.0,
        stall_at_s=float(t[stall_at] - t[0]) if stall else 0.0,
        drift=bool(drift),
        stall=bool(stall),
    )


# --- a step's HDR interval logs ---------------------------------------------------------------------------


@dataclass
class SteadyState:
    """A step's warm-up cut and stationarity, per client (one client: ``local``)."""

    rule: str  # "warmup_s" (the suite's fixed figure) or "MSER"
    warmup_s: dict[str, float]  # seconds cut from each client's own first interval
    settled: dict[str, bool]
    tests: dict[str, Stationarity]
    kept: dict[str, list]  # client -> its HdrLogs without the warm-up

    def warnings(self) -> list[str]:
        many = len(self.tests) > 1
        out = []
        for client, test in self.tests.items():
            who = f"client {client}: " if many else ""
            if not self.settled.get(client, True):
                out.append(
                    f"{who}no steady state found: the warm-up rule ({self.rule}) cut half the run; "
                    "throughput was still changing"
                )
            if not test.judged:
                out.append(
                    f"{who}only {test.n} intervals after the warm-up: too short to judge stationarity "
                    "(a longer run or a shorter status_interval)"
                )
            if not test.stationary:
                out.append(who + test.describe())
        return out

    @property
    def stationary(self) -> bool:
        return all(t.stationary for t in self.tests.values())

    def figures(self) -> dict[str, object]:
        """Step figures (steps.csv): the rule, the cut, and the stationarity of the first failing client's
        window, else of the shortest (too few intervals in any: ``stationary`` empty, "cannot tell")."""
        if not self.tests:
            return {}
        shortest = min(self.tests.values(), key=lambda t: t.n)
        worst = next((t for t in self.tests.values() if not t.stationary), shortest)
        return {
            "warmup_rule": self.rule,
            "warmup_end_s": max(self.warmup_s.values(), default=0.0),
            **worst.figures(),
        }


def steady_state(logs: dict, fixed_warmup_s: float = 0.0) -> SteadyState:
    """Each client's warm-up cut (the fixed *fixed_warmup_s* when > 0, else MSER on its throughput per
    interval) and the stationarity of what is left. Intervals shorter than half the median (YCSB's last,
    cut-off one) count in the kept operations but not in the rule or the tests. Pure."""
    from ycsb_runner.parse.merge import drop_warmup, interval_series

    rule = "warmup_s" if fixed_warmup_s > 0 else "MSER"
    cuts: dict[str, float] = {}
    settled: dict[str, bool] = {}
    tests: dict[str, Stationarity] = {}
    for client, ls in logs.items():
        series = interval_series(ls)
        if series.ops.size == 0:
            continue
        full = series.length_s >= 0.5 * float(np.median(series.length_s))
        starts = series.start_s[full]
        if fixed_warmup_s > 0:
            cut_s, ok = float(fixed_warmup_s), True
        else:
            cut = mser_cut(series.throughput[full])
            cut_s, ok = float(starts[cut.intervals] - series.start_s[0]), cut.settled
        cuts[client], settled[client] = cut_s, ok
        keep = full & (series.start_s >= series.start_s[0] + cut_s - 1e-9)
        tests[client] = stationarity(series.mid_s[keep], series.throughput[keep], series.length_s[keep])
    return SteadyState(rule, cuts, settled, tests, drop_warmup(logs, cuts))
