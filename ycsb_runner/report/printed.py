"""A report printed through ``--format`` (``output.FORMATS``, ``report --format``): every format shows its
sections as tables (``views``), ``markdown`` prints its page, ``json`` the whole report as data."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import typer

from ycsb_runner.output import View
from ycsb_runner.report.document import (
    Banner,
    Block,
    Chart,
    Document,
    Facts,
    Figure,
    Links,
    Note,
    Section,
    Spark,
    Table,
)
from ycsb_runner.report.markdown import page, panel_files


class PrintedReport:
    """*doc* as a command's document (``output.Document``)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc

    def views(self) -> list[View]:
        """Per section its tables, its facts (what, value), its figures (caption, files) and its banners and
        notes (text), each a table titled by the section's heading (CSV: in a ``section`` column)."""
        return [view for section in self.doc.sections for view in _section_views(self.doc, section)]

    def as_markdown(self) -> None:
        """The Markdown page (its figures: the files ``report`` writes beside report.md)."""
        typer.echo(page(self.doc), nl=False)

    def as_json(self) -> None:
        """The whole report as one JSON document (``as_data``)."""
        typer.echo(json.dumps(as_data(self.doc), indent=2, ensure_ascii=False))


def _section_views(doc: Document, section: Section) -> list[View]:
    title = section.heading or doc.heading
    frames = [b.frame for b in section.blocks if isinstance(b, Table)]
    frames += [
        pd.DataFrame(b.rows, columns=["what", "value"]) for b in section.blocks if isinstance(b, Facts)
    ]
    figures = [
        {"figure": b.caption, "files": ", ".join(f"{doc.figure_dir}/{n}" for n, _ in panel_files(b))}
        for b in section.blocks
        if isinstance(b, Figure)
    ]
    said = [_said(b) for b in section.blocks if isinstance(b, Banner | Note) and b.text]
    frames += [pd.DataFrame(rows) for rows in (figures, [{"note": t} for t in said]) if rows]
    return [View(frame, title, keys={"section": title}) for frame in frames]


def _said(b: Banner | Note) -> str:
    return f"{b.lead} {b.text}".strip() if isinstance(b, Banner) else b.text


def as_data(doc: Document) -> dict[str, Any]:
    """*doc* as plain data: its summary (the answer it opens with, ``Section.summary``) and its sections,
    each block by its kind, a table as its rows (raw values, column
    names as stored), a figure as its caption and file names; text as it is (JSON escapes what it must)."""

    def block(b: Block) -> dict[str, Any]:
        if isinstance(b, Table):
            rows = b.frame if b.data is None else b.data
            return {"table": json.loads(rows.to_json(orient="records", force_ascii=False))}
        if isinstance(b, Facts):
            return {"facts": dict(b.rows)}
        if isinstance(b, Figure):
            return {"figure": b.caption, "files": [f"{doc.figure_dir}/{n}" for n, _ in panel_files(b)]}
        if isinstance(b, Banner):
            return {"banner": _said(b)}
        if isinstance(b, Chart):
            return {"chart": b.caption, "traces": b.traces}
        if isinstance(b, Spark):
            return {"series": b.label, "href": b.href, "values": b.values, "state": b.state}
        if isinstance(b, Links):
            return {"links": [{"text": t, "href": h} for t, h in b.items]}
        return {"note": b.text, "kind": b.kind}

    def section(s: Section) -> dict[str, Any]:
        return {
            "heading": s.heading,
            "blocks": [block(b) for b in s.blocks if not (isinstance(b, Note) and not b.text)],
        }

    out: dict[str, Any] = {"title": doc.heading}
    if summary := [section(s) for s in doc.sections if s.summary]:  # the answer the report opens with
        out["summary"] = summary[0] if len(summary) == 1 else summary
    out["sections"] = [section(s) for s in doc.sections if not s.summary]
    return out
