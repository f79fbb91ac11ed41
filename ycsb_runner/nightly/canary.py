"""The canaries in ``regress``'s verdict: was it the machine or the database? (pure over frames)

The canary series of a suite's history (phase ``canary``, ``ycsb_runner.execute.canary``) measure what the
database cannot change: the load generator's BasicDB capacity, the round trip to the server, this host's CPU
steal and the CPU other processes used. Each is read as a **slowdown**, the log ratio by which the night was
worse than the canary's normal (capacity: normal / night; round trip: night / normal; the host's shares: the
CPU left to the run, (100 - normal %) / (100 - night %)).

**When a canary moved.** On night t a canary's normal is the median of its :data:`NORMAL_NIGHTS` nights before
t (at least :data:`MIN_NIGHTS`), its noise the larger of the scaled MAD of those nights' slowdowns against
that median and the spread within those nights (the root mean square of half the log difference of the night's
two measurements, before and after the steps: three nights' MAD alone once put a 44 % slower load generator on
a busy shared host beyond 4 of its "noise" of 0.6 %, where its two probes of one night differ by 20-40 %
there); the night moved when its slowdown is above :data:`K_NOISE` times that noise and above the canary's
floor (:data:`FLOORS`: what is too small to matter whatever the noise). A night on which any judged canary
(:data:`JUDGED`) moved is an **environment night**.

The CPU other processes used over the run (``canary_others_cpu_pct``) is recorded but not judged: on a
shared host it rises whenever the run leaves CPU idle, so a slower database raises it too (the nightly
integration test's throttled-server nights: 85-87 % of the host's CPU to others, normal nights 61-68 %).

**What regress does with them.**

* An environment night older than a series' newest ``--window`` nights is left out of that series: it is not
  the database's normal, and a change that it alone shows is not the database's.
* A regression whose nights (from the night it began to the newest) include fewer than ``--confirm`` nights
  with no canary moved is the environment's (verdict ``environment``, exit 2: could not tell), unless its
  change is more than :data:`FAR` times the largest canary slowdown of those nights (both as log ratios): a
  database that got 4x slower while the load generator got 20 % slower is the database's (log 1.39
  against 2.5 x log 1.25 = 0.56).
* Changes that began on the same night are one event (:func:`events`), with the canaries of its nights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.runs.history import CANARY

NORMAL_NIGHTS = 20  # nights before a night that make a canary's normal
MIN_NIGHTS = 3  # fewer nights before it: whether the canary moved on that night is not known
K_NOISE = 4.0  # a canary moved when its slowdown is above this many of its own noise...
# ... and above its floor (log ratio): 10 % less load generator capacity or CPU for the run, 50 % more round
# trip (a ping's median on a busy 2-core host here moved 26 % between two normal nights: 190 -> 240 µs)
FLOORS = {
    "canary_ops_s": math.log(1.10),
    "canary_rtt_us": math.log(1.50),
    "canary_steal_pct": math.log(1.10),
    "canary_others_cpu_pct": math.log(1.10),
}
# a change more than this many times the canary's slowdown (log ratios) is the database's. Measured in the
# canary integration test (4 Dec, a busy shared host): on the nights with the load generator throttled the
# database's 8 series changed 0.49-1.60 times its BasicDB slowdown (81-94 %); on the throttled server's
# nights 3.3-8.8 times the BasicDB's drift from its normal (24-36 %, under its noise: not moved). 2.5 lies
# between the two (their geometric middle is 2.3), on the side of calling it the environment
FAR = 2.5
# the canaries whose moves regress reads (canary_others_cpu_pct: recorded, see the module's docstring)
JUDGED = ("canary_ops_s", "canary_rtt_us", "canary_steal_pct")

_WHAT = {
    "canary_ops_s": "the load generator {op} was {pct} % slower",
    "canary_rtt_us": "the round trip to the server was {pct} % longer",
    "canary_steal_pct": "this host's CPU steal left {pct} % less CPU",
    "canary_others_cpu_pct": "other processes on this host left {pct} % less CPU",
}


@dataclass(frozen=True)
class Move:
    """One canary's night that was worse than its normal by more than its noise."""

    metric: str
    operation: str  # the load generator's name for canary_ops_s
    run_id: str
    slowdown: float  # log ratio toward worse
    noise: float  # the canary's own noise (log units) on the nights before

    @property
    def text(self) -> str:
        """E.g. "the load generator local was 40 % slower on night-10"."""
        pct = 100.0 * -math.expm1(-self.slowdown)  # as a share of the normal capacity
        if self.metric == "canary_rtt_us":
            pct = 100.0 * math.expm1(min(self.slowdown, 700.0))  # e**700: far beyond what is shown
        shown = f"{pct:.0f}" if pct < 1e6 else "over 1,000,000"  # a huge round trip is not "inf %"
        return f"{_WHAT[self.metric].format(op=self.operation, pct=shown)} on {self.run_id}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "canary": self.metric,
            "operation": self.operation,
            "run_id": self.run_id,
            "slowdown": self.slowdown,
            "noise": self.noise,
            "text": self.text,
        }


