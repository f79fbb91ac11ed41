"""How the tool shows what it answers: one ``Renderer`` per format writes any document
(``ycsb_runner.present.document``: a report, a site page or a command's answer, ``Document.of``): the
terminal, CSV, JSON and Markdown (registered in ``FORMATS`` as ``--format``; the ``Format`` type lists them)
and HTML (``report.html.HTML``: the pages ``report`` writes); the one number formatter (``cell_text``), header
labeller (``column_label``, one ``UNITS`` table), Markdown table (``pipe_table``) and CSV dialect
(``csv_table``, formula guard included).

A new format is one ``Renderer`` subclass (``table``: one table; ``notes``: lines beside it) and its
``register_format`` call below. Only the terminal renderer calls ``termtable.print_frame``."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

import typer

from ycsb_runner.present.console import out_console
from ycsb_runner.present.document import (
    Banner,
    Block,
    Chart,
    Document,
    Facts,
    Figure,
    Links,
    Note,
    Spark,
    Table,
    as_data,
    table_data,
)
from ycsb_runner.safe import text as textsafe

if TYPE_CHECKING:  # pandas is imported where a frame is shown: commands without one start without it
    import pandas as pd


def _significant(value: float, digits: int, trim: bool) -> str:
    """*value* (0 < |value| < 1) to *digits* significant digits in positional notation (0.0034, 0.22,
    1.00); *trim*: without trailing zeros (0.05, not 0.0500)."""
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    if decimals > 12:  # below 1e-10: positional notation would be a row of zeros
        return f"{value:.{digits}g}"
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def cell_text(
    value: Any,
    *,
    fine: bool = False,
    decimals: int | None = None,
    significant: int | None = None,
    signed: bool = False,
    unit: str = "",
) -> str:
    """The one way a number becomes text (a table cell in any format, a figure in a line): None, NA and NaN
    as "-"; whole numbers with thousands separators (``2,000,000``); a float from 100 up to a whole number
    (``1,234``), from 1 to 2 decimals (``17.46``), below 1 to 2 significant digits (a ratio ``0.0034``, not
    ``0.00``); *fine* (``parse``'s and the published tables' figures, where a fraction such as an error
    rate or a proportion matters): whole numbers bare, others to 1 decimal, below 1 to 3 significant digits
    (``0.0911``, ``0.05``). Never cut; scientific notation only below 1e-10; the rest as ``str``.

    A column with a fixed form says it: *decimals*, that many decimals with thousands separators (the
    results table's ``1,234``, an error rate's ``0.25``); *significant*, that many significant digits (a
    p-value: ``0.0034``, ``1e-05``); *signed*, a sign on every number (``+3.0``); *unit*, text put after a
    number as given (``" %"``; not after "-")."""
    if value is None or type(value).__name__ == "NAType":
        return "-"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if decimals is not None or significant is not None:
        v = float(value)
        if math.isnan(v):
            return "-"
        sign = "+" if signed else ""
        spec = f"{sign}.{significant}g" if significant is not None else f"{sign},.{decimals}f"
        return f"{v:{spec}}{unit}"
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    v = float(value)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return str(v)
    if v == 0:
        return "0" if fine else "0.00"
    if abs(v) < 1:
        return _significant(v, 3 if fine else 2, trim=fine)
    if fine:
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.1f}"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"


def display_frame(df: pd.DataFrame, *, compact: bool = True) -> pd.DataFrame:
    """Every cell as text: numbers rounded, NaN as "-". ``compact``: "<mean> ± <stdev>" in one cell and the
    "<x> stdev/min/max" spread columns dropped (when the stdev is NaN, e.g. n = 1, only the mean)."""
    if df.empty:
        return df
    text = df.apply(lambda col: col.map(cell_text))
    if not compact:
        return text
    for col in df.columns:
        sd = f"{col} stdev"
        if sd in df.columns:
            has = df[sd].notna()
            text.loc[has, col] = text.loc[has, col] + " ± " + text.loc[has, sd]
    spread = [
        c
        for c in df.columns
        if isinstance(c, str)
        and c.rsplit(" ", 1)[-1] in ("stdev", "min", "max")
        and c.rsplit(" ", 1)[0] in df.columns
    ]
    return text.drop(columns=spread)


def pipe_table(
    header: Iterable[Any], rows: Iterable[Iterable[Any]], align: Iterable[str] | None = None
) -> str:
    """A GitHub-style Markdown pipe table of text cells (each one run of plain text: ``safe.text.markdown``);
    *align*: one ``---``/``---:`` per column for an aligned separator row (none: ``|---|---|``)."""
    esc = textsafe.markdown

    head = [esc(c) for c in header]
    sep = "|" + "---|" * len(head) if align is None else "| " + " | ".join(align) + " |"
    lines = ["| " + " | ".join(head) + " |", sep]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# A report's table header: the words a reader knows for the snake_case column names of the data formats
# (CSV, JSON and the run folder keep those names); ``column_label`` spells the others out by their unit.
COLUMN_WORDS = {
    "published_threads": "threads (published)",
    "measured_n": "runs measured",
    "published_text": "published as",
    "ratio": "measured / published",
    "before_median": "before (median)",
    "after_median": "after (median)",
    "p_value": "p",
    "p_adjusted": "p (adjusted)",
    "step_p_adjusted": "p of the step (adjusted)",
    "change_run": "change from run",
    "change_tags": "its tags",
    "detectable_pct": "detectable change %",
    "window_nights": "nights tested",
    "spread_pct": "night-to-night spread %",
    "warmup_end_s": "warm-up end (s)",
    "throughput_steady_ops_s": "steady throughput (ops/s)",
}
#: The one units table: a column name's suffix and how its header says it (the first that ends the name).
UNITS = (
    ("_ops_s", " (ops/s)"),
    ("_pct", " %"),
    ("_pp", " (pp)"),
    ("_us", " (µs)"),
    ("_ms", " (ms)"),
    ("_gb", " (GB)"),
    ("_s", " (s)"),
)
#: Words of a column name a header spells in capitals.
ACRONYMS = {"ral": "RAL", "wal": "WAL", "cpu": "CPU", "rt": "RT", "ycsb": "YCSB"}


def column_label(name: Any) -> str:
    """The one header labeller (a report's tables, a published table on a terminal): ``COLUMN_WORDS``,
    else the name's words with their acronyms in capitals and its unit spelled out (``UNITS``:
    ``change_pct`` -> ``change %``, ``ral_us`` -> ``RAL (µs)``, ``runtime_ms`` -> ``runtime (ms)``)."""
    text = str(name)
    if text in COLUMN_WORDS:
        return COLUMN_WORDS[text]
    unit = ""
    for suffix, said in UNITS:
        if text.endswith(suffix) and len(text) > len(suffix):
            text, unit = text[: -len(suffix)], said
            break
    return " ".join(ACRONYMS.get(w, w) for w in text.split("_")) + unit


def is_number_column(series: pd.Series) -> bool:
    """Numeric and not boolean: such columns are right-aligned (a Markdown table of figures)."""
    import pandas as pd

    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def markdown_table(df: pd.DataFrame, *, labelled: bool = False, fine: bool = False) -> str:
    """*df* as a Markdown table (cells as in ``display_frame``); *labelled*: headers as ``column_label``
    spells them (a report's tables); *fine*: figures as given (``cell_text(fine=True)``, no spread merged),
    number columns right-aligned, no rows: the header alone (a published table)."""
    if fine:
        align = ["---:" if is_number_column(df[c]) else "---" for c in df.columns]
        rows = ([cell_text(v, fine=True) for v in row] for row in df.itertuples(index=False))
        return pipe_table([str(c) for c in df.columns], rows, align)
    d = display_frame(df)
    if d.empty:
        return "_(no rows)_\n"
    return pipe_table(map(column_label, d.columns) if labelled else d.columns, d.itertuples(index=False))


def csv_table(df: pd.DataFrame) -> str:
    """*df* in the one CSV dialect of every ``--format csv``: ``safe.text.csv_text`` (no index, rows end in
    ``\\n``, a field holding a line break quoted) with the spreadsheet formula guard
    (``safe.files.formula_safe``)."""
    from ycsb_runner.safe.files import formula_safe

    return textsafe.csv_text(formula_safe(df))


def json_safe(value: Any) -> Any:
    """*value* (plain data) with every non-finite float as None: JSON has no NaN or infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


class Renderer:
    """One format. ``document`` writes any document (a report, a site page, a command's answer): by default
    its tables (``Document.tables``), one ``table`` after the other; ``notes``, lines that go with a table
    (regress' open changes). ``terminal``: for people at a terminal (commands give it their compact view);
    ``data``: for programs (commands give it every row and column, raw)."""

    name: ClassVar[str]
    terminal: ClassVar[bool] = False
    data: ClassVar[bool] = False

    def table(self, table: Table) -> None:
        raise NotImplementedError

    def notes(self, heading: str, lines: Sequence[str]) -> None:
        for line in lines:
            typer.echo(textsafe.terminal(line))

    def document(self, doc: Document) -> None:
        for table in doc.tables():
            self.table(table)


class TableRenderer(Renderer):
    name = "table"
    terminal = True

    def table(self, table: Table) -> None:
        from rich.text import Text

        from ycsb_runner.present.termtable import print_frame

        for line in table.lines:
            out_console.print(Text(textsafe.terminal(line)))
        frame = table.frame.reindex(columns=list(table.columns)) if table.columns else table.frame
        more = len(frame) - table.limit if table.limit is not None and len(frame) > table.limit else 0
        frame = frame.head(table.limit) if more else frame
        if table.lines and frame.empty:
            out_console.print(Text("  (no rows)"))
            return
        labels = table.labels or {}
        if table.fine:
            shown = frame.apply(lambda col: col.map(lambda v: cell_text(v, fine=True))).rename(columns=labels)
        else:
            shown = display_frame(frame).rename(columns=labels)
        print_frame(
            shown,
            title=None if table.lines else table.title,
            caption=table.caption,
            console=out_console,
            priority=tuple(labels.get(c, c) for c in table.priority),
            wide=table.wide,
            show_all_hint=table.hint,
            whole=tuple(labels.get(c, c) for c in table.whole),
        )
        if more:
            out_console.print(Text(f"  ... {more} more rows (use --format csv for all)"))


class CsvRenderer(Renderer):
    name = "csv"
    data = True

    def table(self, table: Table) -> None:
        typer.echo(csv_table(table.frame), nl=False)

    def document(self, doc: Document) -> None:
        """One CSV of every table, each row led by its table's ``keys``."""
        import pandas as pd

        frames = []
        for table in doc.tables():
            frame = table.frame.copy()
            for i, (key, value) in enumerate((table.keys or {}).items()):
                frame.insert(i, key, value)
            frames.append(frame)
        if frames:
            self.table(Table(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)))


