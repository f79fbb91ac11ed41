"""parse_output: one YCSB run's stdout/stderr (and optional export file / .hdr logs) -> ParsedRun."""

from __future__ import annotations

import re
from collections.abc import Iterable
from os import PathLike

import numpy as np
import pandas as pd

from .errors import ParseError
from .export import read_export
from .hdr import hdr_intervals
from .model import ParsedRun
from .operations import build_operations, is_ms_metric
from .raw import RAW_HEADER, cut_spans, split_raw
from .status import StatusChunk, build_status, dedupe_adjacent
from .stream import StreamScan, scan_stream
from .summary import build_summary, empty_frame
from .text import Stream, mask_secrets, to_bytes
from .truncation import truncation_reasons
from .verdict import Evidence, decide

_EXCEPTION_RE = re.compile(
    r"^(?:Exception in thread |Error initializing|ERROR: |Exception\b"
    r"|(?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)(?::|$))"
)
# One failed operation, as the project's binding reports it (the operation is counted in its section's
# Return=ERROR line too): judged by the error rate, not as an exception.
_OPERATION_FAILURE_RE = re.compile(r"^ERROR: MongoDB (?:read|scan|update|insert|delete) key .* failed: ")
_USAGE_RE = re.compile(
    r"^(?:Unknown option |Missing property: |Unable to open the properties file|"
    r"Usage: java (?:site|com\.yahoo)\.ycsb\.Client)"
)
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
_MAX_QUOTED = 5


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
    summary: pd.DataFrame, status: pd.DataFrame, timeseries: pd.DataFrame, histogram: pd.DataFrame
) -> str | None:
    """The measurement type from the whole shape of the output: section parts, metrics, bucket shapes."""
    parts = set(pd.unique(summary["part"].to_numpy())) | set(pd.unique(status["part"].to_numpy()))
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
    if not status.empty and bool(np.isfinite(status["p99"].to_numpy(dtype="float64")).any()):
        return "hdrhistogram"
    return None


def _noise_scan(lines: pd.Series) -> dict[str, object]:
    """Exceptions, usage errors, 'Still waiting', version and command line among non-data lines."""
    if lines.empty:
        return {
            "exceptions": [],
            "exception_count": 0,
            "operation_failures": 0,
            "usage": [],
            "waiting": 0,
            "version": None,
            "cmd": None,
        }
    exc = lines[lines.str.match(_EXCEPTION_RE, na=False)]
    op_failures = exc.str.match(_OPERATION_FAILURE_RE, na=False)
    exc = exc[~op_failures]
    usage = lines[lines.str.match(_USAGE_RE, na=False)]
    # The usage banner itself is not the reason; prefer the specific message.
    usage = usage[~usage.str.startswith("Usage: ")].tolist() or usage.tolist()
    version = lines[lines.str.startswith("YCSB Client ", na=False)]
    cmd = lines[lines.str.startswith("Command line: ", na=False)]
    return {
        "exceptions": [mask_secrets(s) for s in exc.head(_MAX_QUOTED)],
        "exception_count": int(len(exc)),
        "operation_failures": int(op_failures.sum()),
        "usage": [mask_secrets(s) for s in usage[:_MAX_QUOTED]],
        "waiting": int(lines.str.startswith("Still waiting for thread", na=False).sum()),
        "version": version.iloc[0][len("YCSB Client ") :].strip() if not version.empty else None,
        "cmd": mask_secrets(cmd.iloc[0][len("Command line: ") :]) if not cmd.empty else None,
    }


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


def _status_lines(err: StreamScan, out: StreamScan, notes: list[str]) -> tuple[StatusChunk, str]:
    """The status lines to use and their stream: stderr's (YCSB's own), else stdout's (a combined ``2>&1``
    capture), whose adjacent duplicates (the timeseries copy) are dropped. Adds what it did to *notes*."""
    if err.status.n:
        if out.status.n:
            notes.append(f"{out.status.n} status line(s) on stdout (timeseries copy) ignored; stderr's used")
        return err.status, "stderr"
    found, dropped = dedupe_adjacent(out.status)
    if dropped:
        notes.append(
            f"{dropped} adjacent duplicate status update(s) dropped (combined 2>&1 timeseries capture)"
        )
    return found, "stdout"


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
    ``min_ops_fraction`` feed the verdict. ``export``: text or path of a JSON(-array) ``exportfile`` (whose
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
    notes: list[str] = []
    found, source = _status_lines(err, out, notes)

    rows = out.rows
    export_complete = True
    if export is not None:
        export_rows, export_complete = read_export(export)
        rows = pd.concat([rows, export_rows], ignore_index=True)
    status_names = tuple(pd.unique(found.groups["section"]))
    built = build_summary(rows, extra_names=status_names)
    summary = built["summary"]
    status = build_status(found, source, extra_names=tuple(summary["section"].unique()))

    scan_result = _noise_scan(pd.Series(err.noise + out.noise, dtype=object))
    if not _looks_like_ycsb([out.prefix, err.prefix], summary, bool(found.n), bool(spans)):
        raise ParseError(
            "the input does not look like YCSB output (no summary, status lines or YCSB messages)"
        )

    overall = _overall(summary)
    operations = build_operations(summary)
    notes.extend(_input_notes(summary, operations, raw, export_complete))
    hdr = hdr_intervals(hdr_files) if hdr_files is not None else empty_frame(["section"])

    last_ops = float(status["total_ops"].iloc[-1]) if not status.empty else None
    verdict = decide(
        Evidence(
            overall=overall,
            operations=operations,
            status_updates=found.n,
            last_status_ops=last_ops if last_ops is None or np.isfinite(last_ops) else None,
            exit_code=exit_code,
            exceptions=scan_result["exceptions"],
            exception_count=scan_result["exception_count"],
            operation_failures=scan_result["operation_failures"],
            still_waiting=scan_result["waiting"],
            usage_errors=scan_result["usage"],
            expected_ops=expected_ops,
            max_error_rate=max_error_rate,
            min_ops_fraction=min_ops_fraction,
            export_complete=export_complete,
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
    sections = set(rows["section"]) if not rows.empty else set()
    return ParsedRun(
        summary=summary,
        operations=operations,
        status=status,
        histogram=built["histogram"],
        timeseries=built["timeseries"],
        raw=raw,
        hdr=hdr,
        overall=overall,
        sections=sections,
        verdict=verdict,
        measurement_type=_measurement_type(summary, status, built["timeseries"], built["histogram"]),
        ycsb_version=scan_result["version"],
        command_line=scan_result["cmd"],
        exceptions=scan_result["exceptions"],
        notes=notes,
    )
