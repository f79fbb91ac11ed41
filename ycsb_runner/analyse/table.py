"""Per-mix tables of a run, one function per table layout; which one a run gets is the study registry's
choice (``ycsb_runner.analyse.layouts``, through ``RunAnalysis.table``), by the ``study`` the suite declares:

* ``means_table``: mix | throughput (ops/sec) | RAL (µs) | WAL (µs) | CPU (%): client-side YCSB
  averages per mix, the mean over repetitions with n, stdev, min and max; the load row included.
* ``audit_table``: scenario | CpuUsage | MongoDB_RT | MongoDB_Opcounters — audit off vs on per mix from
  the server-side figures, with the change and the verdict of ``stats.ab_table``.
* ``generic_table``: a per-mix table of every figure.

Each returns a :class:`StudyTable`: the frame and, in named fields beside it, its title and the lines that
go with it. ``step_metrics`` gives the per-repetition values every table (and ``compare``) is built from; a
run's :class:`~ycsb_runner.analyse.analysis.RunAnalysis` computes it once and hands it to the tables.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.analyse import stats
from ycsb_runner.analyse.caveats import audit_caveat
from ycsb_runner.operations import MAIN_SECTIONS, WRITE_SECTIONS
from ycsb_runner.runs.metrics import CLIENT_METRICS, METRICS, SERVER_METRICS, higher_is_better
from ycsb_runner.runs.model import RunResult
from ycsb_runner.studies import Study

KEYS = ["phase", "mix", "threads", "audit", "repetition"]
GROUP = ["phase", "mix", "threads", "audit"]
SERVER_FIGURES = tuple(m.removeprefix("server_") for m in SERVER_METRICS)
UNAVAILABLE = "unavailable"
NOT_SAMPLED = "not sampled"


@dataclass(frozen=True)
class StudyTable:
    """A run's per-mix table in its study's layout (*frame*, one row per mix and thread count) and what every
    output of it carries beside the rows: its *title* ("" when untitled: a command names it by its run);
    *audit_unverified*, the run's audit caveat when the layout compares audit off with on and the audit
    could not be verified ("" otherwise); *notes*, what applies to many rows, said once under the table;
    *layout*, the name of the layout that made it; and *unsteady*, the line counting the run's
    non-stationary steps, whose rows the frame flags ("" when none). The analysis (``RunAnalysis.table``)
    fills *layout* and *unsteady*; a layout's ``table`` the rest."""

    frame: pd.DataFrame
    title: str
    audit_unverified: str = ""
    notes: tuple[str, ...] = ()
    layout: str = ""
    unsteady: str = ""


def _op_frame(ops: pd.DataFrame) -> pd.DataFrame:
    if ops.empty or "kind" not in ops:
        return pd.DataFrame(columns=["step", "operation", "operations", "average_latency_us"])
    main = ops[(ops["kind"] == "op") & ops["operation"].isin(MAIN_SECTIONS)]
    return main


def _weighted(rows: pd.DataFrame, col: str) -> float:
    rows = rows[rows[col].notna() & (rows["operations"] > 0)] if col in rows else rows.iloc[0:0]
    if rows.empty:
        return math.nan
    return float(np.average(rows[col], weights=rows["operations"]))


#: the columns of ``step_metrics`` of a run without a measured step (every table reads them)
EMPTY_METRICS = [
    "step",
    *KEYS,
    *CLIENT_METRICS,
    *(f"server_{fig}" for fig in SERVER_FIGURES),
    "server_sampled",
    "server_unavailable",
]


