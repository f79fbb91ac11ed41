"""Statistics for A/B verdicts over repeated runs (pure; numpy/scipy/pandas only).

``compare_groups`` compares a baseline group A with a contender group B of repetition values:
means, medians, the change B−A (absolute and %), a seeded bootstrap confidence interval of the
difference of means, a two-sided significance test and a verdict in the words of the Alibaba study
("no significant change" / "significant increase" / "significant decrease").

Test choice: Mann–Whitney U (two-sided) when it can reach ``p < alpha`` at all with these group sizes
(the smallest exact two-sided p is ``2 / C(n_a + n_b, n_a)``, so at alpha 0.05 it needs 4 + 4 runs);
otherwise Welch's t-test. With fewer than 2 values in a group no test is possible ("n too small").
NaNs are dropped first. ``summarize`` gives one group's numbers with their spread; ``ab_table`` runs
``compare_groups`` per group and metric of a long results frame.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.analyse import BH, HOLM
from ycsb_runner.analyse import DEFAULT_ALPHA as _DEFAULT_ALPHA

NAN = float("nan")
DEFAULT_RESAMPLES = 10_000
RESAMPLE_SEED = 20240521
# The significance level of `compare` and its gate, the same as `regress` (a nightly job that runs both
# judges by one level); defined in the package so that the CLI reads it without numpy
DEFAULT_ALPHA = _DEFAULT_ALPHA

NOT_SIGNIFICANT = "no significant change"
INCREASE = "significant increase"
DECREASE = "significant decrease"
N_TOO_SMALL = "n too small"

TEST_MANN_WHITNEY = "mann-whitney-u"
TEST_WELCH = "welch-t"
TEST_EXACT = "exact (zero variance)"
TEST_NONE = "none"

AB_COLUMNS = (
    "metric",
    "n_a",
    "n_b",
    "a_mean",
    "b_mean",
    "change",
    "change_pct",
    "ci_low",
    "ci_high",
    "p_value",
    "test",
    "verdict",
    "direction",
)


def scipy_stats() -> Any:
    """scipy.stats, imported on first use: importing it costs about half a CPU-second, which a bench
    or a table that needs no test statistic (one run per arm) does not pay."""
    from scipy import stats

    return stats


@dataclass(frozen=True)
class Comparison:
    """Result of comparing baseline A with contender B (change = B − A)."""

    n_a: int
    n_b: int
    a_mean: float
    b_mean: float
    a_median: float
    b_median: float
    change: float
    change_pct: float
    ci_low: float
    ci_high: float
    p_value: float
    test: str
    significant: bool
    verdict: str
    direction: str  # "better" | "worse" | "same" | "n/a" (unknown orientation or no test)
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def clean(values: Iterable[Any]) -> np.ndarray:
    """Values as a float array without NaN/None/inf."""
    arr = np.asarray([np.nan if v is None else v for v in values], dtype=float)
    return arr[np.isfinite(arr)]


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if x.size else NAN


def _median(x: np.ndarray) -> float:
    return float(np.median(x)) if x.size else NAN


def summarize(values: Iterable[Any], *, confidence: float = 0.95) -> dict[str, float]:
    """n, mean, stdev (sample, ddof=1), min, max, median, a t-based CI of the mean, and cv_pct.

    NaNs are dropped. With n=1 the stdev and CI are NaN; with n=0 everything but n is NaN.
    """
    x = clean(values)
    n = int(x.size)
    out = dict.fromkeys(("mean", "stdev", "min", "max", "median", "ci_low", "ci_high", "cv_pct"), NAN)
    out = {"n": n, **out}
    if n == 0:
        return out
    mean = float(np.mean(x))
    out.update(mean=mean, min=float(np.min(x)), max=float(np.max(x)), median=float(np.median(x)))
    if n >= 2:
        sd = float(np.std(x, ddof=1))
        half = float(scipy_stats().t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
        out.update(stdev=sd, ci_low=mean - half, ci_high=mean + half)
        out["cv_pct"] = 100.0 * sd / abs(mean) if mean != 0 else NAN
    return out


def bootstrap_mean_diff_ci(
    a: np.ndarray,
    b: np.ndarray,
    *,
    alpha: float = 0.05,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = RESAMPLE_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(B) − mean(A): each group resampled with replacement on its own.

    Deterministic for a given seed. With very small groups (n=2..3) the interval is too narrow
    (the bootstrap cannot see more spread than the data shows); read it together with the test.
    """
    if a.size == 0 or b.size == 0:
        return NAN, NAN
    rng = np.random.default_rng(seed)
    ma = a[rng.integers(0, a.size, size=(resamples, a.size))].mean(axis=1)
    mb = b[rng.integers(0, b.size, size=(resamples, b.size))].mean(axis=1)
    lo, hi = np.quantile(mb - ma, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def min_mann_whitney_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided exact Mann–Whitney p-value possible with these group sizes."""
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def _test(a: np.ndarray, b: np.ndarray, alpha: float) -> tuple[float, str, str]:
    """(p_value, test name, note) for two groups with at least 2 values each."""
    var_a, var_b = float(np.var(a)), float(np.var(b))
    if var_a == 0 and var_b == 0:
        if a[0] == b[0]:
            return 1.0, TEST_EXACT, "both groups constant and equal"
        return 0.0, TEST_EXACT, "both groups constant: the difference is exact"
    if min_mann_whitney_p(a.size, b.size) <= alpha:
        res = scipy_stats().mannwhitneyu(b, a, alternative="two-sided")
        return float(res.pvalue), TEST_MANN_WHITNEY, ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = scipy_stats().ttest_ind(b, a, equal_var=False)
    note = f"Mann-Whitney cannot reach p<{alpha:g} with n={a.size}+{b.size}: Welch's t-test used"
    return float(res.pvalue), TEST_WELCH, note


def _direction(verdict: str, higher_is_better: bool | None) -> str:
    if higher_is_better is None or verdict == N_TOO_SMALL:
        return "n/a"
    if verdict == NOT_SIGNIFICANT:
        return "same"
    up = verdict == INCREASE
    return "better" if up == higher_is_better else "worse"


def compare_groups(
    a: Iterable[Any],
    b: Iterable[Any],
    *,
    alpha: float = 0.05,
    higher_is_better: bool | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = RESAMPLE_SEED,
) -> Comparison:
    """Compare baseline ``a`` with contender ``b`` (repetition values of one metric; NaNs dropped)."""
    raw_a, raw_b = list(a), list(b)
    xa, xb = clean(raw_a), clean(raw_b)
    dropped = [name for name, raw, x in (("A", raw_a, xa), ("B", raw_b, xb)) if len(raw) != x.size]
    a_mean, b_mean = _mean(xa), _mean(xb)
    change = b_mean - a_mean
    change_pct = 100.0 * change / abs(a_mean) if a_mean and not math.isnan(a_mean) else NAN
    notes = [f"non-finite values dropped from {'+'.join(dropped)}"] if dropped else []
    if xa.size < 2 or xb.size < 2:
        p, test, verdict, significant = NAN, TEST_NONE, N_TOO_SMALL, False
        ci_low = ci_high = NAN
        notes.append(f"need at least 2 values per group (have {xa.size}+{xb.size})")
    else:
        ci_low, ci_high = bootstrap_mean_diff_ci(xa, xb, alpha=alpha, resamples=resamples, seed=seed)
        p, test, note = _test(xa, xb, alpha)
        if note:
            notes.append(note)
        significant = bool(p < alpha) and change != 0
        verdict = NOT_SIGNIFICANT if not significant else (INCREASE if change > 0 else DECREASE)
    return Comparison(
        n_a=int(xa.size),
        n_b=int(xb.size),
        a_mean=a_mean,
        b_mean=b_mean,
        a_median=_median(xa),
        b_median=_median(xb),
        change=change,
        change_pct=change_pct,
        ci_low=ci_low,
        ci_high=ci_high,
        p_value=p,
        test=test,
        significant=significant,
        verdict=verdict,
        direction=_direction(verdict, higher_is_better),
        note="; ".join(notes),
    )


def ab_table(
    df: pd.DataFrame,
    group_cols: Sequence[str],
    arm_col: str,
    metric_cols: Sequence[str],
    baseline_arm: Any,
    contender_arm: Any,
    *,
    alpha: float = 0.05,
    higher_is_better: Mapping[str, bool | None] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = RESAMPLE_SEED,
) -> pd.DataFrame:
    """Long-form A/B table: one row per group and metric.

    ``df`` has one row per run (repetition) with the ``group_cols`` (e.g. workload, threads), the arm in
    ``arm_col`` (e.g. audit "off"/"on") and metric columns. Columns of the result: the group columns,
    then ``metric, n_a, n_b, a_mean, b_mean, change, change_pct, ci_low, ci_high, p_value, test,
    verdict, direction``. ``higher_is_better`` maps metric → orientation (from the study registry,
    ``ycsb_runner.studies``); a metric it does not map has no direction ("n/a").
    """
    missing = [c for c in (*group_cols, arm_col, *metric_cols) if c not in df.columns]
    if missing:
        raise KeyError(f"ab_table: columns not in the frame: {', '.join(missing)}")
    orientation = dict(higher_is_better or {})
    groups: Iterable[tuple[Any, pd.DataFrame]] = (
        df.groupby(list(group_cols), dropna=False, sort=True) if group_cols else [((), df)]
    )
    rows = []
    for key, part in groups:
        key_tuple = key if isinstance(key, tuple) else (key,)
        a_rows = part[part[arm_col] == baseline_arm]
        b_rows = part[part[arm_col] == contender_arm]
        for metric in metric_cols:
            hib = orientation.get(metric)
            cmp = compare_groups(
                pd.to_numeric(a_rows[metric], errors="coerce"),
                pd.to_numeric(b_rows[metric], errors="coerce"),
                alpha=alpha,
                higher_is_better=hib,
                resamples=resamples,
                seed=seed,
            )
            row = dict(zip(group_cols, key_tuple, strict=True))
            row["metric"] = metric
            row.update({c: getattr(cmp, c) for c in AB_COLUMNS if c != "metric"})
            rows.append(row)
    return pd.DataFrame(rows, columns=[*group_cols, *AB_COLUMNS])


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
