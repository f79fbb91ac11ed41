"""Merging several load generators' results of one step: exact percentiles by adding HDR histograms.

Averaging the clients' p99s is wrong (a slow client's tail is diluted by the fast ones; YCSB's README warns
against it). Each client writes one HdrHistogram interval log per measurement (``hdrhistogram.fileoutput``):
``READ``, ``INSERT``, ``SCAN``, ``READ-MODIFY-WRITE``, ``READ-FAILED``, ``Intended-READ``, ... The logs are
decoded with :mod:`ycsb_runner.parse.hdr`, turned into ``hdrh`` histograms (the ``hdrhistogram`` package),
added per measurement name over the clients with ``HdrHistogram.add`` (exact: bucket counts are summed), and
read back with HdrHistogram's own percentile definition, the one YCSB prints. So every operation gets exact
merged percentiles, not only READ and UPDATE.

The clients do not run over the same period: each starts its own clock after its JVM start and workload
init (YCSB's ``Client.java``), at a different moment after the common go, and a remote host's clock may be
off. So the logs are first put on the runner's clock (``align_logs``: each host's offset, measured at
start), each client's warm-up is cut from its own start (``drop_warmup``), and then:

* the **common window** (``common_window``) is where every client was running: from the latest first
  interval start to the earliest last interval end. Its throughput is the operations of the intervals whose
  midpoint lies in it, over its length; the merged percentiles are those of the same intervals (default);
* the **union** runs from the earliest start to the latest end: all operations over it (the rate of the
  whole step), with the percentiles of every interval kept beside the common window's.

Operations counted from the logs follow YCSB's ``opsDone``: every non-intended operation measurement
(``-FAILED`` and status variants included), less ``READ-MODIFY-WRITE`` once (its read and update are also
measured under ``READ`` and ``UPDATE``); ``CLEANUP`` is not an operation.

Pure functions of their arguments (no I/O beyond reading the given ``.hdr`` files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from ycsb_runner.runs.model import ALL_CLIENTS

from .errors import ParseError
from .hdr import BucketLayout, HdrLog, read_hdr_log
from .names import NAME_COLUMNS, classify, classify_frame
from .numbers import percentile_label


def read_client_logs(
    dirs: Mapping[str, str | PathLike[str]], problems: list[str] | None = None
) -> dict[str, list[HdrLog]]:
    """client -> its ``*.hdr`` logs (a missing folder gives no logs). With *problems*, a log that cannot
    be read (a client stopped before it wrote its first line) is left out and described there instead of
    raising :class:`ParseError`."""
    out: dict[str, list[HdrLog]] = {}
    for client, d in dirs.items():
        p = Path(d)
        out[client] = []
        for f in sorted(p.glob("*.hdr")) if p.is_dir() else []:
            try:
                out[client].append(read_hdr_log(f))
            except ParseError:
                if problems is None:
                    raise
                problems.append(
                    f"client {client}: {f.name} is empty or not an HdrHistogram log, left out of the merge"
                )
    return out


def to_histogram(layout: BucketLayout, counts: np.ndarray) -> HdrHistogram:
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


Logs = Mapping[str, Sequence[HdrLog]]


@dataclass(frozen=True)
class TimeSpan:
    """Epoch seconds on the runner's clock; ``ops`` counted from the intervals inside (midpoint rule)."""

    start_s: float
    end_s: float
    ops: int

    @property
    def length_s(self) -> float:
        return max(self.end_s - self.start_s, 0.0)

    @property
    def throughput(self) -> float | None:
        return self.ops / self.length_s if self.length_s > 0 else None

    def steady_figures(self) -> dict[str, float | None]:
        """The step's ``steady_*`` figures when this is its steady-state window (RESULTS.md)."""
        return {
            "steady_start": self.start_s,
            "steady_s": self.length_s,
            "steady_operations": self.ops,
            "throughput_steady_ops_s": self.throughput,
        }


def align_logs(logs: Logs, offsets: Mapping[str, float]) -> dict[str, list[HdrLog]]:
    """Each client's logs on the runner's clock: its StartTime less its host's clock offset (host clock
    minus runner clock, measured at start; a client without one counts as 0). Pure."""
    return {
        c: [replace(log, start_time_s=(log.start_time_s or 0.0) - float(offsets.get(c) or 0.0)) for log in ls]
        for c, ls in logs.items()
    }


