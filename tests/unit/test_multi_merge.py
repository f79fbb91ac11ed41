"""Merging clients' results: exact percentiles by adding HDR histograms, for every operation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hdrh.histogram import HdrHistogram

from ycsb_runner.parse import parse_output
from ycsb_runner.parse.errors import ParseError
from ycsb_runner.parse.hdr import hdr_percentiles
from ycsb_runner.parse.merge import (
    ALL_CLIENTS,
    align_logs,
    client_histograms,
    common_window,
    drop_warmup,
    histogram_stats,
    merge_operations,
    merge_overall,
    merged_latencies,
    operations_in,
    read_client_logs,
    union_window,
    window_logs,
)
from ycsb_runner.parse.numbers import percentile_label

DATA = Path(__file__).resolve().parents[1] / "data" / "ycsb"
PCTS = (50.0, 90.0, 95.0, 99.0, 99.9)
OPS = ("READ", "INSERT", "SCAN", "READ-MODIFY-WRITE", "UPDATE-FAILED", "Intended-READ")


def _write_log(path: Path, name: str, start: float, intervals: list[list[int]]) -> None:
    """An interval log as YCSB writes it (one interval per second), payloads encoded by hdrh."""
    lines = [
        f"#[Logging for: {name}]",
        "#[Histogram log format version 1.1]",
        f"#[StartTime: {start:.3f} (seconds since epoch), whenever]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    for i, values in enumerate(intervals):
        h = HdrHistogram(1, 3_600_000_000, 3)
        for v in values:
            h.record_value(int(v))
        lines.append(f"{float(i):.3f},1.000,{max(values, default=0) / 1e6:.3f},{h.encode().decode()}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def three_clients(tmp_path: Path) -> tuple[dict[str, Path], dict[str, list[int]]]:
    """Three clients, one of them ten times slower and with fewer operations; every operation logged."""
    rng = np.random.default_rng(12)
    profiles = {"h1": (6.5, 4000), "h2": (6.6, 3500), "h3": (8.8, 600)}  # log-mean latency, ops per op type
    dirs: dict[str, Path] = {}
    everything: dict[str, list[int]] = {op: [] for op in OPS}
    for client, (mu, n) in profiles.items():
        d = tmp_path / client / "hdr"
        d.mkdir(parents=True)
        for op in OPS:
            values = np.maximum(rng.lognormal(mu, 0.6, n).astype(int), 1).tolist()
            everything[op].extend(values)
            _write_log(d / f"{op}.hdr", op, 1_800_000_000.0, [values[i::5] for i in range(5)])
        dirs[client] = d
    return dirs, everything


def test_merged_percentiles_equal_one_histogram_of_all_values(three_clients) -> None:
    dirs, everything = three_clients
    lat = merged_latencies(client_histograms(read_client_logs(dirs)), PCTS)
    merged = lat[lat["client"] == ALL_CLIENTS].set_index("section")
    assert set(merged.index) == set(OPS)  # INSERT, SCAN, READ-MODIFY-WRITE, failed and intended too
    for op, values in everything.items():
        one = HdrHistogram(1, 3_600_000_000, 3)
        for v in values:
            one.record_value(v)
        row = merged.loc[op]
        assert row["operations"] == len(values) == one.get_total_count()
        assert row["clients"] == 3
        for p in PCTS:
            assert row[f"p{p:g}_us"] == one.get_value_at_percentile(p), (op, p)
        assert row["max_us"] == one.get_max_value() and row["min_us"] == one.get_min_value()
        # and the histogram's value is within its precision (3 digits) of the true percentile of the values
        true_p99 = float(np.percentile(values, 99, method="inverted_cdf"))
        assert abs(row["p99_us"] - true_p99) <= 0.001 * true_p99 + 1


def test_averaging_the_clients_p99_would_be_wrong(three_clients) -> None:
    dirs, everything = three_clients
    lat = merged_latencies(client_histograms(read_client_logs(dirs)), PCTS)
    read = lat[lat["section"] == "READ"].set_index("client")
    per_client = read.loc[["h1", "h2", "h3"], "p99_us"]
    averaged = float(per_client.mean())
    exact = float(np.percentile(everything["READ"], 99, method="inverted_cdf"))
    assert read.loc[ALL_CLIENTS, "p99_us"] == pytest.approx(exact, rel=1e-3)
    # the average of the p99s is 20 % off the p99 of all operations: 200 times the histogram's precision
    assert abs(averaged - exact) / exact > 0.2
    # averaging the means weighted by operations, on the other hand, is exact (up to bucket midpoints)
    weighted = float(
        (read.loc[["h1", "h2", "h3"], "mean_us"] * read.loc[["h1", "h2", "h3"], "operations"]).sum()
    )
    assert weighted / read.loc[["h1", "h2", "h3"], "operations"].sum() == pytest.approx(
        read.loc[ALL_CLIENTS, "mean_us"], rel=1e-9
    )


def test_real_ycsb_logs_split_over_two_clients_merge_back_exactly(tmp_path: Path) -> None:
    """YCSB 0.17.0's own V1 logs: alternate intervals given to two clients add up to the one-client figures,
    which are YCSB's printed percentiles."""
    src = DATA / "hdr_fileoutput"
    for client in ("a", "b"):
        (tmp_path / client).mkdir()
    for f in src.glob("*.hdr"):
        head = [ln for ln in f.read_text().splitlines() if ln.startswith(("#", '"'))]
        body = [ln for ln in f.read_text().splitlines() if ln and not ln.startswith(("#", '"'))]
        (tmp_path / "a" / f.name).write_text("\n".join(head + body[0::2]) + "\n")
        (tmp_path / "b" / f.name).write_text("\n".join(head + body[1::2]) + "\n")
    lat = merged_latencies(
        client_histograms(read_client_logs({"a": tmp_path / "a", "b": tmp_path / "b"})), PCTS
    )
    merged = lat[lat["client"] == ALL_CLIENTS].set_index("section")
    whole = hdr_percentiles(src, PCTS).set_index("section")
    for section in whole.index:
        assert merged.at[section, "operations"] == whole.at[section, "count"]
        for p in PCTS:
            assert merged.at[section, f"p{p:g}_us"] == whole.at[section, f"p{p:g}"], (section, p)
    printed = parse_output(
        (DATA / "hdr_fileoutput.stdout").read_bytes(),
        (DATA / "hdr_fileoutput.stderr").read_bytes(),
        exit_code=0,
    ).operations.set_index("section")
    for section in ("READ", "UPDATE", "Intended-READ"):
        assert merged.at[section, "p99_us"] == printed.at[section, "p99"]
        assert merged.at[section, "operations"] == printed.at[section, "operations"]


