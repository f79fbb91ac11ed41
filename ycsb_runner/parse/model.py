"""Result types of the parser."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

CompletionStatus = Literal["completed", "failed", "truncated"]


@dataclass(frozen=True)
class Completion:
    """Whether a run completed and can be trusted (``completed``), ``failed`` or was cut short
    (``truncated``). ``reasons`` say why not (empty when completed)."""

    status: CompletionStatus
    reasons: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "completed"


@dataclass
class ParsedRun:
    """Everything parse_output found. All frames exist (possibly empty) so callers need no None checks.

    - ``summary``: long form, one row per (section, metric): section, operation, kind, intended, outcome,
      part, metric, percentile, value, value_str.
    - ``operations``: one row per latency section (kinds op/failed/status/intended/hdr/bucket/raw).
    - ``status``: one row per (status update, operation group).
    - ``histogram``: verbose buckets (`histogram` ms buckets, or `hdrhistogram` recorded values).
    - ``timeseries``: `timeseries` buckets (offset_ms, avg_latency_us).
    - ``raw``: raw data points (section, operation, kind, timestamp_ms, latency_us).
    - ``hdr``: per-interval statistics of the `.hdr` logs passed as ``hdr_files`` (else empty).
    """

    summary: pd.DataFrame
    operations: pd.DataFrame
    status: pd.DataFrame
    histogram: pd.DataFrame
    timeseries: pd.DataFrame
    raw: pd.DataFrame
    hdr: pd.DataFrame
    overall: dict[str, float | None]
    sections: set[str]
    completion: Completion
    measurement_type: str | None = None
    ycsb_version: str | None = None
    command_line: str | None = None
    exceptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ops_done(self) -> float | None:
        """Operations the client loop completed (Throughput * RunTime, which is how YCSB computes it)."""
        return self.overall.get("ops_done")
