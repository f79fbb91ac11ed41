"""Agreement of ycsb-runner's E-Divisive with MongoDB's (signal-processing-algorithms 2.1.6), with cost.

    .venv/bin/python bench/edivisive_check.py [--permutations 999] [--alpha 0.05] [--lengths 30,60,120,365]
                                              [--mem-limit-mb 2048] [--no-real]

Runs ``ycsb_runner.nightly.changepoint.e_divisive`` (min_size 2, its default) and the reference,
``signal_processing_algorithms.energy_statistics.energy_statistics.e_divisive`` (pvalue = alpha, the same
number of permutations), on the same series: synthetic ones generated here with a fixed seed (per length
30, 60, 120 and 365: Gaussian noise of 3, 5 and 10 %, no step, one step down of 5, 10 or 20 % at a random
point in the middle half, two steps of 10 % (down at a third, down again at two thirds)) and the real
Perfherder series of bench/data/mozilla-perfherder. The reference lives in its own virtualenv
(``.cache/spa-venv``, made with this machine's python3.11 and numpy < 2, setuptools < 71, which its C
extension's build needs). Each implementation runs in a child process per length (and one for the real
series), so that its CPU time and peak RSS are its own (``resource.getrusage`` in the child); ours runs with
its address space capped at --mem-limit-mb, so that the (permutations, n, n) arrays of today's implementation
fail there (reported "out of memory") instead of taking the machine down.

Prints per series the change points of each (and the true ones of the synthetic series); per length group the
CPU seconds and peak RSS of each child; and overall the share of the reference's change points matched by one
of ours within +-1 index, the share of ours matched by the reference, and the share of the true change points
each finds within +-1.

How the reference's algorithm differs from ours (read from its source, 2.1.6):

* significance: at each step it takes the best candidate over all current segments (per segment the split
  with the largest statistic, then the largest of those) and tests it against one permutation null: each
  permutation shuffles every segment on its own and takes the largest statistic over all segments; the search
  stops at the first candidate that is not significant. Ours splits recursively and tests each segment on its
  own against that segment's permutations, and goes on with the other segments after a non-significant one;
* p-value: #(null >= observed) / (R + 1), significant when <= pvalue; ours
  (1 + #(null >= observed)) / (R + 1), significant when < alpha;
* permutations: numpy's global generator, unseeded (this script seeds it, so runs repeat); ours a generator
  seeded per segment length, so the same segment always gets the same permutations;
* statistic: the same E-statistic, distance exponent 1 (|x - y|; Euclidean norm for vectors), scaled by
  n m / (n + m), but with V-statistics (within-sample sums divided by n^2, the zero diagonal included) where
  ours uses U-statistics (divided by n (n - 1));
* minimum segment size: none (a single point can be split off); ours min_size 2 on both sides.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realseries_bench import load  # noqa: E402
from bench.reference_venvs import SPA, ensure, run_json  # noqa: E402

SEED = 20261201
NOISES = (0.03, 0.05, 0.10)
STEPS = (0.05, 0.10, 0.20)
LENGTHS = (30, 60, 120, 365)
MATCH = 1  # a change point matches another within +-1 index
THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Case:
    name: str
    group: str
    values: list[float]
    truth: tuple[int, ...] | None  # None: real series, no known truth


def synthetic(lengths: tuple[int, ...], seed: int = SEED) -> list[Case]:
    cases = []
    for n in lengths:
        rng = np.random.default_rng([seed, n])  # the series of a length do not depend on the other lengths
        for cv in NOISES:
            shapes: list[tuple[str, tuple[int, ...], tuple[float, ...]]] = [("no step", (), ())]
            for step in STEPS:
                shapes.append((f"step {step:.0%}", (int(rng.integers(n // 4, 3 * n // 4)),), (step,)))
            shapes.append(("two steps 10 %", (n // 3, 2 * n // 3), (0.10, 0.10)))
            for label, at, sizes in shapes:
                x = 1000.0 * (1 + cv * rng.standard_normal(n))
                for s, size in zip(at, sizes, strict=True):
                    x[s:] *= 1 - size
                cases.append(Case(f"n={n} noise {cv:.0%} {label}", f"n={n}", x.tolist(), at))
    return cases


def real() -> list[Case]:
    return [Case(f"{s.id} ({s.values.size})", "real", s.values.tolist(), None) for s in load()]


_OURS = r"""
import json, resource, sys, time
job = json.load(sys.stdin)
from ycsb_runner.nightly.changepoint import e_divisive
out = []
for x in job["series"]:
    t0 = time.process_time()
    try:
        cps = e_divisive(x, alpha=job["alpha"], permutations=job["permutations"], min_size=2)
        out.append({"cps": sorted(int(c) for c, _ in cps), "cpu": time.process_time() - t0})
    except MemoryError:
        out.append({"error": "out of memory", "cpu": time.process_time() - t0})
