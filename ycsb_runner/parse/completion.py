"""Deciding whether a run completed, failed or was cut short."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .model import Completion
from .names import classify

_NO_RETURNS = ("CLEANUP", "READ-MODIFY-WRITE")  # measured without a return code


@dataclass
class Evidence:
    """What the completion is decided on (all gathered by parse_output)."""

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
    # per status-line section, the operations its updates counted (``StatusDigest.section_counts``)
    status_counts: dict[str, float] = field(default_factory=dict)


def _pct(x: float) -> str:
    return f"{100.0 * x:.3g}%"


def _per_operation(latency_rows: pd.DataFrame, ev: Evidence) -> dict[str, tuple[float, float, str]]:
    """Per operation section: (failed, done, where from): the summary's Return= counts; for an operation
    without any (its section is missing: the summary was cut short), the status lines' counts of OP and
    OP-FAILED, when they have any."""
    out: dict[str, tuple[float, float, str]] = {}
    if not latency_rows.empty and "error_rate" in latency_rows:
        checked = latency_rows[latency_rows["part"].isin(["", "hdr"]) & (latency_rows["returns"] > 0)]
        for r in checked.drop_duplicates("section").itertuples():  # text and HDR rows count it once
            out[str(r.section)] = (float(r.errors), float(r.returns), "")
    counted = set(latency_rows.loc[latency_rows["section"].isin(out), "operation"]) if out else set()
    names = frozenset(ev.status_counts)
    seen: dict[tuple[str, str], dict[str, float]] = {}  # (operation, part) -> {"": done, "FAILED": failed}
    for section, n in ev.status_counts.items():
        c = classify(section, names)
        if not c["intended"] and c["part"] in ("", "hdr") and c["outcome"] in ("", "FAILED"):
            seen.setdefault((c["operation"], c["part"]), {}).setdefault(c["outcome"], n)
    for (op, part), n in seen.items():
        if op in counted or op in _NO_RETURNS or n.get("FAILED", 0.0) <= 0 or (part and (op, "") in seen):
            continue
        out[op] = (n["FAILED"], n["FAILED"] + n.get("", 0.0), " in the status lines")
    return out


def _error_rate_reasons(latency_rows: pd.DataFrame, ev: Evidence) -> list[str]:
    """The error-rate rule over the whole phase: failed / returned operations of every section together
    (a phase fails when more than ``max_error_rate`` of its operations failed, whichever they were); an
    operation whose summary section is missing is counted from the status lines."""
    per_op = _per_operation(latency_rows, ev)
    errors = sum(f for f, _, _ in per_op.values())
    returns = sum(d for _, d, _ in per_op.values())
    if ev.operation_failures and errors == 0:
        return [
            f"the binding reported {ev.operation_failures} failed operation(s) that the summary does not "
            "count"
        ]
    if returns <= 0 or errors / returns <= ev.max_error_rate:
        return []
    per_section = ", ".join(
        f"{op} {f:.0f} of {d:.0f}{where}" for op, (f, d, where) in per_op.items() if f > 0
    )
    return [
        f"error rate {_pct(errors / returns)} ({errors:.0f} of {returns:.0f} operations; failed: "
        f"{per_section}) exceeds {_pct(ev.max_error_rate)}"
    ]


def _operation_rate_reasons(latency_rows: pd.DataFrame, ev: Evidence) -> list[str]:
    """For a step that failed anyway, every operation whose own error rate exceeds ``max_error_rate`` while
    the phase's does not (the phase rule decides; the operation's rate is one more reason to look)."""
    out = []
    for op, (failed, done, where) in _per_operation(latency_rows, ev).items():
        if done > 0 and failed / done > ev.max_error_rate:
            out.append(
                f"{op}: {_pct(failed / done)} of its operations failed{where} ({failed:.0f} of {done:.0f}; "
                f"over {_pct(ev.max_error_rate)}, within it over the whole phase)"
            )
    return out


def decide(ev: Evidence) -> Completion:
    """Apply the rules; 'truncated' when the output itself is cut short, else 'failed' on any reason."""
    ops = ev.operations
    latency_rows = (
        ops[(ops["kind"] != "intended") & (~ops["intended"].astype(bool))] if not ops.empty else ops
    )
    truncated, failed = _summary_reasons(ev, latency_rows.empty)
    failed += _process_reasons(ev)
    phase_rate = _error_rate_reasons(latency_rows, ev)
    failed += phase_rate + _short_count_reasons(ev)
    if (truncated or failed) and not phase_rate:  # every reason a failed step has, its operations' too
        failed.extend(_operation_rate_reasons(latency_rows, ev))
    if truncated:
        return Completion("truncated", truncated + failed)
    if failed:
        return Completion("failed", failed)
    return Completion("completed", [])


def _summary_reasons(ev: Evidence, no_sections: bool) -> tuple[list[str], list[str]]:
    """(truncated, failed): what the summary, the export and the cut-short checks say about the output."""
    failed: list[str] = []
    truncated: list[str] = []
    runtime, throughput = ev.overall.get("runtime_ms"), ev.overall.get("throughput")
    if runtime is None:
        if ev.status_updates:
            truncated.append(
                f"no [OVERALL] summary: the output stops after {ev.status_updates} status update(s) "
                "(killed, crashed or still running?)"
            )
        else:
            failed.append("no [OVERALL] summary and no status lines: YCSB did not run a workload")
    elif no_sections and (throughput or 0) > 0:
        truncated.append(
            f"the summary has [OVERALL] (throughput {throughput:g} ops/sec) but no operation sections: "
            "the export was cut short"
        )
    if not ev.export_complete:
        truncated.append("the JSON export file is incomplete")
    truncated.extend(r for r in ev.cut_short if r not in truncated)
    return truncated, failed


def _process_reasons(ev: Evidence) -> list[str]:
    """The exit code, rejected arguments, zero throughput, exceptions and threads that did not stop."""
    failed: list[str] = []
    throughput = ev.overall.get("throughput")
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
    return failed


def _short_count_reasons(ev: Evidence) -> list[str]:
    """Fewer operations done than the expected fraction of the expected count."""
    if not ev.expected_ops:
        return []
    done = ev.overall.get("ops_done")
    if done is None:
        done = ev.last_status_ops
    if done is not None and done < ev.min_ops_fraction * ev.expected_ops:
        return [f"only {done:.0f} of {ev.expected_ops} expected operations ({_pct(done / ev.expected_ops)})"]
    return []
