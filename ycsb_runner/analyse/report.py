"""A self-contained HTML report (inline PNG plots, no external assets) and a Markdown twin for one run."""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from ycsb_runner.analyse import stats  # noqa: E402
from ycsb_runner.analyse.table import (  # noqa: E402
    audit_ab,
    layout_of,
    load_run,
    step_metrics,
    study_table,
)
from ycsb_runner.model import RunResult, whole_steps  # noqa: E402
from ycsb_runner.store import atomic_write_bytes, atomic_write_text  # noqa: E402
from ycsb_runner.studies import METRICS  # noqa: E402

CSS = """body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;
text-align:right}th{background:#eee}td:first-child{text-align:left}img{max-width:100%;display:block;
margin:1em 0}h1{font-size:1.6em}code{background:#f4f4f4}"""


# --- figures ------------------------------------------------------------------------------------------


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def plot_timeseries(ts: pd.DataFrame) -> bytes | None:
    """Throughput (current ops/sec) and average latency per operation over time, one line per step."""
    if ts.empty or "elapsed_s" not in ts:
        return None
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 7), sharex=False)
    heads = ts.drop_duplicates(["step", "status_index"])
    for step, g in heads.groupby("step", sort=False):
        g = g[g["current_ops_per_s"].notna()]
        if not g.empty:
            ax1.plot(g["elapsed_s"], g["current_ops_per_s"], marker=".", label=str(step))
    ax1.set(title="Throughput over time", xlabel="elapsed (s)", ylabel="ops/sec")
    ops = (
        ts[ts.get("kind", pd.Series(dtype=str)).eq("op") & ts["avg_us"].notna()]
        if "avg_us" in ts
        else ts.iloc[0:0]
    )
    ops = ops[ops["operation"] != "CLEANUP"]
    for (step, op), g in ops.groupby(["step", "operation"], sort=False):
        ax2.plot(g["elapsed_s"], g["avg_us"], marker=".", label=f"{step} {op}")
    ax2.set(title="Average latency over time (status interval)", xlabel="elapsed (s)", ylabel="µs")
    for ax in (ax1, ax2):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return _png(fig)


def hdr_percentile_frame(run: RunResult) -> pd.DataFrame:
    """Percentiles per (step, operation) from the steps' `.hdr` logs (empty when there are none)."""
    from ycsb_runner.parse import hdr_percentiles

    frames = []
    for hdr_dir in sorted((run.root / "steps").glob("*/hdr")):
        if not any(hdr_dir.glob("*.hdr")):
            continue
        try:
            df = hdr_percentiles(hdr_dir, (50.0, 90.0, 95.0, 99.0, 99.9, 99.99))
        except Exception:  # noqa: BLE001 - a damaged log must not stop the report
            continue
        if not df.empty:
            df.insert(0, "step", hdr_dir.parent.name)
            frames.append(df[df["kind"].isin(["op", "hdr"])])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _pct_value(col: object) -> float | None:
    """``p99`` / ``p99.9_us`` -> 99 / 99.9; None for other columns."""
    if not isinstance(col, str) or not col.startswith("p"):
        return None
    body = col[1:].removesuffix("_us")
    return float(body) if body.replace(".", "", 1).isdigit() else None


def _pct_columns(df: pd.DataFrame) -> list[str]:
    cols = [c for c in df.columns if _pct_value(c) is not None]
    return sorted(cols, key=lambda c: _pct_value(c) or 0.0)


