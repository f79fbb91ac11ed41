"""The report's study answers on the checked-in real runs: audit overhead %, client-side fallback for
MongoDB_RT, measured/published, the scaled banner, over-time data per step."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

import pytest

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.analyse.caveats import server_caveat
from ycsb_runner.analyse.table import audit_ab, audit_overhead, step_metrics
from ycsb_runner.errors import UserError
from ycsb_runner.report.plots import latency_over_time, latency_unit, short_step
from ycsb_runner.report.run_report import scaled_note, write_report
from ycsb_runner.runs.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


def test_audit_overhead_is_the_percent_change_of_the_ab_means(audit: Path) -> None:
    a = RunAnalysis.of(audit)
    over = audit_overhead(a.run, a.study, a.off_on).set_index("metric")
    metrics = ("throughput_ops_s", "server_cpu_pct", "read_avg_us")
    ab = audit_ab(step_metrics(RunResult.load(audit)), metrics).set_index("metric")
    for metric in ("throughput_ops_s", "server_cpu_pct"):
        a, b = ab.loc[metric, "a_mean"], ab.loc[metric, "b_mean"]
        assert over.loc[metric, "change_pct"] == pytest.approx(100 * (b - a) / a)
        low = over.loc[metric, "ci_low_pct"]
        assert low == pytest.approx(100 * ab.loc[metric, "ci_low"] / a, nan_ok=True)
    # FerretDB has no opLatencies: the read response time is YCSB's client-side read latency, labelled
    rt = over.loc["server_reads_avg_rt_us"]
    assert rt["source"].startswith("client-side (YCSB)") and "client-side" in rt["label"]
    read = ab.loc["read_avg_us"]
    assert rt["change_pct"] == pytest.approx(100 * (read["b_mean"] - read["a_mean"]) / read["a_mean"])


def test_mongodb_rt_cell_falls_back_to_client_latency(audit: Path) -> None:
    study = RunAnalysis.of(audit).table
    table = study.frame
    row = table.iloc[0]
    ab = RunAnalysis.of(audit).off_on.set_index(["mix", "metric"])
    read = ab.loc[(row["mix"], "read_avg_us")]
    assert row["MongoDB_RT reads_avg_rt change (%)"] == pytest.approx(read["change_pct"])
    assert any("reads_avg_rt" in n and "client-side" in n for n in study.notes)


def test_scaled_run_gets_the_not_comparable_banner(tencent: Path, tmp_path: Path) -> None:
    assert scaled_note(RunAnalysis.of(tencent)) is None  # run as its suite says
    manifest = json.loads((tencent / "manifest.json").read_text())
    manifest["suite"]["scaling"].update(scale=0.001, overrides=["threads=2"])
    (tencent / "manifest.json").write_text(json.dumps(manifest))
    note = scaled_note(RunAnalysis.of(tencent))
    assert "scaled 0.001: not comparable to the published figures" in note
    assert "this run: 300 records, threads 2" in note and "--set threads=2" in note
    assert "published: 2,000,000 records, threads 8" in note
    html = write_report(tencent, tmp_path / "out")[0].read_text()
    assert "<div class='warn'><strong>Not the study's setting.</strong>" in html and "scaled 0.001" in html
    assert "Measured vs published" in html


def test_over_time_data_has_a_point_per_status_line(tencent: Path) -> None:
    run = RunResult.load(tencent)
    ts = run.timeseries
    for step in run.steps[run.steps["phase"] == "run"]["step"]:
        lat, source = latency_over_time(run, step)
        assert source == "YCSB status lines"
        lines = ts[(ts["step"] == step) & (ts["kind"] == "op") & ts["avg_us"].notna()]
        lines = lines[lines["operation"] != "CLEANUP"]
        assert len(lat) == len(lines) and {"avg", "p90", "p99"} <= set(lat.columns)


def test_units_and_step_labels() -> None:
    assert latency_unit(900) == ("µs", 1.0) and latency_unit(80_000) == ("ms", 1e3)
    assert latency_unit(9e6) == ("s", 1e6)
    row = {"mix": "read100", "threads": 4, "audit": "off"}
    assert short_step("19-run-read100-t4-audit-off-r1", row) == "19 read100, 4 thr, audit off"


def test_thread_counts_are_matched_by_value() -> None:
    from ycsb_runner.analyse.compare import check_threads

    check_threads([100, 200], [100, 200], "tencent-threads")
    check_threads([8, 100], [100, 200], "tencent-threads")  # 100 meets 100; 200 is reported as not run
    with pytest.raises(UserError, match=r"ran 4, 8 threads; tencent-threads publishes 100, 200 threads"):
        check_threads([4, 8], [100, 200], "tencent-threads")  # never paired by rank


def test_published_remarks_in_english_beside_the_original() -> None:
    from ycsb_runner.reference.english import english

    assert english("上涨 3 个百分点（+15%）") == "up 3 percentage points (+15%)"
    assert english("query 降低 5000（-15%）； update 降低 5000（-15%）") == (
        "query down 5000 (-15%); update down 5000 (-15%)"
    )
    assert english("64核512GB（独享型）") == "64 cores, 512GB (dedicated)"
    cmp = RunAnalysis.of(RUNS / "audit-analyse").reference("alibaba-audit").frame
    texts = set(cmp["published_text"])
    assert "no significant change [无明显变化]" in texts
    assert not any(t and not t.isascii() and "[" not in t for t in texts)  # never Chinese alone


def test_a_run_on_ferretdb_says_it_is_not_mongodb(
    tencent: Path, tencent_reported: Path, tmp_path: Path
) -> None:
    """Issue 37: every report of a run on the embedded FerretDB says that it is not MongoDB; a run on a
    mongod does not."""
    page = unescape((tencent_reported / "report.html").read_text())  # (the same run's report)
    assert "id='not-mongodb'>Not MongoDB: ycsb-runner's embedded test server, FerretDB" in page
    assert "> Not MongoDB: " in (tencent_reported / "report.md").read_text()
    manifest = json.loads((tencent / "manifest.json").read_text())
    manifest["target"].update(
        server_kind="mongod", server_version="mongod 7.0.12", build_info={"version": "7.0.12"}
    )
    (tencent / "manifest.json").write_text(json.dumps(manifest))
    html_path, md_path = write_report(tencent, tmp_path / "mongod")
    assert "Not MongoDB" not in html_path.read_text() and "Not MongoDB" not in md_path.read_text()
    # a FerretDB given by URL is named as such too
    manifest["target"].update(
        embedded=False, server_kind=None, build_info={"version": "7.0.42", "ferretdb": "v2.1"}
    )
    (tencent / "manifest.json").write_text(json.dumps(manifest))
    assert "the server at the URL, FerretDB v2.1" in server_caveat(RunResult.load(tencent).manifest.target)
