"""`ycsb-runner reference`: list and show the published vendor reference tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ycsb_runner.cli.options import Format, emit
from ycsb_runner.console import out_console

if TYPE_CHECKING:  # the tables (pandas) load when a command shows one, not for --help
    import pandas as pd

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
    import pandas as pd

    from ycsb_runner.reference import list_references

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
    from ycsb_runner.reference import load_reference, select
    from ycsb_runner.reference.english import with_english
    from ycsb_runner.reference.render import tidy_numbers, to_csv, to_json_document, to_markdown

    frame = with_english(load_reference(name))
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
            wide=wide,
        )


_UNITS = (("_ops_s", "ops/s"), ("_us", "µs"), ("_pct", "%"), ("_pp", "pp"), ("_gb", "GB"))
_ACRONYMS = {"ral": "RAL", "wal": "WAL", "cpu": "CPU", "rt": "RT", "ycsb": "YCSB"}


def column_header(name: str) -> str:
    """``throughput_ops_s`` -> ``throughput (ops/s)``, ``ral_us`` -> ``RAL (µs)``: words and unit."""
    unit = ""
    for suffix, label in _UNITS:
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], label
            break
    words = " ".join(_ACRONYMS.get(w, w) for w in name.split("_"))
    return f"{words} ({unit})" if unit else words


def _print_table(frame: pd.DataFrame, *, title: str, caption: str, wide: bool) -> None:
    """Fitted to the terminal (``termtable``): hidden columns are named; ``--wide``: one block per row."""
    import pandas as pd

    from ycsb_runner.reference.render import cell_text
    from ycsb_runner.termtable import print_frame

    text = pd.DataFrame({column_header(c): [cell_text(v) for v in frame[c]] for c in frame.columns})
    keys = [c for c in text.columns if c in ("mix", "size", "threads", "storage")]
    setup = [c for c in text.columns if c in ("records", "disk (GB)")]
    priority = keys + [c for c in text.columns if c not in keys + setup] + setup
    print_frame(
        text,
        title=title,
        caption=caption,
        console=out_console,
        priority=tuple(priority),
        wide=wide,
        show_all_hint="--wide shows them",
    )