def step_metrics(run: RunResult, *, completed_only: bool = True) -> pd.DataFrame:
    """One row per measured load/run step: keys, client-side YCSB figures, per-op averages, server figures.

    ``read_avg_us`` = READ average latency; ``write_avg_us`` = the operation-weighted average of UPDATE,
    INSERT and DELETE (with one write type, exactly its average: the study's WAL). Server figures are the
    ``server_*`` columns of steps.csv; ``server_unavailable`` names figures the server does not report.
    """
    steps = run.steps
    if steps.empty:
        return pd.DataFrame(columns=EMPTY_METRICS)
    steps = steps[steps["phase"].isin(["load", "run"])]
    if completed_only and "status" in steps:
        steps = steps[steps["status"] == "completed"]
    ops = _op_frame(run.whole_operations)  # merged rows of multi-client steps
    rows = []
    for _, st in steps.iterrows():
        mine = ops[ops["step"] == st["step"]]
        row: dict[str, Any] = {
            "step": st["step"],
            "phase": st["phase"],
            "mix": st["mix"],
            "threads": st["threads"],
            "audit": st["audit"],
            "repetition": st["repetition"],
            "throughput_ops_s": st.get("throughput_ops_s", math.nan),
        }
        reads = mine[mine["operation"] == "READ"]
        writes = mine[mine["operation"].isin(WRITE_SECTIONS)]
        row["read_avg_us"] = _weighted(reads, "average_latency_us")
        row["write_avg_us"] = _weighted(writes, "average_latency_us")
        row["read_p99_us"] = _weighted(reads, "p99_us")
        row["write_p99_us"] = _weighted(writes, "p99_us")
        total = mine["returns"].sum(min_count=1) if "returns" in mine else math.nan
        errors = mine["errors"].sum(min_count=1) if "errors" in mine else math.nan
        row["error_rate"] = float(errors / total) if total and total == total else math.nan
        for op, part in mine.groupby("operation"):
            key = op.lower().replace("-", "_")
            row[f"{key}_ops"] = float(part["operations"].sum())
            row[f"{key}_avg_us"] = _weighted(part, "average_latency_us")
        for fig in SERVER_FIGURES:
            row[f"server_{fig}"] = st.get(f"server_{fig}", math.nan)
        unavailable = st.get("server_unavailable", math.nan)
        sampled = isinstance(st.get("server_source"), str) and st.get("server_source") != ""
        row["server_sampled"] = bool(sampled)
        row["server_unavailable"] = unavailable if isinstance(unavailable, str) else ""
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=EMPTY_METRICS)
    num = [
        c
        for c in out.columns
        if c not in ("step", "phase", "mix", "audit", "server_unavailable", "server_sampled")
    ]
    out[num] = out[num].apply(pd.to_numeric, errors="coerce")
    return out


def _mix_order(run: RunResult, mixes: list[str]) -> list[str]:
    declared = ["load", *run.manifest.suite.mixes]
    return sorted(mixes, key=lambda m: (declared.index(m) if m in declared else len(declared), m))


def _why_missing(group: pd.DataFrame, figure: str) -> str:
    """Why a server figure is missing in a group: "unavailable" (server does not report) or "not sampled"."""
    if not group["server_sampled"].any():
        return NOT_SAMPLED
    if group["server_unavailable"].str.split(";").map(lambda names: figure in names).any():
        return UNAVAILABLE
    return UNAVAILABLE


def _spread(prefix: str, values: pd.Series) -> dict[str, float]:
    s = stats.summarize(values)
    return {
        prefix: s["mean"],
        f"{prefix} stdev": s["stdev"],
        f"{prefix} min": s["min"],
        f"{prefix} max": s["max"],
    }


