"""``runs``, ``regress`` (``regress SUITE`` and ``regress accept SUITE``) and ``history rebuild``: the run
history (``ycsb_runner.runs.history``)."""

from __future__ import annotations

import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ycsb_runner.cli.default_group import DefaultCommand, DefaultCommandGroup
from ycsb_runner.cli.groups import HISTORY, REGRESS, RUN_FILTER, HistoryPlace
from ycsb_runner.cli.options import (
    Format,
    FormatOpt,
    StatusOpt,
    VerdictAliasOpt,
    WideOpt,
    complete_suite,
    emit,
    log,
    option,
    renderer,
)
from ycsb_runner.present.output import cell_text

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.nightly.regress_options import RegressOptions
    from ycsb_runner.nightly.regress_service import RegressOutcome
    from ycsb_runner.present.document import Document
    from ycsb_runner.runs.history import RunFilter

history_app = typer.Typer(help="The run history (SQLite in the results folder, or --history-url).")


@RUN_FILTER.into("filt")
@HISTORY.into("where")
def runs_cmd(
    *,
    suite: Annotated[
        str | None, typer.Option("--suite", metavar="SUITE", help="Only runs of this suite.")
    ] = None,
    filt: RunFilter,
    status: StatusOpt = None,
    verdict: VerdictAliasOpt = None,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """List the runs in the history, oldest first (filter by suite, tag, date and status)."""
    from ycsb_runner.errors import UserError
    from ycsb_runner.runs.history import open_history, runs_table, select_runs

    # --verdict: --status's name before result format 4, still taken (hidden from --help) for one release
    if status is not None and verdict is not None and status != verdict:
        raise UserError(
            f"--status {status!r} and --verdict {verdict!r}: --verdict is --status's old name; give one"
        )
    history = open_history(where.results, where.url)
    df = runs_table(select_runs(history.runs(), replace(filt, suite=suite, status=status or verdict)))
    if renderer(fmt).terminal:  # the terminal view: the folder is results/<run_id>, the error in the manifest
        df = df.drop(columns=["folder", "error"])
    emit(df, fmt, f"runs in {history.where}", priority=RUNS_PRIORITY, whole=("run_id",))


# What a user looks for in `runs`: the id to pass to table/compare/report, the status, the tags, when.
RUNS_PRIORITY = ("run_id", "status", "tags", "started_at", "suite", "server_version")


def complete_history_suite(incomplete: str) -> list[str]:
    """Shell completion of regress's SUITE: the suites of the history's runs and the built-in ones."""

    from ycsb_runner.config import current
    from ycsb_runner.errors import UserError

    names = set(complete_suite(incomplete))
    from ycsb_runner.runs.history import open_history

    try:
        runs = open_history(None, current().history()).runs()
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
    compact["p_adjusted"] = compact["p_adjusted"].map(lambda p: cell_text(p, significant=2))
    compact["change_pct"] = compact["change_pct"].map(lambda v: cell_text(v, decimals=1, signed=True))
    compact["detectable_pct"] = compact["detectable_pct"].map(lambda v: cell_text(v, decimals=1))
    for col in ("needs_nights", "needs_repetitions"):
        compact[col] = compact[col].map(lambda v: cell_text(v, decimals=0))
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
        if "evidence" in shown and fmt != Format.json:  # one cell of JSON text in a CSV / Markdown table
            shown = shown.assign(evidence=shown["evidence"].map(lambda e: json.dumps(e) if e else ""))
        emit(shown, fmt, title, extra=result.summary())
        return
    if shown.empty and result.exit_code != 2:
        log(f"no flagged series (newest run {result.newest}, {len(result.runs_used)} runs)")
    elif not shown.empty:
        emit(_compact(shown), fmt, title, priority=TERMINAL_PRIORITY)
    renderer(fmt).notes("Evidence", out.evidence)
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
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write a JUnit XML report there: a test case per series, a failure per open regression",
        ),
    ] = None,
    notify: Annotated[
        list[str] | None,
        typer.Option(
            "--notify",
            metavar="URL",
            help="Post a JSON message (Slack-compatible) to this webhook when an alert opens, is triaged or "
            "accepted, or recovers; once per event (repeatable; also $YCSB_RUNNER_NOTIFY, which keeps the "
            "URL's secret off the command line).",
        ),
    ] = None,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Do not judge: print what would let each series detect --min-effect (more nights at "
            "today's noise, or repetitions a night and their minutes); exit 0, or 2 when the history is "
            "too short to measure the noise.",
        ),
    ] = False,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """Regression, improvement or no change per series of SUITE's history (exit 0 / 1 / 2).

    Exit codes: 0 no regression; 1 at least one series regressed; 2 could not decide (too little history,
    the newest run failed or was interrupted, nothing comparable); 3 the --report could not be written.
    """
    from ycsb_runner.nightly.notify import notify_urls
    from ycsb_runner.nightly.regress_service import plan_closing, plan_table, run_regress

    hooks = notify_urls(notify)  # checked before judging: a mistyped URL is a usage error (exit 2)
    out = run_regress(suite, options, filt, results=where.results, history_url=where.url, record=not plan)
    if plan:
        line, code = plan_closing(out.result)
        table = plan_table(out.result)
        if not table.empty:
            emit(
                table,
                fmt,
                f"regress {suite} --plan: to detect {options.min_effect_pct:g} %",
                extra=out.result.plan,
                priority=(
                    "mix",
                    "operation",
                    "metric",
                    "detectable_pct",
                    "needs_nights",
                    "needs_repetitions",
                ),
            )
        log(line)
        if code:
            raise typer.Exit(code)
        return
    _show_judgement(out, fmt, show_all)
    if out.unsteady:
        log(out.unsteady)
    unwritten = _write_report(out.result, report) if report is not None else None
    if junit is not None and unwritten is None:
        unwritten = _write_junit(out.result, junit)
    written = report is not None and unwritten is None
    files = [("report", str(report / n)) for n in ("regress.html", "regress.md")] if written else []
    files += [("junit", str(junit))] if junit is not None and unwritten is None else []
    _append_summary(lambda: _ci().regress_summary(out.result, files))
    if hooks:
        _notify(hooks, out.result, where, str(report / "regress.html") if written else None)
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


