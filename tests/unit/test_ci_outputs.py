"""What a CI job shows of a night: regress's and bench's ``$GITHUB_STEP_SUMMARY`` Markdown and regress's JUnit
XML, over a history with a step change (synthetic nights in an SQLite history)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.runs.history import RunRecord, SqliteHistory

NOISE = [1.0, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99, 1.0, 1.02]


def _night(i: int, factor: float, tags: dict[str, str]) -> RunRecord:
    rid = f"night-{i:02d}"
    run = {
        "run_id": rid,
        "suite": "quick",
        "fingerprint": "f",
        "status": "completed",
        "started_at": f"2026-11-{i + 1:02d}T02:00:00.000Z",
        "ended_at": f"2026-11-{i + 1:02d}T02:10:00.000Z",
        "server_kind": "mongod",
        "server_version": "7.0",
        "client_host": "h",
        "tags": {**tags, "night": str(i)},
        "folder": f"/r/{rid}",
        "error": "",
    }
    keys = {"run_id": rid, "step": "02-run-a", "repetition": 1, "phase": "run", "mix": "a", "threads": 4}
    metrics = [
        {
            **keys,
            "audit": "none",
            "operation": "OVERALL",
            "metric": "throughput_ops_s",
            "value": 1000 * factor,
        },
        {**keys, "audit": "none", "operation": "READ", "metric": "avg_us", "value": 2000 / factor},
        {
            **keys,
            "audit": "none",
            "operation": "READ",
            "metric": "p99_us",
            "value": 9000.0 * (1 + i % 3 / 100),
        },
    ]
    return RunRecord(run, metrics)


def history(results: Path, factors: list[float], tags: dict[str, str] | None = None) -> Path:
    """An SQLite history of one night per factor (throughput x factor, average latency / factor; p99 flat)."""
    h = SqliteHistory(results / "history.sqlite")
    for i, f in enumerate(factors):
        h.index(_night(i, f, tags or {}))
    return results


def test_a_flagged_night_writes_a_junit_failure_per_regression_and_a_job_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = history(tmp_path / "results", [*NOISE, 0.6, 0.6], {"sha": "a|b *c*"})
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "junit.xml"
    r = CliRunner().invoke(app, ["regress", "quick", "--results", str(results), "--junit", str(junit)])
    assert r.exit_code == 1, r.output
    root = ET.fromstring(junit.read_text())
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "regress quick"
    cases = suite.findall("testcase")
    assert len(cases) == int(suite.get("tests")) == 3  # one per series
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {"OVERALL throughput_ops_s", "READ avg_us"} and suite.get("failures") == "2"
    assert all("night-09" in c.find("failure").get("message") for c in cases if c.find("failure") is not None)
    text = summary.read_text()
    assert text.startswith("earlier step\n# ycsb-runner regress quick: regression")  # appended, not replaced
    assert "**verdict**: regression (exit 1)" in text and str(junit) in text
    assert "| open | night-09 |" in text and "a\\|b \\*c\\*" in text  # the tags escaped for Markdown
    assert text.count("| run a") >= 2 or text.count("throughput") >= 1


def test_a_quiet_night_has_no_failure_and_no_summary_without_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = history(tmp_path / "results", NOISE)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    junit = tmp_path / "junit.xml"
    r = CliRunner().invoke(app, ["regress", "quick", "--results", str(results), "--junit", str(junit)])
    assert r.exit_code in (0, 2), r.output
    suite = ET.fromstring(junit.read_text()).find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and len(suite.findall("testcase")) == 3
    assert not list(tmp_path.glob("*.md"))


def test_an_unwritable_summary_is_a_warning_and_keeps_the_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = history(tmp_path / "results", [*NOISE, 0.6, 0.6])
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "dir" / "summary.md"))
    r = CliRunner().invoke(app, ["regress", "quick", "--results", str(results)])
    assert r.exit_code == 1 and "warning: the job summary was not written" in r.stderr


RUN = Path(__file__).parents[1] / "data" / "runs" / "tencent-analyse"


def test_a_bench_writes_its_figures_as_openmetrics_and_its_job_summary(tmp_path: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    from ycsb_runner.nightly.export import run_openmetrics
    from ycsb_runner.report.ci import append_summary, bench_summary
    from ycsb_runner.runs.history import run_record
    from ycsb_runner.runs.model import RunResult

    result = RunResult.load(RUN)
    record = run_record(result)
    samples = [s for f in text_string_to_metric_families(run_openmetrics(result)) for s in f.samples]
    assert len(samples) == len(record.metrics) > 0 and all(s.timestamp is None for s in samples)
    want = sorted((m["metric"], m["step"], m["operation"], m["value"]) for m in record.metrics)
    got = sorted(
        (s.name.removeprefix("ycsb_"), s.labels["step"], s.labels["operation"], s.value) for s in samples
    )
    assert got == want
    summary = tmp_path / "s.md"
    assert append_summary(bench_summary(result), {"GITHUB_STEP_SUMMARY": str(summary)}) == summary
    text = summary.read_text()
    assert text.startswith(f"# ycsb-runner bench {result.manifest.suite.name}: ") and result.run_id in text
    assert append_summary(bench_summary(result), {}) is None
