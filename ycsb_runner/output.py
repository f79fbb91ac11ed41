"""How a command shows what it answers: one ``Renderer`` per ``--format`` (registered in ``FORMATS``; the
``Format`` type lists them) writes any document (``Document``: its tables as ``View``s, its ``data()``) or
one table (``emit``); the one number formatter (``cell_text``), header labeller (``column_label``, one
``UNITS`` table), Markdown table (``pipe_table``) and CSV dialect (``csv_table``, formula guard included).

A new format is one ``Renderer`` subclass (``table``: one table; ``notes``: lines beside it) and its
``register_format`` call below; the commands that answer documents (``parse``, ``reference show``,
``report``) give it their ``views()``. Only the terminal renderer calls ``termtable.print_frame``."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import typer

from ycsb_runner import textsafe
from ycsb_runner.console import out_console

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
    """A GitHub-style Markdown pipe table of text cells (each one run of plain text: ``textsafe.markdown``);
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
    """*df* in the one CSV dialect of every ``--format csv``: ``textsafe.csv_text`` (no index, rows end in
    ``\\n``, a field holding a line break quoted) with the spreadsheet formula guard
    (``store.formula_safe``)."""
    from ycsb_runner.store import formula_safe

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


HIDDEN_HINT = "--wide or --format csv shows them"


@dataclass(frozen=True)
class View:
    """One table of a document. Every format shows ``frame`` under ``title`` (Markdown: as a heading unless
    *heading* is False); JSON adds ``extra``'s keys; CSV and JSON always carry every column and row, raw.
    The terminal table shows the *columns* given (all when none; one the frame lacks as "-"), at most
    *limit* rows, the columns of *priority* first when not all fit (``termtable.print_frame``; the hidden
    ones named with *hint*), renames columns by *labels*, never folds the *whole* columns and prints
    *caption* (a text, or lines each escaped) under it; ``wide``: every column, one block per row when
    they do not fit; *lines*: lines it prints above the table in place of its title (``parse``: the
    verdict). *fine*: figures as given (``cell_text(fine=True)``: ``parse``, the published tables) in the
    terminal and Markdown tables, Markdown's number columns right-aligned."""

    frame: pd.DataFrame
    title: str
    extra: dict | None = None
    priority: tuple[str, ...] = ()
    wide: bool = False
    caption: str | Sequence[str] | None = None
    labels: dict[str, str] | None = None
    whole: tuple[str, ...] = ()
    #: What tells this table from the others of its document (``parse``: file and verdict); CSV writes a
    #: document as one table with these as its first columns.
    keys: dict[str, Any] | None = None
    fine: bool = False
    columns: tuple[str, ...] = ()
    limit: int | None = None
    hint: str = HIDDEN_HINT
    heading: bool = True
    lines: tuple[str, ...] = ()


class Document(Protocol):
    """What a command answers: its tables as views (what any format can show; a report: its sections',
    ``report.document.Document.views``). A data format writes the document's ``data()`` (its figures as
    plain data) when it has one (``document_data``); Markdown writes a kind of document with a page of its
    own (a report) by the writer registered for it (``register_page``)."""

    def views(self) -> list[View]: ...


def document_data(doc: Document) -> Any:
    """*doc* as plain data for a data format (its ``data()``), or None when it has none (then each of its
    views is written as a table)."""
    data = getattr(doc, "data", None)
    return data() if callable(data) else None


#: Markdown writers of the kinds of documents that are pages (a report: headings, banners, figures), by the
#: document's type: registered by the module that writes that page (``report.markdown``), which the
#: presentation layer cannot import (it sits above it).
PAGES: dict[type, Callable[[Any], str]] = {}


def register_page(kind: type, writer: Callable[[Any], str]) -> None:
    """Markdown shows a document of type *kind* as *writer*'s page (its figures: files written beside it)."""
    PAGES[kind] = writer


class Renderer:
    """One ``--format``. ``table`` prints one table; ``notes``, lines that go with it (regress' open changes);
    ``document``, a command's document (a report too: ``report --format``): its views as tables, one after
    the other. ``terminal``: for people at a terminal (commands give it their compact view); ``data``: for
    programs (commands give it every row and column, raw)."""

    name: ClassVar[str]
    terminal: ClassVar[bool] = False
    data: ClassVar[bool] = False

    def table(self, view: View) -> None:
        raise NotImplementedError

    def notes(self, heading: str, lines: Sequence[str]) -> None:
        for line in lines:
            typer.echo(textsafe.terminal(line))

    def document(self, doc: Document) -> None:
        for view in doc.views():
            self.table(view)


