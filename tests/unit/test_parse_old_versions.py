"""Output of YCSB releases before 0.6, derived from this folder's own real capture (see
tests/data/ycsb/README.md: no old release can be run here and nothing fetched is committed).

``to_pre06`` rewrites ``histogram_verbose.stdout`` (YCSB 0.17.0, ``histogram``, buckets 0..99 and ``>100``)
into the layout 0.1.x printed: no LatencyVariance, 95th/99th percentiles in whole ms, ``Return=0`` /
``Return=-1`` instead of ``Return=OK`` / ``Return=ERROR``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ycsb_runner.parse import parse_output

DATA = Path(__file__).parents[1] / "data" / "ycsb"
SOURCE = DATA / "histogram_verbose.stdout"


def to_pre06(text: str, *, failed: str | None = None) -> str:
    """The 0.17.0 capture in the pre-0.6 layout; ``failed`` names a section whose every op returned -1."""
    out = ["YCSB Client 0.1"]
    for line in text.splitlines():
        if "LatencyVariance(us)" in line:
            continue
        m = re.match(r"^\[([^\]]+)\], (9[59])thPercentileLatency\(us\), (\S+)$", line)
        if m:
            line = f"[{m.group(1)}], {m.group(2)}thPercentileLatency(ms), {int(float(m.group(3)) // 1000)}"
        m = re.match(r"^\[([^\]]+)\], Return=OK, (\d+)$", line)
        if m:
            line = f"[{m.group(1)}], Return={'-1' if m.group(1) == failed else '0'}, {m.group(2)}"
        out.append(line)
    return "\n".join(out) + "\n"


def printed(text: str, section: str, metric: str) -> float:
    m = re.search(rf"^\[{re.escape(section)}\], {re.escape(metric)}, (\S+)$", text, re.M)
    assert m, (section, metric)
    return float(m.group(1))


def test_histogram_without_variance_is_a_histogram_not_a_time_series():
    text = to_pre06(SOURCE.read_text())
    assert "LatencyVariance" not in text and "Return=0" in text
    run = parse_output(text)
    assert run.measurement_type == "histogram"
    assert run.timeseries.empty
    hist = run.histogram
    assert set(hist["source"]) == {"histogram"}
    for section in ("READ", "UPDATE", "CLEANUP"):
        rows = hist[hist["section"] == section]
        assert len(rows) == 101  # buckets 0..99 and >100
        assert rows["count"].sum() == printed(text, section, "Operations")
        assert np.isinf(rows["upper_us"].iloc[-1]) and rows["lower_us"].iloc[1] == 1000.0


def test_ms_percentiles_are_converted_to_us_and_the_unit_recorded():
    text = to_pre06(SOURCE.read_text())
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
    source = SOURCE.read_text()
    ok = parse_output(to_pre06(source))
    assert ok.completion.status == "completed", ok.completion.reasons
    ops = ok.operations.set_index("section")
    reads = printed(source, "READ", "Return=OK")
    assert ops.loc["READ", "return_0"] == reads and ops.loc["READ", "errors"] == 0

    bad = parse_output(to_pre06(source, failed="READ"))
    ops = bad.operations.set_index("section")
    assert ops.loc["READ", "errors"] == ops.loc["READ", "returns"] == reads
    assert ops.loc["UPDATE", "errors"] == 0 and ops.loc["UPDATE", "return_0"] == printed(
        source, "UPDATE", "Return=OK"
    )
    assert bad.completion.status == "failed"
    returns = ops["returns"].sum()
    assert bad.completion.reasons == [
        f"error rate {100 * reads / returns:.3g}% ({reads:.0f} of {returns:.0f} operations; "
        f"failed: READ {reads:.0f} of {reads:.0f}) exceeds 1%"
    ]


def test_overall_figures_of_the_old_layout():
    source = SOURCE.read_text()
    run = parse_output(to_pre06(source))
    assert run.overall["runtime_ms"] == printed(source, "OVERALL", "RunTime(ms)")
    assert run.overall["throughput"] == pytest.approx(printed(source, "OVERALL", "Throughput(ops/sec)"))
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
    assert run.completion.status == "completed", run.completion.reasons
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
