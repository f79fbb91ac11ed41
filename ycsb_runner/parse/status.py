"""The `-s` status lines: one row per (status update, operation group), parsed without a per-line Python loop.

A status update is ``<label><yyyy-MM-dd HH:mm:ss:SSS> <sec> sec: <ops> operations; [<cur> current ops/sec; ]
[est completion in <ETA>]<groups>``. For the two-in-one measurement types one update spans several physical
lines (``[HdrREAD: ...]`` newline ``[BucketREAD ...] [HdrUPDATE: ...]`` ...); those continuation lines are
attached to the update before them.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .names import NAME_COLUMNS, classify_frame
from .numbers import NO_DATA_ABS, to_float_locale
from .summary import empty_frame

STATUS_RE = re.compile(
    r"^(?P<label>.*?)(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}) (?P<sec>\d+) sec: (?P<ops>\d+) operations; "
    r"(?:(?P<cur>[^ ;]*) current ops/sec; )?"
    r"(?:est completion in (?P<eta>(?:\d+ (?:day|hour|minute|second)s? ?)+))?"
    r"(?P<rest>.*)$"
)
_ETA_RE = re.compile(
    r"^(?:(?P<d>\d+) days? ?)?(?:(?P<h>\d+) hours? ?)?(?:(?P<m>\d+) minutes? ?)?(?:(?P<s>\d+) seconds? ?)?$"
)
_HDR_G = (
    r"\[(?P<h_op>[^:\[\]\x00]+): Count=(?P<h_count>[^,\]\x00]*), Max=(?P<h_max>[^,\]\x00]*), "
    r"Min=(?P<h_min>[^,\]\x00]*), Avg=(?P<h_avg>[^\]\x00]*?), 90=(?P<h_p90>[^,\]\x00]*), "
    r"99=(?P<h_p99>[^,\]\x00]*), 99\.9=(?P<h_p999>[^,\]\x00]*), 99\.99=(?P<h_p9999>[^,\]\x00]*)\]"
)
_GEN_G = r"\[(?P<g_op>[^:\[\]\x00]+): (?P<g_kv>[^\]\x00]*)\]"
_AVG_G = r"\[(?P<a_op>[^\[\]\x00]+?) AverageLatency\(us\)=(?P<a_avg>[^\]\x00]*)\]"
_RAW_G = r"(?P<r_op>[^\s\[\]\x00]+) count: (?P<r_count>\d+), average latency\(us\): (?P<r_avg>[^\s\[\]\x00]+)"
_CONT_RE = re.compile(
    r"\s*(?:(?:\[[^\[\]]*\]|[^\s\[\]]+ count: \d+, average latency\(us\): [^\s\[\]]+)\s*)*"
)
_KV_RE = re.compile(r"(?P<k>[\w.]+)=(?P<v>.*?)(?=, [\w.]+=|$)")

HEADER_COLUMNS = ["status_index", "source", "label", "timestamp", "elapsed_s", "total_ops", "current_ops_per_s", "eta_s"]
VALUE_COLUMNS = ["count", "max", "min", "avg", "p90", "p99", "p99.9", "p99.99"]
STATUS_COLUMNS = [*HEADER_COLUMNS, "section", *NAME_COLUMNS, *VALUE_COLUMNS]


def find_status(lines: pd.Series) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    """Locate status updates in ``lines``.

    Returns the header fields (one row per update, text order), the group text of each update
    (continuation lines joined), and a boolean mask of the lines that belong to status updates.
    """
    n = len(lines)
    used = np.zeros(n, dtype=bool)
    if n == 0:
        return pd.DataFrame(columns=list(STATUS_RE.groupindex)), [], used
    cand = lines.str.contains(" operations; ", regex=False, na=False).to_numpy(dtype=bool)
    if not cand.any():
        return pd.DataFrame(columns=list(STATUS_RE.groupindex)), [], used
    ext = lines[cand].str.extract(STATUS_RE)
    ext = ext[ext["ts"].notna()]
    if ext.empty:
        return ext, [], used
    start_pos = lines.index.get_indexer(ext.index)
    used[start_pos] = True

    # Continuation lines of multi-line updates (two-in-one measurement types).
    attached = np.zeros(n, dtype=bool)
    frontier = start_pos + 1
    while True:
        frontier = frontier[(frontier < n)]
        frontier = frontier[~used[frontier]]
        if frontier.size == 0:
            break
        ok = lines.iloc[frontier].str.fullmatch(_CONT_RE, na=False).to_numpy(dtype=bool)
        hit = frontier[ok]
        attached[hit] = True
        used[hit] = True
        frontier = hit + 1

    rests = ext["rest"].fillna("").astype(object).tolist()
    if attached.any():
        owner = np.cumsum(np.isin(np.arange(n), start_pos)) - 1
        extra: dict[int, list[str]] = {}
        for pos, text in zip(np.flatnonzero(attached), lines.iloc[np.flatnonzero(attached)], strict=True):
            extra.setdefault(int(owner[pos]), []).append(text)
        for k, texts in extra.items():
            rests[k] = rests[k] + " " + " ".join(texts)
    return ext.reset_index(drop=True), rests, used


def _eta_seconds(eta: pd.Series) -> np.ndarray:
    out = np.full(len(eta), np.nan)
    has = eta.notna().to_numpy()
    if not has.any():
        return out
    parts = eta[has].str.strip().str.extract(_ETA_RE)
    parts = parts.apply(pd.to_numeric, errors="coerce").fillna(0.0)
    secs = parts["d"] * 86400.0 + parts["h"] * 3600.0 + parts["m"] * 60.0 + parts["s"]
    secs = secs.where(secs < NO_DATA_ABS, np.inf)  # Long.MAX_VALUE seconds: throughput was 0
    out[has] = secs.to_numpy()
    return out


def _groups(rests: list[str]) -> pd.DataFrame:
    joined = "".join("\x00" + r for r in rests)
    branches = [r"(?P<mark>\x00)"]
    if "Count=" in joined:
        branches.append(_HDR_G)
    if ": " in joined:
        branches.append(_GEN_G)
    if "AverageLatency(us)=" in joined:
        branches.append(_AVG_G)
    if " count: " in joined:
        branches.append(_RAW_G)
    if len(branches) == 1:
        return pd.DataFrame(columns=["status_index", "section", *VALUE_COLUMNS])
    pattern = re.compile("|".join(branches))
    names = [name for name, _ in sorted(pattern.groupindex.items(), key=lambda kv: kv[1])]
    found = pattern.findall(joined)
    frame = pd.DataFrame.from_records(found, columns=names) if found else pd.DataFrame(columns=names)
    mark = (frame["mark"] != "").to_numpy()
    frame["status_index"] = np.cumsum(mark) - 1
    frame = frame[~mark].reset_index(drop=True)
    empty = pd.Series([""] * len(frame), dtype=object)

    def col(name: str) -> pd.Series:
        return frame[name].astype(object) if name in frame else empty

    section = col("h_op")
    for other in ("g_op", "a_op", "r_op"):
        section = section.where(section != "", col(other))
    out = pd.DataFrame({"status_index": frame["status_index"].to_numpy(), "section": section.to_numpy()})
    out["count"] = to_float_locale(col("h_count").where(col("h_count") != "", col("r_count"))).to_numpy()
    out["max"] = to_float_locale(col("h_max")).to_numpy()
    out["min"] = to_float_locale(col("h_min")).to_numpy()
    avg = col("h_avg")
    for other in ("a_avg", "r_avg"):
        avg = avg.where(avg != "", col(other))
    out["avg"] = to_float_locale(avg).to_numpy()
    for src, dst in (("h_p90", "p90"), ("h_p99", "p99"), ("h_p999", "p99.9"), ("h_p9999", "p99.99")):
        out[dst] = to_float_locale(col(src)).to_numpy()
    generic = (col("g_op") != "").to_numpy()
    if generic.any():
        _fill_generic(out, col("g_kv"), generic)
    zero = (out["count"] == 0).to_numpy()
    out.loc[zero, ["max", "min", "avg", "p90", "p99", "p99.9", "p99.99"]] = np.nan
    return out


def _fill_generic(out: pd.DataFrame, kv: pd.Series, rows: np.ndarray) -> None:
    """Groups in an unexpected `[OP: k=v, ...]` layout (other YCSB versions): parse key by key."""
    keymap = {"Count": "count", "Max": "max", "Min": "min", "Avg": "avg", "90": "p90", "99": "p99"}
    keymap.update({"99.9": "p99.9", "99.99": "p99.99"})
    for pos in np.flatnonzero(rows):
        for m in _KV_RE.finditer(kv.iloc[pos]):
            dst = keymap.get(m.group("k"))
            if dst:
                out.loc[pos, dst] = to_float_locale(pd.Series([m.group("v")], dtype=object)).iloc[0]


def build_status(header: pd.DataFrame, rests: list[str], source: str, extra_names=()) -> pd.DataFrame:
    """The status frame: header fields joined with one row per operation group (or one row if none)."""
    if header.empty:
        return empty_frame(STATUS_COLUMNS)
    head = pd.DataFrame(
        {
            "status_index": np.arange(len(header)),
            "source": source,
            "label": header["label"].fillna("").astype(object).to_numpy(),
            "timestamp": pd.to_datetime(header["ts"], format="%Y-%m-%d %H:%M:%S:%f", errors="coerce").to_numpy(),
            "elapsed_s": pd.to_numeric(header["sec"], errors="coerce").astype("float64").to_numpy(),
            "total_ops": pd.to_numeric(header["ops"], errors="coerce").astype("float64").to_numpy(),
            "current_ops_per_s": to_float_locale(header["cur"].fillna("").astype(object)).to_numpy(),
            "eta_s": _eta_seconds(header["eta"]),
        }
    )
    groups = _groups(rests)
    names = classify_frame([*groups["section"].unique(), *extra_names])
    groups = groups.join(names, on="section")
    merged = head.merge(groups, on="status_index", how="left", sort=False)
    for c in NAME_COLUMNS:
        if c not in merged:
            merged[c] = np.nan
    merged["intended"] = merged["intended"].astype("boolean")
    return merged[STATUS_COLUMNS].sort_values("status_index", kind="stable").reset_index(drop=True)


def dedupe_adjacent(header: pd.DataFrame, rests: list[str]) -> tuple[pd.DataFrame, list[str], int]:
    """Drop adjacent identical updates when (nearly) every update is doubled: a combined 2>&1 capture of
    a timeseries run, which prints each status line on both streams."""
    n = len(rests)
    if n < 4:
        return header, rests, 0
    key = (header["label"].fillna("") + header["ts"] + " " + header["ops"]).to_numpy(dtype=object) + np.array(
        rests, dtype=object
    )
    dup = np.zeros(n, dtype=bool)
    dup[1:] = key[1:] == key[:-1]
    if dup.sum() * 2 < n - 1:
        return header, rests, 0
    keep = ~dup
    return header[keep].reset_index(drop=True), [r for r, k in zip(rests, keep, strict=True) if k], int(dup.sum())
