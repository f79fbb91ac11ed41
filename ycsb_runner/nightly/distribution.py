"""``latency_distribution``: one test per step and operation of tonight's whole latency distribution.

The history keeps, per step cell and operation, the quantiles of each night's latency histogram (p50, p95,
p99, p99.9 and max, from the run folder's HDR histograms via operations.csv). A night is the vector of
their logarithms. The tested nights (the newest ``--confirm``) are compared with the baseline nights (the
ones before the newest ``--window``, at most ``MAX_BASELINE``) quantile by quantile: the shift of the mean
log-quantile, standardised by the baseline nights' own spread of that quantile (their night-to-night
standard deviation, inflated for their lag-1 correlation), a two-sided t test on the baseline's degrees of
freedom. The series' p-value is the smallest quantile's, Bonferroni over the quantiles (valid whatever
their dependence), and its change the shift of the quantile that moved most (largest standardised shift):
"p99.9 moved most: x2.00". So a p99.9 or max that doubles under a flat p99 is one series of the step's
family, corrected with the others (``regress._correct``), and named by the quantile that moved.

Pure over frames; ``regress`` adds its rows when ``latency_distribution`` is among ``--metric``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special  # the t distribution of scipy.stats, without its 50 MB import

from ycsb_runner.metrics import DISTRIBUTION_METRICS
from ycsb_runner.nightly.changepoint import MAX_BASELINE, MIN_BASELINE
from ycsb_runner.nightly.series import SERIES_KEYS

DISTRIBUTION = next(iter(DISTRIBUTION_METRICS))  # latency_distribution
QUANTILES = {"p50_us": "p50", "p95_us": "p95", "p99_us": "p99", "p999_us": "p99.9", "max_us": "max"}
OPERATION_KEYS = SERIES_KEYS[:-1]  # a step cell and an operation: one distribution series
MAX_PHI = 0.8  # the lag-1 correlation the baseline's spread is inflated for, at most


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


def shift(logq: np.ndarray, names: list[str], *, window: int, confirm: int, alpha: float) -> Shift | None:
    """The test of *logq* (nights x quantiles, oldest first, log values; *names* its quantiles' metrics):
    the newest *confirm* nights against the nights before the newest *window*. None when the baseline has
    fewer than MIN_BASELINE nights."""
    n_nights = logq.shape[0]
    end = n_nights - window
    start = max(0, end - MAX_BASELINE)
    if end - start < MIN_BASELINE or not names:
        return None
    base, tested = logq[start:end], logq[n_nights - confirm :]
    n, k = base.shape[0], tested.shape[0]
    mean = base.mean(axis=0)
    sd = base.std(axis=0, ddof=1)
    centred = base - mean
    den = (centred**2).sum(axis=0)
    phi = np.where(den > 0, (centred[1:] * centred[:-1]).sum(axis=0) / np.where(den > 0, den, 1), 0.0)
    phi = np.clip(phi, 0.0, MAX_PHI)
    se = sd * np.sqrt((1 + phi) / (1 - phi) * (1 / k + 1 / n))
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


def distribution_rows(
    metrics: pd.DataFrame,
    order: dict[str, int],
    newest_id: str,
    *,
    window: int,
    confirm: int,
    alpha: float,
    start_of: Callable[[tuple, list[str]], int] = lambda key, runs: 0,
) -> tuple[list[dict[str, Any]], dict[tuple, pd.DataFrame]]:
    """One regress row per step cell and operation measured in the newest run with at least two quantiles
    on every night (*metrics*: the history's finite metric rows of the runs in *order*), and its nights for
    the report (the values of the quantile that moved most). *start_of* (series keys, its runs): the first
    night its baseline may use (an accepted change's); a series whose baseline after it is too short has an
    ``untested`` row."""
    m = metrics[metrics["metric"].isin(QUANTILES) & metrics["run_id"].isin(order)]
    if m.empty:
        return [], {}
    nightly = m.groupby([*OPERATION_KEYS, "metric", "run_id"], dropna=False)["value"].median().reset_index()
    rows: list[dict[str, Any]] = []
    values: dict[tuple, pd.DataFrame] = {}
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
        s = shift(logq, list(wide.columns), window=window, confirm=confirm, alpha=alpha)
        if s is None:
            if start:  # an accepted change too recent: its row says so (regress holds it as accepted)
                row.update(nights=len(runs), _runs=runs, _open=False, verdict="untested", test="none")
                row["note"] = "too few nights since the accepted change to test the distribution"
                rows.append(row)
                values[skey] = _nights(runs, wide[wide.columns[-1]].to_numpy(float))
            continue
        s = Shift(**{**s.__dict__, "baseline": (s.baseline[0] + start, s.baseline[1] + start)})
        before = float(np.exp(np.log(wide[s.quantile].iloc[s.baseline[0] : s.baseline[1]]).mean()))
        after = float(np.exp(np.log(wide[s.quantile].iloc[-confirm:]).mean()))
        row.update(
            nights=len(runs),
            _runs=runs,
            _open=False,
            verdict="",
            before_median=before,
            after_median=after,
            change_pct=s.change_pct,
            p_value=s.p_value,
            test="distribution",
            note=s.note,
            detectable_pct=s.detectable_pct,
            window_nights=confirm,
            change_run=runs[_began(logq[:, list(wide.columns).index(s.quantile)], s, start, window, confirm)],
            baseline_from=runs[s.baseline[0]],
            baseline_nights=s.baseline[1] - s.baseline[0],
            noise="baseline quantiles",
        )
        rows.append(row)
        v = _nights(runs, wide[s.quantile].to_numpy(float))
        v.attrs.update(
            change_points=[],
            change_index=runs.index(row["change_run"]),
            baseline=s.baseline,
            noise_source=f"the baseline nights' spread of each quantile ({s.quantile} shown)",
        )
        values[skey] = v
    return rows, values


def _nights(runs: list[str], value: np.ndarray) -> pd.DataFrame:
    """A distribution series' nights for the report: one quantile's value a night."""
    v = pd.DataFrame({"run_id": runs, "value": value})
    v["low"], v["high"], v["n"] = v["value"], v["value"], 1
    return v


def _began(x: np.ndarray, s: Shift, start: int, window: int, confirm: int) -> int:
    """The night the shift began (an index of the series' nights): the earliest of the newest *window* from
    which every night of the quantile that moved most (*x*: its log values from night *start*) is past half
    its shift, in its direction; the first tested night when none earlier is."""
    base = x[s.baseline[0] - start : s.baseline[1] - start].mean()
    half = math.log1p(s.change_pct / 100) / 2
    n = len(x)
    first = n - confirm
    for i in range(n - confirm - 1, max(n - window, s.baseline[1] - start) - 1, -1):
        if ((x[i] - base - half) * half) > 0:
            first = i
        else:
            break
    return start + first