class JsonRenderer(Renderer):
    name = "json"
    data = True

    def table(self, table: Table) -> None:
        typer.echo(json.dumps(table_data(table), indent=2, ensure_ascii=False))

    def document(self, doc: Document) -> None:
        """The document as one JSON document: its ``data`` when it has some, a page as ``as_data``; else
        each table (``table_data``)."""
        data = doc.data() if callable(doc.data) else doc.data
        if data is None and doc.page:
            data = as_data(doc)
        if data is None:
            return super().document(doc)
        typer.echo(json.dumps(json_safe(data), indent=2, ensure_ascii=False))


class MarkdownRenderer(Renderer):
    """A page (a report: headings, banners, figures linked from its figure folder, every text from data
    through ``safe.text.markdown``/``markdown_line``; GitHub-flavoured, readable at 80 columns) or an
    answer's tables, each under its title."""

    name = "markdown"

    def table(self, table: Table) -> None:
        heading = f"## {textsafe.markdown(table.title)}\n\n" if table.heading else ""
        typer.echo(heading + markdown_table(table.frame, fine=table.fine), nl=False)

    def document(self, doc: Document) -> None:
        """A page as ``page`` (its figures: the files ``report`` writes beside report.md); else each table,
        a blank line between two."""
        if doc.page:
            typer.echo(self.page(doc), nl=False)
            return
        for i, table in enumerate(doc.tables()):
            if i:
                typer.echo("")
            self.table(table)

    def notes(self, heading: str, lines: Sequence[str]) -> None:
        if lines:
            typer.echo(f"\n### {textsafe.markdown(heading)}\n")
        for line in lines:
            typer.echo(f"- {textsafe.markdown_line(line)}")

    def page(self, doc: Document) -> str:
        """The whole page."""
        lines = [f"# {textsafe.markdown(doc.heading)}\n"]
        for section in doc.sections:
            if section.heading is not None:
                lines.append(f"## {textsafe.markdown(section.heading)}\n")
            lines += [self.block(b, doc.figure_dir) for b in section.blocks]
        return "\n".join(lines)

    def block(self, block: Block, folder: str) -> str:
        """One block of a section (*folder*: where the figures' files are, beside the page); a chart as its
        caption (the HTML page draws it)."""
        if isinstance(block, Table):
            return markdown_table(block.frame.drop(columns=sorted(set(block.links.values()))), labelled=True)
        if isinstance(block, Chart):
            return f"_{textsafe.markdown(block.caption)} (a chart on the HTML page)_\n"
        if isinstance(block, Spark):
            return f"- {_md_link(block.label, block.href)} {textsafe.markdown(block.state)}\n"
        if isinstance(block, Links):
            return " · ".join(_md_link(t, h) for t, h in block.items) + "\n"
        if isinstance(block, Figure):
            return _md_figure(block, folder)
        writer = {Banner: _md_banner, Note: _md_note, Facts: _md_facts}[type(block)]
        return writer(block)  # type: ignore[operator]


