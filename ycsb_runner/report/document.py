"""What a report says, without its format: a title, sections of blocks (banners, tables, facts, figures,
notes). Text is kept as it came from the data; a page writer (``html``, ``markdown``) or a format of
``output.FORMATS`` escapes it for its medium, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.output import View


@dataclass(frozen=True)
class Banner:
    """What the reader must see before any figure (a failed run, an unverified audit): *lead* in bold before
    the text, or the whole text in bold (*strong*); *anchor*: the page's id for it; *failure*: a failure's
    colour."""

    text: str
    lead: str = ""
    strong: bool = False
    anchor: str = ""
    failure: bool = False


@dataclass(frozen=True)
class Table:
    """A frame shown with its headers in words (``output.column_label``) and its numbers by
    ``output.cell_text``."""

    frame: pd.DataFrame


@dataclass(frozen=True)
class Facts:
    """(label, value) lines describing a run; *listed*: a list in Markdown (else a two-column table)."""

    rows: list[tuple[str, str]]
    listed: bool = False


@dataclass(frozen=True)
class Figure:
    """A plot: one PNG per panel, its files named by *stem* (``markdown.panel_files``); *numbered*:
    the panels side by side, each named "(i/n)", the caption under them (else one image and its caption)."""

    stem: str
    caption: str
    panels: list[bytes]
    numbered: bool = True


@dataclass(frozen=True)
class Note:
    """A paragraph: *plain*, an *aside* (nothing to show: italic in Markdown) or a *warning*."""

    text: str
    kind: Literal["plain", "aside", "warning"] = "plain"


Block = Banner | Table | Facts | Figure | Note


@dataclass
class Section:
    """A heading (none: the blocks before the first heading) and its blocks, in order."""

    heading: str | None
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Document:
    """A report: *title* (the page's), *heading* (its first line), its sections; *figure_dir*: the folder
    beside the page that holds the figures' files (the Markdown page links them)."""

    title: str
    heading: str
    sections: list[Section]
    figure_dir: str

    def views(self) -> list[View]:
        """What any ``--format`` shows of it (``output.Renderer.report``): per section its tables, its facts
        (what, value), its figures (caption, files) and its banners and notes (text) as tables titled by the
        section's heading."""
        return [view for section in self.sections for view in _section_views(self, section)]


def _section_views(doc: Document, section: Section) -> list[View]:
    import pandas as pd

    from ycsb_runner.output import View
    from ycsb_runner.report.markdown import panel_files

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
    """*doc* as plain data (the JSON format): its sections, each block by its kind, a table as its rows
    (raw values, column names as stored), a figure as its caption and file names."""
    import json

    def block(b: Block) -> dict[str, Any]:
        if isinstance(b, Table):
            return {"table": json.loads(b.frame.to_json(orient="records", force_ascii=False))}
        if isinstance(b, Facts):
            return {"facts": dict(b.rows)}
        if isinstance(b, Figure):
            from ycsb_runner.report.markdown import panel_files

            return {"figure": b.caption, "files": [f"{doc.figure_dir}/{n}" for n, _ in panel_files(b)]}
        if isinstance(b, Banner):
            return {"banner": _said(b)}
        return {"note": b.text, "kind": b.kind}

    sections = [
        {
            "heading": s.heading,
            "blocks": [block(b) for b in s.blocks if not (isinstance(b, Note) and not b.text)],
        }
        for s in doc.sections
    ]
    return {"title": doc.heading, "sections": sections}
