"""Signs that a capture was cut short, looked for in the output itself (not in how the run ended).

Any of them makes the run's completion ``truncated``:

- a stream whose last line has no line break (YCSB ends every line it prints): the value on it may be cut
  mid-number (``MaxLatency(us), 282`` of 282623);
- the last section of the summary lacks metrics that its sibling sections have, or has fewer histogram
  buckets than they do;
- an operation seen in the status lines has no summary section;
- the operation sections count fewer operations than ``[OVERALL]`` says were done, or there is none;
- ``[OVERALL]`` has its RunTime but not the Throughput YCSB prints right after it.
"""

from __future__ import annotations

import pandas as pd

from .names import LATENCY_KINDS

_QUOTE = 60
_LATENCY_KINDS = ("op", "failed", "status", "hdr")


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _QUOTE else "..." + text[-_QUOTE:]


_NO_RETURNS = ("CLEANUP", "READ-MODIFY-WRITE")  # measured without a return code


def _metric_shape(metrics: pd.Series) -> frozenset[str]:
    """The metrics a latency section prints; return codes (which differ between operations) as one."""
    return frozenset("Return=..." if m.startswith("Return=") else m for m in metrics)


def _cut_last_section(
    rows: pd.DataFrame, summary: pd.DataFrame, histogram: pd.DataFrame, timeseries: pd.DataFrame
) -> list[str]:
    found = _last_section(rows, summary)
    if found is None:
        return []
    last, info, peers = found
    mine = _metric_shape(info["metric"])
    out = _no_return_counts(last, info, mine)
    if peers.empty:
        return out
    peer_names = set(peers["section"])
    out += _lacking_metrics(last, peers, mine)
    out += _fewer_points(last, peer_names, histogram, timeseries)
    out += _shorter_series(last, peer_names, timeseries)
    return out


def _last_section(rows: pd.DataFrame, summary: pd.DataFrame) -> tuple[str, pd.DataFrame, pd.DataFrame] | None:
    """The summary's last latency (or measured JVM) section, its rows and its sibling sections' rows; None
    when the last section is of no such kind."""
    body = rows[~rows["metric"].str.fullmatch(r">?-?\d+", na=False)]
    if body.empty:
        return None
    last = body["section"].iloc[-1]
    info = summary[summary["section"] == last]
    if info.empty:
        return None
    kind, part = info["kind"].iloc[0], info["part"].iloc[0]
    # trackjvm's THREAD_COUNT, USED_MEM_MB, ... are measured like operations (they have `Operations`).
    measured_jvm = kind == "jvm" and (info["metric"] == "Operations").any()
    if kind not in LATENCY_KINDS and not measured_jvm:
        return None
    peers = summary[(summary["kind"] == kind) & (summary["part"] == part) & (summary["section"] != last)]
    if measured_jvm:
        peers = peers[peers["section"].isin(peers.loc[peers["metric"] == "Operations", "section"])]
    return last, info, peers


def _no_return_counts(last: str, info: pd.DataFrame, mine: frozenset[str]) -> list[str]:
    """Every operation measured through the DB wrapper counts its return codes, printed last."""
    kind, part = info["kind"].iloc[0], info["part"].iloc[0]
    if (
        kind in ("op", "hdr")
        and part in ("", "hdr")
        and info["operation"].iloc[0] not in _NO_RETURNS
        and "Return=..." not in mine
    ):
        return [
            f"the last summary section [{last}] has no Return= counts, which YCSB prints last in every "
            "operation section: the summary was cut short"
        ]
    return []


def _lacking_metrics(last: str, peers: pd.DataFrame, mine: frozenset[str]) -> list[str]:
    shapes = peers.groupby("section", sort=False)["metric"].agg(_metric_shape)
    common = frozenset.intersection(*shapes.tolist()) - {"Return=..."}
    lacking = sorted(common - mine)
    if not lacking:
        return []
    return [
        f"the last summary section [{last}] lacks {', '.join(lacking[:4])}"
        f"{' ...' if len(lacking) > 4 else ''} that the other sections have: the summary was cut short"
    ]


