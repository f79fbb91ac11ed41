"""Merging several load generators' results of one step: exact percentiles by adding HDR histograms.

Averaging the clients' p99s is wrong (a slow client's tail is diluted by the fast ones; YCSB's README warns
against it). Each client writes one HdrHistogram interval log per measurement (``hdrhistogram.fileoutput``):
``READ``, ``INSERT``, ``SCAN``, ``READ-MODIFY-WRITE``, ``READ-FAILED``, ``Intended-READ``, ... The logs are
decoded with :mod:`ycsb_runner.parse.hdr`, turned into ``hdrh`` histograms (the ``hdrhistogram`` package),
added per measurement name over the clients with ``HdrHistogram.add`` (exact: bucket counts are summed), and
read back with HdrHistogram's own percentile definition, the one YCSB prints. So every operation gets exact
merged percentiles, not only READ and UPDATE. Counts are summed; the throughput of all clients is their
operations over the common window (the longest client's run time: they start at one common go).

Pure functions of their arguments (no I/O beyond reading the given ``.hdr`` files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from ycsb_runner.model import ALL_CLIENTS

from .hdr import HdrLog, Layout, read_hdr_log
from .names import NAME_COLUMNS, classify_frame
from .numbers import percentile_label


def read_client_logs(dirs: Mapping[str, str | PathLike[str]]) -> dict[str, list[HdrLog]]:
    """client -> its ``*.hdr`` logs (a missing folder gives no logs)."""
    out: dict[str, list[HdrLog]] = {}
    for client, d in dirs.items():
        p = Path(d)
        out[client] = [read_hdr_log(f) for f in sorted(p.glob("*.hdr"))] if p.is_dir() else []
    return out


def to_histogram(layout: Layout, counts: np.ndarray) -> HdrHistogram:
    """A ``hdrh`` histogram holding exactly *counts* (a Java HdrHistogram counts array of *layout*)."""
    counts = np.asarray(counts, dtype="int64")
    last = max(len(counts) - 1, 0)
    top = int(layout.lowest_values(np.array([last]))[0] + layout.range_sizes(np.array([last]))[0] - 1)
    hist = HdrHistogram(layout.lowest, max(top, 2 * layout.lowest, 2), layout.digits)
    nz = np.flatnonzero(counts)
    if nz.size:
        if nz[-1] >= hist.counts_len:  # cannot happen with the highest value above; never lose a count
            raise ValueError("histogram bucket outside the converted range")
        np.ctypeslib.as_array(hist.counts)[: len(counts)] += counts[: hist.counts_len].astype("uint64")
        hist.set_internal_tacking_values(int(nz[0]), int(nz[-1]), int(counts.sum()))
    return hist


def add_histograms(parts: Sequence[HdrHistogram]) -> HdrHistogram:
    """One histogram with every count of *parts* (``HdrHistogram.add``; all must share lowest value and
    significant digits, as every YCSB client's do)."""
    if not parts:
        return HdrHistogram(1, 2, 3)
    layouts = {(h.lowest_trackable_value, h.significant_figures) for h in parts}
    if len(layouts) > 1:
        raise ValueError(f"cannot add histograms of different precision: {sorted(layouts)}")
    widest = max(parts, key=lambda h: h.highest_trackable_value)
    total = HdrHistogram(
        widest.lowest_trackable_value, widest.highest_trackable_value, widest.significant_figures
    )
    for h in parts:
        if h.get_total_count():
            total.add(h)
    return total


def _absolute(log: HdrLog, start_s: float) -> float:
    return (log.start_time_s or 0.0) + start_s


def client_histograms(
    logs: Mapping[str, Sequence[HdrLog]], *, skip_first_s: float = 0.0
) -> dict[str, dict[str, HdrHistogram]]:
    """client -> measurement name -> its histogram over the window.

    The window is common to all clients: it starts *skip_first_s* after the earliest interval start of any
    client (absolute times from each log's StartTime), so a warm-up is cut at the same instant everywhere.
    An interval is kept when it starts at or after the window start.
    """
    starts = [_absolute(log, iv.start_s) for ls in logs.values() for log in ls for iv in log.intervals]
    t_from = (min(starts) if starts else 0.0) + skip_first_s
    out: dict[str, dict[str, HdrHistogram]] = {}
    for client, ls in logs.items():
        per: dict[str, HdrHistogram] = {}
        for log in ls:
            ivs = [iv for iv in log.intervals if _absolute(log, iv.start_s) >= t_from - 1e-9]
            layout = ivs[0].layout if ivs else (log.intervals[0].layout if log.intervals else Layout(1, 3))
            n = max((len(iv.counts) for iv in ivs), default=0)
            counts = np.zeros(n, dtype="int64")
            for iv in ivs:
                counts[: len(iv.counts)] += iv.counts
            hist = to_histogram(layout, counts)
            per[log.name] = add_histograms([per[log.name], hist]) if log.name in per else hist
        out[client] = per
    return out


def histogram_stats(hist: HdrHistogram, percentiles: Sequence[float]) -> dict[str, float]:
    """count, min/max/mean and percentiles (µs) as HdrHistogram (and so YCSB) defines them."""
    total = hist.get_total_count()
    row: dict[str, float] = {"operations": float(total)}
    if not total:
        row.update({"min_us": np.nan, "max_us": np.nan, "mean_us": np.nan})
        row.update({f"{percentile_label(p)}_us": np.nan for p in percentiles})
        return row
    row["min_us"] = float(hist.get_min_value())
    row["max_us"] = float(hist.get_max_value())
    row["mean_us"] = float(hist.get_mean_value())
    for p in percentiles:
        row[f"{percentile_label(p)}_us"] = float(hist.get_value_at_percentile(p))
    return row


def merged_latencies(
    hists: Mapping[str, Mapping[str, HdrHistogram]], percentiles: Sequence[float]
) -> pd.DataFrame:
    """One row per (client, measurement) and one per measurement for ``client=all`` (the added histograms):
    client, section, operation, kind, intended, outcome, part, clients, operations, min_us, max_us, mean_us,
    p<N>_us."""
    rows = []
    sections = sorted({s for per in hists.values() for s in per})
    for section in sections:
        parts = [(c, per[section]) for c, per in hists.items() if section in per]
        for client, h in parts:
            rows.append(
                {"client": client, "section": section, "clients": 1, **histogram_stats(h, percentiles)}
            )
        total = add_histograms([h for _, h in parts])
        rows.append(
            {
                "client": ALL_CLIENTS,
                "section": section,
                "clients": len(parts),
                **histogram_stats(total, percentiles),
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.join(classify_frame(frame["section"]), on="section")
    first = ["client", "section", *NAME_COLUMNS]
    return frame[first + [c for c in frame.columns if c not in first]]


def merge_operations(
    per_client: Mapping[str, pd.DataFrame],
    latencies: pd.DataFrame,
    percentiles: Sequence[float],
) -> pd.DataFrame:
    """The ``client=all`` rows of operations.csv from each client's parsed operations and the merged
    latencies: counts and return codes summed, average weighted by operations, min of the minima, max of the
    maxima, and every percentile from the added histograms (NaN when no client logged that measurement)."""
    frames = [df.assign(client=c) for c, df in per_client.items() if df is not None and not df.empty]
    if not frames:
        return pd.DataFrame()
    ops = pd.concat(frames, ignore_index=True)
    keys = ["section", *NAME_COLUMNS]
    rows = []
    lat = latencies[latencies["client"] == ALL_CLIENTS].set_index("section") if not latencies.empty else None
    for section, grp in ops.groupby("section", sort=False):
        row: dict[str, object] = {k: grp[k].iloc[0] for k in keys}
        n = grp["operations"].fillna(0)
        row["operations"] = float(n.sum())
        if "average_latency_us" in grp:
            weight = float(n[grp["average_latency_us"].notna()].sum())
            row["average_latency_us"] = (
                float((grp["average_latency_us"] * n).sum() / weight) if weight else np.nan
            )
        if "min_latency_us" in grp:
            row["min_latency_us"] = grp["min_latency_us"].min()
        if "max_latency_us" in grp:
            row["max_latency_us"] = grp["max_latency_us"].max()
        for p in percentiles:
            col = percentile_label(p)
            have = lat is not None and section in lat.index and lat.at[section, "operations"] > 0
            row[col] = float(lat.at[section, f"{col}_us"]) if have else np.nan
        for col in grp.columns:
            if col.startswith("return_") or col in ("returns", "errors"):
                row[col] = grp[col].sum(min_count=1)
        if "returns" in row and "errors" in row:
            returns = row["returns"]
            row["error_rate"] = (
                float(row["errors"]) / float(returns) if returns and not pd.isna(returns) else np.nan
            )
        rows.append(row)
    return pd.DataFrame(rows)


def merge_overall(per_client: Mapping[str, Mapping[str, float | None]]) -> dict[str, float | None]:
    """The ``[OVERALL]`` of all clients: operations summed, the window is the longest client's run time
    (they start at one common go), throughput = operations / window; also the sum of the clients' own
    throughputs (higher when a client finished early)."""
    ops = [float(o.get("ops_done") or 0.0) for o in per_client.values()]
    runtimes = [float(o["runtime_ms"]) for o in per_client.values() if o.get("runtime_ms")]
    window_ms = max(runtimes) if runtimes else None
    total = sum(ops)
    return {
        "ops_done": total,
        "runtime_ms": window_ms,
        "throughput": total / (window_ms / 1000.0) if window_ms else None,
        "throughput_sum_of_clients": sum(float(o.get("throughput") or 0.0) for o in per_client.values()),
    }
