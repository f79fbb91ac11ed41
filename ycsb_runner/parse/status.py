"""The `-s` status lines: one row per (status update, operation group), without a per-line Python loop.

A status update is ``<label><yyyy-MM-dd HH:mm:ss:SSS> <sec> sec: <ops> operations; [<cur> current ops/sec; ]
[est completion in <ETA>]<groups>``. For the two-in-one measurement types one update spans several physical
lines (``[HdrREAD: ...]`` newline ``[BucketREAD ...] [HdrUPDATE: ...]`` ...); those continuation lines are
attached to the update before them. Lines are classified by one regex pass (see lines.py). When every group
is a 0.17.0 ``[OP: Count=.., Max=.., ...]`` group (the common case), the groups become CSV through one
``bytes.translate`` and are read by pandas' C reader (``_hdr_fast``); otherwise all groups are read by one
``findall`` over their joined text. Both give the same result. stream.py calls this per chunk of lines
(``parse_chunk``) and joins the chunks (``concat_chunks``), so memory stays bounded.
"""

from __future__ import annotations

import csv
import functools
import io
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .lines import Lines, tuples_to_array
from .names import NAME_COLUMNS, classify_frame
from .numbers import floats_from_text
from .summary import empty_frame

_HDR_G = (
    r"\[(?P<h_op>[^:\[\]\x00]+): Count=(?P<h_count>[^,\[\]\x00]*), Max=(?P<h_max>[^,\[\]\x00]*), "
    r"Min=(?P<h_min>[^,\[\]\x00]*), Avg=(?P<h_avg>[^,\[\]\x00]*(?:,(?! )[^,\[\]\x00]*)?), "
    r"90=(?P<h_p90>[^,\[\]\x00]*), "
    r"99=(?P<h_p99>[^,\[\]\x00]*), 99\.9=(?P<h_p999>[^,\[\]\x00]*), 99\.99=(?P<h_p9999>[^,\[\]\x00]*)\]"
)
# Every class excludes '[' and ']' so that no attempt runs past the next group: linear time on any input.
_GEN_G = r"\[(?P<g_op>[^:\[\]\x00]+): (?P<g_kv>[^\[\]\x00]*)\]"
_AVG_G = r"\[(?P<a_op>[^\[\]\x00]+?) AverageLatency\(us\)=(?P<a_avg>[^\[\]\x00]*)\]"
_RAW_G = (
    r"(?<![^\s\]\x00])(?P<r_op>[^\s\[\]\x00]+) count: (?P<r_count>\d+), "
    r"average latency\(us\): (?P<r_avg>[^\s\[\]\x00]+)"
)
_KV_RE = re.compile(r"(?<![\w.])(?P<k>[\w.]+)=(?P<v>.*?)(?=, [\w.]+=|$)")
_ETA_RE = re.compile(r"(\x00)|(\d+) ([dhms])")
_ETA_UNIT = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_SECONDS_DROP = str.maketrans("", "", " second")
# A decimal comma (e.g. de_DE) shows in the only non-integral group values; literal prefixes keep this fast.
_LOCALE_COMMA = tuple(
    re.compile(p) for p in (r"Avg=-?\d+,\d", r"AverageLatency\(us\)=-?\d+,\d", r"latency\(us\): -?\d+,\d")
)
# An `[OP: ...]` group whose first key is not Count=: another YCSB version's layout, parsed generically.
_OTHER_KV = re.compile(r"\[[^:\[\]\x00]+: (?!Count=)")

HEADER_COLUMNS = [
    "status_index",
    "source",
    "label",
    "timestamp",
    "elapsed_s",
    "total_ops",
    "current_ops_per_s",
    "eta_s",
]
VALUE_COLUMNS = ["count", "max", "min", "avg", "p90", "p99", "p99.9", "p99.99"]
STATUS_COLUMNS = [*HEADER_COLUMNS, "section", *NAME_COLUMNS, *VALUE_COLUMNS]
_HEADER_FIELDS = ("label", "ts", "sec", "ops", "cur", "eta")


@dataclass
class StatusText:
    """Status updates found in one stream: header fields (object arrays) and group text per update."""

    header: dict[str, np.ndarray]
    rests: list[str]
    used: np.ndarray  # lines that belong to status updates (start or continuation)

    def __len__(self) -> int:
        return len(self.rests)


