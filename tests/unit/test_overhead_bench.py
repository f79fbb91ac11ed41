"""bench/overhead_bench.py's arithmetic: an ABBA block cancels an order effect that grows within the block."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from bench_scripts import bench_script

overhead = bench_script("overhead_bench")
RUNS = Path(__file__).parents[1] / "data" / "runs"


@pytest.mark.parametrize("order", overhead.ORDERS)
def test_an_abba_block_cancels_a_trend_along_the_block(order: tuple[str, ...]) -> None:
    # each run 30 % faster than the one before it, whoever runs; the wrapper costs 2 % on top
    runs = [100.0 * math.exp(0.3 * k) * (0.98 if who == "wrapper" else 1.0) for k, who in enumerate(order)]
    assert overhead.block_log_ratio(order, runs) == pytest.approx(math.log(0.98), abs=1e-12)
    # a plain pair (its first two runs) would carry the trend: 0.98 * e^+-0.3
    pair = math.log(runs[0] / runs[1]) if order[0] == "wrapper" else math.log(runs[1] / runs[0])
    assert abs(pair - math.log(0.98)) == pytest.approx(0.3)


def test_the_ratio_interval_is_the_t_interval_of_the_log_ratios() -> None:
    logs = [math.log(r) for r in (0.995, 1.004, 1.001, 0.998, 1.010, 0.992)]
    mid, low, high = overhead.ratio_interval(logs)
    assert mid == pytest.approx(math.exp(sum(logs) / len(logs)))
    assert low < mid < high
    # the interval is symmetric around the mean on the log scale
    assert math.log(high) - math.log(mid) == pytest.approx(math.log(mid) - math.log(low))
    wider = overhead.ratio_interval([2 * x for x in logs])
    assert wider[2] / wider[1] > high / low


def test_the_blocks_needed_are_the_fewest_whose_t_interval_is_within_1_percent() -> None:
    logs = [math.log(r) for r in (0.98, 1.02, 0.99, 1.01)]
    sd = overhead.summarize(logs)["stdev"]
    n = overhead.blocks_for(logs)

    def half(k: int) -> float:  # the 95 % t interval's half-width at k blocks of this spread
        from scipy.stats import t

        return t.ppf(0.975, k - 1) * sd / math.sqrt(k)

    assert half(n) <= math.log1p(0.01) < half(n - 1)
    # twice the spread needs between 3 and 4 times the blocks (4 by the normal rule; fewer: a smaller t)
    assert 3 * n <= overhead.blocks_for([2 * x for x in logs]) <= 4 * n
    # a spread of 1.8 % per block: (1.96 * 1.8 / 1.0)^2 = 12.4 by the normal rule, 15 with t's tails
    assert overhead.blocks_for([0.0164, -0.0164] * 3) == 15  # sd 0.018


def test_the_summary_says_meets_misses_or_cannot_tell() -> None:
    # block ratios of the measured set-ups (bench run of 2 Dec 2026): server monitors off, server monitors on
    off = [1.0089, 0.9952, 0.9938, 1.0090, 0.9937, 1.0011, 1.0028, 0.9903]
    assert "meets the target" in overhead.summary([math.log(r) for r in off])
    assert "does not meet" in overhead.summary([math.log(r) for r in (0.985, 0.988, 0.990, 0.987)])
    basic = [0.7810, 1.2941, 1.6016, 1.2943, 0.9523, 1.0643, 1.2170, 0.7141]
    text = overhead.summary([math.log(r) for r in basic])
    assert "too wide to tell" in text and "over 8 blocks" in text
    assert "rules out" not in text and "excludes 1.00" not in text
    assert "no interval from one block" in overhead.summary([math.log(0.98)])


def test_a_wide_interval_says_what_its_ends_rule_out() -> None:
    # steady block ratios measured on 2 Dec 2026 (BasicDB, 1 thread, not pinned): monitors on, and on at
    # ten times their sampling rate; wide intervals, never called a pass
    on = [1.0248, 0.9045, 0.9489, 0.9533, 1.0157, 0.9531, 0.9688, 0.9703]
    on += [1.0184, 0.9959, 1.0238, 1.0390, 0.9272, 1.0064, 0.9386, 0.9739]
    text = overhead.summary([math.log(r) for r in on])
    assert "too wide to tell" in text and "excludes 1.00: the wrapper costs 0.0-4.3 %" in text
    x10 = [1.0243, 0.9970, 0.9890, 1.0627, 0.9985, 0.9808, 1.1548, 1.0275, 1.0088, 1.1047]
    text = overhead.summary([math.log(r) for r in x10])
    assert "too wide to tell" in text and "its lower end rules out a cost over 1 %" in text


def test_the_steady_rate_counts_from_the_status_line_at_2_s_to_the_last() -> None:
    lines = [
        "2026-12-02 19:31:13:054 0 sec: 0 operations; est completion in 0 second",
        "2026-12-02 19:31:14:016 1 sec: 3104650 operations; 3101548.45 current ops/sec;",
        "2026-12-02 19:31:15:016 2 sec: 8648938 operations; 5549837.84 current ops/sec;",
        "2026-12-02 19:31:16:016 3 sec: 14648938 operations; 6000000.00 current ops/sec;",
        "2026-12-02 19:31:16:516 3 sec: 17148938 operations; 5000000.00 current ops/sec;",
    ]
    # 8,500,000 operations in the 1.5 s from the 2 s line; the first two seconds left out
    assert overhead.steady_rate("\n".join(lines)) == pytest.approx(8_500_000 / 1.5)
    assert overhead.steady_rate("\n".join(lines), from_s=0) == pytest.approx(17148938 / 3.462)
    with pytest.raises(ValueError, match="fewer than two status lines"):
        overhead.steady_rate("\n".join(lines[:3]))


def test_the_steady_rate_of_two_neighbour_lines_is_ycsb_s_current_rate() -> None:
    # real output: YCSB's final status line reports the rate since the line before it
    stderr = (RUNS / "audit-analyse/steps/05-run-read50_update50-t2-audit-on-r1/stderr.txt").read_text()
    last = [line for line in stderr.splitlines() if " sec: " in line][-1]
    current = float(last.split("operations; ")[1].split(" current")[0])
    assert overhead.steady_rate(stderr) == pytest.approx(current, rel=0.01)


def _status(start_ms: int, ops_per_s: list[int]) -> str:
    """YCSB status lines one second apart from *start_ms* (ms after 10:00:00), second k adding
    ops_per_s[k - 1] operations."""
    lines, total = [], 0
    for sec in range(len(ops_per_s) + 1):
        if sec:
            total += ops_per_s[sec - 1]
        ms = start_ms + 1000 * sec
        stamp = f"2026-12-03 10:00:{ms // 1000:02d}:{ms % 1000:03d}"
        lines.append(
            f"{stamp} {sec} sec: {total} operations; {ops_per_s[sec - 1] if sec else 0} current ops/sec;"
        )
    return "\n".join(lines)


def test_side_by_side_rates_count_only_the_seconds_both_runs_ran() -> None:
    # a: 100 ops/s for 8 s, then 300 ops/s to 12 s; b: started 0.5 s later, 200 ops/s to 12.5 s
    a = _status(0, [100] * 8 + [300] * 4)
    b = _status(500, [200] * 12)
    # from 5 s on, both ran from 5.5 s (b's 5 s line) to 12.0 s (a's last): a's lines at 6..12 s, b's at
    # 5.5..11.5 s
    ra, rb = overhead.common_rates(a, b, from_s=5)
    assert ra == pytest.approx((2 * 100 + 4 * 300) / 6)
    assert rb == pytest.approx(200)
    assert overhead.steady_rate(a, from_s=5) == pytest.approx((3 * 100 + 4 * 300) / 7)  # a alone: from 5 s
    with pytest.raises(ValueError, match="while both ran"):
        overhead.common_rates(a, _status(11_500, [200] * 3), from_s=0)  # overlapping 0.5 s: one line each
