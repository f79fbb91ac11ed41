"""Terminal output: progress of a running suite (rich), kept out of the library code."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, ProgressBar, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from ycsb_runner.safe.text import terminal

err_console = Console(stderr=True, highlight=False)
# The width is COLUMNS when set, else the terminal's (80 when there is none): tables fit it
# (``ycsb_runner.present.termtable``); ``--format csv|json`` is the complete output for scripts.
out_console = Console(highlight=False)


def clock(seconds: float) -> str:
    """``75`` -> ``1:15``; ``3725`` -> ``1:02:05``."""
    m, sec = divmod(max(0, int(round(seconds))), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def remaining(est: float, elapsed: float, after: float) -> tuple[float, float]:
    """(seconds left in the step, seconds left in the suite) from the plan's estimates: a step past its
    estimate has 0 left, the suite then the steps after it."""
    left = max(0.0, est - elapsed)
    return left, left + after


class StepBar(ProgressColumn):
    """A bar that fills with the step's elapsed time against its planned length (known up front); narrower
    on a narrow terminal, so that a step's progress stays on one line."""

    def __init__(self, width: int = 28) -> None:
        super().__init__()
        self.width = width

    def render(self, task: Task) -> ProgressBar:
        est = float(task.fields.get("est") or 0.0)
        if est <= 0:
            return ProgressBar(total=None, width=self.width, pulse=not task.finished)
        done = est if task.finished else min(task.elapsed or 0.0, est)
        return ProgressBar(total=est, completed=done, width=self.width)


class EtaColumn(ProgressColumn):
    """``ETA step 0:12, suite 3:40`` from the plan's estimated durations (``ETA 0:12/3:40`` when narrow)."""

    def __init__(self, short: bool = False) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.short = short

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text("")
        est = float(task.fields.get("est") or 0.0)
        left, suite = remaining(est, task.elapsed or 0.0, float(task.fields.get("after") or 0.0))
        text = (
            f"ETA {clock(left)}/{clock(suite)}"
            if self.short
            else f"ETA step {clock(left)}, suite {clock(suite)}"
        )
        return Text(text, style="cyan")


NARROW = 120  # below this many columns the progress line uses the short bar and ETA


def progress_columns(width: int) -> tuple[ProgressColumn, ...]:
    """The columns of a step's progress line: one line at any width (the step name and the latest status
    are cut with an ellipsis, the numbers are not)."""
    narrow = width < NARROW
    cut = {"no_wrap": True, "overflow": "ellipsis"}
    return (
        TextColumn("{task.description}", table_column=Column(**cut, ratio=2)),
        StepBar(10 if narrow else 28),
        TextColumn("{task.fields[info]}", table_column=Column(**cut, ratio=1)),
        TimeElapsedColumn(table_column=Column(no_wrap=True)),
        EtaColumn(short=narrow),
    )


class BenchProgress:
    """Receives runner events; shows one progress line per step with a bar over its planned length and
    the ETA of the step and of the suite (a plain log line when not a terminal)."""

    def __init__(
        self,
        total_steps: int,
        console: Console = err_console,
        step_seconds: list[float] | tuple[float, ...] = (),
    ) -> None:
        self.console = console
        self.total = total_steps
        self.step_seconds = list(step_seconds)
        self.tty = console.is_terminal
        self.progress = (
            Progress(*progress_columns(console.width), console=console, transient=False) if self.tty else None
        )
        self.task: Any = None
        self._last_print = 0.0

    def __enter__(self) -> BenchProgress:
        if self.progress:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress:
            self.progress.stop()

    def _after(self, index: int) -> float:
        """Planned seconds of the steps after step *index* (1-based)."""
        return float(sum(self.step_seconds[index:]))

    def __call__(self, event: str, data: dict) -> None:
        step = data["step"]
        if event == "step-start":
            desc = f"[{step.index}/{self.total}] {step.label}"
            est = float(getattr(step, "est_seconds", 0.0) or 0.0)
            after = self._after(step.index)
            waiting = "starting YCSB" if step.kind in ("load", "run") else step.reason
            if self.progress:
                self.task = self.progress.add_task(desc, total=None, info=waiting, est=est, after=after)
            else:
                eta = f" (about {clock(est)}; suite ETA {clock(est + after)})" if est else ""
                self.console.print(f"{desc} {step.reason}".rstrip() + eta)
        elif event == "status":
            if not data.get("ops"):
                info = "no operation done yet"
            else:
                info = f"{data['ops']:,} ops, {data['cur']:,.0f} ops/s"
            if self.progress and self.task is not None:
                self.progress.update(self.task, info=info)
            elif time.monotonic() - self._last_print >= 10:
                self._last_print = time.monotonic()
                self.console.print(f"    {data['sec']} s: {info}")
        elif event == "step-end":
            rec = data["record"]
            tp = f", {rec.throughput_ops_s:,.0f} ops/s" if rec.throughput_ops_s else ""
            audit = f", audit verified {rec.audit_verified}" if rec.audit_verified else ""
            info = f"{rec.status}{tp}{audit}"
            said = terminal("; ".join(rec.reasons))  # YCSB's own lines among them: escaped, not markup
            if self.progress and self.task is not None:
                shown = f"{info} ({said[:120]}{'...' if len(said) > 120 else ''})" if said else info
                self.progress.update(self.task, total=1, completed=1, info=escape(shown))
            else:  # every reason, as the manifest has them
                self.console.print(Text(f"    -> {info} ({said})" if said else f"    -> {info}"))
        sys.stderr.flush()
