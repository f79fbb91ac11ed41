"""``warmup_s`` on a single-client run: the first seconds are cut from the HDR interval logs before the
step's throughput and percentiles are taken (YCSB's own whole-run figures stay in summary.csv)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from test_multi_clients import completed_run_step  # same folder

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.parse.hdr import read_hdr_log

pytestmark = pytest.mark.integration

SUITE = str(Path(__file__).parents[1] / "suites" / "multi.toml")  # 450 records, 1-s status intervals
WARMUP_S = 3.0


def test_single_client_run_drops_its_warm_up(mongo_url: str, tmp_path: Path) -> None:
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            # paced (what is checked is which intervals the warm-up drops and the figures of the rest, not
            # the server's speed): unpaced, YCSB and the server took two cores for the run's 8 s
            overrides=[
                f"warmup_s={WARMUP_S:g}",
                "run.operationcount=100000000",
                "maxexecutiontime=8",
                "target=150",
            ],
            monitors=False,
            report=False,
            canaries=False,
        ),
        log=lambda _m: None,
    )
    step = completed_run_step(outcome.run_dir)
    fig = step["figures"]
    assert fig["warmup_s"] == WARMUP_S and fig["throughput_ycsb_ops_s"] > 0
    hdr = outcome.run_dir / "steps" / step["step"] / "hdr"  # written because of the warm-up
    kept: dict[str, list] = {}
    for section in ("READ", "UPDATE"):
        log = read_hdr_log(hdr / f"{section}.hdr")
        kept[section] = [((log.start_time_s or 0.0) + iv.start_s, iv) for iv in log.intervals]
    first = min(t for ivs in kept.values() for t, _ in ivs)
    ends = [t + iv.length_s for ivs in kept.values() for t, iv in ivs]
    after = {s: [(t, iv) for t, iv in ivs if t >= first + WARMUP_S - 1e-9] for s, ivs in kept.items()}
    start = min(t for ivs in after.values() for t, _ in ivs)
    ops = sum(iv.total for ivs in after.values() for _, iv in ivs)
    independent = ops / (max(ends) - start)
    assert fig["measured_window_operations"] == ops
    assert step["throughput_ops_s"] == pytest.approx(independent, rel=0.01)
    whole = sum(iv.total for ivs in kept.values() for _, iv in ivs)
    assert ops < whole  # the warm-up's operations are not in the figures
    ops_rows = outcome.result.operations
    read = ops_rows[(ops_rows["phase"] == "run") & (ops_rows["section"] == "READ")].iloc[0]
    one = HdrHistogram(1, 3_600_000_000, 3)
    for _, iv in after["READ"]:
        for i in iv.counts.nonzero()[0]:
            one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
    assert read["p99_us"] == one.get_value_at_percentile(99)
    assert read["operations"] == sum(iv.total for _, iv in kept["READ"])  # YCSB's count of the whole run
