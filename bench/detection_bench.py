"""Detection quality of `ycsb-runner regress` on synthetic nightly series, next to a naive rule and Otava.

    .venv/bin/python bench/detection_bench.py [--trials 60] [--no-otava]

Series shaped like nightly throughput: 30 nights, Gaussian noise with a coefficient of variation of 3, 5 and
10 %, occasional outliers (each night with probability 5 %: 15-30 % slower, a noisy neighbour), a step down of
5, 10 or 20 % at a random night (10..27), or no step. Every detector is replayed night by night, as cron
would run it: on night t it sees nights 0..t and says whether night t is a regression (the first 6 nights
only build history). Figures:

* recall: the share of step series with an alarm within 2 nights of the step (nights s, s+1, s+2);
* false alarms per 100 nights: alarms on the series without a step, per 100 nights judged.

Detectors: ycsb-runner's (``changepoint.judge_series`` as ``regress`` calls it, --min-effect 5, one series
so no correction: the defaults --alpha 0.01 --confirm 2, then --confirm 1, then --alpha 0.05), the naive
rule "more than X % worse than the previous night" (X = 5 and 10), and Apache Otava 0.8.0 (its t-test split,
``otava.analysis.compute_change_points``, at p < 0.05 and at its default p < 0.001, window 30), installed
by this script from PyPI into its own virtualenv (``.cache/otava-venv``: it pins numpy 2.2) and fed the
same series; Otava raises an alarm on night t when it reports a change point at a night >= t-2 that
makes the series worse, with at least 5 % magnitude, as first seen on night t.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ycsb_runner.analyse.changepoint import judge_series  # noqa: E402
from ycsb_runner.analyse.regress import RegressOptions  # noqa: E402

NIGHTS = 30
FIRST_JUDGED = 6
NOISES = (0.03, 0.05, 0.10)
STEPS = (0.0, 0.05, 0.10, 0.20)
DEFAULTS = RegressOptions()
MIN_EFFECT = DEFAULTS.min_effect_pct
ALPHA = DEFAULTS.alpha
OTAVA_VERSION = "0.8.0"
ROOT = Path(__file__).resolve().parent.parent
OTAVA_VENV = ROOT / ".cache" / "otava-venv"


def make_series(rng: np.random.Generator, cv: float, step: float) -> tuple[np.ndarray, int]:
    x = 1000.0 * (1 + cv * rng.standard_normal(NIGHTS))
    outliers = rng.random(NIGHTS) < 0.05
    x[outliers] *= 1 - rng.uniform(0.15, 0.30, outliers.sum())
    s = int(rng.integers(10, 28)) if step else -1
    if step:
        x[s:] *= 1 - step
    return x, s


def ours(x: np.ndarray, permutations: int, confirm: int, alpha: float) -> list[int]:
    alarms = []
    for t in range(FIRST_JUDGED, NIGHTS):
        j = judge_series(
            x[: t + 1],
            window=DEFAULTS.window,
            permutations=permutations,
            confirm=confirm,
            min_effect_pct=MIN_EFFECT,
        )
        if j.tested and j.p_value < alpha and j.change_pct <= -MIN_EFFECT:
            alarms.append(t)
    return alarms


def naive(x: np.ndarray, pct: float) -> list[int]:
    return [t for t in range(FIRST_JUDGED, NIGHTS) if x[t] < x[t - 1] * (1 - pct / 100)]


_OTAVA_SCRIPT = r"""
import json, sys
from otava.analysis import compute_change_points
out = []
for series in json.load(sys.stdin):
    alarms, seen = [], set()
    for t in range(FIRST, len(series)):
        cps, _ = compute_change_points(series[: t + 1], window_len=30, max_pvalue=PVALUE, min_magnitude=0.0)
        for cp in cps:
            if cp.index in seen or cp.index < t - 2:
                continue
            seen.add(cp.index)
            mean_before, mean_after = cp.stats.mean_1, cp.stats.mean_2
            if mean_after < mean_before * (1 - MIN_EFFECT / 100):
                alarms.append(t)
                break
    out.append(alarms)
json.dump(out, sys.stdout)
"""


def otava_python() -> tuple[Path | None, str]:
    """The virtualenv's python with apache-otava installed, or (None, the pip error)."""
    py = OTAVA_VENV / "bin" / "python"
    check = [str(py), "-c", "import otava.analysis"]
    if py.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return py, ""
    subprocess.run([sys.executable, "-m", "venv", str(OTAVA_VENV)], check=True)
    pip = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", f"apache-otava=={OTAVA_VERSION}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if pip.returncode != 0:
        return None, (pip.stderr or pip.stdout).strip().splitlines()[-1]
    return py, ""


def otava(py: Path, series: list[np.ndarray], pvalue: float) -> list[list[int]]:
    script = (
        _OTAVA_SCRIPT.replace("FIRST", str(FIRST_JUDGED))
        .replace("MIN_EFFECT", str(MIN_EFFECT))
        .replace("PVALUE", str(pvalue))
    )
    proc = subprocess.run(
        [str(py), "-c", script],
        input=json.dumps([s.tolist() for s in series]),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"otava failed: {proc.stderr.strip().splitlines()[-1]}")
    return json.loads(proc.stdout)


