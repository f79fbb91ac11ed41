"""The audit (Alibaba) layout and the self-contained report, on a real tiny audit off/on run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ycsb_runner.analyse.report import write_report
from ycsb_runner.analyse.table import read_table, study_table

pytestmark = pytest.mark.integration
SUITE = str(Path(__file__).parent / "suites" / "analyse-audit.toml")


@pytest.fixture(scope="module")
def run_dir(mongo_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ycsb_runner.bench import BenchOptions, run_bench

    results = tmp_path_factory.mktemp("results")
    state = results / "audit-state"
    state.write_text("off\n")
    opts = {
        "on_cmd": ["sh", "-c", f"echo on > {state}"],
        "off_cmd": ["sh", "-c", f"echo off > {state}"],
        "status_cmd": ["cat", str(state)],
    }
    outcome = run_bench(
        BenchOptions(suite=SUITE, url=mongo_url, results=results, sample_interval_s=1.0, audit_options=opts),
        log=lambda _m: None,
    )
    return outcome.run_dir.root


def test_audit_table_off_vs_on(run_dir: Path) -> None:
    table = study_table(run_dir)
    assert table.attrs["layout"] == "audit"
    assert table.columns[:2].tolist() == ["mix", "scenario"]
    row = table.iloc[0]
    assert row["scenario"] == "insert:read:update=0:50:50"
    assert (row["n_off"], row["n_on"]) == (2, 2)
    # FerretDB reports no operation latencies: said in words, never a 0
    assert row["MongoDB_RT"] == "writes_avg_rt unavailable; reads_avg_rt unavailable"
    steps = read_table(run_dir / "steps.csv")
    runs = steps[steps["kind"] == "run"]
    off = runs[runs["audit"] == "off"]["throughput_ops_s"]
    on = runs[runs["audit"] == "on"]["throughput_ops_s"]
    text = row["YCSB throughput"]
    assert f"off {off.mean():,.1f}" in text.replace(",", ",") or f"off {off.mean():,.0f}" in text
    assert f"on {on.mean():,.1f}" in text or f"on {on.mean():,.0f}" in text
    assert "significant" in text  # "no significant change" or "up/down ..." with p; n=2+2 is tested
    assert "query" in row["MongoDB_Opcounters"] and "update" in row["MongoDB_Opcounters"]
    assert "insert" not in row["MongoDB_Opcounters"]


def test_report_is_self_contained(run_dir: Path, tmp_path: Path) -> None:
    html_path, md_path = write_report(run_dir, tmp_path / "out")
    text = html_path.read_text()
    assert html_path.is_file() and md_path.is_file()
    assert text.count("<img alt=") == 3  # timeseries, percentiles, audit bars
    assert 'src="data:image/png;base64,' in text
    assert not re.search(r"""(src|href)\s*=\s*["']?https?://""", text)
    assert not re.search(r"<script|<link", text)
    assert "audit-analyse-tiny" in text and "insert:read:update=0:50:50" in text
    md = md_path.read_text()
    assert "## Audit off (A) vs on (B): statistics" in md
    for name in ("timeseries", "percentiles", "audit"):
        assert (tmp_path / "out" / "report-figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_report_cli_default_location(run_dir: Path) -> None:
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 0, res.output
    assert (run_dir / "report.html").is_file() and (run_dir / "report.md").is_file()


def test_alibaba_reference_compare(run_dir: Path) -> None:
    from ycsb_runner.analyse.compare import compare_reference
    from ycsb_runner.analyse.table import audit_ab, load_run

    cmp = compare_reference(run_dir, "alibaba-audit")
    mine = cmp[cmp["mix"] == "read50_update50"].set_index("metric")
    # only the figures of the mix's operations; published numbers from the shipped table
    assert "server_insert_per_s" not in mine.index
    assert mine.loc["server_query_per_s", "published"] == -15.0
    assert mine.loc["server_reads_avg_rt_us", "published"] == 200.0
    assert mine.loc["server_cpu_pct", "published"] == 0.0  # "no significant change" in the study
    ab = audit_ab(load_run(run_dir)).set_index(["mix", "metric"])
    want = ab.loc[("read50_update50", "server_query_per_s"), "change_pct"]
    assert mine.loc["server_query_per_s", "measured"] == pytest.approx(want)
    assert mine.loc["server_reads_avg_rt_us", "note"].startswith("unavailable")
    assert set(cmp[cmp["mix"] == "insert100"]["note"]) == {"mix not in this run"}
