"""`ycsb-runner parse`, through the project's Typer app."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from ycsb_runner.cli import app

DATA = Path(__file__).parents[1] / "data" / "ycsb"
runner = CliRunner()


def invoke(*args: str):
    """``ycsb-runner parse ARGS`` as the command line runs it (the project's app: its errors are plain lines,
    where a bare Typer app of its own draws them in a box that wraps at the terminal's width)."""
    return runner.invoke(app, ["parse", *args], catch_exceptions=False)


def test_table_finds_the_stderr_beside_the_stdout():
    result = invoke(str(DATA / "flaky.stdout"), str(DATA / "killed.stdout"))
    assert result.exit_code == 0
    assert "flaky.stdout: failed" in result.output
    assert "failed: READ" in result.output
    assert "killed.stdout: truncated" in result.output
    assert "UPDATE-FAI" in result.output  # UPDATE-FAILED, whole or cut to its column


def test_csv_and_explicit_stderr(tmp_path):
    out = tmp_path / "run.txt"
    shutil.copy(DATA / "hdr_both.stdout", out)
    result = invoke(str(out), "--stderr", str(DATA / "hdr_both.stderr"), "--format", "csv")
    assert result.exit_code == 0
    frame = pd.read_csv(io.StringIO(result.output))
    assert set(frame["section"]) == {
        "READ",
        "UPDATE",
        "CLEANUP",
        "Intended-READ",
        "Intended-UPDATE",
        "Intended-CLEANUP",
    }
    assert set(frame["status"]) == {"completed"}
    assert frame.loc[frame["section"] == "READ", "returns"].iloc[0] > 0


def test_json_for_an_export_file():
    result = invoke(str(DATA / "export_jsonarray.json"), "-f", "json")
    assert result.exit_code == 0
    payload = json.loads(result.output)
    assert payload[0]["completion"] == {"status": "completed", "reasons": []}
    assert payload[0]["verdict"] == payload[0]["completion"]  # its old name, still written in this release
    assert payload[0]["overall"]["ops_done"] == 2000
    sections = {row["section"] for row in payload[0]["operations"]}
    assert sections == {"READ", "UPDATE", "CLEANUP"}


def test_clear_one_line_errors(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("just some text\nnothing here\n")
    result = invoke(str(junk))
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "does not look like YCSB output" in result.output
    missing = invoke(str(tmp_path / "nope.stdout"))
    assert missing.exit_code == 2 and "file not found" in missing.output
    bad_format = invoke(str(DATA / "hdr_op.stdout"), "-f", "xml")
    assert bad_format.exit_code == 2 and "'table', 'csv', 'json'" in bad_format.output
    two = invoke(
        str(DATA / "hdr_op.stdout"), str(DATA / "label.stdout"), "--stderr", str(DATA / "hdr_op.stderr")
    )
    assert two.exit_code == 2 and "exactly one" in two.output


def test_summary_table_has_every_section_ycsb_printed():
    """--table summary: every `[SECTION], metric, value` line, GC per collector and [OVERALL] included."""
    text = (DATA / "trackjvm.stdout").read_text()
    printed = [ln.split("], ", 1) for ln in text.splitlines() if ln.startswith("[")]
    printed = [(sec[1:], rest.rsplit(", ", 1)) for sec, rest in printed]
    result = invoke(str(DATA / "trackjvm.stdout"), "--table", "summary", "--format", "csv")
    assert result.exit_code == 0
    frame = pd.read_csv(io.StringIO(result.output), keep_default_na=False, dtype=str)
    got = list(zip(frame["section"], frame["metric"], frame["value_str"], strict=True))
    assert got == [(sec, metric, value) for sec, (metric, value) in printed]
    assert {"OVERALL", "TOTAL_GCS_G1_Young_Generation", "TOTAL_GC_TIME_%_G1_Old_Generation"} <= set(
        got[i][0] for i in range(len(got))
    )


def test_json_keeps_each_gc_collector():
    result = invoke(str(DATA / "hdr_op.stdout"), "-f", "json")
    assert result.exit_code == 0
    sections = json.loads(result.output)[0]["sections"]
    assert sections["TOTAL_GCS_G1_Young_Generation"] == {"Count": 0}
    assert "Time(ms)" in sections["TOTAL_GC_TIME_G1_Old_Generation"]
    assert sections["OVERALL"]["RunTime(ms)"] == 3013
    assert sections["READ"]["Return=OK"] > 0


def test_other_tables_in_every_format():
    result = invoke(str(DATA / "histogram_verbose.stdout"), "--table", "histogram", "-f", "csv")
    frame = pd.read_csv(io.StringIO(result.output))
    assert result.exit_code == 0 and len(frame) == 3 * 101 and set(frame["source"]) == {"histogram"}
    result = invoke(str(DATA / "hdr_op.stdout"), "--table", "status", "-f", "json")
    rows = json.loads(result.output)[0]["status"]
    assert result.exit_code == 0 and {r["section"] for r in rows} >= {"READ", "UPDATE"}
    result = invoke(str(DATA / "timeseries.stdout"), "--table", "timeseries")
    assert result.exit_code == 0 and "offset_ms" in result.output
    result = invoke(str(DATA / "hdr_op.stdout"), "--table", "summary")
    assert result.exit_code == 0 and "TOTAL_GCS_G1_Young_Generation" in result.output
    bad = invoke(str(DATA / "hdr_op.stdout"), "--table", "gc")
    assert bad.exit_code == 2 and bad.output.strip().count("\n") == 0 and "summary" in bad.output


def test_default_table_is_operations():
    a = invoke(str(DATA / "hdr_both.stdout"), "-f", "csv")
    b = invoke(str(DATA / "hdr_both.stdout"), "-f", "csv", "--table", "operations")
    assert a.output == b.output and "average_latency_us" in a.output.splitlines()[0]
