"""The results table printed after a run: throughput and latency per operation per step."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ycsb_runner.present.console import out_console
from ycsb_runner.present.document import Document, Table
from ycsb_runner.present.output import cell_text, renderer
from ycsb_runner.runs.model import KEY_COLUMNS, RunResult, whole_steps

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


def _step_no(step: str) -> str:
    """``03-run-read100-t2-r1`` -> ``03`` (the whole name when it has no number)."""
    head = str(step).split("-", 1)[0]
    return head if head.isdigit() else str(step)


MOVING = "moving"  # the column of a run step whose steady-state window was not stationary


def results_text(df: pd.DataFrame, moving: dict[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The results table as text cells, step names replaced by their number, the step's throughput on its
    first row only (it is the step's, not the operation's), and the legend of the steps. *moving*
    (``table.moving_cells``): when a run step is not stationary, a ``moving`` column with what its
    steady-state window did ("+75 %" over that window, "stall") on the step's first row."""
    shown = {k: v for k, v in (moving or {}).items() if v not in ("-", "too short")}
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
                "operations": cell_text(row.operations, decimals=0),
                "ops/s": cell_text(row.throughput_ops_s, decimals=0) if first else "",
                "avg µs": cell_text(row.average_latency_us, decimals=0),
                "p95 µs": cell_text(row.p95_us, decimals=0),
                "p99 µs": cell_text(row.p99_us, decimals=0),
                "errors": cell_text(100 * row.error_rate, decimals=2, unit="%"),
                MOVING: shown.get(str(row.step), "") if first else "",
            }
        )
    columns = ["#", "operation", "operations", "ops/s", "avg µs", "p95 µs", "p99 µs", "errors"]
    columns += [MOVING] if shown else []
    return pd.DataFrame(rows, columns=columns), list(legend.values())


def attention_line(run: RunResult) -> str | None:
    """How many steps need attention and why, in one short line ("2 of 12 run steps still moving: see the
    moving column; 1 step not completed; 1 too short to judge"), or None."""
    from ycsb_runner.analyse.table import moving_cells

    steps = run.steps
    if steps.empty:
        return None
    said = []
    cells = moving_cells(steps)
    moving = [s for s, v in cells.items() if v not in ("-", "too short")]
    runs = int((steps["phase"] == "run").sum())
    if moving:
        said.append(f"{len(moving)} of {runs} run steps still moving: see the {MOVING} column")
    if "status" in steps:
        failed = int((~steps["status"].isin(["completed"]) & steps["phase"].isin(["load", "run"])).sum())
        if failed:
            said.append(f"{failed} step{'s' if failed != 1 else ''} not completed")
    short = sum(v == "too short" for v in cells.values())
    if short:
        said.append(f"{short} too short to judge")
    return "; ".join(said) or None


def footer_lines(run: RunResult) -> list[str]:
    """At most three lines under the results table: where the report is, how many steps need attention
    and why, the run id."""
    from ycsb_runner.runs.model import REPORT_HTML

    page = run.root / REPORT_HTML
    lines = [f"report: {page}" if page.is_file() else f"results: {run.root}"]
    if attention := attention_line(run):
        lines.append(attention)
    lines.append(f"run id: {run.manifest.run_id}")
    return lines


def print_results(run_dir: Path | RunResult, footer: bool = False) -> None:
    """The results table, fitted to the terminal (the terminal renderer, ``output``); the steps it numbers
    are listed under it; with *footer*, at most three lines after it (``footer_lines``)."""
    from rich.text import Text

    from ycsb_runner.analyse.caveats import server_caveat
    from ycsb_runner.analyse.table import moving_cells
    from ycsb_runner.safe import text as textsafe

    run = run_dir if isinstance(run_dir, RunResult) else RunResult.load(run_dir)
    df = results_table(run)
    text, legend = results_text(df, moving_cells(run.steps))
    if server := server_caveat(run.manifest.target):
        legend = [*legend, server]
    table = Table(
        text,
        title=f"results: {run.root.name}",
        caption=legend or None,  # one line per step: each escaped, the lines kept
        priority=("#", "operation", "ops/s", MOVING, "p99 µs", "avg µs", "errors", "p95 µs", "operations"),
        hint="--format csv shows them",
    )
    renderer("table").document(Document.of(table))
    if footer:
        for line in footer_lines(run):
            out_console.print(Text(textsafe.terminal(line)))
