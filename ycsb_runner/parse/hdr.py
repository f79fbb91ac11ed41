"""HdrHistogram interval logs written by `hdrhistogram.fileoutput=true` (one `<NAME>.hdr` per measurement).

YCSB 0.17.0 bundles HdrHistogram 2.1.4, which writes log format 1.1 with *V1* compressed histograms
(cookie 0x1c849382). The Python ``hdrhistogram`` package (module ``hdrh``) reads only V2 payloads, so V1
payloads are decoded here (header + big-endian count words) and V2 ones are handed to ``hdrh``.
Percentiles, min, max and mean use HdrHistogram 2.1.4's own definitions, so over all intervals they equal
YCSB's summary; over a window (e.g. skipping warm-up, which YCSB itself cannot do) they are exact for the
histogram data.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from .errors import ParseError
from .names import NAME_COLUMNS, classify_frame
from .numbers import percentile_label

_V1_ENCODING, _V1_COMPRESSED = 0x1C849301, 0x1C849302
_V2_ENCODING, _V2_COMPRESSED = 0x1C849303, 0x1C849304
_START_RE = re.compile(r"^#\[StartTime: (?P<t>[\d.]+)")
_NAME_RE = re.compile(r"^#\[Logging for: (?P<n>.*)\]")
DEFAULT_PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9, 99.99)


@dataclass(frozen=True)
class BucketLayout:
    """Bucket layout of a Java HdrHistogram (depends only on lowest discernible value and digits)."""

    lowest: int
    digits: int

    @property
    def unit_magnitude(self) -> int:
        return int(math.floor(math.log2(self.lowest)))

    @property
    def half_magnitude(self) -> int:
        mag = int(math.ceil(math.log2(2 * 10**self.digits)))
        return max(mag, 1) - 1

    def lowest_values(self, index: np.ndarray) -> np.ndarray:
        """valueFromIndex for each counts-array index."""
        idx = np.asarray(index, dtype="int64")
        half = 1 << self.half_magnitude
        bucket = (idx >> self.half_magnitude) - 1
        sub = (idx & (half - 1)) + half
        neg = bucket < 0
        sub = np.where(neg, sub - half, sub)
        bucket = np.where(neg, 0, bucket)
        return sub << (bucket + self.unit_magnitude)

    def counts_length(self, highest: int) -> int:
        """HdrHistogram's counts array length for values up to *highest*: what a payload of this layout
        and range can hold at most."""
        sub_bucket_count = 1 << (self.half_magnitude + 1)
        untrackable, buckets = sub_bucket_count << self.unit_magnitude, 1
        while untrackable <= highest:
            if untrackable > (2**63 - 1) // 2:
                buckets += 1
                break
            untrackable <<= 1
            buckets += 1
        return (buckets + 1) * (sub_bucket_count // 2)

    def range_sizes(self, index: np.ndarray) -> np.ndarray:
        idx = np.asarray(index, dtype="int64")
        bucket = np.maximum((idx >> self.half_magnitude) - 1, 0)
        return np.left_shift(np.int64(1), bucket + self.unit_magnitude)


@dataclass
class HdrInterval:
    """One interval of a log: start/length in seconds relative to the log's StartTime, and the counts."""

    start_s: float
    length_s: float
    max_s: float
    layout: BucketLayout
    counts: np.ndarray = field(repr=False)

    @property
    def total(self) -> int:
        return int(self.counts.sum())


@dataclass
class HdrLog:
    """A parsed `.hdr` file."""

    path: str
    name: str
    start_time_s: float | None
    intervals: list[HdrInterval]


_HEADER = ">iiiiqqd"  # cookie, payload length, index offset, digits, lowest, highest, conversion ratio
_HEADER_BYTES = struct.calcsize(_HEADER)
_V2_MAX_BYTES_PER_COUNT = 9  # a ZigZag LEB128 64-bit count


def _header(payload: bytes) -> tuple[int, int, int, BucketLayout, int]:
    """(cookie, payload length, index offset, layout, highest trackable value) of an encoded histogram;
    ValueError for a layout HdrHistogram cannot have (digits 0-5, 1 <= lowest, 2 x lowest <= highest)."""
    cookie, length, offset, digits, lowest, highest, _ratio = struct.unpack(_HEADER, payload[:_HEADER_BYTES])
    if not 0 <= digits <= 5 or lowest < 1 or highest < 2 * lowest or length < 0:
        raise ValueError(f"not a histogram's layout (digits {digits}, range {lowest}-{highest})")
    return cookie, length, offset, BucketLayout(int(lowest), int(digits)), int(highest)


def _inflate(compressed: bytes, bytes_per_count: int | None = None) -> bytes:
    """An encoded histogram from its zlib stream, never more bytes than its own header's range allows
    (counts length x *bytes_per_count*, the word size of a V1 payload when None): a payload that declares
    or holds more is a ValueError, whatever it would decompress to."""
    z = zlib.decompressobj()
    head = z.decompress(compressed, _HEADER_BYTES)
    if len(head) < _HEADER_BYTES:
        raise ValueError("histogram payload shorter than its header")
    cookie, length, _offset, layout, highest = _header(head)
    per_count = bytes_per_count or (cookie & 0xF0) >> 4 or 1
    limit = layout.counts_length(highest) * per_count
    if length > limit:
        raise ValueError(f"histogram payload declares {length:,} bytes; its range holds at most {limit:,}")
    body = z.decompress(z.unconsumed_tail, length + 1)
    if len(body) > length or z.unconsumed_tail:
        raise ValueError(f"histogram payload holds more than the {length:,} bytes it declares")
    return head + body


