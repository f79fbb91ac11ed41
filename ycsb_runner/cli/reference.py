"""`ycsb-runner reference`: list and show the published vendor reference tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from ycsb_runner.cli.options import Format, FormatOpt, emit
from ycsb_runner.console import out_console
from ycsb_runner.output import View, renderer

if TYPE_CHECKING:  # the tables (pandas) load when a command shows one, not for --help
    import pandas as pd

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
    from ycsb_runner.reference import load_reference, select
    from ycsb_runner.reference.english import with_english

    frame = with_english(load_reference(name))
    rows = select(frame, size=size, mix=mix, storage=storage)
    renderer(output_format).document(ReferenceDocument(name, frame, rows, wide))


class ReferenceDocument:
    """A published table's selected *rows* of the whole *frame*, for ``--format``'s renderer: its own text
    for the built-in formats (whole-number floats as integers, numbers right-aligned in Markdown, the
    provenance in JSON, the main columns on a terminal), else one view of the rows."""

    def __init__(self, name: str, frame: pd.DataFrame, rows: pd.DataFrame, wide: bool) -> None:
        self.name, self.frame, self.rows, self.wide = name, frame, rows, wide
        self.provenance = frame.attrs["provenance"]

    def views(self) -> list[View]:
        return [View(self.rows, self.provenance["title"], {"name": self.name, "provenance": self.provenance})]

    def as_csv(self) -> None:
        from ycsb_runner.reference.text import to_csv

        typer.echo(to_csv(self.rows, self.frame), nl=False)

    def as_markdown(self) -> None:
        from ycsb_runner.reference.text import to_markdown

        typer.echo(to_markdown(self.rows, self.frame), nl=False)

    def as_json(self) -> None:
        from ycsb_runner.reference.text import to_json_document

        typer.echo(to_json_document(self.name, self.rows, self.provenance), nl=False)

    def as_table(self) -> None:
        from ycsb_runner.reference.text import tidy_numbers

        prov, rows, frame = self.provenance, self.rows, self.frame
        columns = (
            list(rows.columns) if self.wide else [c for c in prov["display_columns"] if c in rows.columns]
        )
        _print_table(
            tidy_numbers(rows[columns], frame[columns]),
            title=prov["title"],
            caption=f"{prov['source']}; {len(rows)} of {len(frame)} rows; "
            "provenance and notes: --format json",
            wide=self.wide,
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

    from ycsb_runner.output import cell_text
    from ycsb_runner.termtable import print_frame

    text = pd.DataFrame(
        {column_header(c): [cell_text(v, fine=True) for v in frame[c]] for c in frame.columns}
    )
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