def _md_banner(b: Banner) -> str:
    if b.strong:
        return f"> **{textsafe.markdown(b.text)}**\n"
    if b.lead:
        return f"> **{textsafe.markdown(b.lead)}** {textsafe.markdown(b.text)}\n"
    return f"> {textsafe.markdown_line(b.text)}\n"


def _md_note(n: Note) -> str:
    if not n.text:
        return ""
    if n.kind == "aside":
        return f"_{textsafe.markdown(n.text)}_\n"
    if n.kind == "warning":
        return f"**{textsafe.markdown(n.text)}**\n"
    return f"{textsafe.markdown_line(n.text)}\n"


def _md_facts(f: Facts) -> str:
    esc = textsafe.markdown
    if f.listed:
        return "\n".join(f"- **{esc(k)}**: {esc(v)}" for k, v in f.rows) + "\n"
    return "\n".join(["| | |", "|---|---|", *(f"| {esc(k)} | {esc(v)} |" for k, v in f.rows)]) + "\n"


def _md_figure(f: Figure, folder: str) -> str:
    """Links to the figure's files (``Figure.names``: the text draws nothing; ``pages`` writes them)."""
    cap, names = textsafe.markdown(f.caption), f.names()
    if not f.numbered:
        return "\n".join(f"![{cap}]({folder}/{name})\n" for name in names)
    links = [f"![{cap} ({i}/{len(names)})]({folder}/{name})\n" for i, name in enumerate(names, 1)]
    return "\n".join([*links, f"_{cap}_\n"])


