"""``table``, ``compare`` and ``report``: over result folders, through ``ycsb_runner.model``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.markup import escape

from ycsb_runner.cli.options import Format, FormatOpt, RunArg, SaveOpt, WideOpt, emit
from ycsb_runner.console import err_console


def _save(run_dir: Path, name: str, df: pd.DataFrame) -> None:
    from ycsb_runner.store import atomic_write_csv

    path = run_dir / name
    atomic_write_csv(path, df)
    err_console.print(f"wrote {escape(str(path))}")


# What a narrow terminal keeps first, per study layout (the rest is hidden, named under the table).
STUDY_PRIORITY = {
    "tencent": ("mix", "throughput (ops/sec)", "RAL (us)", "WAL (us)", "CPU (%)", "threads", "n", "phase"),
    "generic": ("mix", "throughput (ops/sec)", "error rate", "read p99 (us)", "write p99 (us)", "threads"),
}


def emit_study_table(df: pd.DataFrame, fmt: Format, title: str, *, wide: bool = False) -> None:
    """A study table: the audit layout's prose cells as one block per mix when a row does not fit."""
    layout = df.attrs.get("layout", "generic")
    emit(df, fmt, title, priority=STUDY_PRIORITY.get(layout, ()), wide=wide or layout == "audit")


def table_cmd(
    run_dir: RunArg, fmt: FormatOpt = Format.table, save: SaveOpt = False, wide: WideOpt = False
) -> None:
    """The run's per-mix table in the layout of the study its suite reproduces."""
    from ycsb_runner.analyse.table import study_table

    df = study_table(run_dir)
    if save:
        _save(run_dir, "study_table.csv", df)
    emit_study_table(df, fmt, df.attrs.get("title", run_dir.name), wide=wide)


REFERENCE_PRIORITY = ("mix", "metric", "measured", "published", "ratio", "threads", "published_threads")
COMPARE_PRIORITY = ("mix", "metric", "baseline", "contender", "change_pct", "verdict", "p_value", "threads")
COMPARE_LABELS = {
    "published_threads": "published threads",
    "published_text": "published as",
    "measured_n": "n",
    "change_pct": "change %",
    "p_value": "p",
    "n_baseline": "n base",
    "n_contender": "n cont",
    "ci_low": "CI low",
    "ci_high": "CI high",
}


def metric_label(name: str) -> str:
    """``read_avg_us`` -> ``read avg latency (µs)``: the registry's label and unit."""
    from ycsb_runner.studies import METRICS

    m = METRICS.get(name)
    if m is None:
        return name
    return f"{m.label} ({m.unit})" if m.unit else m.label


def compare_cmd(
    run_dir: RunArg,
    contender: Annotated[
        Path | None, typer.Argument(metavar="CONTENDER", help="A second result folder of the same suite.")
    ] = None,
    reference: Annotated[
        str | None,
        typer.Option("--reference", metavar="NAME", help="Published table, e.g. tencent-mongodb44."),
    ] = None,
    size: Annotated[
        str | None, typer.Option("--size", metavar="SIZE", help="Instance size of the reference, e.g. 4C8G.")
    ] = None,
    storage: Annotated[
        str | None, typer.Option("--storage", metavar="TYPE", help="Reference storage: cloud or physical.")
    ] = None,
    fmt: FormatOpt = Format.table,
    save: SaveOpt = False,
    wide: WideOpt = False,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            help="Exit 1 when a metric is significantly worse in CONTENDER, 2 when nothing could be "
            "tested or a run did not complete (for nightly jobs)."
        ),
    ] = False,
    min_effect: Annotated[
        float, typer.Option("--min-effect", metavar="PCT", help="Smallest change (in %) that fails the gate.")
    ] = 5.0,
    alpha: Annotated[
        float, typer.Option("--alpha", metavar="P", help="Significance level (Holm-corrected for the gate).")
    ] = 0.05,
) -> None:
    """Compare RUN_DIR with CONTENDER (significance over repetitions) or with a published --reference."""
    from ycsb_runner.analyse.compare import compare_reference, compare_runs
    from ycsb_runner.errors import UserError

    if (contender is None) == (reference is None):
        raise UserError(
            "give either a second run folder (CONTENDER) or --reference NAME, not both or neither"
        )
    caption = None
    if reference is not None:
        df = compare_reference(run_dir, reference, size=size, storage=storage)
        title, name = f"{run_dir.name} vs published {reference}", f"compare-{reference}.csv"
        caption = df.attrs.get("run_vs_study")
        priority = REFERENCE_PRIORITY
    else:
        assert contender is not None
        df = compare_runs(run_dir, contender, alpha=alpha)
        title, name = (
            f"baseline {run_dir.name} vs contender {contender.name}",
            f"compare-{contender.name}.csv",
        )
        priority = COMPARE_PRIORITY
    gate = None
    if fail_on_regression and contender is not None:
        from ycsb_runner.analyse.compare import regression_gate
        from ycsb_runner.model import RunResult

        statuses = {p.name: RunResult.load(p).manifest.status for p in (run_dir, contender)}
        gate = regression_gate(df, alpha=alpha, min_effect_pct=min_effect, statuses=statuses)
        df = gate[2]
    if save:
        _save(run_dir, name, df)
    if fmt is Format.table:
        shown = df.assign(metric=df["metric"].map(metric_label))
        emit(shown, fmt, title, priority=priority, wide=wide, caption=caption, labels=COMPARE_LABELS)
    else:
        emit(df, fmt, title, extra={"run_vs_study": caption} if caption else None)
    if gate is not None:
        code, reason, _ = gate
        if code:
            err_console.print(f"[bold red]error:[/bold red] {escape(reason)}", soft_wrap=True)
            raise typer.Exit(code)
        err_console.print(f"{escape(reason)} (alpha {alpha:g}, Holm-corrected; min effect {min_effect:g} %)")


def report_cmd(
    run_dir: RunArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="Folder for the report (default: the run folder)."),
    ] = None,
) -> None:
    """Write report.html (self-contained, inline plots) and report.md for a run."""
    from ycsb_runner.analyse.report import write_report

    html_path, md_path = write_report(run_dir, out)
    typer.echo(str(html_path))
    typer.echo(str(md_path))


def register(app: typer.Typer) -> None:
    """Add the analysis commands to the main app."""
    app.command("table")(table_cmd)
    app.command("compare")(compare_cmd)
    app.command("report")(report_cmd)
