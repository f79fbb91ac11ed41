"""Parser for YCSB 0.17.0 output: summary, status lines, buckets, raw points, JSON exports, .hdr logs.

Library API (no CLI dependency)::

    run = parse_output(stdout, stderr, exit_code=rc, expected_ops=n)
    run.summary, run.operations, run.status        # pandas DataFrames
    run.completion.status, run.completion.reasons    # 'completed' | 'failed' | 'truncated', list[str]
    run.overall["runtime_ms"], run.overall["throughput"], run.sections

The only exception raised on bad input is :class:`ParseError` (a ``UserError``), for input that is not YCSB
output at all.
"""

from .errors import ParseError
from .export import export_rows
from .hdr import hdr_histograms, hdr_intervals, hdr_percentiles, read_hdr_log
from .model import Completion, ParsedRun
from .raw import parse_raw_file
from .run_output import parse_output

__all__ = [
    "Completion",
    "ParseError",
    "ParsedRun",
    "export_rows",
    "hdr_histograms",
    "hdr_intervals",
    "hdr_percentiles",
    "parse_export",
    "parse_output",
    "parse_raw_file",
    "read_hdr_log",
]


def parse_export(
    text_or_path,
    *,
    exit_code: int | None = None,
    expected_ops: int | None = None,
    max_error_rate: float = 0.01,
) -> ParsedRun:
    """Parse a JSON / JSON-array ``exportfile`` (text, bytes or path) into a ParsedRun (no status lines)."""
    return parse_output(
        b"",
        "",
        export=text_or_path,
        exit_code=exit_code,
        expected_ops=expected_ops,
        max_error_rate=max_error_rate,
    )
