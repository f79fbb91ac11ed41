"""``reference show`` as a document: a published table's selected rows, shown by every ``--format``'s renderer
(``output.FORMATS``)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from ycsb_runner.output import View, column_label
from ycsb_runner.reference import load_reference, provenance, select
from ycsb_runner.reference.english import with_english
from ycsb_runner.reference.text import tidy_numbers


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
    """A published table's selected *rows* of the whole *frame*, for ``--format``'s renderer: one view of
    the rows, whole-number floats as integers (``tidy_numbers``), figures as published (``fine``); a
    terminal shows the main columns (every one with *wide*) by their headers in words; JSON writes the
    rows with the table's provenance (``data``)."""

    def __init__(self, name: str, frame: pd.DataFrame, rows: pd.DataFrame, wide: bool) -> None:
        self.name, self.frame, self.rows, self.wide = name, frame, rows, wide
        self.provenance = provenance(name)

    def views(self) -> list[View]:
        prov, rows = self.provenance, self.rows
        shown = list(rows.columns) if self.wide else [c for c in prov["display_columns"] if c in rows.columns]
        keys = [c for c in shown if c in ("mix", "size", "threads", "storage")]
        setup = [c for c in shown if c in ("records", "disk_gb")]
        priority = keys + [c for c in shown if c not in keys + setup] + setup
        return [
            View(
                tidy_numbers(rows, self.frame),
                prov["title"],
                {"name": self.name, "provenance": prov},
                priority=tuple(priority),
                wide=self.wide,
                caption=f"{prov['source']}; {len(rows)} of {len(self.frame)} rows; "
                "provenance and notes: --format json",
                labels={c: column_label(c) for c in shown},
                fine=True,
                columns=tuple(shown),
                hint="--wide shows them",
                heading=False,
            )
        ]

    def data(self) -> dict[str, Any]:
        """``{"name", "provenance", "rows": [...]}``: the rows as published (NaN as null)."""
        rows = json.loads(self.rows.to_json(orient="records", force_ascii=False))
        return {"name": self.name, "provenance": self.provenance, "rows": rows}