def _notify(urls: list[str], result: RegressResult, where: HistoryPlace, report: str | None) -> None:
    """Announce the suite's alert events not sent yet; a failing webhook is a warning (masked URL)."""
    from ycsb_runner.errors import UserError
    from ycsb_runner.nightly.notify import notify

    try:
        sent = notify(
            urls, result.suite, results=where.results, history_url=where.url, result=result, report=report
        )
    except UserError as err:  # the history could not be read or written: the decision stands
        log(f"warning: no notification sent: {err}")
        return
    for line in sent.warnings:
        log(line)
    if sent.sent:
        log(f"notified: {len(sent.sent)} alert event(s) to {len(urls)} webhook(s)")


def _ci():  # noqa: ANN202 - the module, imported when used
    from ycsb_runner.report import ci

    return ci


def _write_junit(result: RegressResult, path: Path) -> str | None:
    """Write the JUnit XML of *result* to *path*; None when written, else why not (one line)."""
    from ycsb_runner.errors import UserError
    from ycsb_runner.safe.files import atomic_write_text

    try:
        atomic_write_text(path, _ci().junit_xml(result))
    except UserError as err:
        return str(err)
    log(f"junit: {path}")
    return None


def _append_summary(document: Callable[[], Document]) -> None:
    """Append the document to ``$GITHUB_STEP_SUMMARY`` when set; a file that cannot be written is a warning
    (the decision and exit code never depend on it)."""
    import os

    ci = _ci()
    if not os.environ.get(ci.SUMMARY_ENV):
        return
    try:
        ci.append_summary(document())
    except OSError as err:
        log(f"warning: the job summary was not written to ${ci.SUMMARY_ENV} ({err.strerror or err})")


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
    from ycsb_runner.nightly.regress_service import accept_regressions
    from ycsb_runner.runs.history import ACCEPT_COLUMNS

    if by is not None and not by.strip():
        raise UserError("--by '': name who accepts it (or leave --by out for the login user)")

    out = accept_regressions(
        suite, why, by, operation, options, filt, results=where.results, history_url=where.url
    )
    emit(pd.DataFrame(out.rows, columns=ACCEPT_COLUMNS), fmt, f"accepted in {suite} ({out.where})")
    log(out.message)


