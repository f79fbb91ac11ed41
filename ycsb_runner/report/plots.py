"""The report's figures: PNG bytes from a ``RunResult``, each answering one question at a glance.

* ``plot_step_timeseries``: small multiples, one panel per step (load and run steps in separate figures),
  throughput and p50/p95/p99 latency over the step (HDR interval logs; else YCSB's status lines, which
  carry avg/p90/p99), each panel on its own scale, latency in µs, ms or s as the values need;
* ``plot_spectrum``: latency by percentile per operation, one line per step, the x axis stretched towards
  the tail (1/(1-q), as HdrHistogram plots are drawn);
* ``plot_audit_overhead``: audit on vs off per mix, % change per metric with its 95% interval, each mix on
  its own scale, the published change beside it;
* ``plot_reference_ratio``: measured / published per mix and metric (log scale, 1 = as published);
* ``plot_threads``: throughput and latency against the thread count, measured and published.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ycsb_runner.reference.ratios import ANSWER_RATIOS
from ycsb_runner.runs.metrics import METRICS
from ycsb_runner.runs.model import RunResult

SPECTRUM = (0.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999)
OFF_ON = {"off": "-", "on": "--"}
# A panel is drawn at most PANEL_WIDTH_IN wide: at 90 dpi its 9 pt text stays legible when the report's
# figures reflow to one column on an 800 px window (the report shows images at their own size or smaller).

#: A panel not drawn yet: called, it draws its image (``document.Figure.panels`` calls it when a renderer
#: shows pixels). A ``plot_*`` function does the data's work and returns one per image; ``draw`` draws them.
Draw = Callable[[], bytes]


@cache
def pyplot() -> Any:
    """matplotlib's pyplot, imported the first time a panel is drawn (a report written as JSON, CSV or to
    the terminal never imports it): the Agg backend, the report's text sizes, and text.parse_math off: a
    "$" in a label (a tag, a run id, a name from a capture) is a dollar sign, never mathtext, whose parser
    raised on `$\\foo^$` (issue 38): every figure's text is plain text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "legend.fontsize": 8, "text.parse_math": False})
    return plt


#: Every panel is drawn under it, whenever a renderer draws it: a 1e308 figure is inf, not a numpy warning
#: (``run_report.run_document``, where the panels' data is worked out, is under it too).
QUIET = np.errstate(over="ignore", invalid="ignore", divide="ignore")


def draw(panels: list[Draw]) -> list[bytes]:
    """Each panel's PNG."""
    return [panel() for panel in panels]


def png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    pyplot().close(fig)
    return buf.getvalue()