def test_warm_up_is_cut_at_the_same_instant_for_every_client(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    _write_log(a / "READ.hdr", "READ", 1000.0, [[10] * 5, [20] * 5, [30] * 5])  # intervals at 0, 1, 2 s
    _write_log(b / "READ.hdr", "READ", 1001.0, [[40] * 7, [50] * 7])  # started one second later: 1, 2 s
    logs = read_client_logs({"a": a, "b": b})
    full = merged_latencies(client_histograms(logs), PCTS).set_index("client")
    assert full.at[ALL_CLIENTS, "operations"] == 29
    cut = merged_latencies(client_histograms(logs, skip_first_s=1.5), PCTS).set_index("client")
    assert cut.at["a", "operations"] == 5 and cut.at["b", "operations"] == 7  # only the intervals from 2 s on
    assert cut.at[ALL_CLIENTS, "operations"] == 12 and cut.at[ALL_CLIENTS, "min_us"] == 30


def test_merge_operations_sums_counts_and_takes_percentiles_from_the_histograms(three_clients) -> None:
    dirs, _ = three_clients
    lat = merged_latencies(client_histograms(read_client_logs(dirs)), PCTS)
    per_client = {}
    for client in ("h1", "h2", "h3"):
        r = lat[(lat["client"] == client) & (lat["section"] == "READ")].iloc[0]
        per_client[client] = pd.DataFrame(
            [
                {
                    "section": "READ",
                    "operation": "READ",
                    "kind": "op",
                    "intended": False,
                    "outcome": "",
                    "part": "",
                    "operations": r["operations"],
                    "average_latency_us": r["mean_us"],
                    "min_latency_us": r["min_us"],
                    "max_latency_us": r["max_us"],
                    "p99": r["p99_us"],
                    "return_OK": r["operations"] - 3,
                    "return_ERROR": 3.0,
                    "returns": r["operations"],
                    "errors": 3.0,
                }
            ]
        )
    merged = merge_operations(per_client, lat, PCTS).set_index("section")
    read_all = lat[(lat["client"] == ALL_CLIENTS) & (lat["section"] == "READ")].iloc[0]
    assert merged.at["READ", "operations"] == read_all["operations"] == 4000 + 3500 + 600
    assert merged.at["READ", "p99"] == read_all["p99_us"]
    assert merged.at["READ", "average_latency_us"] == pytest.approx(read_all["mean_us"], rel=1e-9)
    assert merged.at["READ", "max_latency_us"] == read_all["max_us"]
    assert merged.at["READ", "return_ERROR"] == 9 and merged.at["READ", "errors"] == 9
    assert merged.at["READ", "error_rate"] == pytest.approx(9 / 8100)


def test_the_old_overall_figure_is_the_sum_over_the_longest_runtime() -> None:
    out = merge_overall(
        {
            "a": {"ops_done": 1000.0, "runtime_ms": 10_000.0, "throughput": 100.0},
            "b": {"ops_done": 1000.0, "runtime_ms": 5_000.0, "throughput": 200.0},
        }
    )
    assert out["ops_done"] == 2000 and out["runtime_ms"] == 10_000
    assert out["throughput"] == pytest.approx(200.0)  # not 300: b was idle for the second half
    assert out["throughput_sum_of_clients"] == pytest.approx(300.0)


def test_whole_steps_keeps_merged_rows_of_multi_client_steps_only() -> None:
    from ycsb_runner.runs.model import whole_steps

    ops = pd.DataFrame(
        {
            "step": ["01-load", "02-run", "02-run", "02-run", "03-run"],
            "client": ["local", "h1", "h2", "all", "local"],
            "operations": [10, 5, 7, 12, 3],
        }
    )
    kept = whole_steps(ops)
    assert kept["client"].tolist() == ["local", "all", "local"]
    assert kept.groupby("step")["operations"].sum().to_dict() == {"01-load": 10, "02-run": 12, "03-run": 3}


def _clients(tmp_path: Path, spec: dict[str, tuple[float, int, int]]) -> dict[str, Path]:
    """client -> (StartTime, intervals of 1 s, READ ops per interval) as interval logs (+ CLEANUP)."""
    dirs = {}
    for client, (start, n, per) in spec.items():
        d = tmp_path / client
        d.mkdir()
        _write_log(d / "READ.hdr", "READ", start, [[100 + i] * per for i in range(n)])
        _write_log(d / "CLEANUP.hdr", "CLEANUP", start + n, [[5]])  # not an operation
        dirs[client] = d
    return dirs


def test_common_window_is_where_every_client_ran_with_clock_offsets_applied(tmp_path: Path) -> None:
    # a and b start at 1000 on our clock; c starts 5 s late; d is a host whose clock is 6 s ahead, so its
    # log says 1006 for what is 1000 here. Each runs 10 s at 10 ops per 1-s interval.
    dirs = _clients(
        tmp_path,
        {"a": (1000.0, 10, 10), "b": (1000.0, 10, 10), "c": (1005.0, 10, 10), "d": (1006.0, 10, 10)},
    )
    raw = read_client_logs(dirs)
    logs = align_logs(raw, {"d": 6.0})
    window = common_window(logs)
    assert (window.start_s, window.end_s) == (1005.0, 1010.0)  # c's start, a/b/d's end
    assert window.ops == 4 * 5 * 10 and window.throughput == pytest.approx(40.0)  # four clients at 10/s
    union = union_window(logs)
    assert (union.start_s, union.end_s, union.ops) == (1000.0, 1015.0, 400)
    assert union.throughput == pytest.approx(400 / 15)
    old = merge_overall({c: {"ops_done": 100.0, "runtime_ms": 10_000.0} for c in dirs})["throughput"]
    assert old == pytest.approx(40.0) and window.ops / window.length_s == old  # equal when all run alike
    unaligned = common_window(raw)  # without the offset d would seem to run 1006-1016
    assert (unaligned.start_s, unaligned.end_s) == (1006.0, 1010.0) and unaligned.ops == 4 * 4 * 10


def test_window_percentiles_come_from_the_windows_intervals_only(tmp_path: Path) -> None:
    dirs = _clients(tmp_path, {"a": (1000.0, 10, 10), "c": (1005.0, 10, 10)})
    logs = read_client_logs(dirs)
    window = common_window(logs)
    inside = window_logs(logs, window.start_s, window.end_s)
    lat = merged_latencies(client_histograms(inside), PCTS).set_index(["client", "section"])
    # a's intervals 5..9 (values 105..109) and c's 0..4 (values 100..104): 100 values
    assert lat.at[(ALL_CLIENTS, "READ"), "operations"] == 100
    assert lat.at[(ALL_CLIENTS, "READ"), "min_us"] == 100 and lat.at[(ALL_CLIENTS, "READ"), "max_us"] == 109
    assert ("a", "CLEANUP") not in lat.index or lat.at[("a", "CLEANUP"), "operations"] == 0


def test_clients_that_never_overlap_have_no_common_window(tmp_path: Path) -> None:
    logs = read_client_logs(_clients(tmp_path, {"a": (1000.0, 3, 5), "b": (1010.0, 3, 5)}))
    assert common_window(logs) is None and union_window(logs).ops == 30


def test_warm_up_is_cut_from_each_clients_own_start(tmp_path: Path) -> None:
    logs = read_client_logs(_clients(tmp_path, {"a": (1000.0, 10, 10), "c": (1005.0, 10, 10)}))
    cut = drop_warmup(logs, 3.0)
    spans = {c: union_window({c: ls}) for c, ls in cut.items()}
    assert (spans["a"].start_s, spans["a"].ops) == (1003.0, 70)
    assert (spans["c"].start_s, spans["c"].ops) == (1008.0, 70)  # the late client's own warm-up
    window = common_window(cut)
    assert (window.start_s, window.end_s, window.ops) == (1008.0, 1010.0, 40)
    assert drop_warmup(logs, 0.0) == {c: list(ls) for c, ls in logs.items()}


def test_operations_count_read_modify_write_once(tmp_path: Path) -> None:
    d = tmp_path / "a"
    d.mkdir()
    # 10 RMW transactions: their 10 reads and 10 updates are in READ/UPDATE too; plus 5 plain reads,
    # 2 failed updates, and intended-latency logs that are not operations
    _write_log(d / "READ.hdr", "READ", 1000.0, [[50] * 15])
    _write_log(d / "UPDATE.hdr", "UPDATE", 1000.0, [[60] * 10])
    _write_log(d / "UPDATE-FAILED.hdr", "UPDATE-FAILED", 1000.0, [[70] * 2])
    _write_log(d / "READ-MODIFY-WRITE.hdr", "READ-MODIFY-WRITE", 1000.0, [[110] * 10])
    _write_log(d / "Intended-READ.hdr", "Intended-READ", 1000.0, [[80] * 15])
    assert operations_in(read_client_logs({"a": d})) == 15 + 10 + 2 + 10 - 10 - 10 + 10 - 10 + 10 - 10 + 0


def test_a_client_stopped_before_writing_its_log_is_described_not_raised(tmp_path: Path) -> None:
    """A client stopped mid-run leaves a 0-byte ``.hdr`` (seen in CI: the step's failure became
    'UPDATE.hdr is not an HdrHistogram log'); with *problems* it is left out and named, the rest is read."""
    good = tmp_path / "h1" / "hdr"
    good.mkdir(parents=True)
    _write_log(good / "READ.hdr", "READ", 1000.0, [[100, 200], [300]])
    stopped = tmp_path / "h3" / "hdr"
    stopped.mkdir(parents=True)
    (stopped / "UPDATE.hdr").write_bytes(b"")
    dirs = {"h1": good, "h3": stopped}
    with pytest.raises(ParseError):
        read_client_logs(dirs)
    problems: list[str] = []
    logs = read_client_logs(dirs, problems)
    assert [len(log.intervals) for log in logs["h1"]] == [2]
    assert logs["h3"] == []
    assert problems == ["client h3: UPDATE.hdr is empty or not an HdrHistogram log, left out of the merge"]


def test_step_metrics_read_the_merged_rows_of_a_multi_client_step(results: Path) -> None:
    """A step two load generators ran has each client's rows beside the merged ``all`` rows in
    operations.csv: the step's figures are the merged rows' alone (not the clients' added to them)."""
    from ycsb_runner.analyse.table import step_metrics
    from ycsb_runner.runs.model import ALL_CLIENTS, RunResult

    folder = results / "tencent-analyse"
    before = step_metrics(RunResult.load(folder)).set_index("step")
    ops = pd.read_csv(folder / "operations.csv", keep_default_na=False, na_values=[""])
    step = "03-run-read50_update50-t2-r2"
    mine = ops["step"] == step
    ops.loc[mine, "client"] = ALL_CLIENTS
    halves = [ops[mine].assign(client=h, operations=ops.loc[mine, "operations"] / 2) for h in ("h1", "h2")]
    pd.concat([ops, *halves], ignore_index=True).to_csv(folder / "operations.csv", index=False)
    after = step_metrics(RunResult.load(folder)).set_index("step")
    assert before.loc[step, "read_ops"] > 0
    assert after.loc[step, "read_ops"] == before.loc[step, "read_ops"]
    assert after.loc[step, "update_ops"] == before.loc[step, "update_ops"]


@pytest.mark.parametrize("seed", range(6))
def test_histogram_stats_are_hdrhs_own_figures(seed: int) -> None:
    """histogram_stats walks only the buckets that hold counts; each figure equals hdrh's own method's."""
    rng = np.random.default_rng(seed)
    hist = HdrHistogram(1, 3_600_000_000, 3)
    for value in np.maximum(rng.lognormal(4 + seed, 1.5, 3000).astype(int), 1).tolist():
        hist.record_value(value, int(rng.integers(1, 10**seed + 2)))
    percentiles = (0.0, 0.1, 25.0, 50.0, 99.0, 99.9, 99.999, 100.0)
    stats = histogram_stats(hist, percentiles)
    assert stats["mean_us"] == float(hist.get_mean_value())
    for p in percentiles:
        assert stats[f"{percentile_label(p)}_us"] == float(hist.get_value_at_percentile(p)), p
