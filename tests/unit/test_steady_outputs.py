"""Where a non-stationary step is named: the study table (a column and a caption), compare's caption, the
regress line over the history, and the report; a run without one says nothing of it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.analyse.table import unsteady_steps
from ycsb_runner.cli import app
from ycsb_runner.nightly.regress_service import unsteady_nights as _unsteady_nights
from ycsb_runner.report.run_report import write_report
from ycsb_runner.runs.history import rebuild
from ycsb_runner.runs.model import RunResult

WHAT = "throughput still falling 7.9 %/min at the end (95 % interval -9.0 to -6.8 %/min over the 60 s window)"


def _flag(folder: Path) -> str:
    """Mark the first run step of a run folder as not stationary, as the runner records it."""
    steps = pd.read_csv(folder / "steps.csv")
    runs = steps.index[steps["phase"] == "run"]
    step = str(steps.at[runs[0], "step"])
    steps["stationary"] = pd.Series([True] * len(steps), dtype=object).where(steps["phase"] == "run", None)
    steps.at[runs[0], "stationary"] = False
    steps["warnings"] = steps["warnings"].astype(object)
    steps.at[runs[0], "warnings"] = f"not stationary: {WHAT}"
    steps.to_csv(folder / "steps.csv", index=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    for s in manifest["steps"]:
        if s["phase"] == "run":
            s["figures"]["stationary"] = s["step"] != step
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return step


def test_a_non_stationary_step_is_named_in_the_table_compare_regress_and_report(results: Path) -> None:
    flagged, clean = results / "tencent-analyse", results / "audit-analyse"
    assert unsteady_steps(RunResult.load(flagged).steps) == []
    step = _flag(flagged)
    run = RunResult.load(flagged)
    assert unsteady_steps(run.steps) == [(step, WHAT)]
    study = RunAnalysis.of(run).table
    table = study.frame
    mix = run.steps.set_index("step").at[step, "mix"]
    assert set(table.loc[table["not stationary"] == "yes", "mix"]) == {mix}
    assert study.unsteady.startswith("1 of 4 run steps still moving") and WHAT not in study.unsteady
    cli = CliRunner()
    shown = cli.invoke(app, ["table", str(flagged)], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "1 of 4 run steps still moving" in shown.output and mix in shown.output
    plain = cli.invoke(app, ["table", str(clean)], env={"COLUMNS": "200"})
    assert plain.exit_code == 0 and "not stationary" not in plain.output
    same = cli.invoke(app, ["compare", str(flagged), str(flagged)], env={"COLUMNS": "200"})
    assert "compares non-stationary steps" in same.output and f"baseline {flagged.name}" in same.output
    assert f"contender {flagged.name}" in same.output
    history, _ = rebuild(results, log=lambda _m: None)
    line = _unsteady_nights(history, ["tencent-analyse", "audit-analyse"])
    assert line is not None and "1 step(s) of 1 of the 2 runs" in line and "tencent-analyse" in line
    assert _unsteady_nights(history, ["audit-analyse"]) is None
    _, md = write_report(run)
    page = md.read_text()  # one line counts them; the steps table's column says which (no paragraph)
    assert "1 of 4 run steps still moving (not stationary): see the moving column above" in page
    assert "run steps not stationary: " not in page and "| moving |" in page  # (the old paragraph)
    assert f"{step}: not stationary: {WHAT}" in page  # its warnings listed under the table, once
