"""CPU time and peak memory of one `regress` over a long, wide history: 200 series x 365 nights.

    .venv/bin/python bench/regress_scale_bench.py [--series 200] [--nights 365] [--changes 0.1]

The history is built in memory (the frames ``regress`` reads from the history): 40 step cells, each with
throughput and the average and p99 latency of two operations (5 series a step), 5 % nightly noise with
AR(1) correlation 0.3, and in a share of the steps (--changes) a lasting 15 % step down at a random night
(all of the step's series at once, as a slower host would). It prints the CPU seconds and the peak RSS of
the process (``resource.getrusage``), and the verdict counts. Target (issue 20): under 60 CPU-s and
300 MB peak RSS for 200 x 365.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ycsb_runner.nightly.regress import RegressOptions, regress  # noqa: E402
from ycsb_runner.runs.history import METRIC_COLUMNS, RUN_COLUMNS  # noqa: E402

SERIES_PER_STEP = [
    ("OVERALL", "throughput_ops_s", -1),
    ("READ", "avg_us", 1),
    ("READ", "p99_us", 1),
    ("UPDATE", "avg_us", 1),
    ("UPDATE", "p99_us", 1),
]
# the tails regress judges since issue 47 (p99.9 and max, noisier): --no-tails leaves them out
TAIL_SERIES = [
    ("READ", "p999_us", 1),
    ("READ", "max_us", 1),
    ("UPDATE", "p999_us", 1),
    ("UPDATE", "max_us", 1),
]
CV = {"p999_us": 0.15, "max_us": 0.4}  # night-to-night spread (the others 5 %)


def history(
    n_series: int, nights: int, changes: float, seed: int, tails: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    run_ids = [f"night-{i:03d}" for i in range(nights)]
    runs = pd.DataFrame(
        {
            "run_id": run_ids,
            "suite": "quick",
            "fingerprint": "f",
            "status": "completed",
            "started_at": [f"2026-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T02:00:00Z" for i in range(nights)],
            "tags": [{} for _ in range(nights)],
        }
    ).reindex(columns=RUN_COLUMNS)
    frames = []
    per_step = SERIES_PER_STEP + (TAIL_SERIES if tails else [])
    steps = max(1, n_series // len(per_step))
    for step in range(steps):
        shift = np.ones(nights)
        if rng.random() < changes:
            shift[int(rng.integers(nights // 2, nights - 5)) :] = 0.85
        for op, metric, sign in per_step:
            e = np.empty(nights)
            e[0] = rng.standard_normal()
            for t in range(1, nights):
                e[t] = 0.3 * e[t - 1] + np.sqrt(1 - 0.09) * rng.standard_normal()
            noise = np.exp(CV[metric] * e) if metric in CV else 1 + 0.05 * e  # (the tails: skewed)
            value = 1000.0 * noise * (shift if sign < 0 else 1 / shift)
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": run_ids,
                        "step": f"{step:02d}-run",
                        "repetition": 1,
                        "phase": "run",
                        "mix": f"mix{step:02d}",
                        "threads": 8,
                        "audit": "none",
                        "operation": op,
                        "metric": metric,
                        "value": value,
                    }
                )
            )
    return runs, pd.concat(frames, ignore_index=True)[METRIC_COLUMNS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--changes", type=float, default=0.1, help="share of steps with a lasting step down")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--no-tails", action="store_true", help="only throughput, avg and p99 (before issue 47)")
    args = ap.parse_args()
    runs, metrics = history(args.series, args.nights, args.changes, args.seed, tails=not args.no_tails)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu0, wall0 = time.process_time(), time.time()
    out = regress(runs, metrics, "quick", RegressOptions())
    cpu, wall = time.process_time() - cpu0, time.time() - wall0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    counts = out.table["verdict"].value_counts().to_dict()
    print(f"{len(out.table)} series x {args.nights} nights: {cpu:.1f} CPU-s ({wall:.1f} s wall)")
    print(f"peak RSS {rss:.0f} MB (before regress: {rss0:.0f} MB)")
    print(f"verdicts: {counts}; exit {out.exit_code}: {out.reason}")
    ok = cpu < 60 and rss < 300
    print(f"target 60 CPU-s and 300 MB: {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
