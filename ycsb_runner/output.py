"""How a command prints a table: the one ``--format`` type, the cells of a shown table (numbers rounded, NaN
as "-"), the one Markdown renderer (``pipe_table``) and ``emit``, which every command's table goes through."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import typer

from ycsb_runner.console import out_console

if TYPE_CHECKING:  # pandas is imported where a frame is shown: commands without one start without it
    import pandas as pd


class Format(StrEnum):
    """Every command that prints a table takes ``--format``; ``markdown`` where a table is shown."""

    table = "table"
    csv = "csv"
    json = "json"
    markdown = "markdown"


def _fmt(v: Any) -> str:
    import pandas as pd

    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"
    return str(v)


def display_frame(df: pd.DataFrame, *, compact: bool = True) -> pd.DataFrame:
    """Every cell as text: numbers rounded, NaN as "-". ``compact``: "<mean> ± <stdev>" in one cell and the
    "<x> stdev/min/max" spread columns dropped (when the stdev is NaN, e.g. n = 1, only the mean)."""
    if df.empty:
        return df
    text = df.apply(lambda col: col.map(_fmt))
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
    """A GitHub-style Markdown pipe table of text cells (``|`` escaped, line breaks as spaces); *align*: one
    ``---``/``---:`` per column for an aligned separator row (none: ``|---|---|``)."""

    def esc(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    head = [esc(c) for c in header]
    sep = "|" + "---|" * len(head) if align is None else "| " + " | ".join(align) + " |"
    lines = ["| " + " | ".join(head) + " |", sep]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown_table(df: pd.DataFrame) -> str:
    """*df* as a Markdown table (cells as in ``display_frame``)."""
    d = display_frame(df)
    if d.empty:
        return "_(no rows)_\n"
    return pipe_table(d.columns, d.itertuples(index=False))


def emit(
    df: pd.DataFrame,
    fmt: Format,
    title: str,
    extra: dict | None = None,
    *,
    priority: tuple[str, ...] = (),
    wide: bool = False,
    caption: str | None = None,
    labels: dict[str, str] | None = None,
    whole: tuple[str, ...] = (),
) -> None:
    """Print *df* as a table that fits the terminal, CSV, JSON (``{"title", "rows", ...extra}``) or Markdown.

    The table shows the columns of *priority* first when not all fit (``termtable.print_frame``); *labels*
    rename columns for the table only; *whole* columns are never folded (``termtable.print_frame``); CSV and
    JSON always carry every column under its own name."""
    if fmt is Format.csv:
        from ycsb_runner.store import formula_safe

        typer.echo(formula_safe(df).to_csv(index=False), nl=False)
    elif fmt is Format.json:
        records = json.loads(df.to_json(orient="records", force_ascii=False))
        typer.echo(
            json.dumps({"title": title, **(extra or {}), "rows": records}, indent=2, ensure_ascii=False)
        )
    elif fmt is Format.markdown:
        typer.echo(f"## {title}\n\n{markdown_table(df)}", nl=False)
    else:
        from ycsb_runner.termtable import print_frame

        shown = display_frame(df)
        labels = labels or {}
        shown = shown.rename(columns=labels)
        print_frame(
            shown,
            title=title,
            caption=caption,
            console=out_console,
            priority=tuple(labels.get(c, c) for c in priority),
            wide=wide,
            show_all_hint="--wide or --format csv shows them",
            whole=tuple(labels.get(c, c) for c in whole),
        )
