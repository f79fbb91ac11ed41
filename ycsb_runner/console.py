"""Terminal output: progress of a running suite (rich), kept out of the library code."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import Progress, ProgressBar, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.text import Text

err_console = Console(stderr=True, highlight=False)
# The width is COLUMNS when set, else the terminal's (80 when there is none): tables fit it
# (``ycsb_runner.termtable``); ``--format csv|json`` is the complete output for scripts.
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
    """A bar that fills with the step's elapsed time against its planned length (known up front)."""

    def render(self, task: Task) -> ProgressBar:
        est = float(task.fields.get("est") or 0.0)
        if est <= 0:
            return ProgressBar(total=None, width=28, pulse=not task.finished)
        done = est if task.finished else min(task.elapsed or 0.0, est)
        return ProgressBar(total=est, completed=done, width=28)


class EtaColumn(ProgressColumn):
    """``ETA step 0:12, suite 3:40`` from the plan's estimated durations."""

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text("")
        est = float(task.fields.get("est") or 0.0)
        left, suite = remaining(est, task.elapsed or 0.0, float(task.fields.get("after") or 0.0))
        return Text(f"ETA step {clock(left)}, suite {clock(suite)}", style="cyan")


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
            Progress(
                TextColumn("{task.description}"),
                StepBar(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                EtaColumn(),
                console=console,
                transient=False,
            )
            if self.tty
            else None
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
                info = f"{data['sec']} s: no operation done yet"
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
            info = f"{rec.verdict}{tp}{audit}"
            if rec.reasons:
                info += f" ({'; '.join(rec.reasons)[:120]})"
            if self.progress and self.task is not None:
                self.progress.update(self.task, total=1, completed=1, info=info)
            else:
                self.console.print(f"    -> {info}")
        sys.stderr.flush()
