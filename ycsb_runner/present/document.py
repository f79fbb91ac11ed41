"""What the tool shows, without its format: a document (a title, sections of blocks: banners, tables, facts,
figures, notes). A report or a site page is a document; so is every command's answer (``Document.of``: its
tables one after the other). Text is kept as it came from the data; the renderer of a format
(``output.FORMATS``, ``report.html.HTML``) escapes it for its medium, once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

#: What a terminal's table says of the columns it hides (``Table.hint``).
HIDDEN_HINT = "--wide or --format csv shows them"


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
    """A frame, its numbers by ``output.cell_text``. On a page (a report) its headers are in words
    (``output.column_label``); *links*: a column's cells link to the (relative) address in another column,
    which is not shown; *filters*: the HTML page offers a choice of each of these columns' values; *data*:
    the rows for programs (JSON) when they keep more columns than shown.

    A command's table (``Document.of``) is shown under *title* (Markdown: as a heading unless *heading* is
    False); JSON adds *extra*'s keys; CSV and JSON always carry every column and row, raw. The terminal
    shows the *columns* given (all when none; one the frame lacks as "-"), at most *limit* rows, the
    columns of *priority* first when not all fit (the hidden ones named with *hint*), renames columns by
    *labels*, never folds the *whole* columns and prints *caption* (a text, or lines each escaped) under
    it; *wide*: every column, one block per row when they do not fit; *lines*: lines it prints above the
    table in place of its title (``parse``: the status). *fine*: figures as given (``cell_text(fine=True)``:
    ``parse``, the published tables) in the terminal and Markdown tables, Markdown's number columns
    right-aligned. *keys*: what tells this table from the others of its document (``parse``: file and
    status); CSV writes a document as one table with these as its first columns (a page's tables: their
    section's heading, ``Document.tables``)."""

    frame: pd.DataFrame
    links: dict[str, str] = field(default_factory=dict)  # column -> the column holding its cells' hrefs
    filters: tuple[str, ...] = ()  # columns the HTML page filters the rows by (a select each)
    data: pd.DataFrame | None = None  # the rows for programs (JSON) when they keep more columns than shown
    title: str = ""
    extra: dict[str, Any] | None = None
    priority: tuple[str, ...] = ()
    wide: bool = False
    caption: str | Sequence[str] | None = None
    labels: dict[str, str] | None = None
    whole: tuple[str, ...] = ()
    keys: dict[str, Any] | None = None
    fine: bool = False
    columns: tuple[str, ...] = ()
    limit: int | None = None
    hint: str = HIDDEN_HINT
    heading: bool = True
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Facts:
    """(label, value) lines describing a run; *listed*: a list in Markdown (else a two-column table)."""

    rows: list[tuple[str, str]]
    listed: bool = False


#: A figure's panel: its PNG, or a way to draw it (called only by a renderer that shows pixels).
Panel = bytes | Callable[[], bytes]


@dataclass(frozen=True)
class Figure:
    """A plot: one PNG per panel, its files named by *stem* (``names``, ``files``); *numbered*: the panels
    side by side, each named "(i/n)", the caption under them (else one image and its caption).

    *drawn*: each panel's PNG or the way to draw it; ``panels`` draws them the first time it is asked (the
    HTML page, the figure files beside a Markdown page): a renderer that only names the files (JSON, CSV,
    the terminal, Markdown's text) never starts matplotlib."""

    stem: str
    caption: str
    drawn: Sequence[Panel]
    numbered: bool = True

    @cached_property
    def panels(self) -> list[bytes]:
        """Each panel's PNG, drawn once."""
        return [p if isinstance(p, bytes) else p() for p in self.drawn]

    def names(self) -> list[str]:
        """Each panel's file name: ``<stem>.png``, or ``<stem>-<i>.png`` for several (nothing drawn)."""
        if len(self.drawn) == 1:
            return [f"{self.stem}.png"]
        return [f"{self.stem}-{i}.png" for i in range(1, len(self.drawn) + 1)]

    def files(self) -> list[tuple[str, bytes]]:
        """(file name, PNG) of each panel (``names``), drawn."""
        return list(zip(self.names(), self.panels, strict=True))


@dataclass(frozen=True)
class Note:
    """A paragraph: *plain*, an *aside* (nothing to show: italic in Markdown) or a *warning*."""

    text: str
    kind: Literal["plain", "aside", "warning"] = "plain"


@dataclass(frozen=True)
class Chart:
    """An interactive chart (a page of a site, ``ycsb_runner.site``): *traces* and *layout* as the charting
    script takes them (Plotly's figure JSON), written into the page as data, drawn by the page's scripts
    (``Document.scripts``); a trace's ``customdata`` of links makes a click on a point open that link.
    *caption*: what it shows, in words (the Markdown page shows only it)."""

    caption: str
    traces: list[dict[str, Any]]
    layout: dict[str, Any]
    height: int = 420


@dataclass(frozen=True)
class Spark:
    """A small pre-drawn line of a series (*values*: None for a night left out) linked to *href* (relative),
    *label* under it; *marks*: indices of nights marked (change points); *state*: a verdict shown beside the
    label (a regression in a failure's colour)."""

    label: str
    href: str
    values: list[float | None]
    marks: list[int] = field(default_factory=list)
    state: str = ""


@dataclass(frozen=True)
class Links:
    """A line of links (*text*, relative *href*): a page's way to the others."""

    items: list[tuple[str, str]]


Block = Banner | Table | Facts | Figure | Note | Chart | Spark | Links


@dataclass
class Section:
    """A heading (none: the blocks before the first heading) and its blocks, in order; *summary*: the
    answer a report opens with (JSON: its own ``summary`` key, beside the sections)."""

    heading: str | None
    blocks: list[Block] = field(default_factory=list)
    summary: bool = False


@dataclass
class Document:
    """What the tool shows: *title* (a page's), *heading* (its first line), its sections; *figure_dir*: the
    folder beside the page that holds the figures' files (the Markdown page links them); *scripts*:
    relative paths of the scripts the HTML page loads (a site's shared assets). *page*: a page (a report,
    a site's page: headed, its sections headed), else a command's answer (``of``: its tables one after the
    other); *data*: what a data format (JSON) writes for it when not its blocks (``parse``, ``reference
    show``: every figure; none: a page as ``as_data``, an answer's tables as ``table_data``)."""

    title: str
    heading: str
    sections: list[Section]
    figure_dir: str = ""
    scripts: tuple[str, ...] = ()
    data: Any = None
    page: bool = True

    @classmethod
    def of(cls, *tables: Table, data: Any = None) -> Document:
        """A command's answer: *tables*, one after the other (the first's title is the document's)."""
        title = tables[0].title if tables else ""
        return cls(title, title, [Section(None, list(tables))], data=data, page=False)

    def tables(self) -> list[Table]:
        """Every table a table format shows: an answer's tables; a page's, per section its tables, its facts
        (what, value), its figures (caption, files) and its banners and notes (text), each titled by the
        section's heading and keyed by it (CSV: a ``section`` column)."""
        if not self.page:
            return [b for s in self.sections for b in s.blocks if isinstance(b, Table)]
        return [table for section in self.sections for table in _section_tables(self, section)]


def _section_tables(doc: Document, section: Section) -> list[Table]:
    import pandas as pd

    title = section.heading or doc.heading
    frames = [b.frame for b in section.blocks if isinstance(b, Table)]
    frames += [
        pd.DataFrame(b.rows, columns=["what", "value"]) for b in section.blocks if isinstance(b, Facts)
    ]
    figures = [
        {"figure": b.caption, "files": ", ".join(f"{doc.figure_dir}/{n}" for n in b.names())}
        for b in section.blocks
        if isinstance(b, Figure)
    ]
    said = [_said(b) for b in section.blocks if isinstance(b, Banner | Note) and b.text]
    frames += [pd.DataFrame(rows) for rows in (figures, [{"note": t} for t in said]) if rows]
    return [Table(frame, title=title, keys={"section": title}) for frame in frames]


def figure_files(doc: Document) -> list[tuple[str, bytes]]:
    """(file name in ``doc.figure_dir``, PNG) of every figure's panels: the files a page links."""
    return [
        file
        for section in doc.sections
        for block in section.blocks
        if isinstance(block, Figure)
        for file in block.files()
    ]


def table_data(table: Table) -> dict[str, Any]:
    """A command's table as plain data: ``{"title", ...extra, "rows": [...]}`` (raw values, column names as
    stored, NaN as None)."""
    import json

    records = json.loads(table.frame.to_json(orient="records", force_ascii=False))
    return {"title": table.title, **(table.extra or {}), "rows": records}


def _said(b: Banner | Note) -> str:
    return f"{b.lead} {b.text}".strip() if isinstance(b, Banner) else b.text


def as_data(doc: Document) -> dict[str, Any]:
    """*doc* as plain data: its summary (the answer it opens with, ``Section.summary``) and its sections,
    each block by its kind, a table as its rows (raw values, column
    names as stored), a figure as its caption and file names; text as it is (JSON escapes what it must)."""
    import json

    def block(b: Block) -> dict[str, Any]:
        if isinstance(b, Table):
            rows = b.frame if b.data is None else b.data
            return {"table": json.loads(rows.to_json(orient="records", force_ascii=False))}
        if isinstance(b, Facts):
            return {"facts": dict(b.rows)}
        if isinstance(b, Figure):
            return {"figure": b.caption, "files": [f"{doc.figure_dir}/{n}" for n in b.names()]}
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
    out["sections"] = [section(s) for s in doc.sections]  # every section, the answer too: the page's order
    return out