TriageWhyOpt = option(str | None, "--why", metavar="TEXT", help="Why (recorded, shown with the alert).")
TriageByOpt = option(str | None, "--by", metavar="NAME", help="Who triaged it (default: the login user).")
LinkOpt = option(str | None, "--link", metavar="URL", help="A bug or discussion link (http or https).")


@regress_app.command("triage")
@HISTORY.into("where")
def triage_cmd(
    *,
    alert: Annotated[
        str, typer.Argument(metavar="ALERT_ID", help="The alert's id (regress, alerts, -f json).")
    ],
    status: Annotated[
        str,
        typer.Option(
            "--status",
            metavar="STATE",
            help="acknowledged, investigating, invalid (noise: the detector was wrong), fixed, backed-out "
            "or wontfix.",
        ),
    ],
    why: TriageWhyOpt = None,
    by: TriageByOpt = None,
    link: LinkOpt = None,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """Set the triage state of an alert (recorded in the history with who, when, why and a link).

    `regress accept` sets the state accepted; `ycsb-runner alerts` lists every alert and its state.
    """
    from ycsb_runner.nightly.regress_service import triage_alert
    from ycsb_runner.runs.alerts import alerts_frame

    got, place = triage_alert(alert, status, why, by, link, results=where.results, history_url=where.url)
    emit(alerts_frame([got]), fmt, f"alert {got.alert_id} ({place})", priority=ALERTS_PRIORITY)
    log(f"alert {got.alert_id} is {got.status} (by {got.status_by} at {got.status_at})")


# What `alerts` keeps first at 80 columns: the id to triage, its state, which series, how much, since when.
ALERTS_PRIORITY = (
    "alert_id",
    "status",
    "operation",
    "metric",
    "change_pct",
    "why",
    "suite",
    "change_run",
    "mix",
)


def alerts_cmd(
    *,
    suite: Annotated[
        str | None,
        typer.Argument(
            metavar="[SUITE]", help="Only this suite's alerts.", autocompletion=complete_history_suite
        ),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            "--status",
            metavar="STATE",
            help="Only alerts in this state: untriaged, acknowledged, investigating, invalid, fixed, "
            "backed-out, wontfix or accepted.",
        ),
    ] = None,
    where: HistoryPlace,
    wide: WideOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """List every alert regress raised (newest first) with its triage state, who, when, why and link, and
    the history's precision from triage (of the triaged alerts, how many were invalid; time to triage)."""
    from dataclasses import asdict

    from ycsb_runner.nightly.regress_service import list_alerts
    from ycsb_runner.runs.alerts import alerts_frame

    out = list_alerts(suite, results=where.results, history_url=where.url)
    df = alerts_frame(out.alerts, status)
    shown = f"{status} alerts" if status else "alerts"
    title = f"{shown} in {out.where}" + (f" of {suite}" if suite else "")
    extra = {"precision": {**asdict(out.precision), "line": out.precision.line()}}
    if renderer(fmt).terminal:
        df = df.drop(columns=["raised_at", "first_triaged_at"])
    if df.empty:
        log(f"no {shown} in {out.where}" + (f" of {suite}" if suite else ""))
    if not df.empty or renderer(fmt).data:
        emit(df, fmt, title, extra, priority=ALERTS_PRIORITY, wide=wide, whole=("alert_id",))
    log(out.precision.line())


@history_app.command("rebuild")
@HISTORY.into("where")
def rebuild_cmd(where: HistoryPlace) -> None:
    """Index every run folder under the results folder again (one transaction)."""
    from ycsb_runner.paths import results_dir
    from ycsb_runner.runs.history import rebuild

    history, n = rebuild(where.results or results_dir(), where.url, log=log)
    typer.echo(json.dumps({"history": history.where, "runs": n}))


class ExportFormat(StrEnum):
    otava = "otava"
    bmf = "bmf"
    openmetrics = "openmetrics"
    ndjson = "ndjson"
    csv = "csv"


@history_app.command("export")
@HISTORY.into("where")
def export_cmd(
    *,
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            "-f",
            help="otava (Apache Otava's CSV; its test configuration is printed), bmf (Bencher Metric Format, "
            "one document per run and line), openmetrics (Prometheus/Grafana), ndjson or csv (one "
            "object/row per run x series value, every tag).",
        ),
    ],
    suite: Annotated[
        str | None, typer.Option("--suite", metavar="SUITE", help="Only runs of this suite.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="Write there (default: standard output).")
    ] = None,
    where: HistoryPlace,
) -> None:
    """Export the history's runs (oldest first) in a format other tools read."""
    from ycsb_runner.nightly.export import export_rows, history_export_rows, otava_config

    rows = history_export_rows(suite, results=where.results, history_url=where.url)
    text = export_rows(rows, str(fmt))
    if out is not None:
        from ycsb_runner.safe.files import atomic_write_text

        atomic_write_text(out, text)
        log(f"{fmt}: {out}")
    else:
        typer.echo(text, nl=False)
    if fmt == ExportFormat.otava:  # with --out on stdout, else on stderr (stdout holds the CSV)
        config = otava_config(rows, str(out or "export.csv"), suite or "ycsb")
        (typer.echo if out is not None else log)(f"# Otava: otava analyse --config-file FILE\n{config}")