class TableRenderer(Renderer):
    name = "table"
    terminal = True

    def table(self, view: View) -> None:
        from rich.text import Text

        from ycsb_runner.termtable import print_frame

        for line in view.lines:
            out_console.print(Text(textsafe.terminal(line)))
        frame = view.frame.reindex(columns=list(view.columns)) if view.columns else view.frame
        more = len(frame) - view.limit if view.limit is not None and len(frame) > view.limit else 0
        frame = frame.head(view.limit) if more else frame
        if view.lines and frame.empty:
            out_console.print(Text("  (no rows)"))
            return
        labels = view.labels or {}
        if view.fine:
            shown = frame.apply(lambda col: col.map(lambda v: cell_text(v, fine=True))).rename(columns=labels)
        else:
            shown = display_frame(frame).rename(columns=labels)
        print_frame(
            shown,
            title=None if view.lines else view.title,
            caption=view.caption,
            console=out_console,
            priority=tuple(labels.get(c, c) for c in view.priority),
            wide=view.wide,
            show_all_hint=view.hint,
            whole=tuple(labels.get(c, c) for c in view.whole),
        )
        if more:
            out_console.print(Text(f"  ... {more} more rows (use --format csv for all)"))


class CsvRenderer(Renderer):
    name = "csv"
    data = True

    def table(self, view: View) -> None:
        typer.echo(csv_table(view.frame), nl=False)

    def document(self, doc: Document) -> None:
        """One CSV of every view, each row led by its view's ``keys``."""
        import pandas as pd

        frames = []
        for view in doc.views():
            frame = view.frame.copy()
            for i, (key, value) in enumerate((view.keys or {}).items()):
                frame.insert(i, key, value)
            frames.append(frame)
        self.table(View(pd.concat(frames, ignore_index=True), ""))


class JsonRenderer(Renderer):
    name = "json"
    data = True

    def table(self, view: View) -> None:
        records = json.loads(view.frame.to_json(orient="records", force_ascii=False))
        document = {"title": view.title, **(view.extra or {}), "rows": records}
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))

    def document(self, doc: Document) -> None:
        """The document's data (``document_data``) as one JSON document, else each view."""
        data = document_data(doc)
        if data is None:
            return super().document(doc)
        typer.echo(json.dumps(json_safe(data), indent=2, ensure_ascii=False))


class MarkdownRenderer(Renderer):
    name = "markdown"

    def table(self, view: View) -> None:
        heading = f"## {textsafe.markdown(view.title)}\n\n" if view.heading else ""
        typer.echo(heading + markdown_table(view.frame, fine=view.fine), nl=False)

    def document(self, doc: Document) -> None:
        """A page (``PAGES``: a report, its figures the files ``report`` writes beside report.md); else each
        view as a table, each followed by a blank line."""
        writer = next((w for kind, w in PAGES.items() if isinstance(doc, kind)), None)
        if writer is not None:
            typer.echo(writer(doc), nl=False)
            return
        for view in doc.views():
            self.table(view)
            typer.echo("")

    def notes(self, heading: str, lines: Sequence[str]) -> None:
        if lines:
            typer.echo(f"\n### {textsafe.markdown(heading)}\n")
        for line in lines:
            typer.echo(f"- {textsafe.markdown_line(line)}")


FORMATS: dict[str, Renderer] = {}


def register_format(renderer: Renderer) -> Renderer:
    """Add (or replace) the ``--format`` *renderer.name*; the help texts list them in registration order."""
    FORMATS[renderer.name] = renderer
    return renderer


for _renderer in (TableRenderer(), CsvRenderer(), JsonRenderer(), MarkdownRenderer()):
    register_format(_renderer)

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
    """Print *df* as a table in the format *fmt* (``View`` says what the other arguments do): fitted to the
    terminal, CSV, JSON (``{"title", ...extra, "rows"}``), Markdown or a registered format. CSV and JSON
    always carry every column under its own name."""
    view = View(df, title, extra, priority, wide, caption, labels, whole)
    renderer(fmt).table(view)
