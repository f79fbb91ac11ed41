"""``regress --report DIR``: regress.html (self-contained, plots inline) and regress.md (plots beside it in
``regress-figures/``), with a trend plot per flagged series: each night's value (the median of its
repetitions) with its spread (min-max), the change point marked, and the tags of the night it began."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ycsb_runner.nightly.regress import (
    IMPROVEMENT,
    REGRESSION,
    RegressResult,
    accepted_changes,
    flagged,
    open_changes,
)
from ycsb_runner.present.document import Document, Facts, Figure, Note, Section, Table
from ycsb_runner.present.output import cell_text
from ycsb_runner.report.pages import write_pages
from ycsb_runner.report.plots import latency_unit, png, pyplot
from ycsb_runner.runs.metrics import metric_label, registered_metric
from ycsb_runner.runs.series import SeriesNights
from ycsb_runner.safe import text as textsafe

# The report's flagged table: the series in one column, what changed, how sure, from when (every column of
# every series: `regress -f csv` / `-f json`).
TABLE_COLUMNS = [
    "series",
    "metric",
    "verdict",
    "before_median",
    "after_median",
    "change_pct",
    "p_adjusted",
    "change_run",
    "detectable_pct",
    "alert",  # its alert_id and triage state (the change run's tags are in the open changes' section)
]
MAX_TRENDS = 12  # series plotted when none is flagged (throughput first)
_STAMP = re.compile(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})")


def run_tick(run_id: str) -> str:
    """A run id as an x tick: its date and time when it begins with one (``20261201-230518-quick`` ->
    ``2026-12-01 23:05``), else the id itself (at most 20 characters, cut at the end)."""
    m = _STAMP.match(str(run_id))
    if m:
        return f"{m[1]}-{m[2]}-{m[3]} {m[4]}:{m[5]}"
    text = str(run_id)
    return text if len(text) <= 20 else text[:19] + "…"


def axis_scale(metric: str, values: np.ndarray) -> tuple[str, float]:
    """(the y axis label, the divisor of its values): a latency in µs, ms or s as its size reads best
    (``plots.latency_unit``: 900,000 µs is 900 ms), other figures in their own unit."""
    m = registered_metric(metric)
    if m is None:
        return metric, 1.0
    unit, div = m.unit, 1.0
    if unit == "µs":
        finite = values[np.isfinite(values)]
        unit, div = latency_unit(float(np.abs(finite).max()) if finite.size else 0.0)
    return (f"{m.label} ({unit})" if unit else m.label), div


def baseline_span(judged: SeriesNights) -> tuple[float, float] | None:
    """The x range of the nights the window was judged against (*judged*'s ``baseline``, [start, end) as
    regress stores it), edges between nights; None when the series has none (untested, accepted)."""
    start, end = judged.baseline
    return (start - 0.5, end - 0.5) if 0 <= start < end else None


def trend_plot(result: RegressResult, key: tuple, row: dict) -> bytes:
    """One series: nights on x, value with min-max spread, the baseline's nights shaded, the change point and
    its night's tags."""
    from matplotlib.ticker import FuncFormatter

    plt = pyplot()
    judged = result.series_values[key]
    series = judged.frame
    nights = np.arange(len(series))
    ylabel, div = axis_scale(str(row["metric"]), series["high"].to_numpy(float))
    values = series["value"].to_numpy(float) / div
    low, high = series["low"].to_numpy(float) / div, series["high"].to_numpy(float) / div
    fig, ax = plt.subplots(figsize=(8, 3.2))
    changed = row["verdict"] in (REGRESSION, IMPROVEMENT)
    color = {REGRESSION: "#c0392b", IMPROVEMENT: "#27ae60"}.get(row["verdict"], "#2980b9")
    ax.errorbar(
        nights,
        values,
        yerr=[values - low, high - values],
        fmt="o-",
        color="#34495e",
        ecolor="#95a5a6",
        capsize=3,
        lw=1,
        ms=4,
        label="night (median, min-max)",
    )
    span = baseline_span(judged)
    if span is not None:
        ax.axvspan(*span, color="#3498db", alpha=0.08, label=f"baseline ({int(span[1] - span[0])} nights)")
    c = int(judged.change_index)
    for cp in judged.change_points:
        if cp != c:
            ax.axvline(cp - 0.5, color="#bdc3c7", ls=":", lw=1)
    if c >= 0:
        tags = f" ({row['change_tags']})" if row.get("change_tags") else ""  # in the legend, off the plot
        begins = "change begins" if changed else "nights tested from"  # no change: the window tested
        said = textsafe.label(f"{begins}: {row['change_run']}{tags}")
        ax.axvline(c - 0.5, color=color, ls="--", lw=1.5, label=said)
        ax.hlines(row["before_median"] / div, 0, c - 0.5, colors="#7f8c8d", lw=1, label="before (median)")
        after = "after (median)" if changed else "tested nights (median)"
        ax.hlines(row["after_median"] / div, c - 0.5, len(series) - 1, colors=color, lw=1.5, label=after)
    ax.set_xticks(nights)
    ticks = [textsafe.label(run_tick(r)) for r in series["run_id"]]
    ax.set_xticklabels(ticks, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}"))
    change = _finite(row.get("change_pct"))
    p_adj = _finite(row.get("p_adjusted"))
    ax.set_title(
        textsafe.label(
            f"{series_name(row)} {_named(row)}: {row['verdict']}"
            + (f" {cell_text(change, decimals=1, signed=True)} %" if change is not None else "")
            + (f" (p adj {cell_text(p_adj, significant=2)})" if p_adj is not None else "")
        ),
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=2, frameon=False)
    return png(fig)