def plot_percentiles(run: RunResult) -> tuple[bytes | None, str]:
    """Latency percentiles per (step, operation): from `.hdr` logs when present, else operations.csv."""
    hdr = hdr_percentile_frame(run)
    source = ".hdr logs"
    df = hdr
    if df.empty:
        source = "operations.csv"
        ops = whole_steps(run.operations)  # merged rows of multi-client steps
        if ops.empty:
            return None, source
        df = ops[(ops["kind"] == "op") & (ops["operation"] != "CLEANUP")]
    cols = _pct_columns(df)
    if df.empty or not cols:
        return None, source
    x = [_pct_value(c) or 0.0 for c in cols]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for _, row in df.iterrows():
        y = [row[c] for c in cols]
        ax.plot(range(len(x)), y, marker="o", label=f"{row['step']} {row['operation']}")
    ax.set_xticks(range(len(x)), [f"p{v:g}" for v in x])
    ax.set(title=f"Latency percentiles per operation (from {source})", ylabel="µs", yscale="log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return _png(fig), source


AUDIT_BAR_METRICS = (
    "throughput_ops_s",
    "server_cpu_pct",
    "server_writes_avg_rt_us",
    "server_reads_avg_rt_us",
)


def plot_audit_bars(run: RunResult) -> bytes | None:
    """Off vs on per mix with the 95% t-interval of the mean (a bare bar when n = 1)."""
    m = step_metrics(run)
    m = m[(m["phase"] == "run") & m["audit"].isin(["off", "on"])]
    metrics = [
        (c, f"{METRICS[c].label} ({METRICS[c].unit})")
        for c in AUDIT_BAR_METRICS
        if c in m and m[c].notna().any()
    ]
    if m.empty or not metrics:
        return None
    mixes = list(dict.fromkeys(m["mix"]))
    fig, axes = plt.subplots(len(metrics), 1, figsize=(10, 3.2 * len(metrics)), squeeze=False)
    width = 0.38
    for ax, (col, title) in zip(axes[:, 0], metrics, strict=True):
        for k, (arm, color) in enumerate((("off", "#4c72b0"), ("on", "#dd8452"))):
            means, errs = [], []
            for mix in mixes:
                s = stats.summarize(m[(m["mix"] == mix) & (m["audit"] == arm)][col])
                means.append(s["mean"])
                errs.append(s["ci_high"] - s["mean"] if s["ci_high"] == s["ci_high"] else 0.0)
            pos = [i + (k - 0.5) * width for i in range(len(mixes))]
            ax.bar(
                pos,
                [0 if v != v else v for v in means],
                width,
                yerr=errs,
                capsize=3,
                color=color,
                label=f"audit {arm}",
            )
        ax.set_xticks(range(len(mixes)), mixes, fontsize=8)
        ax.set(title=f"{title}: audit off vs on (95% CI of the mean)")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return _png(fig)


# --- text ---------------------------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}"
    return str(v)


def display_frame(df: pd.DataFrame, *, compact: bool = True) -> pd.DataFrame:
    """Every cell as text: numbers rounded, NaN as "-". ``compact``: "<mean> ± <stdev>" in one cell and the
    "<x> stdev/min/max" spread columns dropped (when the stdev is NaN, e.g. n = 1, only the mean)."""
    if df.empty:
        return df
    text = df.apply(lambda col: col.map(_fmt))
    if not compact:
        return text
    for col in df.columns:
        sd = f"{col} stdev"
        if sd in df.columns:
            has = df[sd].notna()
            text.loc[has, col] = text.loc[has, col] + " ± " + text.loc[has, sd]
    spread = [
        c
        for c in df.columns
        if isinstance(c, str)
        and c.rsplit(" ", 1)[-1] in ("stdev", "min", "max")
        and c.rsplit(" ", 1)[0] in df.columns
    ]
    return text.drop(columns=spread)


def _text(v: Any, none: str = "-") -> str:
    """A value for people: no Python ``None``/``True`` in the page."""
    if v is None or v == "":
        return none
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | tuple):
        return ", ".join(_text(x) for x in v) or none
    return str(v)


def metadata(run: RunResult) -> list[tuple[str, str]]:
    """(label, value) pairs describing the run: suite, scaling, versions, host, server."""
    m = run.manifest
    suite, target, ycsb, java, host = m.suite, m.target, m.ycsb, m.java, m.host
    scaling = suite.scaling
    mem = host.get("memory_bytes")
    overrides = ", ".join(scaling.get("overrides", [])) or "none"
    server = target.get("server_version") or target.get("build_info", {}).get("version")
    where = "embedded server" if target.get("embedded") else "external server"
    return [
        ("run", f"{m.run_id} ({m.status})"),
        ("suite", f"{suite.name}: {suite.description}"),
        ("study", _text(suite.study, "none declared")),
        ("source", _text(suite.source)),
        (
            "scaling",
            f"scale {_text(scaling.get('scale'), '1')}, size {_text(scaling.get('size'))}, "
            f"overrides {overrides}",
        ),
        (
            "plan",
            f"mixes {_text(suite.mixes)}; threads {_text(suite.threads)}; "
            f"records {_text(suite.recordcount)}; "
            f"repetitions {suite.repetitions}; audit {'/'.join(suite.audit_states) or 'not switched'}",
        ),
        ("server", f"{_text(server, 'unknown version')} at {_text(target.get('url'))} ({where})"),
        (
            "YCSB",
            f"{_text(ycsb.get('core'))} + {_text(ycsb.get('binding_jar'))} "
            f"({_text(ycsb.get('binding_class'))}), "
            f"driver {_text(ycsb.get('driver_version'))}, from {_text(ycsb.get('source'))}",
        ),
        ("Java", f"{_text(java.get('version'))} ({_text(java.get('path'))})"),
        (
            "host",
            f"{_text(host.get('hostname'))}: {_text(host.get('platform'))}, "
            f"{_text(host.get('cpus_logical'))} CPUs, "
            f"{(mem or 0) / 2**30:.1f} GiB, Python {_text(host.get('python'))}",
        ),
        ("audit strategy", _text(m.audit_strategy, "none (audit not switched)")),
    ]


