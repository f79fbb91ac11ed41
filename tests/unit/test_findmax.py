"""The findmax search (``ycsb_runner.findmax``): bounds, probe verdicts and the next target, without YCSB."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from cli_process import run_main

from ycsb_runner.errors import UserError
from ycsb_runner.findmax import search as fm
from ycsb_runner.findmax.plan import findmax_plan
from ycsb_runner.findmax.runner import probe_figures
from ycsb_runner.parse import parse_output
from ycsb_runner.prepare.suite import load_suite


def probe(target: int, passed: bool) -> fm.Probe:
    return fm.Probe(f"p{target}", target, float(target), 1.0, "READ", 0.0, passed, [] if passed else ["x"])


def search(capacity: float, start: int, resolution: float = 5.0, max_probes: int = 30) -> list[fm.Probe]:
    """The search against a server that meets the bound up to *capacity* ops/s exactly."""
    probes: list[fm.Probe] = []
    while (t := fm.next_target(probes, start, resolution, max_probes)) is not None:
        assert t not in [p.target for p in probes], "a target probed twice"
        probes.append(probe(t, t <= capacity))
    return probes


@pytest.mark.parametrize("capacity", [7, 99, 100, 101, 333, 1000, 1234.5, 5000, 77777])
@pytest.mark.parametrize("start", [1, 10, 100, 450, 20000])
@pytest.mark.parametrize("resolution", [1.0, 5.0, 20.0])
def test_search_converges_within_the_resolution(capacity: float, start: int, resolution: float) -> None:
    probes = search(capacity, start, resolution)
    found = fm.found_max(probes)
    assert found is not None and found <= capacity  # a rate that passed
    lowest_fail = min(p.target for p in probes if not p.passed)
    assert lowest_fail > capacity
    assert lowest_fail <= found * (1 + resolution / 100) or lowest_fail - found <= 1
    assert fm.converged(probes, resolution)
    # geometric phase then bisection: about log2(range) + log2(log(range)/log(1+res)) probes
    assert len(probes) <= 2 * math.log2(max(capacity, start) / min(capacity, start) + 2) + 12


def test_the_geometric_phase_doubles_and_the_bisection_takes_the_geometric_mean() -> None:
    assert fm.next_target([], 100, 5, 12) == 100
    assert fm.next_target([probe(100, True)], 100, 5, 12) == 200
    assert fm.next_target([probe(100, True), probe(200, True)], 100, 5, 12) == 400
    assert fm.next_target([probe(100, True), probe(200, True), probe(400, False)], 100, 5, 12) == 283
    assert fm.next_target([probe(100, False)], 100, 5, 12) == 50  # the start failed: halve


def test_the_search_stops_at_max_probes_and_when_nothing_passes() -> None:
    probes = search(10**9, 10, max_probes=4)
    assert len(probes) == 4 and fm.found_max(probes) == 80 and not fm.converged(probes, 5)
    nothing = search(0.5, 16)
    assert [p.target for p in nothing] == [16, 8, 4, 2, 1] and fm.found_max(nothing) is None


def test_a_pass_above_a_failure_does_not_count() -> None:
    """Noise: 300 passed after 250 failed. The maximum is below every failing target."""
    probes = [probe(100, True), probe(200, True), probe(400, False), probe(283, False), probe(238, True)]
    probes.append(probe(300, True))
    assert fm.found_max(probes) == 238
    assert fm.next_target(probes, 100, 5, 12) == 260  # between 238 and 283


@pytest.mark.parametrize(
    ("text", "us"), [("10ms", 10_000), ("500us", 500), ("0.2s", 200_000), ("250µs", 250), (" 1.5 ms", 1500)]
)
def test_latencies_with_units(text: str, us: float) -> None:
    assert fm.parse_latency(text, "--p99") == pytest.approx(us)


@pytest.mark.parametrize("text", ["10 parsecs", "10", "ms", "-3ms", "0ms", "nanms", "1e999s"])
def test_bad_latencies_are_one_line_errors(text: str) -> None:
    with pytest.raises(UserError) as err:
        fm.parse_latency(text, "--p99")
    message = str(err.value)
    assert message.startswith(f"--p99 {text}: give a latency with its unit") and "\n" not in message


def test_exactly_one_bound() -> None:
    assert fm.make_bound(p95="5ms") == fm.Bound("p95", 5000.0)
    assert fm.make_bound(avg="800us").column == "average_latency_us"
    for kw in ({}, {"p99": "10ms", "avg": "1ms"}):
        with pytest.raises(UserError, match="exactly one latency bound"):
            fm.make_bound(**kw)


def test_a_probe_passes_only_when_throughput_latency_and_errors_all_hold() -> None:
    bound = fm.Bound("p99", 10_000.0)
    ok = fm.judge_probe("s", 1000, 975.0, {"READ": 9000.0, "UPDATE": 10_000.0}, 0.0, bound, 0.01)
    assert ok.passed and ok.worst_operation == "UPDATE" and ok.latency_us == 10_000.0
    slow = fm.judge_probe("s", 1000, 969.0, {"READ": 100.0}, 0.0, bound, 0.01)
    assert not slow.passed and slow.reasons[0] == "< 97% of target"
    late = fm.judge_probe("s", 1000, 1000.0, {"READ": 100.0, "UPDATE": 10_001.0}, 0.0, bound, 0.01)
    assert not late.passed and late.reasons == ["UPDATE > 10 ms"]
    errs = fm.judge_probe("s", 1000, 1000.0, {"READ": 100.0}, 0.02, bound, 0.01)
    assert not errs.passed and errs.reasons == ["errors > 1.000%"]
    assert not fm.judge_probe("s", 10, 10.0, {}, 0.0, bound, 0.01).passed  # no latency: no pass


def test_probe_figures_take_the_worst_measured_operation_and_all_errors() -> None:
    import pandas as pd

    ops = pd.DataFrame(
        [
            {"client": "local", "operation": "READ", "kind": "op", "intended": False, "outcome": None,
             "operations": 90, "p99_us": 800.0, "returns": 90, "errors": 0},
            {"client": "local", "operation": "UPDATE", "kind": "op", "intended": False, "outcome": None,
             "operations": 10, "p99_us": 1500.0, "returns": 10, "errors": 2},
            {"client": "local", "operation": "READ", "kind": "op", "intended": True, "outcome": None,
             "operations": 90, "p99_us": 99999.0, "returns": None, "errors": None},
            {"client": "local", "operation": "CLEANUP", "kind": "op", "intended": False, "outcome": None,
             "operations": 4, "p99_us": 50000.0, "returns": None, "errors": None},
        ]
    )  # fmt: skip
    latencies, rate = probe_figures(ops, "p99_us")
    assert latencies == {"READ": 800.0, "UPDATE": 1500.0}
    assert rate == pytest.approx(0.02)


def test_findmax_plan_resolves_mix_threads_window_and_percentile() -> None:
    suite = load_suite("quick")
    opts = fm.FindmaxOptions(mix="c-read100", bound=fm.Bound("p95", 5000.0), probe_s=10)
    planned, resolved = findmax_plan(suite, opts)
    assert [m.name for m in planned.mixes] == ["c-read100"] and resolved.threads == 4
    assert planned.run.maxexecutiontime == 10 and planned.effective_warmup_s == 2.0
    assert 95.0 in planned.measurement.percentiles
    with pytest.raises(UserError, match="choose one with --mix"):
        findmax_plan(suite, fm.FindmaxOptions(mix=None, bound=fm.Bound("p99", 1.0)))
    with pytest.raises(UserError, match="no such mix"):
        findmax_plan(suite, fm.FindmaxOptions(mix="c-read", bound=fm.Bound("p99", 1.0)))
    with pytest.raises(UserError, match="--resolution 0: give a percentage"):
        findmax_plan(suite, fm.FindmaxOptions(mix="c-read100", bound=fm.Bound("p99", 1.0), resolution_pct=0))


def test_the_summary_is_json_and_names_what_was_found() -> None:
    opts = fm.FindmaxOptions(mix="c", bound=fm.Bound("p99", 10_000.0), threads=4)
    probes = search(1234, 100)
    doc = json.loads(json.dumps(fm.summary(opts, probes, 100, True)))
    assert doc["max_ops_s"] == fm.found_max(probes) and doc["converged"] and doc["done"]
    assert len(doc["probes"]) == len(probes) and doc["bound"]["label"] == "p99 <= 10 ms"
    assert fm.found_text(doc).startswith(f"max {doc['max_ops_s']} ops/s under p99 <= 10 ms")
    frame = fm.search_frame(doc)
    assert list(frame["target_ops_s"]) == [p.target for p in probes]
    # the verdict is one word (the table fits 80 columns); why a probe failed is beside it, whole
    assert list(frame["verdict"]) == ["pass" if p.passed else "fail" for p in probes]
    assert list(frame["why"]) == ["; ".join(p.reasons) for p in probes] and any(frame["why"])


# a search on the embedded server (3 Dec 2026, workload C, 4 threads, --avg 30ms): (target, achieved, passed)
COLLAPSED = [
    (100, 100, True),
    (200, 200, True),
    (400, 428, True),
    (800, 454, False),
    (566, 369, False),
    (476, 372, False),
    (436, 364, False),
    (418, 434, True),
]


def test_a_throughput_that_falls_under_overload_is_named_with_the_maximum() -> None:
    opts = fm.FindmaxOptions(mix="c", bound=fm.Bound("avg", 30_000.0), threads=4)
    probes = [
        fm.Probe(f"p{t}", t, float(x), 9e3, "READ", 0.0, ok, [] if ok else ["x"]) for t, x, ok in COLLAPSED
    ]
    doc = fm.summary(opts, probes, 100, True)
    assert fm.overload_floor(doc) == 364
    assert fm.found_text(doc) == (
        "max 418 ops/s under avg <= 30 ms (lowest failing 436; within 5 %; overloaded, it fell to 364 ops/s)"
    )
    # probes over the maximum that still achieved 97 % of it (failed on latency, or short of a higher target)
    held = [
        fm.Probe(p.step, p.target, max(p.throughput_ops_s or 0, 406.0), 9e3, "READ", 0.0, p.passed)
        for p in probes
    ]
    assert fm.overload_floor(fm.summary(opts, held, 100, True)) is None
    assert fm.overload_floor(fm.summary(opts, search(1234, 100), 100, True)) is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--mix", "c-read100", "--p99", "10 parsecs"],
            "error: --p99 10 parsecs: give a latency with its unit",
        ),
        (["--p99", "10ms"], "error: suite quick has mixes a-read50-update50"),
        (["--mix", "c-read100"], "error: findmax needs exactly one latency bound"),
        (["--mix", "c-read100", "--avg", "1ms", "--probe-s", "1"], "error: --probe-s 1: a probe needs"),
    ],
)
def test_cli_mistakes_are_one_line_errors_before_anything_runs(args: list[str], message: str) -> None:
    import os

    done = run_main("findmax", "quick", *args, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(message) and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_shrinking_phase_stops_at_the_floor() -> None:
    """YCSB cannot pace a thread below about 0.5 op/s: the search goes no lower than one op/s per thread."""
    probes: list[fm.Probe] = []
    while (t := fm.next_target(probes, 100, 5, 30, floor=16)) is not None:
        probes.append(probe(t, False))
    assert [p.target for p in probes] == [100, 50, 25, 16]
    assert fm.next_target([], 4, 5, 30, floor=16) == 16


@pytest.mark.parametrize(
    ("capture", "lines", "last_ops"),
    [
        ("binding-paced", 8, 94),  # the closing line 0.94 s after the stop ("6 sec", no operation)
        ("binding-paced-late", 9, 95),  # the shutdown took 1.015 s: one more periodic line ("7 sec", 1 op)
    ],
)
def test_the_achieved_rate_stops_at_the_stop(capture: str, lines: int, last_ops: int) -> None:
    """Real probes at one op a second per thread (16 threads, -target 16, maxexecutiontime 6; tests/data/
    ycsb/binding-paced*): 16 ops in each status second up to the stop, then the lines of the shutdown. From
    the first line after a 1.2-s warm-up (2 s: 30 ops) to the stop (6 s: 94 ops): 64 ops in 4 s. (Up to
    the end of HDR's closing interval, or to the last periodic line, both said 13 ops/s: a failed probe.)"""
    from ycsb_runner.execute.common import status_times
    from ycsb_runner.findmax.runner import status_window_rate

    data = Path(__file__).parents[1] / "data" / "ycsb"
    run = parse_output((data / f"{capture}.stdout").read_bytes(), (data / f"{capture}.stderr").read_bytes())
    status = status_times(run.status).assign(client="local")
    assert status["status_index"].nunique() == lines and status["total_ops"].max() == last_ops
    assert status_window_rate(status, 1.2, 6) == pytest.approx(16.0, rel=0.01)
    assert status_window_rate(status, 5.5, 6) is None  # one line left in the window: no rate
    two = pd.concat([status, status.assign(client="b", total_ops=status["total_ops"] * 2)])
    assert status_window_rate(two, 1.2, 6) == pytest.approx(48.0, rel=0.01)  # the clients' rates add up


def test_steady_latencies_are_those_of_the_intervals_after_the_warm_up() -> None:
    """Two clients' READ logs: 10 ops at 1 ms in the warm-up, then 30 at 2 ms and 10 at 10 ms (client a),
    40 at 3 ms (client b): the mean of the kept 80 is (60 + 100 + 120) / 80 ms; p99 is in the 10-ms
    bucket; the warm-up's and CLEANUP's values are not in them."""
    import numpy as np
    from hdrh.histogram import HdrHistogram

    from ycsb_runner.findmax.runner import steady_latencies
    from ycsb_runner.parse.hdr import BucketLayout, HdrInterval, HdrLog

    layout = BucketLayout(1, 3)

    def iv(start: float, values: dict[int, int]) -> HdrInterval:
        hist = HdrHistogram(1, 3_600_000_000, 3)
        for v, n in values.items():
            hist.record_value(v, n)
        counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len].astype("int64")
        return HdrInterval(start, 1.0, 0.0, layout, counts)

    a = HdrLog("READ.hdr", "READ", 100.0, [iv(0, {1000: 10}), iv(1, {2000: 30}), iv(2, {10_000: 10})])
    b = HdrLog("READ.hdr", "READ", 100.2, [iv(0, {1000: 10}), iv(1, {3000: 40})])
    cleanup = HdrLog("CLEANUP.hdr", "CLEANUP", 100.0, [iv(3, {500_000: 2})])
    logs = {"a": [a, cleanup], "b": [b]}
    avg = steady_latencies(logs, 1.0, "avg")
    assert avg.keys() == {"READ"} and avg["READ"] == pytest.approx(
        (60_000 + 100_000 + 120_000) / 80, rel=2e-3
    )
    assert 9_990 <= steady_latencies(logs, 1.0, "p99")["READ"] <= 10_010
    assert steady_latencies(logs, 0.0, "avg")["READ"] < avg["READ"]  # the 1-ms warm-up counted in


