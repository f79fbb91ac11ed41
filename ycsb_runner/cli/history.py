"""``runs``, ``regress`` (``regress SUITE`` and ``regress accept SUITE``) and ``history rebuild``: the run
history (``ycsb_runner.nightly.history``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ycsb_runner.cli.default_group import DefaultCommand, DefaultCommandGroup
from ycsb_runner.cli.groups import HISTORY, REGRESS, RUN_FILTER, HistoryPlace
from ycsb_runner.cli.options import Format, FormatOpt, VerdictOpt, complete_suite, emit, log, option, renderer

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.nightly.history import RunFilter
    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.nightly.regress_options import RegressOptions
    from ycsb_runner.nightly.regress_service import RegressOutcome

history_app = typer.Typer(help="The run history (SQLite in the results folder, or --history-url).")


@RUN_FILTER.into("filt")
@HISTORY.into("where")
def runs_cmd(
    *,
    suite: Annotated[
        str | None, typer.Option("--suite", metavar="SUITE", help="Only runs of this suite.")
    ] = None,
    filt: RunFilter,
    verdict: VerdictOpt = None,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the runs in the history, oldest first (filter by suite, tag, date and verdict)."""
    from ycsb_runner.nightly.history import runs_table, select_runs
    from ycsb_runner.nightly.regress_service import open_history

    history = open_history(where.results, where.url)
    df = runs_table(select_runs(history.runs(), replace(filt, suite=suite, verdict=verdict)))
    if renderer(fmt).terminal:  # the terminal view: the folder is results/<run_id>, the error in the manifest
        df = df.drop(columns=["folder", "error"])
    emit(df, fmt, f"runs in {history.where}", priority=RUNS_PRIORITY, whole=("run_id",))


# What a user looks for in `runs`: the id to pass to table/compare/report, the verdict, the tags, when.
RUNS_PRIORITY = ("run_id", "verdict", "tags", "started_at", "suite", "server_version")


def complete_history_suite(incomplete: str) -> list[str]:
    """Shell completion of regress's SUITE: the suites of the history's runs and the built-in ones."""
    import os

    from ycsb_runner.errors import UserError
    from ycsb_runner.paths import HISTORY_ENV

    names = set(complete_suite(incomplete))
    from ycsb_runner.nightly.regress_service import open_history

    try:
        runs = open_history(None, os.environ.get(HISTORY_ENV)).runs()
    except UserError:
        runs = None
    if runs is not None and not runs.empty:
        names |= {str(s) for s in runs["suite"].unique() if str(s).startswith(incomplete)}
    return sorted(names)


SuiteName = Annotated[
    str,
    typer.Argument(
        metavar="SUITE",
        help="The suite name the runs were made with.",
        autocompletion=complete_history_suite,
    ),
]
regress_app = typer.Typer(
    cls=DefaultCommandGroup,
    no_args_is_help=True,
    help="Judge SUITE's newest nights (regress SUITE), or accept the regressions open now (regress accept "
    "SUITE --why TEXT).\n\nA regression stays open, and regress exits 1 on every night, until it recovers "
    "or is accepted. Exit codes: 0 no regression (an accepted change too recent to test counts as a "
    "pass); 1 at least one series regressed; 2 could not decide (too little history, the newest run "
    "failed or was interrupted, nothing comparable); 3 --report DIR could not be written (the judgement "
    "is printed above the error).",
)


def _compact(shown: pd.DataFrame) -> pd.DataFrame:
    """The terminal view of regress's table: its terminal columns, p and the changes rounded."""
    from ycsb_runner.nightly.regress import TERMINAL_COLUMNS

    compact = shown[list(TERMINAL_COLUMNS)].copy()
    compact["p_adjusted"] = compact["p_adjusted"].map(lambda p: f"{p:.2g}" if p == p else "-")
    for col in ("change_pct", "detectable_pct"):
        compact[col] = compact[col].map(lambda v: f"{v:+.1f}" if v == v else "-")
    compact["detectable_pct"] = compact["detectable_pct"].str.lstrip("+")
    return compact


def _show_judgement(out: RegressOutcome, fmt: Format, show_all: bool) -> None:
    """regress's table: in a data format every series and column, raw, with the summary; else the flagged
    series (every one with *show_all*), compact, then the open and accepted changes."""
    from ycsb_runner.nightly.regress import TERMINAL_PRIORITY, flagged

    result = out.result
    data = renderer(fmt).data
    shown = result.table if show_all or data else flagged(result.table)
    title = f"regress {result.suite}: {result.reason}; correction {result.correction_text}"
    if data:
        emit(shown, fmt, title, extra=result.summary())
        return
    if shown.empty and result.exit_code != 2:
        log(f"no flagged series (newest run {result.newest}, {len(result.runs_used)} runs)")
    elif not shown.empty:
        emit(_compact(shown), fmt, title, priority=TERMINAL_PRIORITY)
    renderer(fmt).notes("Open and accepted changes", out.changes)
    renderer(fmt).notes("Canaries", out.canaries)