def log_scale(ax: Any, which: str = "y") -> None:
    """A log scale on *ax*'s *which* axis whose tick labels are plain numbers ("100", "0.5"): matplotlib's
    own log labels are mathtext, shown as typed ("$\\mathdefault{10^{2}}$") while math parsing is off."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    getattr(ax, f"set_{which}scale")("log")
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def latency_unit(max_us: float) -> tuple[str, float]:
    """("µs", 1), ("ms", 1e3) or ("s", 1e6): the unit in which *max_us* reads best."""
    if not max_us or max_us != max_us or max_us < 5_000:
        return "µs", 1.0
    if max_us < 5_000_000:
        return "ms", 1e3
    return "s", 1e6


def short_step(step: str, row: pd.Series | dict | None = None) -> str:
    """``19-run-read50_update50-t4-audit-off-r1`` -> ``19 read50_update50, 4 thr, audit off``."""
    if row is None:
        return str(step)
    no = str(step).split("-", 1)[0]
    audit = f", audit {row['audit']}" if row.get("audit") in ("off", "on") else ""
    return f"{no} {row['mix']}, {row['threads']} thr{audit}"


# --- over time ----------------------------------------------------------------------------------------


def latency_over_time(run: RunResult, step: str) -> tuple[pd.DataFrame, str]:
    """(time_s, operation, p50/p95/p99 or avg/p90/p99 columns in µs) of one step, and where it came from."""
    hdr_dir = run.hdr_dir(step)
    if hdr_dir.is_dir() and any(hdr_dir.glob("*.hdr")):
        from ycsb_runner.parse import hdr_intervals

        try:
            iv = hdr_intervals(hdr_dir, (50.0, 95.0, 99.0))
        except Exception:  # noqa: BLE001 - a damaged log falls back to the status lines
            iv = pd.DataFrame()
        if not iv.empty:
            iv = iv[(iv["kind"] == "op") & (iv["operation"] != "CLEANUP") & (iv["count"] > 0)]
            iv = iv.assign(time_s=iv["start_s"] + iv["length_s"])
            return iv[["time_s", "operation", "p50", "p95", "p99"]], "HDR interval logs"
    ts = run.timeseries
    if ts.empty or "avg_us" not in ts:
        return pd.DataFrame(), ""
    ops = ts[(ts["step"] == step) & (ts["kind"] == "op") & (ts["operation"] != "CLEANUP")]
    ops = ops[ops["avg_us"].notna()]
    out = ops.rename(columns={"elapsed_s": "time_s", "avg_us": "avg", "p90_us": "p90", "p99_us": "p99"})
    return out[["time_s", "operation", "avg", "p90", "p99"]], "YCSB status lines"


def plot_step_timeseries(
    run: RunResult, phase: str, skip: frozenset[str] = frozenset()
) -> tuple[list[Draw], str]:
    """One image per step of *phase* but those in *skip* (the report lays them out to the page's width):
    throughput (top) and latency percentiles (bottom), in one latency unit for every step of the figure;
    and where the latencies came from."""
    ts = run.timeseries
    steps = run.steps
    if ts.empty or steps.empty or "current_ops_per_s" not in ts:
        return [], ""
    steps = steps[steps["phase"] == phase]
    names = [s for s in steps["step"] if (ts["step"] == s).any() and s not in skip]
    if not names:
        return [], ""
    lats = {name: latency_over_time(run, name) for name in names}
    sources = {source for _, source in lats.values() if source}
    peak = max(
        (
            float(lat[[c for c in lat.columns if c not in ("time_s", "operation")]].max().max())
            for lat, _ in lats.values()
            if not lat.empty
        ),
        default=0.0,
    )
    unit, div = latency_unit(peak)
    panels = [partial(_step_panel, ts, steps, name, lats[name][0], unit, div) for name in names]
    return panels, " and ".join(sorted(sources)) or "YCSB status lines"


@QUIET
def _step_panel(
    ts: pd.DataFrame, steps: pd.DataFrame, name: str, lat: pd.DataFrame, unit: str, div: float
) -> bytes:
    """One step's image of ``plot_step_timeseries``.

    Long because matplotlib draws a figure one call at a time: axes, lines, labels and legend of each step.
    """
    info = steps[steps["step"] == name].iloc[0]
    heads = ts[(ts["step"] == name)].drop_duplicates("status_index")
    heads = heads[heads["current_ops_per_s"].notna() & (heads["status_index"] > 0)]
    heads = heads.drop_duplicates("elapsed_s")  # the closing status line repeats the last second
    fig, (ax_tp, ax_lat) = pyplot().subplots(2, 1, sharex=True, figsize=(4.4, 4.6), layout="constrained")
    ax_tp.plot(heads["elapsed_s"], heads["current_ops_per_s"], marker=".", color="#333")
    ax_tp.set_ylabel("ops/s")
    ax_tp.set_ylim(bottom=0)
    points = len(heads)
    ax_tp.set_title(f"{short_step(name, info)}\n{points} status point{'s' if points != 1 else ''}")
    end = float(heads["elapsed_s"].max()) if not heads.empty else 0.0
    if not lat.empty:
        end = max(end, float(lat["time_s"].max()))
        pcols = [c for c in lat.columns if c not in ("time_s", "operation")]
        colors = {"READ": "#4c72b0", "UPDATE": "#dd8452", "INSERT": "#55a868", "SCAN": "#8172b2"}
        styles = dict(zip(pcols, (":", "-", "--"), strict=False))
        for op, g in lat.groupby("operation", sort=False):
            g = g.drop_duplicates("time_s")
            for c in pcols:
                ax_lat.plot(
                    g["time_s"],
                    g[c] / div,
                    marker=".",
                    markersize=3,
                    linestyle=styles[c],
                    color=colors.get(str(op), "#937860"),
                    label=f"{op} {c}",
                )
        ax_lat.set_ylabel(f"latency ({unit})")
        ax_lat.set_ylim(bottom=0)
        # below the axes, never over a line
        ax_lat.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, frameon=False, handlelength=2.6)
    ax_lat.set_xlabel("seconds into the step")
    ax_lat.set_xlim(0, max(end, 1.0) * 1.05)  # from the step's start, also with one status point
    _mark_warmup(ax_tp, ax_lat, info)
    for ax in (ax_tp, ax_lat):
        ax.grid(alpha=0.3)
    return png(fig)


def _mark_warmup(ax_tp: Any, ax_lat: Any, info: pd.Series) -> None:
    """The steady state on a step's panel: the warm-up cut (steps.csv ``warmup_end_s``) shaded and
    labelled with its rule, and a non-stationary window named in red."""
    cut = info.get("warmup_end_s")
    if cut is not None and not pd.isna(cut) and float(cut) > 0:
        for ax in (ax_tp, ax_lat):
            ax.axvspan(0, float(cut), color="#999", alpha=0.18, linewidth=0)
            ax.axvline(float(cut), color="#555", linestyle="--", linewidth=1)
        ax_tp.annotate(
            f"warm-up {float(cut):.0f} s ({info.get('warmup_rule') or 'cut'})",
            xy=(float(cut), 0.02),
            xycoords=("data", "axes fraction"),
            xytext=(3, 0),
            textcoords="offset points",
            fontsize=7,
            color="#333",
        )
    if str(info.get("stationary")).lower() == "false":
        ax_tp.text(
            0.99,
            0.97,
            "not stationary",
            transform=ax_tp.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            color="#c44e52",
        )


# --- percentile spectrum ------------------------------------------------------------------------------


_SPECTRUM_COLUMNS = ["step", "operation", "percentile", "latency_us"]


def spectrum_frame(run: RunResult) -> tuple[pd.DataFrame, str]:
    """Long form (step, operation, percentile, latency_us) from the `.hdr` logs, else operations.csv."""
    rows = [row for hdr_dir in run.hdr_dirs() for row in _hdr_spectrum(hdr_dir)]
    if rows:
        return pd.DataFrame(rows, columns=_SPECTRUM_COLUMNS), ".hdr logs"
    ops = run.whole_operations  # merged rows of multi-client steps
    if ops.empty:
        return pd.DataFrame(), ""
    return pd.DataFrame(_operations_spectrum(ops), columns=_SPECTRUM_COLUMNS), "operations.csv"


def _hdr_spectrum(hdr_dir: Path) -> list[tuple[str, str, float, float]]:
    """(step, operation, percentile, latency) of one step's `.hdr` logs; none when they are absent or
    damaged (a damaged log must not stop the report)."""
    from ycsb_runner.parse import hdr_percentiles

    if not any(hdr_dir.glob("*.hdr")):
        return []
    try:
        df = hdr_percentiles(hdr_dir, SPECTRUM)
    except Exception:  # noqa: BLE001 - a damaged log must not stop the report
        return []
    df = df[(df["kind"] == "op") & (df["operation"] != "CLEANUP")]
    rows = []
    for _, r in df.iterrows():
        for q in SPECTRUM:
            v = r.get(f"p{q:g}")
            if v == v and v is not None:
                rows.append((hdr_dir.parent.name, r["operation"], q, float(v)))
    return rows


def _operations_spectrum(ops: pd.DataFrame) -> list[tuple[str, str, float, float]]:
    """(step, operation, percentile, latency) of operations.csv's ``p<q>_us`` columns."""
    ops = ops[(ops["kind"] == "op") & (ops["operation"] != "CLEANUP")]
    quantiles = {
        col: float(col[1:-3])
        for col in ops.columns
        if col.startswith("p") and col.endswith("_us") and col[1:-3].replace(".", "", 1).isdigit()
    }
    return [
        (r["step"], r["operation"], q, float(r[col]))
        for _, r in ops.iterrows()
        for col, q in quantiles.items()
        if r[col] == r[col]
    ]


def _tail_x(q: float) -> float:
    return 1.0 / (1.0 - min(q, 99.999) / 100.0)


def _styles_meaning(audited: bool, threads: list[Any]) -> str:
    """What the spectrum's line styles tell apart: the audit arms, else the thread counts ("": nothing)."""
    if audited:
        return "audit off solid, on dashed"
    if len(threads) > 1:
        names = ("solid", "dashed", "dotted", "dash-dot") * 4
        return ", ".join(f"{t} threads {n}" for t, n in zip(threads, names, strict=False))
    return ""


def plot_spectrum(run: RunResult) -> tuple[list[Draw], str, str]:
    """One image per operation: latency by percentile, one line per measured step. Returns the images,
    the source and what the line styles mean ("audit off solid, on dashed", the thread counts, or "")."""
    df, source = spectrum_frame(run)
    if df.empty:
        return [], source, ""
    steps = run.steps.set_index("step") if not run.steps.empty else pd.DataFrame()
    if not steps.empty:  # the measured runs; the load steps only when there is nothing else
        run_steps = [s for s in df["step"].unique() if s in steps.index and steps.loc[s, "phase"] == "run"]
        if run_steps:
            df = df[df["step"].isin(run_steps)]
    ops = list(dict.fromkeys(df["operation"]))
    shown = steps.loc[[s for s in df["step"].unique() if s in steps.index]] if not steps.empty else steps
    mixes = list(dict.fromkeys(shown["mix"])) if not shown.empty else []
    threads = sorted(shown["threads"].unique().tolist()) if not shown.empty else []
    audited = not shown.empty and shown["audit"].isin(["off", "on"]).any()
    meaning = _styles_meaning(audited, threads)
    unit, div = latency_unit(float(df["latency_us"].max()))  # one unit for every operation's panel
    lines = _SpectrumLines(steps, mixes, threads, unit, div)
    return [partial(_spectrum_panel, df[df["operation"] == op], op, lines) for op in ops], source, meaning


@dataclass(frozen=True)
class _SpectrumLines:
    """What every panel of ``plot_spectrum`` draws its lines by: the steps, the colour per mix, the
    line style per thread count, the latency unit."""

    steps: pd.DataFrame
    mixes: list[Any]
    threads: list[Any]
    unit: str
    div: float


@QUIET
def _spectrum_panel(part: pd.DataFrame, op: str, lines: _SpectrumLines) -> bytes:
    """One operation's image of ``plot_spectrum``."""
    steps, mixes, threads, div = lines.steps, lines.mixes, lines.threads, lines.div
    palette = pyplot().get_cmap("tab10")
    styles = ("-", "--", ":", "-.")
    fig, ax = pyplot().subplots(figsize=(5.6, 4.8), layout="constrained")
    for step, g in part.groupby("step", sort=False):
        info = steps.loc[step] if step in steps.index else None
        mix = info["mix"] if info is not None else step
        color = palette(mixes.index(mix) % 10) if mix in mixes else None
        style = OFF_ON.get(str(info["audit"]) if info is not None else "", "")
        if not style:  # no audit arms: thread counts apart by line style
            rank = threads.index(info["threads"]) if info is not None and info["threads"] in threads else 0
            style = styles[rank % 4]
        g = g.sort_values("percentile")
        ax.plot(
            [_tail_x(q) for q in g["percentile"]],
            g["latency_us"] / div,
            marker="o",
            markersize=3,
            linestyle=style,
            color=color,
            label=short_step(step, info.to_dict() | {"mix": mix} if info is not None else None),
        )
    have = set(part["percentile"])
    ticks = [q for q in (0, 50, 90, 95, 99, 99.9, 99.99, 99.999) if q in have]
    ax.set_xscale("log")
    ax.set_xticks([_tail_x(q) for q in ticks], [f"p{q:g}" if q else "min" for q in ticks])
    ax.minorticks_off()
    values = part["latency_us"][part["latency_us"] > 0] / div
    if not values.empty and values.max() / max(values.min(), 1e-9) > 30:
        log_scale(ax)
    ax.set(title=f"{op}: latency by percentile", xlabel="percentile (log scale towards the tail)")
    ax.set_ylabel(f"latency ({lines.unit})")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False, handlelength=3.2)
    return png(fig)


