"""Progress of a suite: the ETA of the step and of the suite from the plan's estimated durations."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ycsb_runner.prepare.plan import build_plan
from ycsb_runner.prepare.suite import load_suite
from ycsb_runner.present.console import BenchProgress, clock, remaining


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


def test_piped_status_says_the_time_once() -> None:
    """Issue 22, item 11: ``0 s: no operation done yet``, not ``0 s: 0 s: no operation done yet``."""
    plan = build_plan(load_suite("quick", ["maxexecutiontime=20"]))
    out = io.StringIO()
    progress = BenchProgress(1, console=Console(file=out, force_terminal=False, width=200))
    with progress:
        progress("step-start", {"step": plan.steps[0]})
        progress("status", {"step": plan.steps[0], "sec": 0, "ops": 0, "cur": 0.0})
    assert out.getvalue().splitlines()[1] == "    0 s: no operation done yet"


def test_terminal_progress_is_one_line_per_step_at_80_columns() -> None:
    """Issue 22, item 8: the bar, status and ETA of a step fit one line of an 80-column terminal."""
    plan = build_plan(load_suite("tencent-threads", ["mongodb.url_options.w=1"], 0.0002))
    seconds = [s.est_seconds for s in plan.steps]
    for width in (80, 160):
        console = Console(file=io.StringIO(), force_terminal=True, width=width)
        progress = BenchProgress(len(plan.steps), console=console, step_seconds=seconds)
        assert progress.progress is not None
        for step in plan.steps[:2]:
            progress("step-start", {"step": step})
            progress("status", {"step": step, "sec": 12, "ops": 123_456, "cur": 10_288.0})
        shown = io.StringIO()
        Console(file=shown, width=width, color_system=None).print(
            progress.progress.make_tasks_table(progress.progress.tasks)
        )
        lines = shown.getvalue().splitlines()
        assert len(lines) == 2, lines  # one line per step
        assert all("ETA" in line and "0:00:" in line for line in lines), lines
        assert all(len(line) <= width for line in lines)


def test_a_hint_keeps_each_option_with_its_value() -> None:
    """Issue 22, item 8: ``--set`` and its value on one line at 80 columns, whatever the message."""
    from ycsb_runner.cli.options import wrap_message
    from ycsb_runner.prepare.preflight import preflight

    suite = load_suite("tencent-threads", scale=0.0002)
    messages = [f"{f.level}: {f.message}" for f in preflight(suite, embedded=True)]
    assert any("--set threads=[20,40]" in m for m in messages)
    for message in messages:
        for width in range(40, 81):
            wrapped = wrap_message(message, width)
            lines = wrapped.splitlines()
            assert all(not line.rstrip().endswith("--set") for line in lines), (width, lines)
            assert " ".join(line.strip() for line in lines) == " ".join(message.split())
            assert all(len(line) <= width or " " not in line.strip() for line in lines)


def test_a_closing_line_keeps_its_exit_code_on_its_last_line() -> None:
    """A judgement's closing line ends with ``; exit N``: folded at any width, that stays on the last line
    (CI found ``--confirm 2);`` then ``exit 2`` alone on the next)."""
    from ycsb_runner.cli.options import wrap_message

    message = (
        "no series can detect a 5 % change at this noise and history (the most sensitive shows 8 %): could "
        "not tell; to detect 5 %: 24 more nights (newest night-08; alpha 0.01 after Holm (family-wise error "
        "rate) correction, min effect 5 %, --confirm 2); exit 2"
    )
    for width in range(20, 121):
        lines = wrap_message(message, width).splitlines()
        assert lines[-1].endswith("; exit 2"), (width, lines)
        assert " ".join(line.strip() for line in lines) == message


def test_a_piped_closing_line_is_one_line_unless_columns_is_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped (cron, CI) without COLUMNS, a message stays one line: ``... 2>&1 | tail -1`` keeps the whole
    closing line, not its folded end ("5 %, --confirm 2); exit 1"). With COLUMNS set it folds to it."""
    from ycsb_runner.cli.options import log

    message = (
        "9 of 34 series regressed; 24 cannot tell a 5 % change at their noise (newest slow-02; alpha 0.01 "
        "after Holm (family-wise error rate) correction, min effect 5 %, --confirm 2); exit 1"
    )
    monkeypatch.delenv("COLUMNS", raising=False)
    log(message)
    assert capsys.readouterr().err == message + "\n"
    monkeypatch.setenv("COLUMNS", "80")
    log(message)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and max(map(len, lines)) <= 80 and lines[-1].endswith("; exit 1"), lines
