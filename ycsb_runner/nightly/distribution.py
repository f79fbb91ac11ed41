"""``latency_distribution``: one test per step and operation of tonight's whole latency distribution.

The history keeps, per step cell and operation, the quantiles of each night's latency histogram (p50, p95,
p99, p99.9 and max, from the run folder's HDR histograms via operations.csv). A night is the vector of
their logarithms. The tested nights (the newest ``--confirm``) are compared with the baseline nights (the
ones before the newest ``--window``, at most ``MAX_BASELINE``) quantile by quantile: the shift of the mean
log-quantile, standardised by the baseline nights' own spread of that quantile (their night-to-night
standard deviation) and the exact variance of that contrast under AR(1) noise of the nights' correlation
(pooled over the quantiles, ``shift``), a two-sided t test on the baseline's degrees of freedom. The
series' p-value is the smallest quantile's, Bonferroni over the quantiles (valid whatever their
dependence), and its change the shift of the quantile that moved most (largest standardised shift):
"p99.9 moved most: x2.00". So a p99.9 or max that doubles under a flat p99 is one series of the step's
family, corrected with the others (``regress._correct``), and named by the quantile that moved.

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

from ycsb_runner.metrics import DISTRIBUTION_METRICS
from ycsb_runner.nightly.changepoint import MAX_BASELINE, MIN_BASELINE, RECOVERED
from ycsb_runner.nightly.series import SERIES_KEYS, SeriesNights

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


def shift(logq: np.ndarray, names: list[str], *, window: int, confirm: int, alpha: float) -> Shift | None:
    """The test of *logq* (nights x quantiles, oldest first, log values; *names* its quantiles' metrics):
    the newest *confirm* nights against the nights before the newest *window*. None when the baseline has
    fewer than MIN_BASELINE nights.

    Per quantile, the shift of the tested nights' mean log value from the baseline's, over its standard
    error under AR(1) noise of the pooled correlation (``lag1_pooled``), computed exactly for these nights:
    the contrast's variance w'Rw (w: 1/k on the k tested nights, -1/n on the n baseline nights, 0 on the
    nights between) in units of the quantile's night-to-night variance, itself estimated without the bias
    of the baseline's own mean (sum of squares / (n - 1'R1/n)). The large-sample inflation (1 + phi) /
    (1 - phi) it replaces overstated the variance of a mean of 2 nights, (1 + phi) / 2, by 1 / (1 - phi):
    at phi 0.3 a doubled p99.9 at 15 % spread showed z 4.6 where the noise allows 5.4
    (bench/tail_bench.py)."""
    n_nights = logq.shape[0]
    end = n_nights - window
    start = max(0, end - MAX_BASELINE)
    if end - start < MIN_BASELINE or not names:
        return None
    base, tested = logq[start:end], logq[n_nights - confirm :]
    n, k = base.shape[0], tested.shape[0]
    mean = base.mean(axis=0)
    centred = base - mean
    phi = lag1_pooled(centred)
    r = _ar1(phi, n_nights - start)
    w = np.zeros(n_nights - start)
    w[:n], w[-k:] = -1.0 / n, 1.0 / k
    mean_var = float(r[:n, :n].sum()) / n  # n Var(baseline mean) / sigma^2: 1 for independent nights
    var = (centred**2).sum(axis=0) / max(n - mean_var, 1.0)
    se = np.sqrt(var * float(w @ r @ w))
    diff = tested.mean(axis=0) - mean
    floor = 1e-9  # a quantile flat on every baseline night: any move is huge, none is nothing
    z = diff / np.maximum(se, floor)
    q = len(names)
    p = float(min(1.0, q * 2 * special.stdtr(n - 1, -np.abs(z).max())))
    most = int(np.argmax(np.abs(z)))
    crit = -special.stdtrit(n - 1, alpha / (2 * q))  # t.isf
    return Shift(
        p_value=p,
        quantile=names[most],
        change_pct=100.0 * math.expm1(float(diff[most])),
        z=float(z[most]),
        detectable_pct=100.0 * math.expm1(float(crit * se.min())),
        baseline=(start, end),
        moves={name: 100.0 * math.expm1(float(d)) for name, d in zip(names, diff, strict=True)},
    )


def open_shift(
    logq: np.ndarray, names: list[str], *, window: int, confirm: int, alpha: float, min_effect_pct: float
) -> tuple[int, Shift] | None:
    """The earliest shift toward worse (a slower quantile) that the test flagged on an earlier night and that
    has not recovered since, as (the number of nights that night saw, the test then); None when there is
    none. Flagged: p below *alpha* (``regress`` gives the strictest threshold of its correction, as for a
    scalar series' open regression) and the quantile that moved most at least *min_effect_pct* % slower.
    Recovered: on some night since, the median of the newest *window* nights of that quantile was back
    within ``changepoint.RECOVERED`` of *min_effect_pct* % of its baseline then (closed for good: a later
    move is a new one for tonight's test). So a lasting change of the distribution stays flagged, as a
    scalar series' sustained slowdown does, until it recovers or someone accepts it (the history from an
    accepted change on is all *logq* holds)."""
    n = logq.shape[0]
    if n <= MIN_BASELINE + window:
        return None
    cum = np.vstack([np.zeros(logq.shape[1]), np.cumsum(logq, axis=0)])
    medians = np.median(np.lib.stride_tricks.sliding_window_view(logq, window, axis=0), axis=-1)
    moved, kept = math.log1p(min_effect_pct / 100), math.log1p(RECOVERED * min_effect_pct / 100)
    for e in range(MIN_BASELINE + window, n):  # the test as night e - 1 ran it, on nights [0, e)
        end = e - window
        start = max(0, end - MAX_BASELINE)
        base = (cum[end] - cum[start]) / (end - start)
        since = medians[e - window + 1 :].min(axis=0)  # the windows ending on the nights after it
        candidate = ((cum[e] - cum[e - confirm]) / confirm - base >= moved) & (since - base >= kept)
        if not candidate.any():
            continue  # (cheap: most nights are not the start of anything)
        s = shift(logq[:e], names, window=window, confirm=confirm, alpha=alpha)
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
    m = metrics[metrics["metric"].isin(QUANTILES) & metrics["run_id"].isin(order)]
    if m.empty:
        return [], {}
    nightly = m.groupby([*OPERATION_KEYS, "metric", "run_id"], dropna=False)["value"].median().reset_index()
    rows: list[dict[str, Any]] = []
    values: dict[tuple, SeriesNights] = {}
    for key, part in nightly.groupby(OPERATION_KEYS, dropna=False, sort=True):
        wide = part.pivot(index="run_id", columns="metric", values="value")
        wide = wide[[q for q in QUANTILES if q in wide.columns]].dropna()
        wide = wide[(wide > 0).all(axis=1)]
        wide = wide.loc[sorted(wide.index, key=order.__getitem__)]
        if wide.shape[1] < 2 or wide.empty or wide.index[-1] != newest_id:
            continue
        runs = [str(r) for r in wide.index]
        skey = (*key, DISTRIBUTION)
        row: dict[str, Any] = dict(zip(SERIES_KEYS, skey, strict=True))
        start = start_of(skey, runs)
        logq = np.log(wide.to_numpy(float)[start:])
        names = list(wide.columns)
        s = shift(logq, names, window=window, confirm=confirm, alpha=alpha)
        if s is None:
            if start:  # an accepted change too recent: its row says so (regress holds it as accepted)
                row.update(nights=len(runs), _runs=runs, _open=False, verdict="untested", test="none")
                row["note"] = "too few nights since the accepted change to test the distribution"
                rows.append(row)
                values[skey] = _nights(runs, wide[wide.columns[-1]].to_numpy(float))
            continue
        found = None
        if open_alpha is not None:
            found = open_shift(
                logq, names, window=window, confirm=confirm, alpha=open_alpha, min_effect_pct=min_effect_pct
            )
        if found is not None:
            seen, s = found
            x = logq[:seen, names.index(s.quantile)]
            began = start + _began(x, s, 0, window, confirm)
        else:
            seen = logq.shape[0]
            began = start + _began(logq[:, names.index(s.quantile)], s, 0, window, confirm)
        if found is None and confirm > 1 and s.p_value < alpha and began > len(runs) - confirm:
            # its newest night alone moved: one night does not confirm a change (--confirm), tomorrow tells
            row.update(nights=len(runs), _runs=runs, _open=False, verdict="untested", test="none")
            row["note"] = f"moved on its newest night only: {confirm} nights confirm a change (--confirm)"
            rows.append(row)
            values[skey] = _nights(runs, wide[s.quantile].to_numpy(float))
            continue
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
            noise="baseline quantiles",
        )
        if found is not None:  # as the scalar series' open regression: tonight's nights against the flag's
            after = float(np.exp(np.median(tail[-window:])))
            row.update(
                after_median=after,
                change_pct=100.0 * (after / before - 1),
                test=f"open since night {began + 1}",
                note=f"flagged on night {start + seen} ({flagged.note}), not recovered",
            )
        rows.append(row)
        v = _nights(runs, wide[s.quantile].to_numpy(float))
        v.change_index, v.baseline = began, s.baseline
        v.noise_source = f"the baseline nights' spread of each quantile ({s.quantile} shown)"
        values[skey] = v
    return rows, values


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
    half = math.log1p(s.change_pct / 100) / 2
    n = len(x)
    first = n - confirm
    for i in range(n - 1, max(n - window, s.baseline[1] - start) - 1, -1):
        if ((x[i] - base - half) * half) > 0:
            first = i
        else:
            break
    return start + first
