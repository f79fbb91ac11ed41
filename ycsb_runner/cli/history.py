"""``runs``, ``regress`` (``regress SUITE`` and ``regress accept SUITE``) and ``history rebuild``: the run
history (``ycsb_runner.history``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ycsb_runner.analyse.regress_options import DEFAULTS, RegressOptions
from ycsb_runner.cli.default_group import DefaultCommand, DefaultCommandGroup
from ycsb_runner.cli.options import (
    Format,
    FormatOpt,
    HistoryUrlOpt,
    ResultsOpt,
    SinceOpt,
    TagOpt,
    UntilOpt,
    VerdictOpt,
    complete_suite,
    emit,
    log,
    renderer,
)

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.analyse.regress import RegressResult
    from ycsb_runner.history import History, RunFilter

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
    try:
        runs = _history(None, os.environ.get(HISTORY_ENV)).runs()
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
MinEffectOpt = Annotated[
    float, typer.Option("--min-effect", metavar="PCT", help="Smallest change (in %) that counts.")
]
AlphaOpt = Annotated[
    float,
    typer.Option(
        "--alpha",
        metavar="P",
        help="Significance level, after correction (0.01: about one false alarm per 100 nights in a series).",
    ),
]
CorrectionOpt = Annotated[
    str, typer.Option("--correction", metavar="NAME", help="holm (family-wise) or bh (Benjamini-Hochberg).")
]
WindowOpt = Annotated[
    int,
    typer.Option(
        "--window",
        metavar="N",
        help="The longest run of newest nights tested together against the stable nights before.",
    ),
]
ConfirmOpt = Annotated[
    int,
    typer.Option(
        "--confirm",
        metavar="N",
        help="Flag a change only once it shows on each of the last N nights (2: a single outlier "
        "night flags nothing; 1: tonight alone can fail the job).",
    ),
]
IgnoreCanariesOpt = Annotated[
    bool,
    typer.Option(
        "--ignore-canaries",
        help="Judge the database's series as if no canary had been measured (a change on nights whose "
        "load generator, round trip or host moved is then a regression like any other).",
    ),
]
MetricOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        metavar="NAME",
        help="throughput_ops_s, avg_us, p50_us, p95_us, p99_us, findmax_ops_s (repeatable).",
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


def _options(
    min_effect: float,
    alpha: float,
    correction: str,
    window: int,
    confirm: int,
    metric: list[str] | None,
    ignore_canaries: bool = False,
) -> RegressOptions:
    from ycsb_runner.errors import UserError
    from ycsb_runner.metrics import OPERATION_METRICS, RUN_METRICS

    known = {"throughput_ops_s", *OPERATION_METRICS, *RUN_METRICS}
    bad = [m for m in metric or [] if m not in known]
    if bad:
        raise UserError(f"--metric {bad[0]!r}: known metrics are {', '.join(sorted(known))}")
    opts = RegressOptions(
        min_effect_pct=min_effect,
        alpha=alpha,
        correction=correction,
        window=window,
        confirm=confirm,
        canaries=not ignore_canaries,
    )
    if metric:
        opts.metrics = tuple(metric)
    try:
        opts.check()
    except ValueError as e:
        raise UserError(str(e)) from None
    return opts


def _judge(
    suite: str,
    filt: RunFilter,
    opts: RegressOptions,
    results: Path | None,
    history_url: str | None,
    unknown: str = "",
) -> tuple[History, RegressResult]:
    """(history, the regress result of SUITE's runs that pass *filt*, with the suite's acceptances);
    UserError (*unknown*, then why) when the history has no run of SUITE at all."""
    from ycsb_runner.analyse.regress import regress
    from ycsb_runner.errors import UserError
    from ycsb_runner.history import select_runs

    history = _history(results, history_url)
    every = history.runs()
    if missing := _unknown_suite(suite, every):
        raise UserError(unknown + missing)
    runs = select_runs(every, filt)
    metrics = history.metrics([str(r) for r in runs["run_id"]])
    return history, regress(runs, metrics, suite, opts, history.accepts(suite))


def _unknown_suite(suite: str, runs: pd.DataFrame) -> str | None:
    """Why *suite* cannot be judged when the history has no run of it at all: a mistyped name (did you
    mean, from the suites it has runs of) rather than a history too short to judge; None when it has."""
    from ycsb_runner.suite import did_you_mean

    known = sorted({str(s) for s in runs["suite"]}) if not runs.empty else []
    if suite in known:
        return None
    has = f"; it has runs of {', '.join(known)}" if known else ""
    return f"no runs of suite {suite!r} in the history{did_you_mean(suite, known)}{has}"


def _unsteady_nights(history: History, run_ids: list[str]) -> str | None:
    """The line saying which of the compared nights had non-stationary steps (history metric
    ``stationary`` = 0), or None."""
    from ycsb_runner.history import STATIONARY

    if not run_ids:
        return None
    m = history.metrics([str(r) for r in run_ids])
    bad = m[(m["metric"] == STATIONARY) & (m["value"] == 0)] if not m.empty else m
    if bad.empty:
        return None
    runs = sorted(set(bad["run_id"]))
    shown = ", ".join(runs[-5:]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")
    return (
        f"compares non-stationary steps: {len(bad)} step(s) of {len(runs)} of the {len(run_ids)} runs "
        f"were not in steady state ({shown}; see their steps.csv warnings)"
    )


def _lifecycle(out: RegressResult, fmt: Format) -> None:
    """After the table: one line per open regression (the run it began at) and per acceptance in effect."""
    from ycsb_runner.analyse.regress import accepted_changes, open_changes

    lines = [
        f"open since {c['change_run']} ({c['change_tags'] or 'no tags'}): {c['series']} series regressed"
        for c in open_changes(out.table)
    ]
    if lines:
        lines.append(
            f"to accept: ycsb-runner regress accept {out.suite} --why TEXT (with this run's options)"
        )
    for e in out.events:
        if not (e["most"] or e["canaries"]):
            continue
        one = "one change in " if e["most"] else ""
        moved = "; ".join(e["canaries"]) if e["canaries"] else "the canaries did not move"
        lines.append(
            f"{e['change_run']} ({e['change_tags'] or 'no tags'}): {one}{e['series']} of {e['of']} series "
            f"({', '.join(e['verdicts'])}); {moved}"
        )
        lines += [f"  {m}" for m in e["members"][:8]]
        if len(e["members"]) > 8:
            lines.append(f"  and {len(e['members']) - 8} more")
    for a in accepted_changes(out.accepts):
        wait = f"; {a['settling']} too recent to test" if a["settling"] else ""
        lines.append(
            f"accepted {a['change_run']} by {a['accepted_by']} at {a['accepted_at']}: {a['why']} "
            f"({a['series']} series{wait})"
        )
    renderer(fmt).notes("Open and accepted changes", lines)
    renderer(fmt).notes("Canaries", out.canary_lines)


def _compact(shown: pd.DataFrame) -> pd.DataFrame:
    """The terminal view of regress's table: its terminal columns, p and the changes rounded."""
    from ycsb_runner.analyse.regress import TERMINAL_COLUMNS

    compact = shown[list(TERMINAL_COLUMNS)].copy()
    compact["p_adjusted"] = compact["p_adjusted"].map(lambda p: f"{p:.2g}" if p == p else "-")
    for col in ("change_pct", "detectable_pct"):
        compact[col] = compact[col].map(lambda v: f"{v:+.1f}" if v == v else "-")
    compact["detectable_pct"] = compact["detectable_pct"].str.lstrip("+")
    return compact


