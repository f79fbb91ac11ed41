"""`ycsb-runner parse`: parse captured YCSB output files and print the result."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from ycsb_runner.cli.options import Format, FormatOpt
from ycsb_runner.errors import UserError
from ycsb_runner.output import View, cell_text, renderer
from ycsb_runner.textsafe import terminal

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


def _print_table(console: Console, name: str, run: ParsedRun, *, with_operations: bool = True) -> None:
    v = run.verdict
    style = {"completed": "green", "failed": "red", "truncated": "yellow"}[v.status]
    console.print(
        f"[bold]{escape(terminal(name))}[/bold]: [{style}]{v.status}[/{style}]  "
        f"type={escape(terminal(run.measurement_type or '?'))}  "
        f"runtime={cell_text(run.overall.get('runtime_ms'), fine=True)} ms  "
        f"throughput={cell_text(run.overall.get('throughput'), fine=True)} ops/s",
        highlight=False,
    )
    for reason in v.reasons:
        console.print(f"  - {terminal(reason)}", highlight=False, markup=False)
    if run.operations.empty or not with_operations:
        return
    import pandas as pd

    rows = [[row.get(col) for col, _ in _TABLE_COLUMNS] for _, row in run.operations.iterrows()]
    _print_frame(console, pd.DataFrame(rows, columns=[title for _, title in _TABLE_COLUMNS]))


def _json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


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


def _print_frame(console: Console, frame: pd.DataFrame, limit: int | None = None) -> None:
    """*frame* fitted to the terminal (``termtable``: numbers whole, columns that do not fit named)."""
    if frame.empty:
        console.print("  (no rows)", highlight=False)
        return
    from ycsb_runner.termtable import print_frame

    shown = frame if limit is None else frame.head(limit)
    text = shown.apply(lambda col: col.map(lambda v: cell_text(v, fine=True)))
    print_frame(text, console=console, priority=tuple(shown.columns[:1]))  # numbers never cut (termtable)
    if limit is not None and len(frame) > limit:
        console.print(f"  ... {len(frame) - limit} more rows (use --format csv for all)", highlight=False)


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
    """Parse captured YCSB output: verdict, overall figures and the chosen table."""
    try:
        _run(files, stderr, fmt, table)
    except UserError as err:
        Console(stderr=True, soft_wrap=True).print(f"error: {terminal(err)}", markup=False, highlight=False)
        raise typer.Exit(err.exit_code) from None


class ParsedDocument:
    """The parsed captures (``(file name, run)`` pairs) and the chosen table of each, for ``--format``'s
    renderer: a view per file (titled with its verdict; keyed by file and verdict in one CSV); its own
    terminal view (verdict, figures and reasons above each table) and JSON document (every figure)."""

    def __init__(self, runs: list[tuple[str, ParsedRun]], table: str) -> None:
        self.runs, self.table = runs, table

    def views(self) -> list[View]:
        return [
            View(
                _frame(run, self.table),
                f"{name}: {run.verdict.status}",
                keys={"file": name, "verdict": run.verdict.status},
            )
            for name, run in self.runs
        ]

    def as_table(self) -> None:
        console = Console()
        for name, run in self.runs:
            if self.table == DEFAULT_TABLE:
                _print_table(console, name, run)
                continue
            _print_table(console, name, run, with_operations=False)
            shown = _frame(run, self.table)
            shown = shown[[c for c in _SHOWN[self.table] if c in shown.columns]]
            if self.table == "summary":
                shown = shown.rename(columns={"value_str": "value"})
            _print_frame(console, shown, limit=None if self.table == "summary" else 200)

    def as_json(self) -> None:
        payload = [
            {
                "file": name,
                "verdict": {"status": run.verdict.status, "reasons": run.verdict.reasons},
                "measurement_type": run.measurement_type,
                "overall": run.overall,
                "notes": run.notes,
                "sections": _sections(run),
                self.table: json.loads(_frame(run, self.table).to_json(orient="records", date_format="iso")),
            }
            for name, run in self.runs
        ]
        sys.stdout.write(json.dumps(_json_safe(payload), indent=2) + "\n")


def _run(files: list[Path], stderr: Path | None, fmt: Format | str, table: str = DEFAULT_TABLE) -> None:
    shown_as = renderer(fmt)
    if table not in TABLES:
        raise UserError(f"unknown --table {table!r}: use one of {', '.join(TABLES)}")
    if stderr is not None and len(files) != 1:
        raise UserError(
            "--stderr goes with exactly one stdout file; name the files <run>.stdout/<run>.stderr instead"
        )
    runs = [(str(path), _load(path, stderr, table)) for path in files]
    shown_as.document(ParsedDocument(runs, table))