def _md_link(text: str, href: str) -> str:
    return f"[{textsafe.markdown(text)}](<{href.replace('>', '%3E').replace(chr(10), '')}>)"


FORMATS: dict[str, Renderer] = {}


def register_format(renderer: Renderer) -> Renderer:
    """Add (or replace) the ``--format`` *renderer.name*; the help texts list them in registration order."""
    FORMATS[renderer.name] = renderer
    return renderer


for _renderer in (TableRenderer(), CsvRenderer(), JsonRenderer(), MarkdownRenderer()):
    register_format(_renderer)
#: The Markdown renderer (also of the pages ``report`` and the CI summaries write).
MARKDOWN: MarkdownRenderer = FORMATS["markdown"]  # type: ignore[assignment]

#: The ``--format`` type: every registered format (the CLI's choices).
Format = StrEnum("Format", {name: name for name in FORMATS})  # type: ignore[misc]


def check_format(value: str) -> str:
    """The ``--format`` option's check, made when the command runs: any registered format (also one registered
    after this module was imported: a plug-in's or a test's), else the usual usage error (exit 2)."""
    if str(value) not in FORMATS:
        choices = ", ".join(repr(name) for name in FORMATS)
        raise typer.BadParameter(f"{str(value)!r} is not one of {choices}.")
    return str(value)


def format_names() -> str:
    """``table, csv, json or markdown``: the registered formats, for help texts."""
    names = list(FORMATS)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def renderer(fmt: Format | str) -> Renderer:
    """The renderer of the format *fmt*; UserError naming the registered ones for any other."""
    try:
        return FORMATS[str(fmt)]
    except KeyError:
        from ycsb_runner.errors import UserError

        raise UserError(f"unknown --format {fmt!r}: use one of {', '.join(FORMATS)}") from None


def emit(
    df: pd.DataFrame,
    fmt: Format | str,
    title: str,
    extra: dict | None = None,
    *,
    priority: tuple[str, ...] = (),
    wide: bool = False,
    caption: str | None = None,
    labels: dict[str, str] | None = None,
    whole: tuple[str, ...] = (),
) -> None:
    """Print *df* as a command's answer of one table in the format *fmt* (``document.Table`` says what the
    other arguments do): fitted to the terminal, CSV, JSON (``{"title", ...extra, "rows"}``), Markdown or a
    registered format. CSV and JSON always carry every column under its own name."""
    table = Table(
        df,
        title=title,
        extra=extra,
        priority=priority,
        wide=wide,
        caption=caption,
        labels=labels,
        whole=whole,
    )
    renderer(fmt).document(Document.of(table))
