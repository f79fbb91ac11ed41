"""How often the analysis of one run is computed along ``report`` and ``bench`` (a script; the unit test
``tests/unit/test_analysis_calls.py`` asserts the same counts on the checked-in runs).

Counts, by a profile hook (``sys.setprofile``) over ycsb_runner's own functions:

* ``step_metrics``: calls of ``analyse.table.step_metrics`` (the per-step figures every table stands on);
* ``load``: calls of ``RunResult.load`` (a run folder opened from disk);
* ``read_csv``: CSV files read by ``RunResult.frame``;
* ``entered``: per analysis module (``analyse/``, ``studies.py``, ``reference/``), how many times a call from
  another module handed it the run (a ``RunResult`` or ``RunAnalysis`` argument): "following the run
  through the code". A module's own calls to itself are not counted.

Usage::

    .venv/bin/python bench/analysis_calls.py          # report, table, compare, a bench's end: tests/data/runs
    .venv/bin/python bench/analysis_calls.py --bench  # also a real `bench` of tests/suites/tiny.toml (~1 min)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ycsb_runner"
RUNS = ROOT / "tests" / "data" / "runs"
ANALYSIS = ("analyse/", "studies.py", "reference/")
REFERENCE = {"tencent-analyse": "tencent-mongodb44", "audit-analyse": "alibaba-audit"}


@dataclass
class Calls:
    step_metrics: int = 0
    load: int = 0
    read_csv: int = 0
    entered: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        most = ", ".join(f"{m} {n}" for m, n in self.entered.most_common())
        return [
            f"  step_metrics computed: {self.step_metrics}",
            f"  RunResult.load:        {self.load}",
            f"  CSV files read:        {self.read_csv}",
            f"  analysis modules entered with the run: {most}",
        ]


def _module(frame: FrameType | None) -> str | None:
    """The frame's file relative to ycsb_runner/ (None outside the package)."""
    if frame is None:
        return None
    file = frame.f_code.co_filename
    return file[len(str(PACKAGE)) + 1 :] if file.startswith(str(PACKAGE)) else None


def _holds_run(frame: FrameType) -> bool:
    from ycsb_runner.runs.model import RunResult

    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    values = [frame.f_locals.get(n) for n in names]
    return any(isinstance(v, RunResult) or type(v).__name__ == "RunAnalysis" for v in values)


@contextmanager
def counting() -> Iterator[Calls]:
    """Count, while the block runs, the calls this module's docstring lists."""
    calls = Calls()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = _module(frame)
        name = frame.f_code.co_name
        if module is None:
            if name == "read_csv" and _module(frame.f_back) == "runs/model.py":
                calls.read_csv += 1
            return
        if name == "step_metrics" and module == "analyse/table.py":
            calls.step_metrics += 1
        elif name == "load" and module == "runs/model.py":
            calls.load += 1
        caller = _module(frame.f_back)
        if module.startswith(ANALYSIS) and caller != module and _holds_run(frame):
            calls.entered[module] += 1

    sys.setprofile(hook)
    try:
        yield calls
    finally:
        sys.setprofile(None)


def count(fn: Callable[[], Any]) -> Calls:
    with counting() as calls:
        fn()
    return calls


def command_calls(*args: str) -> Calls:
    """``ycsb-runner ARGS`` in this process (typer's test runner); AssertionError when it fails."""
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    with counting() as calls:
        done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, (args, done.output, done.exception)
    return calls


def finish_calls(run: Path, results: Path) -> Calls:
    """What ``run_bench`` does with a run folder once its steps are done (``finish_run_folder``: history
    record, study table, report), on a copy of *run* under *results*, given the run as the runner holds it."""
    from ycsb_runner.bench import finish_run_folder
    from ycsb_runner.runs.model import RunResult

    copy = results / run.name
    shutil.copytree(run, copy)
    result = RunResult.load(copy)
    return count(lambda: finish_run_folder(result, report=True, log=print, history=(results, None)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", action="store_true", help="also a real bench (needs `make setup`)")
    a = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for run in sorted(p for p in RUNS.iterdir() if p.is_dir()):
            out = Path(tmp) / f"report-{run.name}"
            print(f"ycsb-runner report {run.name}:")
            print("\n".join(command_calls("report", str(run), "--out", str(out)).lines()))
            print(f"ycsb-runner table {run.name}:")
            print("\n".join(command_calls("table", str(run), "--format", "csv").lines()))
            print(f"ycsb-runner compare {run.name} {run.name} (two runs):")
            print("\n".join(command_calls("compare", str(run), str(run), "--format", "csv").lines()))
            print(f"ycsb-runner compare {run.name} --reference {REFERENCE[run.name]}:")
            args = ("compare", str(run), "--reference", REFERENCE[run.name], "--format", "csv")
            print("\n".join(command_calls(*args).lines()))
            print(f"finish_run_folder({run.name}) (run_bench after the steps):")
            print("\n".join(finish_calls(run, Path(tmp) / f"results-{run.name}").lines()))
        if a.bench:
            suite = str(ROOT / "tests" / "suites" / "tiny.toml")
            print("ycsb-runner bench tests/suites/tiny.toml (run_bench and the printed results):")
            print("\n".join(command_calls("bench", suite, "--results", str(Path(tmp) / "bench")).lines()))


if __name__ == "__main__":
    main()
