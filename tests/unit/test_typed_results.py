"""What travels beside a result's frame does so in named fields (issue 50): the study table's title, audit
caveat, notes, layout and non-stationary steps (``StudyTable``), a reference comparison's run-vs-study line
and caveat (``ReferenceComparison``), a compare's audit caveat (``CompareOutcome``) and a judged series'
change points, baseline and noise (``SeriesNights``); each reaches the outputs that show it. On copies of the
checked-in result folders of real runs (tests/data/runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_regress import _history, _nights
from typer.testing import CliRunner

from ycsb_runner import compare_runs
from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.analyse.caveats import audit_caveat
from ycsb_runner.cli import app
from ycsb_runner.nightly.regress import REGRESSION, RegressOptions, regress

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _copy(tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    return Path(shutil.copytree(RUNS / name, tmp_path / (as_name or name)))


def test_the_study_table_carries_its_caveat_notes_and_layout_to_every_format(tmp_path: Path) -> None:
    run = _copy(tmp_path, "audit-analyse")  # audit switched by a state file: unverified
    a = RunAnalysis.of(run)
    table = a.table
    caveat = audit_caveat(a.run.manifest)
    assert caveat and table.audit_unverified == caveat and table.layout == "off-on"
    assert table.title.startswith(a.run.suite_name) and table.notes and not table.frame.attrs
    res = CliRunner().invoke(app, ["table", str(run), "-f", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["audit_unverified"] == caveat and doc["notes"] == "\n".join(table.notes)
    generic = RunAnalysis.of(_copy(tmp_path, "quick-generic")).table
    assert generic.layout == "generic" and generic.audit_unverified == "" and generic.notes == ()


def test_a_compare_of_two_runs_carries_their_audit_caveat(tmp_path: Path) -> None:
    caveat = audit_caveat(RunAnalysis.of(_copy(tmp_path, "audit-analyse", "probe")).run.manifest)
    out = compare_runs(_copy(tmp_path, "audit-analyse", "a"), _copy(tmp_path, "audit-analyse", "b"))
    assert out.audit_unverified == caveat and out.caveats[0] == caveat
    assert out.fields["audit_unverified"] == caveat and out.title.endswith("[UNVERIFIED AUDIT]")
    plain = compare_runs(_copy(tmp_path, "tencent-analyse", "c"), _copy(tmp_path, "tencent-analyse", "d"))
    assert plain.audit_unverified == "" and "audit_unverified" not in plain.fields


def test_a_reference_comparison_says_what_the_run_did_next_to_the_study(tmp_path: Path) -> None:
    run = _copy(tmp_path, "tencent-analyse")
    cmp = RunAnalysis.of(run).reference("tencent-mongodb44")
    assert cmp.reference == "tencent-mongodb44" and cmp.audit_unverified == "" and not cmp.frame.empty
    assert cmp.run_vs_study and not cmp.frame.attrs
    out = compare_runs(run, reference="tencent-mongodb44")
    assert out.run_vs_study == cmp.run_vs_study and cmp.run_vs_study in out.caveats
    assert out.fields["run_vs_study"] == cmp.run_vs_study


def test_a_judged_series_keeps_its_change_and_baseline_beside_its_nights() -> None:
    """The nights a regressed series was judged on, with the night its change began and the baseline nights
    it was judged against: what its trend plot marks and its site page draws."""
    nights = _nights(16)
    slower = [{k: v * (0.6 if k == "throughput_ops_s" else 1.5) for k, v in n.items()} for n in nights[-2:]]
    res = regress(*_history([*nights[:-2], *slower]), "quick", RegressOptions())
    row = res.table[res.table["metric"] == "throughput_ops_s"].iloc[0]
    judged = res.series_values[next(k for k in res.series_values if "throughput_ops_s" in k)]
    runs = [str(r) for r in judged.frame["run_id"]]
    assert row["verdict"] == REGRESSION and runs[judged.change_index] == row["change_run"]
    start, end = judged.baseline
    assert runs[start] == row["baseline_from"] and end - start == row["baseline_nights"]
    assert judged.noise_source.startswith("the series' own") and not judged.frame.attrs
