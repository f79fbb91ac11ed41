"""`ycsb-runner reference`: list and show the published vendor reference tables."""

from __future__ import annotations

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from ycsb_runner.cli.options import Format, emit
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


@app.command("list")
def list_command(
    output_format: Format = typer.Option(
        Format.table, "--format", "-f", metavar="FORMAT", help="table, csv, json or markdown."
    ),
) -> None:
    """List the reference tables: name, rows, title and source document."""
    rows = [{"name": i.name, "rows": i.rows, "title": i.title, "source": i.source} for i in list_references()]
    emit(pd.DataFrame(rows, columns=["name", "rows", "title", "source"]), output_format, "Reference tables")


@app.command("show")
def show_command(
    name: str = typer.Argument(..., metavar="NAME", help="Table name, see `ycsb-runner reference list`."),
    output_format: Format = typer.Option(
        Format.table, "--format", "-f", metavar="FORMAT", help="table, csv, json or markdown."
    ),
    size: str | None = typer.Option(
        None, "--size", metavar="SIZE", help="Only this instance size, e.g. 4C8G or 4核8GB."
    ),
    mix: str | None = typer.Option(
        None, "--mix", metavar="MIX", help="Only this mix: read50_update50, insert100, load ..."
    ),
    storage: str | None = typer.Option(
        None, "--storage", metavar="TYPE", help="Only this storage type: cloud or physical."
    ),
    wide: bool = typer.Option(
        False, "--wide", help="Table format: show every column, not only the main ones."
    ),
) -> None:
    """Show one reference table (filtered by --size/--mix/--storage) as a table, CSV, Markdown or JSON."""
    frame = load_reference(name)
    prov = frame.attrs["provenance"]
    rows = select(frame, size=size, mix=mix, storage=storage)
    if output_format is Format.csv:
        typer.echo(to_csv(rows, frame), nl=False)
    elif output_format is Format.markdown:
        typer.echo(to_markdown(rows, frame), nl=False)
    elif output_format is Format.json:
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
