"""How bench and findmax run in the terminal: a bench under a progress bar, then its results, kept as far as
they go when it fails."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ycsb_runner.cli.options import log
from ycsb_runner.errors import RunFailed, RunInterrupted, interrupted_exit_code, signal_name
from ycsb_runner.present.console import BenchProgress

if TYPE_CHECKING:
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.bench import BenchOutcome


def run_and_show(
    step_seconds: list[float],
    start: Callable[[BenchProgress], BenchOutcome],
    show: Callable[[RunAnalysis | Path, str | None], bool | None],
) -> None:
    """*start* a bench (bench, findmax) under a progress bar of one step per estimate in *step_seconds*, then
    *show* its results (with the error, as far as they go, when it failed) and log where they are (unless
    *show* returns True: its own last lines said so)."""
    try:
        with BenchProgress(len(step_seconds), step_seconds=step_seconds) as progress:
            outcome = start(progress)
    except KeyboardInterrupt as exc:  # before the run folder existed (Click would say "Aborted!", exit 1)
        raise RunInterrupted(
            f"{signal_name(exc)}: stopped before the run started", exit_code=interrupted_exit_code(exc)
        ) from None
    except RunFailed as err:
        if err.run_dir is not None:
            with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
                show(err.analysis or err.run_dir, str(err))
                log(f"results so far: {err.run_dir}")
        raise
    if show(outcome.analysis or outcome.run_dir, None):  # its last lines said where the report is
        return
    if outcome.report:
        log(f"report: {outcome.report}")
    log(f"results: {outcome.run_dir}")