def means_table(run: RunResult, m: pd.DataFrame) -> StudyTable:
    """mix | threads | n | throughput (ops/sec) | RAL (µs) | WAL (µs) | CPU (%) (+ stdev/min/max columns),
    from the run's step metrics *m*."""
    rows = []
    for (phase, mix, threads), g in m.groupby(["phase", "mix", "threads"], sort=False):
        row: dict[str, Any] = {"mix": mix, "phase": phase, "threads": threads, "n": len(g)}
        row.update(_spread("throughput (ops/sec)", g["throughput_ops_s"]))
        row.update(_spread("RAL (µs)", g["read_avg_us"]))
        row.update(_spread("WAL (µs)", g["write_avg_us"]))
        cpu = stats.summarize(g["server_cpu_pct"])
        if cpu["n"]:
            row.update(_spread("CPU (%)", g["server_cpu_pct"]))
        else:
            why = _why_missing(g, "cpu_pct")
            row.update(
                {"CPU (%)": why, "CPU (%) stdev": math.nan, "CPU (%) min": math.nan, "CPU (%) max": math.nan}
            )
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return StudyTable(out, "")  # (untitled: a command names it by its run)
    title = f"{run.suite_name}: per-mix results (client-side YCSB averages)"
    order = _mix_order(run, out["mix"].unique().tolist())
    out["_o"] = out["mix"].map(order.index)
    out = out.sort_values(["_o", "threads"], kind="stable").drop(columns="_o").reset_index(drop=True)
    return StudyTable(out, title)


_MIX_PART = re.compile(r"([a-z-]+?)(\d+(?:\.\d+)?)$")


def mix_shares(mix: str) -> dict[str, float]:
    """``"insert30_read70"`` -> ``{"insert": 30.0, "read": 70.0}`` (empty for names that are not mix keys)."""
    out: dict[str, float] = {}
    for part in mix.split("_"):
        match = _MIX_PART.fullmatch(part)
        if match is None:
            return {}
        out[match.group(1)] = float(match.group(2))
    return out


def scenario_label(mix: str) -> str:
    """The Alibaba study's wording: ``insert:read:update=30:70:0``."""
    shares = mix_shares(mix)
    if not shares or set(shares) - {"insert", "read", "update"}:
        return mix
    return "insert:read:update=" + ":".join(f"{shares.get(k, 0):g}" for k in ("insert", "read", "update"))


