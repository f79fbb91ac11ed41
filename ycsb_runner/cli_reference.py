"""`ycsb-runner reference`: list and show the published vendor reference tables."""

from __future__ import annotations

from enum import StrEnum

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from ycsb_runner.reference import list_references, load_reference, select
from ycsb_runner.reference.render import (
    cell_text,
    is_number_column,
    tidy_numbers,
    to_csv,
    to_json_document,
    to_markdown,
)

app = typer.Typer(
    help="Published vendor reference tables (Alibaba audit overhead, Tencent MongoDB per size and per "
    "thread count) shipped with ycsb-runner, with their provenance.",
    no_args_is_help=True,
)


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    markdown = "markdown"
    json = "json"


@app.command("list")
def list_command() -> None:
    """List the reference tables: name, rows, title and source document."""
    table = Table(title="Reference tables")
    for column in ("name", "rows", "title", "source"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for info in list_references():
        table.add_row(info.name, str(info.rows), info.title, info.source)
    Console().print(table)


@app.command("show")
def show_command(
    name: str = typer.Argument(..., help="Table name, see `ycsb-runner reference list`."),
    output_format: OutputFormat = typer.Option(OutputFormat.table, "--format", "-f", help="Output format."),
    size: str | None = typer.Option(None, "--size", help="Only this instance size, e.g. 4C8G or 4核8GB."),
    mix: str | None = typer.Option(None, "--mix", help="Only this mix: read50_update50, insert100, load ..."),
    storage: str | None = typer.Option(None, "--storage", help="Only this storage type: cloud or physical."),
    wide: bool = typer.Option(
        False, "--wide", help="Table format: show every column, not only the main ones."
    ),
) -> None:
    """Show one reference table (filtered by --size/--mix/--storage) as a table, CSV, Markdown or JSON."""
    frame = load_reference(name)
    prov = frame.attrs["provenance"]
    rows = select(frame, size=size, mix=mix, storage=storage)
    if output_format is OutputFormat.csv:
        typer.echo(to_csv(rows, frame), nl=False)
    elif output_format is OutputFormat.markdown:
        typer.echo(to_markdown(rows, frame), nl=False)
    elif output_format is OutputFormat.json:
        typer.echo(to_json_document(name, rows, prov), nl=False)
    else:
        columns = list(rows.columns) if wide else [c for c in prov["display_columns"] if c in rows.columns]
        _print_table(
            tidy_numbers(rows[columns], frame[columns]),
            title=prov["title"],
            caption=f"{prov['source']}; {len(rows)} of {len(frame)} rows; "
            f"provenance and notes: --format json",
        )


def _print_table(frame: pd.DataFrame, *, title: str, caption: str) -> None:
    table = Table(title=title, caption=caption)
    for column in frame.columns:
        justify = "right" if is_number_column(frame[column]) else "left"
        table.add_column(column, justify=justify, overflow="fold")
    for row in frame.itertuples(index=False):
        table.add_row(*(cell_text(v) for v in row))
    Console().print(table)
