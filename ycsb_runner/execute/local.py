"""One YCSB step on this machine: render, run, parse, judge, store.

The executor of a step when there is no ``[clients]`` table (or only ``local``);
:mod:`ycsb_runner.execute.multi` is the one for several load generators. Both take the run's
:class:`~ycsb_runner.execute.common.StepContext` and fill the same :class:`~ycsb_runner.runs.model.StepRecord`
and frames.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from ycsb_runner.analyse.steady import steady_state
from ycsb_runner.execute.common import StepContext, status_line, status_times, store_monitor
from ycsb_runner.execute.driver_settings import parse_settings_line
from ycsb_runner.execute.phase import PhaseResult, run_phase
from ycsb_runner.install.cds import jvm_flags
from ycsb_runner.parse import ParseError
from ycsb_runner.parse.files import parse_file
from ycsb_runner.parse.merge import (
    client_histograms,
    merge_operations,
    merged_latencies,
    read_client_logs,
    union_window,
    with_steady,
)
from ycsb_runner.prepare.commandline import Rendered, render_step
from ycsb_runner.prepare.plan import Step
from ycsb_runner.runs.model import COMMAND, WORKLOAD_PROPERTIES, StepRecord


def run_local_step(ctx: StepContext, step: Step, record: StepRecord, private: Path) -> None:
    """Run *step* here and fill *record* and ``ctx.frames``. The connection file (it holds the URL) lives
    in *private* only while YCSB runs."""
    out_dir = ctx.result.step_dir(step.label)
    suite = ctx.suite
    if step.kind == "run" and suite.measurement.type.startswith("hdrhistogram"):  # steady state: logs
        suite = dataclasses.replace(
            suite, measurement=dataclasses.replace(suite.measurement, hdr_fileoutput=True)
        )
    hdr_dir = ctx.result.hdr_dir(step.label) if suite.measurement.hdr_fileoutput else None
    if hdr_dir:
        hdr_dir.mkdir(exist_ok=True)
    conn_file = private / "connection.properties"
    workload_file = out_dir / WORKLOAD_PROPERTIES
    rendered = render_step(
        step,
        suite,
        url=ctx.url,
        java=ctx.java.path,
        classpath=ctx.install.classpath,
        binding_class=ctx.install.binding_class,
        workload_file=workload_file,
        connection_file=conn_file,
        jvm_args=[*jvm_flags(ctx.class_archive), *ctx.jvm_args],
        hdr_dir=hdr_dir,
        env=ctx.env,
    )
    record.argv = rendered.masked_argv()
    record.ycsb_cli = rendered.ycsb_cli
    record.properties = rendered.properties
    workload_file.write_text(rendered.workload_properties)
    conn_file.touch(mode=0o600)
    conn_file.write_text(rendered.connection_properties)
    (out_dir / COMMAND).write_text(
        " ".join(record.argv) + "\n\n# as a release-tarball command:\n" + rendered.ycsb_cli + "\n"
    )
    if step.kind == "load":
        ctx.drop_collection()
    monitor = ctx.monitor_for(step)
    try:
        done = _run(ctx, step, record, rendered, monitor, out_dir, private)
    finally:
        conn_file.unlink(missing_ok=True)
    _judge(ctx, step, record, done, rendered, hdr_dir)
    target = suite.run.target
    if monitor is not None and target and record.throughput_ops_s and record.throughput_ops_s < 0.8 * target:
        record.warnings.append(
            f"achieved {record.throughput_ops_s:.0f} ops/s, below 80% of the target "
            f"{target}: the client or the server is saturated"
        )


def _run(
    ctx: StepContext,
    step: Step,
    record: StepRecord,
    rendered: Rendered,
    monitor: Any,
    out_dir: Path,
    private: Path,
) -> PhaseResult:
    """YCSB's process, with the step's *monitor* (or None) around it and its status lines sent to
    ``ctx.progress``."""
    last: dict[str, Any] = {}

    def on_line(line: str) -> None:
        if (settings := parse_settings_line(line)) is not None:
            record.driver_settings = settings
        if (status := status_line(line)) is not None:
            last.update(sec=status.sec, ops=status.ops, cur=status.cur)
            ctx.progress("status", {"step": step, **last})

    def on_start(pid: int) -> None:
        if monitor is not None:
            monitor.start(pid)

    try:
        return run_phase(
            rendered.argv,
            out_dir=out_dir,
            private_dir=private,
            timeout_s=rendered.timeout_s,
            on_stderr_line=on_line,
            on_start=on_start,
        )
    finally:
        if monitor is not None:
            monitor.stop()
            store_monitor(record, monitor, ctx.frames)


def _judge(
    ctx: StepContext,
    step: Step,
    record: StepRecord,
    done: PhaseResult,
    rendered: Rendered,
    hdr_dir: Path | None,
) -> None:
    """YCSB's output parsed and judged (YCSB exits 0 on many failures); its rows added to the frames."""
    record.exit_code = done.exit_code
    suite = ctx.suite
    warmup = suite.effective_warmup_s if step.kind == "run" else 0.0
    try:
        parsed = parse_file(  # streamed: memory bounded whatever the capture's size
            done.stdout_path,
            done.stderr_path,
            exit_code=done.exit_code,
            expected_ops=suite.dataset.recordcount if step.kind == "load" else None,
            max_error_rate=ctx.max_error_rate,
        )
    except ParseError as err:  # YCSB printed nothing a parser can use (e.g. the JVM did not start)
        record.status = "failed"
        record.reasons = [f"{err}; exit code {done.exit_code}; see {done.stderr_path}"]
        return
    record.status = parsed.completion.status
    record.reasons = list(parsed.completion.reasons)
    if done.timed_out:
        record.status = "failed"
        record.reasons.insert(0, f"killed after the hard timeout of {rendered.timeout_s:.0f}s")
    record.throughput_ops_s = parsed.overall.get("throughput")
    record.runtime_ms = parsed.overall.get("runtime_ms")
    if step.kind == "load":
        ctx.check_documents(record)
    if step.kind == "warmup":
        record.discarded = True
        return
    ctx.frames.add("summary", record.keys, parsed.summary)
    ctx.frames.add("timeseries", record.keys, status_times(parsed.status))
    operations = parsed.operations
    if hdr_dir is not None and step.kind == "run":
        operations = _steady_state(ctx, record, parsed.operations, hdr_dir, warmup)
    elif warmup > 0:
        record.warnings.append(
            f"warmup_s = {warmup:g} not applied: it needs measurement.type hdrhistogram (interval logs)"
        )
    ctx.frames.add("operations", record.keys, operations)


