"""The results table printed after a run: throughput and latency per operation per step."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ycsb_runner.console import out_console
from ycsb_runner.model import KEY_COLUMNS, RunResult, whole_steps

KEYS = list(KEY_COLUMNS)


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


def _step_no(step: str) -> str:
    """``03-run-read100-t2-r1`` -> ``03`` (the whole name when it has no number)."""
    head = str(step).split("-", 1)[0]
    return head if head.isdigit() else str(step)


def results_text(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The results table as text cells, step names replaced by their number, the step's throughput on its
    first row only (it is the step's, not the operation's), and the legend of the steps."""
    rows, legend = [], {}
    previous = None
    for row in df.itertuples(index=False):
        no = _step_no(row.step)
        first = row.step != previous  # the step's throughput once, on its first operation's row
        previous = row.step
        audit = f", audit {row.audit}" if row.audit not in ("none", "", None) else ""
        legend[no] = f"{no}  {row.step}: {row.mix}, {row.threads} threads{audit}"
        rows.append(
            {
                "#": no,
                "operation": str(row.operation),
                "operations": _fmt(row.operations),
                "ops/s": _fmt(row.throughput_ops_s) if first else "",
                "avg µs": _fmt(row.average_latency_us),
                "p95 µs": _fmt(row.p95_us),
                "p99 µs": _fmt(row.p99_us),
                "errors": _fmt(100 * row.error_rate, 2) + "%" if row.error_rate == row.error_rate else "-",
            }
        )
    columns = ["#", "operation", "operations", "ops/s", "avg µs", "p95 µs", "p99 µs", "errors"]
    return pd.DataFrame(rows, columns=columns), list(legend.values())


def print_results(run_dir: Path | RunResult) -> None:
    """The results table, fitted to the terminal; the steps it numbers are listed under it."""
    from ycsb_runner.termtable import print_frame

    run = run_dir if isinstance(run_dir, RunResult) else RunResult.load(run_dir)
    df = results_table(run)
    root = run.root
    text, legend = results_text(df)
    if run.manifest.server_caveat:
        legend = [*legend, run.manifest.server_caveat]
    print_frame(
        text,
        title=f"results: {root.name}",
        caption="\n".join(legend) or None,
        console=out_console,
        priority=("#", "operation", "ops/s", "p99 µs", "avg µs", "errors", "p95 µs", "operations"),
    )
