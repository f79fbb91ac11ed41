"""Unit tests of the YCSB output parser: names, numbers, status-line variants, noise, exports, .hdr logs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram

from ycsb_runner.errors import UserError
from ycsb_runner.parse import ParseError, parse_export, parse_output, parse_raw_file, read_hdr_log
from ycsb_runner.parse.hdr import decode_histogram
from ycsb_runner.parse.names import classify
from ycsb_runner.parse.numbers import floats_from_text

DATA = Path(__file__).parents[1] / "data" / "ycsb"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("READ", ("READ", "op", False, "", "")),
        ("READ-FAILED", ("READ", "failed", False, "FAILED", "")),
        ("READ-NOT_FOUND", ("READ", "status", False, "NOT_FOUND", "")),
        ("READ-MODIFY-WRITE", ("READ-MODIFY-WRITE", "op", False, "", "")),
        ("Intended-READ-MODIFY-WRITE", ("READ-MODIFY-WRITE", "intended", True, "", "")),
        ("Intended-UPDATE-FAILED", ("UPDATE", "intended", True, "FAILED", "")),
        ("HdrREAD", ("READ", "hdr", False, "", "hdr")),
        ("BucketINSERT", ("INSERT", "bucket", False, "", "bucket")),
        ("RawIntended-SCAN", ("SCAN", "raw", True, "", "raw")),
        ("TOTAL_GC_TIME_%_G1_Young_Generation", ("G1_Young_Generation", "gc", False, "", "")),
        ("TOTAL_GCS_PS_Scavenge", ("PS_Scavenge", "gc", False, "", "")),
        ("TOTAL_GC_TIME", ("ALL", "gc", False, "", "")),
        ("OVERALL", ("OVERALL", "overall", False, "", "")),
        ("USED_MEM_MB", ("USED_MEM_MB", "jvm", False, "", "")),
        ("MAX_SYS_LOAD_AVG", ("MAX_SYS_LOAD_AVG", "jvm", False, "", "")),
        ("VERIFY", ("VERIFY", "op", False, "", "")),
    ],
)
def test_classify(section, expected):
    got = classify(section)
    assert (got["operation"], got["kind"], got["intended"], got["outcome"], got["part"]) == expected


def test_classify_custom_status_and_prefix_without_pair():
    assert classify("MYOP-WEIRD_STATUS", with_returns=frozenset({"MYOP"}))["outcome"] == "WEIRD_STATUS"
    assert classify("MYOP-WEIRD_STATUS")["outcome"] == ""
    # "Hdr"-prefixed custom op names only count as the hdr part when paired or a known op follows.
    assert classify("HdrOFFICE")["part"] == ""
    assert classify("HdrOFFICE", frozenset({"HdrOFFICE", "BucketOFFICE"}))["part"] == "hdr"


def test_floats_from_text():
    values = [
        "1",
        "",
        "NaN",
        "\u221e",
        "1.0E7",
        "9223372036854775807",
        "junk",
        "-Infinity",
        "4255.31914893617",
        "\ufffd",
    ]
    got = floats_from_text(values)
    assert got[0] == 1 and np.isnan(got[1]) and np.isnan(got[2]) and got[3] == np.inf
    assert got[4] == 1e7 and np.isnan(got[5]) and np.isnan(got[6]) and got[7] == -np.inf
    assert got[8] == 4255.31914893617 and np.isnan(got[9])
    assert floats_from_text(["1234,57", "3"], decimal_comma=True).tolist() == [1234.57, 3.0]


STATUS_HEAD = "2024-03-01 10:00:0{i}:123 {i} sec: {ops} operations; "


@pytest.mark.parametrize(
    ("eta", "seconds"),
    [
        ("0 second ", 0),
        ("7 second ", 7),
        ("58 seconds ", 58),
        ("1 minute ", 60),
        ("4 minutes ", 240),
        ("2 hours 3 minutes ", 7380),
        ("1 day 1 hour ", 90000),
        ("106751991167300 days 15 hours ", np.inf),
    ],
)
def test_eta_variants(eta, seconds):
    line = (
        STATUS_HEAD.format(i=1, ops=10)
        + f"5 current ops/sec; est completion in {eta}[READ AverageLatency(us)=5]"
    )
    status = parse_output("", line + "\n").status
    assert status["eta_s"].iloc[0] == seconds
    assert status["section"].iloc[0] == "READ" and status["avg"].iloc[0] == 5


def test_status_line_forms():
    lines = [
        "Starting test.",
        "mylabel " + STATUS_HEAD.format(i=0, ops=0) + "est completion in 0 second ",
        STATUS_HEAD.format(i=1, ops=1200) + "1234,57 current ops/sec; est completion in 9 second "
        "[READ: Count=479, Max=13207, Min=83, Avg=146,54, 90=153, 99=298, 99.9=13207, 99.99=13207] "
        "[UPDATE: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, 99.99=0] ",
        STATUS_HEAD.format(i=2, ops=2400) + "\u221e current ops/sec; [INSERT AverageLatency(us)=\ufffd]  ",
        STATUS_HEAD.format(i=3, ops=2500)
        + "100 current ops/sec; READ count: 12, average latency(us): 123,45 ",
        # Another version's layout (an extra field): parsed key by key.
        STATUS_HEAD.format(i=4, ops=2600) + "[SCAN: Count=5, Max=10, Min=1, Avg=5.5, 90=9, 99=10, 99.9=10, "
        "99.99=10, 99.999=10]",
    ]
    status = parse_output("", "\n".join(lines)).status
    assert status["status_index"].tolist() == [0, 1, 1, 2, 3, 4]
    assert status["label"].tolist()[0] == "mylabel "
    first = status.iloc[0]
    assert np.isnan(first["current_ops_per_s"]) and pd.isna(first["section"])
    read = status[status["section"] == "READ"].iloc[0]
    assert read["current_ops_per_s"] == 1234.57
    assert (read["count"], read["max"], read["min"], read["avg"], read["p99.99"]) == (
        479,
        13207,
        83,
        146.54,
        13207,
    )
    upd = status[status["section"] == "UPDATE"].iloc[0]
    assert upd["count"] == 0 and upd[["max", "min", "avg", "p90"]].isna().all()
    ins = status[status["section"] == "INSERT"].iloc[0]
    assert ins["current_ops_per_s"] == np.inf and np.isnan(ins["avg"])
    raw = status[status["status_index"] == 3].iloc[0]
    assert (raw["section"], raw["count"], raw["avg"]) == ("READ", 12, 123.45)
    scan = status[status["section"] == "SCAN"].iloc[0]
    assert (scan["count"], scan["avg"], scan["p99.99"]) == (5, 5.5, 10)
    assert status["timestamp"].iloc[1] == pd.Timestamp("2024-03-01 10:00:01.123")


def test_two_in_one_status_with_an_empty_bucket_half():
    text = (
        STATUS_HEAD.format(i=1, ops=5)
        + "[HdrREAD: Count=2, Max=9, Min=1, Avg=5, 90=9, 99=9, 99.9=9, 99.99=9]\n"
        + " [HdrUPDATE: Count=3, Max=8, Min=2, Avg=4, 90=8, 99=8, 99.9=8, 99.99=8]\n"
        + "[BucketUPDATE AverageLatency(us)=4] \n"
        + "Some unrelated line [x]\n"
    )
    status = parse_output("", text).status
    assert status["section"].tolist() == ["HdrREAD", "HdrUPDATE", "BucketUPDATE"]
    assert status["part"].tolist() == ["hdr", "hdr", "bucket"]


def java_double(value: str) -> str:
    """How YCSB <= 0.11 printed every value: Double.toString (``4301.0``, ``1.2345678E7``)."""
    if not re.fullmatch(r"-?\d+", value):
        return value
    number = float(value)
    if abs(number) < 1e7:
        return f"{number:.1f}"
    exp = len(str(int(abs(number)))) - 1
    mantissa = repr(number / 10**exp)
    return f"{mantissa}E{exp}"


def test_old_versions_print_doubles():
    original = read("hdr_op.stdout")
    doubled = "\n".join(
        f"{m.group(1)}, {java_double(m.group(2))}" if (m := re.match(r"^(\[.*\], .*), ([^,]*)$", ln)) else ln
        for ln in original.splitlines()
    )
    assert "Operations, 1" in doubled and ".0\n" in doubled
    assert java_double("12345678") == "1.2345678E7" and java_double("4301") == "4301.0"
    a, b = parse_output(original), parse_output(doubled)
    pd.testing.assert_frame_equal(a.operations, b.operations)
    assert a.overall == b.overall
    assert (
        parse_output("[OVERALL], RunTime(ms), 4301.0\n[READ], Operations, 1.0E7\n")
        .operations["operations"]
        .iloc[0]
        == 1e7
    )


NOISE = [
    '"/usr/lib/jvm/java/bin/java"  -classpath /opt/ycsb/conf:/opt/ycsb/lib/core-0.17.0.jar '
    "site.ycsb.Client -t "
    "-db site.ycsb.db.MongoDbClient -P workloads/workloada",
    "mongo client connection created with mongodb://user:s3cret@db.example:27017/ycsb?w=1",
    "12:00:01.234 [main] WARN  org.mongodb.driver.connection - Got socket exception on connection [x]",
    "12:00:01.234 [main] WARN  org.mongodb.driver.connection - Got socket exception on connection [x]",
    "java.lang.IllegalStateException: state should be: open",
    "\tat com.mongodb.assertions.Assertions.isTrue(Assertions.java:70)",
    "\tat site.ycsb.DBWrapper.read(DBWrapper.java:139)",
    "Still waiting for thread Thread-3 to complete. Workload status: true",
    "",
]


def test_noise_between_summary_lines_changes_nothing_but_the_completion():
    clean = read("flaky_tracked.stdout").splitlines()
    noisy = []
    for i, line in enumerate(clean):
        noisy.append(NOISE[i % len(NOISE)])
        noisy.append(line)
    a = parse_output("\n".join(clean) + "\n", read("flaky_tracked.stderr"), max_error_rate=1.0)
    b = parse_output("\n".join(noisy) + "\n", read("flaky_tracked.stderr"), max_error_rate=1.0)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    pd.testing.assert_frame_equal(a.operations, b.operations)
    pd.testing.assert_frame_equal(a.status, b.status)
    assert a.completion.status == "completed"
    assert b.completion.status == "failed"
    assert any("IllegalStateException" in r for r in b.completion.reasons)
    assert any("Still waiting" in r for r in b.completion.reasons)


def test_bytes_invalid_utf8_and_crlf():
    stdout = read("hdr_both.stdout").encode()
    stderr = read("hdr_both.stderr").encode()
    mangled_out = stdout.replace(b"\n", b"\r\n").replace(b"[OVERALL]", b"\xff\xfe\n[OVERALL]", 1)
    mangled_err = b"\xc3\x28 garbage \x00\x01\n" + stderr.replace(b"\n", b"\r\n")
    a, b = parse_output(stdout, stderr), parse_output(mangled_out, mangled_err)
    pd.testing.assert_frame_equal(a.operations, b.operations)
    pd.testing.assert_frame_equal(a.status, b.status)


def test_not_ycsb_output_raises_parse_error():
    for junk in ("", "hello world\n", b"\x00\x01\x02", "[a], b, c\n", "java: command not found\n"):
        with pytest.raises(ParseError) as info:
            parse_output(junk, junk)
        assert isinstance(info.value, UserError)
        assert "\n" not in str(info.value)


def test_secrets_are_masked():
    stderr = (
        "Command line: -t -db site.ycsb.db.MongoDbClient -p mongodb.url=mongodb://admin:hunter2@h:27017/ycsb\n"
        "ERROR: Invalid URL mongodb+srv://admin:hunter2@cluster/ycsb\n"
    )
    run = parse_output("", stderr)
    assert "hunter2" not in run.command_line and "admin:***@" in run.command_line
    assert not any("hunter2" in r for r in run.completion.reasons)
    assert any("admin:***@" in r for r in run.completion.reasons)


def test_export_text_truncated_and_lenient_values():
    text = read("export_json.json")
    cut = text[: text.index('"metric" : "UPDATE"') + 5]
    run = parse_export(cut)
    assert run.completion.status == "truncated"
    assert "READ" in set(run.operations["section"]) and "UPDATE" not in run.sections
    lenient = (
        '[{"metric": "OVERALL", "measurement": "RunTime(ms)", "value": 10},'
        ' {"metric": "OVERALL", "measurement": "Throughput(ops/sec)", "value": 100.0},'
        ' {"metric": "READ", "measurement": "Operations", "value": 1},'
        ' {"metric": "READ", "measurement": "AverageLatency(us)", "value": NaN},'
        ' {"metric": "READ", "measurement": "MinLatency(us)", "value": "Infinity"},'
        ' {"metric": "READ", "measurement": "Return=OK", "value": 1}]'
    )
    run = parse_export(lenient)
    row = run.operations.iloc[0]
    assert np.isnan(row["average_latency_us"]) and row["min_latency_us"] == np.inf and row["return_OK"] == 1
    with pytest.raises(ParseError):
        parse_export('{"a": 1}')
    with pytest.raises(ParseError):
        parse_export(str(DATA / "no-such-export.json"))


def test_raw_file_errors_and_garbage(tmp_path):
    with pytest.raises(ParseError):
        parse_raw_file(DATA / "hdr_op.stdout")
    with pytest.raises(ParseError):
        parse_raw_file(tmp_path / "missing.raw")
    f = tmp_path / "x.raw"
    f.write_text(
        "READ latency raw data: op, timestamp(ms), latency(us)\nREAD,1700000000000,5\nREAD,oops,7\n"
        "READ,1700000000001,9\nREAD,17000\nUPDATE latency raw data: op, timestamp(ms), latency(us)\n"
        "UPDATE,1700000000002,11\n"
    )
    frame = parse_raw_file(f)
    assert frame["latency_us"].tolist() == [5, 9, 11]
    assert frame["section"].tolist() == ["READ", "READ", "UPDATE"]


def test_hdr_decoding_v2_roundtrip_and_bad_logs(tmp_path):
    hist = HdrHistogram(1, 3_600_000_000, 3)
    for value in (1, 5, 5, 999, 12_345, 1_000_000):
        hist.record_value(value)
    layout, counts = decode_histogram(hist.encode().decode())
    assert counts.sum() == 6
    nz = np.flatnonzero(counts)
    assert layout.lowest_values(nz).tolist() == [
        hist.get_lowest_equivalent_value(v) for v in (1, 5, 999, 12_345, 1_000_000)
    ]
    bad = tmp_path / "x.hdr"
    bad.write_text("nothing to see\n")
    with pytest.raises(ParseError):
        read_hdr_log(bad)
    log = read_hdr_log(DATA / "hdr_fileoutput_java17" / "READ.hdr")
    assert log.name == "READ" and log.start_time_s is not None


def test_histogram_type_with_zero_operations_is_no_data():
    stdout = "\n".join(
        [
            "[OVERALL], RunTime(ms), 1000",
            "[OVERALL], Throughput(ops/sec), 5.0",
            "[READ], Operations, 0",
            "[READ], AverageLatency(us), NaN",
            "[READ], LatencyVariance(us), NaN",
            "[READ], MinLatency(us), -1",
            "[READ], MaxLatency(us), -1",
            "[READ], Return=ERROR, 5",
            "[READ-FAILED], Operations, 5",
            "[READ-FAILED], AverageLatency(us), 1200.0",
            "[READ-FAILED], LatencyVariance(us), 4.0",
            "[READ-FAILED], MinLatency(us), 1000",
            "[READ-FAILED], MaxLatency(us), 1400",
            "",
        ]
    )
    run = parse_output(stdout)
    row = run.operations.set_index("section").loc["READ"]
    no_data = ["min_latency_us", "max_latency_us", "average_latency_us", "latency_variance_us"]
    assert row[no_data].isna().all()
    assert run.summary.query("metric == 'MinLatency(us)' and section == 'READ'")["value"].iloc[0] == -1
    assert run.measurement_type == "histogram"
    assert run.completion.status == "failed"
    assert run.completion.reasons == ["error rate 100% (5 of 5 operations; failed: READ 5 of 5) exceeds 1%"]


def test_error_initializing_on_stderr_fails_the_run():
    stdout = read("hdr_op.stdout")
    stderr = read("hdr_op.stderr") + "Error initializing datastore bindings.\n"
    run = parse_output(stdout, stderr)
    assert run.completion.status == "failed"
    assert "Error initializing datastore bindings." in run.completion.reasons[0]
