"""`ycsb-runner reference`: list and show the published vendor reference tables."""

from __future__ import annotations

import typer

from ycsb_runner.cli.options import Format, FormatOpt, emit
from ycsb_runner.present.output import renderer

app = typer.Typer(
    help="Published vendor reference tables (Alibaba audit overhead, Tencent MongoDB per size and per "
    "thread count) shipped with ycsb-runner, with their provenance.",
    no_args_is_help=True,
)


@app.command("list")
def list_command(
    output_format: FormatOpt = Format.table,
) -> None:
    """List the reference tables: name, rows, title and source document."""
    import pandas as pd

    from ycsb_runner.reference import list_references

    rows = [{"name": i.name, "rows": i.rows, "title": i.title, "source": i.source} for i in list_references()]
    emit(pd.DataFrame(rows, columns=["name", "rows", "title", "source"]), output_format, "Reference tables")


@app.command("show")
def show_command(
    name: str = typer.Argument(..., metavar="NAME", help="Table name, see `ycsb-runner reference list`."),
    output_format: FormatOpt = Format.table,
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
    from ycsb_runner.reference.document import reference_document

    doc = reference_document(name, size=size, mix=mix, storage=storage, wide=wide)
    renderer(output_format).document(doc)