def _show_judgement(out: RegressResult, fmt: Format, show_all: bool) -> None:
    """regress's table: in a data format every series and column, raw, with the summary; else the flagged
    series (every one with *show_all*), compact, then the open and accepted changes."""
    from ycsb_runner.analyse.regress import TERMINAL_PRIORITY, flagged

    data = renderer(fmt).data
    shown = out.table if show_all or data else flagged(out.table)
    title = f"regress {out.suite}: {out.reason}; correction {out.correction_text}"
    if data:
        emit(shown, fmt, title, extra=out.summary())
        return
    if shown.empty and out.exit_code != 2:
        log(f"no flagged series (newest run {out.newest}, {len(out.runs_used)} runs)")
    elif not shown.empty:
        emit(_compact(shown), fmt, title, priority=TERMINAL_PRIORITY)
    _lifecycle(out, fmt)


@regress_app.command("check", hidden=True, cls=DefaultCommand)
def regress_cmd(
    suite: SuiteName,
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    min_effect: MinEffectOpt = DEFAULTS.min_effect_pct,
    alpha: AlphaOpt = DEFAULTS.alpha,
    correction: CorrectionOpt = DEFAULTS.correction,
    window: WindowOpt = DEFAULTS.window,
    confirm: ConfirmOpt = DEFAULTS.confirm,
    metric: MetricOpt = None,
    ignore_canaries: IgnoreCanariesOpt = False,
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
    the newest run failed or was interrupted, nothing comparable); 3 the --report could not be written.
    """
    opts = _options(min_effect, alpha, correction, window, confirm, metric, ignore_canaries)
    history, out = _judge(suite, _filter(suite, tag, since, until, None), opts, results, history_url)
    _show_judgement(out, fmt, show_all)
    if unsteady := _unsteady_nights(history, out.runs_used):
        log(unsteady)
    unwritten = _write_report(out, report) if report is not None else None
    log(
        f"{out.reason} ({f'newest {out.newest}; ' if out.newest else ''}alpha {alpha:g} after "
        f"{out.correction_text} correction, "
        f"min effect {min_effect:g} %, --confirm {confirm}); exit {out.exit_code}"
    )
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
    from ycsb_runner.analyse.regress_report import write_regress_report
    from ycsb_runner.errors import UserError

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


def _login_user() -> str:
    import getpass

    from ycsb_runner.errors import UserError

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment nor the password database
        raise UserError("cannot tell who you are: give --by NAME") from None


def _accept_follow_ups(
    history: History,
    rows: list[dict[str, Any]],
    judge: Callable[[], RegressResult],
    operations: list[str] | None,
    series: int,
) -> list[dict[str, Any]]:
    """The acceptances recorded after *rows*: an accepted series leaves the correction's family, so a series
    of the same change that was just short of the threshold regresses on the next judgement (make test:
    UPDATE p99 at p = 0.0059 was "cannot tell" beside 7 regressions, a regression once they were accepted).
    Those of the same change runs are accepted too, until none is left (at most one round per *series*)."""
    from ycsb_runner.analyse.regress import accept_rows

    first = rows[0]
    changes = {str(r["change_run"]) for r in rows}
    added: list[dict[str, Any]] = []
    for _ in range(series):
        again = judge()
        more = [
            r
            for r in accept_rows(
                again,
                by=first["accepted_by"],
                why=first["why"],
                at=first["accepted_at"],
                operations=operations,
            )
            if str(r["change_run"]) in changes
        ]
        if not more:
            break
        history.accept(more)
        added += more
    return added


WhyOpt = Annotated[
    str, typer.Option("--why", metavar="TEXT", help="Why the change is the new normal (recorded).")
]
ByOpt = Annotated[
    str | None, typer.Option("--by", metavar="NAME", help="Who accepts it (default: the login user).")
]
OperationOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--operation",
        metavar="OP",
        help="Only the series of this operation: READ, UPDATE, INSERT, ..., OVERALL for "
        "throughput (repeatable).",
    ),
]


@regress_app.command("accept")
def accept_cmd(
    suite: SuiteName,
    why: WhyOpt,
    by: ByOpt = None,
    operation: OperationOpt = None,
    metric: MetricOpt = None,
    tag: TagOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    min_effect: MinEffectOpt = DEFAULTS.min_effect_pct,
    alpha: AlphaOpt = DEFAULTS.alpha,
    correction: CorrectionOpt = DEFAULTS.correction,
    window: WindowOpt = DEFAULTS.window,
    confirm: ConfirmOpt = DEFAULTS.confirm,
    ignore_canaries: IgnoreCanariesOpt = False,
    results: ResultsOpt = None,
    history_url: HistoryUrlOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Accept the regressions open now in SUITE: each series' nights from the run where its change began
    are its new normal (recorded in the history with who, when and why).

    Give it the options your nightly regress uses (--metric, --tag, --alpha, ...): it accepts the series
    that regress flags with them. Exit 0 after recording; 2 when nothing is open to accept.
    """
    import time

    import pandas as pd

    from ycsb_runner.analyse.regress import accept_rows, open_regressions
    from ycsb_runner.errors import UserError
    from ycsb_runner.history import ACCEPT_COLUMNS, NOTE_CHARS, WHO_CHARS, check_text
    from ycsb_runner.model import iso_utc

    reason = check_text(why.strip(), "--why", NOTE_CHARS)
    if not reason:
        raise UserError("--why is empty: say why the change is the new normal, e.g. --why 'new server build'")
    who = check_text((by or "").strip(), "--by", WHO_CHARS) or _login_user()
    opts = _options(min_effect, alpha, correction, window, confirm, metric, ignore_canaries)
    filt = _filter(suite, tag, since, until, None)
    history, out = _judge(
        suite, filt, opts, results, history_url, unknown=f"nothing open to accept in {suite}: "
    )
    found = open_regressions(out.table)
    if found.empty:
        raise UserError(f"nothing open to accept in {suite}: {out.reason}", exit_code=2)
    at = str(iso_utc(time.time()))
    rows = accept_rows(out, by=who, why=reason, at=at, operations=operation)
    if not rows:
        ops = ", ".join(sorted(set(found["operation"].astype(str))))
        raise UserError(f"no open regression of --operation {', '.join(operation or [])}: open are {ops}")
    history.accept(rows)
    rows += _accept_follow_ups(
        history, rows, lambda: _judge(suite, filt, opts, results, history_url)[1], operation, len(out.table)
    )
    emit(pd.DataFrame(rows, columns=ACCEPT_COLUMNS), fmt, f"accepted in {suite} ({history.where})")
    runs = sorted({str(r["change_run"]) for r in rows})
    log(f"accepted {len(rows)} series of {suite} (changes since {', '.join(runs)}) by {who}: {reason}")


@history_app.command("rebuild")
def rebuild_cmd(results: ResultsOpt = None, history_url: HistoryUrlOpt = None) -> None:
    """Index every run folder under the results folder again (one transaction)."""
    from ycsb_runner.history import rebuild
    from ycsb_runner.paths import results_dir

    history, n = rebuild(results or results_dir(), history_url, log=log)
    typer.echo(json.dumps({"history": history.where, "runs": n}))


def register(app: typer.Typer) -> None:
    app.command("runs")(runs_cmd)
    app.add_typer(regress_app, name="regress")
    app.add_typer(history_app, name="history")
