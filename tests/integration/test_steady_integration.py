"""Steady state on a real run: the embedded server stopped (SIGSTOP) for about 10 s in the second half of
a 36-s run; the step is flagged as not stationary (a stall), its warm-up cut by the rule stays before the
stall, and its steady-state percentiles are those of one histogram of the kept HDR intervals."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from throttle import paused

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.install.embedded import ServerInfo
from ycsb_runner.parse.hdr import read_hdr_log
from ycsb_runner.report.run_report import write_report

pytestmark = pytest.mark.integration

SUITE = str(Path(__file__).parents[1] / "suites" / "multi.toml")  # 450 records, 1-s status intervals
RUN_S = 36
STALL_AT_S = 20  # YCSB's own elapsed seconds (its status lines)
STALL_S = 10.0
# A paced run: what is judged is the shape of its throughput (a stall, the warm-up cut before it), not how
# fast the server goes; at full speed the run and the server took two cores for its 36 s
TARGET = 100


def _stall_when_the_run_reaches(results: Path, pid: int, done: threading.Event, stalled: list[float]) -> None:
    """SIGSTOP the server once the run step's status lines reach STALL_AT_S, SIGCONT after STALL_S."""
    deadline = time.monotonic() + 240
    while not done.is_set() and time.monotonic() < deadline:
        for err in results.glob("*/steps/*-run-*/stderr.txt"):
            secs = [int(s) for s in re.findall(r"(\d+) sec: \d+ operations", err.read_text(errors="replace"))]
            if secs and max(secs) >= STALL_AT_S:
                with paused(pid):
                    stalled.append(time.time())
                    time.sleep(STALL_S)
                return
        time.sleep(0.1)


def test_a_run_with_a_10_s_server_stop_is_flagged_not_stationary(server: ServerInfo, tmp_path: Path) -> None:
    done, stalled = threading.Event(), []
    stopper = threading.Thread(
        target=_stall_when_the_run_reaches, args=(tmp_path, server.pid, done, stalled), daemon=True
    )
    stopper.start()
    try:
        outcome = run_bench(
            BenchOptions(
                suite=SUITE,
                url=server.url,
                results=tmp_path,
                overrides=[
                    "run.operationcount=100000000",
                    f"maxexecutiontime={RUN_S}",
                    "threads=2",
                    f"target={TARGET}",
                ],
                monitors=False,
                report=False,
                canaries=False,
            ),
            log=lambda _m: None,
        )
    finally:
        done.set()
        stopper.join()
        os.kill(server.pid, signal.SIGCONT)
    assert stalled, "the run ended before the server was stopped"
    run = outcome.result
    step = next(s for s in run.manifest.steps if s.keys.phase == "run")
    assert step.status == "completed", step.reasons
    fig = step.figures
    assert fig["warmup_rule"] == "MSER" and fig["stationary"] is False
    assert any("not stationary" in w and "stalled" in w for w in step.warnings), step.warnings
    assert fig["steady_stall_s"] >= 3.0  # the stopped seconds logged (next to) nothing
    assert fig["steady_start"] < stalled[0]  # the rule cut the warm-up, not the stall
    summary = run.summary
    ycsb = summary[(summary["step"] == step.keys.step) & (summary["metric"] == "Throughput(ops/sec)")]
    assert step.throughput_ops_s == pytest.approx(float(ycsb["value"].iloc[0]))  # the headline: YCSB's
    assert fig["throughput_steady_ops_s"] > 0

    # the steady-state percentiles: one histogram of the intervals kept after the cut, built here
    hdr = run.root / "steps" / step.keys.step / "hdr"
    logs = {name: read_hdr_log(hdr / f"{name}.hdr") for name in ("READ", "UPDATE")}
    first = min((log.start_time_s or 0.0) + iv.start_s for log in logs.values() for iv in log.intervals)
    ops = run.operations
    for name, log in logs.items():
        one = HdrHistogram(1, 3_600_000_000, 3)
        kept = 0
        for iv in log.intervals:
            if (log.start_time_s or 0.0) + iv.start_s >= first + fig["warmup_end_s"] - 1e-9:
                for i in iv.counts.nonzero()[0]:
                    one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
                kept += iv.total
        row = ops[(ops["phase"] == "run") & (ops["section"] == name)].iloc[0]
        assert row["steady_operations"] == kept > 0
        assert row["operations"] >= kept  # the whole run's (YCSB's) count beside it
        for p in (50, 95, 99):
            assert row[f"steady_p{p}_us"] == one.get_value_at_percentile(p)

    shown = {k: v for k, v in fig.items() if k.startswith(("steady_", "warmup_", "throughput_"))}
    print(
        f"stalled at {stalled[0]:.1f}; throughput_ops_s {step.throughput_ops_s:.1f}; {shown}; {step.warnings}"
    )
    table = RunAnalysis.of(run).table
    assert "not stationary" in table.unsteady and (table.frame["not stationary"] == "yes").any()
    _, md = write_report(run)
    text = md.read_text()
    assert "run steps still moving (not stationary)" in text and "warm-up cut" in text
