"""Terminal output: progress of a running suite (rich), kept out of the library code."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

err_console = Console(stderr=True, highlight=False)
# The width is COLUMNS when set, else the terminal's (80 when there is none): tables fit it
# (``ycsb_runner.termtable``); ``--format csv|json`` is the complete output for scripts.
out_console = Console(highlight=False)


class BenchProgress:
    """Receives runner events; shows one progress line per step (a plain log line when not a terminal)."""

    def __init__(self, total_steps: int, console: Console = err_console) -> None:
        self.console = console
        self.total = total_steps
        self.tty = console.is_terminal
        self.progress = (
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
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

    def __call__(self, event: str, data: dict) -> None:
        step = data["step"]
        if event == "step-start":
            desc = f"[{step.index}/{self.total}] {step.label}"
            if self.progress:
                self.task = self.progress.add_task(desc, total=None, info=step.reason)
            else:
                self.console.print(f"{desc} {step.reason}".rstrip())
        elif event == "status":
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