# --- audit overhead -----------------------------------------------------------------------------------


def plot_audit_overhead(overhead: pd.DataFrame) -> list[Draw]:
    """One image per mix: measured % change (on vs off) per metric with its interval, published beside.

    *overhead*: ``analyse.table.audit_overhead`` (mix, label, change_pct, ci_low_pct, ci_high_pct,
    published_pct, n). A mix without repetitions to give an interval says so once, in its title."""
    if overhead.empty or overhead["change_pct"].notna().sum() == 0:
        return []
    return [
        partial(_overhead_panel, mix, overhead[overhead["mix"] == mix].reset_index(drop=True))
        for mix in dict.fromkeys(overhead["mix"])
    ]


@QUIET
def _overhead_panel(mix: Any, part: pd.DataFrame) -> bytes:
    """One mix's image of ``plot_audit_overhead``."""
    fig, ax = pyplot().subplots(figsize=(5.4, 1.6 + 0.5 * len(part)), layout="constrained")
    y = np.arange(len(part))
    measured = part["change_pct"].fillna(0.0)
    low = (measured - part["ci_low_pct"]).clip(lower=0).fillna(0.0)
    high = (part["ci_high_pct"] - measured).clip(lower=0).fillna(0.0)
    xerr = [low, high] if part["ci_low_pct"].notna().any() else None
    ax.barh(y - 0.2, measured, 0.38, xerr=xerr, capsize=3, color="#dd8452", label="measured")
    has_pub = part["published_pct"].notna()
    ax.barh((y + 0.2)[has_pub], part["published_pct"][has_pub], 0.38, color="#4c72b0", label="published")
    ends = pd.concat([part["ci_high_pct"], part["ci_low_pct"], measured, part["published_pct"]]).dropna()
    lo, hi = min(0.0, float(ends.min())), max(0.0, float(ends.max()))
    span = (hi - lo) or 1.0
    ax.set_xlim(lo - 0.28 * span, hi + 0.28 * span)  # room for the labels inside the frame
    for i, r in part.iterrows():
        if r["change_pct"] != r["change_pct"]:
            continue
        value = float(r["change_pct"])
        tip = float(r["ci_high_pct"]) if value >= 0 and r["ci_high_pct"] == r["ci_high_pct"] else value
        tip = float(r["ci_low_pct"]) if value < 0 and r["ci_low_pct"] == r["ci_low_pct"] else tip
        ax.annotate(
            f"{value:+.1f}%",
            (tip, i - 0.2),
            xytext=(3 if value >= 0 else -3, 0),
            textcoords="offset points",
            va="center",
            ha="left" if value >= 0 else "right",
            fontsize=8,
        )
    ax.set_yticks(y, part["label"])
    ax.axvline(0, color="#333", linewidth=0.8)
    ax.invert_yaxis()
    no_interval = part["ci_low_pct"].isna().all()
    n = int(part["n"].max()) if part["n"].notna().any() else 0
    title = f"{mix}: audit on vs off" + (f"\n(n={n}: too few runs for an interval)" if no_interval else "")
    ax.set(title=title, xlabel="change (% of the off value)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22 - 0.6 / (1 + len(part))), ncol=2, frameon=False)
    return png(fig)


# --- measured vs published ----------------------------------------------------------------------------


def _ratio_axis(ax: Any, ratios: pd.Series) -> None:
    """A log x axis of ratios "N×" spanning *ratios* and 1 (a red line at 1: as published)."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.axvline(1.0, color="#c44e52", linewidth=1)
    ax.set_xscale("log")
    low, high = float(ratios.min()), float(ratios.max())
    ax.set_xlim(min(low, 1.0) / 2, max(high, 1.0) * 4)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.xaxis.set_minor_locator(NullLocator())


def _times(ratio: float) -> str:
    return f"{ratio:,.0f}×" if ratio >= 10 else f"{ratio:.2g}×"


def plot_reference_ratio(cmp: pd.DataFrame) -> list[Draw]:
    """One image per metric: measured / published per mix (and threads), log scale, 1 = as published; the
    axis names the published set it compares with (``storage``: cloud, physical)."""
    cmp = cmp[cmp["ratio"].notna() & (cmp["ratio"] > 0)]
    if cmp.empty:
        return []
    panels: list[Draw] = []
    if "storage" not in cmp:
        cmp = cmp.assign(storage="")
    several = cmp["storage"].nunique() > 1  # a bar per published set, each named (cloud, physical)
    for metric in dict.fromkeys(cmp["metric"]):
        part = cmp[cmp["metric"] == metric].drop_duplicates(
            ["mix", "threads", "published_threads", "storage"]
        )
        ratio = part["ratio"].astype(float)
        part = part[np.isfinite(ratio) & (ratio > 0) & (ratio < 1e300)]  # a log axis: an inf has no place
        if not part.empty:
            panels.append(partial(_ratio_panel, metric, part, several))
    return panels


@QUIET
def _ratio_panel(metric: str, part: pd.DataFrame, several: bool) -> bytes:
    """One metric's image of ``plot_reference_ratio``."""
    labels = [
        (
            f"{r.mix} ({r.threads} vs {r.published_threads} thr"
            if r.threads != r.published_threads
            else f"{r.mix} ({r.threads} thr"
        )
        + (f", {r.storage})" if several else ")")
        for r in part.itertuples()
    ]
    fig, ax = pyplot().subplots(figsize=(5.6, 1.5 + 0.4 * len(part)), layout="constrained")
    y = np.arange(len(part))
    ax.barh(y, part["ratio"], color="#8172b2")
    for i, r in enumerate(part.itertuples()):
        ax.annotate(
            _times(r.ratio),
            (r.ratio, i),
            xytext=(3, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    _ratio_axis(ax, part["ratio"])
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    m = METRICS.get(metric)
    title = f"{m.label} ({m.unit})" if m and m.unit else (m.label if m else metric)
    if metric == "server_cpu_pct":
        title += "\npublished: % of the instance; measured: % of this host"
    # which published figures (a study may publish a cloud and a physical-machine set)
    storage = " and ".join(str(x) for x in dict.fromkeys(part["storage"].dropna()) if x)
    against = f"published {storage} figures" if storage else "published"
    ax.set(title=title, xlabel=f"measured / {against} (log scale)")
    ax.grid(axis="x", alpha=0.3, which="both")
    return png(fig)


def plot_threads(measured: pd.DataFrame, published: pd.DataFrame | None) -> list[Draw]:
    """Throughput and read/write latency against threads per mix (one image each), measured, then the
    published values in their own images.

    *measured*: step_metrics rows (mix, threads, throughput_ops_s, read_avg_us, write_avg_us);
    *published*: the reference rows (mix, threads, throughput_ops_s, ral_us, wal_us) or None."""
    if measured.empty or measured["threads"].nunique() < 2:
        return []
    sets = [("measured (this run)", measured, "throughput_ops_s", "read_avg_us", "write_avg_us")]
    if published is not None and not published.empty:
        sets.append(("published", published, "throughput_ops_s", "ral_us", "wal_us"))
    panels: list[Draw] = []
    for title, df, tp, rd, wr in sets:
        mean = df.groupby(["mix", "threads"], sort=False)[[tp, rd, wr]].mean().reset_index()
        panels += [partial(_threads_panel, title, mean, (tp, rd, wr), latency) for latency in (False, True)]
    return panels


@QUIET
def _threads_panel(title: str, mean: pd.DataFrame, columns: tuple[str, str, str], latency: bool) -> bytes:
    """One image of ``plot_threads``: *title*'s throughput (*columns*: throughput, read and write latency)
    against threads, or (*latency*) its read and write latency."""
    plt = pyplot()
    tp, rd, wr = columns
    unit, div = latency_unit(float(mean[[rd, wr]].max().max()))
    fig, ax = plt.subplots(figsize=(5.0, 3.6), layout="constrained")
    for k, (mix, g) in enumerate(mean.groupby("mix", sort=False)):
        g = g.sort_values("threads")
        color = plt.get_cmap("tab10")(k)
        if latency:
            ax.plot(g["threads"], g[rd] / div, marker="o", color=color, label=f"{mix} read avg")
            ax.plot(
                g["threads"], g[wr] / div, marker="s", linestyle="--", color=color, label=f"{mix} write avg"
            )
        else:
            ax.plot(g["threads"], g[tp], marker="o", color=color, label=mix)
    if latency:
        ax.set(title=f"{title}: average latency vs threads", xlabel="threads", ylabel=f"latency ({unit})")
    else:
        ax.set(title=f"{title}: throughput vs threads", xlabel="threads", ylabel="ops/s")
    ax.set_xticks(sorted(mean["threads"].unique()))
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False, handlelength=2.6)
    return png(fig)


# --- findmax ------------------------------------------------------------------------------------------


def target_labels(
    points: list[tuple[int, float, float]], y_top: float = 0.0, near: float = 0.04
) -> list[tuple[str, float, float]]:
    """One label per cluster of probes (target, achieved, latency) that lie within *near* of the plot's
    width and height of each other: their targets joined by "/" at the first one (probes that collapsed to
    the same throughput would otherwise print over each other). Pure."""
    if not points:
        return []
    width = max(x for _, x, _ in points) or 1.0
    height = max(y_top, *(y for _, _, y in points)) or 1.0
    groups: list[list[tuple[int, float, float]]] = []
    for point in points:
        for group in groups:
            _, x0, y0 = group[0]
            if abs(point[1] - x0) <= near * width and abs(point[2] - y0) <= near * height:
                group.append(point)
                break
        else:
            groups.append([point])
    return [("/".join(str(t) for t, _, _ in sorted(g)), g[0][1], g[0][2]) for g in groups]


def plot_findmax(search: dict[str, Any]) -> list[Draw]:
    """``findmax``: the bound's latency (worst operation, steady-state window) against the achieved
    throughput of every probe, joined in the order of their targets (past saturation the curve bends
    back: more offered, less achieved), passing probes filled and failing ones hollow, each labelled with
    its target (probes at one point share a label); the bound as a horizontal line, the found maximum as
    a vertical one."""
    probes = [p for p in search.get("probes", []) if p.get("throughput_ops_s") is not None]
    return [partial(_findmax_panel, search, probes)] if probes else []


@QUIET
def _findmax_panel(search: dict[str, Any], probes: list[dict[str, Any]]) -> bytes:
    """The image of ``plot_findmax`` (*probes*: those with a throughput)."""
    plt = pyplot()
    bound = search["bound"]
    lats = [p["latency_us"] for p in probes if p.get("latency_us") is not None]
    unit, div = latency_unit(max([*lats, float(bound["limit_us"])]))
    fig, ax = plt.subplots(figsize=(5.6, 4.4), layout="constrained")
    order = sorted(probes, key=lambda p: p["target"])  # the curve as the offered load grows
    ax.plot(
        [p["throughput_ops_s"] for p in order if p.get("latency_us") is not None],
        [p["latency_us"] / div for p in order if p.get("latency_us") is not None],
        color="#999",
        linewidth=1,
        zorder=1,
    )
    for passed, style in ((True, {"color": "#2a7d2a"}), (False, {"facecolors": "none", "color": "#c82333"})):
        part = [p for p in probes if bool(p["passed"]) is passed and p.get("latency_us") is not None]
        if part:
            ax.scatter(
                [p["throughput_ops_s"] for p in part],
                [p["latency_us"] / div for p in part],
                s=36,
                zorder=3,
                label="probe passed" if passed else "probe failed",
                **style,
            )
    points = [
        (p["target"], p["throughput_ops_s"], p["latency_us"] / div) for p in order if p.get("latency_us")
    ]
    for text, x, y in target_labels(points, y_top=float(bound["limit_us"]) / div):
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7, color="#555")
    ax.axhline(
        float(bound["limit_us"]) / div, color="#c82333", linestyle="--", label=f"bound {bound['label']}"
    )
    found = search.get("max_ops_s")
    if found is not None:
        ax.axvline(float(found), color="#2a7d2a", linestyle=":", label=f"found max {found} ops/s")
    ax.set(
        title=f"{search.get('mix', '')}, {search.get('threads', '')} threads: {bound['statistic']} latency "
        "vs throughput",
        xlabel="achieved throughput (ops/s, after the warm-up; labels: target)",
    )
    ax.set_ylabel(f"{bound['statistic']} latency ({unit}, worst operation)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return png(fig)


# --- the answer: one figure per study layout, first in the report -----------------------------------------

ANSWER_METRICS = {  # the audit answer's panels: the change a DBA asks about, per mix
    "throughput_ops_s": "throughput",
    "server_reads_avg_rt_us": "read latency",
    "server_writes_avg_rt_us": "write latency",
}


def plot_audit_answer(overhead: pd.DataFrame) -> list[Draw]:
    """One image: every mix's measured change (audit on vs off, % of the off value) in throughput and in
    read and write latency, side by side, one row per mix; its 95 % interval when there are repetitions
    (the title says "one run each: no interval" when there are none); the published change as a black
    diamond. *overhead*: ``analyse.table.audit_overhead``."""
    part = overhead[overhead["metric"].isin(ANSWER_METRICS)] if not overhead.empty else overhead
    if part.empty or part["change_pct"].notna().sum() == 0:
        return []
    return [partial(_audit_answer_panel, overhead, part)]


@QUIET
def _audit_answer_panel(overhead: pd.DataFrame, part: pd.DataFrame) -> bytes:
    """The image of ``plot_audit_answer`` (*part*: the rows of its metrics)."""
    plt = pyplot()
    mixes = list(dict.fromkeys(overhead["mix"]))
    metrics = [m for m in ANSWER_METRICS if (part["metric"] == m).any()]
    fig, axes = plt.subplots(
        1,
        len(metrics),
        sharey=True,
        figsize=(2.0 * len(metrics) + 1.2, 0.9 + 0.28 * len(mixes)),
        layout="constrained",
        squeeze=False,
    )
    y = np.arange(len(mixes))
    interval = part["ci_low_pct"].notna().any()
    for ax, metric in zip(axes[0], metrics, strict=True):
        rows = part[part["metric"] == metric].set_index("mix").reindex(mixes)
        measured = rows["change_pct"]
        xerr = None
        if interval:
            low = (measured - rows["ci_low_pct"]).clip(lower=0).fillna(0.0)
            high = (rows["ci_high_pct"] - measured).clip(lower=0).fillna(0.0)
            xerr = [low, high]
        ax.barh(y, measured.fillna(0.0), 0.7, xerr=xerr, capsize=3, color="#dd8452", label="measured")
        pub = rows["published_pct"]
        shown = pub.notna().to_numpy()
        ax.plot(pub[shown], y[shown], "D", color="#222", markersize=5, label="published", linestyle="none")
        for i, value in enumerate(measured):
            if value == value:
                ax.annotate(
                    f"{value:+.0f}%",
                    (value, i),
                    xytext=(3 if value >= 0 else -3, 0),
                    textcoords="offset points",
                    va="center",
                    ha="left" if value >= 0 else "right",
                    fontsize=7,
                )
        ends = pd.concat([measured, pub, rows["ci_low_pct"], rows["ci_high_pct"]]).dropna()
        lo, hi = min(0.0, float(ends.min())), max(0.0, float(ends.max()))
        span = (hi - lo) or 1.0
        ax.set_xlim(lo - 0.3 * span, hi + 0.3 * span)
        ax.axvline(0, color="#333", linewidth=0.8)
        ax.set_title(ANSWER_METRICS[metric])
        ax.set_xlabel("change, % of off")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, mixes)
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    said = "95 % interval where there are repetitions" if interval else "one run each: no interval"
    fig.suptitle(f"Audit on vs off per mix ({said})", fontsize=9)
    fig.legend(handles, labels, loc="outside right center", frameon=False)
    return png(fig)


def plot_reference_answer(cmp: pd.DataFrame) -> list[Draw]:
    """One image: measured / published per mix (rows) and metric (one bar each, log scale, the red line
    is 1 = as published). *cmp*: ``RunAnalysis.reference`` rows."""
    if not cmp.empty:  # a ratio a log axis can draw: finite and above 0 (a 1e308 figure gives inf)
        ratio = pd.to_numeric(cmp["ratio"], errors="coerce")
        cmp = cmp[np.isfinite(ratio) & (ratio > 0)]
    return [partial(_reference_answer_panel, cmp)] if not cmp.empty else []


@QUIET
def _reference_answer_panel(cmp: pd.DataFrame) -> bytes:
    """The image of ``plot_reference_answer`` (*cmp*: the rows a log axis can draw)."""
    plt = pyplot()
    metrics = [m for m in ANSWER_RATIOS if (cmp["metric"] == m).any()]
    metrics += [m for m in dict.fromkeys(cmp["metric"]) if m not in metrics]
    mixes = list(dict.fromkeys(cmp["mix"]))
    per = cmp.drop_duplicates(["mix", "metric"]).set_index(["mix", "metric"])["ratio"]
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.34 * len(mixes)), layout="constrained")  # one screen
    height = 0.8 / len(metrics)
    colors = ["#4c72b0", "#dd8452", "#55a868", "#8172b2", "#937860"]
    for j, metric in enumerate(metrics):
        ratios = [per.get((mix, metric), np.nan) for mix in mixes]
        ys = np.arange(len(mixes)) - 0.4 + height * (j + 0.5)
        label = ANSWER_RATIOS.get(metric, metric)
        ax.barh(ys, np.nan_to_num(ratios, nan=0.0), height * 0.95, color=colors[j % len(colors)], label=label)
        for yy, r in zip(ys, ratios, strict=True):
            if r == r:
                ax.annotate(
                    _times(r), (r, yy), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7
                )
    _ratio_axis(ax, cmp["ratio"])
    ax.set_yticks(np.arange(len(mixes)), mixes)
    ax.invert_yaxis()
    ax.set(xlabel="measured / published (log scale; red line: as published)")
    ax.grid(axis="x", alpha=0.3, which="both")
    fig.legend(loc="outside lower center", ncol=len(metrics), frameon=False)
    return png(fig)