def audit_ab(m: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """Long-form off vs on per (mix, threads, metric) of step metrics *m*, by ``stats.ab_table`` (change =
    on - off); each metric's rows are computed on their own, so a table of more metrics holds the same rows
    (``metric_rows`` picks them)."""
    m = m[(m["phase"] == "run") & m["audit"].isin(["off", "on"])]
    if m.empty:
        return pd.DataFrame(columns=["mix", "threads", *stats.AB_COLUMNS])
    return stats.ab_table(
        m, ["mix", "threads"], "audit", list(metrics), "off", "on", higher_is_better=_directions(metrics)
    )


def metric_rows(ab: pd.DataFrame, metrics: tuple[str, ...]) -> pd.DataFrame:
    """The rows of *metrics* in an ``audit_ab`` table, in their order within each (mix, threads) group:
    ``audit_ab(m, metrics)`` from an ``audit_ab`` of more metrics."""
    rank = {metric: i for i, metric in enumerate(metrics)}
    rows = ab[ab["metric"].isin(rank)]
    if rows.empty:
        return rows.reset_index(drop=True)
    key = rows.groupby(["mix", "threads"], sort=False).ngroup() * len(rank) + rows["metric"].map(rank)
    return rows.iloc[key.to_numpy().argsort(kind="stable")].reset_index(drop=True)


def _directions(metrics: tuple[str, ...] | list[str]) -> dict[str, bool | None]:
    return {m: higher_is_better(m) for m in metrics}


# A server response time the server does not report (no opLatencies, e.g. FerretDB) -> YCSB's own latency.
CLIENT_FALLBACK = {"server_writes_avg_rt_us": "write_avg_us", "server_reads_avg_rt_us": "read_avg_us"}
FALLBACK_LABEL = {
    "write_avg_us": "write avg (client-side, YCSB)",
    "read_avg_us": "read avg (client-side, YCSB)",
}


def _measured(row: pd.Series) -> bool:
    return not (row["n_a"] == 0 and row["n_b"] == 0)


def metric_in_mix(metric: str, mix: str) -> bool:
    """Whether a per-operation figure concerns an operation of the mix (CPU and throughput always do)."""
    shares = mix_shares(mix)
    needs = {
        "server_writes_avg_rt_us": ("insert", "update"),
        "write_avg_us": ("insert", "update"),
        "server_reads_avg_rt_us": ("read",),
        "read_avg_us": ("read",),
        "server_query_per_s": ("read",),
        "server_insert_per_s": ("insert",),
        "server_update_per_s": ("update",),
    }.get(metric)
    return needs is None or not shares or any(shares.get(op) for op in needs)


OVERHEAD_COLUMNS = ["mix", "metric", "label", "source", "n", "off", "on"] + [
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "published_pct",
    "verdict",
]


def audit_overhead(run: RunResult, study: Study, ab: pd.DataFrame) -> pd.DataFrame:
    """Audit on vs off per (mix, metric) in %: the change, its 95% interval, the published change.

    Metrics: the study's, those that concern the mix's operations; a server response time the server does
    not report is replaced by YCSB's client-side latency (``source`` says which). CPU is in % of its
    off value here (the table's CpuUsage cell keeps percentage points). *ab*: the run's ``audit_ab`` of the
    study's metrics and their client-side fallbacks (or more)."""
    from ycsb_runner.reference import load_reference, select

    ref = load_reference(study.reference) if study.reference else None
    rows = []
    for (mix, _threads), part in ab.groupby(["mix", "threads"], sort=False):
        pub = None
        if ref is not None and mix in set(ref["mix"]):
            pub = select(ref, mix=mix).iloc[0]
        for metric in study.metrics:
            if not metric_in_mix(metric, mix):
                continue
            found = _overhead_source(part, metric)
            if found is None:
                continue
            row, source, label = found
            base = row["a_mean"]
            scale = 100.0 / base if base and base == base else math.nan
            rows.append(
                {
                    "mix": mix,
                    "metric": metric,
                    "label": label,
                    "source": source,
                    "n": int(row["n_a"] + row["n_b"]),
                    "off": row["a_mean"],
                    "on": row["b_mean"],
                    "change_pct": row["change"] * scale,
                    "ci_low_pct": row["ci_low"] * scale,
                    "ci_high_pct": row["ci_high"] * scale,
                    "published_pct": _published_change(pub, study, metric),
                    "verdict": row["verdict"],
                }
            )
    out = pd.DataFrame(rows, columns=OVERHEAD_COLUMNS)
    if not out.empty:
        order = _mix_order(run, out["mix"].unique().tolist())
        out = out.iloc[out["mix"].map(order.index).argsort(kind="stable")].reset_index(drop=True)
    return out


def _overhead_source(part: pd.DataFrame, metric: str) -> tuple[pd.Series, str, str] | None:
    """The off/on row that measures *metric* in a mix's ``audit_ab`` rows, where it comes from and its label:
    the client-side fallback where the server reports no such figure; None when neither was measured."""
    hit = part[part["metric"] == metric]
    if hit.empty:
        return None
    row, source, label = hit.iloc[0], "server", METRICS_LABEL(metric)
    if not _measured(row) and metric in CLIENT_FALLBACK:
        client = part[part["metric"] == CLIENT_FALLBACK[metric]]
        if client.empty or not _measured(client.iloc[0]):
            return None
        return (
            client.iloc[0],
            "client-side (YCSB): the server reports no operation latencies",
            FALLBACK_LABEL[CLIENT_FALLBACK[metric]],
        )
    if not _measured(row):
        return None
    if not metric.startswith("server_"):
        source = "client-side (YCSB)"
    return row, source, label


def _published_change(pub: pd.Series | None, study: Study, metric: str) -> float:
    """The published off->on change of *metric* (0 where the table says "no significant change")."""
    if pub is None or metric not in study.reference_columns:
        return math.nan
    pub_col, _text, sig_col = study.reference_columns[metric]
    pub_col = pub_col.replace("_pp", "_pct")
    published = float(pub[pub_col]) if pub_col in pub and pub[pub_col] == pub[pub_col] else math.nan
    if published != published and not bool(pub[sig_col]):
        published = 0.0
    return published


def METRICS_LABEL(metric: str) -> str:  # noqa: N802 - reads like the registry it looks up
    m = METRICS.get(metric)
    return f"{m.label} ({m.unit})" if m and m.unit else (m.label if m else metric)


#: The audit study's own columns (Alibaba's table: scenario | CpuUsage | MongoDB_RT | MongoDB_Opcounters),
#: then YCSB's throughput: (study column, its figure or "", the metric measuring it, the unit of its values).
#: ``audit_table`` gives each its off, on, change and p columns; CPU's change is in percentage points.
STUDY_FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("CpuUsage", "", "server_cpu_pct", "%"),
    ("MongoDB_RT", "writes_avg_rt", "server_writes_avg_rt_us", "µs"),
    ("MongoDB_RT", "reads_avg_rt", "server_reads_avg_rt_us", "µs"),
    ("MongoDB_Opcounters", "query", "server_query_per_s", "ops/s"),
    ("MongoDB_Opcounters", "insert", "server_insert_per_s", "ops/s"),
    ("MongoDB_Opcounters", "update", "server_update_per_s", "ops/s"),
    ("YCSB throughput", "", "throughput_ops_s", "ops/s"),
)
#: the study's own column each metric is in (the report's detail table)
STUDY_COLUMNS = {metric: column for column, _figure, metric, _unit in STUDY_FIGURES}
P_NOTE = (
    "p: off vs on, Mann-Whitney U (Welch's t-test when too few runs for it); below 0.05 the change is "
    "significant"
)


