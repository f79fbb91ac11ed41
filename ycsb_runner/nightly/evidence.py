"""Why a series was flagged, in figures a reviewer can check: the evidence of each flagged series of a
``regress`` result.

Per flagged series: the baseline nights and the tested nights with their values, the noise model it was
judged with and its estimate, the p-value before and after the correction, and what else moved on the tested
nights against the baseline nights: the other series of its step (the client's: "UPDATE avg +31 %") and,
from the run folders (``model.RunResult``), the server's counters (``server_metrics.csv``: opcounters, cache,
CPU, connections) and the client host's (``client_metrics.csv``), each over the rows of the series' step,
the largest change first. The figures are pure (:func:`moved`, :func:`series_evidence`); reading the run
folders is :func:`folder_figures`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ycsb_runner.runs.model import RunResult
    from ycsb_runner.runs.series import SeriesNights

STEP_KEYS = ("phase", "mix", "threads", "audit")
# columns of server_metrics.csv / client_metrics.csv that are not counters of the step
NOT_FIGURES = {"threads", "repetition", "elapsed_s", "dt_s", "wt_cache_max_bytes"}
LABELS = {
    "cpu_pct": "CPU",
    "cpu_core_pct": "CPU (cores)",
    "connections_current": "connections",
    "wt_cache_bytes": "cache bytes",
    "wt_cache_dirty_bytes": "cache dirty bytes",
    "host_cpu_pct": "host CPU",
    "ycsb_cpu_core_pct": "YCSB CPU",
    "ycsb_rss_bytes": "YCSB memory",
}
MIN_MOVE_PCT = 1.0  # smaller changes are not listed
SHOWN = 6  # changes in the one-line summary


@dataclass(frozen=True)
class Moved:
    """One figure's change on the tested nights (median) against the baseline nights (median)."""

    name: str
    before: float
    after: float

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else (math.inf if self.after else 1.0)

    @property
    def size(self) -> float:
        """How far it moved, either way (|log ratio|; a figure from 0 the furthest)."""
        r = self.ratio
        return math.inf if r in (0.0, math.inf) else abs(math.log(r))

    @property
    def text(self) -> str:
        """``server CPU +2 %``, ``cache evictions x4``, ``connections /3`` (from 0: ``from 0``)."""
        r = self.ratio
        if r == math.inf:
            return f"{self.name} from 0 to {self.after:.3g}"
        if r >= 2 or 0 < r <= 0.5:
            f = r if r >= 2 else 1 / r
            return (
                f"{self.name} {'x' if r >= 2 else '/'}{f:.0f}"
                if f >= 10
                else f"{self.name} {'x' if r >= 2 else '/'}{f:.1f}"
            )
        return f"{self.name} {100 * (r - 1):+.0f} %"

    def as_dict(self) -> dict[str, Any]:
        pct = 100 * (self.ratio - 1) if math.isfinite(self.ratio) else None
        return {
            "figure": self.name,
            "before": self.before,
            "after": self.after,
            "change_pct": pct,
            "text": self.text,
        }


def moved(
    figures: dict[str, dict[str, float]],
    baseline: list[str],
    tested: list[str],
    floor_pct: float = MIN_MOVE_PCT,
) -> list[Moved]:
    """The figures of *figures* (run id -> figure -> value) that moved at least *floor_pct* % on the
    *tested* runs (their median) against the *baseline* runs (theirs), the largest change first."""
    names = dict.fromkeys(n for run in (*baseline, *tested) for n in figures.get(run, {}))
    out = []
    for name in names:
        b = [figures[r][name] for r in baseline if name in figures.get(r, {})]
        a = [figures[r][name] for r in tested if name in figures.get(r, {})]
        b, a = [v for v in b if math.isfinite(v)], [v for v in a if math.isfinite(v)]
        if not b or not a:
            continue
        m = Moved(name, float(np.median(b)), float(np.median(a)))
        if m.size >= math.log1p(floor_pct / 100):
            out.append(m)
    return sorted(out, key=lambda m: -m.size)


def nights(row: dict[str, Any], runs: list[str]) -> tuple[list[str], list[str]]:
    """The baseline runs and the tested runs of a flagged series (*runs*: its nights, oldest first): from
    ``baseline_from`` its ``baseline_nights``; from ``change_run`` to the newest."""
    base: list[str] = []
    if row.get("baseline_from") in runs and row.get("baseline_nights") == row.get("baseline_nights"):
        i = runs.index(row["baseline_from"])
        base = runs[i : i + int(row["baseline_nights"])]
    k = int(row["window_nights"]) if row.get("window_nights") == row.get("window_nights") else 1
    tested = runs[runs.index(row["change_run"]) :] if row.get("change_run") in runs else runs[-k:]
    return base, [r for r in tested if r not in base]


def _short(metric: str) -> str:
    return metric.removesuffix("_us").removesuffix("_ops_s").replace("_", " ")