def _steady_state(
    ctx: StepContext, record: StepRecord, operations: pd.DataFrame, hdr_dir: Path, warmup: float
) -> pd.DataFrame:
    """A single client's steady state from its HDR interval logs (``ycsb_runner.analyse.steady``): the
    warm-up cut (a fixed *warmup* wins over the rule), the stationarity of the rest, and the
    ``steady_*`` columns beside YCSB's whole-run figures. With a fixed *warmup* the step's headline
    figures are those after it, as before; with the rule alone they stay YCSB's."""
    problems: list[str] = []
    logs = read_client_logs({record.keys.client: hdr_dir}, problems)
    record.warnings.extend(problems)
    steady = steady_state(logs, warmup)
    if warmup > 0:
        operations = _after_warmup(ctx, record, operations, steady.kept, warmup)
    record.figures.update(steady.figures())
    window = union_window(steady.kept)
    if window is not None and window.throughput is not None:
        record.figures.update(window.steady_figures())
    record.warnings.extend(steady.warnings())
    return with_steady(operations, steady.kept, list(ctx.suite.measurement.percentiles))


def _after_warmup(
    ctx: StepContext, record: StepRecord, operations: pd.DataFrame, logs: Any, warmup: float
) -> Any:
    """A single client's run without its first *warmup* seconds (*logs*: its HDR interval logs after
    the cut): the throughput over the rest and the percentiles of its intervals (YCSB's own figures
    stay in summary.csv and in ``figures.throughput_ycsb_ops_s``)."""
    window = union_window(logs)
    record.figures.update(warmup_s=warmup, throughput_ycsb_ops_s=record.throughput_ops_s)
    if window is None or window.throughput is None:
        record.warnings.append(
            f"warmup_s = {warmup:g} is not shorter than the run: nothing is left after the warm-up, "
            "YCSB's whole-run figures are kept"
        )
        return operations
    record.throughput_ops_s = window.throughput
    record.figures.update(
        measured_window_start=window.start_s,
        measured_window_s=window.length_s,
        measured_window_operations=window.ops,
    )
    percentiles = list(ctx.suite.measurement.percentiles)
    latencies = merged_latencies(client_histograms(logs), percentiles)
    return merge_operations({record.keys.client: operations}, latencies, percentiles)
