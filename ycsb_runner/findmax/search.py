"""The search behind ``ycsb-runner findmax``: the highest ``-target`` rate that meets a latency bound.

Pure functions of the probes so far (no I/O); ``ycsb_runner.findmax.runner`` runs the probes.

A **probe** is one run step at a fixed YCSB ``-target``. It passes when

* the achieved throughput (over the step's steady-state window, from ``warmup_s`` to the stop, counted by
  YCSB's status lines) is at least :data:`MIN_ACHIEVED` (97 %) of its target: below that the server (or
  the client) could not keep up;
* the bound holds on the same window: the worst operation's p99 (or p95, or average) latency is at most
  the limit;
* the error rate (failed / returned operations) is at most ``--max-error-rate``.

The **search** (:func:`next_target`): from a start rate, multiply by :data:`GROWTH` while probes pass; after
the first failure, bisect (the geometric mean) between the highest passing target below the lowest failing
one and that failing one, until they are within the resolution (5 % by default) of each other. When the
first probe fails, the start is divided by :data:`GROWTH` until one passes. The found maximum
(:func:`found_max`) is that highest passing target.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ycsb_runner.errors import UserError

MIN_ACHIEVED = 0.97  # achieved / target of a passing probe
GROWTH = 2.0  # the factor of the geometric phase
DEFAULT_RESOLUTION_PCT = 5.0
DEFAULT_MAX_PROBES = 12
DEFAULT_PROBE_S = 10
# the steady-state window of a probe starts after this share of its length, unless the suite sets warmup_s
DEFAULT_WARMUP_SHARE = 0.2

# option -> the operations.csv column the bound applies to
BOUND_METRICS = {"p99": "p99_us", "p95": "p95_us", "avg": "average_latency_us"}
_UNITS_US = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(us|µs|ms|s)\s*$")


def parse_latency(text: str, option: str) -> float:
    """``10ms`` -> 10000.0 (µs); ``500us``, ``0.2s``; a one-line UserError for anything else."""
    m = _DURATION.match(str(text))
    value = float(m.group(1)) * _UNITS_US[m.group(2)] if m else math.nan
    if not (math.isfinite(value) and value > 0):
        raise UserError(
            f"{option} {text}: give a latency with its unit, e.g. 10ms, 500us or 0.2s (above zero)"
        )
    return value


def format_us(us: float) -> str:
    """10000.0 -> ``10 ms``; 500.0 -> ``500 µs``."""
    if us >= 1e6:
        return f"{us / 1e6:g} s"
    if us >= 1e3:
        return f"{us / 1e3:g} ms"
    return f"{us:g} µs"


@dataclass(frozen=True)
class Bound:
    """A latency bound: ``statistic`` (p99, p95 or avg) of every operation at most ``limit_us``."""

    statistic: str
    limit_us: float

    @property
    def column(self) -> str:
        return BOUND_METRICS[self.statistic]

    @property
    def label(self) -> str:
        return f"{self.statistic} <= {format_us(self.limit_us)}"


def make_bound(p99: str | None = None, p95: str | None = None, avg: str | None = None) -> Bound:
    """The one bound given (``--p99 10ms``); a one-line UserError for none or several."""
    given = {k: v for k, v in (("p99", p99), ("p95", p95), ("avg", avg)) if v is not None}
    if len(given) != 1:
        raise UserError(
            "findmax needs exactly one latency bound: --p99, --p95 or --avg with a unit (e.g. --p99 10ms)"
            + (f"; got {', '.join('--' + k for k in given)}" if given else "")
        )
    ((stat, text),) = given.items()
    return Bound(stat, parse_latency(text, f"--{stat}"))


@dataclass(frozen=True)
class FindmaxOptions:
    """What ``findmax`` searches for and how (the CLI's options)."""

    mix: str | None  # None: the suite's only mix
    bound: Bound
    max_error_rate: float = 0.01
    threads: int | None = None  # None: the suite's highest thread count
    probe_s: int = DEFAULT_PROBE_S
    max_probes: int = DEFAULT_MAX_PROBES
    resolution_pct: float = DEFAULT_RESOLUTION_PCT
    start: int | None = None  # None: a quarter of the suite's estimated_throughput

    def check(self) -> None:
        """One-line errors for values the search cannot use."""
        if not (math.isfinite(self.resolution_pct) and 0.1 <= self.resolution_pct <= 100):
            raise UserError(
                f"--resolution {self.resolution_pct:g}: give a percentage from 0.1 to 100, e.g. 5"
            )
        if self.probe_s < 2:
            raise UserError(f"--probe-s {self.probe_s}: a probe needs at least 2 seconds")
        if self.max_probes < 2:
            raise UserError(f"--max-probes {self.max_probes}: the search needs at least 2 probes")
        if self.threads is not None and self.threads < 1:
            raise UserError(f"--threads {self.threads}: give at least 1")
        if self.start is not None and self.start < 1:
            raise UserError(f"--start {self.start}: give a rate of at least 1 op/s")
        rate = self.max_error_rate
        if not (math.isfinite(rate) and 0 <= rate <= 1):
            raise UserError(f"--max-error-rate {rate}: must be a number from 0 to 1 (e.g. 0.01)")


@dataclass
class Probe:
    """One probe's outcome (``manifest.json``'s ``findmax.probes``)."""

    step: str
    target: int
    throughput_ops_s: float | None
    latency_us: float | None  # the bound's statistic, worst operation
    worst_operation: str | None
    error_rate: float
    passed: bool
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def judge_probe(
    step: str,
    target: int,
    throughput_ops_s: float | None,
    latencies_us: Mapping[str, float],
    error_rate: float,
    bound: Bound,
    max_error_rate: float,
) -> Probe:
    """The verdict on one probe from its steady-state figures (*latencies_us*: operation -> the bound's
    statistic). The reasons name what failed, not by how much: the probe's figures stand beside them in
    the table (``search_frame``), which then fits 80 columns."""
    reasons: list[str] = []
    achieved = throughput_ops_s or 0.0
    if achieved < MIN_ACHIEVED * target:
        reasons.append(f"< {MIN_ACHIEVED:.0%} of target")
    worst = max(latencies_us, key=lambda op: latencies_us[op]) if latencies_us else None
    latency = latencies_us[worst] if worst is not None else None
    if latency is None:
        reasons.append("no latency figures in the steady-state window")
    elif latency > bound.limit_us:
        reasons.append(f"{worst} > {format_us(bound.limit_us)}")  # (the bound names the statistic)
    if error_rate > max_error_rate:
        reasons.append(f"errors > {max_error_rate:.3%}")
    return Probe(step, int(target), throughput_ops_s, latency, worst, error_rate, not reasons, reasons)


def _bracket(probes: Sequence[Probe]) -> tuple[int | None, int | None]:
    """(the highest passing target below the lowest failing one, the lowest failing target)."""
    failed = [p.target for p in probes if not p.passed]
    hi = min(failed) if failed else None
    passed = [p.target for p in probes if p.passed and (hi is None or p.target < hi)]
    return (max(passed) if passed else None), hi


def found_max(probes: Sequence[Probe]) -> int | None:
    """The highest target that met the bound below every failing one (None: none met it)."""
    return _bracket(probes)[0]


def converged(probes: Sequence[Probe], resolution_pct: float) -> bool:
    """The bracket is within the resolution: lowest failing target <= highest passing x (1 + resolution),
    or no integer rate lies between them."""
    lo, hi = _bracket(probes)
    return lo is not None and hi is not None and (hi <= lo * (1 + resolution_pct / 100) or hi - lo <= 1)


def next_target(
    probes: Sequence[Probe], start: int, resolution_pct: float, max_probes: int, floor: int = 1
) -> int | None:
    """The target of the next probe, or None when the search is over (converged, out of probes, or no
    rate of at least *floor* ops/s met the bound)."""
    floor = max(1, int(floor))
    if not probes:
        return max(floor, int(start))
    if len(probes) >= max_probes or converged(probes, resolution_pct):
        return None
    lo, hi = _bracket(probes)
    if hi is None:  # every probe passed: grow
        assert lo is not None
        return int(math.ceil(lo * GROWTH))
    if lo is None:  # every probe at or below hi failed: shrink, down to the floor once
        down = max(int(hi / GROWTH), floor)
        return down if down < hi else None
    mid = int(round(math.sqrt(lo * hi)))
    return mid if lo < mid < hi else None


def start_rate(opts: FindmaxOptions, estimated_throughput: float) -> int:
    return opts.start if opts.start is not None else max(10, int(estimated_throughput / 4))


def summary(opts: FindmaxOptions, probes: Sequence[Probe], start: int, done: bool) -> dict[str, Any]:
    """``manifest.json``'s ``findmax``: the search's parameters, its probes and what it found."""
    lo, hi = _bracket(probes)
    return {
        "mix": opts.mix,
        "bound": {
            "statistic": opts.bound.statistic,
            "limit_us": opts.bound.limit_us,
            "label": opts.bound.label,
        },
        "max_error_rate": opts.max_error_rate,
        "threads": opts.threads,
        "probe_s": opts.probe_s,
        "max_probes": opts.max_probes,
        "resolution_pct": opts.resolution_pct,
        "start_ops_s": start,
        "min_achieved": MIN_ACHIEVED,
        "probes": [p.to_json() for p in probes],
        "max_ops_s": lo,
        "lowest_failing_ops_s": hi,
        "converged": converged(probes, opts.resolution_pct),
        "done": done,
    }


def search_frame(search: dict[str, Any]) -> Any:
    """One row per probe: step, target, achieved throughput, the bound's latency, errors, verdict (pass or
    fail) and why it failed (a column of its own, so that the verdict stays one word at 80 columns)."""
    import pandas as pd

    cols = ["step", "target_ops_s", "achieved_ops_s", "latency_ms", "error_rate", "verdict", "why"]
    rows = [
        {
            "step": p["step"],
            "target_ops_s": p["target"],
            "achieved_ops_s": p["throughput_ops_s"],
            "latency_ms": p["latency_us"] / 1e3 if p["latency_us"] is not None else None,
            "error_rate": p["error_rate"],
            "verdict": "pass" if p["passed"] else "fail",
            "why": "; ".join(p["reasons"]),
        }
        for p in search.get("probes", [])
    ]
    return pd.DataFrame(rows, columns=cols)


def overload_floor(search: Mapping[str, Any]) -> float | None:
    """The least that a probe above the found maximum achieved, when it is under what a passing probe at
    the maximum must achieve: the server delivers less once overloaded than it sustains paced (the embedded
    server, 4 threads: 418 ops/s passed, 436-566 achieved 364-372, 3 Dec 2026). A load just over the
    maximum may then fall that far, and a search run again may stop anywhere between. None otherwise."""
    found = search.get("max_ops_s")
    if found is None:
        return None
    over = [
        p["throughput_ops_s"]
        for p in search.get("probes", [])
        if not p["passed"] and p["target"] > found and p["throughput_ops_s"] is not None
    ]
    low = min(over, default=None)
    return low if low is not None and low < MIN_ACHIEVED * found else None


def found_text(search: dict[str, Any]) -> str:
    """``max 1200 ops/s under p99 <= 10 ms (lowest failing 1250; within 5 %)``, and when overloaded probes
    achieved less than the maximum: ``...; overloaded, it fell to 900 ops/s)``."""
    bound = search["bound"]["label"]
    found = search.get("max_ops_s")
    if found is None:
        return f"no probed rate met {bound}"
    hi = search.get("lowest_failing_ops_s")
    how = (
        f"lowest failing {hi}; within {search['resolution_pct']:g} %"
        if search.get("converged")
        else (f"lowest failing {hi}; not converged" if hi else "no probe failed: raise --max-probes")
    )
    if (floor := overload_floor(search)) is not None:
        how += f"; overloaded, it fell to {floor:.0f} ops/s"
    return f"max {found} ops/s under {bound} ({how})"