def slowdown(metric: str, value: np.ndarray | float, normal: float) -> np.ndarray:
    """How much worse *value* is than *normal* for this canary, as a log ratio (> 0: worse)."""
    v = np.asarray(value, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "canary_ops_s":
            return np.log(normal / v)
        if metric == "canary_rtt_us":
            return np.log(v / normal)
        return np.log((100.0 - normal) / np.maximum(100.0 - v, 1e-6))  # a share of the host's CPU, in %


def night_moves(
    metric: str, operation: str, values: np.ndarray, run_ids: list[str], within: np.ndarray | None = None
) -> list[Move]:
    """The nights of one canary series (*values* per night of *run_ids*, NaN where not measured) on which it
    moved beyond its noise toward worse; *within*: per night half the log difference of its two
    measurements (NaN where it had one)."""
    floor = FLOORS[metric]
    out = []
    for t in range(values.size):
        known = ~np.isnan(values[:t])
        before = values[:t][known][-NORMAL_NIGHTS:]
        if np.isnan(values[t]) or before.size < MIN_NIGHTS:
            continue
        normal = float(np.median(before))
        past = slowdown(metric, before, normal)
        noise = 1.4826 * float(np.median(np.abs(past - np.median(past))))
        if within is not None:
            w = within[:t][known][-NORMAL_NIGHTS:]
            if np.any(~np.isnan(w)):
                noise = max(noise, float(np.sqrt(np.nanmean(w * w))))
        s = float(slowdown(metric, values[t], normal))
        if s > max(K_NOISE * noise, floor):
            out.append(Move(metric, operation, run_ids[t], s, noise))
    return out


@dataclass
class CanaryNights:
    """Every canary of the runs judged: the moves per run, and how many canary series there were."""

    moves: dict[str, list[Move]]  # run_id -> the canaries that moved that night
    series: int  # canary series in the history of these runs
    nights_known: int  # nights on which at least one canary could be judged
    measured: frozenset[str] = frozenset()  # the runs with a canary value (a sound one)
    left_out: tuple[str, ...] = ()  # "<canary> on <run>" of each value that is no measurement (valid_values)

    @property
    def environment(self) -> set[str]:
        return set(self.moves)

    def on(self, run_ids: list[str]) -> list[Move]:
        return [m for r in run_ids for m in self.moves.get(r, [])]


def canary_nights(metrics: pd.DataFrame, run_ids: list[str]) -> CanaryNights:
    """The canaries of *metrics* (the history's rows of the runs *run_ids*, oldest first): per series the
    night's value is the median of its repetitions (before and after the steps)."""
    rows, left_out = valid_values(metrics[(metrics["phase"] == CANARY) & metrics["metric"].isin(JUDGED)])
    moves: dict[str, list[Move]] = {}
    known: set[int] = set()
    groups = list(rows.groupby(["mix", "operation", "metric"], sort=True)) if not rows.empty else []
    for (_mix, operation, metric), part in groups:
        nightly = part.groupby("run_id")["value"].median()
        values = np.array([nightly.get(r, np.nan) for r in run_ids], dtype=float)
        half = part[part["value"] > 0].groupby("run_id")["value"].agg(lambda v: np.ptp(np.log(v)) / 2)
        counts = part.groupby("run_id")["value"].size()
        within = np.array([half.get(r, np.nan) if counts.get(r, 0) >= 2 else np.nan for r in run_ids])
        ok = np.flatnonzero(~np.isnan(values))
        known |= {int(i) for i in ok if np.sum(~np.isnan(values[:i])) >= MIN_NIGHTS}
        for m in night_moves(str(metric), str(operation), values, run_ids, within):
            moves.setdefault(m.run_id, []).append(m)
    measured = frozenset(str(r) for r in rows["run_id"])
    return CanaryNights(moves, len(groups), len(known), measured, left_out)


def valid_values(rows: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The canary rows whose value is a measurement (a finite number: above 0 for a capacity or a round
    trip, 0-100 for a share of the CPU), as floats; and "<canary> on <run>" of each one left out (text,
    NaN, inf, a negative capacity: a history edited or damaged by hand, never a night that did not move)."""
    values = pd.to_numeric(rows["value"], errors="coerce").to_numpy(dtype=float)
    share = rows["metric"].astype(str).str.endswith("_pct").to_numpy(dtype=bool)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(values) & np.where(share, (values >= 0) & (values <= 100), values > 0)
    bad = rows[~ok]
    left_out = tuple(dict.fromkeys(f"{m} on {r}" for m, r in zip(bad["metric"], bad["run_id"], strict=True)))
    return rows[ok].assign(value=values[ok]), left_out


def without_environment(
    part: pd.DataFrame, environment: set[str], window: int
) -> tuple[pd.DataFrame, list[str]]:
    """A series' nights (*part*, oldest first) without the environment nights older than its newest *window*
    nights, and the run ids left out."""
    older = part.iloc[: max(0, len(part) - window)]
    out = older["run_id"].isin(environment)
    dropped = [str(r) for r in older.loc[out, "run_id"]]
    if not dropped:
        return part, []
    return part[~part["run_id"].isin(dropped)], dropped


def attribution(
    change_nights: list[str], change_pct: float, nights: CanaryNights, confirm: int, *, tail: bool = False
) -> tuple[bool, list[Move]]:
    """(the environment explains the change, the canaries that moved on its nights): a change of
    *change_pct* % on *change_nights* (from the night it began to the newest) is the environment's when
    fewer than *confirm* of its nights had no canary move and it is not more than FAR times their largest
    slowdown. A *tail* latency (a percentile the load generator measures) has no such bound when the load
    generator itself moved: its stalls go into the tail whole (a throttled load generator's READ p99 grew
    more than 48x, FAR times its 79 % slowdown, in the real-run test)."""
    moved = nights.on(change_nights)
    if not moved:
        return False, []
    clean = sum(1 for r in change_nights if r not in nights.moves)
    if clean >= confirm:
        return False, moved
    if tail and any(m.metric == "canary_ops_s" for m in moved):
        return True, moved
    size = abs(math.log1p(change_pct / 100.0)) if change_pct > -100 else math.inf
    return size <= FAR * max(m.slowdown for m in moved), moved


def events(table: pd.DataFrame, flagged: list[str], tested: int) -> list[dict[str, Any]]:
    """The changes of *table*'s series whose verdict is in *flagged*, one per night where they began (oldest
    first): its run, how many series of the *tested* ones and which (step and figure, change %), and
    whether most series of a step or of the suite moved (``most``)."""
    part = table[table["verdict"].isin(flagged)]
    if part.empty:
        return []
    tested_rows = table[~table["verdict"].isin(["untested", "accepted"])]
    per_step = tested_rows.groupby(["phase", "mix", "threads", "audit"], dropna=False).size()
    out = []
    for run, group in part.groupby("change_run", sort=True):
        steps = group.groupby(["phase", "mix", "threads", "audit"], dropna=False).size()
        most = len(group) * 2 > tested or any(n * 2 > per_step.get(k, 0) and n >= 2 for k, n in steps.items())
        out.append(
            {
                "change_run": run,
                "change_tags": str(group["change_tags"].iloc[0]),
                "series": len(group),
                "of": tested,
                "most": bool(most),
                "verdicts": sorted(set(group["verdict"])),
                "members": [
                    f"{r['phase']} {r['mix']} {r['operation']} {r['metric']} {r['change_pct']:+.0f} %"
                    for r in group.to_dict("records")
                ],
            }
        )
    return out


def canary_lines(nights: CanaryNights | None, newest: list[str]) -> list[str]:
    """What the canaries said of the *newest* nights (the ones judged), for the notes."""
    if nights is None:
        return ["canaries ignored (--ignore-canaries)"]
    left = _left_out_line(nights.left_out)
    if not nights.series:
        return ["no canaries in these runs (bench measures them unless --no-canaries)", *left]
    missing = [r for r in newest if r not in nights.measured]
    lines = [f"canary moved: {m.text}" for m in nights.on(newest)]
    if not lines and not nights.nights_known:
        lines = [f"{nights.series} canary series, too few nights to know their noise (need {MIN_NIGHTS + 1})"]
    elif not lines and len(missing) < len(newest):
        which = f"the newest {len(newest)} nights"
        if missing:
            which = f"{len(newest) - len(missing)} of {which}"
        lines = [f"{nights.series} canary series: none moved on {which}"]
    if missing:  # never "none moved" for a night no canary measured
        when = "then" if len(missing) > 1 else "that night"
        lines.append(f"no canary on {_some(missing)}: whether the environment moved {when} is not known")
    return lines + left


def _some(items: list[str] | tuple[str, ...], shown: int = 3) -> str:
    return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")


def _left_out_line(left_out: tuple[str, ...]) -> list[str]:
    """The note of the canary values ``valid_values`` left out (none: no line)."""
    if not left_out:
        return []
    return [f"{len(left_out)} canary value(s) left out, not a measurement: {_some(left_out)}"]