def plot_short_steps(run: RunResult, names: list[str]) -> list[Draw]:
    """One small image of the steps in *names* (each too short for a panel of its own): their throughput
    per status point, one line each, seconds into the step."""
    ts = run.timeseries
    if not names or ts.empty or "current_ops_per_s" not in ts:
        return []
    return [partial(_short_steps_panel, run, names)]


@QUIET
def _short_steps_panel(run: RunResult, names: list[str]) -> bytes:
    """The image of ``plot_short_steps``."""
    ts = run.timeseries
    fig, ax = pyplot().subplots(figsize=(5.0, 2.6), layout="constrained")
    steps = run.steps.set_index("step")
    for name in names:
        heads = ts[ts["step"] == name].drop_duplicates("status_index")
        heads = heads[heads["current_ops_per_s"].notna() & (heads["status_index"] > 0)]
        heads = heads.drop_duplicates("elapsed_s")
        row = steps.loc[name] if name in steps.index else None
        label = str(name).split("-", 1)[0] if row is None else short_step(name, row)
        ax.plot(heads["elapsed_s"], heads["current_ops_per_s"], marker="o", markersize=3, label=label)
    ax.set(xlabel="seconds into the step", ylabel="ops/s")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    fig.legend(loc="outside right upper", frameon=False, fontsize=7)
    return png(fig)


def status_points(run: RunResult, step: str) -> int:
    """How many status points (throughput per status line) *step* has: what its time-series panel draws."""
    ts = run.timeseries
    if ts.empty or "current_ops_per_s" not in ts:
        return 0
    heads = ts[ts["step"] == step].drop_duplicates("status_index")
    heads = heads[heads["current_ops_per_s"].notna() & (heads["status_index"] > 0)]
    return int(heads["elapsed_s"].nunique())