def _counted(logs: Sequence[HdrLog]) -> list[HdrLog]:
    """The logs whose counts are operations (not CLEANUP, not Intended-, not JVM gauges)."""
    out = []
    for log in logs:
        name = classify(log.name)
        if log.name != "CLEANUP" and not name["intended"] and name["kind"] in ("op", "failed", "status"):
            out.append(log)
    return out


def _span(logs: Sequence[HdrLog]) -> tuple[float, float] | None:
    ivs = [
        (_absolute(log, iv.start_s), _absolute(log, iv.start_s) + iv.length_s)
        for log in logs
        for iv in log.intervals
    ]
    if not ivs:
        return None
    return min(a for a, _ in ivs), max(b for _, b in ivs)


def drop_warmup(logs: Logs, warmup_s: float | Mapping[str, float]) -> dict[str, list[HdrLog]]:
    """Each client's intervals that start at least *warmup_s* after that client's own first interval
    (every JVM warms up from its own start, a late one too); *warmup_s* one figure for every client or
    one per client (a client not in it: none cut). Pure."""
    out: dict[str, list[HdrLog]] = {}
    for client, ls in logs.items():
        span = _span(_counted(ls)) or _span(ls)
        cut_s = float(warmup_s.get(client, 0.0) if isinstance(warmup_s, Mapping) else warmup_s)
        if span is None or cut_s <= 0:
            out[client] = list(ls)
            continue
        cut = span[0] + cut_s
        out[client] = [
            replace(log, intervals=[iv for iv in log.intervals if _absolute(log, iv.start_s) >= cut - 1e-9])
            for log in ls
        ]
    return out


def window_logs(logs: Logs, start_s: float, end_s: float) -> dict[str, list[HdrLog]]:
    """The intervals whose midpoint lies in [start_s, end_s] (epoch seconds). Pure."""

    def inside(log: HdrLog, iv) -> bool:
        mid = _absolute(log, iv.start_s) + iv.length_s / 2
        return start_s - 1e-9 <= mid <= end_s + 1e-9

    return {
        c: [replace(log, intervals=[iv for iv in log.intervals if inside(log, iv)]) for log in ls]
        for c, ls in logs.items()
    }


@dataclass(frozen=True)
class IntervalSeries:
    """One client's operations per status interval (every measurement's intervals of one tick added):
    epoch starts and lengths (s) and YCSB's operations in each."""

    start_s: np.ndarray
    length_s: np.ndarray
    ops: np.ndarray

    @property
    def throughput(self) -> np.ndarray:
        return self.ops / np.maximum(self.length_s, 1e-9)

    @property
    def mid_s(self) -> np.ndarray:
        return self.start_s + self.length_s / 2


def interval_series(logs: Sequence[HdrLog]) -> IntervalSeries:
    """The operations of one client's logs per interval. YCSB's status thread ends every measurement's
    interval in the same pass, so intervals whose ends lie within a quarter of the median interval length
    of each other are one tick. Pure."""
    rows = [
        (_absolute(log, iv.start_s), iv.length_s, -iv.total if log.name == "READ-MODIFY-WRITE" else iv.total)
        for log in _counted(logs)
        for iv in log.intervals
    ]
    if not rows:
        empty = np.zeros(0)
        return IntervalSeries(empty, empty, empty)
    rows.sort(key=lambda r: r[0] + r[1])
    gap = 0.25 * float(np.median([r[1] for r in rows]))
    ticks: list[list[float]] = []  # [start, end, ops]
    for start, length, n in rows:
        end = start + length
        if ticks and end - ticks[-1][1] <= gap:
            ticks[-1][0] = min(ticks[-1][0], start)
            ticks[-1][1] = max(ticks[-1][1], end)
            ticks[-1][2] += n
        else:
            ticks.append([start, end, float(n)])
    t = np.array(ticks)
    return IntervalSeries(t[:, 0], t[:, 1] - t[:, 0], t[:, 2])


def operations_in(logs: Logs) -> int:
    """YCSB's operations in these intervals: every operation measurement less READ-MODIFY-WRITE once."""
    total = 0
    for ls in logs.values():
        for log in _counted(ls):
            n = sum(iv.total for iv in log.intervals)
            total += -n if log.name == "READ-MODIFY-WRITE" else n
    return total