def _const(n: int, value: str) -> np.ndarray:
    """An object array of Python str (np.full would convert to numpy's str type, which drops NULs)."""
    arr = np.empty(n, dtype=object)
    arr[:] = [value] * n
    return arr


def find_status(lines: Lines) -> StatusText:
    """Locate status updates and attach continuation lines of multi-line (two-in-one) updates."""
    if lines.n == 0:
        return StatusText({f: np.empty(0, dtype=object) for f in _HEADER_FIELDS}, [], np.zeros(0, dtype=bool))
    start = lines.is_status
    cont = lines.is_cont & ~start
    breaker = start | ~cont
    breaker[0] = True
    first_of_group = np.flatnonzero(breaker)
    group = np.cumsum(breaker) - 1
    attached = cont & start[first_of_group[group]]
    header = {f: lines[f][start] for f in _HEADER_FIELDS}
    if not start.any():
        return StatusText(header, [], start)
    if attached.any():
        keep = start | attached
        n_keep = int(keep.sum())
        marks, spaces = _const(n_keep, "\x00"), _const(n_keep, " ")
        pieces = np.where(start[keep], marks + lines["rest"][keep], spaces + lines["cont"][keep])
        rests = "".join(pieces.tolist()).split("\x00")[1:]
    else:
        rests = lines["rest"][start].tolist()
    return StatusText(header, rests, start | attached)


def _eta_seconds(eta: np.ndarray) -> np.ndarray:
    out = np.full(len(eta), np.nan)
    has = eta != ""
    if not has.any():
        return out
    joined = "\x00".join(eta[has].tolist())
    n_has = int(has.sum())
    plain_seconds = joined.count("second") == n_has and not any(
        u in joined for u in ("day", "hour", "minute")
    )
    if plain_seconds:  # every ETA is one "<n> second(s)": no regex
        # One deleting translate: str.replace(" seconds", "") searches afresh (two-way set-up) per ETA.
        plain = joined.translate(_SECONDS_DROP).split("\x00")
        secs = floats_from_text(plain)
        if not np.isnan(secs).any():
            secs[secs >= 9.2e18] = np.inf
            out[has] = secs
            return out
    found = _ETA_RE.findall(joined)
    if not found:
        return out
    table = tuples_to_array(found, 3)
    mark, num, unit = table[:, 0], table[:, 1], table[:, 2]
    idx = np.cumsum(mark != "")
    parts = mark == ""
    factor = np.zeros(len(unit))
    for u, f in _ETA_UNIT.items():
        factor[unit == u] = f
    secs = np.zeros(n_has)
    np.add.at(secs, idx[parts], floats_from_text(num[parts].tolist()) * factor[parts])
    secs[secs >= 9.2e18] = np.inf  # Long.MAX_VALUE seconds: the throughput was 0
    out[has] = secs
    return out


def _has_locale_comma(joined: str) -> bool:
    return any(p.search(joined) for p in _LOCALE_COMMA)


def _findall(branches: list[str], joined: str) -> tuple[list[tuple[str, ...]], list[str]]:
    pattern = re.compile("|".join(branches))
    names = [name for name, _ in sorted(pattern.groupindex.items(), key=lambda kv: kv[1])]
    return pattern.findall(joined), names


_OP_FIELDS = ("h_op", "g_op", "a_op", "r_op")
_VALUE_SOURCES = {
    "count": ("h_count", "r_count"),
    "max": ("h_max",),
    "min": ("h_min",),
    "avg": ("h_avg", "a_avg", "r_avg"),
    "p90": ("h_p90",),
    "p99": ("h_p99",),
    "p99.9": ("h_p999",),
    "p99.99": ("h_p9999",),
}


