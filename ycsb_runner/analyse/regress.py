"""``regress``: regression / improvement / no change per series of a suite's history (pure over frames).

A series is one step cell (phase, mix, threads, audit) x operation x metric, one value per night (the median
of the night's repetitions), over the completed runs with the newest run's parameter fingerprint. Each series
is judged by :func:`ycsb_runner.analyse.changepoint.judge_series`; the p-values of all tested series are
corrected together (Holm by default, or Benjamini-Hochberg); a series is flagged when its corrected p is
below ``alpha`` and the change is at least ``min_effect`` percent, in the direction the study registry gives
the metric (``ycsb_runner.studies``).

Exit codes: 0 no regression; 1 a regression; 2 could not decide (too little history, newest run not
completed, nothing comparable). Never 0 when no series was tested.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.analyse.changepoint import HOLM, MIN_BASELINE, adjust, judge_series
from ycsb_runner.history import SERIES_KEYS
from ycsb_runner.studies import higher_is_better

DEFAULT_METRICS = ("throughput_ops_s", "avg_us", "p99_us")
REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"
UNTESTED = "untested"
CORRECTIONS = {"holm": "Holm (family-wise error rate)", "bh": "Benjamini-Hochberg (false discovery rate)"}

EXIT_OK, EXIT_REGRESSION, EXIT_UNDECIDED = 0, 1, 2

COLUMNS = [
    *SERIES_KEYS,
    "verdict",
    "direction",
    "before_median",
    "after_median",
    "change_pct",
    "p_value",
    "p_adjusted",
    "test",
    "change_run",
    "change_tags",
    "nights",
    "note",
]


@dataclass
class RegressOptions:
    min_effect_pct: float = 5.0
    alpha: float = 0.01  # about one false alarm per 100 nights in a series (bench/detection_bench.py)
    correction: str = HOLM
    window: int = 3  # the newest nights tested together
    confirm: int = 2  # nights a change must show on before it is flagged (1: tonight alone)
    metrics: tuple[str, ...] = DEFAULT_METRICS
    permutations: int = 999


@dataclass
class RegressResult:
    table: pd.DataFrame
    exit_code: int
    reason: str
    suite: str
    newest: str | None
    runs_used: list[str] = field(default_factory=list)
    series_values: dict[tuple, pd.DataFrame] = field(default_factory=dict)  # for the report
    options: RegressOptions = field(default_factory=RegressOptions)

    @property
    def correction_text(self) -> str:
        return CORRECTIONS[self.options.correction]

    def summary(self) -> dict[str, Any]:
        t = self.table
        return {
            "suite": self.suite,
            "newest_run": self.newest,
            "runs": len(self.runs_used),
            "exit_code": self.exit_code,
            "decision": self.reason,
            "series_tested": int((t["verdict"] != UNTESTED).sum()) if not t.empty else 0,
            "regressions": int((t["verdict"] == REGRESSION).sum()) if not t.empty else 0,
            "improvements": int((t["verdict"] == IMPROVEMENT).sum()) if not t.empty else 0,
            "alpha": self.options.alpha,
            "min_effect_pct": self.options.min_effect_pct,
            "confirm": self.options.confirm,
            "window": self.options.window,
            "correction": self.correction_text,
        }


def _tags(t: Any) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((t or {}).items())) if isinstance(t, dict) else ""


def _empty(
    suite: str, newest: str | None, reason: str, opts: RegressOptions, used: list[str]
) -> RegressResult:
    return RegressResult(pd.DataFrame(columns=COLUMNS), EXIT_UNDECIDED, reason, suite, newest, used, {}, opts)


def regress(runs: pd.DataFrame, metrics: pd.DataFrame, suite: str, opts: RegressOptions) -> RegressResult:
    """Judge the newest run of *runs* (one suite's, filtered, oldest first) against the ones before it.

    *metrics* holds the history's metric rows of those runs (``ycsb_runner.history.METRIC_COLUMNS``).
    """
    if runs.empty:
        return _empty(suite, None, f"no runs of suite {suite!r} in the history", opts, [])
    newest = runs.iloc[-1]
    newest_id = str(newest["run_id"])
    if newest["verdict"] != "completed":
        return _empty(
            suite,
            newest_id,
            f"the newest run {newest_id} is {newest['verdict']}, not completed: nothing to judge",
            opts,
            [],
        )
    same = runs[(runs["fingerprint"] == newest["fingerprint"]) & (runs["verdict"] == "completed")]
    used = [str(r) for r in same["run_id"]]
    if len(same) < MIN_BASELINE + opts.confirm:
        other = len(runs[runs["fingerprint"] != newest["fingerprint"]])
        extra = f" ({other} more with other parameters)" if other else ""
        return _empty(
            suite,
            newest_id,
            f"{len(same)} completed run(s) with the newest run's parameters{extra}: need at least "
            f"{MIN_BASELINE + opts.confirm} to decide (--confirm {opts.confirm})",
            opts,
            used,
        )
    order = {rid: i for i, rid in enumerate(used)}
    tags = dict(zip(same["run_id"], same["tags"], strict=True))
    m = metrics[metrics["run_id"].isin(order) & metrics["metric"].isin(opts.metrics)]
    if m.empty:
        return _empty(suite, newest_id, "no key figures of these runs in the history", opts, used)
    nightly = (
        m.groupby([*SERIES_KEYS, "run_id"], dropna=False)["value"]
        .agg(value="median", low="min", high="max", n="size")
        .reset_index()
    )
    nightly["_night"] = nightly["run_id"].map(order)
    rows: list[dict[str, Any]] = []
    values: dict[tuple, pd.DataFrame] = {}
    for key, part in nightly.groupby(SERIES_KEYS, dropna=False, sort=True):
        part = part.sort_values("_night")
        row: dict[str, Any] = dict(zip(SERIES_KEYS, key, strict=True))
        row["nights"] = len(part)
        values[key] = part[["run_id", "value", "low", "high", "n"]].reset_index(drop=True)
        if part["run_id"].iloc[-1] != newest_id:
            row.update(verdict=UNTESTED, note="not measured in the newest run", test="none")
            rows.append(row)
            continue
        j = judge_series(
            part["value"].to_numpy(float),
            window=opts.window,
            confirm=opts.confirm,
            min_effect_pct=opts.min_effect_pct,
            permutations=opts.permutations,
        )
        row.update(
            before_median=j.before_median,
            after_median=j.after_median,
            change_pct=j.change_pct,
            p_value=j.p_value,
            test=j.test,
            note=j.note,
            verdict=UNTESTED if not j.tested else "",
        )
        if j.tested:
            change_run = str(part["run_id"].iloc[j.change_index])
            row.update(change_run=change_run, change_tags=_tags(tags.get(change_run)))
        values[key].attrs["change_points"] = [int(c) for c in j.change_points]
        values[key].attrs["change_index"] = j.change_index
        rows.append(row)
    table = pd.DataFrame(rows, columns=COLUMNS)
    for col in ("verdict", "direction", "test", "change_run", "change_tags", "note"):
        table[col] = table[col].astype(object).where(table[col].notna(), "")
    tested = table["verdict"] != UNTESTED
    table["p_adjusted"] = math.nan
    if tested.any():
        table.loc[tested, "p_adjusted"] = adjust(
            table.loc[tested, "p_value"].astype(float).tolist(), opts.correction
        )
    for i in table.index[tested]:
        hib = higher_is_better(str(table.at[i, "metric"]))
        pct = float(table.at[i, "change_pct"])
        significant = table.at[i, "p_adjusted"] < opts.alpha and abs(pct) >= opts.min_effect_pct
        if hib is None or not significant or pct != pct:
            table.at[i, "verdict"], table.at[i, "direction"] = NO_CHANGE, "same" if hib is not None else "n/a"
            continue
        better = (pct > 0) == hib
        table.at[i, "verdict"] = IMPROVEMENT if better else REGRESSION
        table.at[i, "direction"] = "better" if better else "worse"
    n_tested = int(tested.sum())
    n_reg = int((table["verdict"] == REGRESSION).sum())
    if n_tested == 0:
        code, reason = EXIT_UNDECIDED, "no series could be tested (too little history in every series)"
    elif n_reg:
        code, reason = EXIT_REGRESSION, f"{n_reg} of {n_tested} series regressed"
    else:
        code, reason = EXIT_OK, f"no regression in {n_tested} series"
    table = table.sort_values(
        ["verdict", "p_adjusted"],
        key=lambda s: s.map(_verdict_rank) if s.name == "verdict" else s,
        kind="stable",
    ).reset_index(drop=True)
    return RegressResult(table, code, reason, suite, newest_id, used, values, opts)


def _verdict_rank(v: str) -> int:
    return {REGRESSION: 0, IMPROVEMENT: 1, NO_CHANGE: 2, UNTESTED: 3}.get(v, 4)


def flagged(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["verdict"].isin([REGRESSION, IMPROVEMENT])].reset_index(drop=True)


def night_values(series: pd.DataFrame) -> np.ndarray:
    return series["value"].to_numpy(float)
