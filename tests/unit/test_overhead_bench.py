"""bench/overhead_bench.py's arithmetic: an ABBA block cancels an order effect that grows within the block."""

from __future__ import annotations

import math

import pytest
from bench_scripts import bench_script

overhead = bench_script("overhead_bench")


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


def test_the_blocks_needed_grow_with_the_square_of_the_spread() -> None:
    logs = [math.log(r) for r in (0.98, 1.02, 0.99, 1.01)]
    n = overhead.blocks_for(logs)
    assert overhead.blocks_for([2 * x for x in logs]) in range(4 * n - 3, 4 * n + 4)
    # a spread of 1.8 % per block needs about (1.96 * 1.8 / 1.0)^2 = 12 blocks for +-1 %
    assert overhead.blocks_for([0.0164, -0.0164] * 3) in range(11, 15)  # sd 0.018


def test_the_summary_says_meets_misses_or_cannot_tell() -> None:
    # block ratios of the measured set-ups (bench run of 2 Dec 2026): server monitors off, server monitors on
    off = [1.0089, 0.9952, 0.9938, 1.0090, 0.9937, 1.0011, 1.0028, 0.9903]
    assert "meets the target" in overhead.summary([math.log(r) for r in off])
    assert "does not meet" in overhead.summary([math.log(r) for r in (0.985, 0.988, 0.990, 0.987)])
    basic = [0.7810, 1.2941, 1.6016, 1.2943, 0.9523, 1.0643, 1.2170, 0.7141]
    text = overhead.summary([math.log(r) for r in basic])
    assert "too wide to tell" in text and "over 8 blocks" in text
