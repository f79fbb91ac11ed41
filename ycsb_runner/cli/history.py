"""``runs``, ``regress`` and ``history rebuild``: the run history (``ycsb_runner.history``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ycsb_runner.cli.options import (
    Format,
    FormatOpt,
    HistoryUrlOpt,
    ResultsOpt,
    SinceOpt,
    TagOpt,
    UntilOpt,
    VerdictOpt,
    emit,
    log,
)

history_app = typer.Typer(help="The run history (SQLite in the results folder, or --history-url).")


def _history(results: Path | None, url: str | None):
    from ycsb_runner.history import open_history
    from ycsb_runner.paths import results_dir

    return open_history(results or results_dir(), url)


def _filter(
    suite: str | None, tag: list[str] | None, since: str | None, until: str | None, verdict: str | None
):
    from ycsb_runner.history import RunFilter, parse_tags

    return RunFilter(suite=suite, tags=parse_tags(tag or []), since=since, until=until, verdict=verdict)


def runs_cmd(
    suite: Annotated[
        str | None, typer.Option("--suite", metavar="SUITE", help="Only runs of this suite.")
    ] = None,
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    verdict: VerdictOpt = None,
    results: ResultsOpt = None,
    history_url: HistoryUrlOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the runs in the history, oldest first (filter by suite, tag, date and verdict)."""
    from ycsb_runner.history import runs_table, select_runs

    history = _history(results, history_url)
    df = runs_table(select_runs(history.runs(), _filter(suite, tag, since, until, verdict)))
    if fmt is Format.table:  # the terminal view: the folder is results/<run_id>, the error in the manifest
        df = df.drop(columns=["folder", "error"])
    emit(df, fmt, f"runs in {history.where}", priority=RUNS_PRIORITY, whole=("run_id",))


# What a user looks for in `runs`: the id to pass to table/compare/report, the verdict, the tags, when.
RUNS_PRIORITY = ("run_id", "verdict", "tags", "started_at", "suite", "server_version")


def regress_cmd(
    suite: Annotated[str, typer.Argument(metavar="SUITE", help="The suite name the runs were made with.")],
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    min_effect: Annotated[
        float, typer.Option("--min-effect", metavar="PCT", help="Smallest change (in %) that counts.")
    ] = 5.0,
    alpha: Annotated[
        float,
        typer.Option(
            "--alpha",
            metavar="P",
            help="Significance level, after correction (0.01: about one false "
            "alarm per 100 nights in a series).",
        ),
    ] = 0.01,
    correction: Annotated[
        str,
        typer.Option("--correction", metavar="NAME", help="holm (family-wise) or bh (Benjamini-Hochberg)."),
    ] = "holm",
    window: Annotated[
        int,
        typer.Option(
            "--window",
            metavar="N",
            help="The longest run of newest nights tested together against the stable nights before.",
        ),
    ] = 3,
    confirm: Annotated[
        int,
        typer.Option(
            "--confirm",
            metavar="N",
            help="Flag a change only once it shows on each of the last N nights (2: a single outlier "
            "night flags nothing; 1: tonight alone can fail the job).",
        ),
    ] = 2,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric", metavar="NAME", help="throughput_ops_s, avg_us, p50_us, p95_us, p99_us (repeatable)."
        ),
    ] = None,
    show_all: Annotated[
        bool, typer.Option("--all", help="Show every series, not only the flagged ones.")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option("--report", metavar="DIR", help="Also write regress.html and regress.md there."),
    ] = None,
    results: ResultsOpt = None,
    history_url: HistoryUrlOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Regression, improvement or no change per series of SUITE's history (exit 0 / 1 / 2).

    Exit codes: 0 no regression; 1 at least one series regressed; 2 could not decide (too little history,
    the newest run failed or was interrupted, nothing comparable).
    """
    from ycsb_runner.analyse.regress import RegressOptions, flagged, regress
    from ycsb_runner.errors import UserError
    from ycsb_runner.history import select_runs
    from ycsb_runner.studies import OPERATION_METRICS

    known = {"throughput_ops_s", *OPERATION_METRICS}
    bad = [m for m in metric or [] if m not in known]
    if bad:
        raise UserError(f"--metric {bad[0]!r}: known metrics are {', '.join(sorted(known))}")
    opts = RegressOptions(
        min_effect_pct=min_effect, alpha=alpha, correction=correction, window=window, confirm=confirm
    )
    if metric:
        opts.metrics = tuple(metric)
    try:
        opts.check()
    except ValueError as e:
        raise UserError(str(e)) from None
    history = _history(results, history_url)
    runs = select_runs(history.runs(), _filter(suite, tag, since, until, None))
    out = regress(runs, history.metrics([str(r) for r in runs["run_id"]]), suite, opts)
    summary = out.summary()
    shown = out.table if show_all or fmt in (Format.csv, Format.json) else flagged(out.table)
    title = f"regress {suite}: {out.reason}; correction {out.correction_text}"
    if fmt is Format.json:
        emit(shown, fmt, title, extra=summary)
    elif fmt is Format.csv:
        emit(shown, fmt, title)
    else:
        if shown.empty and out.exit_code != 2:
            log(f"no flagged series (newest run {out.newest}, {len(out.runs_used)} runs)")
        elif not shown.empty:
            from ycsb_runner.analyse.regress import TERMINAL_COLUMNS, TERMINAL_PRIORITY

            compact = shown[list(TERMINAL_COLUMNS)].copy()
            compact["p_adjusted"] = compact["p_adjusted"].map(lambda p: f"{p:.2g}" if p == p else "-")
            for col in ("change_pct", "detectable_pct"):
                compact[col] = compact[col].map(lambda v: f"{v:+.1f}" if v == v else "-")
            compact["detectable_pct"] = compact["detectable_pct"].str.lstrip("+")
            emit(compact, fmt, title, priority=TERMINAL_PRIORITY)
    if report is not None:
        from ycsb_runner.analyse.regress_report import write_regress_report

        html_path, md_path = write_regress_report(out, report)
        log(f"report: {html_path} and {md_path}")
    log(
        f"{out.reason} (newest {out.newest}; alpha {alpha:g} after {out.correction_text} correction, "
        f"min effect {min_effect:g} %, --confirm {confirm}); exit {out.exit_code}"
    )
    if out.exit_code:
        raise typer.Exit(out.exit_code)


@history_app.command("rebuild")
def rebuild_cmd(results: ResultsOpt = None, history_url: HistoryUrlOpt = None) -> None:
    """Index every run folder under the results folder again (one transaction)."""
    from ycsb_runner.history import rebuild
    from ycsb_runner.paths import results_dir

    history, n = rebuild(results or results_dir(), history_url, log=log)
    typer.echo(json.dumps({"history": history.where, "runs": n}))


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_cmd)
    app.command("regress")(regress_cmd)
    app.add_typer(history_app, name="history")
