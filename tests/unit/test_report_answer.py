"""Issue 49: a report's first section is the answer to its study's question (a chart and a compact table
per study layout), its table cells hold one number (or a few words), and a short step's trend is said over
the window it was measured on, never as a rate per minute. On the checked-in real run folders: the audit
study (``audit-analyse``), the Tencent layout (``tencent-analyse``) and a generic suite (``quick-generic``:
``ycsb-runner bench quick`` on the embedded server, 15-s run steps still rising)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.present.document import Figure, Table
from ycsb_runner.present.output import display_frame
from ycsb_runner.present.termtable import is_number_text
from ycsb_runner.report.run_report import OVERHEAD_HEADING, run_document, write_report
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"
MAX_WORDS = 8


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(RUNS / name, tmp_path / name))


def _tables(doc) -> list[pd.DataFrame]:
    return [b.frame for s in doc.sections for b in s.blocks if isinstance(b, Table)]


def _cell_problems(frame: pd.DataFrame) -> list[str]:
    """Cells (as the report shows them) holding more than one number or more than MAX_WORDS words."""
    bad = []
    for col in (text := display_frame(frame)).columns:
        for cell in text[col].astype(str):
            if is_number_text(cell):  # one number, with its unit and spread ("106 ± 16.43")
                continue
            words = cell.split()
            numbers = [w for w in words if is_number_text(w.strip(",;()"))]
            if len(numbers) > 1 or len(words) > MAX_WORDS:
                bad.append(f"{col}: {cell}")
    return bad


@pytest.mark.parametrize(
    ("name", "stem", "columns"),
    [
        (
            "audit-analyse",
            "answer-audit",
            [
                "mix",
                "throughput change",
                "read latency change",
                "write latency change",
                "CPU change",
                "verdict",
            ],
        ),
        ("tencent-analyse", "answer-reference", ["mix", "threads", "throughput (ops/s)", "throughput ×"]),
        ("quick-generic", "timeseries-run", ["mix", "threads", "throughput (ops/sec)"]),
    ],
)
def test_the_first_section_is_the_answer_and_every_cell_holds_one_number(
    tmp_path: Path, name: str, stem: str, columns: list[str]
) -> None:
    a = RunAnalysis.of(_copy(tmp_path, name))
    doc = run_document(a)
    assert doc.sections[0].heading is None  # the banners
    first = doc.sections[1]
    kinds = [type(b) for b in first.blocks]
    assert Table in kinds and Figure in kinds, (name, first.heading, kinds)
    figure = next(b for b in first.blocks if isinstance(b, Figure))
    assert figure.stem == stem and figure.panels
    compact = next(b.frame for b in first.blocks if isinstance(b, Table))
    assert all(c in compact.columns for c in columns), compact.columns.tolist()
    mixes = a.step_metrics.loc[a.step_metrics["phase"] == "run", "mix"].nunique()
    assert len(compact) >= mixes  # a row per mix (Tencent and generic: the load too)
    for frame in _tables(doc):
        assert not _cell_problems(frame), (name, _cell_problems(frame)[:3])


def test_the_audit_answer_is_the_overhead_per_mix_with_words_said_once(tmp_path: Path) -> None:
    a = RunAnalysis.of(_copy(tmp_path, "audit-analyse"))
    overhead = a.report_tables.overhead
    doc = run_document(a)
    compact = next(b.frame for b in doc.sections[1].blocks if isinstance(b, Table))
    assert compact["mix"].tolist() == list(dict.fromkeys(overhead["mix"]))
    tp = overhead[overhead["metric"] == "throughput_ops_s"].set_index("mix")["change_pct"]
    for row in compact.itertuples():
        assert row._2 == f"{tp[row.mix]:+.0f} %"  # throughput change, a number with its unit
    _, md = write_report(a)
    page = md.read_text()
    # the source of client-side latencies is said once per table (the answer, the overhead, the study's
    # table), never on every row
    assert page.count("this server reports no operation latencies") <= 3
    assert "| client-side (YCSB): the server reports no operation latencies |" not in page
    assert page.index(f"## {OVERHEAD_HEADING}") > page.index("answer-audit.png")  # the detail after it


def test_a_15_s_step_is_never_reported_with_a_trend_per_minute(tmp_path: Path) -> None:
    run_dir = _copy(tmp_path, "quick-generic")
    steps = RunResult.load(run_dir).steps
    short = steps[(steps["phase"] == "run") & (steps["steady_s"] <= 20)]
    assert not short.empty and (short["stationary"].astype(str) == "False").any()  # a real short drift
    html, md = write_report(run_dir)
    for text in (html.read_text(), md.read_text(), (run_dir / "steps.csv").read_text()):
        assert "%/min" not in text
    page = md.read_text()
    assert "run steps still moving (not stationary): see the moving column above" in page
    moving = [c for c in page.split("|") if c.strip().endswith(" %") and c.strip()[0] in "+-"]
    assert moving  # the change over the window, in the steps table's column


def test_a_load_with_few_status_points_has_no_panel_of_its_own(tmp_path: Path) -> None:
    from ycsb_runner.report import plots

    run_dir = _copy(tmp_path, "audit-analyse")
    run = RunResult.load(run_dir)
    loads = run.steps.loc[run.steps["phase"] == "load", "step"].tolist()
    points = {s: plots.status_points(run, s) for s in loads}
    short = [s for s, n in points.items() if 0 < n < 5]
    long = [s for s, n in points.items() if n >= 5]
    doc = run_document(RunAnalysis.of(run))
    figures = {b.stem: b for s in doc.sections for b in s.blocks if isinstance(b, Figure)}
    panels = len(figures["timeseries-load"].panels) if "timeseries-load" in figures else 0
    assert panels == len(long)
    if short:
        joined = figures["timeseries-short-loads"]
        assert len(joined.panels) == 1 and all(s in joined.caption for s in short)


def test_report_json_gains_the_answer_as_its_summary(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    run_dir = _copy(tmp_path, "tencent-analyse")
    res = CliRunner().invoke(app, ["report", str(run_dir), "-f", "json"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    summary = data["summary"]
    assert summary["heading"] == "Measured / published per mix"
    kinds = [next(iter(b)) for b in summary["blocks"]]
    assert "figure" in kinds and "table" in kinds
    # sections: the whole report in its order, the answer first among them (what a program read before the
    # summary existed is still there)
    assert [s["heading"] for s in data["sections"]][:2] == [None, summary["heading"]]
    assert any(s["heading"] == "Plots" for s in data["sections"])


#: what ``report -f json`` held before issue 49 (f410eb3), section by section: (heading, the keys of its
#: first table's rows); the issue adds ``summary`` and keys, it keeps these
BEFORE = {
    "audit-analyse": [
        (None, None),
        (
            OVERHEAD_HEADING,
            ["mix", "metric", "measured by", "n", "audit off", "audit on", "change %", "95% CI %"],
        ),
        ("audit-analyse-tiny: UNVERIFIED audit off → on per mix (server-side figures)", ["mix", "scenario"]),
        ("Plots", None),
        ("Run", None),
        ("Audit off (A) vs on (B): statistics", ["mix", "threads", "metric", "n off", "n on", "p"]),
        ("Steps", ["step", "phase", "status", "throughput_ops_s", "runtime_ms", "reasons", "warnings"]),
    ],
    "quick-generic": [
        (None, None),
        ("quick: per-mix results", ["mix", "n", "audit", "error rate", "READ avg (µs)", "not stationary"]),
        ("Plots", None),
        ("Run", None),
        ("Steps", ["step", "phase", "status", "throughput_ops_s", "runtime_ms", "reasons", "stationary"]),
    ],
    "tencent-analyse": [
        (None, None),
        (
            "tencent-analyse-tiny: per-mix results (client-side YCSB averages)",
            ["mix", "phase", "n", "CPU (%)"],
        ),
        ("Plots", None),
        (
            "Measured vs published (2C4G)",
            ["mix", "storage", "metric", "measured", "published", "ratio", "note"],
        ),
        ("Run", None),
        ("Steps", ["step", "phase", "status", "throughput_ops_s", "runtime_ms", "reasons", "warnings"]),
    ],
}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_report_json_keeps_its_sections_and_keys(tmp_path: Path, name: str) -> None:
    import json

    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    run_dir = _copy(tmp_path, name)
    res = CliRunner().invoke(app, ["report", str(run_dir), "-f", "json"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert list(data) == ["title", "summary", "sections"]
    before = [h for h, _ in BEFORE[name]]
    added = [s["heading"] for s in data["sections"] if s["heading"] not in before]
    assert added in ([], [data["summary"]["heading"]])  # the answer, where it is a new section, and no more
    kept = [s for s in data["sections"] if s["heading"] in before]
    assert [s["heading"] for s in kept] == before
    for section, (heading, keys) in zip(kept, BEFORE[name], strict=True):
        if keys is None:
            continue
        rows = next(b["table"] for b in section["blocks"] if "table" in b)
        assert rows and all(set(keys) <= set(row) for row in rows), (heading, sorted(rows[0]))
    steps = next(b["table"] for b in data["sections"][-1]["blocks"] if "table" in b)
    said = {r["step"]: r["warnings"] for r in steps}  # the warnings as steps.csv has them
    csv = pd.read_csv(run_dir / "steps.csv").set_index("step")["warnings"].fillna("")
    assert all(said[step] in (None, "") or said[step] == csv[step] for step in said)


@pytest.mark.parametrize("name", ["audit-analyse", "tencent-analyse", "quick-generic"])
def test_the_study_table_holds_one_number_per_cell(tmp_path: Path, name: str) -> None:
    """``ycsb-runner table`` (its terminal view and study_table.csv) and the table a bench prints: a number
    (or "-", or a few words) per cell; what applies to many rows is said once under it."""
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    run_dir = _copy(tmp_path, name)
    a = RunAnalysis.of(run_dir)
    compact, lines = a.layout.compact(a.table)
    for frame in (a.table.frame, compact):
        assert not _cell_problems(frame), (name, _cell_problems(frame)[:3])
    res = CliRunner().invoke(app, ["table", str(run_dir), "--save"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    saved = pd.read_csv(run_dir / "study_table.csv")
    assert len(saved) == len(a.table.frame) and not _cell_problems(saved)
    for line in lines:  # each note once, under the table
        assert res.stdout.count(line.split("\n")[0][:40]) == 1, line


def test_the_audit_study_table_keeps_the_study_columns_with_off_on_change_p(tmp_path: Path) -> None:
    from ycsb_runner.analyse.table import STUDY_FIGURES, study_columns

    a = RunAnalysis.of(_copy(tmp_path, "audit-analyse"))
    table = a.table.frame
    for column, figure, _metric, unit in STUDY_FIGURES:
        off, on, change, p = study_columns(column, figure, unit)
        assert off.startswith(column) and off.endswith(f"({unit})") and {off, on, change, p} <= set(table)
    assert "CpuUsage change (pp)" in table and "MongoDB_RT writes_avg_rt change (%)" in table
    overhead = a.report_tables.overhead.set_index(["mix", "metric"])
    row = table.iloc[0]
    tp = overhead.loc[(row["mix"], "throughput_ops_s")]
    assert row["YCSB throughput off (ops/s)"] == pytest.approx(tp["off"])
    assert row["YCSB throughput change (%)"] == pytest.approx(tp["change_pct"])
    # repetitions: the terminal view names the significant changes (p below 0.05), one line
    compact, lines = a.layout.compact(a.table)
    p = table.set_index("mix")["MongoDB_RT reads_avg_rt p"]
    said = next(x for x in lines if x.startswith("significant at p < 0.05: "))
    assert (f"{row['mix']} reads_avg_rt" in said) == bool(p[row["mix"]] < 0.05)
    assert "reads_avg_rt (%)" in compact and "MongoDB_Opcounters insert change (%)" not in compact


def test_one_run_each_is_said_once_as_not_tested(tmp_path: Path) -> None:
    """With one run per audit state nothing is tested: every p is "-", said once, never a verdict per cell."""
    run_dir = _copy(tmp_path, "audit-analyse")
    steps = pd.read_csv(run_dir / "steps.csv")
    drop = steps[(steps["phase"] == "run") & (steps["repetition"] == 2)].index
    steps.loc[drop, "verdict"] = "failed"  # the status in format 2 (a failed step is left out of the tables)
    steps.to_csv(run_dir / "steps.csv", index=False)
    a = RunAnalysis.of(run_dir)
    table = a.table.frame
    assert (table["n_off"] == 1).all() and (table["n_on"] == 1).all()
    assert table.filter(like=" p").isna().all().all()
    assert table["YCSB throughput change (%)"].notna().all()
    notes = a.table.notes
    assert notes.count("p -: fewer than 2 runs per audit state, not tested") == 1
    _, lines = a.layout.compact(a.table)
    assert not any(x.startswith("significant at") for x in lines)
    assert not _cell_problems(table)


def test_compare_reference_opens_with_the_answer(tmp_path: Path) -> None:
    """``compare --reference`` of the Tencent layout: first the measured / published table per mix (as the
    report opens with), then the detail of the run's mixes; the published mixes the run did not measure and
    a note repeated on every row of a metric are said once; the data formats keep every row."""
    import json

    from typer.testing import CliRunner

    from ycsb_runner.cli import app
    from ycsb_runner.reference.ratios import ratio_text

    run_dir = _copy(tmp_path, "tencent-analyse")
    argv = ["compare", str(run_dir), "--reference", "tencent-mongodb44"]
    res = CliRunner().invoke(app, argv, env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    rows = json.loads(CliRunner().invoke(app, [*argv, "-f", "json"]).stdout)["rows"]
    measured = [r for r in rows if r["measured"] is not None]
    unmeasured = sorted({r["mix"] for r in rows} - {r["mix"] for r in measured})
    assert unmeasured and len(rows) > len(measured)  # the data keeps the published rows it did not measure
    lines = res.stdout.splitlines()
    assert "measured / published per mix (cloud)" in lines[0]
    detail = next(i for i, line in enumerate(lines) if line.rstrip().endswith(": detail"))
    answer = {
        line.split()[0]: line.split()
        for line in lines[2:detail]
        if line.split()[0] in {r["mix"] for r in rows}
    }
    tp = {
        r["mix"]: r["ratio"]
        for r in measured
        if r["metric"] == "throughput_ops_s" and r["storage"] == "cloud"
    }
    assert set(answer) == set(tp)  # a row per measured mix, in the first screen
    for mix, ratio in tp.items():
        assert ratio_text(ratio) in answer[mix]
    body = "\n".join(lines[detail:])
    assert all(not line.startswith(f" {m} ") for m in unmeasured for line in lines)
    assert body.count(f"published but not measured in this run: {', '.join(unmeasured)}") == 1
    assert body.count("published: % of the instance") == 1
