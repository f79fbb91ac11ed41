"""The results table printed after a run: throughput and latency per operation per step."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from rich.table import Table

from ycsb_runner.console import out_console
from ycsb_runner.model import RunResult, whole_steps

KEYS = ["step", "phase", "mix", "threads", "audit", "repetition"]


def results_table(run_dir: Path | RunResult) -> pd.DataFrame:
    """One row per (step, operation): ops, throughput of the step, average/p95/p99 latency (µs)."""
    rd = run_dir if isinstance(run_dir, RunResult) else RunResult.load(run_dir)
    ops = whole_steps(rd.operations)  # merged rows of multi-client steps
    steps = rd.steps
    if ops.empty:
        return pd.DataFrame(columns=[*KEYS, "operation", "operations", "throughput_ops_s"])
    ops = ops[(ops["kind"] == "op") & (ops["operation"] != "CLEANUP")]
    tp = (
        steps.set_index("step")["throughput_ops_s"] if "throughput_ops_s" in steps else pd.Series(dtype=float)
    )
    out = ops[[c for c in KEYS if c in ops] + ["operation", "operations"]].copy()
    out.insert(len(out.columns) - 1, "throughput_ops_s", out["step"].map(tp))
    for col in ("average_latency_us", "p95_us", "p99_us"):
        out[col] = ops[col] if col in ops else float("nan")
    out["error_rate"] = ops["error_rate"] if "error_rate" in ops else float("nan")
    return out.reset_index(drop=True)


def _fmt(v: object, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, float | int):
        return f"{v:,.{digits}f}"
    return str(v)


def print_results(run_dir: Path | RunResult) -> None:
    df = results_table(run_dir)
    root = run_dir.root if isinstance(run_dir, RunResult) else run_dir
    table = Table(title=f"results: {root.name}", show_lines=False)
    for col in (
        "step",
        "mix",
        "threads",
        "audit",
        "operation",
        "operations",
        "ops/s",
        "avg µs",
        "p95 µs",
        "p99 µs",
        "errors",
    ):
        table.add_column(col, justify="right" if col not in ("step", "mix", "audit", "operation") else "left")
    for row in df.itertuples(index=False):
        table.add_row(
            str(row.step),
            str(row.mix),
            str(row.threads),
            str(row.audit),
            str(row.operation),
            _fmt(row.operations),
            _fmt(row.throughput_ops_s),
            _fmt(row.average_latency_us),
            _fmt(row.p95_us),
            _fmt(row.p99_us),
            _fmt(100 * row.error_rate, 2) + "%" if row.error_rate == row.error_rate else "-",
        )
    out_console.print(table)
