"""A self-contained HTML report (inline PNG plots, no external assets) and a Markdown twin for one run."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.analyse.caveats import audit_caveat, server_caveat
from ycsb_runner.analyse.stats import AB_COLUMNS
from ycsb_runner.present.document import Banner, Block, Document, Facts, Figure, Note, Panel, Section, Table
from ycsb_runner.present.output import cell_text
from ycsb_runner.report.pages import write_pages
from ycsb_runner.runs.metrics import metric_label
from ycsb_runner.runs.model import (
    NO_AUDIT,
    REPORT_FIGURES,
    REPORT_HTML,
    REPORT_MD,
    Manifest,
    RunResult,
    StepRecord,
)

# Figures: ``ycsb_runner.report.plots`` (drawn only when a renderer shows them: ``Figure.panels``).


# --- text ---------------------------------------------------------------------------------------------


def _text(v: Any, none: str = "-") -> str:
    """A value for people: no Python ``None``/``True`` in the page."""
    if v is None or v == "":
        return none
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | tuple):
        return ", ".join(_text(x) for x in v) or none
    return str(v)


def _values(steps: list[StepRecord], key: str) -> list[str]:
    """The distinct values of the YCSB property *key* over *steps*, in order."""
    return list(dict.fromkeys(s.properties[key] for s in steps if key in s.properties))


def _count(text: str) -> str:
    """A count property ("10000000") with thousands separators (``output.cell_text``)."""
    return cell_text(int(text)) if text.isdigit() else text


def _run_length(runs: list[StepRecord]) -> str:
    """How a run step of *runs* ends: ``5 s (maxexecutiontime) or 10,000,000 operations, whichever first``."""
    seconds, ops = _values(runs, "maxexecutiontime"), _values(runs, "operationcount")
    by_time = f"{'/'.join(seconds)} s (maxexecutiontime)" if seconds else ""
    by_ops = f"{'/'.join(_count(o) for o in ops)} operations" if ops else ""
    return " or ".join(x for x in (by_time, by_ops) if x) + (
        ", whichever first" if by_time and by_ops else ""
    )


def _target(step: StepRecord) -> int:
    """YCSB's ``-target`` in the step's command (0: none)."""
    argv = step.argv
    return next((int(v) for f, v in zip(argv, argv[1:], strict=False) if f == "-target" and v.isdigit()), 0)


def effective_settings(m: Manifest) -> str:
    """What the run ran, read off its steps' commands and properties (after ``--scale`` and ``--set``), not
    the suite file's prose: the load, the run steps' mixes, threads, length, distribution and target, the
    repetitions and the measurement. Pure."""
    loads = [s for s in m.steps if s.keys.phase == "load"]
    runs = [s for s in m.steps if s.keys.phase == "run"]
    parts = []
    if loads:
        first = loads[0].properties
        size = f" of {first['fieldcount']} fields x {first['fieldlength']} B" if "fieldcount" in first else ""
        threads = "/".join(map(str, dict.fromkeys(s.keys.threads for s in loads)))
        records = "/".join(_count(r) for r in _values(loads, "recordcount"))
        parts.append(f"load {records} records{size}, {threads} threads")
    if runs:
        mixes = ", ".join(dict.fromkeys(s.keys.mix for s in runs))
        threads = "/".join(map(str, sorted({s.keys.threads for s in runs})))
        text = f"run {mixes} at {threads} threads, each {_run_length(runs)}"
        if dist := _values(runs, "requestdistribution"):
            text += f", {'/'.join(dist)}"
        targets = sorted({_target(s) for s in runs} - {0})
        text += f", -target {'/'.join(map(cell_text, targets))} ops/s" if targets else ", no -target"
        reps = max(s.keys.repetition for s in runs)
        text += f"; {reps} repetition{'s' if reps != 1 else ''}"
        if audits := [a for a in dict.fromkeys(s.keys.audit for s in runs) if a != NO_AUDIT]:
            text += f" per audit state ({'/'.join(audits)})"
        parts.append(text)
    steps = runs or loads
    if steps:
        kind = "/".join(_values(steps, "measurementtype")) or "YCSB's default measurement"
        status = "/".join(_values(steps, "status.interval"))
        parts.append(f"{kind}{f', status every {status} s' if status else ''}")
    return "; ".join(parts) or "no load or run step"


def metadata(run: RunResult) -> list[tuple[str, str]]:
    """(label, value) pairs describing the run: suite, scaling, versions, host, server."""
    m = run.manifest
    suite, target, ycsb, java, host = m.suite, m.target, m.ycsb, m.java, m.host
    scaling = suite.scaling
    mem = host.memory_bytes
    overrides = ", ".join(scaling.get("overrides", [])) or "none"
    server = target.server_version or target.build_info.version
    where = "embedded server" if target.embedded else "external server"
    as_written = (scaling.get("scale") or 1) == 1 and overrides == "none"
    return [
        ("run", f"{m.run_id} ({m.status})"),
        ("settings (as run)", effective_settings(m)),
        (
            "scaling",
            f"scale {_text(scaling.get('scale'), '1')}, size {_text(scaling.get('size'))}, "
            f"overrides {overrides}",
        ),
        ("suite", f"{suite.name}{f' ({suite.path})' if suite.path else ''}"),
        (
            "suite file's description" + ("" if as_written else " (the suite as written, not this run)"),
            _text(suite.description),
        ),
        ("study", _text(suite.study, "none declared")),
        ("source", _text(suite.source)),
        ("server", f"{_text(server, 'unknown version')} at {_text(target.url)} ({where})"),
        (
            "YCSB",
            f"{_text(ycsb.core)} + {_text(ycsb.binding_jar)} "
            f"({_text(ycsb.binding_class)}), "
            f"driver {_text(ycsb.driver_version)}, from {_text(ycsb.source)}",
        ),
        ("Java", f"{_text(java.version)} ({_text(java.path)})"),
        (
            "host",
            f"{_text(host.hostname)}: {_text(host.platform)}, "
            f"{_text(host.cpus_logical)} CPUs, "
            f"{(mem or 0) / 2**30:.1f} GiB, Python {_text(host.python)}",
        ),
        ("audit strategy", _text(m.audit_strategy, "none (audit not switched)")),
        ("audit baseline", _text(m.audit_baseline, "none (audit not switched)")),
    ]


STATIONARY_LABELS = {"true": "yes", "false": "no"}
#: the step warning of ``steady.SteadyState.warnings`` (and its older wording in folders written before)
TOO_FEW = r"too short to judge stationarity|too few to judge stationarity"


def steps_frame(run: RunResult) -> pd.DataFrame:
    """The report's steps table: a run step's ``stationary`` as yes, no or "cannot tell" (too few intervals
    after the warm-up, or no HDR logs: steps.csv leaves it empty)."""
    cols = ["step", "phase", "status", "throughput_ops_s", "throughput_steady_ops_s", "warmup_end_s"]
    cols += ["stationary", "runtime_ms", "reasons", "warnings"]
    if run.steps.empty:
        return pd.DataFrame(columns=cols)
    from ycsb_runner.analyse.table import moving_cells

    steps = run.steps[[c for c in cols if c in run.steps]]
    if "stationary" in steps:
        said = steps["stationary"].astype(str).str.lower().map(STATIONARY_LABELS)
        if "warnings" in steps:  # a folder written before steps.csv left it empty: its warning says so
            too_few = steps["warnings"].astype(str).str.contains(TOO_FEW, regex=True)
            said = said.mask(too_few & (said == "yes"))
        steps = steps.assign(stationary=said.where(said.notna(), steps["phase"].map({"run": "cannot tell"})))
    moving = moving_cells(run.steps)
    if any(v not in ("-", "too short") for v in moving.values()):  # the change over the window, per step
        steps = steps.assign(moving=run.steps["step"].astype(str).map(moving).fillna("-"))
    return steps


def step_warnings(steps: pd.DataFrame) -> list[tuple[str, str]]:
    """(step, its reasons and warnings) for the steps that have any: listed under the steps table, whose
    cells hold numbers."""
    out = []
    for _, row in steps.iterrows():
        said = [str(row.get(c)) for c in ("reasons", "warnings") if row.get(c) == row.get(c) and row.get(c)]
        if said:
            out.append((str(row["step"]), "; ".join(said)))
    return out


def steady_note(run: RunResult) -> str | None:
    """One line counting the run steps whose steady-state window is not stationary ("2 of 12 run steps
    still moving (not stationary): see the table"); what each did is in its row (``steps_frame``)."""
    from ycsb_runner.analyse.table import unsteady_caption, unsteady_steps

    return unsteady_caption(run.steps, unsteady_steps(run.steps), where="the moving column above")


def scaled_note(a: RunAnalysis) -> str | None:
    """ "scaled 0.001: not comparable to the published figures" and what differs, or None for a run as the
    study set it."""
    from ycsb_runner.analyse.compare import run_vs_study
    from ycsb_runner.reference import load_reference, select

    suite = a.run.manifest.suite
    scale = suite.scaling.get("scale", 1.0) or 1.0
    overrides = suite.scaling.get("overrides") or []
    if scale == 1 and not overrides:
        return None
    study = a.study
    ref = None
    if study.reference:
        ref = load_reference(study.reference)
        size = suite.scaling.get("size")
        if size and "size" in ref and a.layout.sized_reference:
            ref = select(ref, size=size)
    return run_vs_study(a.run, ref)


def failure_banner(run: RunResult) -> str:
    """ "This run FAILED: <error>" with the steps that did not complete, or "" for a completed run."""
    m = run.manifest
    if m.status == "completed":
        return ""
    steps = run.steps
    bad = steps[steps["status"] != "completed"] if not steps.empty and "status" in steps else steps
    named = ", ".join(f"{r.step} ({r.status})" for r in bad.itertuples()) if not bad.empty else ""
    text = f"This run {m.status.upper()}: {m.error or 'no error recorded'}."
    if named:
        text += f" Not completed: {named}."
    return text + " Only completed steps are in the tables and figures below."


def _figures(a: RunAnalysis) -> list[Figure]:
    """Every plot that has data (of the run and of its ``report_tables``: ``overhead``, ``reference``): the
    panels of each (``plots``, not drawn yet), then captioned."""
    from ycsb_runner.report import plots

    run, extra = a.run, a.report_tables
    findmax, overhead, cmp = run.manifest.findmax, extra.overhead, extra.reference
    search = findmax.to_json() if findmax is not None else None  # the search as written
    m = a.step_metrics
    runs = m[m["phase"] == "run"]
    by_threads = runs["threads"].nunique() > 1
    published = _published(a, cmp, runs) if by_threads and cmp is not None else None
    short = (
        [
            s
            for s in run.steps.loc[run.steps["phase"] == "load", "step"]
            if 0 < plots.status_points(run, s) < MIN_PANEL_POINTS
        ]
        if not run.steps.empty
        else []
    )
    planned = {
        "answer-audit": plots.plot_audit_answer(overhead) if overhead is not None else [],
        "answer-reference": plots.plot_reference_answer(cmp) if cmp is not None else [],
        "short-loads": plots.plot_short_steps(run, short),
        "findmax": plots.plot_findmax(search) if search else [],
        "audit-overhead": plots.plot_audit_overhead(overhead) if overhead is not None else [],
        "measured-vs-published": plots.plot_reference_ratio(cmp) if cmp is not None else [],
        "threads": plots.plot_threads(runs, published) if by_threads else [],
        "timeseries-load": plots.plot_step_timeseries(run, "load", frozenset(short)),
        "timeseries-run": plots.plot_step_timeseries(run, "run"),
        "percentiles": plots.plot_spectrum(run),
    }
    own = [Figure(*f) for f in a.layout.figures(a, a.study, extra)]  # a layout's own (none built in)
    out = _captioned(planned, own, search, cmp, extra.reference_note)
    # the short loads' figure where the loads' panels would be: before the run steps over time
    at = next(
        (i for i, f in enumerate(out) if f.stem.startswith(("timeseries-run", "percentiles"))), len(out)
    )
    out[at:at] = _short_figure(planned["short-loads"], short)
    return _answer_figures(planned, cmp) + out


MIN_PANEL_POINTS = 5  # a load step with fewer status points gets no time-series panel of its own


def _answer_figures(planned: dict[str, Any], cmp: pd.DataFrame | None) -> list[Figure]:
    """The answer's figures (``_answer`` puts them first)."""
    out = _figure(
        "answer-audit",
        "Audit on vs off per mix: measured change in throughput and read/write latency (orange, % of the "
        "off value; its 95% interval when there are repetitions) and the published change (black diamond)",
        planned["answer-audit"],
    )
    against = ""
    if cmp is not None and "storage" in cmp and cmp["storage"].nunique() == 1:
        against = f" {cmp['storage'].iloc[0]}"
    return out + _figure(
        "answer-reference",
        f"Measured / published{against} per mix and metric (log scale; the red line is 1 = as published)",
        planned["answer-reference"],
    )


def _short_figure(panels: list[Panel], short: list[str]) -> list[Figure]:
    """The load steps too short for a panel of their own (fewer than ``MIN_PANEL_POINTS`` status points),
    in one small figure."""
    return _figure(
        "timeseries-short-loads",
        f"Load steps with fewer than {MIN_PANEL_POINTS} status points (too short for a panel of their own): "
        f"throughput per status point, one line each ({', '.join(short)})",
        panels,
    )


def _published(a: RunAnalysis, cmp: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """The published rows the thread plot sets the run's mixes against (of the size compared)."""
    from ycsb_runner.reference import load_reference, select

    ref = load_reference(a.study.reference or "")
    sizes = cmp["size"].dropna().unique().tolist()
    published = select(ref, size=sizes[0]) if sizes else ref
    return published[published["mix"].isin(runs["mix"].unique())]


def _captioned(
    planned: dict[str, Any], own: list[Figure], search: dict | None, cmp: pd.DataFrame | None, note: str
) -> list[Figure]:
    """The figures with panels, in the report's order (a layout's *own* after the published ones), each
    with its caption."""
    out = _figure("findmax", _findmax_caption(search), planned["findmax"]) if search else []
    out += _figure(
        "audit-overhead",
        "Audit on vs off per mix: % change of each metric (orange, with the 95% interval of "
        "the difference when there are repetitions) and the published change (blue); each "
        "mix on its own scale",
        planned["audit-overhead"],
    )
    if cmp is not None:
        told = cmp[cmp["ratio"].notna()]
        sets = list(dict.fromkeys(str(x) for x in told.get("storage", []) if x and x == x))
        against = f"the published {' and '.join(sets)} figures" if sets else "published"
        against += " (each bar names its set)" if len(sets) > 1 else ""
        out += _figure(
            "measured-vs-published",
            f"Measured / {against} per mix and metric (log scale; the red line is 1 = as "
            f"published{'; ' + note if note else ''})",
            planned["measured-vs-published"],
        )
    out += own
    out += _figure(
        "threads", "Throughput and average latency against the thread count, per mix", planned["threads"]
    )
    for phase in ("load", "run"):
        panels, source = planned[f"timeseries-{phase}"]
        out += _figure(f"timeseries-{phase}", _timeseries_caption(phase, source), panels)
    panels, source, styles = planned["percentiles"]
    out += _figure(
        "percentiles",
        f"Latency percentiles per operation (from {source}): one line per step, colour by mix, the x "
        f"axis stretched towards the tail{'; ' + styles if styles else ''}",
        panels,
    )
    return out


def _findmax_caption(search: dict[str, Any]) -> str:
    """A findmax run's search: latency against achieved throughput per probe, the bound and the maximum
    (drawn only when the search wrote its bound)."""
    if "bound" not in search:
        return ""
    found = search.get("max_ops_s")
    return (
        f"findmax: {search['bound']['statistic']} latency (worst operation, after the warm-up) "
        "against the achieved throughput of every probe (filled: passed, hollow: failed; labels: "
        f"the probe's target), the bound {search['bound']['label']} (dashed) and the found "
        f"maximum {found if found is not None else 'none'} ops/s (dotted)"
    )


def _timeseries_caption(phase: str, source: str) -> str:
    """The *phase*'s steps over time, one panel per step."""
    what = "p50/p95/p99" if "HDR" in source else "average, p90 and p99"
    cut = "; the shaded start is the warm-up cut (steps.csv warmup_end_s)" if phase == "run" else ""
    return (
        f"{phase.capitalize()} steps over time, one panel per step: throughput (top) and {what} "
        f"latency per operation (bottom, one unit for every panel), from the {source}{cut}"
    )


def _figure(stem: str, caption: str, panels: list[Panel]) -> list[Figure]:
    """The figure, or none when it has no panels."""
    return [Figure(stem, caption, panels)] if panels else []


AB_LABELS = {
    "n_a": "n off",
    "n_b": "n on",
    "a_mean": "off (mean)",
    "b_mean": "on (mean)",
    "change": "change (on − off)",
    "change_pct": "change %",
    "p_value": "p",
}


OVERHEAD_HEADERS = {
    "mix": "mix",
    "scenario": "scenario",
    "column": "study column",
    "label": "metric",
    "n": "n",
    "off": "audit off",
    "on": "audit on",
    "change_pct": "change %",
    "ci_low_pct": "95% CI low %",
    "ci_high_pct": "95% CI high %",
    "published_pct": "published change %",
    "verdict": "verdict",
}

OVERHEAD_HEADING = "Audit overhead per mix (on vs off, % of the off value)"
#: the audit overhead for programs (``report -f json``): its columns before issue 49 (the source, the 95 %
#: interval in one cell, the verdict in stats' words), then those the page shows
OVERHEAD_DATA = {
    "mix": "mix",
    "label": "metric",
    "source": "measured by",
    "n": "n",
    "off": "audit off",
    "on": "audit on",
    "change_pct": "change %",
    "ci_pct": "95% CI %",
    "published_pct": "published change %",
    "verdict": "verdict",
    "scenario": "scenario",
    "column": "study column",
    "ci_low_pct": "95% CI low %",
    "ci_high_pct": "95% CI high %",
}
CLIENT_SIDE = "client-side"  # in an overhead row's ``source``: the server reports no such figure
ONE_RUN = "one run each: no interval, not tested (n too small)"


def overhead_notes(overhead: pd.DataFrame) -> list[str]:
    """What applies to many rows of the audit overhead, said once: where the latencies were measured, that
    one run each gives no interval and no test."""
    from ycsb_runner.analyse.stats import N_TOO_SMALL

    notes = []
    client = overhead[
        overhead["source"].astype(str).str.startswith(CLIENT_SIDE) & overhead["metric"].str.contains("_rt_")
    ]
    if not client.empty:
        notes.append(
            "Latency measured client-side (YCSB): this server reports no operation latencies "
            f"({', '.join(dict.fromkeys(client['label']))})."
        )
    if not overhead.empty and (overhead["verdict"] == N_TOO_SMALL).all():
        notes.append(f"Verdict -: {ONE_RUN}.")
    return notes


def overhead_frame(overhead: pd.DataFrame) -> pd.DataFrame:
    """The report's audit overhead table in the study's layout: one row per (mix, metric) under the study's
    own column name (``STUDY_COLUMNS``), a number in every cell: the off and on values in their own
    columns, the change, the two ends of its 95 % interval (dropped when no row has one), the published
    change (only when the study publishes one), the verdict ("-" when not tested: ``overhead_notes``)."""
    from ycsb_runner.analyse.stats import N_TOO_SMALL
    from ycsb_runner.analyse.table import STUDY_COLUMNS, scenario_label

    shown = overhead.assign(
        scenario=overhead["mix"].map(scenario_label),
        column=overhead["metric"].map(STUDY_COLUMNS).fillna("-"),
        verdict=overhead["verdict"].where(overhead["verdict"] != N_TOO_SMALL, "-"),
    )[list(OVERHEAD_HEADERS)]
    drop = [c for c in ("ci_low_pct", "ci_high_pct", "published_pct") if shown[c].isna().all()]
    if (shown["verdict"] == "-").all():
        drop.append("verdict")
    return shown.drop(columns=drop).rename(columns=OVERHEAD_HEADERS)


def overhead_data(overhead: pd.DataFrame) -> pd.DataFrame:
    """The audit overhead for programs (``OVERHEAD_DATA``): the rows of ``overhead_frame`` with the source
    of each figure, the 95 % interval in one cell ("-13.0 to 13.7") and the verdict as stats says it."""
    from ycsb_runner.analyse.table import STUDY_COLUMNS, scenario_label

    low, high = overhead["ci_low_pct"], overhead["ci_high_pct"]
    ci = [
        f"{cell_text(x)} to {cell_text(y)}" if x == x and y == y else "-"
        for x, y in zip(low, high, strict=True)
    ]
    data = overhead.assign(
        ci_pct=ci, scenario=overhead["mix"].map(scenario_label), column=overhead["metric"].map(STUDY_COLUMNS)
    )[list(OVERHEAD_DATA)]
    if data["published_pct"].isna().all():
        data = data.drop(columns=["published_pct"])
    return data.rename(columns=OVERHEAD_DATA)


def study_data(table: pd.DataFrame) -> pd.DataFrame:
    """The audit study's own table for programs: every column, and the change columns under their names
    before issue 49 (``throughput change %``, ``CPU change (pp)``)."""
    old = {"throughput change %": "YCSB throughput change (%)", "CPU change (pp)": "CpuUsage change (pp)"}
    return table.assign(**{k: table[v] for k, v in old.items() if v in table})


def _pct(v: float, unit: str = "%") -> str:
    """A signed change with its unit ("-64 %", "+9.7 pp"), "-" when missing."""
    whole = v is not None and v == v and (abs(v) >= 10 or unit == "%")
    return cell_text(v, decimals=0 if whole else 1, signed=True, unit=f" {unit}")


def audit_compact(overhead: pd.DataFrame) -> pd.DataFrame:
    """The answer's table: one row per mix, the change audit on vs off in throughput, read and write
    latency (% of the off value) and CPU (percentage points), the verdict on throughput ("-": not tested).
    A number with its unit, or "-", in every cell."""
    from ycsb_runner.analyse.stats import N_TOO_SMALL

    rows = []
    for mix, part in overhead.groupby("mix", sort=False):
        by = part.set_index("metric")

        def change(metric: str, by: pd.DataFrame = by) -> float:
            return float(by.at[metric, "change_pct"]) if metric in by.index else math.nan

        cpu = math.nan
        if "server_cpu_pct" in by.index:
            cpu = float(by.at["server_cpu_pct", "on"]) - float(by.at["server_cpu_pct", "off"])
        verdict = str(by.at["throughput_ops_s", "verdict"]) if "throughput_ops_s" in by.index else "-"
        rows.append(
            {
                "mix": mix,
                "throughput change": _pct(change("throughput_ops_s")),
                "read latency change": _pct(change("server_reads_avg_rt_us")),
                "write latency change": _pct(change("server_writes_avg_rt_us")),
                "CPU change": _pct(cpu, "pp"),
                "verdict": "-" if verdict == N_TOO_SMALL else verdict,
            }
        )
    return pd.DataFrame(rows)


def write_report(
    run_dir: Path | str | RunResult | RunAnalysis, out_dir: Path | str | None = None
) -> tuple[Path, Path]:
    """Write ``report.html`` (self-contained) and ``report.md`` (+ ``report-figures/*.png``) of a run (its
    folder, or the run or analysis a command already holds); return their paths."""
    a = run_dir if isinstance(run_dir, RunAnalysis) else RunAnalysis.of(run_dir)
    out = Path(out_dir) if out_dir else a.run.root
    return write_pages(run_document(a), out, REPORT_HTML, REPORT_MD)


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # a 1e308 figure: inf, not a warning
def run_document(a: RunAnalysis) -> Document:
    """The report of a run as a document: its banners, tables, figures, the measured vs published rows and
    the run's description, statistics and steps."""
    name = a.run.root.name
    figures = _figures(a)
    answer = _answer(a, figures)
    sections = [
        Section(None, _banners(a)),
        *answer,
        *_tables(a),
        Section("Plots", figures or [Note("No plottable data in this run.", "aside")]),
        *_reference_table(a),
        *_run_sections(a),
    ]
    return Document(name, f"ycsb-runner report: {name}", sections, REPORT_FIGURES)


ANSWER_STEMS = ("answer-audit", "answer-reference")  # the answer's figures (drawn by ``_figures``)


def _answer(a: RunAnalysis, figures: list[Figure]) -> list[Section]:
    """The first section, the answer to the study's question (taken out of *figures*): the audit study's
    change per mix (its figure and a compact table), a study of per-mix means' measured / published per mix
    (its figure and a compact table); a generic suite's results table and run steps over time."""
    overhead, cmp = a.report_tables.overhead, a.report_tables.reference
    mine = [f for f in figures if f.stem in ANSWER_STEMS]
    for f in mine:
        figures.remove(f)
    if overhead is not None and not overhead.empty:
        what = "UNVERIFIED audit" if audit_caveat(a.run.manifest) else "Audit"
        blocks: list[Block] = [*mine, Table(audit_compact(overhead))]
        blocks += [Note(n) for n in overhead_notes(overhead)]
        return [Section(f"{what} on vs off: the change per mix", blocks, summary=True)]
    if cmp is not None and not cmp.empty and cmp["ratio"].notna().any():
        from ycsb_runner.reference.ratios import answer_note, ratio_compact

        blocks = [*mine, Table(ratio_compact(cmp)), Note(answer_note(cmp))]
        return [Section("Measured / published per mix", blocks, summary=True)]
    if a.run.manifest.findmax is not None:
        return []
    over_time = [f for f in figures if f.stem == "timeseries-run"]
    for f in over_time:
        figures.remove(f)
    return [Section(a.table.title or a.run.suite_name, [Table(a.table.frame), *over_time], summary=True)]


def _banners(a: RunAnalysis) -> list[Banner]:
    """What the reader must know before any figure: a failed run, an unverified audit, a setting that is
    not the study's, which published figures the run is set against."""
    run = a.run
    banners = []
    if failure := failure_banner(run):
        banners.append(Banner(failure, strong=True, anchor="run-failed", failure=True))
    if caveat := audit_caveat(run.manifest):
        banners.append(Banner(caveat, strong=True, anchor="unverified-audit"))
    if server := server_caveat(run.manifest.target):
        banners.append(Banner(server, anchor="not-mongodb"))
    if note := scaled_note(a):
        whose = "study's" if a.study.reference else "suite's own"
        banners.append(Banner(note, lead=f"Not the {whose} setting."))
    if sub := a.report_tables.reference_note:  # the published figures it is set against
        banners.append(Banner(sub))
    return banners


def _tables(a: RunAnalysis) -> list[Section]:
    """The audit overhead and the study table (or a findmax run's search)."""
    run, extra = a.run, a.report_tables
    sections = []
    overhead = extra.overhead
    title = a.table.title or run.suite_name
    if overhead is not None and not overhead.empty:  # every metric, then the study's own table
        notes = [Note(n) for n in overhead_notes(overhead)]
        table = Table(overhead_frame(overhead), data=overhead_data(overhead))
        sections.append(Section(OVERHEAD_HEADING, [table, *notes]))
        from ycsb_runner.analyse.table import study_changes

        # the change of each figure (its off, on and p: `ycsb-runner table --wide`, and in the data)
        shown, lines = study_changes(a.table, rest="ycsb-runner table RUN --wide, or --format csv")
        told = [Note(n) for n in lines]
        sections.append(Section(title, [Table(shown, data=study_data(a.table.frame)), *told]))
        return sections
    if run.manifest.findmax is not None:  # the search instead of the study table
        from ycsb_runner.findmax.search import found_text, search_frame

        search = run.manifest.findmax.to_json()
        head = f"Max throughput: {found_text(search)}"
        sections.append(Section(head, [Table(search_frame(search))]))
    elif extra.reference is not None:  # (the generic table is the answer, already shown)
        sections.append(Section(title, [Table(a.table.frame)]))
    return sections


def _reference_table(a: RunAnalysis) -> list[Section]:
    """Measured vs published, row by row (after the plots: its figure comes first, the rows are the
    detail); the metric with its unit, a storage that is the same on every row in the heading."""
    ref = a.report_tables.reference
    if ref is None or ref.empty:
        return []
    from ycsb_runner.reference.ratios import unmeasured

    measured = ref[ref["measured"].notna()]
    missing = unmeasured(ref)
    shown = measured.drop(columns=["published_other", "size", "unit"], errors="ignore")
    shown = shown.assign(metric=measured["metric"].map(metric_label))  # "throughput (ops/s)": its unit
    data = shown  # for programs (JSON): every column, the notes on their rows
    said = list(dict.fromkeys(ref["size"].astype(str)))
    if "storage" in shown and shown["storage"].nunique() == 1:
        said.append(f"{shown['storage'].iloc[0]} figures")
        shown = shown.drop(columns=["storage"])
    blank = [c for c in ("published_text",) if c in shown and (shown[c].fillna("") == "").all()]
    shown = shown.drop(columns=blank)  # (no remark published: no column of dashes)
    notes = []
    if "note" in shown:  # a note repeated on many rows (CPU: the instance's vs this host's), said once
        told = shown[shown["note"].fillna("") != ""]
        notes = [Note(f"{m}: {n}") for m, n in dict.fromkeys(zip(told["metric"], told["note"], strict=True))]
        shown = shown.drop(columns=["note"])
    rest = f"Published but not measured in this run: {', '.join(missing)}." if missing else ""
    table = Table(shown, data=data)
    return [Section(f"Measured vs published ({', '.join(said)})", [table, Note(rest), *notes])]


def _run_sections(a: RunAnalysis) -> list[Section]:
    """The run's description, the off/on statistics, its steps and their steady-state note."""
    run = a.run
    sections = [Section("Run", [Facts(metadata(run))])]
    ab = a.statistics
    if ab is not None and not ab.empty:
        cols = ["mix", "threads", *(c for c in AB_COLUMNS if c not in ("ci_low", "ci_high", "direction"))]
        stats_shown = ab[cols].assign(metric=ab["metric"].map(metric_label)).rename(columns=AB_LABELS)
        sections.append(Section("Audit off (A) vs on (B): statistics", [Table(stats_shown)]))
    frame = steps_frame(run)
    said = frame.drop(columns=[c for c in ("reasons", "warnings") if c in frame])
    # numbers in cells; what a step's reasons and warnings say, below (and in the data: JSON)
    steps: list[Block] = [Table(said, data=frame)]
    if unsteady := steady_note(run):
        steps.append(Note(unsteady, "warning"))
    steps += [Note(f"{step}: {said}") for step, said in step_warnings(frame)]
    sections.append(Section("Steps", steps))
    return sections
