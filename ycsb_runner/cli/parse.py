"""`ycsb-runner parse`: parse captured YCSB output files and print the result (registered by the lead)."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from ycsb_runner.errors import UserError
from ycsb_runner.parse import ParsedRun, parse_export, parse_output

FORMATS = ("table", "csv", "json")
_JSON_START = re.compile(rb"\s*(?:\{|\[\s*\{)\s*\"metric\"")
_TABLE_COLUMNS = [
    ("section", "section"),
    ("operations", "ops"),
    ("average_latency_us", "avg us"),
    ("p95", "p95 us"),
    ("p99", "p99 us"),
    ("max_latency_us", "max us"),
    ("errors", "errors"),
    ("error_rate", "error rate"),
]


def _load(path: Path, stderr: Path | None) -> ParsedRun:
    if not path.is_file():
        raise UserError(f"file not found: {path}")
    data = path.read_bytes()
    if path.suffix.lower() == ".json" or _JSON_START.match(data[:4096]):
        return parse_export(path)
    err_path = stderr
    if err_path is None and path.suffix == ".stdout" and path.with_suffix(".stderr").is_file():
        err_path = path.with_suffix(".stderr")
    if err_path is not None and not err_path.is_file():
        raise UserError(f"file not found: {err_path}")
    return parse_output(data, err_path.read_bytes() if err_path else b"")


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return (
            f"{value:.4f}"
            if abs(value) < 1 and value != 0
            else f"{value:,.0f}"
            if value.is_integer()
            else f"{value:,.1f}"
        )
    return str(value)


def _print_table(console: Console, name: str, run: ParsedRun) -> None:
    v = run.verdict
    style = {"completed": "green", "failed": "red", "truncated": "yellow"}[v.status]
    console.print(
        f"[bold]{name}[/bold]: [{style}]{v.status}[/{style}]  type={run.measurement_type or '?'}  "
        f"runtime={_cell(run.overall.get('runtime_ms'))} ms  "
        f"throughput={_cell(run.overall.get('throughput'))} ops/s",
        highlight=False,
    )
    for reason in v.reasons:
        console.print(f"  - {reason}", highlight=False, markup=False)
    if run.operations.empty:
        return
    table = Table(show_edge=False)
    for _, title in _TABLE_COLUMNS:
        table.add_column(title, justify="left" if title == "section" else "right")
    for _, row in run.operations.iterrows():
        table.add_row(*[_cell(row.get(col)) for col, _ in _TABLE_COLUMNS])
    console.print(table)


def _json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def parse_cmd(
    files: list[Path] = typer.Argument(..., help="Captured YCSB stdout file(s), or JSON export files."),
    stderr: Path | None = typer.Option(
        None,
        "--stderr",
        help="The run's captured stderr (one file only; default: <name>.stderr beside <name>.stdout).",
    ),
    fmt: str = typer.Option("table", "--format", "-f", help="Output format: table, csv or json."),
) -> None:
    """Parse captured YCSB 0.17.0 output: verdict, overall figures and per-operation latencies."""
    try:
        _run(files, stderr, fmt)
    except UserError as err:
        Console(stderr=True, soft_wrap=True).print(f"error: {err}", markup=False, highlight=False)
        raise typer.Exit(err.exit_code) from None


def _run(files: list[Path], stderr: Path | None, fmt: str) -> None:
    if fmt not in FORMATS:
        raise UserError(f"unknown --format {fmt!r}: use one of {', '.join(FORMATS)}")
    if stderr is not None and len(files) != 1:
        raise UserError(
            "--stderr goes with exactly one stdout file; name the files <run>.stdout/<run>.stderr instead"
        )
    runs = [(str(path), _load(path, stderr)) for path in files]

    if fmt == "table":
        console = Console()
        for name, run in runs:
            _print_table(console, name, run)
    elif fmt == "csv":
        frames = []
        for name, run in runs:
            ops = run.operations.copy()
            ops.insert(0, "verdict", run.verdict.status)
            ops.insert(0, "file", name)
            frames.append(ops)
        pd.concat(frames, ignore_index=True).to_csv(sys.stdout, index=False)
    else:
        payload = [
            {
                "file": name,
                "verdict": {"status": run.verdict.status, "reasons": run.verdict.reasons},
                "measurement_type": run.measurement_type,
                "overall": run.overall,
                "operations": json.loads(run.operations.to_json(orient="records")),
            }
            for name, run in runs
        ]
        sys.stdout.write(json.dumps(_json_safe(payload), indent=2) + "\n")
