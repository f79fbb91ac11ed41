"""The answer a study of per-mix means gives against its published table: measured / published per mix and
metric, one compact table (the report's first section and the first table ``compare --reference`` prints).
Pure: it reads the rows of ``RunAnalysis.reference`` (measured, published, ratio per mix and metric)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

#: the metrics of the answer, in its column order, and their words
ANSWER_RATIOS = {
    "throughput_ops_s": "throughput",
    "read_avg_us": "read latency",
    "write_avg_us": "write latency",
    "server_cpu_pct": "CPU",
}


def ratio_text(ratio: float) -> str:
    """A ratio with its sign of unit: "0.016×", "9.1×", "1,234×"; "-" when missing."""
    if ratio != ratio:
        return "-"
    return f"{ratio:.2g}×" if ratio < 10 else f"{ratio:,.0f}×"


def ratio_compact(cmp: pd.DataFrame) -> pd.DataFrame:
    """One row per measured (mix, threads): the measured throughput and measured / published of each metric
    of ``ANSWER_RATIOS`` ("0.016×"), "-" where either is missing; against the first published set (storage)
    of *cmp* (``answer_sets`` names it)."""
    rows = []
    told = cmp.drop_duplicates(["mix", "threads", "metric"])
    metrics = [m for m in ANSWER_RATIOS if (told["metric"] == m).any()]
    for (mix, threads), part in told.groupby(["mix", "threads"], sort=False):  # (unmeasured: no threads)
        by = part.set_index("metric")
        row: dict[str, Any] = {"mix": mix, "threads": threads}
        tp = by.at["throughput_ops_s", "measured"] if "throughput_ops_s" in by.index else math.nan
        row["throughput (ops/s)"] = tp
        for m in metrics:
            row[f"{ANSWER_RATIOS[m]} ×"] = ratio_text(by.at[m, "ratio"] if m in by.index else math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


def answer_sets(cmp: pd.DataFrame) -> list[str]:
    """The published sets (storage types) of *cmp*, in order: the compact table is against the first."""
    if "storage" not in cmp:
        return []
    return [str(x) for x in dict.fromkeys(cmp["storage"].dropna()) if x]


def answer_note(cmp: pd.DataFrame) -> str:
    """The line under the compact table: what a × cell is, against which published figures."""
    sets = answer_sets(cmp)
    which = f" {sets[0]} figures" if sets else ""
    return f"Each × cell: measured / the published{which} (1× = as published; detail below)."


def unmeasured(cmp: pd.DataFrame) -> list[str]:
    """The published mixes this run did not measure."""
    measured = cmp[cmp["measured"].notna()]
    return sorted(set(cmp.loc[cmp["measured"].isna(), "mix"]) - set(measured["mix"]))