def _oracle_stat(x: np.ndarray, cv: float, clip: float) -> np.ndarray:
    """Per series and night: the best window score of the last 1-3 nights, in units of the (known) noise
    around the (known) level, each night's shortfall capped at *clip* (one outlier night counts little)."""
    z = np.clip((1000.0 - x) / (1000.0 * cv), -clip, clip)
    out = np.full(x.shape, -np.inf)
    for k in (1, 2, 3):
        win = np.lib.stride_tricks.sliding_window_view(z, k, axis=1).mean(axis=2) * np.sqrt(k)
        out[:, k - 1 :] = np.maximum(out[:, k - 1 :], win)
    return out


def oracle(rng: np.random.Generator, cv: float, step: float, trials: int) -> tuple[float, float]:
    """(recall within 2 nights, clip) of the best of a few capped window scores for a detector that knows the
    level and the noise, its threshold set so that series without a step give 1 false alarm per 100 nights:
    what the data allow, not a detector anyone can run."""
    quiet = np.array([make_series(rng, cv, 0.0)[0] for _ in range(trials)])
    made = [make_series(rng, cv, step) for _ in range(trials)]
    x, starts = np.array([m[0] for m in made]), np.array([m[1] for m in made])
    night = np.arange(NIGHTS)[None, :]
    window = (night >= starts[:, None]) & (night <= starts[:, None] + 2)
    best = (0.0, 0.0)
    for clip in (1.5, 2.0, 2.5, 3.0, np.inf):
        threshold = np.quantile(_oracle_stat(quiet, cv, clip)[:, FIRST_JUDGED:], 0.99)
        recall = 100.0 * float(((_oracle_stat(x, cv, clip) > threshold) & window).any(axis=1).mean())
        best = max(best, (recall, clip))
    return best


def score(alarms: list[list[int]], starts: list[int]) -> tuple[float, float]:
    """(recall within 2 nights, false alarms per 100 nights) over series of one kind."""
    judged = NIGHTS - FIRST_JUDGED
    if starts[0] < 0:  # no step
        return float("nan"), 100.0 * sum(len(a) for a in alarms) / (judged * len(alarms))
    caught = [any(s <= t <= s + 2 for t in a) for a, s in zip(alarms, starts, strict=True)]
    return 100.0 * float(np.mean(caught)), float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=60, help="series per noise level and step (default 60)")
    ap.add_argument("--permutations", type=int, default=199, help="E-Divisive permutations (default 199)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--alpha", type=float, default=ALPHA, help=f"ycsb-runner's --alpha (default {ALPHA:g})")
    ap.add_argument("--no-otava", action="store_true", help="skip Apache Otava")
    args = ap.parse_args()
    py, why = (None, "skipped (--no-otava)") if args.no_otava else otava_python()
    if py is None:
        print(f"Apache Otava {OTAVA_VERSION}: not run: {why}")
    rng = np.random.default_rng(args.seed)
    otavas = {f"otava p<{p:g}": p for p in (0.05, 0.001)} if py else {}  # Otava's default is 0.001
    ours_settings = {
        "ycsb-runner": (DEFAULTS.confirm, args.alpha),
        "--confirm 1": (1, args.alpha),
        "--alpha 0.05": (DEFAULTS.confirm, 0.05),
    }
    detectors = [*ours_settings, "naive 5 %", "naive 10 %", *otavas]
    print(
        f"{args.trials} series of {NIGHTS} nights per cell; nights {FIRST_JUDGED}..{NIGHTS - 1} judged; "
        f"min effect {MIN_EFFECT:g} %, alpha {args.alpha:g}; outliers 5 % of nights (15-30 % slower)"
    )
    print(f"Apache Otava {OTAVA_VERSION} from {OTAVA_VENV}" if py else "")
    print(f"{'noise':>5} {'step':>5}  " + "  ".join(f"{d:>18}" for d in detectors))
    started = time.time()
    for cv in NOISES:
        for step in STEPS:
            made = [make_series(rng, cv, step) for _ in range(args.trials)]
            series, starts = [m[0] for m in made], [m[1] for m in made]
            results = {
                name: [ours(x, args.permutations, confirm, alpha) for x in series]
                for name, (confirm, alpha) in ours_settings.items()
            }
            results |= {
                "naive 5 %": [naive(x, 5) for x in series],
                "naive 10 %": [naive(x, 10) for x in series],
            }
            for name, p in otavas.items():
                assert py is not None
                results[name] = otava(py, series, p)
            cells = []
            for d in detectors:
                recall, fa = score(results[d], starts)
                cells.append(f"FA {fa:5.2f}/100 nights" if step == 0 else f"recall {recall:5.1f} %")
            print(f"{cv:5.0%} {step:5.0%}  " + "  ".join(f"{c:>18}" for c in cells), flush=True)
    print(
        "what the data allow: a detector that knows the level and the noise, threshold set to 1 false alarm"
        " per 100 nights (2000 series each)"
    )
    for cv in NOISES:
        cells = []
        for step in STEPS[1:]:
            recall, clip = oracle(rng, cv, step, 2000)
            cells.append(f"step {step:.0%}: recall {recall:5.1f} % (cap {clip:g})")
        print(f"{cv:5.0%}        " + "  ".join(cells))
    print(f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