def _finite(v: object) -> float | None:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def trend_rows(table: pd.DataFrame) -> tuple[list[dict], str]:
    """The series to plot: the flagged ones; when none is, the tested series anyway (throughput first, at
    most MAX_TRENDS), and a note of what is left out."""
    shown = flagged(table)
    if not shown.empty:
        rest = len(table) - len(shown)
        return shown.to_dict("records"), f"{rest} unflagged series not plotted." if rest else ""
    if table.empty:
        return [], ""
    order = table.assign(_first=(table["metric"] != "throughput_ops_s").astype(int))
    order = order.sort_values(["_first"], kind="stable").drop(columns="_first")
    rows = order.head(MAX_TRENDS).to_dict("records")
    note = "No series flagged; the tested series"
    if len(table) > MAX_TRENDS:
        note += f" ({MAX_TRENDS} of {len(table)}, throughput first)"
    return rows, note + "."


def lifecycle_section(result: RegressResult) -> Section:
    """ "Open and accepted changes". An open regression stays until it recovers or is accepted (``regress
    accept``); an accepted one names who accepted it, when and why."""
    rows = [
        {
            "state": "open",
            "since run": c["change_run"],
            "tags, or who and when": c["change_tags"],
            "what": f"{c['series']} series regressed",
        }
        for c in open_changes(result.table)
    ] + [
        {
            "state": "accepted",
            "since run": a["change_run"],
            "tags, or who and when": f"by {a['accepted_by']} at {a['accepted_at']}",
            "what": f"{a['why']} ({a['series']} series"
            + (f"; {a['settling']} too recent to test)" if a["settling"] else ")"),
        }
        for a in accepted_changes(result.accepts)
    ]
    shown = Table(pd.DataFrame(rows)) if rows else Note("No open regression, no accepted change.", "aside")
    return Section("Open and accepted changes", [shown])


def _named(row: dict) -> str:
    """The series' metric by its name without a unit (``p99 latency``: the axis says in which)."""
    m = registered_metric(str(row["metric"]))
    return m.label if m else str(row["metric"])


