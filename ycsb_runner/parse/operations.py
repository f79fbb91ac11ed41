"""One row per measured operation section: counts, latencies, every percentile, return codes, error rate."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .names import LATENCY_KINDS, NAME_COLUMNS, SUCCESS_RETURNS
from .numbers import percentile_label
from .summary import empty_frame

# YCSB before 0.6 printed some or all latencies in ms (`AverageLatency(ms)`, `95thPercentileLatency(ms)`):
# they are converted to us, and the converted columns are listed in `converted_from_ms`.
MS_TO_US = 1000.0
_MS_STANDARD = {
    "AverageLatency(ms)": "average_latency_us",
    "MinLatency(ms)": "min_latency_us",
    "MaxLatency(ms)": "max_latency_us",
    "LatencyVariance(ms)": "latency_variance_us",
}
_STANDARD = {
    "Operations": "operations",
    "Total Operations": "operations",
    "AverageLatency(us)": "average_latency_us",
    "Average": "average_latency_us",
    "MinLatency(us)": "min_latency_us",
    "Min": "min_latency_us",
    "MaxLatency(us)": "max_latency_us",
    "Max": "max_latency_us",
    "LatencyVariance(us)": "latency_variance_us",
}
_LEADING = ["operations", "average_latency_us", "min_latency_us", "max_latency_us", "latency_variance_us"]
BASE_COLUMNS = [
    "section",
    *NAME_COLUMNS,
    "operations",
    "average_latency_us",
    "min_latency_us",
    "max_latency_us",
]
TAIL_COLUMNS = ["returns", "errors", "error_rate"]


def _column_for(metric: str, percentile: float) -> str | None:
    if metric in _STANDARD:
        return _STANDARD[metric]
    if metric in _MS_STANDARD:
        return _MS_STANDARD[metric]
    if percentile == percentile:  # not NaN
        return percentile_label(percentile)
    if metric.startswith("Return="):
        return "return_" + metric[len("Return=") :]
    return None


def is_ms_metric(metric: str) -> bool:
    """A latency printed in milliseconds (YCSB before 0.6)."""
    return metric.endswith("Latency(ms)") or metric == "LatencyVariance(ms)"


def build_operations(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per latency section (kinds op, failed, status, intended, hdr, bucket, raw)."""
    rows = summary[summary["kind"].isin(LATENCY_KINDS)] if not summary.empty else summary
    if rows.empty:
        return empty_frame([*BASE_COLUMNS, *TAIL_COLUMNS])
    # The percentile is a function of the metric name, so one lookup per distinct metric suffices.
    firsts = rows.drop_duplicates("metric")
    colmap = {m: _column_for(m, p) for m, p in zip(firsts["metric"], firsts["percentile"], strict=True)}
    cols = rows["metric"].map(colmap)
    keep = cols.notna()
    in_ms = rows["metric"].map({m: is_ms_metric(m) for m in colmap}).astype(bool)
    # The variance of a ms value is in ms^2.
    factor = np.where(in_ms, MS_TO_US, 1.0) * np.where(rows["metric"] == "LatencyVariance(ms)", MS_TO_US, 1.0)
    long = pd.DataFrame(
        {"section": rows["section"][keep], "column": cols[keep], "value": (rows["value"] * factor)[keep]}
    )
    converted = long[in_ms[keep].to_numpy()]
    wide = long.pivot_table(
        index="section", columns="column", values="value", aggfunc="last", dropna=False, sort=False
    )
    wide.columns.name = None
    info = rows.drop_duplicates("section").set_index("section")[NAME_COLUMNS]
    out = info.join(wide)
    for col in ("operations", "average_latency_us", "min_latency_us", "max_latency_us"):
        if col not in out:
            out[col] = np.nan

    # "No data": Long.MAX_VALUE is already NaN; histogram's -1 min/max; everything latency-like when 0 ops.
    latency_cols = [c for c in out.columns if c.endswith("_us") or (c.startswith("p") and c[1:2].isdigit())]
    latency_cols = [c for c in latency_cols if c != "latency_variance_us"] + (
        ["latency_variance_us"] if "latency_variance_us" in out else []
    )
    no_ops = out["operations"].fillna(-1).to_numpy() == 0
    if no_ops.any():  # (each .loc assignment costs about a millisecond, even when it selects nothing)
        out.loc[no_ops, latency_cols] = np.nan
    for col in ("min_latency_us", "max_latency_us"):
        negative = (out[col] < 0).to_numpy()
        if negative.any():
            out.loc[negative, col] = np.nan

    ret_cols = [c for c in out.columns if c.startswith("return_")]
    ret_cols.sort(key=lambda c: (c[len("return_") :] not in SUCCESS_RETURNS, c))
    _add_return_totals(out, ret_cols)

    pct_cols = sorted(
        (c for c in out.columns if c.startswith("p") and c[1:2].isdigit()), key=lambda c: float(c[1:])
    )
    leading = [c for c in _LEADING if c in out.columns]
    ordered = [*NAME_COLUMNS, *leading, *pct_cols, *ret_cols, *TAIL_COLUMNS]
    if not converted.empty:
        ordered.append("converted_from_ms")
        listed = converted.groupby("section", sort=False)["column"].agg(lambda c: " ".join(dict.fromkeys(c)))
        out["converted_from_ms"] = listed.reindex(out.index).fillna("")
    out = out[ordered].reset_index().rename(columns={"index": "section"})
    order = out.assign(_failed=out["outcome"] != "").sort_values(
        ["intended", "operation", "_failed", "outcome", "part", "section"], kind="stable"
    )
    return out.loc[order.index].reset_index(drop=True)


def _add_return_totals(out: pd.DataFrame, ret_cols: list[str]) -> None:
    """``returns``, ``errors`` (the non-success return codes) and ``error_rate`` of each section."""
    if not ret_cols:
        out["returns"] = np.nan
        out["errors"] = np.nan
        out["error_rate"] = np.nan
        return
    returns = out[ret_cols]
    has = returns.notna().any(axis=1)
    total = returns.sum(axis=1, min_count=1)
    bad = [c for c in ret_cols if c[len("return_") :] not in SUCCESS_RETURNS]
    errors = out[bad].sum(axis=1, min_count=1).fillna(0.0) if bad else pd.Series(0.0, index=out.index)
    out["returns"] = total.where(has)
    out["errors"] = errors.where(has)
    out["error_rate"] = (out["errors"] / out["returns"]).where(out["returns"] > 0)
