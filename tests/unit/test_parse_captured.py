"""The parser against real YCSB 0.17.0 outputs captured in tests/data/ycsb (see its README.md)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ycsb_runner.parse import (
    hdr_histograms,
    hdr_intervals,
    hdr_percentiles,
    parse_export,
    parse_output,
    parse_raw_file,
)

DATA = Path(__file__).parents[1] / "data" / "ycsb"
MANIFEST = {row["name"]: int(row["exit_code"]) for row in csv.DictReader((DATA / "manifest.csv").open())}
BINDING = sorted(p.stem for p in DATA.glob("binding-*.stdout"))
ALL = sorted(MANIFEST) + BINDING
SECTION_LINE = re.compile(r"^\[([^\[\]]+)\], ", re.M)
STATUS_LINE = re.compile(r"^.*?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} \d+ sec: \d+ operations; ", re.M)
_CACHE: dict[str, object] = {}


def text(name: str, ext: str) -> str:
    path = DATA / f"{name}.{ext}"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_of(name: str):
    if name not in _CACHE:
        kwargs = {}
        if name.startswith("export_"):
            kwargs["export"] = DATA / f"{name}.json"
        _CACHE[name] = parse_output(
            text(name, "stdout"), text(name, "stderr"), exit_code=MANIFEST.get(name, 0), **kwargs
        )
    return _CACHE[name]


def raw_sections(name: str) -> set[str]:
    found = set(SECTION_LINE.findall(text(name, "stdout")))
    if name.startswith("export_"):
        data = (
            json.loads((DATA / "export_jsonarray.json").read_text()) if name == "export_jsonarray" else None
        )
        if data is None:
            found |= set(re.findall(r'"metric" : "([^"]+)"', (DATA / f"{name}.json").read_text()))
        else:
            found |= {obj["metric"] for obj in data}
    return found


def base_ops(run) -> pd.DataFrame:
    ops = run.operations
    return ops[~ops["intended"].astype(bool)]


@pytest.mark.parametrize("name", ALL)
def test_no_section_lost(name):
    run = run_of(name)
    expected = raw_sections(name)
    parsed = set(run.summary["section"]) | set(run.histogram["section"]) | set(run.timeseries["section"])
    assert parsed == expected
    assert run.sections == expected


@pytest.mark.parametrize("name", ALL)
def test_operations_equal_return_counts(name):
    """Operations of an op plus its -FAILED/-<STATUS> sections equal the Return= counts under the op."""
    ops = base_ops(run_of(name))
    with_returns = ops[ops["returns"].notna()]
    for _, row in with_returns.iterrows():
        family = ops[(ops["operation"] == row["operation"]) & (ops["part"] == row["part"])]
        assert family["operations"].sum() == row["returns"], row["section"]
        assert row["returns"] == sum(
            row[c] for c in ops.columns if c.startswith("return_") and row[c] == row[c]
        )


# The captures whose stderr has status lines (chosen without parsing: collection stays cheap in every
# worker, and a parser that lost a capture's status lines fails here instead of dropping the case).
@pytest.mark.parametrize("name", [n for n in ALL if STATUS_LINE.search(text(n, "stderr"))])
def test_status_updates_all_found_and_counts_add_up(name):
    run = run_of(name)
    stderr = text(name, "stderr")
    assert run.status["status_index"].nunique() == len(STATUS_LINE.findall(stderr))
    assert (run.status["source"] == "stderr").all()
    # Group values are per interval, so Count over all updates adds up to the summary's Operations.
    if run.summary.empty or run.status["count"].isna().all():  # histogram/timeseries groups carry no Count
        return
    per_section = run.status.groupby("section")["count"].sum(min_count=1)
    ops = run.operations.set_index("section")["operations"]
    checked = [s for s in per_section.index if s in ops.index and per_section[s] == per_section[s]]
    assert checked, "no status groups to check"
    for section in checked:
        assert per_section[section] == ops[section], section


@pytest.mark.parametrize("name", ["workload_f", "workload_e"])
def test_rmw_and_scan_present(name):
    ops = run_of(name).operations
    wanted = "READ-MODIFY-WRITE" if name == "workload_f" else "SCAN"
    row = ops[(ops["section"] == wanted)]
    assert len(row) == 1 and row["operations"].iloc[0] > 0
    if name == "workload_f":
        assert row["returns"].isna().all()  # RMW has no Return= lines
        intended = ops[ops["section"] == "Intended-READ-MODIFY-WRITE"]
        assert intended["operations"].iloc[0] == row["operations"].iloc[0]
        assert (intended["kind"] == "intended").all()


@pytest.mark.parametrize(
    "name", ["hdr_both", "histogram_both", "timeseries_both", "workload_f", "flaky_tracked"]
)
def test_interval_both_has_matching_intended_sections(name):
    ops = run_of(name).operations.set_index("section")
    intended = [s for s in ops.index if s.startswith("Intended-")]
    assert intended
    for section in intended:
        assert ops.loc[section, "operations"] == ops.loc[section[len("Intended-") :], "operations"]
        assert ops.loc[section, "intended"]


def test_failure_sections_are_classified():
    ops = run_of("flaky_tracked").operations.set_index("section")
    assert ops.loc["READ-NOT_FOUND", ["operation", "kind", "outcome"]].tolist() == [
        "READ",
        "status",
        "NOT_FOUND",
    ]
    assert ops.loc["UPDATE-FAILED", ["operation", "kind", "outcome"]].tolist() == [
        "UPDATE",
        "failed",
        "FAILED",
    ]
    assert ops.loc["Intended-READ-NOT_FOUND", ["kind", "outcome"]].tolist() == ["intended", "NOT_FOUND"]
    read = ops.loc["READ"]
    assert read["errors"] == read["return_NOT_FOUND"]
    assert read["error_rate"] == pytest.approx(
        read["return_NOT_FOUND"] / (read["return_OK"] + read["return_NOT_FOUND"])
    )


def test_empty_histograms_are_no_data_not_huge_numbers():
    run = run_of("flaky_all_errors")
    read = run.operations.set_index("section").loc["READ"]
    assert read["operations"] == 0
    assert np.isnan(
        [read["min_latency_us"], read["max_latency_us"], read["average_latency_us"], read["p95"]]
    ).all()
    assert read["error_rate"] == 1.0
    raw_min = run.summary[(run.summary["section"] == "READ") & (run.summary["metric"] == "MinLatency(us)")]
    assert raw_min["value_str"].iloc[0] == "9223372036854775807" and np.isnan(raw_min["value"].iloc[0])
    numeric = run.operations.select_dtypes("number").to_numpy(dtype=float)
    assert np.nanmax(numeric) < 1e12
    assert run.completion.status == "failed"


def test_status_no_data_groups():
    status = run_of("flaky").status
    empty = status[status["count"] == 0]
    assert not empty.empty
    assert empty[["max", "min", "avg", "p90", "p99", "p99.9", "p99.99"]].isna().all().all()


def test_custom_percentiles_and_ordinals():
    ops = run_of("hdr_percentiles").operations
    for col in ("p1", "p2", "p3", "p50", "p90", "p99.9", "p99.99"):
        assert col in ops.columns
    assert "p95" not in ops.columns
    summary = run_of("hdr_percentiles").summary
    labels = dict(zip(summary["metric"], summary["percentile"], strict=True))
    assert labels["1stPercentileLatency(us)"] == 1
    assert labels["2ndPercentileLatency(us)"] == 2
    assert labels["3rdPercentileLatency(us)"] == 3
    assert labels["99.9PercentileLatency(us)"] == 99.9
    read = ops.set_index("section").loc["READ"]
    assert (
        read["p1"] <= read["p50"] <= read["p90"] <= read["p99.9"] <= read["p99.99"] <= read["max_latency_us"]
    )


def test_histogram_type_buckets_and_variance():
    run = run_of("histogram_verbose")
    assert run.measurement_type == "histogram"
    ops = run.operations.set_index("section")
    assert ops["latency_variance_us"].notna().all()
    counts = run.histogram.groupby("section")["count"].sum()
    for section, total in counts.items():
        assert total == ops.loc[section, "operations"]
    overflow = run.histogram[run.histogram["bucket"].str.startswith(">")]
    assert (overflow["upper_us"] == np.inf).all() and (overflow["lower_us"] == 100_000).all()
    assert set(run.histogram["source"]) == {"histogram"}


def test_hdr_verbose_values():
    run = run_of("hdr_verbose")
    assert set(run.histogram["source"]) == {"hdrhistogram"}
    counts = run.histogram.groupby("section")["count"].sum()
    ops = run.operations.set_index("section")
    for section, total in counts.items():
        assert total == ops.loc[section, "operations"]
        values = run.histogram.loc[run.histogram["section"] == section, "upper_us"]
        assert values.max() == ops.loc[section, "max_latency_us"]


def test_timeseries_buckets_and_stdout_status_copy():
    run = run_of("timeseries_both")
    assert run.measurement_type == "timeseries"
    assert (run.timeseries["offset_ms"] % 500 == 0).all()
    assert {"READ", "Intended-READ"} <= set(run.timeseries["section"])
    assert any("stdout" in note for note in run.notes)
    # The stdout copy alone (stderr not captured) gives the same status frame.
    alone = parse_output(text("timeseries_both", "stdout"))
    cols = ["status_index", "elapsed_s", "total_ops", "section", "avg"]
    pd.testing.assert_frame_equal(alone.status[cols], run.status[cols])
    assert (alone.status["source"] == "stdout").all()


def test_combined_capture_of_timeseries_run_drops_doubled_status_lines():
    lines = text("timeseries", "stderr").splitlines()
    status = [ln for ln in lines if STATUS_LINE.match(ln)]
    doubled = [x for ln in status for x in (ln, ln)]
    summary = [ln for ln in text("timeseries", "stdout").splitlines() if ln.startswith("[")]
    run = parse_output("\n".join(lines[:5] + doubled + summary))
    assert run.status["status_index"].nunique() == len(status)
    assert any("duplicate" in note for note in run.notes)


def test_two_line_status_updates():
    for name, other, marker in (("hdr_histogram", "bucket", "[Bucket"), ("hdr_raw", "raw", " count: ")):
        status = run_of(name).status
        per_update = status.groupby("status_index")["part"].apply(set)
        assert all({"hdr", other} <= parts for parts in per_update), name
        assert (status["part"] == other).sum() == text(name, "stderr").count(marker)
        assert status.loc[status["part"] == other, "avg"].notna().all()
    # Raw groups carry per-interval counts too, adding up to the raw sections' totals.
    status = run_of("hdr_raw").status
    raw_counts = status[status["part"] == "raw"].groupby("section")["count"].sum()
    ops = run_of("hdr_raw").operations.set_index("section")["operations"]
    assert {s: ops[s] for s in raw_counts.index} == raw_counts.to_dict()


def test_locale_de_status_numbers():
    status = run_of("locale_de").status
    stderr = text("locale_de", "stderr")
    commas = re.findall(r"Avg=(\d+),(\d+)", stderr)
    assert commas
    expected = {float(f"{a}.{b}") for a, b in commas}
    assert expected <= set(status["avg"].dropna())
    assert 333.33 in set(status["current_ops_per_s"])
    assert np.isinf(status["current_ops_per_s"].iloc[0])  # "∞ current ops/sec"


def test_label_prefix():
    status = run_of("label").status
    assert set(status["label"]) == {"run-A:"}
    assert status["timestamp"].notna().all()


def test_eta_variants():
    assert set(run_of("stuck").status["eta_s"].dropna()) >= {0.0, np.inf}
    assert 60.0 in set(run_of("maxexec").status["eta_s"])  # "1 minute"
    hdr = run_of("hdr_op").status.drop_duplicates("status_index")
    assert hdr["eta_s"].iloc[1] == 3.0 and np.isnan(hdr["eta_s"].iloc[-1])  # final line has no ETA


def test_raw_points_match_summary_exactly():
    for name in ("raw_stdout", "hdr_raw"):
        run = run_of(name)
        ops = run.operations.set_index("section")
        for section, group in run.raw.groupby("section", observed=True):
            lat = np.sort(group["latency_us"].to_numpy())
            n = len(lat)
            row = ops.loc[section]
            assert n == row["operations"]
            assert lat[0] == row["min_latency_us"] and lat[-1] == row["max_latency_us"]
            assert lat.mean() == pytest.approx(row["average_latency_us"])
            for p in (1, 5, 50, 90, 95, 99, 99.9, 99.99):
                assert lat[min(int(n * p / 100), n - 1)] == row[f"p{p:g}"], (section, p)
        assert (run.raw["timestamp_ms"] > 1_600_000_000_000).all()


def test_raw_file_and_no_summary():
    frame = parse_raw_file(DATA / "raw_file.raw")
    ops = run_of("raw_file").operations.set_index("section")
    sizes = frame.groupby("section", observed=True).size()
    assert {s: int(n) for s, n in sizes.items()} == {s: int(ops.loc[s, "operations"]) for s in sizes.index}
    assert run_of("raw_file").raw.empty
    nosum = run_of("raw_nosummary")
    assert not nosum.raw.empty
    ops = nosum.operations.set_index("section")
    assert ops["average_latency_us"].isna().all()
    sizes = nosum.raw.groupby("section", observed=True).size()
    for section, n in sizes.items():
        assert n == ops.loc[section, "operations"]


def test_json_exports_match_their_runs():
    for name in ("export_json", "export_jsonarray"):
        assert text(name, "stdout") == ""
        from_file = parse_export(DATA / f"{name}.json")
        from_text = parse_export((DATA / f"{name}.json").read_text())
        pd.testing.assert_frame_equal(from_file.operations, from_text.operations)
        assert from_file.completion.status == "completed"
        assert from_file.overall["runtime_ms"] > 0
        # Throughput * runtime is the op count YCSB ran.
        assert from_file.overall["ops_done"] == 2000
        pd.testing.assert_frame_equal(run_of(name).operations, from_file.operations)
        # Without the export file the streams alone have no summary: YCSB wrote it elsewhere.
        alone = parse_output(text(name, "stdout"), text(name, "stderr"))
        assert alone.completion.status == "truncated"


def test_hdr_logs_reproduce_the_summary_exactly():
    run = run_of("hdr_fileoutput")
    logs = DATA / "hdr_fileoutput"
    table = hdr_percentiles(logs, [95, 99]).set_index("section")
    ops = run.operations.set_index("section")
    assert set(table.index) == set(ops.index)
    for section in table.index:
        row, mine = ops.loc[section], table.loc[section]
        assert mine["count"] == row["operations"]
        for col in ("p95", "p99"):
            assert mine[col] == row[col], (section, col)
        assert mine["min"] == row["min_latency_us"] and mine["max"] == row["max_latency_us"]
        assert mine["mean"] == pytest.approx(row["average_latency_us"], rel=1e-12)
    hists = hdr_histograms(logs)
    assert hists["READ"].get_total_count() == ops.loc["READ", "operations"]
    assert hists["READ"].get_value_at_percentile(99) == ops.loc["READ", "p99"]


def test_hdr_window_and_intervals():
    logs = DATA / "hdr_fileoutput"
    everything = hdr_percentiles(logs, [50]).set_index("section")
    later = hdr_percentiles(logs, [50], skip_first_s=1.5).set_index("section")
    assert 0 < later.loc["READ", "count"] < everything.loc["READ", "count"]
    assert later.loc["READ", "window_start_s"] >= 1.5
    intervals = hdr_intervals(logs / "READ.hdr")
    assert intervals["count"].sum() == everything.loc["READ", "count"]
    # Each status tick logged one interval: the counts are those of the READ status groups.
    status = run_of("hdr_fileoutput").status
    ticks = status[status["section"] == "READ"]["count"].tolist()
    assert intervals["count"].tolist()[: len(ticks)] == ticks
    inside = intervals[intervals["start_s"] >= 1.5]["count"].sum()
    assert inside == later.loc["READ", "count"]
    assert parse_output(text("hdr_fileoutput", "stdout"), hdr_files=logs).hdr["count"].sum() == (
        hdr_intervals(logs)["count"].sum()
    )


def test_statuses_of_broken_runs():
    nonexistent = run_of("nonexistent_db").completion
    assert nonexistent.status == "failed"
    assert any("throughput is 0" in r for r in nonexistent.reasons)
    assert any("ClassNotFoundException" in r for r in nonexistent.reasons)
    assert run_of("zero_ops").completion.status == "failed"
    killed = run_of("killed").completion
    assert killed.status == "truncated" and any("exit code 137" in r for r in killed.reasons)
    crash = run_of("hdr_fileoutput_java17").completion
    assert crash.status == "truncated"
    assert any("no operation sections" in r for r in crash.reasons)
    assert any("DatatypeConverter" in r for r in crash.reasons)
    assert any(r == "exit code 1" for r in crash.reasons)
    usage = run_of("usage_error").completion
    assert usage.status == "failed" and any("Unknown option" in r for r in usage.reasons)
    bad = run_of("bad_measurementtype").completion
    assert bad.status == "failed" and any("IllegalArgumentException" in r for r in bad.reasons)
    stuck = run_of("stuck").completion
    assert stuck.status == "failed" and any("Still waiting" in r for r in stuck.reasons)
    flaky = run_of("flaky").completion
    assert flaky.status == "failed"
    assert any(r.startswith("error rate") and "failed: READ " in r for r in flaky.reasons)


def test_status_thresholds():
    stdout, stderr = text("flaky", "stdout"), text("flaky", "stderr")
    assert parse_output(stdout, stderr, max_error_rate=0.2).completion.status == "completed"
    ok = parse_output(text("hdr_op", "stdout"), text("hdr_op", "stderr"), exit_code=0, expected_ops=3000)
    assert ok.completion.status == "completed" and ok.overall["ops_done"] == 3000
    short = parse_output(text("hdr_op", "stdout"), text("hdr_op", "stderr"), expected_ops=10_000)
    assert short.completion.status == "failed" and "only 3000 of 10000" in short.completion.reasons[0]
    rc = parse_output(text("hdr_op", "stdout"), text("hdr_op", "stderr"), exit_code=3)
    assert rc.completion.reasons == ["exit code 3"]


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in ALL
        if MANIFEST.get(n, 0) == 0 and not n.startswith(("export_", "bad_", "usage", "zero", "non"))
    ],
)
def test_healthy_captures_are_consistent(name):
    run = run_of(name)
    if name in {"flaky", "flaky_tracked", "flaky_all_errors", "stuck"}:
        assert run.completion.status == "failed"
    else:
        assert run.completion.status == "completed", run.completion.reasons
    assert run.overall["runtime_ms"] > 0
    assert run.ycsb_version == "0.17.0"
    assert run.measurement_type is not None
    assert run.command_line and "-db" in run.command_line


@pytest.mark.parametrize("name", ALL)
def test_name_columns_keep_their_types(name):
    """The classification columns of the summary-derived frames: `intended` is bool, the others hold
    Python objects (text or None), whatever the input."""
    run = run_of(name)
    for frame in (run.summary, run.operations, run.histogram, run.timeseries):
        if frame.empty:
            continue
        assert frame["intended"].dtype == bool, name
        for column in ("operation", "kind", "outcome", "part"):
            assert frame[column].dtype == object, (name, column)