def common_window(logs: Logs) -> TimeSpan | None:
    """Where every client with operations was running: [latest first start, earliest last end]. None when
    some client logged nothing or the clients never ran at the same time. Pure."""
    spans = [_span(_counted(ls)) for ls in logs.values()]
    if not spans or any(s is None for s in spans):
        return None
    start, end = max(s[0] for s in spans), min(s[1] for s in spans)  # type: ignore[index]
    if end <= start:
        return None
    return TimeSpan(start, end, operations_in(window_logs(logs, start, end)))


def union_window(logs: Logs) -> TimeSpan | None:
    """From the earliest start to the latest end of any client, with every operation logged. Pure."""
    spans = [s for s in (_span(_counted(ls)) for ls in logs.values()) if s is not None]
    if not spans:
        return None
    return TimeSpan(min(a for a, _ in spans), max(b for _, b in spans), operations_in(logs))


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
            layout = (
                ivs[0].layout if ivs else (log.intervals[0].layout if log.intervals else BucketLayout(1, 3))
            )
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
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    nonzero = np.flatnonzero(counts)
    row["mean_us"] = _mean(hist, counts, nonzero)
    cumulative = np.cumsum(counts[: nonzero[-1] + 1], dtype="uint64") if nonzero.size else counts[:0]
    for p in percentiles:
        row[f"{percentile_label(p)}_us"] = _value_at_percentile(hist, cumulative, p)
    return row


# hdrh's get_mean_value and get_value_at_percentile walk every bucket in Python (a report of a multi-client
# run spent most of its time there); these two visit only the buckets that hold counts, with hdrh's own
# arithmetic per bucket, so the figures are the same to the last bit (test_multi_merge checks it).


def _mean(hist: HdrHistogram, counts: np.ndarray, nonzero: np.ndarray) -> float:
    """``hist.get_mean_value()``: each count at its bucket's median equivalent value, summed exactly."""
    total = 0
    for index in nonzero.tolist():
        value = hist.get_value_from_index(index)
        low, high = hist.get_lowest_equivalent_value(value), hist.get_highest_equivalent_value(value)
        total += int(counts[index]) * (low + ((high - low + 1) >> 1))  # the bucket's median equivalent
    return float(total) / hist.get_total_count()


def _value_at_percentile(hist: HdrHistogram, cumulative: np.ndarray, percentile: float) -> float:
    """``hist.get_value_at_percentile(percentile)``: the first bucket whose running count reaches it."""
    target = hist.get_target_count_at_percentile(percentile)
    index = int(np.searchsorted(cumulative, target, side="left"))
    if index >= len(cumulative):
        return 0.0
    value = hist.get_value_from_index(index)
    return float(
        hist.get_highest_equivalent_value(value) if percentile else hist.get_lowest_equivalent_value(value)
    )


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
    """The ``[OVERALL]`` of all clients from their own summaries: operations summed over the longest
    client's run time, and the sum of the clients' own throughputs. Neither is the rate while all clients
    ran (the clients start their clocks at different moments): the step's throughput is that of
    ``common_window``; this figure is kept beside it (``throughput_sum_over_max_runtime_ops_s``)."""
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


STEADY_PREFIX = "steady_"


def with_steady(operations: pd.DataFrame, kept: Logs, percentiles: Sequence[float]) -> pd.DataFrame:
    """*operations* with the steady-state figures of each section beside its whole-run ones: from one
    histogram per section of the kept intervals (*kept*: the logs after the warm-up cut, all clients
    added): ``steady_operations``, ``steady_average_latency_us``, ``steady_max_latency_us`` and
    ``steady_p<N>_us``. Sections without kept intervals get NaN. Pure."""
    if operations is None or operations.empty:
        return operations
    lat = merged_latencies(client_histograms(kept), percentiles)
    out = operations.copy()
    if lat.empty:
        rows = pd.DataFrame(columns=["operations", "mean_us", "max_us"])
    else:
        rows = lat[lat["client"] == ALL_CLIENTS].set_index("section")
    cols = {"operations": "operations", "average_latency_us": "mean_us", "max_latency_us": "max_us"}
    cols.update({f"{percentile_label(p)}_us": f"{percentile_label(p)}_us" for p in percentiles})
    for name, source in cols.items():
        values = out["section"].map(rows[source]) if source in rows else np.nan
        out[STEADY_PREFIX + name] = values
    return out
