"""``regress``: regression / improvement / no change per series of a suite's history (pure over frames).

A series is one step cell (phase, mix, threads, audit) x operation x metric, one value per night (the median
of the night's repetitions), over the completed runs with the newest run's parameter fingerprint. Each series
is judged by :func:`ycsb_runner.nightly.changepoint.judge_series`, in the direction the study registry gives
the metric (``ycsb_runner.studies``).

**Multiple testing.** The series of one step cell (its operations' throughput and latencies) move together:
a slower host or a slower build shows on all of them at once. So the correction is hierarchical: a step's
p-value is the Simes combination of its series' p-values (valid for positively dependent tests), the steps'
p-values are corrected together (Holm by default, or Benjamini-Hochberg), and within a step each series'
p is corrected over that step's series; a series' ``p_adjusted`` is the larger of its step's and its own.
A series is flagged when ``p_adjusted`` is below ``alpha`` and the change is at least ``min_effect`` %.
(Holm over all series, the previous scheme, needed p < alpha / 16 for the 16 series of `quick`, and missed
a -61 % night whose series all had p around 0.001.)

**Lifecycle.** A regression found on an earlier night stays a regression (``open``) while its series has
not recovered, whatever tonight's window says; it was flagged at alpha / (number of steps), the strictest
threshold of the correction. It recovers, for good, on the first night its newest nights are back within
a quarter of ``min_effect`` of the level before it (``window.RECOVERED``): without that hysteresis a
false alarm that hovered near ``min_effect`` came back as a new alarm each time it crossed it (a third of the
alarms under AR(1) 0.8 and drift in ``bench/detection_bench.py``), and at half of it a sustained 10 % step
at 5 % noise was closed by noise on some nights after its alarm. A change point E-Divisive places a few
nights before the regression (``changepoint.OWN_CHANGE_NIGHTS``) is taken as the regression's own. A flag
stands as the night that raised it saw the history (its change points then), even when tonight's change
points would cut its baseline elsewhere.

**Noise.** Per series, the smallest change a full window could show at this noise and history length
(``detectable_pct``); a series where that is larger than ``min_effect`` and nothing was flagged is
"cannot tell", never "no change". A baseline's spread is at least that of its series over all its nights
before the window (shifts of level left out), shrunk toward that of the suite's series of its metric by
how few they are (``window.SpreadPrior``): 3 quiet nights of a step's max (9 %, where the suite's other max
series spread 21-67 %) are not its noise, while a series of many nights keeps about its own.

**Accepted changes.** An open regression stays until someone accepts it (``regress accept``, recorded in
the history): for a series with an accepted change, the nights before the change's run are no longer its
baseline; until enough nights since it are there to test (``MIN_BASELINE + confirm``), its verdict is
``accepted``, a decided pass.

Exit codes: 0 no regression; 1 a regression; 2 could not decide (too little history, newest run not
completed, nothing comparable, no series able to detect ``min_effect``). Never 0 when no series was judged
or accepted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.analyse.stats import adjust
from ycsb_runner.nightly import canary, window
from ycsb_runner.nightly.changepoint import MAX_BASELINE, MIN_BASELINE, SuiteAt, judge_series
from ycsb_runner.nightly.distribution import DISTRIBUTION, QUANTILES, distribution_rows
from ycsb_runner.nightly.regress_options import CORRECTIONS, RegressOptions
from ycsb_runner.runs.alerts import alert_id
from ycsb_runner.runs.history import ACCEPT_COLUMNS, DURATION, SERIES_KEYS, series_id
from ycsb_runner.runs.metrics import PERCENTILE_METRICS, higher_is_better
from ycsb_runner.runs.series import SeriesNights

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"
CANNOT_TELL = "cannot tell"  # tested, nothing flagged, but the noise hides a change of --min-effect
UNTESTED = "untested"
ACCEPTED = "accepted"  # an accepted change, too few nights since it to test the series again: a pass
ENVIRONMENT = "environment"  # a change the canaries explain (ycsb_runner.nightly.canary): could not tell
STEP_KEYS = ["phase", "mix", "threads", "audit"]  # one step cell: its series are corrected as a family

EXIT_OK, EXIT_REGRESSION, EXIT_UNDECIDED = 0, 1, 2

# the terminal's table, and what it keeps first at 80 columns: what changed, how much, how sure, since when
TERMINAL_COLUMNS = (
    "phase",
    "mix",
    "threads",
    "operation",
    "metric",
    "verdict",
    "change_pct",
    "p_adjusted",
    "change_run",
    "alert_id",
    "triage",
    "detectable_pct",
    "before_median",
    "after_median",
    "noise",
    "needs_nights",
    "needs_repetitions",
)
TERMINAL_PRIORITY = (
    "mix",
    "operation",
    "metric",
    "verdict",
    "change_pct",
    "p_adjusted",
    "phase",
    "alert_id",  # hidden at 80 columns: the lines after the table name each untriaged alert's series
    "change_run",
    "triage",
)

COLUMNS = [
    *SERIES_KEYS,
    "verdict",
    "direction",
    "before_median",
    "after_median",
    "change_pct",
    "p_value",
    "p_adjusted",
    "test",
    "change_run",
    "change_tags",
    "detectable_pct",
    "baseline_from",
    "baseline_nights",
    "window_nights",
    "spread_pct",
    "noise",
    "step_p_adjusted",
    "nights",
    "note",
    "alert_id",  # a flagged series' alert (``ycsb_runner.runs.alerts``): "" when not flagged
    "triage",  # its triage state in the history (filled by ``regress_service.run_regress``)
    "repetitions",
    "night_share_pct",  # of its night-to-night variance, the share repeating does not average away
    "needs_nights",
    "needs_repetitions",
    "needs_minutes",
]
# what would let a series detect --min-effect (``plan``): more nights at today's noise, or more repetitions a
# night (its value their median), and what those cost in minutes a night (from the steps' durations)
PLAN_COLUMNS = [
    "phase",
    "mix",
    "threads",
    "operation",
    "metric",
    "detectable_pct",
    "spread_pct",
    "noise",
    "baseline_nights",
    "repetitions",
    "night_share_pct",
    "needs_nights",
    "needs_repetitions",
    "needs_minutes",
]
# an acceptance that applies to a series of this result: its record, and nights since its change_run
APPLIED_COLUMNS = [*ACCEPT_COLUMNS, "nights_since", "settling"]


@dataclass
class RegressResult:
    table: pd.DataFrame
    exit_code: int
    reason: str
    suite: str
    newest: str | None
    runs_used: list[str] = field(default_factory=list)
    series_values: dict[tuple, SeriesNights] = field(default_factory=dict)  # for the report
    options: RegressOptions = field(default_factory=RegressOptions)
    accepts: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=APPLIED_COLUMNS))
    canaries: canary.CanaryNights | None = None  # None: --ignore-canaries
    events: list[dict[str, Any]] = field(default_factory=list)  # changes grouped by the night they began
    plan: dict[str, Any] = field(default_factory=dict)  # what would let the suite detect --min-effect

    @property
    def canary_lines(self) -> list[str]:
        """What the canaries said of the nights judged (the newest --window ones)."""
        return canary.canary_lines(self.canaries, self.runs_used[-self.options.window :])

    left_out: dict[tuple, list[str]] = field(default_factory=dict)  # series_id -> runs with no finite value

    @property
    def correction_text(self) -> str:
        return CORRECTIONS[self.options.correction]

    def summary(self) -> dict[str, Any]:
        t = self.table
        return {
            "suite": self.suite,
            "newest_run": self.newest,
            "runs": len(self.runs_used),
            "exit_code": self.exit_code,
            "decision": self.reason,
            "series_tested": int((~t["verdict"].isin([UNTESTED, ACCEPTED])).sum()) if not t.empty else 0,
            "regressions": int((t["verdict"] == REGRESSION).sum()) if not t.empty else 0,
            "cannot_tell": int((t["verdict"] == CANNOT_TELL).sum()) if not t.empty else 0,
            "improvements": int((t["verdict"] == IMPROVEMENT).sum()) if not t.empty else 0,
            "environment": int((t["verdict"] == ENVIRONMENT).sum()) if not t.empty else 0,
            "accepted": int((t["verdict"] == ACCEPTED).sum()) if not t.empty else 0,
            "alpha": self.options.alpha,
            "min_effect_pct": self.options.min_effect_pct,
            "confirm": self.options.confirm,
            "window": self.options.window,
            "correction": self.correction_text,
            "nights_left_out": sum(len(v) for v in self.left_out.values()),
            "accepts": json.loads(self.accepts.to_json(orient="records", force_ascii=False)),
            "canaries": {
                "read": self.canaries is not None,
                "series": self.canaries.series if self.canaries is not None else 0,
                "moved": [
                    m.as_dict()
                    for m in (self.canaries.on(self.runs_used) if self.canaries is not None else [])
                ],
                "notes": self.canary_lines,
            },
            "events": self.events,
            "plan": self.plan,
        }


def _tags(t: Any) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((t or {}).items())) if isinstance(t, dict) else ""


def _empty(
    suite: str, newest: str | None, reason: str, opts: RegressOptions, used: list[str]
) -> RegressResult:
    return RegressResult(pd.DataFrame(columns=COLUMNS), EXIT_UNDECIDED, reason, suite, newest, used, {}, opts)


def regress(
    runs: pd.DataFrame,
    metrics: pd.DataFrame,
    suite: str,
    opts: RegressOptions,
    accepts: pd.DataFrame | None = None,
) -> RegressResult:
    """Judge the newest run of *runs* (one suite's, filtered, oldest first) against the ones before it.

    *metrics* holds the history's metric rows of those runs (``ycsb_runner.runs.history.METRIC_COLUMNS``);
    *accepts* the suite's accepted changes (``History.accepts``): per series the newest one whose change
    run is among the series' runs applies.
    """
    same, undecided = _comparable_runs(runs, suite, opts)
    if undecided is not None:
        return undecided
    newest_id = str(runs.iloc[-1]["run_id"])
    used = [str(r) for r in same["run_id"]]
    order = {rid: i for i, rid in enumerate(used)}
    tags = dict(zip(same["run_id"], same["tags"], strict=True))
    m = metrics[metrics["run_id"].isin(order) & metrics["metric"].isin(opts.metrics)]
    if m.empty:
        return _empty(suite, newest_id, "no key figures of these runs in the history", opts, used)
    m, left_out = finite_nights(m)
    groups = _nightly_series(m, order)
    nights = canary.canary_nights(metrics[metrics["run_id"].isin(order)], used) if opts.canaries else None
    rows, values, held, applied = _series_rows(
        groups, nights, newest_id, tags, opts, _accepts_by_series(accepts, suite), len(used)
    )
    if DISTRIBUTION in opts.metrics:  # one test of each step and operation's latency quantiles
        by_series = _accepts_by_series(accepts, suite)
        dist_order = order  # as a scalar series (``_series_nights``): no canary-moved night before the window
        if nights is not None:
            kept, _ = canary.without_environment(
                pd.DataFrame({"run_id": list(order)}), nights.environment, opts.window
            )
            dist_order = {r: i for i, r in enumerate(kept["run_id"])}
        _distribution(metrics, dist_order, newest_id, tags, opts, by_series, rows, values, held, applied)
    table = _series_table(rows, opts)
    if nights is not None:
        _attribute(table, nights, opts)
    _note_left_out(table, held, left_out)
    minutes = step_minutes(metrics, used[-opts.window :])
    _cost(table, minutes)
    result = _result(table, suite, newest_id, used, values, opts, held, applied, nights)
    result.plan = suite_plan(result.table, opts, minutes)
    if result.plan.get("line") and result.exit_code == EXIT_UNDECIDED and "could not tell" in result.reason:
        result.reason += f"; {result.plan['line']}"
    if opts.window > len(used):  # each series judged with the windows its nights hold (window_for)
        n = len(used)
        result.reason += f"; --window {opts.window} is more than the {n} nights: windows up to {n} tested"
    return _with_left_out(result, left_out)


def _series_rows(
    groups: list[tuple[Any, pd.DataFrame]],
    nights: canary.CanaryNights | None,
    newest_id: str,
    tags: dict,
    opts: RegressOptions,
    by_series: dict[tuple[str, ...], pd.DataFrame],
    n_nights: int,
) -> tuple[list[dict[str, Any]], dict[tuple, SeriesNights], list[dict[str, Any]], list[dict[str, Any]]]:
    """Each series' row (judged when it was measured in the newest run and its accepted change is not too
    recent), its nights for the report, the rows of series whose accepted change is too recent to test,
    and the acceptances applied. Each series is judged with the noise of the suite's series
    (``window.SuiteNights``) on *n_nights* nights."""
    # (a group's rows are in run id order: its newest night is its largest _night, not its last row)
    newest = [part["run_id"].iloc[int(np.argmax(part["_night"].to_numpy()))] for _, part in groups]
    steps = {
        tuple(key[: len(STEP_KEYS)])
        for (key, _), last in zip(groups, newest, strict=True)
        if last == newest_id
    }
    series_alpha = opts.alpha / max(1, len(steps))  # an earlier night's flag: the strictest threshold
    rows: list[dict[str, Any]] = []
    values: dict[tuple, SeriesNights] = {}
    held: list[dict[str, Any]] = []  # series whose accepted change is too recent to test them
    applied: list[dict[str, Any]] = []
    parts = [_series_nights(part, nights, opts) for _key, part in groups]
    shared = _suite_nights([part for part, _ in parts], [key for key, _ in groups], n_nights)
    for i, ((key, _), (part, left_out)) in enumerate(zip(groups, parts, strict=True)):
        row: dict[str, Any] = dict(zip(SERIES_KEYS, key, strict=True))
        row["nights"] = len(part)
        row["_runs"] = part["run_id"].tolist()
        values[key] = SeriesNights(part[["run_id", "value", "low", "high", "n"]].reset_index(drop=True))
        if part["run_id"].iloc[-1] != newest_id:
            row.update(verdict=UNTESTED, note="not measured in the newest run", test="none")
            rows.append(row)
            continue
        acc = _acceptance(by_series.get(series_id(key)), part["run_id"].tolist(), opts)
        if acc is not None:
            applied.append(acc[1])
            values[key].change_points, values[key].change_index = [acc[0]], acc[0]
            if acc[1]["settling"]:
                held.append(_accepted_row(row, *acc, part, tags, opts))
                continue
        _judge_row(
            row,
            part,
            values[key],
            tags,
            opts,
            alpha=series_alpha,
            accepted_from=acc[0] if acc is not None else 0,
            suite=shared.view(i, part["_night"].to_numpy(int), n_nights),
        )
        if left_out:
            note = f"{len(left_out)} night(s) left out, their canaries moved: {', '.join(left_out)}"
            row["note"] = "; ".join(n for n in (str(row.get("note") or ""), note) if n)
        rows.append(row)
    return rows, values, held, applied


def _distribution(
    metrics: pd.DataFrame,
    order: dict[str, int],
    newest_id: str,
    tags: dict,
    opts: RegressOptions,
    by_series: dict[tuple[str, ...], pd.DataFrame],
    rows: list[dict[str, Any]],
    values: dict[tuple, SeriesNights],
    held: list[dict[str, Any]],
    applied: list[dict[str, Any]],
) -> None:
    """The ``latency_distribution`` rows (``nightly.distribution``) into *rows* and *values*, each from its
    accepted change on (``regress accept`` takes them like any series; too recent: held as accepted); a
    shift toward worse flagged on an earlier night stays open until it recovers or is accepted."""
    found: dict[tuple, tuple[int, dict[str, Any]]] = {}

    def start_of(key: tuple, runs: list[str]) -> int:
        acc = _acceptance(by_series.get(series_id(key)), runs, opts)
        if acc is None:
            return 0
        found[key] = acc
        return acc[0]

    finite = finite_nights(metrics[metrics["run_id"].isin(order)])[0]
    newest = finite[finite["run_id"] == newest_id]
    more, more_values = distribution_rows(
        finite,
        order,
        newest_id,
        window=opts.window,
        confirm=opts.confirm,
        alpha=opts.alpha,
        open_alpha=opts.alpha / _members(newest, opts.metrics),  # an earlier night's flag
        min_effect_pct=opts.min_effect_pct,
        start_of=start_of,
    )
    values.update(more_values)
    for row in more:
        key = tuple(row[k] for k in SERIES_KEYS)
        acc = found.get(key)
        if acc is not None:
            applied.append(acc[1])
            if acc[1]["settling"]:
                held.append(_accepted_row(row, *acc, values[key].frame, tags, opts))
                continue
        rows.append(row)


def _members(newest: pd.DataFrame, metrics: tuple[str, ...]) -> int:
    """Steps x the most members a step's family has (``_families``) in the newest night's rows *newest*: a
    distribution's p below alpha over it was flagged that night whatever the others' p (Holm of Simes over
    the steps and Holm within a step are never stricter than Bonferroni over all), so it is the threshold
    an earlier night's flag must have met to stay open (``distribution.open_shift``). Counting the steps
    alone held an earlier night's p 1.4e-4 of one step in 40 open, which its correction had not flagged
    (p_adjusted 0.017: bench/tail_bench.py's null suite)."""
    own = newest[newest["metric"].isin(metrics) & ~newest["metric"].isin([*QUANTILES, DISTRIBUTION])]
    quantiles = newest[newest["metric"].isin(QUANTILES)]
    ops = quantiles.groupby([*STEP_KEYS, "operation"], dropna=False)["metric"].nunique()
    per_step = pd.concat(
        [
            own.drop_duplicates([*STEP_KEYS, "operation", "metric"]).groupby(STEP_KEYS, dropna=False).size(),
            (ops >= 2).groupby(level=list(range(len(STEP_KEYS))), dropna=False).sum(),
        ],
        axis=1,
    ).fillna(0)
    if per_step.empty:
        return 1
    return max(1, len(per_step) * int(per_step.sum(axis=1).max()))


def _series_nights(
    part: pd.DataFrame, nights: canary.CanaryNights | None, opts: RegressOptions
) -> tuple[pd.DataFrame, list[str]]:
    """One series' nights, oldest first, without the nights older than the window whose canaries moved
    (``canary.without_environment``), and the run ids of those left out."""
    part = part.sort_values("_night")
    return canary.without_environment(part, nights.environment, opts.window) if nights else (part, [])


def _suite_nights(parts: list[pd.DataFrame], keys: list[Any], n: int) -> window.SuiteNights:
    """The log values of the suite's series (a row each; a series with a value <= 0 has none) on its *n*
    nights, for the noise they share (``window.suite_noise``), the spread of the series of one metric
    (``window.SpreadPrior``) and the night effect (``window.night_effect``: each series turned by whether
    its metric is better higher, left out when neither)."""
    rows = np.full((len(parts), n), np.nan)
    for i, part in enumerate(parts):
        v = part["value"].to_numpy(float)
        if v.size and np.all(v > 0):
            rows[i, part["_night"].to_numpy(int)] = np.log(v)
    metric = SERIES_KEYS.index("metric")
    hib = [higher_is_better(str(key[metric])) for key in keys]
    signs = np.array([0.0 if h is None else (1.0 if h else -1.0) for h in hib])
    return window.SuiteNights(rows, signs, [str(key[metric]) for key in keys])


def _with_left_out(out: RegressResult, left_out: dict[tuple, list[str]]) -> RegressResult:
    """*out* holding the nights ``finite_nights`` left out, their count in its reason."""
    out.left_out = left_out
    if left_out:
        nights = sum(len(v) for v in left_out.values())
        out.reason += f"; {nights} night value(s) left out of {len(left_out)} series (not a number >= 0)"
    return out


def finite_nights(m: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple, list[str]]]:
    """The metric rows whose value is a finite number, 0 or more (no figure of the history is negative),
    and per series (``SERIES_KEYS`` tuple) the runs left out of it: a NaN, inf, negative, missing or text
    value is one bad night of that series, not the whole series'."""
    values = pd.to_numeric(m["value"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        good = np.isfinite(values) & (values >= 0)
    if good.all():
        return m.assign(value=values), {}
    clean = m[good].assign(value=values[good])  # numbers (a history's text values made an object column)
    kept = {(series_id(r[:-1]), r[-1]) for r in clean[[*SERIES_KEYS, "run_id"]].itertuples(index=False)}
    left_out: dict[tuple, list[str]] = {}
    for r in m[~good][[*SERIES_KEYS, "run_id"]].itertuples(index=False):
        key, run = series_id(r[:-1]), str(r[-1])
        if (key, run) not in kept and run not in left_out.get(key, []):  # (a sound repetition counts)
            left_out.setdefault(key, []).append(run)
    return clean, left_out


def _note_left_out(table: pd.DataFrame, held: list[dict[str, Any]], left_out: dict[tuple, list[str]]) -> None:
    """Each series' note names the nights left out of it (``finite_nights``)."""

    def note(old: Any, runs: list[str]) -> str:
        shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        said = f"{len(runs)} night(s) left out: value not a number >= 0 ({shown})"
        return "; ".join(n for n in (str(old or ""), said) if n)

    for i, r in zip(table.index, table[SERIES_KEYS].itertuples(index=False), strict=True):
        if (runs := left_out.get(series_id(r))) is not None:
            table.at[i, "note"] = note(table.at[i, "note"], runs)
    for row in held:
        if (runs := left_out.get(series_id(row[k] for k in SERIES_KEYS))) is not None:
            row["note"] = note(row.get("note"), runs)


def _nightly_series(m: pd.DataFrame, order: dict[str, int]) -> list[tuple[Any, pd.DataFrame]]:
    """Each series (its keys, its nights): per run the median, lowest and highest value and their count,
    ``_night`` the run's place in *order*."""
    nightly = (
        m.groupby([*SERIES_KEYS, "run_id"], dropna=False)["value"]
        .agg(value="median", low="min", high="max", n="size")
        .reset_index()
    )
    nightly["_night"] = nightly["run_id"].map(order)
    return list(nightly.groupby(SERIES_KEYS, dropna=False, sort=True))


def _comparable_runs(
    runs: pd.DataFrame, suite: str, opts: RegressOptions
) -> tuple[pd.DataFrame, RegressResult | None]:
    """The completed runs with the newest run's parameters (its fingerprint), and None; or, when they
    cannot be judged (no runs, the newest did not complete, too few of them), the undecided result."""
    if runs.empty:
        return runs, _empty(suite, None, f"no runs of suite {suite!r} in the history", opts, [])
    newest = runs.iloc[-1]
    newest_id = str(newest["run_id"])
    if newest["status"] != "completed":
        return runs, _empty(
            suite,
            newest_id,
            f"the newest run {newest_id} is {newest['status']}, not completed: nothing to judge",
            opts,
            [],
        )
    same = runs[(runs["fingerprint"] == newest["fingerprint"]) & (runs["status"] == "completed")]
    if len(same) < MIN_BASELINE + opts.confirm:
        other = len(runs[runs["fingerprint"] != newest["fingerprint"]])
        extra = f" ({other} more with other parameters)" if other else ""
        return same, _empty(
            suite,
            newest_id,
            f"{len(same)} completed run(s) with the newest run's parameters{extra}: need at least "
            f"{MIN_BASELINE + opts.confirm} to decide (--confirm {opts.confirm})",
            opts,
            [str(r) for r in same["run_id"]],
        )
    return same, None


def _judge_row(
    row: dict[str, Any],
    part: pd.DataFrame,
    values: SeriesNights,
    tags: dict,
    opts: RegressOptions,
    *,
    alpha: float,
    accepted_from: int,
    suite: SuiteAt | window.SuiteView | None = None,
) -> None:
    """Judge one series tested tonight (*part*: its nights, oldest first; *suite*: the noise of its suite
    before a night, given the index of that night in *part*): its columns into *row*, its change points,
    baseline and noise into *values* (for the report)."""
    hib = higher_is_better(str(row["metric"]))
    j = judge_series(
        part["value"].to_numpy(float),
        window=window_for(opts, len(part) - accepted_from),
        confirm=opts.confirm,
        min_effect_pct=opts.min_effect_pct,
        alpha=alpha,
        worse=0 if hib is None else (-1 if hib else 1),
        permutations=opts.permutations,
        accepted_from=accepted_from,
        suite=suite,
    )
    row.update(_judgement_columns(j, list(part["run_id"]), tags))
    if j.noise is not None:
        rep_var = window.repetition_var(part["low"], part["high"], part["n"])
        row.update(_needs(j, int(np.median(part["n"].to_numpy(int))), opts, alpha, rep_var))
    values.change_points = [int(c) for c in j.change_points]
    values.change_index = j.change_index
    values.baseline = j.baseline
    values.noise_source = _noise_source(suite, len(part))


def _noise_source(suite: SuiteAt | window.SuiteView | None, n: int) -> str:
    """Whose noise the series was judged with (for its evidence): its own, or shrunk toward its suite's (the
    correlation; the spread toward its metric's, ``window.SpreadPrior``)."""
    if not isinstance(suite, window.SuiteView):
        return "the series' own"
    shared = suite.noise(n - 1)
    said = (
        f"the series' own, shrunk toward its suite's ({shared.series} series)"
        if shared
        else "the series' own"
    )
    spread = "; its spread at least its own over its nights, shrunk toward its metric's in the suite"
    return (
        said
        + (spread if suite.spread is not None else "")
        + ("; the suite's night effect removed" if suite.effect is not None else "")
    )


def _needs(
    j: Any, repetitions: int, opts: RegressOptions, alpha: float, rep_var: float | None = None
) -> dict[str, Any]:
    """What would let this series detect ``--min-effect``: the nights more at today's noise (its spread and
    correlation, a full window of ``--window`` nights; NaN: not even MAX_BASELINE nights), the repetitions a
    night (``window.median_noise``, less the night's own share of the spread when its nights' repetitions
    measured it, *rep_var*: ``window.night_share``; NaN: more than MAX_REPETITIONS, or never at that
    share); 0 and today's repetitions when it already can."""
    ks = tuple(range(opts.confirm, opts.window + 1))
    target = opts.min_effect_pct
    nights = window.nights_needed(j.noise, ks, alpha, target, MAX_BASELINE) if target > 0 else None
    if nights == 0 and not j.detectable_pct <= target:  # the plan's coarser nulls put it at the threshold:
        nights = 1  # "0 more nights" beside "cannot tell" said nothing (quiet quick history, normal-09)
    shared = window.night_share(j.noise.spread**2, rep_var, repetitions)
    reps = window.repetitions_needed(repetitions, window.spread_ratio(j.detectable_pct, target), shared)
    return {
        "repetitions": repetitions,
        "night_share_pct": math.nan if rep_var is None else 100.0 * shared,
        "needs_nights": math.nan if nights is None else nights,
        "needs_repetitions": math.nan if reps is None else reps,
    }


def step_minutes(metrics: pd.DataFrame, runs: list[str]) -> dict[tuple, float]:
    """Per step cell (``STEP_KEYS``): the median wall-clock minutes of one repetition of it over *runs*
    (the history's ``duration_s``; empty when the history has none: runs recorded before it was kept)."""
    d = (
        metrics[(metrics["metric"] == DURATION) & metrics["run_id"].isin(runs)]
        if not metrics.empty
        else metrics
    )
    if d.empty:
        return {}
    d = d.assign(value=pd.to_numeric(d["value"], errors="coerce"))  # a damaged value is no duration
    d = d[np.isfinite(d["value"]) & (d["value"] > 0)]
    if d.empty:
        return {}
    med = d.groupby(STEP_KEYS, dropna=False)["value"].median() / 60.0
    return {series_id(k): float(v) for k, v in med.items()}


def _cost(table: pd.DataFrame, minutes: dict[tuple, float]) -> None:
    """needs_minutes: what the extra repetitions of a series' step cost a night (NaN: no durations)."""
    if table.empty:
        return
    for i, r in table.iterrows():
        per = minutes.get(series_id(r[k] for k in STEP_KEYS), math.nan)
        extra = (
            float(r["needs_repetitions"]) - float(r["repetitions"])
            if r["repetitions"] == r["repetitions"]
            else math.nan
        )
        table.at[i, "needs_minutes"] = extra * per if extra == extra else math.nan


def suite_plan(table: pd.DataFrame, opts: RegressOptions, minutes: dict[tuple, float]) -> dict[str, Any]:
    """What would let the suite detect ``--min-effect`` on its most sensitive series: the fewest nights more
    (at today's noise) and the fewest repetitions a night of a run-phase series (``repetitions_for`` names
    it; a load is not repeated), priced as the minutes of every run step's extra repetitions; ``line`` says
    it in one sentence (empty when a series already detects it or none has a noise model)."""
    target = opts.min_effect_pct
    noisy = table[table["detectable_pct"].notna()] if "detectable_pct" in table else table
    out: dict[str, Any] = {
        "min_effect_pct": target,
        "needs_nights": None,
        "needs_repetitions": None,
        "repetitions": None,
        "extra_minutes": None,
        "repetitions_for": None,
        "line": "",
    }
    if noisy.empty:
        return out
    best = float(noisy["detectable_pct"].min())
    out["detectable_pct"] = best
    if best <= target:
        out.update(
            needs_nights=0, line=f"the most sensitive series detects {best:.1f} % (--min-effect {target:g})"
        )
        return out
    nights = pd.to_numeric(noisy["needs_nights"], errors="coerce").dropna()
    said = []
    if not nights.empty:
        out["needs_nights"] = int(nights.min())
        said.append(f"{out['needs_nights']} more night{'s' if out['needs_nights'] != 1 else ''}")
    repeated = noisy[
        (noisy["phase"] == "run") & noisy["needs_repetitions"].notna() & noisy["repetitions"].notna()
    ]
    if not repeated.empty:  # only run steps repeat: a night loads once, whatever `repetitions` says
        chosen = repeated.loc[pd.to_numeric(repeated["needs_repetitions"]).idxmin()]
        r, now = int(chosen["needs_repetitions"]), int(chosen["repetitions"])
        out.update(needs_repetitions=r, repetitions=now, repetitions_for=_series_name(chosen))
        cost = ""
        run_minutes = sum(m for k, m in minutes.items() if k[0] == "run")
        if run_minutes:  # every run step repeated as often
            out["extra_minutes"] = (r - now) * run_minutes
            cost = f" +{out['extra_minutes']:.{0 if out['extra_minutes'] >= 10 else 1}f} min,"
        unmeasured = "" if chosen.get("night_share_pct") == chosen.get("night_share_pct") else UNMEASURED
        said.append(f"{r} repetitions a night (now {now};{cost} for {out['repetitions_for']}{unmeasured})")
    if not said:
        out["line"] = f"to detect {target:g} %: not with more nights or repetitions at this noise"
        return out
    out["line"] = f"to detect {target:g} %: {', or '.join(said)}"
    if not minutes:
        out["line"] += " (no step durations in the history to price them)"
    return out


# a plan of repetitions made before nights of several repetitions measured the night's own share of the spread
UNMEASURED = (
    "; if none of its spread is the night's own: "
    f"{window.MIN_REPEATED_NIGHTS} nights of 2 repetitions measure it"
)


def _series_name(row: pd.Series) -> str:
    """A series in a few words: ``a-read50 READ p99_us`` (its mix, operation and metric)."""
    return " ".join(str(row[k]) for k in ("mix", "operation", "metric") if row[k] == row[k] and str(row[k]))


def window_for(opts: RegressOptions, nights: int) -> int:
    """--window, or a series' *nights* when it has fewer (never below --confirm): the windows tried are those
    its nights hold (a --window larger than the history crashed the change-point search, issue 52)."""
    return max(opts.confirm, min(opts.window, nights))


def _series_table(rows: list[dict[str, Any]], opts: RegressOptions) -> pd.DataFrame:
    """The table of every series' row, its p-values corrected over the tested ones and each decided."""
    table = pd.DataFrame(rows, columns=[*COLUMNS, "_open", "_runs"])
    for col in ("repetitions", "night_share_pct", "needs_nights", "needs_repetitions", "needs_minutes"):
        table[col] = pd.to_numeric(table[col], errors="coerce")
    table["_open"] = table["_open"].eq(True)  # (NaN where no series was judged: not open)
    for col in (
        "verdict",
        "direction",
        "test",
        "change_run",
        "change_tags",
        "note",
        "baseline_from",
        "noise",
    ):
        table[col] = table[col].astype(object).where(table[col].notna(), "")
    tested = table["verdict"] != UNTESTED
    _correct(table, tested, opts.correction)
    for i in table.index[tested]:
        _decide(table, i, opts)
    return table


def _judgement_columns(j: Any, run_ids: list[str], tags: dict) -> dict[str, Any]:
    """The table's columns from one series' judgement (why it was or was not flagged)."""
    row: dict[str, Any] = {
        "before_median": j.before_median,
        "after_median": j.after_median,
        "change_pct": j.change_pct,
        "p_value": j.p_value,
        "test": j.test,
        "note": j.note,
        "verdict": "" if j.tested else UNTESTED,
        "detectable_pct": j.detectable_pct,
        "window_nights": j.window_nights or math.nan,
        "_open": j.open,
    }
    if j.tested:
        change_run = run_ids[j.change_index]
        row.update(change_run=change_run, change_tags=_tags(tags.get(change_run)))
    if j.baseline[0] >= 0:
        row.update(baseline_from=run_ids[j.baseline[0]], baseline_nights=j.baseline[1] - j.baseline[0])
    if j.noise is not None:
        row.update(spread_pct=j.noise.spread_pct, noise=j.noise.name)
    return row


def _correct(table: pd.DataFrame, tested: pd.Series, method: str) -> None:
    """p_adjusted = max(the step's corrected Simes p, the series' p corrected within its step); a latency
    quantile's series whose step and operation has a tested ``latency_distribution`` row is corrected within
    that row's family instead (``_families``), and its p_adjusted is at least the distribution's."""
    table["p_adjusted"] = math.nan
    table["step_p_adjusted"] = math.nan
    if not tested.any():
        return
    members, children = _families(table[tested])
    steps = list(members)
    step_p = [simes([float(table.at[i, "p_value"]) for i in members[k]]) for k in steps]
    step_adj = dict(zip(steps, adjust(step_p, method), strict=True))
    for k, idx in members.items():
        within = adjust([float(table.at[i, "p_value"]) for i in idx], method)
        for i, p in zip(idx, within, strict=True):
            table.at[i, "step_p_adjusted"] = step_adj[k]
            table.at[i, "p_adjusted"] = max(step_adj[k], p)
            kids = children.get(i, [])
            for j, pj in zip(
                kids, adjust([float(table.at[j, "p_value"]) for j in kids], method), strict=True
            ):
                table.at[j, "step_p_adjusted"] = step_adj[k]
                table.at[j, "p_adjusted"] = max(float(table.at[i, "p_adjusted"]), pj)


def _families(part: pd.DataFrame) -> tuple[dict[tuple, list[Any]], dict[Any, list[Any]]]:
    """The tested rows *part* as families: per step cell its members (row indexes), and per
    ``latency_distribution`` row the quantile series of its operation (p50 ... max), which are its children
    rather than members of the step. The distribution's p is a test of them all at once (Bonferroni over its
    quantiles), so the step's family counts one operation's tail once, not once per quantile and again for
    the distribution (which made a doubled p99.9 pay for six series in a step of five plus its
    distribution); a quantile series is flagged only with its distribution (a hierarchy: the family's test
    first, then its members corrected among themselves). Without a distribution row, every series is a
    member of its step, as before."""
    keys = [tuple(r) for r in part[[*STEP_KEYS, "operation"]].itertuples(index=False)]
    dist = {k: i for i, k, m in zip(part.index, keys, part["metric"], strict=True) if m == DISTRIBUTION}
    members: dict[tuple, list[Any]] = {}
    children: dict[Any, list[Any]] = {}
    for i, k, m in zip(part.index, keys, part["metric"], strict=True):
        if m in QUANTILES and k in dist:
            children.setdefault(dist[k], []).append(i)
        else:
            members.setdefault(k[:-1], []).append(i)
    return members, children


def simes(p_values: list[float]) -> float:
    """Simes' combination of the p-values of one family: min over i of m * p_(i) / i (NaN left out)."""
    p = sorted(v for v in p_values if v == v)
    if not p:
        return math.nan
    return min(1.0, min(len(p) * v / (i + 1) for i, v in enumerate(p)))


def _decide(table: pd.DataFrame, i: Any, opts: RegressOptions) -> None:
    hib = higher_is_better(str(table.at[i, "metric"]))
    pct = float(table.at[i, "change_pct"])
    if bool(table.at[i, "_open"]) and hib is not None:
        table.at[i, "verdict"], table.at[i, "direction"] = REGRESSION, "worse"
        return
    significant = table.at[i, "p_adjusted"] < opts.alpha and abs(pct) >= opts.min_effect_pct
    if hib is None or not significant or pct != pct:
        detectable = float(table.at[i, "detectable_pct"])
        if hib is not None and detectable > opts.min_effect_pct:
            table.at[i, "verdict"], table.at[i, "direction"] = CANNOT_TELL, "?"
            note = f"a {opts.min_effect_pct:g} % change is below what this noise shows ({detectable:.0f} %)"
            table.at[i, "note"] = "; ".join(n for n in (str(table.at[i, "note"]), note) if n)
            return
        table.at[i, "verdict"], table.at[i, "direction"] = NO_CHANGE, "same" if hib is not None else "n/a"
        return
    better = (pct > 0) == hib
    table.at[i, "verdict"] = IMPROVEMENT if better else REGRESSION
    table.at[i, "direction"] = "better" if better else "worse"


def _attribute(table: pd.DataFrame, nights: canary.CanaryNights, opts: RegressOptions) -> None:
    """Regressions the canaries explain (``canary.attribution``) become ``environment``, their note naming
    the canary; a regression on nights whose canaries moved that stands anyway says which moved."""
    for i in table.index[table["verdict"] == REGRESSION]:
        runs = list(table.at[i, "_runs"])
        start = str(table.at[i, "change_run"])
        change_nights = runs[runs.index(start) :] if start in runs else runs[-opts.window :]
        tail = str(table.at[i, "metric"]) in {*PERCENTILE_METRICS, DISTRIBUTION}
        change = float(table.at[i, "change_pct"])
        env, moved = canary.attribution(change_nights, change, nights, opts.confirm, tail=tail)
        if not moved:
            continue
        first = moved[0]  # on the first night of the change that a canary moved
        if env:
            table.at[i, "verdict"], table.at[i, "direction"] = ENVIRONMENT, "?"
            note = f"{first.text}: environment"
        else:
            note = f"{first.text}, yet the change stands (more nights or far larger than the canary's)"
        table.at[i, "note"] = "; ".join(n for n in (str(table.at[i, "note"]), note) if n)


def _result(
    table: pd.DataFrame,
    suite: str,
    newest_id: str,
    used: list[str],
    values: dict[tuple, SeriesNights],
    opts: RegressOptions,
    held: list[dict[str, Any]] | None = None,
    applied: list[dict[str, Any]] | None = None,
    nights: canary.CanaryNights | None = None,
) -> RegressResult:
    table = table.drop(columns=["_open", "_runs"], errors="ignore")
    counts = table["verdict"].value_counts()
    n_reg = int(counts.get(REGRESSION, 0))
    n_env = int(counts.get(ENVIRONMENT, 0))
    judged = int(counts.get(NO_CHANGE, 0) + counts.get(IMPROVEMENT, 0) + n_reg)
    blind = int(counts.get(CANNOT_TELL, 0))
    tail = f"; {blind} cannot tell a {opts.min_effect_pct:g} % change at their noise" if blind else ""
    found = canary.events(table, [REGRESSION, ENVIRONMENT], judged + blind + n_env)
    for e in found:  # the canaries that moved from the night it began to the newest (None: not read)
        since = used[used.index(e["change_run"]) :] if e["change_run"] in used else used[-opts.window :]
        e["canaries"] = [m.text for m in nights.on(since)] if nights is not None else None
    if n_env:
        tail += f"; {n_env} changed with the environment ({_environment_text(table)})"
    if n_reg:
        code, reason = EXIT_REGRESSION, f"{_regressed_text(n_reg, judged + blind + n_env, found)}{tail}"
    elif n_env:
        code, reason = EXIT_UNDECIDED, f"no regression the canaries do not explain{tail}: could not tell"
    elif judged:
        code, reason = EXIT_OK, f"no regression in {judged} series{tail}"
    elif blind:
        smallest = float(table.loc[table["verdict"] == CANNOT_TELL, "detectable_pct"].min())
        code = EXIT_UNDECIDED
        reason = (
            f"no series can detect a {opts.min_effect_pct:g} % change at this noise and history "
            f"(the most sensitive shows {smallest:.0f} %): could not tell"
        )
    else:
        code, reason = EXIT_UNDECIDED, "no series could be tested (too little history in every series)"
    table, code, reason = _with_accepted(table, held or [], code, reason)
    table = with_alert_ids(table, suite)
    table = table.sort_values(
        ["verdict", "p_adjusted"],
        key=lambda s: s.map(_verdict_rank) if s.name == "verdict" else s,
        kind="stable",
    ).reset_index(drop=True)
    return RegressResult(
        table, code, reason, suite, newest_id, used, values, opts, _applied(applied or []), nights, found
    )


def _regressed_text(n_reg: int, of: int, found: list[dict[str, Any]]) -> str:
    """ "3 of 16 series regressed", or, when most series of a step or of the suite changed on one night, "one
    change at night-10: 14 of 16 series regressed"."""
    most = [e for e in found if e["most"] and REGRESSION in e["verdicts"]]
    if len(most) == 1 and most[0]["series"] >= n_reg:
        return f"one change at {most[0]['change_run']}: {n_reg} of {of} series regressed"
    return f"{n_reg} of {of} series regressed"


def _environment_text(table: pd.DataFrame) -> str:
    """The canary named in the first environment series' note ("the load generator local was 40 % slower on
    night-10")."""
    note = str(table.loc[table["verdict"] == ENVIRONMENT, "note"].iloc[0])
    return next(
        (n.removesuffix(": environment") for n in note.split("; ") if n.endswith(": environment")), note
    )


def _verdict_rank(v: str) -> int:
    ranks = {REGRESSION: 0, ENVIRONMENT: 1, IMPROVEMENT: 2, ACCEPTED: 3, CANNOT_TELL: 4, NO_CHANGE: 5}
    return ranks.get(v, 6 if v == UNTESTED else 7)


# --- accepted changes ----------------------------------------------------------------------------------


def _accepts_by_series(accepts: pd.DataFrame | None, suite: str) -> dict[tuple[str, ...], pd.DataFrame]:
    """The suite's acceptances per series (``series_id``), oldest first."""
    if accepts is None or accepts.empty:
        return {}
    mine = accepts[accepts["suite"] == suite]
    ids = mine[SERIES_KEYS].apply(lambda r: series_id(r.tolist()), axis=1)
    return {k: mine[ids == k] for k in dict.fromkeys(ids)}


def _acceptance(
    candidates: pd.DataFrame | None, run_ids: list[str], opts: RegressOptions
) -> tuple[int, dict[str, Any]] | None:
    """(night of its change_run, record) of the newest acceptance among *candidates* whose change run is
    one of the series' *run_ids* (oldest first); None when none is."""
    if candidates is None:
        return None
    night = {rid: i for i, rid in enumerate(run_ids)}
    usable = candidates[candidates["change_run"].isin(night)]
    if usable.empty:
        return None
    rec = {c: usable.iloc[-1][c] for c in ACCEPT_COLUMNS}
    i = night[rec["change_run"]]
    since = len(run_ids) - i
    rec.update(nights_since=since, settling=since < MIN_BASELINE + opts.confirm)
    return i, rec


def _accepted_row(
    row: dict[str, Any],
    i: int,
    rec: dict[str, Any],
    part: pd.DataFrame,
    tags: dict[Any, Any],
    opts: RegressOptions,
) -> dict[str, Any]:
    """The table row of a series whose accepted change (at night *i*) is too recent to test it again."""
    x = part["value"].to_numpy(float)
    before = float(np.median(x[:i])) if i else math.nan
    after = float(np.median(x[i:]))
    more = MIN_BASELINE + opts.confirm - int(rec["nights_since"])
    run = str(rec["change_run"])
    return {
        **row,
        "verdict": ACCEPTED,
        "direction": "",
        "before_median": before,
        "after_median": after,
        "change_pct": 100.0 * (after - before) / abs(before) if before else math.nan,
        "test": "none",
        "change_run": run,
        "change_tags": _tags(tags.get(run)),
        "note": f"change accepted at {run} by {rec['accepted_by']}: testing resumes after {more} more "
        f"night{'s' if more != 1 else ''}",
    }


def _with_accepted(
    table: pd.DataFrame, held: list[dict[str, Any]], code: int, reason: str
) -> tuple[pd.DataFrame, int, str]:
    """The table with the *held* series (verdict ``accepted``) added, and the decision with them: an
    accepted change is a decided pass, so it alone makes exit 0, not 2."""
    if not held:
        return table, code, reason
    extra = pd.DataFrame(held, columns=COLUMNS)
    text = ["direction", "test", "change_run", "change_tags", "note", "baseline_from", "noise"]
    extra[text] = extra[text].astype(object).where(extra[text].notna(), "")
    table = extra if table.empty else pd.concat([table, extra], ignore_index=True)
    n = len(held)
    settling = f"{n} series with an accepted change too recent to test"
    if code == EXIT_UNDECIDED:  # nothing else judged: the accepted changes decide
        return table, EXIT_OK, f"no regression: {settling}; the others: {reason}"
    return table, code, f"{reason}; {settling}"


def _applied(applied: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(applied, columns=APPLIED_COLUMNS)


ALERTED = (REGRESSION, IMPROVEMENT)  # the verdicts that raise an alert


def with_alert_ids(table: pd.DataFrame, suite: str) -> pd.DataFrame:
    """*table* with its ``alert_id`` column: the stable id of each regressed or improved series' alert (its
    suite, series and change run), "" for the other rows; ``triage`` "" until the history fills it."""
    ids = [
        alert_id(suite, series_id(r[k] for k in SERIES_KEYS), str(r["change_run"]))
        if r["verdict"] in ALERTED and isinstance(r["change_run"], str) and r["change_run"]
        else ""
        for r in table.to_dict("records")
    ]
    return table.assign(alert_id=pd.Series(ids, index=table.index, dtype=object), triage="")


def open_regressions(table: pd.DataFrame) -> pd.DataFrame:
    """The regressions of a result's table: one row per series, with the run where each began."""
    return table[table["verdict"] == REGRESSION].reset_index(drop=True)


def flagged(table: pd.DataFrame) -> pd.DataFrame:
    """The series a reader must see: regressions, changes the canaries explain, improvements."""
    return table[table["verdict"].isin([REGRESSION, ENVIRONMENT, IMPROVEMENT])].reset_index(drop=True)


def night_values(series: pd.DataFrame) -> np.ndarray:
    return series["value"].to_numpy(float)


def open_changes(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The open regressions grouped by the run where they began, oldest first: change_run, change_tags,
    series (how many)."""
    reg = open_regressions(table)
    if reg.empty:
        return []
    groups = reg.groupby(["change_run", "change_tags"], sort=False).size().reset_index(name="series")
    return sorted(groups.to_dict("records"), key=lambda g: str(g["change_run"]))


def accepted_changes(applied: pd.DataFrame) -> list[dict[str, Any]]:
    """The acceptances in effect, one per ``regress accept`` (change run, who, when, why): series (how
    many) and settling (how many of them are too recent to test)."""
    if applied.empty:
        return []
    keys = ["change_run", "accepted_by", "accepted_at", "why"]
    groups = applied.groupby(keys, sort=False).agg(series=("metric", "size"), settling=("settling", "sum"))
    out = groups.reset_index().to_dict("records")
    for g in out:
        g["series"], g["settling"] = int(g["series"]), int(g["settling"])
    return sorted(out, key=lambda g: str(g["accepted_at"]))


def accept_rows(
    result: RegressResult, *, by: str, why: str, at: str, operations: list[str] | None = None
) -> list[dict[str, Any]]:
    """The acceptances (``ACCEPT_COLUMNS``) of the regressions open in *result*: one per series (of the
    given *operations*, else all), from the run where its change began."""
    found = open_regressions(result.table)
    if operations:
        found = found[found["operation"].isin(operations)]
    return [
        {
            "suite": result.suite,
            **{k: r[k] for k in SERIES_KEYS},
            "change_run": r["change_run"],
            "accepted_at_run": result.newest,
            "accepted_by": by,
            "accepted_at": at,
            "why": why,
        }
        for r in found.to_dict("records")
    ]