def _fewer_points(
    last: str, peer_names: set[str], histogram: pd.DataFrame, timeseries: pd.DataFrame
) -> list[str]:
    """Fewer histogram buckets (or none of the other per-section series) than the sibling sections have."""
    out = []
    for frame, label, exact in (
        (histogram[histogram["source"] == "histogram"], "histogram buckets", True),
        (histogram[histogram["source"] != "histogram"], "histogram values", False),
        (timeseries, "time-series points", False),
    ):
        if frame.empty:
            continue
        counts = frame.groupby("section", sort=False).size()
        theirs = counts[counts.index.isin(peer_names)]
        if theirs.empty:
            continue
        have = int(counts.get(last, 0))
        if have == 0 or (exact and have < theirs.min()):
            out.append(
                f"the last summary section [{last}] has {have} {label} where the other sections have "
                f"{theirs.min()} or more: the summary was cut short"
            )
    return out


def _shorter_series(last: str, peer_names: set[str], timeseries: pd.DataFrame) -> list[str]:
    """The last section's time series stops more than one interval before its siblings' do."""
    if timeseries.empty or last not in set(timeseries["section"]):
        return []
    offsets = timeseries.groupby("section", sort=False)["offset_ms"].max()
    step = timeseries.groupby("section", sort=False)["offset_ms"].agg(lambda x: x.diff().min()).min()
    theirs = offsets[offsets.index.isin(peer_names)]
    if not theirs.empty and step == step and offsets[last] + step < theirs.max():
        return [
            f"the time series of the last summary section [{last}] stops at {offsets[last]:g} ms where "
            f"the others reach {theirs.max():g} ms: the summary was cut short"
        ]
    return []


def truncation_reasons(
    *,
    rows: pd.DataFrame,
    summary: pd.DataFrame,
    histogram: pd.DataFrame,
    timeseries: pd.DataFrame,
    operations: pd.DataFrame,
    overall: dict[str, float | None],
    status_sections: set[str],
    last_lines: dict[str, str],
) -> list[str]:
    """Reasons to call the capture cut short; empty when none is seen. ``rows``: summary rows in text order;
    ``last_lines``: per stream name, its last line when it has no line break."""
    reasons = [
        f"{name} ends in the middle of a line ({_shorten(line)!r}, no line break): the capture was cut short"
        for name, line in last_lines.items()
        if line
    ]
    if overall.get("runtime_ms") is None or summary.empty:
        return reasons
    if overall.get("throughput") is None:
        reasons.append(
            "[OVERALL] has RunTime(ms) but no Throughput(ops/sec), which YCSB prints right after it: "
            "the summary was cut short"
        )
    reasons += _cut_last_section(rows, summary, histogram, timeseries)
    named = set(summary["section"])
    lost = sorted(s for s in status_sections if s and s not in named)
    if lost:
        reasons.append(
            f"the status lines report {', '.join(lost[:4])} but the summary has no such section: "
            "the summary was cut short"
        )
    done = overall.get("ops_done")
    if done:
        ops = operations
        counted = (
            ops[
                ops["kind"].isin(_LATENCY_KINDS)
                & ops["part"].isin(["", "hdr"])
                & ~ops["intended"].astype(bool)
                & (ops["operation"] != "CLEANUP")
            ]["operations"].sum(min_count=1)
            if not ops.empty
            else float("nan")
        )
        if counted != counted:  # no operation section at all (a load cut before [INSERT])
            reasons.append(
                f"[OVERALL] says {done:.0f} operations were done but the summary has no operation section: "
                "the summary was cut short"
            )
        elif counted < done:
            reasons.append(
                f"the operation sections count {counted:.0f} operations but [OVERALL] says {done:.0f} were "
                "done: sections are missing (the summary was cut short)"
            )
    return reasons
