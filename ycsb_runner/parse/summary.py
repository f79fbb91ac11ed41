"""The final summary (`[SECTION], metric, value` lines): long form, plus verbose/timeseries buckets."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .lines import Lines
from .names import NAME_COLUMNS, classify_frame
from .numbers import to_float

_PCT_RE = re.compile(
    r"^(?:(?P<a>\d+(?:\.\d+)?)(?:st|nd|rd|th)?PercentileLatency\((?:us|ms)\)|p(?P<b>\d+(?:\.\d+)?))$"
)
_BUCKET_RE = r">?-?\d+"

SUMMARY_COLUMNS = ["section", *NAME_COLUMNS, "metric", "percentile", "value", "value_str"]
HISTOGRAM_COLUMNS = ["section", *NAME_COLUMNS, "source", "bucket", "lower_us", "upper_us", "count"]
TIMESERIES_COLUMNS = ["section", *NAME_COLUMNS, "offset_ms", "avg_latency_us"]


def empty_frame(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: np.empty(0, dtype=object) for c in columns})  # (a third of the time of Series)


def summary_rows(lines: Lines) -> pd.DataFrame:
    """The summary lines of a scanned stream: section, metric, value_str (text order)."""
    mask = lines.is_summary if lines.n else np.zeros(0, dtype=bool)
    return pd.DataFrame(
        {
            "section": lines["section"][mask],
            "metric": lines["metric"][mask],
            "value_str": lines["value"][mask],
        },
        dtype=object,
    )


def _percentile_of(metrics: pd.Series) -> pd.Series:
    uniq = pd.unique(metrics)
    mapping = {}
    for m in uniq:
        hit = _PCT_RE.match(m) if isinstance(m, str) else None
        mapping[m] = float(hit.group("a") or hit.group("b")) if hit else np.nan
    return metrics.map(mapping).astype("float64")


def build_summary(rows: pd.DataFrame, extra_names: tuple[str, ...] = ()) -> dict[str, pd.DataFrame]:
    """Long-form summary, verbose histogram buckets and timeseries buckets from raw summary rows."""
    if rows.empty:
        return {
            "summary": empty_frame(SUMMARY_COLUMNS),
            "histogram": empty_frame(HISTOGRAM_COLUMNS),
            "timeseries": empty_frame(TIMESERIES_COLUMNS),
        }
    rows = rows.reset_index(drop=True)
    metric = rows["metric"].astype(object)
    with_returns = rows.loc[metric.str.startswith("Return=", na=False), "section"].unique()
    names = classify_frame([*rows["section"].unique(), *extra_names], with_returns)
    is_bucket = metric.str.fullmatch(_BUCKET_RE, na=False).to_numpy(dtype=bool)

    body = rows[~is_bucket]
    # Later duplicates (e.g. two outputs concatenated) win.
    body = body[~body.duplicated(subset=["section", "metric"], keep="last")]
    summary = body.join(names, on="section")
    summary["percentile"] = _percentile_of(summary["metric"])
    summary["value"] = to_float(summary["value_str"])
    summary = summary[SUMMARY_COLUMNS].reset_index(drop=True)

    buckets = rows[is_bucket]
    histogram, timeseries = _split_buckets(buckets, body, names)
    return {"summary": summary, "histogram": histogram, "timeseries": timeseries}


def _split_buckets(buckets: pd.DataFrame, body: pd.DataFrame, names: pd.DataFrame):
    if buckets.empty:
        return empty_frame(HISTOGRAM_COLUMNS), empty_frame(TIMESERIES_COLUMNS)
    metric = body["metric"]
    variance = set(body.loc[metric == "LatencyVariance(us)", "section"])
    pct = set(body.loc[metric.str.contains("PercentileLatency(us)", regex=False, na=False), "section"])
    sec = buckets["section"]
    # The whole shape decides, not one marker line: `histogram` prints ms buckets 0..N-1 and a `>N`
    # overflow bucket (LatencyVariance only since 0.6); `hdrhistogram` verbose prints recorded values
    # under percentiles in us; anything else is a `timeseries` (ms offsets).
    overflow = set(sec[buckets["metric"].str.startswith(">", na=False)])
    is_hist = sec.isin(variance | overflow).to_numpy()
    is_hdr = (~is_hist) & sec.isin(pct).to_numpy()
    is_ts = ~(is_hist | is_hdr)

    histogram = _histogram_frame(buckets[is_hist], buckets[is_hdr], names)
    if is_ts.any():
        b = buckets[is_ts]
        timeseries = pd.DataFrame(
            {
                "section": b["section"].to_numpy(),
                "offset_ms": pd.to_numeric(b["metric"].str.lstrip(">"), errors="coerce").to_numpy(
                    dtype="float64"
                ),
                "avg_latency_us": to_float(b["value_str"]).to_numpy(),
            }
        ).join(names, on="section")[TIMESERIES_COLUMNS]
    else:
        timeseries = empty_frame(TIMESERIES_COLUMNS)
    return histogram, timeseries


def _histogram_frame(hist: pd.DataFrame, hdr: pd.DataFrame, names: pd.DataFrame) -> pd.DataFrame:
    """The histogram rows of the ``histogram`` buckets (ms, with a ``>N`` overflow bucket) and of the
    ``hdrhistogram`` recorded values (us)."""
    frames = []
    if not hist.empty:
        overflow = hist["metric"].str.startswith(">").to_numpy()
        ms = pd.to_numeric(hist["metric"].str.lstrip(">"), errors="coerce").to_numpy(dtype="float64")
        frames.append(
            pd.DataFrame(
                {
                    "section": hist["section"].to_numpy(),
                    "source": "histogram",
                    "bucket": hist["metric"].to_numpy(),
                    "lower_us": ms * 1000.0,
                    "upper_us": np.where(overflow, np.inf, (ms + 1.0) * 1000.0),
                    "count": to_float(hist["value_str"]).to_numpy(),
                }
            )
        )
    if not hdr.empty:
        us = pd.to_numeric(hdr["metric"], errors="coerce").to_numpy(dtype="float64")
        frames.append(
            pd.DataFrame(
                {
                    "section": hdr["section"].to_numpy(),
                    "source": "hdrhistogram",
                    "bucket": hdr["metric"].to_numpy(),
                    "lower_us": us,
                    "upper_us": us,
                    "count": to_float(hdr["value_str"]).to_numpy(),
                }
            )
        )
    if not frames:
        return empty_frame(HISTOGRAM_COLUMNS)
    return pd.concat(frames, ignore_index=True).join(names, on="section")[HISTOGRAM_COLUMNS]