def study_columns(column: str, figure: str, unit: str) -> tuple[str, str, str, str]:
    """The off, on, change and p column names of one figure of ``STUDY_FIGURES``: the study's column name,
    the figure, the unit in the header ("MongoDB_RT writes_avg_rt off (µs)", "CpuUsage change (pp)")."""
    name = f"{column} {figure}".strip()
    change = "pp" if unit == "%" else "%"
    return f"{name} off ({unit})", f"{name} on ({unit})", f"{name} change ({change})", f"{name} p"


def audit_table(run: RunResult, study: Study, m: pd.DataFrame, ab: pd.DataFrame) -> StudyTable:
    """scenario | CpuUsage | MongoDB_RT | MongoDB_Opcounters | YCSB throughput, audit off vs on per mix: one
    number per cell, each figure of ``STUDY_FIGURES`` in four columns (off, on, the change, the test's p; the
    unit in the header). "-" (NaN) where a figure does not concern the mix or was not measured; what applies
    to many rows (the client-side stand-in for a response time, why a figure is missing, that nothing was
    tested) is said once in the table's ``notes`` (its ``audit_unverified``: the audit caveat). *m*: the
    run's step metrics; *ab*: their ``audit_ab`` of the study's metrics and their client-side fallbacks (or
    more)."""
    rows = []
    fallbacks: dict[str, None] = {}  # the response times measured client-side
    missing: dict[str, dict[str, None]] = {}  # why -> the figures missing for it
    tested = outside = False
    for (mix, threads), part in ab.groupby(["mix", "threads"], sort=False):
        group = m[(m["mix"] == mix) & (m["threads"] == threads) & (m["phase"] == "run")]
        row: dict[str, Any] = {
            "mix": mix,
            "scenario": scenario_label(mix),
            "threads": threads,
            "n_off": int((group["audit"] == "off").sum()),
            "n_on": int((group["audit"] == "on").sum()),
        }
        for column, figure, metric, unit in STUDY_FIGURES:
            off, on, change, p = study_columns(column, figure, unit)
            row.update({off: math.nan, on: math.nan, change: math.nan, p: math.nan})
            name = f"{column} {figure}".strip()
            if not metric_in_mix(metric, mix):
                outside = True
                continue
            found = _study_source(part, metric)
            if found is None:
                why = _why_missing(group, metric.removeprefix("server_"))
                missing.setdefault(why, {})[name] = None
                continue
            hit, client = found
            if client:
                fallbacks[figure or name] = None
            pct = hit["change"] if unit == "%" else hit["change_pct"]
            row.update({off: hit["a_mean"], on: hit["b_mean"], change: pct, p: hit["p_value"]})
            tested = tested or hit["verdict"] != stats.N_TOO_SMALL
        rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        order = _mix_order(run, out["mix"].unique().tolist())
        out = out.iloc[out["mix"].map(order.index).argsort(kind="stable")].reset_index(drop=True)
    caveat = audit_caveat(run.manifest)
    what = "UNVERIFIED audit" if caveat else "audit"
    notes = []
    if fallbacks:
        notes.append(
            f"MongoDB_RT {', '.join(fallbacks)}: YCSB's client-side latency "
            "(this server reports no operation latencies)"
        )
    notes += [f"-: {', '.join(names)} {why}" for why, names in missing.items()]
    if outside:
        notes.append("-: the figure does not concern the mix's operations")
    if rows:
        notes.append(P_NOTE if tested else "p -: fewer than 2 runs per audit state, not tested")
    title = f"{run.suite_name}: {what} off → on per mix (server-side figures)"
    return StudyTable(out, title, audit_unverified=caveat, notes=tuple(notes))