def series_name(row: dict) -> str:
    """``run a-read50-update50 t4 READ`` (``audit on`` when the series is one of an audit state)."""
    audit = f" audit {row['audit']}" if str(row.get("audit")) in ("off", "on") else ""
    return f"{row['phase']} {row['mix']} t{row['threads']}{audit} {row['operation']}"


def flagged_table(shown: pd.DataFrame) -> pd.DataFrame:
    """The report's table of the flagged series *shown*: ``TABLE_COLUMNS``, the metric by its label, p to
    2 significant digits."""
    if shown.empty:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    table = shown.assign(
        series=[series_name(r) for r in shown.to_dict("records")],
        metric=shown["metric"].map(lambda m: metric_label(str(m))),
        p_adjusted=shown["p_adjusted"].map(lambda p: cell_text(p, significant=2)),
        alert=[
            f"{r['alert_id']} {r['triage']}".strip() if r.get("alert_id") else ""
            for r in shown.to_dict("records")
        ],
    )
    return table[TABLE_COLUMNS]


def _figure(v: float) -> str:
    return cell_text(v, decimals=0) if abs(v) >= 1000 else cell_text(v, significant=4)


def evidence_sections(result: RegressResult) -> list[Section]:
    """ "Evidence: SERIES" per flagged series with an ``evidence`` object (``nightly.evidence``): the
    p-values and noise model, the baseline and tested nights' values, what else moved (largest first)."""
    t = result.table
    if t.empty or "evidence" not in t:
        return []
    out = []
    for row in flagged(t).to_dict("records"):
        ev = row.get("evidence")
        if not isinstance(ev, dict):
            continue
        p, p_adj = ev.get("p_value"), ev.get("p_adjusted")
        spread = ev["noise"].get("spread_pct")
        facts = [
            (
                "verdict",
                f"{row['verdict']} {cell_text(row['change_pct'], decimals=1, signed=True)} % "
                f"since {row['change_run']}",
            ),
            (
                "p-value",
                f"{cell_text(p, significant=2)} before correction, {cell_text(p_adj, significant=2)} after"
                if p is not None and p_adj is not None
                else "-",
            ),
            (
                "noise",
                f"{ev['noise']['model']}, night-to-night spread {spread:.1f} % "
                f"({ev['noise'].get('estimate')})"
                if spread is not None
                else str(ev["noise"]["model"]),
            ),
            (
                "baseline nights",
                ", ".join(f"{n['run']} {_figure(n['value'])}" for n in ev["baseline_nights"]),
            ),
            ("tested nights", ", ".join(f"{n['run']} {_figure(n['value'])}" for n in ev["tested_nights"])),
            ("what else moved", ev["summary"]),
        ]
        if ev.get("folders_not_read"):
            facts.append(("run folders not read", ", ".join(ev["folders_not_read"])))
        moved = pd.DataFrame(ev["moved"][:20], columns=["figure", "before", "after", "text"])
        blocks: list = [Facts(facts, listed=True)]
        if not moved.empty:
            blocks.append(Table(moved.rename(columns={"text": "change"})))
        out.append(Section(f"Evidence: {series_name(row)} {_named(row)}", blocks))
    return out


PLAN_SHOWN = {
    "series": "series",
    "metric": "metric",
    "detectable_pct": "detects (%)",
    "needs_nights": "more nights",
    "night_share_pct": "night's own share (%)",
    "needs_repetitions": "repetitions a night",
    "needs_minutes": "+ min a night",
}


