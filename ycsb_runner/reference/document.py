"""``reference show`` as a document: a published table's selected rows, shown by every format's renderer
(``output.FORMATS``)."""

from __future__ import annotations

import json

from ycsb_runner.present.document import Document, Table
from ycsb_runner.present.output import column_label
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
) -> Document:
    """The published table *name* (with its English columns), its rows selected by *size*, *mix* and
    *storage*, as one table: whole-number floats as integers (``tidy_numbers``), figures as published
    (``fine``); a terminal shows the main columns (every one with *wide*) by their headers in words; JSON
    writes ``{"name", "provenance", "rows": [...]}``: the rows as published (NaN as null)."""
    frame = with_english(load_reference(name))
    rows = select(frame, size=size, mix=mix, storage=storage)
    prov = provenance(name)
    shown = list(rows.columns) if wide else [c for c in prov["display_columns"] if c in rows.columns]
    keys = [c for c in shown if c in ("mix", "size", "threads", "storage")]
    setup = [c for c in shown if c in ("records", "disk_gb")]
    priority = keys + [c for c in shown if c not in keys + setup] + setup
    table = Table(
        tidy_numbers(rows, frame),
        title=prov["title"],
        extra={"name": name, "provenance": prov},
        priority=tuple(priority),
        wide=wide,
        caption=f"{prov['source']}; {len(rows)} of {len(frame)} rows; provenance and notes: --format json",
        labels={c: column_label(c) for c in shown},
        fine=True,
        columns=tuple(shown),
        hint="--wide shows them",
        heading=False,
    )

    def data() -> dict[str, object]:
        records = json.loads(rows.to_json(orient="records", force_ascii=False))
        return {"name": name, "provenance": prov, "rows": records}

    return Document.of(table, data=data)
