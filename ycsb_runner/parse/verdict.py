"""Deciding whether a run completed, failed or was cut short."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .model import Verdict


@dataclass
class Evidence:
    """What the verdict looks at (all gathered by parse_output)."""

    overall: dict[str, float | None]
    operations: pd.DataFrame
    status_updates: int
    last_status_ops: float | None = None
    exit_code: int | None = None
    exceptions: list[str] = field(default_factory=list)
    exception_count: int = 0
    operation_failures: int = 0  # the binding's one-line reports of failed operations (not exceptions)
    still_waiting: int = 0
    usage_errors: list[str] = field(default_factory=list)
    expected_ops: int | None = None
    max_error_rate: float = 0.01
    min_ops_fraction: float = 0.9
    export_complete: bool = True
    cut_short: list[str] = field(default_factory=list)  # signs in the output itself (truncation.py)


def _pct(x: float) -> str:
    return f"{100.0 * x:.3g}%"


def _error_rate_reasons(latency_rows: pd.DataFrame, ev: Evidence) -> list[str]:
    """The error-rate rule over the whole phase: failed / returned operations of every section together
    (a phase fails when more than ``max_error_rate`` of its operations failed, whichever they were)."""
    checked = latency_rows.iloc[0:0]
    if not latency_rows.empty and "error_rate" in latency_rows:
        checked = latency_rows[latency_rows["part"].isin(["", "hdr"]) & (latency_rows["returns"] > 0)]
        checked = checked.drop_duplicates("section")  # a section's text and HDR rows count it once
    errors = float(checked["errors"].sum()) if not checked.empty else 0.0
    returns = float(checked["returns"].sum()) if not checked.empty else 0.0
    if ev.operation_failures and errors == 0:
        return [
            f"the binding reported {ev.operation_failures} failed operation(s) that the summary does not "
            "count"
        ]
    if returns <= 0 or errors / returns <= ev.max_error_rate:
        return []
    worst = checked[checked["errors"] > 0]
    per_section = ", ".join(f"{r.section} {r.errors:.0f} of {r.returns:.0f}" for r in worst.itertuples())
    return [
        f"error rate {_pct(errors / returns)} ({errors:.0f} of {returns:.0f} operations; failed: "
        f"{per_section}) exceeds {_pct(ev.max_error_rate)}"
    ]


def decide(ev: Evidence) -> Verdict:
    """Apply the rules; 'truncated' when the output itself is cut short, else 'failed' on any reason."""
    failed: list[str] = []
    truncated: list[str] = []
    runtime, throughput = ev.overall.get("runtime_ms"), ev.overall.get("throughput")
    ops = ev.operations
    latency_rows = (
        ops[(ops["kind"] != "intended") & (~ops["intended"].astype(bool))] if not ops.empty else ops
    )

    if runtime is None:
        if ev.status_updates:
            truncated.append(
                f"no [OVERALL] summary: the output stops after {ev.status_updates} status update(s) "
                "(killed, crashed or still running?)"
            )
        else:
            failed.append("no [OVERALL] summary and no status lines: YCSB did not run a workload")
    elif latency_rows.empty and (throughput or 0) > 0:
        truncated.append(
            f"the summary has [OVERALL] (throughput {throughput:g} ops/sec) but no operation sections: "
            "the export was cut short"
        )
    if not ev.export_complete:
        truncated.append("the JSON export file is incomplete")
    truncated.extend(r for r in ev.cut_short if r not in truncated)
    if ev.exit_code not in (None, 0):
        failed.append(f"exit code {ev.exit_code}")
    if ev.usage_errors:
        failed.append(f"YCSB rejected its arguments: {ev.usage_errors[0]}")
    if throughput is not None and throughput <= 0:
        failed.append("throughput is 0 ops/sec: no operation completed")
    if ev.exception_count:
        first = ev.exceptions[0] if ev.exceptions else ""
        failed.append(f"{ev.exception_count} exception/error line(s) in the output, first: {first}")
    if ev.still_waiting:
        failed.append(
            "a client thread did not stop after the stop request "
            f"('Still waiting for thread' x{ev.still_waiting})"
        )
    failed.extend(_error_rate_reasons(latency_rows, ev))
    if ev.expected_ops:
        done = ev.overall.get("ops_done")
        if done is None:
            done = ev.last_status_ops
        if done is not None and done < ev.min_ops_fraction * ev.expected_ops:
            failed.append(
                f"only {done:.0f} of {ev.expected_ops} expected operations ({_pct(done / ev.expected_ops)})"
            )
    if truncated:
        return Verdict("truncated", truncated + failed)
    if failed:
        return Verdict("failed", failed)
    return Verdict("completed", [])
