"""Output of YCSB releases before 0.6 (real captures, see tests/data/ycsb/README.md for where each is from).

`pre06_ycsb014_basicdb.out`: YCSB 0.1.4 core, BasicDB, workload A, `histogram` (the default then): ms
percentiles, no LatencyVariance, `Return=0`, 1000 ms buckets + `>1000`. `pre06_ycsb01_hbase_errors.out`:
YCSB 0.1 against HBase for 30 min, every READ returned `-1`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ycsb_runner.parse import parse_output

DATA = Path(__file__).parents[1] / "data" / "ycsb"


def capture(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def printed(text: str, section: str, metric: str) -> float:
    m = re.search(rf"^\[{re.escape(section)}\], {re.escape(metric)}, (\S+)$", text, re.M)
    assert m, (section, metric)
    return float(m.group(1))


@pytest.mark.parametrize("name", ["pre06_ycsb014_basicdb.out", "pre06_ycsb01_hbase_errors.out"])
def test_histogram_without_variance_is_a_histogram_not_a_time_series(name):
    text = capture(name)
    run = parse_output(text)
    assert run.measurement_type == "histogram"
    assert run.timeseries.empty
    hist = run.histogram
    assert set(hist["source"]) == {"histogram"}
    for section in ("READ", "UPDATE", "CLEANUP"):
        rows = hist[hist["section"] == section]
        assert len(rows) == 1001  # buckets 0..999 and >1000
        assert rows["count"].sum() == printed(text, section, "Operations")
        assert np.isinf(rows["upper_us"].iloc[-1]) and rows["lower_us"].iloc[1] == 1000.0


@pytest.mark.parametrize("name", ["pre06_ycsb014_basicdb.out", "pre06_ycsb01_hbase_errors.out"])
def test_ms_percentiles_are_converted_to_us_and_the_unit_recorded(name):
    text = capture(name)
    run = parse_output(text)
    ops = run.operations.set_index("section")
    for section in ("READ", "UPDATE", "CLEANUP"):
        assert ops.loc[section, "p95"] == 1000 * printed(text, section, "95thPercentileLatency(ms)")
        assert ops.loc[section, "p99"] == 1000 * printed(text, section, "99thPercentileLatency(ms)")
        assert ops.loc[section, "converted_from_ms"] == "p95 p99"
        # printed in us already: untouched
        assert ops.loc[section, "average_latency_us"] == printed(text, section, "AverageLatency(us)")
        assert ops.loc[section, "max_latency_us"] == printed(text, section, "MaxLatency(us)")
    assert any("converted to us" in n and "95thPercentileLatency(ms)" in n for n in run.notes)
    # the long-form summary keeps what YCSB printed
    row = run.summary.query("section == 'READ' and metric == '95thPercentileLatency(ms)'")
    assert row["value"].iloc[0] == printed(text, "READ", "95thPercentileLatency(ms)")


def test_numeric_return_codes():
    ok = parse_output(capture("pre06_ycsb014_basicdb.out"))
    assert ok.verdict.status == "completed", ok.verdict.reasons
    assert ok.overall["runtime_ms"] == 80.0 and ok.overall["ops_done"] == 1000
    ops = ok.operations.set_index("section")
    assert ops.loc["READ", "return_0"] == 469 and ops.loc["READ", "errors"] == 0

    bad = parse_output(capture("pre06_ycsb01_hbase_errors.out"))
    ops = bad.operations.set_index("section")
    assert ops.loc["READ", "errors"] == ops.loc["READ", "returns"] == 2465984
    assert ops.loc["UPDATE", "errors"] == 0 and ops.loc["UPDATE", "return_0"] == 2468054
    assert bad.verdict.status == "failed"
    assert bad.verdict.reasons == ["READ: error rate 100% (2465984 of 2465984) exceeds 1%"]


def test_overall_figures_of_old_captures():
    run = parse_output(capture("pre06_ycsb01_hbase_errors.out"))
    assert run.overall["runtime_ms"] == 1800413.0
    assert run.overall["throughput"] == pytest.approx(2740.503428935472)
    assert run.ycsb_version == "0.1"


# No real capture of the earliest layout was found (see the README): this is the documented shape, with
# numbers made up here: `[OVERALL],RunTime(ms)` without a space, every latency in ms.
EARLIEST = """YCSB Client 0.1
Command line: -db com.yahoo.ycsb.BasicDB -P workloads/workloada -t
[OVERALL],RunTime(ms), 20000
[OVERALL],Throughput(ops/sec), 50.0
[UPDATE], Operations, 600
[UPDATE], AverageLatency(ms), 0.25
[UPDATE], MinLatency(ms), 0
[UPDATE], MaxLatency(ms), 3
[UPDATE], 95thPercentileLatency(ms), 1
[UPDATE], 99thPercentileLatency(ms), 2
[UPDATE], Return=0, 600
[UPDATE], 0, 580
[UPDATE], 1, 15
[UPDATE], 2, 4
[UPDATE], 3, 1
[UPDATE], >4, 0
[READ], Operations, 400
[READ], AverageLatency(ms), 0.5
[READ], MinLatency(ms), 0
[READ], MaxLatency(ms), 2
[READ], 95thPercentileLatency(ms), 1
[READ], 99thPercentileLatency(ms), 2
[READ], Return=0, 398
[READ], Return=-1, 2
[READ], 0, 300
[READ], 1, 98
[READ], 2, 2
[READ], 3, 0
[READ], >4, 0
"""


def test_earliest_layout_no_space_and_all_ms():
    run = parse_output(EARLIEST)
    assert run.overall["runtime_ms"] == 20000 and run.overall["throughput"] == 50.0
    assert run.verdict.status == "completed", run.verdict.reasons
    assert run.measurement_type == "histogram"
    ops = run.operations.set_index("section")
    assert ops.loc["UPDATE", "average_latency_us"] == 250.0
    assert ops.loc["READ", "max_latency_us"] == 2000.0
    assert ops.loc["READ", "p99"] == 2000.0
    assert ops.loc["READ", "errors"] == 2 and ops.loc["READ", "returns"] == 400
    assert ops.loc["UPDATE", "converted_from_ms"] == (
        "average_latency_us min_latency_us max_latency_us p95 p99"
    )
    assert len(run.histogram) == 10
