"""Raw per-operation latencies (`measurementtype=raw` / `hdrhistogram+raw`).

Data points are ``<OP>,<epoch ms>,<latency us>`` lines after a ``<OP> latency raw data: op, timestamp(ms),
latency(us)`` header, on stdout or in ``measurement.raw.output_file``. Blocks are located with bytes.find and
one regex search each, and read with pandas' C CSV reader: no Python object per data line.
"""

from __future__ import annotations

import io
import re
from os import PathLike

import numpy as np
import pandas as pd

from .errors import ParseError
from .names import classify_frame
from .text import read_path_bytes

RAW_HEADER = b" latency raw data: op, timestamp(ms), latency(us)"
RAW_COLUMNS = ["section", "operation", "kind", "timestamp_ms", "latency_us"]


_POINT_RE = re.compile(rb"^[^,\n]*,(-?\d{1,18}),(-?\d{1,18})\r?$", re.M)


def _read_block(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Parse ``name,ts,latency`` lines (name column skipped); malformed lines are dropped."""
    if not data.strip():
        return np.empty(0, dtype="int64"), np.empty(0, dtype="int64")
    try:
        frame = pd.read_csv(
            io.BytesIO(data),
            header=None,
            names=["op", "ts", "lat"],
            usecols=[1, 2],
            engine="c",
            on_bad_lines="skip",
            dtype={"ts": "float64", "lat": "float64"},
        )
        ts = frame["ts"].to_numpy(dtype="float64")
        lat = frame["lat"].to_numpy(dtype="float64")
    except (ValueError, pd.errors.ParserError):
        # Garbage inside the block: keep only the lines that are data points (slower, but only here).
        points = _POINT_RE.findall(data)
        ts = np.array([float(t) for t, _ in points], dtype="float64")
        lat = np.array([float(v) for _, v in points], dtype="float64")
    ok = np.isfinite(ts) & np.isfinite(lat)
    if not ok.all():
        ts, lat = ts[ok], lat[ok]
    return ts.astype("int64"), lat.astype("int64")


def split_raw(buf: bytes) -> tuple[pd.DataFrame, list[tuple[int, int]]]:
    """Find raw-data blocks in ``buf``; return the points and the byte spans (headers + data lines) they used.

    A block is every ``<name>,`` line between its header and the next header. Other lines inside it (a driver
    log line printed while YCSB dumps the points) are not data: they are left out of the spans, so the other
    parsers still see them, and the data lines after them still count.
    """
    sections: list[str] = []
    ts_parts: list[np.ndarray] = []
    lat_parts: list[np.ndarray] = []
    spans: list[tuple[int, int]] = []
    hit = buf.find(RAW_HEADER)
    while hit >= 0:
        line_start = buf.rfind(b"\n", 0, hit) + 1
        name = buf[line_start:hit].decode("utf-8", errors="replace").strip()
        eol = buf.find(b"\n", hit)
        if eol < 0:
            spans.append((line_start, len(buf)))
            break
        nxt = buf.find(RAW_HEADER, eol)
        limit = len(buf) if nxt < 0 else buf.rfind(b"\n", 0, nxt) + 1
        runs = _data_runs(buf, name.encode("utf-8", errors="replace") + b",", eol + 1, limit) if name else []
        spans.append((line_start, eol + 1))
        spans.extend(runs)
        if name:
            ts, lat = _read_block(b"".join(buf[a:b] for a, b in runs))
            sections.append(name)
            ts_parts.append(ts)
            lat_parts.append(lat)
        hit = nxt
    return _frame(sections, ts_parts, lat_parts), _merge_adjacent(spans)


def _data_runs(buf: bytes, prefix: bytes, start: int, limit: int) -> list[tuple[int, int]]:
    """Byte spans of the consecutive ``prefix`` lines in ``buf[start:limit]`` (each span ends after a newline
    or at ``limit``)."""
    runs: list[tuple[int, int]] = []
    not_data = re.compile(b"\n(?!" + re.escape(prefix) + b")")
    pos = start
    while pos < limit:
        if not buf.startswith(prefix, pos):
            found = buf.find(b"\n" + prefix, pos, limit)
            if found < 0:
                break
            pos = found + 1
        end_match = not_data.search(buf, pos, limit)
        end = limit if end_match is None else end_match.start() + 1
        runs.append((pos, end))
        pos = end
    return runs


def _merge_adjacent(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _derived(codes: np.ndarray, per_section: list[str]) -> pd.Categorical:
    """A categorical column from per-section values, built from codes (no per-row objects)."""
    cats = list(dict.fromkeys(per_section))
    remap = np.array([cats.index(v) for v in per_section], dtype="int32")
    return pd.Categorical.from_codes(remap[codes] if len(codes) else codes, categories=cats)


def _frame(sections: list[str], ts_parts: list[np.ndarray], lat_parts: list[np.ndarray]) -> pd.DataFrame:
    uniq = list(dict.fromkeys(sections))
    names = classify_frame(uniq)
    codes = (
        np.concatenate(
            [np.full(len(ts), uniq.index(s), dtype="int32") for s, ts in zip(sections, ts_parts, strict=True)]
        )
        if sections
        else np.empty(0, dtype="int32")
    )
    return pd.DataFrame(
        {
            "section": pd.Categorical.from_codes(codes, categories=uniq),
            "operation": _derived(codes, [names.at[s, "operation"] for s in uniq]),
            "kind": _derived(codes, [names.at[s, "kind"] for s in uniq]),
            "timestamp_ms": np.concatenate(ts_parts) if ts_parts else np.empty(0, dtype="int64"),
            "latency_us": np.concatenate(lat_parts) if lat_parts else np.empty(0, dtype="int64"),
        }
    )


def cut_spans(buf: bytes, spans: list[tuple[int, int]]) -> bytes:
    """``buf`` without the given (sorted, non-overlapping) byte spans."""
    if not spans:
        return buf
    out, pos = [], 0
    for start, end in spans:
        out.append(buf[pos:start])
        pos = max(pos, end)
    out.append(buf[pos:])
    return b"".join(out)


def parse_raw_file(path: str | PathLike[str]) -> pd.DataFrame:
    """Read a ``measurement.raw.output_file`` (all operations, appended): columns section, operation, kind,
    timestamp_ms, latency_us. Raises ParseError if the file holds no YCSB raw data."""
    buf = read_path_bytes(path)
    frame, spans = split_raw(buf)
    if not spans:
        raise ParseError(f"{path} is not a YCSB raw data file (no 'latency raw data' header line)")
    return frame