@regress_app.command("check", hidden=True, cls=DefaultCommand)
@RUN_FILTER.into("filt")
@REGRESS.into("options")
@HISTORY.into("where")
def regress_cmd(
    *,
    suite: SuiteName,
    filt: RunFilter,
    options: RegressOptions,
    show_all: Annotated[
        bool, typer.Option("--all", help="Show every series, not only the flagged ones.")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option("--report", metavar="DIR", help="Also write regress.html and regress.md there."),
    ] = None,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """Regression, improvement or no change per series of SUITE's history (exit 0 / 1 / 2).

    Exit codes: 0 no regression; 1 at least one series regressed; 2 could not decide (too little history,
    the newest run failed or was interrupted, nothing comparable); 3 the --report could not be written.
    """
    from ycsb_runner.nightly.regress_service import run_regress

    out = run_regress(suite, options, filt, results=where.results, history_url=where.url)
    _show_judgement(out, fmt, show_all)
    if out.unsteady:
        log(out.unsteady)
    unwritten = _write_report(out.result, report) if report is not None else None
    log(out.closing)
    if unwritten is not None:
        from ycsb_runner.errors import UserError

        raise UserError(
            f"the report was not written to {report}: {unwritten}; the judgement above stands (exit "
            f"{out.exit_code} without --report)",
            exit_code=EXIT_REPORT_NOT_WRITTEN,
        )
    if out.exit_code:
        raise typer.Exit(out.exit_code)


#: ``regress --report DIR`` when the report cannot be written there: not 1 (a regression) nor 2 (could not
#: decide); the judgement is printed above the error.
EXIT_REPORT_NOT_WRITTEN = 3


def _write_report(out: RegressResult, folder: Path) -> str | None:
    """Write regress.html and regress.md into *folder*; None when written, else why not (one line)."""
    from ycsb_runner.errors import UserError
    from ycsb_runner.report.regress_report import write_regress_report

    try:
        html_path, md_path = write_regress_report(out, folder)
    except UserError as err:
        return str(err)
    except OSError as err:
        return f"{err.strerror or err}{f' ({err.filename})' if err.filename else ''}"
    except Exception as err:  # noqa: BLE001 - a figure that cannot be drawn is one line, never a traceback
        return f"{type(err).__name__}: {' '.join(str(err).split())[:160]}"
    log(f"report: {html_path} and {md_path}")
    return None


WhyOpt = option(str, "--why", metavar="TEXT", help="Why the change is the new normal (recorded).")
ByOpt = option(str | None, "--by", metavar="NAME", help="Who accepts it (default: the login user).")
OperationOpt = option(
    list[str] | None,
    "--operation",
    metavar="OP",
    help="Only the series of this operation: READ, UPDATE, INSERT, ..., OVERALL for throughput (repeatable).",
)


@regress_app.command("accept")
@RUN_FILTER.into("filt")
@REGRESS.into("options")
@HISTORY.into("where")
def accept_cmd(
    *,
    suite: SuiteName,
    why: WhyOpt,
    by: ByOpt = None,
    operation: OperationOpt = None,
    filt: RunFilter,
    options: RegressOptions,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """Accept the regressions open now in SUITE: each series' nights from the run where its change began
    are its new normal (recorded in the history with who, when and why).

    Give it the options your nightly regress uses (--metric, --tag, --alpha, ...): it accepts the series
    that regress flags with them. Exit 0 after recording; 2 when nothing is open to accept.
    """
    import pandas as pd

    from ycsb_runner.errors import UserError
    from ycsb_runner.nightly.history import ACCEPT_COLUMNS
    from ycsb_runner.nightly.regress_service import accept_regressions

    if by is not None and not by.strip():
        raise UserError("--by '': name who accepts it (or leave --by out for the login user)")

    out = accept_regressions(
        suite, why, by, operation, options, filt, results=where.results, history_url=where.url
    )
    emit(pd.DataFrame(out.rows, columns=ACCEPT_COLUMNS), fmt, f"accepted in {suite} ({out.where})")
    log(out.message)


@history_app.command("rebuild")
@HISTORY.into("where")
def rebuild_cmd(where: HistoryPlace) -> None:
    """Index every run folder under the results folder again (one transaction)."""
    from ycsb_runner.nightly.history import rebuild
    from ycsb_runner.paths import results_dir

    history, n = rebuild(where.results or results_dir(), where.url, log=log)
    typer.echo(json.dumps({"history": history.where, "runs": n}))


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_cmd)
    app.add_typer(regress_app, name="regress")
    app.add_typer(history_app, name="history")