@history_app.command("prune")
@HISTORY.into("where")
def prune_cmd(
    *,
    before: Annotated[
        str | None,
        typer.Option("--before", metavar="DATE", help="Remove the runs started before DATE (2026-06-01)."),
    ] = None,
    keep: Annotated[
        int | None, typer.Option("--keep", metavar="N", help="Keep the newest N runs of each suite.")
    ] = None,
    suite: Annotated[
        str | None, typer.Option("--suite", metavar="SUITE", help="Only runs of this suite.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would be removed; remove nothing.")
    ] = False,
    where: HistoryPlace,
    fmt: FormatOpt = Format.table,
) -> None:
    """Remove old runs from the history and their folders (only folders in the results folder that hold
    the run's manifest), never a night an open alert needs (from its baseline on). --dry-run lists the
    same runs the real run removes."""
    from ycsb_runner.nightly.retention import plan_prune, prune
    from ycsb_runner.paths import results_dir
    from ycsb_runner.runs.history import open_history

    results = where.results or results_dir()
    history = open_history(results, where.url)
    plan = plan_prune(history, results, before=before, keep=keep, suite=suite)
    verb = "would remove" if dry_run else "removing"
    emit(plan.remove, fmt, f"{verb} {len(plan.remove)} runs from {history.where}", whole=("run_id",))
    if plan.kept:
        ids = sorted({a for v in plan.kept.values() for a in v})
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        log(f"kept {len(plan.kept)} runs the rule chose: open alerts need them ({shown})")
    if dry_run:
        n = int((plan.remove["folder"] != "").sum())
        log(f"dry run: {len(plan.remove)} runs and {n} folders would be removed; nothing was")
        return
    out = prune(history, plan, results)
    log(f"removed {out.runs_removed} runs from the history and {out.folders_removed} run folders")
    if out.latest:
        log(out.latest)


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_cmd)
    app.command("alerts")(HISTORY.into("where")(alerts_cmd))
    app.add_typer(regress_app, name="regress")
    app.add_typer(history_app, name="history")