def step_series_figures(
    row: dict[str, Any], series_values: dict[tuple, SeriesNights]
) -> dict[str, dict[str, float]]:
    """Per run, the values of the other series of the flagged series' step (``READ p99``, ``OVERALL
    throughput``): what the client measured beside it."""
    step = tuple(str(row[k]) for k in STEP_KEYS)
    own = (str(row["operation"]), str(row["metric"]))
    out: dict[str, dict[str, float]] = {}
    for key, values in series_values.items():
        if tuple(map(str, key[:4])) != step or (str(key[4]), str(key[5])) == own:
            continue
        name = f"{key[4]} {_short(str(key[5]))}"
        for run, v in zip(values.frame["run_id"], values.frame["value"], strict=True):
            out.setdefault(str(run), {})[name] = float(v)
    return out


def frame_figures(df: pd.DataFrame, row: dict[str, Any], prefix: str) -> dict[str, float]:
    """The mean of each numeric column of a metrics frame (server_metrics / client_metrics) over the rows
    of the flagged series' step (every repetition), named ``prefix + label``."""
    if df.empty:
        return {}
    mask = np.ones(len(df), dtype=bool)
    for k in STEP_KEYS:
        if k in df:
            mask &= df[k].astype(str).to_numpy() == str(row[k])
    part = df[mask]
    out = {}
    for col in part.columns:
        if col in NOT_FIGURES or col in STEP_KEYS:
            continue
        v = pd.to_numeric(part[col], errors="coerce")
        if v.notna().any():
            mean = float(v.mean())
            if math.isfinite(mean):
                out[f"{prefix}{LABELS.get(col, col.replace('_', ' '))}"] = mean
    return out


def open_run(folder: str | Path | None) -> RunResult | None:
    """The run folder as the project's model reads it (``model.RunResult``); None when it cannot be read."""
    from ycsb_runner.errors import UserError
    from ycsb_runner.runs.model import RunResult

    if not folder or not Path(str(folder)).is_dir():
        return None
    try:
        return RunResult.load(str(folder))
    except (UserError, OSError, ValueError, KeyError):
        return None


def folder_figures(run: RunResult | None, row: dict[str, Any]) -> dict[str, float] | None:
    """The server's and the client host's figures of the flagged series' step in one run (None: no run)."""
    from ycsb_runner.errors import UserError

    if run is None:
        return None
    try:
        return {
            **frame_figures(run.server_metrics, row, "server "),
            **frame_figures(run.client_metrics, row, "client "),
        }
    except (UserError, OSError, ValueError):
        return None


def series_evidence(
    row: dict[str, Any],
    series_values: dict[tuple, SeriesNights],
    key: tuple,
    read_folder: Callable[[str, dict[str, Any]], dict[str, float] | None],
) -> dict[str, Any]:
    """The evidence of one flagged series (*row*: its regress table row; *key*: its series_values key):
    nights and values, the noise model, the p-values, and what else moved (*read_folder*: a run's folder
    figures, None when unreadable)."""
    values = series_values[key]
    runs = [str(r) for r in values.frame["run_id"]]
    by_run = dict(zip(runs, values.frame["value"].astype(float), strict=True))
    base, tested = nights(row, runs)
    figures = step_series_figures(row, series_values)
    unread = []
    for run in dict.fromkeys([*base, *tested]):
        got = read_folder(run, row)
        if got is None:
            unread.append(run)
        else:
            figures.setdefault(run, {}).update(got)
    changes = moved(figures, base, tested)
    return {
        "baseline_nights": [{"run": r, "value": by_run[r]} for r in base],
        "tested_nights": [{"run": r, "value": by_run[r]} for r in tested],
        "noise": {
            "model": row.get("noise") or "",
            "spread_pct": _num(row.get("spread_pct")),
            "estimate": values.noise_source,
        },
        "p_value": _num(row.get("p_value")),
        "p_adjusted": _num(row.get("p_adjusted")),
        "moved": [m.as_dict() for m in changes],
        "folders_not_read": unread,
        "summary": "; ".join(m.text for m in changes[:SHOWN]) or "nothing else moved 1 % or more",
    }


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def attach(
    table: pd.DataFrame,
    series_values: dict[tuple, SeriesNights],
    flagged: Iterable[str],
    read_folder: Callable[[str, dict[str, Any]], dict[str, float] | None],
    keys: tuple[str, ...] | list[str],
) -> None:
    """Add the ``evidence`` column to a regress *table*: an object for each series whose verdict is one of
    *flagged*, None for the others."""
    flagged = set(flagged)
    col: list[dict[str, Any] | None] = []
    index = {tuple(map(str, k)): k for k in series_values}
    for row in table.to_dict("records"):
        key = index.get(tuple(str(row[k]) for k in keys))
        col.append(
            series_evidence(row, series_values, key, read_folder)
            if row["verdict"] in flagged and key
            else None
        )
    table["evidence"] = pd.Series(col, index=table.index, dtype=object)
