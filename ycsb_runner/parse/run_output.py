"""parse_output: one YCSB run's stdout/stderr (and optional export file / .hdr logs) -> ParsedRun."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from typing import BinaryIO

import numpy as np
import pandas as pd

from .completion import Evidence, decide
from .errors import ParseError
from .export import read_export
from .hdr import hdr_intervals
from .model import ParsedRun
from .names import classify_frame
from .operations import build_operations, is_ms_metric
from .raw import RAW_HEADER, cut_spans, split_raw
from .status import STATUS_COLUMNS, StatusChunk, StatusDigest, build_status, dedupe_adjacent
from .stream import StreamScan, scan_stream
from .summary import build_summary, empty_frame
from .text import Stream, to_bytes
from .truncation import truncation_reasons

_YCSB_MARKERS = (
    "YCSB Client ",
    "Command line: ",
    "Loading workload...",
    "Starting test.",
    "DBWrapper: ",
    "site.ycsb.",
    "com.yahoo.ycsb.",
    "Still waiting for thread",
    "Raw data measurement:",
    "[OVERALL], ",
)
_KNOWN_METRICS = (
    "Operations",
    "Total Operations",
    "AverageLatency(us)",
    "AverageLatency(ms)",
    "RunTime(ms)",
    "Throughput(ops/sec)",
)

# The run's totals: key -> (section, metric) of its summary line.
_OVERALL = {
    "runtime_ms": ("OVERALL", "RunTime(ms)"),
    "throughput": ("OVERALL", "Throughput(ops/sec)"),
    "gc_count": ("TOTAL_GCs", "Count"),
    "gc_time_ms": ("TOTAL_GC_TIME", "Time(ms)"),
    "gc_time_pct": ("TOTAL_GC_TIME_%", "Time(%)"),
}


def _overall(summary: pd.DataFrame) -> dict[str, float | None]:
    rows = summary[summary["section"].isin({section for section, _ in _OVERALL.values()})]
    found = dict(zip(zip(rows["section"], rows["metric"], strict=True), rows["value"], strict=True))
    values = {key: found.get(line) for key, line in _OVERALL.items()}
    out = {key: None if v is None or pd.isna(v) else float(v) for key, v in values.items()}
    rt, tp = out["runtime_ms"], out["throughput"]
    out["ops_done"] = float(round(tp * rt / 1000.0)) if rt is not None and tp is not None else None
    return out


def _measurement_type(
    summary: pd.DataFrame,
    status_parts: set[str],
    p99_seen: bool,
    timeseries: pd.DataFrame,
    histogram: pd.DataFrame,
) -> str | None:
    """The measurement type from the whole shape of the output: section parts, metrics, bucket shapes
    (*status_parts*: the parts of the status lines' sections; *p99_seen*: a status line printed a p99)."""
    parts = set(pd.unique(summary["part"].to_numpy())) | status_parts
    if "bucket" in parts:
        return "hdrhistogram+histogram"
    if "raw" in parts:
        return "hdrhistogram+raw"
    metrics = set(summary["metric"])
    if "Total Operations" in metrics:
        return "raw"
    ms_percentiles = summary["metric"].str.contains("PercentileLatency(ms)", regex=False).any()
    if (
        "LatencyVariance(us)" in metrics
        or (not histogram.empty and (histogram["source"] == "histogram").any())
        or ms_percentiles  # before 0.6 only `histogram` printed percentiles, in ms
    ):
        return "histogram"
    if summary["metric"].str.contains("PercentileLatency(us)", regex=False).any():
        return "hdrhistogram"
    if not timeseries.empty or "Operations" in metrics:
        return "timeseries"
    if p99_seen:
        return "hdrhistogram"
    return None


def _looks_like_ycsb(texts: list[str], summary: pd.DataFrame, status_found: bool, raw_found: bool) -> bool:
    if status_found or raw_found:
        return True
    if not summary.empty:
        metrics = summary["metric"]
        if (
            metrics.isin(_KNOWN_METRICS).any()
            or metrics.str.startswith("Return=").any()
            or summary["percentile"].notna().any()
        ):
            return True
    return any(marker in text for text in texts for marker in _YCSB_MARKERS)


def _encoding_hint(texts: list[str]) -> str:
    """What to do when the input is UTF-16 (a Windows capture: ``Out-File``, ``>`` in PowerShell 5): every
    other character a NUL (read as U+FFFD, ``parse.text.to_text``), the others plain text."""
    for text in texts:
        head = text[:4096].lstrip("\ufffd\ufeff")  # its byte-order mark
        for start in (0, 1):
            nuls, letters = head[start::2], head[1 - start :: 2]
            if len(letters) >= 8 and nuls.count("\ufffd") >= 0.9 * len(nuls):
                if sum(c.isprintable() or c in "\r\n\t" for c in letters) >= 0.9 * len(letters):
                    return (
                        "; it looks like UTF-16 text (a NUL byte between the letters): convert it to UTF-8 "
                        "first, e.g. iconv -f UTF-16 -t UTF-8 FILE > FILE.txt"
                    )
    return ""


def _status_lines(
    err: StreamScan, out: StreamScan, notes: list[str]
) -> tuple[StatusChunk | None, StatusDigest, bool, str]:
    """The status lines to use (None when only their digest was kept), their digest, whether adjacent
    repeats are dropped from it, and their stream: stderr's (YCSB's own), else stdout's (a combined
    ``2>&1`` capture), whose adjacent duplicates (the timeseries copy) are dropped. Adds what it did to
    *notes*."""
    if err.digest.n:
        if out.digest.n:
            notes.append(f"{out.digest.n} status line(s) on stdout (timeseries copy) ignored; stderr's used")
        return err.status, err.digest, False, "stderr"
    found = dedupe_adjacent(out.status)[0] if out.status is not None else None
    if out.digest.doubled:
        notes.append(
            f"{out.digest.repeats} adjacent duplicate status update(s) dropped (combined 2>&1 timeseries "
            "capture)"
        )
    return found, out.digest, True, "stdout"


def _input_notes(
    summary: pd.DataFrame, operations: pd.DataFrame, raw: pd.DataFrame, export_complete: bool
) -> list[str]:
    """What the parser converted or read besides the summary, said once in ``ParsedRun.notes``."""
    notes = []
    if "converted_from_ms" in operations:
        printed = sorted({m for m in summary["metric"] if is_ms_metric(m)})
        notes.append(
            f"latencies printed in ms (YCSB before 0.6) converted to us: {', '.join(printed)} "
            "(see the operations column converted_from_ms)"
        )
    if not raw.empty:
        notes.append(f"{len(raw)} raw data point(s) read from stdout")
    if not export_complete:
        notes.append("the JSON export stops mid-object; objects before the cut were used")
    return notes


@dataclass(frozen=True)
class _Judging:
    """What the completion is decided against (``parse_output``'s keyword arguments)."""

    exit_code: int | None = None
    expected_ops: int | None = None
    max_error_rate: float = 0.01
    min_ops_fraction: float = 0.9


def parse_output(
    stdout: Stream,
    stderr: Stream = "",
    *,
    exit_code: int | None = None,
    expected_ops: int | None = None,
    max_error_rate: float = 0.01,
    min_ops_fraction: float = 0.9,
    export: str | bytes | PathLike[str] | None = None,
    hdr_files: str | PathLike[str] | Iterable[str | PathLike[str]] | None = None,
) -> ParsedRun:
    """Parse one YCSB 0.17.0 run (any measurement type, interval, locale; noise anywhere).

    ``stdout``/``stderr``: the captured streams (str or bytes; invalid UTF-8 is tolerated). A combined
    ``2>&1`` capture may be passed as ``stdout`` alone. ``exit_code``/``expected_ops``/``max_error_rate``/
    ``min_ops_fraction`` feed the completion. ``export``: text or path of a JSON(-array) ``exportfile`` (whose
    summary then stands in for stdout's). ``hdr_files``: `.hdr` logs (files or a directory) for ``run.hdr``.

    Raises ParseError only when nothing in the input is YCSB output; anything else yields a ParsedRun.
    """
    out_bytes = to_bytes(stdout)
    if RAW_HEADER in out_bytes:
        raw, spans = split_raw(out_bytes)
        out_bytes = cut_spans(out_bytes, spans)
    else:
        raw, spans = split_raw(b"")
    err = scan_stream(to_bytes(stderr))
    out = scan_stream(out_bytes, with_keys=True)  # a combined 2>&1 capture comes in as stdout
    del out_bytes
    judging = _Judging(exit_code, expected_ops, max_error_rate, min_ops_fraction)
    return _parsed(err, out, raw, bool(spans), judging, export=export, hdr_files=hdr_files)


def parse_capture(
    stdout: str | PathLike[str],
    stderr: str | PathLike[str] | None = None,
    *,
    keep_status: bool = True,
    exit_code: int | None = None,
    expected_ops: int | None = None,
    max_error_rate: float = 0.01,
    min_ops_fraction: float = 0.9,
) -> ParsedRun:
    """``parse_output`` of capture files, read as they are parsed: the input is never held whole, so the
    memory needed is bounded whatever the files' size (README, "Limits on input"), but for what the results
    hold: every status update with *keep_status* (else ``status`` is empty and the completion uses their
    digest), and the data points of a ``raw`` capture, which is read whole."""
    from .text import read_path_bytes

    judging = _Judging(exit_code, expected_ops, max_error_rate, min_ops_fraction)
    if _holds(stdout, RAW_HEADER):
        err_bytes = read_path_bytes(stderr) if stderr is not None else b""
        return parse_output(read_path_bytes(stdout), err_bytes, **dataclasses.asdict(judging))
    with _opened(stderr) as err_file, _opened(stdout) as out_file:
        err = scan_stream(err_file, keep_status=keep_status)
        out = scan_stream(out_file, with_keys=True, keep_status=keep_status)
    return _parsed(err, out, split_raw(b"")[0], False, judging)


@contextlib.contextmanager
def _opened(path: str | PathLike[str] | None) -> Iterator[BinaryIO]:
    """*path* open for reading (an empty stream for None); a ParseError (one line) when it cannot be."""
    from .errors import ParseError

    if path is None:
        yield io.BytesIO(b"")
        return
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, after the caller read it
    except OSError as err:
        raise ParseError(f"cannot read {path}: {err.strerror or err}") from err
    with fh:
        yield fh


def _holds(path: str | PathLike[str], needle: bytes, block: int = 8 << 20) -> bool:
    """Whether the file holds *needle* (read block by block, blocks overlapping by its length)."""
    with _opened(path) as fh:
        tail = b""
        while piece := fh.read(block):
            if needle in tail + piece[: len(needle)] or needle in piece:
                return True
            tail = piece[-len(needle) :]
    return False


def _parsed(
    err: StreamScan,
    out: StreamScan,
    raw: pd.DataFrame,
    raw_found: bool,
    judging: _Judging,
    *,
    export: str | bytes | PathLike[str] | None = None,
    hdr_files: str | PathLike[str] | Iterable[str | PathLike[str]] | None = None,
) -> ParsedRun:
    """The ParsedRun of two scanned streams: tables, figures and the completion.

    Long because it hands every stage's output on by name, one field a line (the Evidence, the ParsedRun).
    """
    notes: list[str] = []
    found, digest, dedupe, source = _status_lines(err, out, notes)
    rows = out.rows
    export_complete = True
    if export is not None:
        export_rows, export_complete = read_export(export)
        rows = pd.concat([rows, export_rows], ignore_index=True)
    status_names = tuple(digest.sections)
    built = build_summary(rows, extra_names=status_names)
    summary = built["summary"]
    names = tuple(summary["section"].unique())
    status = (
        build_status(found, source, extra_names=names) if found is not None else empty_frame(STATUS_COLUMNS)
    )
    noise = err.noise.then(out.noise).result()
    n_updates = digest.updates(dedupe)
    if not _looks_like_ycsb([out.prefix, err.prefix], summary, bool(n_updates), raw_found):
        raise ParseError(
            "the input does not look like YCSB output (no summary, status lines or YCSB messages)"
            + _encoding_hint([out.prefix, err.prefix])
        )
    overall = _overall(summary)
    operations = build_operations(summary)
    notes.extend(_input_notes(summary, operations, raw, export_complete))
    hdr = hdr_intervals(hdr_files) if hdr_files is not None else empty_frame(["section"])
    last_ops = digest.last_ops
    completion = decide(
        Evidence(
            overall=overall,
            operations=operations,
            status_updates=n_updates,
            last_status_ops=last_ops if last_ops is None or np.isfinite(last_ops) else None,
            exit_code=judging.exit_code,
            exceptions=noise["exceptions"],
            exception_count=noise["exception_count"],
            operation_failures=noise["operation_failures"],
            still_waiting=noise["waiting"],
            usage_errors=noise["usage"],
            expected_ops=judging.expected_ops,
            max_error_rate=judging.max_error_rate,
            min_ops_fraction=judging.min_ops_fraction,
            export_complete=export_complete,
            status_counts=digest.section_counts(dedupe),
            cut_short=truncation_reasons(
                rows=rows,
                summary=summary,
                histogram=built["histogram"],
                timeseries=built["timeseries"],
                operations=operations,
                overall=overall,
                status_sections=set(status_names),
                last_lines={"stdout": out.last_line, "stderr": err.last_line},
            ),
        )
    )
    parts = _status_parts(status_names, names)
    return ParsedRun(
        summary=summary,
        operations=operations,
        status=status,
        histogram=built["histogram"],
        timeseries=built["timeseries"],
        raw=raw,
        hdr=hdr,
        overall=overall,
        sections=set(rows["section"]) if not rows.empty else set(),
        completion=completion,
        measurement_type=_measurement_type(
            summary, parts, digest.p99_seen, built["timeseries"], built["histogram"]
        ),
        ycsb_version=noise["version"],
        command_line=noise["cmd"],
        exceptions=noise["exceptions"],
        notes=notes,
    )


def _status_parts(sections: tuple[str, ...], summary_names: tuple[str, ...]) -> set[str]:
    """The ``part`` of each status-line section (as ``build_status`` classifies them)."""
    if not sections:
        return set()
    named = classify_frame([*sections, *summary_names]).loc[list(sections)]
    return set(named["part"].astype(str))
