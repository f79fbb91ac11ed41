"""The parts both step executors share (ycsb_runner.execute.common): status lines, the result frames, the
document-count warning and the storing of a monitor's samples (all of it, or the server's part alone)."""

from __future__ import annotations

import pandas as pd

from ycsb_runner.execute.common import Frames, documents_warning, status_line, store_monitor
from ycsb_runner.runs.model import StepKeys, StepRecord

KEYS = StepKeys(
    run_id="r", step="03-run", phase="run", mix="m", workload="w", threads=2, audit="off", repetition=1
)


def test_status_line_reads_ycsb_status_lines_only() -> None:
    got = status_line("2026-12-01 07:20:55:123 10 sec: 1234 operations; 1,234.5 current ops/sec; [READ: ...]")
    assert got is not None and (got.sec, got.ops, got.cur) == (10, 1234, 1234.5)
    first = status_line("2026-12-01 07:20:45:123 0 sec: 0 operations; est completion in 0 second")
    assert first is not None and (first.sec, first.ops, first.cur) == (0, 0, 0.0)
    assert status_line("[OVERALL], RunTime(ms), 1000") is None


def test_documents_warning() -> None:
    assert documents_warning(300, 300) is None
    assert documents_warning(None, 300) is None  # the count failed: nothing to say
    assert documents_warning(299, 300) == "the collection holds 299 documents after loading 300"


def test_frames_keep_keys_and_always_save_the_three_main_tables() -> None:
    frames = Frames()
    frames.add("summary", KEYS, pd.DataFrame({"section": ["READ"], "operations": [5]}))
    frames.add("summary", KEYS, pd.DataFrame())  # nothing to add
    frames.add("operations", KEYS, None)
    tables = frames.tables()
    assert sorted(tables) == ["operations", "summary", "timeseries"]
    assert len(tables["summary"]) == 1 and tables["summary"].at[0, "run_id"] == "r"
    assert tables["operations"].empty


class _Monitor:
    def results(self) -> dict:
        return {
            "figures": {"server_cpu_pct_avg": 40.0, "client_cpu_pct_avg": 90.0},
            "warnings": ["serverStatus failed twice", "the client host is saturated"],
            "server_series": pd.DataFrame({"t": [1.0e9], "cpu": [40.0]}),
            "client_series": pd.DataFrame({"t": [1.0e9], "cpu": [90.0]}),
        }


def test_store_monitor_all_or_the_servers_part() -> None:
    every, server = StepRecord(keys=KEYS, index=3), StepRecord(keys=KEYS, index=3)
    all_frames, server_frames = Frames(), Frames()
    store_monitor(every, _Monitor(), all_frames)
    store_monitor(server, _Monitor(), server_frames, server_only=True)
    assert set(every.figures) == {"server_cpu_pct_avg", "client_cpu_pct_avg"} and len(every.warnings) == 2
    assert set(server.figures) == {"server_cpu_pct_avg"}
    assert server.warnings == ["serverStatus failed twice"]
    assert {"server_metrics", "client_metrics"} <= set(all_frames.tables())
    assert "server_metrics" in server_frames.tables() and "client_metrics" not in server_frames.tables()
    metrics = all_frames.tables()["server_metrics"]
    assert "t" not in metrics and metrics.at[0, "time"].startswith("2001-09-09T01:46:40")


def test_store_monitor_keeps_the_run_when_the_sampler_fails() -> None:
    class Broken:
        def results(self) -> dict:
            raise RuntimeError("psutil went away")

    record = StepRecord(keys=KEYS, index=3)
    store_monitor(record, Broken(), Frames())
    assert record.warnings == ["metric sampling failed: psutil went away"]


def test_property_lines_escape_keys_and_values() -> None:
    """The extra properties of a client's share (execute.multi) go through render's own escaping."""
    from ycsb_runner.prepare.commandline import property_lines

    text = property_lines({"insertstart": 100, "a=b": "x\ny"})
    assert text == "insertstart=100\na\\=b=x\\ny\n"
    assert property_lines({}) == ""