def study_changes(
    study: StudyTable, alpha: float = 0.05, rest: str = "--wide or -f csv"
) -> tuple[pd.DataFrame, list[str]]:
    """An ``audit_table`` (*study*) for a terminal or a page: the mix and the change of each figure some mix
    measured, under the figure's name ("writes_avg_rt (%)"), and the lines to say under it: what the short
    names stand for and where the rest is (*rest*), which changes are significant (its p columns, below
    *alpha*), the table's notes that still apply."""
    table = study.frame
    if table.empty or "mix" not in table:
        return table, list(study.notes)
    cols: dict[str, str] = {"mix": "mix"}
    if "not stationary" in table:
        cols["not stationary"] = "not stationary"
    named: dict[str, list[str]] = {}
    significant: list[str] = []
    tested = False
    for column, figure, _metric, unit in STUDY_FIGURES:
        _off, _on, change, p = study_columns(column, figure, unit)
        if change not in table or table[change].isna().all():
            continue
        short = figure or column.removeprefix("YCSB ")
        cols[change] = f"{short} ({'pp' if unit == '%' else '%'})"
        named.setdefault(column, []).append(short)
        tested = tested or bool(table[p].notna().any())
        significant += [f"{mix} {short}" for mix in table.loc[table[p] < alpha, "mix"]]
    said = "; ".join(f"{c}: {', '.join(f)}" for c, f in named.items() if f != [c.removeprefix("YCSB ")])
    lines = ["change audit off → on" + (f" ({said})" if said else "") + f"; off, on, p: {rest}"]
    if tested:
        which = ", ".join(significant) if significant else "none"
        lines.append(f"significant at p < {alpha:g}: {which}")
    shown = table[list(cols)]
    gaps = bool(shown.isna().any().any())
    for note in study.notes:
        if note == P_NOTE or (note.startswith("-:") and not gaps):
            continue  # p is not shown; no "-" shown
        lines.append(note)
    return shown.rename(columns=cols), lines


def _study_source(part: pd.DataFrame, metric: str) -> tuple[pd.Series, bool] | None:
    """The off/on row of a mix's ``audit_ab`` rows that measures *metric* and whether it is the client-side
    stand-in (``CLIENT_FALLBACK``) of a server figure the server does not report; None: not measured."""
    found = _overhead_source(part, metric)
    if found is None:
        return None
    row, source, _label = found
    return row, source.startswith("client-side") and metric.startswith("server_")


