"""One analysis per run: a report (and the end of a bench) opens the run folder once and computes the step
metrics once, counted by ``bench/analysis_calls.py``'s profile hook on the checked-in runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from bench_scripts import bench_script

ROOT = Path(__file__).parents[2]
RUNS = ROOT / "tests" / "data" / "runs"


calls_of = bench_script("analysis_calls")


def _too_often(entered: dict[str, int]) -> dict[str, int]:
    """The analysis modules (``analyse/``, ``studies.py``, ``reference/``) handed the run over 3 times."""
    return {m: n for m, n in entered.items() if n > 3}


@pytest.mark.parametrize("run", ["tencent-analyse", "audit-analyse"])
def test_a_report_reads_the_run_once_and_computes_its_metrics_once(run: str, tmp_path: Path) -> None:
    calls = calls_of.command_calls("report", str(RUNS / run), "--out", str(tmp_path))
    assert (tmp_path / "report.md").is_file()
    assert calls.load == 1
    assert calls.step_metrics == 1
    assert calls.read_csv <= 3  # steps, operations, timeseries: each file once
    assert calls.entered["analyse/table.py"] >= 1  # the hook sees the run handed over
    assert _too_often(calls.entered) == {}


def test_the_end_of_a_bench_reads_the_folder_once(tmp_path: Path) -> None:
    """``finish_run_folder`` (history record, study table, report) from one analysis of the folder."""
    calls = calls_of.finish_calls(RUNS / "audit-analyse", tmp_path)
    assert calls.load == 1
    assert calls.step_metrics == 1
    assert _too_often(calls.entered) == {}
    with sqlite3.connect(tmp_path / "history.sqlite") as con:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("audit-analyse",)]
        assert con.execute("SELECT count(*) FROM metrics").fetchone()[0] > 0
    assert (tmp_path / "audit-analyse" / "study_table.csv").is_file()
    assert (tmp_path / "audit-analyse" / "report.md").is_file()


def test_the_counter_counts_every_load_and_step_metrics(tmp_path: Path) -> None:
    from ycsb_runner.analyse.table import step_metrics
    from ycsb_runner.runs.model import RunResult

    def twice() -> None:
        for _ in range(2):
            step_metrics(RunResult.load(RUNS / "tencent-analyse"))

    calls = calls_of.count(twice)
    assert (calls.load, calls.step_metrics) == (2, 2)
    assert calls.entered["analyse/table.py"] == 2