# Fast path for updates made only of 0.17.0 `[OP: Count=a, Max=b, Min=c, Avg=d, 90=e, 99=f, 99.9=g, 99.99=h]`
# groups: one bytes.translate turns the group text into CSV (']' ends a row, ',' and '=' separate fields,
# '[' and ' ' go), and pandas' C reader parses it, with the key columns read as categoricals so that checking
# every group's layout costs nothing per group.
_FAST_KEYS = ("Max", "Min", "Avg", "90", "99", "99.9", "99.99")
_FAST_TABLE = bytes.maketrans(b"[],=", b"\x1f\n\x1f\x1f")
_FAST_NAMES = ["lead", "name", "count"] + [
    f"{p}{i}" for i in range(len(_FAST_KEYS)) for p in ("key", "value")
]
# What a well-formed group leaves when only its structural characters are kept: '[', the ':' of ': Count',
# its 8 spaces (': Count' and ', ' before each other key) and ']'. Control characters that could split a
# CSV row or field are kept too, so that they break the shape.
_FAST_KEPT = b"[]: \n\t\r\x00\x1f"
_FAST_DROP = bytes(b for b in range(256) if b not in _FAST_KEPT)
_FAST_SHAPE = b"[:" + b" " * (1 + len(_FAST_KEYS)) + b"]"


def _read_fast(data: bytes, dtypes: dict[str, object]) -> pd.DataFrame:
    na_values = {n: ["", "NaN", "nan"] for n in _FAST_NAMES}
    return _read_separated(io.BytesIO(data), _FAST_NAMES, dtypes, na_values, index_col=False)


def _read_separated(
    source: io.BytesIO | io.StringIO,
    names: list[str],
    dtypes: dict[str, object],
    na_values: dict[str, list[str]],
    **more: object,
) -> pd.DataFrame:
    """Rows of fields separated by \\x1f (no header, no quoting, blank lines kept), by pandas' C reader."""
    return pd.read_csv(
        source,
        header=None,
        names=names,
        sep="\x1f",
        dtype=dtypes,
        engine="c",
        skip_blank_lines=False,
        quoting=csv.QUOTE_NONE,
        keep_default_na=False,
        na_values=na_values,
        **more,
    )