def _decode_v1(payload: bytes) -> tuple[BucketLayout, np.ndarray]:
    cookie, length, offset, layout, _highest = _header(payload)
    if (cookie & ~0xF0) != _V1_ENCODING:
        raise ValueError(f"unknown encoding cookie {cookie:#x}")
    if offset:
        raise ValueError("normalizing index offset is not supported")
    word = (cookie & 0xF0) >> 4
    if word not in (2, 4, 8):
        raise ValueError(f"unsupported word size {word}")
    counts = np.frombuffer(payload[40 : 40 + length], dtype=f">i{word}").astype("int64")
    return layout, counts


def decode_histogram(b64: str) -> tuple[BucketLayout, np.ndarray]:
    """Decode one base64 compressed histogram (V1 from HdrHistogram 2.1.x, or V2 via hdrh)."""
    raw = base64.b64decode(b64.strip())
    cookie = struct.unpack(">i", raw[:4])[0]
    base = cookie & ~0xF0
    if base == _V1_COMPRESSED:
        length = struct.unpack(">i", raw[4:8])[0]
        return _decode_v1(_inflate(raw[8 : 8 + length]))
    if base in (_V2_COMPRESSED, _V2_ENCODING):
        if base == _V2_COMPRESSED:  # checked against its range before hdrh inflates it without a limit
            _inflate(raw[8:], _V2_MAX_BYTES_PER_COUNT)
        hist = HdrHistogram.decode(b64.strip())
        counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len].astype("int64")
        return BucketLayout(int(hist.lowest_trackable_value), int(hist.significant_figures)), counts
    raise ValueError(f"unknown histogram cookie {cookie:#x}")


