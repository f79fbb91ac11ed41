"""What a report says, without its format: a title, sections of blocks (banners, tables, facts, figures,
notes). Text is kept as it came from the data; a page writer (``html``, ``markdown``) or a format of
``output.FORMATS`` (through ``printed.PrintedReport``) escapes it for its medium, once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pandas as pd


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
    """A heading (none: the blocks before the first heading) and its blocks, in order; *summary*: the
    answer a report opens with (JSON: its own ``summary`` key, beside the sections)."""

    heading: str | None
    blocks: list[Block] = field(default_factory=list)
    summary: bool = False


@dataclass
class Document:
    """A report: *title* (the page's), *heading* (its first line), its sections; *figure_dir*: the folder
    beside the page that holds the figures' files (the Markdown page links them)."""

    title: str
    heading: str
    sections: list[Section]
    figure_dir: str