usage = resource.getrusage(resource.RUSAGE_SELF)
json.dump({"results": out, "maxrss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, sys.stdout)
"""

_REFERENCE = r"""
import json, resource, sys, time
import numpy as np
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive
job = json.load(sys.stdin)
np.random.seed(job["seed"])
out = []
for x in job["series"]:
    t0 = time.process_time()
    cps = e_divisive(np.asarray(x, dtype=np.float64), pvalue=job["alpha"], permutations=job["permutations"])
    out.append({"cps": sorted(int(c) for c in cps), "cpu": time.process_time() - t0})
usage = resource.getrusage(resource.RUSAGE_SELF)
json.dump({"results": out, "maxrss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, sys.stdout)
"""


@dataclass(frozen=True)
class Run:
    """One child's results for one group of cases: per case the change points (None: failed, with why)."""

    cps: list[list[int] | None]
    why: list[str]
    cpu: float  # CPU seconds of the e_divisive calls (the child's imports not included)
    maxrss_mb: float


def _run(py: Path | str, script: str, cases: list[Case], job: dict[str, Any], limit_mb: int | None) -> Run:
    try:
        raw = run_json(
            py, script, {**job, "series": [c.values for c in cases]}, env=THREADS, limit_mb=limit_mb
        )
    except RuntimeError as err:  # the child died (e.g. out of memory outside an allocation numpy reports)
        return Run([None] * len(cases), [str(err)] * len(cases), float("nan"), float("nan"))
    cps = [r.get("cps") for r in raw["results"]]
    why = [r.get("error", "") for r in raw["results"]]
    return Run(cps, why, sum(r["cpu"] for r in raw["results"]), raw["maxrss_kb"] / 1024)


def _matched(these: list[int], others: list[int]) -> int:
    return sum(any(abs(a - b) <= MATCH for b in others) for a in these)


def _fmt(cps: list[int] | None, why: str) -> str:
    if cps is None:
        return why or "failed"
    return " ".join(map(str, cps)) or "-"


@dataclass
class Tally:
    ref_total: int = 0
    ref_matched: int = 0
    ours_total: int = 0
    ours_matched: int = 0
    truth_total: int = 0
    truth_by_ref: int = 0
    truth_by_ours: int = 0
    compared: int = 0
    skipped: int = 0

    def add(self, case: Case, ref: list[int] | None, ours: list[int] | None) -> None:
        if ref is None or ours is None:
            self.skipped += 1
            return
        self.compared += 1
        self.ref_total += len(ref)
        self.ref_matched += _matched(ref, ours)
        self.ours_total += len(ours)
        self.ours_matched += _matched(ours, ref)
        if case.truth is not None:
            self.truth_total += len(case.truth)
            self.truth_by_ref += _matched(list(case.truth), ref)
            self.truth_by_ours += _matched(list(case.truth), ours)


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f} % ({a}/{b})" if b else "  n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--permutations", type=int, default=999, help="permutations, both (default 999, regress's)"
    )
    ap.add_argument("--alpha", type=float, default=0.05, help="significance, both (default 0.05)")
    ap.add_argument(
        "--lengths", default=",".join(map(str, LENGTHS)), help="synthetic lengths (default 30,60,120,365)"
    )
    ap.add_argument(
        "--mem-limit-mb", type=int, default=2048, help="address space of our child (default 2048)"
    )
    ap.add_argument("--no-real", action="store_true", help="skip the real Perfherder series")
    args = ap.parse_args()
    py, why = ensure(SPA)
    if py is None:
        sys.exit(f"signal-processing-algorithms 2.1.6: cannot install into {SPA.venv}: {why}")
    lengths = tuple(int(v) for v in args.lengths.split(","))
    cases = synthetic(lengths) + ([] if args.no_real else real())
    groups = list(dict.fromkeys(c.group for c in cases))
    job = {"alpha": args.alpha, "permutations": args.permutations, "seed": SEED}
    print(
        f"E-Divisive, alpha {args.alpha:g}, {args.permutations} permutations, seed {SEED}; reference:"
        f" signal-processing-algorithms 2.1.6 from {SPA.venv};"
        f" ours: changepoint.e_divisive (min_size 2) in a child capped at {args.mem_limit_mb} MB"
    )
    tally = Tally()
    costs = []
    for group in groups:
        part = [c for c in cases if c.group == group]
        ref = _run(py, _REFERENCE, part, job, None)
        ours = _run(sys.executable, _OURS, part, job, args.mem_limit_mb)
        costs.append((group, len(part), ref, ours))
        print(f"\n{group}\n    {'case':<40} {'true':<9} {'reference':<22} ours")
        for i, case in enumerate(part):
            truth = "?" if case.truth is None else (" ".join(map(str, case.truth)) or "-")
            found = _fmt(ref.cps[i], ref.why[i])
            print(f"    {case.name:<40} {truth:<9} {found:<22} {_fmt(ours.cps[i], ours.why[i])}")
            tally.add(case, ref.cps[i], ours.cps[i])
    print("\ncost per group: CPU seconds of the e_divisive calls, peak RSS of the child (imports included)")
    print(
        f"{'group':<8} {'series':>6}  {'reference CPU':>13} {'peak RSS':>9}  {'ours CPU':>9} {'peak RSS':>9}"
    )
    for group, count, ref, ours in costs:
        cells = f"{ref.cpu:12.1f}s {ref.maxrss_mb:7.0f}MB  {ours.cpu:8.1f}s {ours.maxrss_mb:7.0f}MB"
        print(f"{group:<8} {count:>6}  {cells}")
    t = tally
    print(f"\nagreement over {t.compared} series both ran ({t.skipped} where one failed or was skipped):")
    print(f"  reference change points matched by ours within +-{MATCH}: {_pct(t.ref_matched, t.ref_total)}")
    print(
        f"  our change points matched by the reference within +-{MATCH}: {_pct(t.ours_matched, t.ours_total)}"
    )
    print(
        f"  true change points (synthetic) found within +-{MATCH}:"
        f" reference {_pct(t.truth_by_ref, t.truth_total)}, ours {_pct(t.truth_by_ours, t.truth_total)}"
    )


if __name__ == "__main__":
    main()
