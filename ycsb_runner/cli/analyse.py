"""``table``, ``compare`` and ``report``: over result folders, through ``ycsb_runner.runs.model``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ycsb_runner.analyse import DEFAULT_ALPHA
from ycsb_runner.cli.options import (
    Format,
    FormatOpt,
    RunArg,
    SaveOpt,
    WideOpt,
    argument,
    complete_run,
    emit,
    option,
    renderer,
    run_folder,
)
from ycsb_runner.present.console import err_console
from ycsb_runner.present.output import cell_text, check_format, format_names
from ycsb_runner.runs.metrics import metric_label

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.analyse.compare_service import CompareOutcome
    from ycsb_runner.analyse.table import StudyTable


def _save(path: Path, df: pd.DataFrame) -> None:
    """*df* into the run folder (*path*'s folder), never through a link that leads out of it."""
    from ycsb_runner.safe.files import atomic_write_csv

    atomic_write_csv(path, df, within=path.parent)
    err_console.print(f"wrote {escape(str(path))}")


def emit_study_table(
    table: StudyTable, fmt: Format, title: str, *, wide: bool = False, failed: str | None = None
) -> None:
    """A study table, with the columns its layout keeps first on a narrow terminal; a layout's prose cells
    as one block per mix when a row does not fit. *failed*: the line saying what of the run did not
    complete (``RunAnalysis.failures``), first in the caption and a field of the data formats."""
    from ycsb_runner.analyse.layouts import layout_named

    layout = layout_named(table.layout)
    caveat = table.audit_unverified or None
    unsteady = table.unsteady or None
    told = list(table.notes)  # what applies to many rows, said once
    pairs = (("failed", failed), ("audit_unverified", caveat), ("not_stationary", unsteady))
    pairs += (("notes", "\n".join(told)),)
    df = table.frame
    if renderer(fmt).terminal and not wide:  # a layout's compact view (every column: --wide, CSV, JSON)
        df, told = layout.compact(table)
    notes = "\n".join(told) or None
    extra = {k: v for k, v in pairs if v}
    emit(
        df,
        fmt,
        title,
        extra or None,
        priority=layout.priority,
        wide=wide or layout.prose,
        caption="\n".join(c for c in (failed, caveat, unsteady, notes) if c) or None,
    )


def _analysed(run_dir: Path) -> RunAnalysis:
    """The analysis of a run folder that has its steps (one line when ``steps.csv`` is missing)."""
    from ycsb_runner.analyse.analysis import analysed

    return analysed(run_dir)


def table_cmd(
    run_dir: RunArg, fmt: FormatOpt = Format.table, save: SaveOpt = False, wide: WideOpt = False
) -> None:
    """The run's per-mix table in the layout of the study its suite reproduces."""

    run_dir = run_folder(run_dir)
    analysis = _analysed(run_dir)
    table = analysis.table
    if save:
        _save(analysis.run.study_table_path, table.frame)
    failed = "; ".join(analysis.failures())
    title = (table.title or run_dir.name) + (" [FAILED RUN]" if failed else "")
    emit_study_table(table, fmt, title, wide=wide, failed=f"did not complete: {failed}" if failed else None)


# What a narrow terminal keeps first (the rest is named under the table), per table: a published table keyed
# by threads keeps them beside the mix; an audit study's cells carry their unit (% or pp).
REFERENCE_PRIORITY = ("mix", "metric", "measured", "published", "ratio", "threads", "published_threads")
THREADS_REFERENCE_PRIORITY = ("mix", "threads", "metric", "measured", "published", "ratio", "note")
AUDIT_REFERENCE_PRIORITY = (
    "mix",
    "metric",
    "measured change",
    "published change",
    "published_other",
    "measured_n",
    "note",
)
COMPARE_PRIORITY = ("mix", "metric", "baseline", "contender", "change_pct", "verdict", "p_value", "threads")
SIDE_BY_SIDE_PRIORITY = ("mix", "metric", "baseline", "contender", "change_pct", "threads", "audit")
COMPARE_LABELS = {
    "published_threads": "published threads",
    "published_text": "published as",
    "published_other": "published (other unit)",
    "measured_n": "n",
    "change_pct": "change %",
    "p_value": "p",
    "n_baseline": "n base",
    "n_contender": "n cont",
    "ci_low": "CI low",
    "ci_high": "CI high",
}


def _signed(value: float, unit: str) -> str:
    """An audit study's change with its unit (``-45.8 %``, ``+3.0 pp``): ``output.cell_text``."""
    return cell_text(value, decimals=1, signed=True, unit=f" {unit}")


def reference_shown(df: pd.DataFrame) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The terminal view of a ``compare --reference`` table and its column priorities: an audit study's
    off -> on changes with their unit in every cell (``-45.8 %``, ``+3.0 pp``); the published remark in
    English only (``--format csv`` has the original beside it)."""
    from ycsb_runner.runs.metrics import METRICS

    if df.empty:
        return df, REFERENCE_PRIORITY
    if set(df["unit"]) <= {"%", "pp"}:
        shown = df.assign(
            metric=df["metric"].map(lambda m: METRICS[m].label if m in METRICS else m),
            measured=[_signed(v, u) for v, u in zip(df["measured"], df["unit"], strict=True)],
            published=[_signed(v, u) for v, u in zip(df["published"], df["unit"], strict=True)],
            published_text=df["published_text"].str.replace(r"\s*\[[^\]]*\]$", "", regex=True),
        ).drop(columns=["unit", "ratio", "threads", "published_threads", "size", "storage"])
        shown = shown.rename(columns={"measured": "measured change", "published": "published change"})
        return shown, AUDIT_REFERENCE_PRIORITY
    shown = df.assign(metric=df["metric"].map(metric_label)).drop(columns=["unit", "published_other"])
    keyed = (df["threads"].dropna() == df.loc[df["threads"].notna(), "published_threads"]).all()
    if keyed and df["published_threads"].nunique() > 1:  # matched by thread count: one column says it
        return shown.drop(columns=["published_threads"]), THREADS_REFERENCE_PRIORITY
    return shown, REFERENCE_PRIORITY


BaselineArg = argument(
    Path | None,
    metavar="RUN",
    help="The baseline: a result folder or a run id (`ycsb-runner runs`); or use --baseline.",
    autocompletion=complete_run,
)
ContenderArg = argument(
    Path | None,
    metavar="CONTENDER",
    help="A second run of the same suite (folder or run id).",
    autocompletion=complete_run,
)
BaselineOpt = option(
    Path | None,
    "--baseline",
    metavar="RUN",
    help="The baseline run (folder or run id).",
    autocompletion=complete_run,
)
ContenderOpt = option(
    Path | None,
    "--contender",
    metavar="RUN",
    help="The contender run (folder or run id).",
    autocompletion=complete_run,
)
ReferenceOpt = option(
    str | None, "--reference", metavar="NAME", help="Published table, e.g. tencent-mongodb44."
)
SizeOpt = option(str | None, "--size", metavar="SIZE", help="Instance size of the reference, e.g. 4C8G.")
StorageOpt = option(str | None, "--storage", metavar="TYPE", help="Reference storage: cloud or physical.")
FailOnRegressionOpt = option(
    bool,
    help="Exit 1 when a metric is significantly worse in CONTENDER, 2 when nothing could be "
    "tested or a run did not complete (for nightly jobs).",
)
GateEffectOpt = option(
    float, "--min-effect", metavar="PCT", help="Smallest change (in %) that fails the gate."
)
GateAlphaOpt = option(
    float, "--alpha", metavar="P", help="Significance level (Holm-corrected for the gate; as regress)."
)
ForceOpt = option(
    bool,
    "--force",
    help="Compare two runs made with different settings, or a run that did not complete (refused without "
    "it: not comparable).",
)


def _which_runs(
    run_dir: Path | None,
    contender: Path | None,
    baseline_opt: Path | None,
    contender_opt: Path | None,
    reference: str | None,
) -> tuple[Path, Path | None]:
    """(baseline, contender or None) from compare's arguments and options; one-line errors for the rest."""
    from ycsb_runner.errors import UserError

    runs = [r for r in (run_dir, contender) if r is not None]
    baseline = baseline_opt or (runs.pop(0) if runs else None)
    runs += [contender_opt] if contender_opt is not None else []
    if baseline is None:
        raise UserError("name the baseline run: compare RUN [CONTENDER] or --baseline RUN --contender RUN")
    if len(runs) > 1:
        raise UserError("compare takes two runs: the baseline and one contender")
    contender = runs[0] if runs else None
    if contender is not None and reference is not None:
        raise UserError("give either a second run (CONTENDER or --contender) or --reference NAME, not both")
    if contender is None and reference is None:
        run_folder(baseline)  # a run that does not exist is the first thing to say
        raise UserError(
            f"compare {baseline} with what? give a second run (CONTENDER or --contender) or --reference NAME "
            "(`ycsb-runner reference list`)"
        )
    return baseline, contender


def _end_with_gate(outcome: CompareOutcome, alpha: float, min_effect: float) -> None:
    """The --fail-on-regression decision: its line, and its exit code when it is not 0."""
    reason = outcome.decision or ""
    if outcome.exit_code:
        err_console.print(f"[bold red]error:[/bold red] {escape(reason)}", soft_wrap=True)
        raise typer.Exit(outcome.exit_code)
    err_console.print(f"{escape(reason)} (alpha {alpha:g}, Holm-corrected; min effect {min_effect:g} %)")


def _shown(outcome: CompareOutcome) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The terminal view of a comparison and its column priorities."""
    df = outcome.table
    if outcome.reference is not None:
        return reference_shown(df)
    shown = df.assign(metric=df["metric"].map(metric_label))
    if outcome.side_by_side:
        drop = ["significant", "verdict", "p_value", "test", "ci_low", "ci_high"]
        return shown.drop(columns=drop), SIDE_BY_SIDE_PRIORITY
    return shown, COMPARE_PRIORITY


def _reference_view(
    outcome: CompareOutcome, shown: pd.DataFrame
) -> tuple[tuple[pd.DataFrame, str, str] | None, pd.DataFrame, str, str | None]:
    """A terminal's view of a compare with a published table: the answer first when the study publishes
    per-mix means (measured / published per mix: the compact table, its title, the lines under it), then
    the detail of the mixes this run measured, the others named once, a note shared by a metric's rows
    said once. Returns (answer or None, detail, its title, its caption)."""
    from ycsb_runner.reference.ratios import answer_note, answer_sets, ratio_compact, unmeasured

    df, title, caption = outcome.table, outcome.title, outcome.caption
    if df.empty:
        return None, shown, title, caption
    missing = unmeasured(df)
    shown = shown[~df["mix"].isin(missing).to_numpy()]
    if missing:
        said = f"published but not measured in this run: {', '.join(missing)}"
        caption = f"{caption}\n{said}" if caption else said
    if set(df["unit"]) <= {"%", "pp"}:  # a study of changes (audit): no per-mix means to divide
        return None, shown, title, caption
    sets = answer_sets(df)
    lines = [answer_note(df)]
    if len(sets) > 1:
        lines.append(f"the {', '.join(sets[1:])} figures: in the detail, or --storage {sets[1]}")
    head = f"{title}: measured / published per mix" + (f" ({sets[0]})" if sets else "")
    notes = shown["note"].fillna("") if "note" in shown else shown["metric"].map(lambda _: "")
    metrics = shown["metric"]
    if (notes.groupby(metrics).nunique() <= 1).all():  # a note per metric, repeated: said once
        told = dict.fromkeys(f"{m}: {n}" for m, n in zip(metrics, notes, strict=True) if n)
        shown = shown.drop(columns=["note"], errors="ignore")
        caption = "\n".join([*([caption] if caption else []), *told])
    return (ratio_compact(df), head, "\n".join(lines)), shown, f"{title}: detail", caption


def compare_cmd(
    run_dir: BaselineArg = None,
    contender: ContenderArg = None,
    baseline_opt: BaselineOpt = None,
    contender_opt: ContenderOpt = None,
    reference: ReferenceOpt = None,
    size: SizeOpt = None,
    storage: StorageOpt = None,
    fmt: FormatOpt = Format.table,
    save: SaveOpt = False,
    wide: WideOpt = False,
    fail_on_regression: FailOnRegressionOpt = False,
    min_effect: GateEffectOpt = 5.0,
    alpha: GateAlphaOpt = DEFAULT_ALPHA,
    force: ForceOpt = False,
) -> None:
    """Compare two runs (significance over repetitions; side by side without) or a run with a published
    --reference table. Runs are result folders or run ids: `compare ID ID`, `compare --baseline ID
    --contender ID`."""

    from ycsb_runner.analyse.compare_service import compare_runs

    baseline, contender = _which_runs(run_dir, contender, baseline_opt, contender_opt, reference)
    outcome = compare_runs(
        run_folder(baseline),
        None if contender is None else run_folder(contender),
        reference=reference,
        size=size,
        storage=storage,
        alpha=alpha,
        fail_on_regression=fail_on_regression,
        min_effect_pct=min_effect,
        force=force,
    )
    for line in outcome.warnings:
        err_console.print(f"[bold yellow]warning:[/bold yellow] {escape(line)}", soft_wrap=True)
    if save:
        err_console.print(f"wrote {escape(str(outcome.save()))}")
    if renderer(fmt).terminal:
        shown, priority = _shown(outcome)
        answer, title, caption = None, outcome.title, outcome.caption
        if outcome.reference is not None:
            answer, shown, title, caption = _reference_view(outcome, shown)
        if answer is not None:  # the answer first, then the detail
            frame, head, said = answer
            emit(frame, fmt, head, caption=said)
        emit(shown, fmt, title, priority=priority, wide=wide, caption=caption, labels=COMPARE_LABELS)
    else:
        emit(outcome.table, fmt, outcome.title, extra=outcome.fields or None)
    if outcome.decision is not None:
        _end_with_gate(outcome, alpha, min_effect)


ReportFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help=f"Print the report instead of writing it: {format_names()} (markdown: the page; json: the whole "
        "report; the others: its tables).",
        callback=lambda value: value if value is None else check_format(value),
    ),
]


def report_cmd(
    run_dir: RunArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="Folder for the report (default: the run folder)."),
    ] = None,
    fmt: ReportFormatOpt = None,
) -> None:
    """Write report.html (self-contained, inline plots) and report.md for a run (--format: print it)."""
    from ycsb_runner.report.run_report import run_document, write_report

    analysis = _analysed(run_folder(run_dir))
    if fmt is not None:
        renderer(fmt).document(run_document(analysis))
        return
    html_path, md_path = write_report(analysis, out)
    typer.echo(str(html_path))
    typer.echo(str(md_path))


def register(app: typer.Typer) -> None:
    """Add the analysis commands to the main app."""
    app.command("table")(table_cmd)
    app.command("compare")(compare_cmd)
    app.command("report")(report_cmd)