def test_the_report_of_a_findmax_run_draws_the_curve_and_lists_the_probes(results) -> None:
    """A real run folder whose run steps stand for probes: the report opens with the probes (no per-mix
    means over them) and has the latency-vs-throughput figure."""
    from ycsb_runner.report.run_report import write_report

    folder = results / "tencent-analyse"
    m = json.loads((folder / "manifest.json").read_text())
    opts = fm.FindmaxOptions(mix="read50_update50", bound=fm.Bound("p99", 10_000.0), threads=2)
    runs = [s for s in m["steps"] if s["phase"] == "run"]
    probes = [
        fm.Probe(s["step"], 100 * (i + 1), s["throughput_ops_s"], 4000.0 * (i + 1), "READ", 0.0, i < 2)
        for i, s in enumerate(runs)
    ]
    m["findmax"] = fm.summary(opts, probes, 100, True)
    (folder / "manifest.json").write_text(json.dumps(m))
    html_path, md_path = write_report(folder)
    text = html_path.read_text()
    assert "Max throughput: max 200 ops/s under p99 &lt;= 10 ms (lowest failing 300" in text
    assert (folder / "report-figures" / "findmax.png").stat().st_size > 10_000
    assert "per-mix" not in md_path.read_text()
    assert md_path.read_text().count("| pass |") == 2


def test_probes_that_collapsed_to_one_point_share_one_label() -> None:
    from ycsb_runner.report.plots import target_labels

    # (target, achieved ops/s, average ms) of the search above, in the order of their targets
    points = [
        (100, 100, 5.54),
        (200, 200, 5.79),
        (400, 428, 9.30),
        (418, 434, 6.27),
        (436, 364, 10.95),
        (476, 372, 10.71),
        (566, 369, 10.83),
        (800, 454, 8.79),
    ]
    labels = target_labels(points, y_top=30.0)
    assert [text for text, _, _ in labels] == ["100", "200", "400", "418", "436/476/566", "800"]
    assert labels[4][1:] == (364, 10.95)  # at the first probe of the three
    assert [t for t, _, _ in target_labels(points, y_top=30.0, near=0.0)] == [str(t) for t, _, _ in points]
