"""One captured stream read in chunks of lines: summary rows, status updates and other lines.

Each chunk is decoded, classified (lines.py) and reduced to numbers before the next one is read, so the
memory the parser needs beyond its input is bounded by the chunk size and by its results, not by the
number of lines. Chunks end before a line that cannot continue a multi-line status update, so no update
is split; adjacent duplicate updates (a combined 2>&1 capture) are matched across chunks by their hashes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import pandas as pd

from .lines import scan
from .noise import NoiseDigest
from .status import StatusChunk, StatusDigest, concat_chunks, find_status, parse_chunk
from .summary import summary_rows
from .text import to_text

CHUNK_BYTES = 8 << 20
PREFIX_CHARS = 1_000_000
LOOKAHEAD = 4096  # bytes after a boundary that decide it (the next line's start)
MAX_PIECE = 32 << 20  # the longest piece without a safe boundary before it is cut anyway
# A line break after which a new chunk may start: the next line is not a status-update continuation line.
_BOUNDARY = re.compile(rb"\n(?![ \t\[]|[^\s\[\]]+ count: )")


@dataclass
class StreamScan:
    """What one stream holds: summary rows in text order, its status updates (all of them, or None when
    only their digest was kept), the digest of the updates and of the other lines, the first
    ``PREFIX_CHARS`` of its text and its last line when that has no line break (else "")."""

    rows: pd.DataFrame
    status: StatusChunk | None
    digest: StatusDigest
    noise: NoiseDigest
    prefix: str
    last_line: str


def split_chunks(data: bytes, size: int | None = None) -> Iterator[bytes]:
    """``data`` in pieces of about ``size`` bytes, each ending at a line break that is a safe boundary."""
    return read_chunks(io.BytesIO(data), size)


def read_chunks(source: BinaryIO, size: int | None = None) -> Iterator[bytes]:
    """What *source* holds, read ``size`` bytes at a time, in pieces that end at a safe line break: at
    most about ``size`` bytes plus the line the boundary falls in. A stretch of ``MAX_PIECE`` bytes without
    one (not YCSB's output: random bytes, a binary file) is cut at its last line break, or anywhere."""
    size = CHUNK_BYTES if size is None else size
    limit = max(MAX_PIECE, 2 * size)
    buf = b""
    while True:
        block = source.read(size)
        buf = buf + block if buf else block
        while len(buf) > size:
            hit = _BOUNDARY.search(buf, size)
            if hit is not None and (not block or hit.start() + LOOKAHEAD < len(buf)):
                end = hit.start() + 1  # (the next line is there to see: the boundary is sure)
            elif not block or len(buf) < limit:
                break  # the end of the input (the rest is one piece), or read on to find a boundary
            elif hit is not None:
                end = hit.start() + 1
            else:
                end = buf.rfind(b"\n", 0, limit) + 1 or limit
            yield buf[:end]
            buf = buf[end:]
        if not block:
            if buf:
                yield buf
            return


def _last_line(data: bytes) -> str:
    if not data or data.endswith((b"\n", b"\r")):
        return ""
    start = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
    return to_text(data[start:])


def scan_stream(
    data: bytes | BinaryIO,
    *,
    with_keys: bool = False,
    chunk_bytes: int | None = None,
    keep_status: bool = True,
) -> StreamScan:
    """Scan one stream (bytes, or a binary file read as it goes) chunk by chunk (``with_keys``: keep update
    hashes for dropping duplicates; ``keep_status``: keep every update, not only their digest)."""
    source = io.BytesIO(data) if isinstance(data, bytes | bytearray | memoryview) else data
    rows: list[pd.DataFrame] = []
    chunks: list[StatusChunk] = []
    digest, noise = StatusDigest(), NoiseDigest()
    prefix, last = "", b""
    for piece in read_chunks(source, chunk_bytes):
        last = piece
        text = to_text(piece)
        if len(prefix) < PREFIX_CHARS:
            prefix += text[: PREFIX_CHARS - len(prefix)]
        lines = scan(text)
        del text
        found = find_status(lines)
        rows.append(summary_rows(lines))
        if lines.n:
            noise.add(lines.text(~found.used & ~lines.is_summary))
        chunk = parse_chunk(found, with_keys=with_keys)
        digest.add(chunk)
        if keep_status:
            chunks.append(chunk)
        del lines, found, chunk
    frame = (
        pd.concat(rows, ignore_index=True) if len(rows) > 1 else rows[0] if rows else summary_rows(scan(""))
    )
    status = concat_chunks(chunks) if keep_status else None
    return StreamScan(frame, status, digest, noise, prefix, _last_line(last))
