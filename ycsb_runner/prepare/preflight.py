"""Checks before anything runs: a scaled study whose threads or target no longer fit, and settings the
target server is known to mishandle. Pure: a suite in, findings out; ``bench`` prints or raises them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ycsb_runner.prepare.suite import Suite

RECORDS_PER_THREAD = 50  # fewer records per client thread and the threads mostly wait on the same keys
TARGET_FILL = 0.8  # YCSB warns when a run stays below 80% of its -target


@dataclass(frozen=True)
class Finding:
    level: str  # "warning" (the run goes on) or "error" (nothing runs)
    message: str  # one line, with the --set that fixes it


def _overridden(suite: Suite, *keys: str) -> bool:
    names = {item.split("=", 1)[0].strip() for item in suite.overrides}
    return bool(names & set(keys))


def _fit_threads(records: int) -> int:
    return max(1, records // RECORDS_PER_THREAD)


def scaling_findings(suite: Suite) -> list[Finding]:
    """For a scaled suite (``--scale``): threads and ``-target`` the scaled dataset or run cannot carry."""
    if suite.scale == 1.0:
        return []
    out: list[Finding] = []
    records = suite.dataset.recordcount
    fit = _fit_threads(records)
    threads = max(suite.run.threads)
    if threads > fit and not _overridden(suite, "threads", "run.threads"):
        fitted = sorted(
            {min(t, fit) if t <= fit else max(1, round(fit * t / threads)) for t in suite.run.threads}
        )
        value = str(fitted[0]) if len(fitted) == 1 else "[" + ",".join(map(str, fitted)) + "]"
        out.append(
            Finding(
                "warning",
                f"scaled to {records:,} records, {threads} client threads share {records / threads:.0f} "
                f"records each (the study's thread count is for its full dataset): --set threads={value}",
            )
        )
    if suite.dataset.load_threads > fit and not _overridden(suite, "load_threads", "dataset.load_threads"):
        out.append(
            Finding(
                "warning",
                f"{suite.dataset.load_threads} load threads for {records:,} records: "
                f"--set load_threads={min(suite.dataset.load_threads, fit)}",
            )
        )
    target = suite.run.target
    if target and not _overridden(suite, "target", "run.target"):
        seconds = suite.run.maxexecutiontime
        ops = suite.run.operationcount
        advice = "--set target=0 (unthrottled)"
        if ops and seconds:  # the rate at which the operations fill the run's time
            advice += f" or --set target={max(1, int(ops / seconds))}"
        reach = f"; {ops:,} operations last {ops / target:.1f} s at that rate" if ops else ""
        out.append(
            Finding(
                "warning",
                f"-target {target:,} ops/s is the study's rate for its full-size server{reach}; a scaled "
                f"run on a smaller server stays below {TARGET_FILL:.0%} of it: {advice}",
            )
        )
    return out


def server_findings(suite: Suite, *, embedded: bool) -> list[Finding]:
    """Settings the embedded FerretDB server is known to mishandle (on a real mongod they are fine)."""
    out: list[Finding] = []
    w = str(suite.mongodb.url_options.get("w", "")).strip()
    if embedded and w == "0":
        out.append(
            Finding(
                "error",
                "the embedded FerretDB server mishandles unacknowledged writes (w=0: replies out of order, "
                "most operations fail): --set mongodb.url_options.w=1, or run against a real mongod "
                "with MONGODB_URL",
            )
        )
    return out


def _step_length(suite: Suite, embedded: bool) -> tuple[float, float, float | None]:
    """(seconds a run step lasts, the rate the plan assumes, the seconds its operationcount lasts at that
    rate or None): maxexecutiontime or operationcount, whichever ends it first."""
    from ycsb_runner.prepare.plan import assumed_rate

    rate = assumed_rate(suite, embedded)
    if suite.run.target:
        rate = min(rate, suite.run.target)
    by_ops = suite.run.operationcount / rate if suite.run.operationcount else None
    known = [t for t in (suite.run.maxexecutiontime, by_ops) if t]
    return (float(min(known)) if known else 0.0), rate, by_ops


def steady_findings(suite: Suite, *, embedded: bool = True) -> list[Finding]:
    """Run steps too short to leave a steady-state window after the warm-up: at least
    ``MIN_STEADY_INTERVALS`` status intervals after a fixed ``warmup_s``; with the warm-up rule (which may
    cut a third of a step, at most half), a step of at least 1.5 times that many. A step lasts its
    ``maxexecutiontime`` or its ``operationcount`` at the rate the plan assumes (on the embedded server, at
    most ``plan.EMBEDDED_OPS_S``), whichever ends it first. The advice is the ``--set`` that makes the step
    long enough (raising whichever limit ends it too early) or its intervals short enough."""
    from math import ceil

    from ycsb_runner.analyse import MIN_STEADY_INTERVALS

    seconds, rate, by_ops = _step_length(suite, embedded)
    interval = max(int(suite.run.status_interval), 1)
    if seconds <= 0 or not suite.measurement.type.startswith("hdrhistogram"):
        return []
    warmup = suite.effective_warmup_s
    if warmup > 0:
        left = (seconds - warmup) / interval
        need_s = warmup + MIN_STEADY_INTERVALS * interval
        what = f"after warmup_s = {warmup:g} s"
    else:
        left = seconds / interval * 2 / 3
        need_s = MIN_STEADY_INTERVALS * interval * 3 / 2
        what = "after the warm-up rule's cut (up to a third)"
    if left >= MIN_STEADY_INTERVALS:
        return []
    fixes = []
    if interval > 1 and (seconds - max(warmup, 0)) * (1 if warmup > 0 else 2 / 3) >= MIN_STEADY_INTERVALS:
        fixes.append("--set status_interval=1")
    longer = []  # every limit that ends the step before need_s
    mx = suite.run.maxexecutiontime
    if mx is None and by_ops is None:
        longer.append(f"--set maxexecutiontime={ceil(need_s)}")
    if mx is not None and mx < need_s:
        longer.append(f"--set maxexecutiontime={ceil(need_s)}")
    if by_ops is not None and by_ops < need_s:
        longer.append(f"--set operationcount={ceil(need_s * rate)}")
    fixes.append(" and ".join(longer))
    return [
        Finding(
            "warning",
            f"run steps of about {seconds:.0f} s with {interval} s status intervals leave {max(left, 0):.0f} "
            f"intervals {what}, fewer than the {MIN_STEADY_INTERVALS} the steady-state figures and the "
            f"stationarity test need: {' or '.join(f for f in fixes if f)}",
        )
    ]


def preflight(suite: Suite, *, embedded: bool) -> list[Finding]:
    """Every finding for *suite* on the embedded server (``embedded``) or an external one."""
    return (
        scaling_findings(suite)
        + server_findings(suite, embedded=embedded)
        + steady_findings(suite, embedded=embedded)
    )


def audit_preflight(
    suite: Suite, options: Mapping[str, Any], *, embedded: bool
) -> tuple[list[Finding], list[str]]:
    """A suite's audit strategy before the server starts: its own pre-flight of its options (*options*, the
    ``--audit-option`` values, over the suite's) as errors, and the notice that says which programs the run
    will execute, and from where: a suite file someone handed you must not run programs unannounced."""
    audit = suite.audit
    if not audit.states or not audit.strategy:
        return [], []
    from ycsb_runner.audit import strategy_spec

    spec = strategy_spec(audit.strategy)
    given = {**audit.options, **options}
    findings = [Finding("error", e) for e in spec.preflight(given, embedded)]
    if spec.programs is None:
        return findings, []
    lines = spec.programs(given)
    from_suite = [k for k in spec.program_keys if k in audit.options and k not in options]
    where = f"suite file {suite.path}" if from_suite else "--audit-option"
    head = f"notice: this run executes programs (audit strategy {audit.strategy}, from the {where}):"
    return findings, [head, *(f"  {line}" for line in lines)] if lines else [head + " none given"]