def generic_table(run: RunResult, m: pd.DataFrame) -> StudyTable:
    """phase | mix | threads | audit | n | throughput (+spread) | avg latency per op | p99 | error rate, from
    the run's step metrics *m*."""
    rows = []
    for (phase, mix, threads, audit), g in m.groupby(GROUP, sort=False):
        row: dict[str, Any] = {"phase": phase, "mix": mix, "threads": threads, "audit": audit, "n": len(g)}
        row.update(_spread("throughput (ops/sec)", g["throughput_ops_s"]))
        # per operation (READ, UPDATE, INSERT, ...): READ's is read_avg_us, the others <op>_avg_us
        ops = sorted(c[: -len("_ops")] for c in g.columns if c.endswith("_ops") and g[c].notna().any())
        for op in ops:
            col = f"{op}_avg_us"
            values = g[col].dropna() if col in g else pd.Series(dtype=float)
            if not values.empty:
                row[f"{op.upper().replace('_', '-')} avg (µs)"] = float(values.mean())
        row["read p99 (µs)"] = float(g["read_p99_us"].mean())
        row["write p99 (µs)"] = float(g["write_p99_us"].mean())
        row["error rate"] = float(g["error_rate"].mean())
        rows.append(row)
    out = pd.DataFrame(rows)
    if not out.empty:
        order = _mix_order(run, out["mix"].unique().tolist())
        out = out.iloc[out["mix"].map(order.index).argsort(kind="stable")].reset_index(drop=True)
    return StudyTable(out, f"{run.suite_name}: per-mix results")


def unsteady_steps(steps: pd.DataFrame) -> list[tuple[str, str]]:
    """(step, what its warnings say) for each run step of steps.csv (*steps*) whose steady-state window is
    not stationary (``stationary`` false; ``ycsb_runner.analyse.steady``)."""
    if steps.empty or "stationary" not in steps:
        return []
    bad = steps[(steps["phase"] == "run") & (steps["stationary"].astype(str).str.lower() == "false")]
    out = []
    for _, row in bad.iterrows():
        said = [w for w in str(row.get("warnings") or "").split("; ") if "not stationary" in w]
        out.append((str(row["step"]), said[0].removeprefix("not stationary: ") if said else "not stationary"))
    return out


def unsteady_caption(
    steps: pd.DataFrame, bad: list[tuple[str, str]], who: str = "", where: str = "the table"
) -> str | None:
    """One line counting the non-stationary steps *bad* (``unsteady_steps`` of steps.csv, *steps*) and
    pointing at *where* they are named ("7 of 12 run steps still moving: see the table"); None when there
    are none. What each step did is in its row (``moving_cells``) and in steps.csv's warnings, not here."""
    if not bad:
        return None
    runs = int((steps["phase"] == "run").sum())
    return f"{who}{len(bad)} of {runs} run steps still moving (not stationary): see {where}"


def moving_cells(steps: pd.DataFrame) -> dict[str, str]:
    """step -> what its steady-state window did, for a table's column: the fitted change over the window
    it was measured on ("+75 %"; never a rate per minute), "stall", or "-" for a stationary run step and
    "too short" when too few intervals to judge (steps.csv's ``stationary`` empty). Load steps: none."""
    if steps.empty or "stationary" not in steps:
        return {}
    out = {}
    for _, row in steps[steps["phase"] == "run"].iterrows():
        said = str(row["stationary"]).lower()
        if said == "false":
            slope, window = row.get("steady_slope_pct_per_min"), row.get("steady_s")
            stall = float(row.get("steady_stall_s") or 0) > 0
            if stall:
                out[str(row["step"])] = "stall"
            elif slope == slope and window == window and slope is not None and window is not None:
                out[str(row["step"])] = f"{float(slope) * float(window) / 60:+.0f} %"
            else:
                out[str(row["step"])] = "yes"
        elif said == "true":
            out[str(row["step"])] = "-"
        else:
            out[str(row["step"])] = "too short"
    return out
