"""One captured stream read in chunks of lines: summary rows, status updates and other lines.

Each chunk is decoded, classified (lines.py) and reduced to numbers before the next one is read, so the
memory the parser needs beyond its input is bounded by the chunk size and by its results, not by the
number of lines. Chunks end before a line that cannot continue a multi-line status update, so no update
is split; adjacent duplicate updates (a combined 2>&1 capture) are matched across chunks by their hashes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from .lines import scan
from .status import StatusChunk, concat_chunks, find_status, parse_chunk
from .summary import summary_rows
from .text import to_text

CHUNK_BYTES = 8 << 20
PREFIX_CHARS = 1_000_000
# A line break after which a new chunk may start: the next line is not a status-update continuation line.
_BOUNDARY = re.compile(rb"\n(?![ \t\[]|[^\s\[\]]+ count: )")


@dataclass
class StreamScan:
    """What one stream holds: summary rows in text order, status updates, the other lines' text."""

    rows: pd.DataFrame
    status: StatusChunk
    noise: list[str]
    prefix: str
    last_line: str  # the last line when the stream does not end with a line break, else ""


def split_chunks(data: bytes, size: int | None = None) -> Iterator[bytes]:
    """``data`` in pieces of about ``size`` bytes, each ending at a line break that is a safe boundary."""
    size = CHUNK_BYTES if size is None else size
    pos, n = 0, len(data)
    while pos < n:
        if n - pos <= size:
            yield data[pos:]
            return
        hit = _BOUNDARY.search(data, pos + size)
        if hit is None:
            yield data[pos:]
            return
        end = hit.start() + 1
        yield data[pos:end]
        pos = end


def _last_line(data: bytes) -> str:
    if not data or data.endswith((b"\n", b"\r")):
        return ""
    start = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
    return to_text(data[start:])


def scan_stream(data: bytes, *, with_keys: bool = False, chunk_bytes: int | None = None) -> StreamScan:
    """Scan one stream chunk by chunk (``with_keys``: keep update hashes for dropping duplicates)."""
    rows: list[pd.DataFrame] = []
    chunks: list[StatusChunk] = []
    noise: list[str] = []
    prefix = ""
    for piece in split_chunks(data, chunk_bytes):
        text = to_text(piece)
        if len(prefix) < PREFIX_CHARS:
            prefix += text[: PREFIX_CHARS - len(prefix)]
        lines = scan(text)
        del text
        found = find_status(lines)
        rows.append(summary_rows(lines))
        if lines.n:
            noise += lines.text(~found.used & ~lines.is_summary)
        chunks.append(parse_chunk(found, with_keys=with_keys))
        del lines, found
    frame = (
        pd.concat(rows, ignore_index=True) if len(rows) > 1 else rows[0] if rows else summary_rows(scan(""))
    )
    return StreamScan(frame, concat_chunks(chunks), noise, prefix, _last_line(data))
