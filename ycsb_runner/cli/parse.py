"""`ycsb-runner parse`: parse captured YCSB output files and print the result."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from ycsb_runner.cli.options import Format, FormatOpt
from ycsb_runner.errors import UserError
from ycsb_runner.present.document import Document, Table
from ycsb_runner.present.output import cell_text, renderer
from ycsb_runner.safe.text import terminal

if TYPE_CHECKING:  # the parsers (pandas) load when a file is parsed, not for --help
    import pandas as pd

    from ycsb_runner.parse import ParsedRun

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


def _load(path: Path, stderr: Path | None, table: str = "operations") -> ParsedRun:
    """One file, by the entry point it needs (``parse_file``): every status line kept only when ``--table
    status`` asks for them all."""
    from ycsb_runner.parse.files import parse_file

    return parse_file(path, stderr, keep_status=table == "status")


def _completion_lines(name: str, run: ParsedRun) -> tuple[str, ...]:
    """What a terminal shows above a capture's table: its completion and figures, then each reason."""
    v = run.completion
    head = (
        f"{name}: {v.status}  type={run.measurement_type or '?'}  "
        f"runtime={cell_text(run.overall.get('runtime_ms'), fine=True)} ms  "
        f"throughput={cell_text(run.overall.get('throughput'), fine=True)} ops/s"
    )
    return (head, *(f"  - {reason}" for reason in v.reasons))


# --table: which of the parser's frames to print. `operations` is the default because it is the view a user
# asks for first (one row per operation: counts, latencies, percentiles, errors) and what `parse` printed
# before --table existed; `summary` is the long form of every `[SECTION], metric, value` line YCSB printed
# ([OVERALL], each GC collector, JVM, every operation), as in the run folder's summary.csv.
TABLES = ("operations", "summary", "status", "histogram", "timeseries", "raw")
DEFAULT_TABLE = "operations"


# Columns a terminal table shows (csv and json have every column).
_SHOWN = {
    "summary": ["section", "metric", "value_str"],
    "status": ["elapsed_s", "total_ops", "current_ops_per_s", "section", "count", "avg", "p99", "max"],
    "histogram": ["section", "source", "bucket", "lower_us", "upper_us", "count"],
    "timeseries": ["section", "offset_ms", "avg_latency_us"],
    "raw": ["section", "timestamp_ms", "latency_us"],
}


def _frame(run: ParsedRun, table: str) -> pd.DataFrame:
    return getattr(run, table)


def _sections(run: ParsedRun) -> dict[str, dict[str, object]]:
    """Every summary line as {section: {metric: value}}, in printed order (GC per collector included)."""
    out: dict[str, dict[str, object]] = {}
    for section, metric, value, text in run.summary[["section", "metric", "value", "value_str"]].itertuples(
        index=False
    ):
        number = None if value is None or (isinstance(value, float) and math.isnan(value)) else value
        out.setdefault(section, {})[metric] = number if number is not None else (text or None)
    return out


def parse_cmd(
    files: list[Path] = typer.Argument(
        ..., metavar="FILE...", help="Captured YCSB stdout file(s), or JSON export files."
    ),
    stderr: Path | None = typer.Option(
        None,
        "--stderr",
        metavar="FILE",
        help="The run's captured stderr (one file only; default: <name>.stderr beside <name>.stdout).",
    ),
    fmt: FormatOpt = Format.table,
    table: str = typer.Option(
        DEFAULT_TABLE,
        "--table",
        "-t",
        metavar="TABLE",
        help="What to print: operations (default: one row per operation), summary (every "
        "[SECTION], metric, value line: OVERALL, each GC collector, ...), status (status lines), "
        "histogram (buckets), timeseries or raw.",
    ),
) -> None:
    """Parse captured YCSB output: status, overall figures and the chosen table."""
    try:
        _run(files, stderr, fmt, table)
    except UserError as err:
        Console(stderr=True, soft_wrap=True).print(f"error: {terminal(err)}", markup=False, highlight=False)
        raise typer.Exit(err.exit_code) from None


def parsed_document(runs: list[tuple[str, ParsedRun]], table: str) -> Document:
    """The parsed captures (``(file name, run)`` pairs) and the chosen *table* of each as a document: a table
    per file (titled with its status; keyed by file and status in one CSV; on a terminal its status,
    figures and reasons above the table's main columns) and, for JSON, every figure (``_data``)."""
    return Document.of(*(_table(name, run, table) for name, run in runs), data=lambda: _data(runs, table))


def _table(name: str, run: ParsedRun, table: str) -> Table:
    frame = _frame(run, table)
    if table == DEFAULT_TABLE:
        columns, labels = [c for c, _ in _TABLE_COLUMNS], dict(_TABLE_COLUMNS)
    else:
        columns, labels = [c for c in _SHOWN[table] if c in frame.columns], {"value_str": "value"}
    return Table(
        frame,
        title=f"{name}: {run.completion.status}",
        keys={"file": name, "status": run.completion.status},
        priority=tuple(columns[:1]),
        labels=labels,
        fine=True,
        columns=tuple(columns),
        limit=None if table in (DEFAULT_TABLE, "summary") else 200,
        hint="--format csv shows them",
        lines=_completion_lines(name, run),
    )


def _data(runs: list[tuple[str, ParsedRun]], table: str) -> list[dict[str, object]]:
    """Per file its completion (status and reasons), overall figures, notes, every summary section and the
    chosen table."""
    out: list[dict[str, object]] = []
    for name, run in runs:
        completion = {"status": run.completion.status, "reasons": run.completion.reasons}
        out.append(
            {
                "file": name,
                "completion": completion,
                # completion's old name, still written in this release (docs/reference/commands.md)
                "verdict": completion,
                "measurement_type": run.measurement_type,
                "overall": run.overall,
                "notes": run.notes,
                "sections": _sections(run),
                table: json.loads(_frame(run, table).to_json(orient="records", date_format="iso")),
            }
        )
    return out


def _run(files: list[Path], stderr: Path | None, fmt: Format | str, table: str = DEFAULT_TABLE) -> None:
    shown_as = renderer(fmt)
    if table not in TABLES:
        raise UserError(f"unknown --table {table!r}: use one of {', '.join(TABLES)}")
    if stderr is not None and len(files) != 1:
        raise UserError(
            "--stderr goes with exactly one stdout file; name the files <run>.stdout/<run>.stderr instead"
        )
    runs = [(str(path), _load(path, stderr, table)) for path in files]
    shown_as.document(parsed_document(runs, table))