def _fast_shapes_ok(data: bytes) -> bool:
    """Every update line is groups of the exact shape above separated by single spaces (edges may hold
    spaces): then every space, ':' and bracket sits where the template puts it, so deleting them loses
    nothing and each ']' ends exactly one group."""
    # Compared per distinct line, not by replacing each group: bytes.replace re-prepares its search per hit.
    lines = set(data.translate(None, _FAST_DROP).split(b"\n"))
    for line in lines:
        body = line.strip(b" ")
        if body and body != b" ".join([_FAST_SHAPE] * (len(body) // (len(_FAST_SHAPE) + 1) + 1)):
            return False
    return True


@functools.cache
def _fast_dtypes() -> dict[str, object]:
    """The fast path's column types. A key column may hold only its key: anything else becomes NaN, which
    ``_hdr_fast`` refuses. (Made once: a CategoricalDtype costs 0.1 ms.)"""
    dtypes: dict[str, object] = {"lead": "category", "name": "category", "count": "float64"}
    for i, key in enumerate(_FAST_KEYS):
        dtypes[f"key{i}"] = pd.CategoricalDtype([key])
        dtypes[f"value{i}"] = "float64"
    return dtypes


def _hdr_fast(rests: list[str]) -> dict[str, np.ndarray] | None:
    """Groups of updates made only of well-formed 0.17.0 Hdr groups, without a regex or a Python object per
    group. None when any update holds anything else (the caller then takes the general path), so wherever
    this returns a result it is the general path's result."""
    data = "\n".join([*rests, ""]).encode("utf-8", errors="replace")
    if b"Count=" not in data or not _fast_shapes_ok(data):
        return None
    # '[' starts a field too, so that text before a group lands in "lead", which must stay empty.
    data = data.translate(_FAST_TABLE, b" ")
    try:
        with warnings.catch_warnings():  # a value outside a key's category: NaN now, an error in pandas 4
            warnings.simplefilter("ignore")
            frame = _read_fast(data, _fast_dtypes())
    except (ValueError, TypeError, pd.errors.ParserError):
        return None
    del data
    names = frame["name"].cat
    codes = names.codes.to_numpy()
    blank = codes < 0
    n_blank = int(blank.sum())
    if n_blank != len(rests) or int((frame["lead"].cat.codes.to_numpy() >= 0).sum()):
        return None
    rows = ~blank
    # On blank rows every key is NaN; anywhere else a NaN key is a key other than the expected one.
    for i in range(len(_FAST_KEYS)):
        if int((frame[f"key{i}"].cat.codes.to_numpy() < 0).sum()) != n_blank:
            return None
    if names.categories.dtype.kind not in "OUT":  # pandas made numbers of the names: not a plain layout
        return None
    cats = [str(c) for c in names.categories]
    if not all(c.endswith(":Count") and ":" not in c[: -len(":Count")] for c in cats):
        return None
    ops = np.array([c[: -len(":Count")] for c in cats], dtype=object)
    out: dict[str, np.ndarray] = {"status_index": np.cumsum(blank)[rows].astype("int64")}
    out["section"] = ops[codes[rows]]
    value_names = ["count"] + [f"value{i}" for i in range(len(_FAST_KEYS))]
    for column, name in zip(VALUE_COLUMNS, value_names, strict=True):
        values = frame[name].to_numpy(dtype="float64")[rows]
        values[np.isfinite(values) & (np.abs(values) >= 9.2e18)] = np.nan
        out[column] = values
    zero = out["count"] == 0
    for c in VALUE_COLUMNS[1:]:
        out[c][zero] = np.nan
    return out


def _groups(rests: list[str], *, fast: bool = True) -> dict[str, np.ndarray]:
    """All groups of all updates: status_index, section and the value columns (float arrays)."""
    if fast and rests:
        quick = _hdr_fast(rests)
        if quick is not None:
            return quick
    joined = "\x00" + "\x00".join(rests) if rests else ""
    branches = _branches(joined)
    if len(branches) == 1:
        return _no_groups()
    found, names = _findall(branches, joined)
    columns = None
    if _HDR_G in branches and _GEN_G not in branches:
        columns = _fast_columns(found, names, joined)
        hdr_ops = (columns or _columns(found, names, joined))["h_op"]
        if int((hdr_ops != "").sum()) < joined.count(": Count="):
            # Some `[OP: Count=...]` group did not fit the 0.17.0 layout: parse such groups generically too.
            branches.insert(2, _GEN_G)
            found, names = _findall(branches, joined)
            columns = None
    if not found:
        return _no_groups()
    if columns is None:
        columns = (None if _GEN_G in branches else _fast_columns(found, names, joined)) or _columns(
            found, names, joined
        )
    return _assemble(columns)


def _branches(joined: str) -> list[str]:
    """The update marker's pattern and the group patterns of the layouts that occur in *joined*."""
    branches = [r"(?P<mark>\x00)"]
    if "Count=" in joined:
        branches.append(_HDR_G)
    if ": " in joined and _OTHER_KV.search(joined):
        branches.append(_GEN_G)
    if "AverageLatency(us)=" in joined:
        branches.append(_AVG_G)
    if " count: " in joined:
        branches.append(_RAW_G)
    return branches


def _no_groups() -> dict[str, np.ndarray]:
    empty = {"status_index": np.empty(0, dtype="int64"), "section": np.empty(0, dtype=object)}
    empty.update({c: np.empty(0) for c in VALUE_COLUMNS})
    return empty


def _assemble(columns: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    mark = columns["mark"]
    status_index = (np.cumsum(mark) - 1)[~mark]
    out = {"status_index": status_index.astype("int64")}
    section = np.full(len(status_index), "", dtype=object)
    for name in _OP_FIELDS:
        if name in columns:
            ops = columns[name][~mark]
            section = np.where(section == "", ops, section)
    out["section"] = section
    for c in VALUE_COLUMNS:
        merged = np.full(len(status_index), np.nan)
        for name in _VALUE_SOURCES[c]:
            if name in columns:
                values = columns[name][~mark]
                merged = np.where(np.isnan(merged), values, merged)
        out[c] = merged
    if "g_op" in columns and (columns["g_op"][~mark] != "").any():
        _fill_generic(out, columns["g_kv"][~mark], columns["g_op"][~mark] != "")
    zero = out["count"] == 0
    for c in ("max", "min", "avg", "p90", "p99", "p99.9", "p99.99"):
        out[c][zero] = np.nan
    return out


def _is_text_field(name: str) -> bool:
    return name.endswith("_op") or name == "g_kv"


def _fast_columns(found: list[tuple], names: list[str], joined: str) -> dict[str, np.ndarray] | None:
    """All group fields through one CSV read (C speed). None when some value would confuse the reader."""
    if not found:
        return None
    text = "\n".join(map("\x1f".join, found))
    if '"' in text or "\r" in text or text.count("\x1f") != len(found) * (len(names) - 1):
        return None
    text = text.replace("\x00", "M")
    for old, new in (("\u221e", "inf"), ("\ufffd", "nan")):
        if old in text:
            text = text.replace(old, new)
    frame = _read_fields(text, names)
    if frame is None and _has_locale_comma(joined):
        frame = _read_fields(text.replace(",", "."), names)
    if frame is None or len(frame) != len(found):
        return None
    cols = {"mark": frame["mark"].to_numpy(dtype=object) == "M"}
    for n in names[1:]:
        if _is_text_field(n):
            cols[n] = frame[n].to_numpy(dtype=object)
        else:
            values = frame[n].to_numpy(dtype="float64", copy=True)
            values[np.isfinite(values) & (np.abs(values) >= 9.2e18)] = np.nan
            cols[n] = values
    return cols


def _read_fields(text: str, names: list[str]) -> pd.DataFrame | None:
    text_fields = {n for n in names if _is_text_field(n) or n == "mark"}
    dtypes = {n: (object if n in text_fields else "float64") for n in names}
    na_values = {n: ["", "NaN", "nan", "NA"] for n in names if n not in text_fields}
    try:
        return _read_separated(io.StringIO(text), names, dtypes, na_values)
    except (ValueError, pd.errors.ParserError):
        return None


def _columns(found: list[tuple[str, ...]], names: list[str], joined: str) -> dict[str, np.ndarray]:
    """The robust path: every field as an object column, numbers parsed column by column."""
    table = tuples_to_array(found, len(names))
    comma = _has_locale_comma(joined)
    cols: dict[str, np.ndarray] = {"mark": table[:, 0] != ""}
    for i, n in enumerate(names[1:], start=1):
        column = table[:, i]
        text_field = _is_text_field(n)
        cols[n] = column.copy() if text_field else floats_from_text(column.tolist(), decimal_comma=comma)
    return cols


def _fill_generic(out: dict[str, np.ndarray], kv: np.ndarray, rows: np.ndarray) -> None:
    """Groups in an unexpected `[OP: k=v, ...]` layout (other YCSB versions): parse key by key."""
    keymap = {"Count": "count", "Max": "max", "Min": "min", "Avg": "avg", "90": "p90", "99": "p99"}
    keymap.update({"99.9": "p99.9", "99.99": "p99.99"})
    for pos in np.flatnonzero(rows):
        for m in _KV_RE.finditer(kv[pos]):
            dst = keymap.get(m.group("k"))
            if dst:
                out[dst][pos] = floats_from_text([m.group("v")], decimal_comma="," in m.group("v"))[0]


def _timestamps(ts: np.ndarray) -> np.ndarray:
    """``yyyy-MM-dd HH:mm:ss:SSS`` -> datetime64[ms] (numpy's ISO parser after ':SSS' -> '.SSS')."""
    if len(ts) == 0:
        return np.empty(0, dtype="datetime64[ms]")
    chars = np.array(ts.tolist(), dtype="U23")
    grid = chars.view("U1").reshape(len(chars), 23).copy()
    grid[:, 10] = "T"
    grid[:, 19] = "."
    try:
        return grid.reshape(-1).view("U23").astype("datetime64[ms]")
    except ValueError:  # an impossible date (e.g. month 13) somewhere: fall back to a lenient parse
        return pd.to_datetime(
            pd.Series(ts, dtype=object), format="%Y-%m-%d %H:%M:%S:%f", errors="coerce"
        ).to_numpy()


@dataclass
class StatusChunk:
    """Status updates of one stream (or one chunk of it), numbers already parsed.

    ``head``: per update (label, timestamp, elapsed_s, total_ops, current_ops_per_s, eta_s); ``groups``: per
    operation group (status_index into the updates, section, value columns); ``keys``: a hash per update of
    its whole text, kept only where adjacent duplicates may have to be dropped (stdout)."""

    n: int
    head: dict[str, np.ndarray]
    groups: dict[str, np.ndarray]
    keys: np.ndarray | None = None


def _empty_groups() -> dict[str, np.ndarray]:
    out = {"status_index": np.empty(0, dtype="int64"), "section": np.empty(0, dtype=object)}
    out.update({c: np.empty(0) for c in VALUE_COLUMNS})
    return out


def _empty_head() -> dict[str, np.ndarray]:
    return {
        "label": np.empty(0, dtype=object),
        "timestamp": np.empty(0, dtype="datetime64[ms]"),
        **{c: np.empty(0) for c in ("elapsed_s", "total_ops", "current_ops_per_s", "eta_s")},
    }


def empty_chunk() -> StatusChunk:
    return StatusChunk(0, _empty_head(), _empty_groups(), np.empty(0, dtype="int64"))


def parse_chunk(found: StatusText, *, with_keys: bool) -> StatusChunk:
    """Numbers of the updates ``find_status`` located: header fields and every operation group."""
    n = len(found)
    if n == 0:
        return empty_chunk()
    h = found.header
    cur = h["cur"]
    head = {
        "label": h["label"],
        "timestamp": _timestamps(h["ts"]),
        "elapsed_s": floats_from_text(h["sec"].tolist()),
        "total_ops": floats_from_text(h["ops"].tolist()),
        "current_ops_per_s": floats_from_text(cur.tolist(), decimal_comma="," in "".join(cur.tolist())),
        "eta_s": _eta_seconds(h["eta"]),
    }
    keys = None
    if with_keys:
        parts = zip(h["label"].tolist(), h["ts"].tolist(), h["ops"].tolist(), found.rests, strict=True)
        keys = np.fromiter((hash((a, b, c, d)) for a, b, c, d in parts), dtype="int64", count=n)
    return StatusChunk(n, head, _groups(found.rests), keys)


def concat_chunks(chunks: list[StatusChunk]) -> StatusChunk:
    chunks = [c for c in chunks if c.n]
    if not chunks:
        return empty_chunk()
    if len(chunks) == 1:
        return chunks[0]
    offsets = np.cumsum([0] + [c.n for c in chunks[:-1]])
    head = {k: np.concatenate([c.head[k] for c in chunks]) for k in chunks[0].head}
    groups = {
        k: np.concatenate([c.groups[k] for c in chunks]) for k in chunks[0].groups if k != "status_index"
    }
    groups["status_index"] = np.concatenate(
        [c.groups["status_index"] + off for c, off in zip(chunks, offsets, strict=True)]
    )
    keys = None
    if all(c.keys is not None for c in chunks):
        keys = np.concatenate([c.keys for c in chunks])
    return StatusChunk(int(sum(c.n for c in chunks)), head, groups, keys)


def dedupe_adjacent(chunk: StatusChunk) -> tuple[StatusChunk, int]:
    """Drop adjacent identical updates when (nearly) every update is doubled: a combined 2>&1 capture of
    a timeseries run, which prints each status line on both streams."""
    n = chunk.n
    if n < 4 or chunk.keys is None:
        return chunk, 0
    dup = np.zeros(n, dtype=bool)
    dup[1:] = chunk.keys[1:] == chunk.keys[:-1]
    if dup.sum() * 2 < n - 1:
        return chunk, 0
    keep = ~dup
    renumber = np.cumsum(keep) - 1
    rows = keep[chunk.groups["status_index"]]
    groups = {k: v[rows] for k, v in chunk.groups.items()}
    groups["status_index"] = renumber[groups["status_index"]]
    head = {k: v[keep] for k, v in chunk.head.items()}
    return StatusChunk(int(keep.sum()), head, groups, chunk.keys[keep]), int(dup.sum())


def _repeated(distinct: np.ndarray, codes: np.ndarray) -> object:
    """The column pandas would make of ``distinct[codes]`` (code -1: missing), typed once from the
    distinct values instead of by checking every row (a text column of 400,000 rows costs 4 ms that way)."""
    values = pd.Series(np.asarray(distinct, dtype=object), dtype=None).array
    return values.take(codes, allow_fill=True, fill_value=None)


def build_status(chunk: StatusChunk, source: str, extra_names=()) -> pd.DataFrame:
    """The status frame: header fields joined with one row per operation group (or one row if none)."""
    n = chunk.n
    if n == 0:
        return empty_frame(STATUS_COLUMNS)
    groups = chunk.groups
    idx = groups["status_index"]
    lonely = np.flatnonzero(np.bincount(idx, minlength=n) == 0)
    if len(lonely):
        all_idx = np.concatenate([idx, lonely])
        order = np.argsort(all_idx, kind="stable")
        all_idx = all_idx[order]
        sections = np.concatenate([groups["section"], np.full(len(lonely), None, dtype=object)])[order]
        values = {c: np.concatenate([groups[c], np.full(len(lonely), np.nan)])[order] for c in VALUE_COLUMNS}
    else:
        all_idx, sections, values = idx, groups["section"], {c: groups[c] for c in VALUE_COLUMNS}
    columns: dict[str, object] = {
        "status_index": all_idx,
        "source": _repeated(np.array([source], dtype=object), np.zeros(len(all_idx), dtype="int64")),
    }
    for name in HEADER_COLUMNS[2:]:
        if chunk.head[name].dtype == object:  # the label: a few distinct texts
            label_codes, label_uniques = pd.factorize(chunk.head[name])
            columns[name] = _repeated(label_uniques, label_codes[all_idx])
        else:
            columns[name] = chunk.head[name][all_idx]
    codes, uniques = pd.factorize(sections)
    columns["section"] = _repeated(uniques, codes)
    names = classify_frame([*uniques, *extra_names]).loc[list(uniques)] if len(uniques) else None
    ok = codes >= 0
    for c in NAME_COLUMNS:
        if c == "intended":
            flags = np.zeros(len(codes), dtype=bool)
            if names is not None:
                flags[ok] = names[c].to_numpy(dtype=bool)[codes[ok]]
            columns[c] = pd.arrays.BooleanArray(flags, ~ok)
            continue
        distinct = names[c].to_numpy(dtype=object) if names is not None else np.empty(0, dtype=object)
        columns[c] = _repeated(distinct, codes)
    columns.update(values)
    return pd.DataFrame(columns, columns=STATUS_COLUMNS, copy=False)


@dataclass
class StatusDigest:
    """What the completion needs of one stream's status updates, gathered chunk by chunk in bounded memory
    (``parse_capture`` keeps only this unless the status table itself is asked for): how many updates,
    how many repeat the one before (a 2>&1 capture of a timeseries run prints each twice), the last total
    operations, the operation sections in order, whether any p99 was printed, and per section the
    operations the updates counted (over all updates, and over those that are not repeats)."""

    n: int = 0
    repeats: int = 0
    last_ops: float | None = None
    last_key: int | None = None
    p99_seen: bool = False
    sections: dict[str, None] = field(default_factory=dict)
    counts: dict[str, float] = field(default_factory=dict)
    unique_counts: dict[str, float] = field(default_factory=dict)

    def add(self, chunk: StatusChunk) -> None:
        if not chunk.n:
            return
        repeat = np.zeros(chunk.n, dtype=bool)
        if chunk.keys is not None:
            repeat[1:] = chunk.keys[1:] == chunk.keys[:-1]
            repeat[0] = self.last_key is not None and int(chunk.keys[0]) == self.last_key
            self.last_key = int(chunk.keys[-1])
        self.n += chunk.n
        self.repeats += int(repeat.sum())
        self.last_ops = float(chunk.head["total_ops"][-1])
        groups = chunk.groups
        if len(groups["section"]):
            self.p99_seen = self.p99_seen or bool(np.isfinite(groups["p99"]).any())
            frame = pd.DataFrame(
                {
                    "section": groups["section"],
                    "count": groups["count"],
                    "unique": np.where(repeat[groups["status_index"]], 0.0, groups["count"]),
                }
            )
            sums = frame.groupby("section", sort=False)[["count", "unique"]].sum(min_count=1)
            for section, row in sums.iterrows():
                self.sections.setdefault(str(section), None)
                self.counts[section] = self.counts.get(section, 0.0) + float(np.nan_to_num(row["count"]))
                self.unique_counts[section] = self.unique_counts.get(section, 0.0) + float(
                    np.nan_to_num(row["unique"])
                )

    @property
    def doubled(self) -> bool:
        """Whether (nearly) every update is printed twice in a row: ``dedupe_adjacent``'s rule."""
        return self.n >= 4 and self.last_key is not None and self.repeats * 2 >= self.n - 1

    def updates(self, dedupe: bool) -> int:
        return self.n - self.repeats if dedupe and self.doubled else self.n

    def section_counts(self, dedupe: bool) -> dict[str, float]:
        return dict(self.unique_counts if dedupe and self.doubled else self.counts)
