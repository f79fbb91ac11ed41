"""How a command prints a table: one ``Renderer`` per ``--format`` (registered in ``FORMATS``; the ``Format``
type lists them), the cells of a shown table (numbers rounded, NaN as "-"), the one Markdown table
(``pipe_table``) and ``emit``, which every command's table goes through.

A new format is one ``Renderer`` subclass (``table``: one table; ``notes``: lines beside it) and its
``register_format`` call below; the commands that print their own documents (``parse``, ``reference
show``) give it their ``views()``."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Sequence
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


def markdown_table(df: pd.DataFrame, *, labelled: bool = False) -> str:
    """*df* as a Markdown table (cells as in ``display_frame``); *labelled*: headers as ``column_label``
    spells them (a report's tables)."""
    d = display_frame(df)
    if d.empty:
        return "_(no rows)_\n"
    return pipe_table(map(column_label, d.columns) if labelled else d.columns, d.itertuples(index=False))


def csv_table(df: pd.DataFrame) -> str:
    """*df* in the one CSV dialect of every ``--format csv``: ``textsafe.csv_text`` (no index, rows end in
    ``\n``, a field holding a line break quoted) with the spreadsheet formula guard
    (``store.formula_safe``)."""
    from ycsb_runner.store import formula_safe

    return textsafe.csv_text(formula_safe(df))


@dataclass(frozen=True)
class View:
    """One table a command prints. Every format shows ``frame`` under ``title``; JSON adds ``extra``'s keys.
    The terminal table shows the columns of *priority* first when not all fit (``termtable.print_frame``),
    renames columns by *labels*, never folds the *whole* columns and prints *caption* under it; ``wide``:
    every column, one block per row when they do not fit."""

    frame: pd.DataFrame
    title: str
    extra: dict | None = None
    priority: tuple[str, ...] = ()
    wide: bool = False
    caption: str | None = None
    labels: dict[str, str] | None = None
    whole: tuple[str, ...] = ()
    #: What tells this table from the others of its document (``parse``: file and verdict); CSV writes a
    #: document as one table with these as its first columns.
    keys: dict[str, Any] | None = None


class Document(Protocol):
    """What ``parse`` and ``reference show`` print: their tables as views (what any format can show); a
    document may also have its own text for a format, an ``as_<format name>()`` method (e.g. ``as_json``)."""

    def views(self) -> list[View]: ...


class Renderer:
    """One ``--format``. ``table`` prints one table; ``notes``, lines that go with it (regress' open changes);
    ``document``, a command's document: its own text for this format if it has one, else its views as
    tables, one after the other (a report too: ``report --format``). ``terminal``: for people at a terminal
    (commands give it their compact view); ``data``: for programs (commands give it every row and column,
    raw)."""

    name: ClassVar[str]
    terminal: ClassVar[bool] = False
    data: ClassVar[bool] = False

    def table(self, view: View) -> None:
        raise NotImplementedError

    def notes(self, heading: str, lines: Sequence[str]) -> None:
        for line in lines:
            typer.echo(textsafe.terminal(line))

    def document(self, doc: Document) -> None:
        own = getattr(doc, f"as_{self.name}", None)
        if own is not None:
            own()
            return
        for view in doc.views():
            self.table(view)


class TableRenderer(Renderer):
    name = "table"
    terminal = True

    def table(self, view: View) -> None:
        from ycsb_runner.termtable import print_frame

        labels = view.labels or {}
        shown = display_frame(view.frame).rename(columns=labels)
        print_frame(
            shown,
            title=view.title,
            caption=view.caption,
            console=out_console,
            priority=tuple(labels.get(c, c) for c in view.priority),
            wide=view.wide,
            show_all_hint="--wide or --format csv shows them",
            whole=tuple(labels.get(c, c) for c in view.whole),
        )


class CsvRenderer(Renderer):
    name = "csv"
    data = True

    def table(self, view: View) -> None:
        typer.echo(csv_table(view.frame), nl=False)

    def document(self, doc: Document) -> None:
        """One CSV of every view, each row led by its view's ``keys``."""
        if hasattr(doc, "as_csv"):
            return super().document(doc)
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


class MarkdownRenderer(Renderer):
    name = "markdown"

    def table(self, view: View) -> None:
        typer.echo(f"## {textsafe.markdown(view.title)}\n\n{markdown_table(view.frame)}", nl=False)

    def document(self, doc: Document) -> None:
        """Each view as a table, each followed by a blank line."""
        if hasattr(doc, "as_markdown"):
            return super().document(doc)
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
