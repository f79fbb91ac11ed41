"""``reference show`` as a document: a published table's selected rows, shown by every ``--format``'s renderer
(``output.FORMATS``), with its own text for the built-in formats."""

from __future__ import annotations

import pandas as pd
import typer

from ycsb_runner.console import out_console
from ycsb_runner.output import View, cell_text, column_label
from ycsb_runner.reference import load_reference, select
from ycsb_runner.reference.english import with_english
from ycsb_runner.reference.text import tidy_numbers, to_csv, to_json_document, to_markdown
from ycsb_runner.termtable import print_frame


def reference_document(
    name: str,
    *,
    size: str | None = None,
    mix: str | None = None,
    storage: str | None = None,
    wide: bool = False,
) -> ReferenceDocument:
    """The published table *name* (with its English columns), its rows selected by *size*, *mix* and
    *storage*; *wide*: every column on a terminal, not only the main ones."""
    frame = with_english(load_reference(name))
    return ReferenceDocument(name, frame, select(frame, size=size, mix=mix, storage=storage), wide)


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
        typer.echo(to_csv(self.rows, self.frame), nl=False)

    def as_markdown(self) -> None:
        typer.echo(to_markdown(self.rows, self.frame), nl=False)

    def as_json(self) -> None:
        typer.echo(to_json_document(self.name, self.rows, self.provenance), nl=False)

    def as_table(self) -> None:
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


def _print_table(frame: pd.DataFrame, *, title: str, caption: str, wide: bool) -> None:
    """Fitted to the terminal (``termtable``): hidden columns are named; ``--wide``: one block per row."""
    text = pd.DataFrame(
        {column_label(c): [cell_text(v, fine=True) for v in frame[c]] for c in frame.columns}
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