def read_hdr_log(path: str | PathLike[str]) -> HdrLog:
    """Parse one `.hdr` interval log. Undecodable rows are skipped; an unreadable file is a ParseError."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise ParseError(f"cannot read {p}: {err.strerror or err}") from err
    name, start = p.stem, None
    intervals: list[HdrInterval] = []
    for line in text.splitlines():
        if line.startswith("#"):
            m = _NAME_RE.match(line) or _START_RE.match(line)
            if m and "n" in m.groupdict():
                name = m.group("n")
            elif m:
                start = float(m.group("t"))
            continue
        fields = line.split(",")
        if fields and fields[0].startswith("Tag="):
            fields = fields[1:]
        if len(fields) != 4 or line.startswith('"'):
            continue
        try:
            layout, counts = decode_histogram(fields[3])
            intervals.append(
                HdrInterval(float(fields[0]), float(fields[1]), float(fields[2]), layout, counts)
            )
        except (ValueError, struct.error, zlib.error):
            continue
    if not intervals and start is None:
        raise ParseError(f"{p} is not an HdrHistogram log")
    return HdrLog(str(p), name, start, intervals)


def _as_logs(paths) -> list[HdrLog]:
    if isinstance(paths, HdrLog):
        return [paths]
    if isinstance(paths, str | PathLike):
        paths = [paths]
    logs: list[HdrLog] = []
    for item in paths:
        if isinstance(item, HdrLog):
            logs.append(item)
            continue
        p = Path(item)
        if p.is_dir():
            logs.extend(read_hdr_log(f) for f in sorted(p.glob("*.hdr")))
        else:
            logs.append(read_hdr_log(p))
    return logs


def _stats(layout: BucketLayout, counts: np.ndarray, percentiles: Sequence[float]) -> dict[str, float]:
    """count/min/max/mean/percentiles with HdrHistogram 2.1.4 semantics (highest equivalent value)."""
    total = int(counts.sum())
    out: dict[str, float] = {"count": float(total)}
    if total == 0:
        out.update({"min": np.nan, "max": np.nan, "mean": np.nan})
        out.update({percentile_label(p): np.nan for p in percentiles})
        return out
    nz = np.flatnonzero(counts)
    low = layout.lowest_values(nz)
    size = layout.range_sizes(nz)
    out["min"] = float(low[0])
    out["max"] = float(low[-1] + size[-1] - 1)
    out["mean"] = float(np.dot((low + (size >> 1)).astype("float64"), counts[nz].astype("float64")) / total)
    cum = np.cumsum(counts[nz])
    for p in percentiles:
        target = max(int((min(p, 100.0) / 100.0) * total + 0.5), 1)
        i = int(np.searchsorted(cum, target, side="left"))
        i = min(i, len(nz) - 1)
        out[percentile_label(p)] = float(low[i] if p == 0 else low[i] + size[i] - 1)
    return out


def _sum_counts(parts: list[np.ndarray]) -> np.ndarray:
    n = max((len(c) for c in parts), default=0)
    total = np.zeros(n, dtype="int64")
    for c in parts:
        total[: len(c)] += c
    return total


def _window(logs: list[HdrLog], skip_first_s: float, skip_last_s: float, start_s, end_s):
    """Selected intervals per log; times are seconds since the earliest interval start over all logs."""

    def absolute(log: HdrLog, iv: HdrInterval) -> float:
        return (log.start_time_s or 0.0) + iv.start_s

    starts = [absolute(log, iv) for log in logs for iv in log.intervals]
    ends = [absolute(log, iv) + iv.length_s for log in logs for iv in log.intervals]
    if not starts:
        return {id(log): [] for log in logs}, 0.0
    t0, t_end = min(starts), max(ends)
    lo = max(skip_first_s, start_s if start_s is not None else -np.inf)
    hi = min(t_end - t0 - skip_last_s, end_s if end_s is not None else np.inf)
    chosen = {}
    for log in logs:
        chosen[id(log)] = [
            iv
            for iv in log.intervals
            if absolute(log, iv) - t0 >= lo - 1e-9 and absolute(log, iv) + iv.length_s - t0 <= hi + 1e-9
        ]
    return chosen, t0


def hdr_percentiles(
    paths,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    *,
    skip_first_s: float = 0.0,
    skip_last_s: float = 0.0,
    start_s: float | None = None,
    end_s: float | None = None,
) -> pd.DataFrame:
    """Exact latency percentiles (us) per `.hdr` log over a time window.

    ``paths``: a `.hdr` file, a directory of them, or an iterable of either. Time is measured from the
    earliest interval start over all given logs; an interval is used when it lies wholly inside
    [max(skip_first_s, start_s), min(run end - skip_last_s, end_s)]. One row per log: section, operation,
    kind, intended, outcome, part, intervals, window_start_s, window_end_s, count, min, max, mean, p<P>...
    """
    logs = _as_logs(paths)
    chosen, t0 = _window(logs, skip_first_s, skip_last_s, start_s, end_s)
    rows = []
    for log in logs:
        ivs = chosen[id(log)]
        layout = ivs[0].layout if ivs else BucketLayout(1, 3)
        row: dict[str, object] = {"section": log.name, "intervals": len(ivs)}
        if ivs:
            row["window_start_s"] = min((log.start_time_s or 0.0) + iv.start_s for iv in ivs) - t0
            row["window_end_s"] = max((log.start_time_s or 0.0) + iv.start_s + iv.length_s for iv in ivs) - t0
        else:
            row["window_start_s"] = row["window_end_s"] = np.nan
        row.update(_stats(layout, _sum_counts([iv.counts for iv in ivs]), percentiles))
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    names = classify_frame(frame["section"])
    frame = frame.join(names, on="section")
    first = ["section", *NAME_COLUMNS]
    return frame[first + [c for c in frame.columns if c not in first]]


def hdr_intervals(paths, percentiles: Sequence[float] = (50.0, 90.0, 99.0, 99.9)) -> pd.DataFrame:
    """One row per (log, interval): section..., start_s (since the earliest interval), length_s,
    epoch_s, count, min, max, mean and the given percentiles for that interval alone."""
    logs = _as_logs(paths)
    chosen, t0 = _window(logs, 0.0, 0.0, None, None)
    rows = []
    for log in logs:
        for iv in chosen[id(log)]:
            epoch = (log.start_time_s or 0.0) + iv.start_s
            row = {"section": log.name, "start_s": epoch - t0, "length_s": iv.length_s}
            row["epoch_s"] = epoch if log.start_time_s is not None else np.nan
            row.update(_stats(iv.layout, iv.counts, percentiles))
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame = frame.join(classify_frame(frame["section"]), on="section")
    first = ["section", *NAME_COLUMNS]
    return frame[first + [c for c in frame.columns if c not in first]]


def hdr_histograms(
    paths, *, skip_first_s: float = 0.0, skip_last_s: float = 0.0, start_s=None, end_s=None
) -> dict[str, HdrHistogram]:
    """The window's accumulated histogram per log as ``hdrh.histogram.HdrHistogram`` objects."""
    logs = _as_logs(paths)
    chosen, _ = _window(logs, skip_first_s, skip_last_s, start_s, end_s)
    out: dict[str, HdrHistogram] = {}
    for log in logs:
        ivs = chosen[id(log)]
        counts = _sum_counts([iv.counts for iv in ivs])
        layout = ivs[0].layout if ivs else BucketLayout(1, 3)
        nz = np.flatnonzero(counts)
        top = int(layout.lowest_values(np.array([max(len(counts) - 1, 0)]))[0]) if len(counts) else 2
        hist = HdrHistogram(layout.lowest, max(top, 2 * layout.lowest, 2), layout.digits)
        if nz.size:
            n = min(hist.counts_len, len(counts))
            np.ctypeslib.as_array(hist.counts)[:n] += counts[:n].astype("uint64")
            hist.set_internal_tacking_values(int(nz[0]), int(nz[-1]), int(counts[:n].sum()))
        out[log.name] = hist
    return out