def plan_section(result: RegressResult) -> list[Section]:
    """ "How to tell": when some series cannot detect --min-effect, what would let them (``suite_plan``
    and each series' needs_nights / needs_repetitions); none when every tested series can."""
    t = result.table
    if t.empty or "needs_nights" not in t:
        return []
    blind = t[t["detectable_pct"] > result.options.min_effect_pct]
    if blind.empty:
        return []
    rows = blind.sort_values("detectable_pct").head(MAX_TRENDS)
    shown = rows.assign(
        series=[series_name(r) for r in rows.to_dict("records")],
        metric=rows["metric"].map(lambda m: metric_label(str(m))),
        detectable_pct=rows["detectable_pct"].map(lambda v: cell_text(v, decimals=1)),
        needs_nights=rows["needs_nights"].map(
            lambda v: cell_text(v, decimals=0) if v == v else "more than the baseline holds"
        ),
        needs_repetitions=rows["needs_repetitions"].map(
            lambda v: cell_text(v, decimals=0) if v == v else "too many"
        ),
        needs_minutes=rows["needs_minutes"].map(lambda v: cell_text(v, decimals=1)),
        night_share_pct=rows["night_share_pct"].map(
            lambda v: cell_text(v, decimals=0) if v == v else "not measured"
        ),
    )[list(PLAN_SHOWN)].rename(columns=PLAN_SHOWN)
    model = (
        "More nights: today's noise (spread and night-to-night correlation) over a longer baseline. "
        "Repetitions: the night's value is their median, whose noise falls as 1.25 / sqrt(r) of one "
        "repetition's (1 / sqrt(2) for 2); the night's own share of the spread (the host's state, the "
        "server's start) does not fall: measured from the ranges of nights of several repetitions (the "
        "table's night share), else taken as none (optimistic when the host's nights differ); minutes from "
        "the steps' measured durations."
    )
    return [Section("How to tell", [Note(result.plan.get("line") or "", "aside"), Table(shown), Note(model)])]


def write_regress_report(result: RegressResult, out_dir: Path) -> tuple[Path, Path]:
    """regress.html, regress.md and regress-figures/ in *out_dir* (nothing through a link out of it)."""
    return write_pages(regress_document(result), out_dir, "regress.html", "regress.md")


def regress_document(result: RegressResult) -> Document:
    """The regress report as a document: the decision and how it was tested, the flagged series, the open
    and accepted changes, a trend plot per flagged series."""
    summary = result.summary()
    shown = flagged(result.table)
    title = f"ycsb-runner regress: {result.suite}"
    facts = [
        ("decision", f"{summary['decision']} (exit {summary['exit_code']})"),
        ("newest run", str(result.newest)),
        ("runs in the series", str(summary["runs"])),
        ("series tested", str(summary["series_tested"])),
        (
            "test",
            f"alpha {summary['alpha']:g} after {summary['correction']} correction; min effect "
            f"{summary['min_effect_pct']:g} %; the last {summary['confirm']} to {summary['window']} nights, "
            "every one of them off by more than a quarter of the min effect, against the stable segment "
            "before them (it begins at the last E-Divisive change point)",
        ),
        ("canaries", "; ".join(result.canary_lines)),
    ]
    flagged_block = Note("No series flagged.", "aside") if shown.empty else Table(flagged_table(shown))
    sections = [
        Section(None, [Facts(facts, listed=True)]),
        Section("Flagged series", [flagged_block]),
        *plan_section(result),
        *evidence_sections(result),
        lifecycle_section(result),
        Section("Trends", _trends(result)),
    ]
    return Document(title, title, sections, "regress-figures")


def _trends(result: RegressResult) -> list[Note | Figure]:
    """What is plotted (a note) and a trend plot per series."""
    rows, note = trend_rows(result.table)
    blocks: list[Note | Figure] = [Note(note)] if note else []
    for i, row in enumerate(rows):
        key = tuple(row[k] for k in ("phase", "mix", "threads", "audit", "operation", "metric"))
        match = next((k for k in result.series_values if tuple(map(str, k)) == tuple(map(str, key))), None)
        if match is None:
            continue
        caption = f"{series_name(row)} {_named(row)}: {row['verdict']}"
        named = f"{row['phase']} {row['mix']} {row['operation']} {row['metric']}"  # file names keep raw names
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{i + 1:02d}-{named}")
        blocks.append(Figure(stem, caption, [partial(trend_plot, result, match, row)], numbered=False))
    return blocks
