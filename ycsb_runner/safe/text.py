"""Text from data, made safe for the medium it reaches: the one place where a tag, an accept note, a suite
description, a YCSB error line or any other text read from a run folder or a history meets an output.

* ``terminal``: control characters (C0 and C1, ESC, DEL, ``\\r``, ``\\n``), line and paragraph separators,
  bidirectional overrides and lone surrogates shown as escapes (``\\x1b``, ``\\r``, ``\\u202e``), so that
  no text can move the cursor, retitle the window, recolour the screen or reorder what is shown; a cell of
  a table is cut at ``CELL_CHARS`` (``cell``).
* ``html``: the same escapes, then HTML's (``<``, ``>``, ``&``, quotes).
* ``markdown``: line breaks as spaces, other controls as escapes, then CommonMark/GFM's escapes: every
  character that starts markup inline (backslash, backtick, ``*``, ``_`` at a word's edge, ``~``, ``[``,
  ``]``, ``<``, ``>``, ``&``, ``|``) gets a backslash, so a value is one run of plain text in one table
  cell: no raw HTML, no link, no new row; ``markdown_line`` also escapes what starts a block at the
  beginning of a line (``#``, ``-``, ``+``, ``=``, ``>``, ``1.``).
* ``csv_text``: a frame as CSV whose text cells holding ``\\r`` or ``\\n`` are quoted (the csv module's rule
  for its line terminator ``\\r\\n``, with rows still ending in ``\\n``), so ``csv.reader`` reads back the
  same rows and cells.
* ``label``: text for a figure (matplotlib), escaped as for the terminal; mathtext is off in every figure
  (``plots.py``), so ``$`` is a dollar sign.

Escaping is for display only: what is stored (manifest, history, the run folder's CSVs) stays as it was.
"""

from __future__ import annotations

import html as _html
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The longest table cell a terminal shows; the rest is named ("... 120,000 more characters").
CELL_CHARS = 300

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: What no text from data may bring to an output as it is: C0 and C1 controls (ESC, CR, LF, TAB, DEL
#: included), line and paragraph separators, bidi controls, lone surrogates.
UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: Any) -> str:
    """*text* with every control, separator and bidi character shown as an escape (``\\x1b``, ``\\r``)."""
    return UNSAFE.sub(_escape, str(text))


def cell(text: Any) -> str:
    """A table cell for the terminal: ``terminal``, cut at ``CELL_CHARS`` with what is left out named."""
    shown = terminal(text)
    if len(shown) <= CELL_CHARS:
        return shown
    return f"{shown[:CELL_CHARS]}... {len(shown) - CELL_CHARS:,} more characters (--format csv shows all)"


def label(text: Any) -> str:
    """Text for a figure's title, legend or tick (mathtext is off in every figure: ``$`` stays ``$``)."""
    return terminal(text)


def html(text: Any) -> str:
    """Text for an HTML page: controls shown as escapes, then HTML-escaped (quotes too, for attributes)."""
    return _html.escape(terminal(text), quote=True)


_MD_INLINE = re.compile(r"[\\`*~\[\]<>&|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_MD_BLOCK = re.compile(r"^(\s*)([#>+=-]|\d+[.)])")
_LINE_BREAK = re.compile(r"\r\n|[\r\n\u2028\u2029]")


def markdown(text: Any) -> str:
    """Text for a CommonMark/GFM table cell or inside a line: one run of plain text (no HTML, link, code,
    emphasis or strikethrough; a line break as a space, other controls as escapes), so a cell stays one
    cell of one row."""
    plain = terminal(_LINE_BREAK.sub(" ", str(text)))
    return _MD_INLINE.sub(lambda m: "\\" + m.group(), plain)


def markdown_line(text: Any) -> str:
    """``markdown`` for text that begins a line of its own (a paragraph, a list item's text): a heading,
    list or quote marker at its start is escaped too."""
    return _MD_BLOCK.sub(
        lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], markdown(text), count=1
    )


def csv_text(df: pd.DataFrame) -> str:
    """*df* as CSV (no index): rows end in ``\\n``; a field holding ``\\r`` or ``\\n`` is quoted."""
    text = df.to_csv(index=False, lineterminator="\r\n")
    # Every field holding \r or \n is quoted now, so a \r\n outside quotes (the even pieces between '"'
    # characters, a doubled "" included) ends a row.
    pieces = text.split('"')
    pieces[::2] = [p.replace("\r\n", "\n") for p in pieces[::2]]
    return '"'.join(pieces)
