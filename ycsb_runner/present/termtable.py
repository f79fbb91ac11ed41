"""Tables for a terminal of any width: numbers are never cut, columns are chosen by width.

``print_frame`` takes a frame whose cells are already text (``output.display_frame``) and prints it
so that it fits the console's width (``COLUMNS`` when piped):

1. every column gets the width it needs; a number (``1,234``, ``12.5%``, ``106 ± 16.43``) always gets its full
   width, prose folds down to ``PROSE_MIN`` characters, a header wraps at its spaces;
2. when that does not fit, columns whose value is the same in every row move into a caption line;
3. then the columns of lowest priority are hidden and named in the caption (``--wide`` or ``--format csv``
   shows them);
4. with ``wide``, when all columns cannot fit, each row is printed as a block of ``label  value`` lines.

In a terminal the table has a header rule; piped, it is plain aligned text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import pandas as pd
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ycsb_runner.safe import text as textsafe

PROSE_MIN = 14  # a prose column is never narrower than this (or its longest word, if shorter)
IDENT_MAX = 24  # a name without spaces up to this long (a mix, a step) is never folded
NUMBER = re.compile(r"^[-+]?[\d,]*\.?\d+(e[-+]?\d+)?\s?(%|pp|x|×|µs|ms|s|ops/s)?( ± [\d,]*\.?\d+\s?%?)?$")


def is_number_text(cell: str) -> bool:
    """A cell that must be shown whole: a number with an optional unit and ``± spread``."""
    return bool(NUMBER.match(cell.strip()))


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in re.split(r"\s+", text) if w), default=0)


def _prose_min(cell: str) -> int:
    """An identifier (no space, up to ``IDENT_MAX``) stays whole; prose folds down to ``PROSE_MIN``."""
    width = cell_len(cell)
    if width <= PROSE_MIN or (width <= IDENT_MAX and not re.search(r"\s", cell.strip())):
        return width
    return min(_longest_word(cell), PROSE_MIN)


def column_needs(values: Sequence[str], header: str) -> tuple[int, int, bool]:
    """(minimum, natural width, holds numbers) of one column of text cells under *header*."""
    cells = [str(v) for v in values]
    numbers = [c for c in cells if is_number_text(c)]
    prose = [c for c in cells if not is_number_text(c) and c.strip() != "-"]  # "-": a missing number
    natural = max([cell_len(c) for c in cells] + [cell_len(header)])
    minimum = max(
        [cell_len(c) for c in numbers] + [_prose_min(c) for c in prose] + [_longest_word(header)] + [1]
    )
    return minimum, natural, bool(numbers) and len(numbers) >= len(prose)


def _box(console: Console) -> box.Box | None:
    return box.SIMPLE_HEAD if console.is_terminal else None


def _overhead(n_columns: int, console: Console) -> int:
    """Characters a table of *n_columns* spends besides its cells (padding, rules)."""
    probe = Console(width=10_000, file=io.StringIO(), force_terminal=False, color_system=None)
    table = Table(box=_box(console), show_header=True)
    for _ in range(n_columns):
        table.add_column("x", width=1)
    table.add_row(*["x"] * n_columns)
    probe.print(table)
    return max(len(line) for line in probe.file.getvalue().splitlines()) - n_columns  # type: ignore[attr-defined]


def _allocate(needs: list[tuple[int, int, bool]], room: int) -> list[int] | None:
    """Widths within *room* (minimums first, then spare room to the columns that want more), or None."""
    widths = [n[0] for n in needs]
    if sum(widths) > room:
        return None
    spare = room - sum(widths)
    while spare > 0:
        wanting = [i for i, n in enumerate(needs) if widths[i] < n[1]]
        if not wanting:
            break
        share = max(1, spare // len(wanting))
        for i in wanting:
            add = min(share, needs[i][1] - widths[i], spare)
            widths[i] += add
            spare -= add
            if spare == 0:
                break
    return widths


def print_frame(
    frame: pd.DataFrame,
    *,
    title: str | None = None,
    caption: str | Sequence[str] | None = None,
    console: Console,
    priority: Sequence[str] = (),
    wide: bool = False,
    show_all_hint: str = "--format csv shows them",
    whole: Sequence[str] = (),
) -> None:
    """Print *frame* (text cells) to fit ``console.width``; see the module doc for how. The columns in
    *whole* (names such as run ids) are never folded: they are shown whole or hidden. Text from data is
    shown through ``textsafe`` (control characters escaped, a long cell cut); a *caption* keeps its
    lines (``caption_lines``)."""
    text = frame.astype(str).map(textsafe.cell).rename(columns=textsafe.terminal)
    title = textsafe.terminal(title) if title else title
    caption = caption_lines(caption)
    priority = [textsafe.terminal(c) for c in priority]
    whole = [textsafe.terminal(c) for c in whole]
    width = console.width
    notes: list[str] = []
    if text.empty:
        notes.append("(no rows)")
    columns = list(text.columns)
    needs = {c: column_needs(text[c].tolist(), str(c)) for c in columns}
    for c in whole:
        if c in needs:
            needs[c] = (needs[c][1], needs[c][1], needs[c][2])
    fitted = _fit(text, needs, width, console, priority=priority, wide=wide, notes=notes)
    if fitted is None:
        _print_records(text, title=title, caption=caption, console=console)
        return
    columns, widths, hidden = fitted
    if hidden:
        notes.append(f"not shown: {', '.join(map(str, hidden))} ({show_all_hint})")
    captions = "\n".join(n for n in [caption, *notes] if n)
    table = Table(
        title=Text(title) if title else None,
        box=_box(console),
        title_justify="left",
    )
    for col, w in zip(columns, widths, strict=True):
        numeric = needs[col][2]
        table.add_column(str(col), width=w, justify="right" if numeric else "left", overflow="fold")
    for row in text[columns].itertuples(index=False):
        table.add_row(*(Text(v) for v in row))
    console.print(table)
    if captions:  # under the table, folded at the console's width (not the table's), its lines kept
        console.print(Text(captions))


def caption_lines(caption: str | Sequence[str] | None) -> str | None:
    """A caption for the terminal with its own line breaks kept: a text's ``\\n`` (the caller's lines) or
    a sequence's items (each a line, e.g. text from data) as lines; every other control character, and a
    line break inside an item of a sequence, shown as an escape (``safe.text.terminal``). Pure."""
    if not caption:
        return None
    lines = caption.split("\n") if isinstance(caption, str) else [str(c) for c in caption]
    return "\n".join(textsafe.terminal(line) for line in lines) or None


def _fit(
    text: pd.DataFrame,
    needs: dict[str, tuple[int, int, bool]],
    width: int,
    console: Console,
    *,
    priority: Sequence[str],
    wide: bool,
    notes: list[str],
) -> tuple[list[str], list[int], list[str]] | None:
    """(the columns shown, their widths, the columns hidden) for *text* in *width*, or None when a *wide*
    table that does not fit is better printed as records: columns whose every row says the same go into
    *notes*, then the columns last in *priority* are hidden until the rest fit; one column that still does
    not fit is folded to the width."""
    columns = list(text.columns)

    def fits(cols: list[str]) -> list[int] | None:
        return _allocate([needs[c] for c in cols], width - _overhead(len(cols), console)) if cols else []

    widths = fits(columns)
    if widths is None and wide:
        return None
    if widths is None and len(text) > 1:
        constant = [c for c in columns if text[c].nunique() == 1 and c not in priority[:1]]
        if constant:
            notes.append("; ".join(f"{c}: {text[c].iloc[0]}" for c in constant))
            columns = [c for c in columns if c not in constant]
            widths = fits(columns)
    hidden: list[str] = []
    if widths is None:
        order = [c for c in priority if c in columns] + [c for c in columns if c not in priority]
        while widths is None and len(order) > 1:
            hidden.insert(0, order.pop())
            widths = fits([c for c in columns if c in order])
        columns = [c for c in columns if c in order]
    if widths is None:  # one column that does not fit: fold it to the width
        widths = [max(1, width - _overhead(1, console))]
    return columns, widths, hidden


def _print_records(frame: pd.DataFrame, *, title: str | None, caption: str | None, console: Console) -> None:
    """One block per row: ``label  value`` lines, values folded to the width."""
    if title:
        console.print(Text(title))
    label_w = min(max(cell_len(str(c)) for c in frame.columns), max(12, console.width // 3))
    for i, row in enumerate(frame.itertuples(index=False), 1):
        grid = Table.grid(padding=(0, 2))
        grid.add_column(width=label_w, overflow="fold", style="bold" if console.is_terminal else None)
        grid.add_column(width=max(10, console.width - label_w - 4), overflow="fold")
        for col, value in zip(frame.columns, row, strict=True):
            grid.add_row(Text(str(col)), Text(str(value)))
        console.print(Text(f"\n[{i}/{len(frame)}]"))
        console.print(grid)
    if caption:
        console.print(Text(f"\n{caption}"))