def steps_frame(run: RunResult) -> pd.DataFrame:
    cols = ["step", "phase", "verdict", "throughput_ops_s", "runtime_ms", "reasons", "warnings"]
    return (
        run.steps[[c for c in cols if c in run.steps]] if not run.steps.empty else pd.DataFrame(columns=cols)
    )


def _html_table(df: pd.DataFrame) -> str:
    return display_frame(df).to_html(index=False, escape=True, border=0)


def markdown_table(df: pd.DataFrame) -> str:
    """*df* as a Markdown table (cells as in ``display_frame``)."""
    d = display_frame(df)
    if d.empty:
        return "_(no rows)_\n"

    def esc(x: Any) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(c) for c in d.columns) + " |", "|" + "---|" * len(d.columns)]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in d.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _figures(run: RunResult) -> list[tuple[str, str, bytes]]:
    """(file stem, caption, png) of every plot that has data."""
    out: list[tuple[str, str, bytes]] = []
    png = plot_timeseries(run.timeseries)
    if png:
        out.append(("timeseries", "Throughput and latency over time per step (YCSB -s status lines)", png))
    png, source = plot_percentiles(run)
    if png:
        out.append(("percentiles", f"Latency percentiles per operation (from {source})", png))
    if layout_of(run) == "audit":
        png = plot_audit_bars(run)
        if png:
            out.append(("audit", "Audit off vs on per mix, with 95% intervals of the mean", png))
    return out


def write_report(run_dir: Path | str | RunResult, out_dir: Path | str | None = None) -> tuple[Path, Path]:
    """Write ``report.html`` (self-contained) and ``report.md`` (+ ``report-figures/*.png``); return paths."""
    run = load_run(run_dir)
    out = Path(out_dir) if out_dir else run.root
    table = study_table(run)
    title = table.attrs.get("title", run.suite_name)
    figures = _figures(run)
    meta = metadata(run)
    steps = steps_frame(run)
    ab = audit_ab(run) if layout_of(run) == "audit" else None

    h = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(run.root.name)}</title>"
        f"<style>{CSS}</style></head><body>",
        f"<h1>ycsb-runner report: {html.escape(run.root.name)}</h1>",
        "<h2>Run</h2><table>",
    ]
    h += [f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in meta]
    h += ["</table>", f"<h2>{html.escape(title)}</h2>", _html_table(table)]
    md = [f"# ycsb-runner report: {run.root.name}\n", "## Run\n", "| | |", "|---|---|"]
    md += [f"| {k} | {v.replace('|', '/')} |" for k, v in meta]
    md += ["", f"## {title}\n", markdown_table(table)]
    if ab is not None and not ab.empty:
        cols = [
            "mix",
            "threads",
            "metric",
            "n_a",
            "n_b",
            "a_mean",
            "b_mean",
            "change",
            "change_pct",
            "p_value",
            "test",
            "verdict",
        ]
        h += ["<h2>Audit off (A) vs on (B): statistics</h2>", _html_table(ab[cols])]
        md += ["## Audit off (A) vs on (B): statistics\n", markdown_table(ab[cols])]
    h += ["<h2>Steps</h2>", _html_table(steps), "<h2>Plots</h2>"]
    md += ["## Steps\n", markdown_table(steps), "## Plots\n"]
    fig_dir = out / "report-figures"
    for stem, caption, png in figures:
        b64 = base64.b64encode(png).decode("ascii")
        h.append(
            f"<figure><img alt='{html.escape(caption)}' src=\"data:image/png;base64,{b64}\">"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
        atomic_write_bytes(fig_dir / f"{stem}.png", png)
        md.append(f"![{caption}](report-figures/{stem}.png)\n")
    if not figures:
        h.append("<p>No plottable data in this run.</p>")
        md.append("_No plottable data in this run._\n")
    h.append("</body></html>\n")
    html_path, md_path = out / "report.html", out / "report.md"
    atomic_write_text(html_path, "\n".join(h))
    atomic_write_text(md_path, "\n".join(md))
    return html_path, md_path
