"""Progress of a suite: the ETA of the step and of the suite from the plan's estimated durations."""

from __future__ import annotations

import io

from rich.console import Console

from ycsb_runner.console import BenchProgress, clock, remaining
from ycsb_runner.plan import build_plan
from ycsb_runner.suite import load_suite


def test_clock_and_remaining() -> None:
    assert clock(75) == "1:15" and clock(3725) == "1:02:05" and clock(-3) == "0:00"
    assert remaining(20.0, 5.0, 100.0) == (15.0, 115.0)
    assert remaining(20.0, 30.0, 100.0) == (0.0, 100.0)  # past its estimate: the steps after it are left


def test_plain_log_names_each_steps_length_and_the_suite_eta() -> None:
    plan = build_plan(load_suite("quick", ["maxexecutiontime=20"]))
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    seconds = [s.est_seconds for s in plan.steps]
    progress = BenchProgress(len(plan.steps), console=console, step_seconds=seconds)
    with progress:
        for step in plan.steps[:2]:
            progress("step-start", {"step": step})
            progress("status", {"step": step, "sec": 1, "ops": 0, "cur": 0.0})
    lines = out.getvalue().splitlines()
    first, second = plan.steps[0], plan.steps[1]
    assert lines[0].endswith(f"(about {clock(first.est_seconds)}; suite ETA {clock(sum(seconds))})")
    assert "1 s: no operation done yet" in lines[1]  # not "0 ops, 0 ops/s"
    assert any(
        line.endswith(f"suite ETA {clock(sum(seconds[1:]))})") and second.label in line for line in lines
    )
