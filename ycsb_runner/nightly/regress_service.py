"""The nightly check as a service: what ``ycsb-runner regress`` and ``regress accept`` answer, for a Python
user as for the command line.

``run_regress`` reads a suite's runs from the history, judges them (``nightly.regress.regress``) and returns
the decision with its exit code and the lines the command prints around its table; ``accept_regressions``
records the regressions open now as the new normal. The command only parses options and prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner.errors import UserError
from ycsb_runner.nightly.regress_options import RegressOptions
from ycsb_runner.runs.history import open_history

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.runs.alerts import Alert
    from ycsb_runner.runs.history import History, RunFilter


@dataclass
class RegressOutcome:
    """A judgement of a suite's history: *result* (the table of series, its summary), and what the command
    prints beside it: *changes* (the open and accepted changes), *canaries*, *unsteady* (the nights compared
    that were not in steady state) and *closing* (the decision's last line, with the exit code)."""

    result: RegressResult
    changes: list[str]
    canaries: list[str]
    unsteady: str | None
    closing: str
    evidence: list[str] = field(default_factory=list)  # one line per flagged series: what else moved

    @property
    def exit_code(self) -> int:
        """0 no regression, 1 at least one series regressed, 2 could not decide."""
        return self.result.exit_code

    @property
    def decision(self) -> str:
        """The decision in one phrase (e.g. "no regression", "2 of 12 series regressed ...")."""
        return self.result.reason

    @property
    def messages(self) -> list[str]:
        """The lines after the table, in the command's order: the unsteady nights, then the closing line."""
        return [line for line in (self.unsteady, self.closing) if line]


@dataclass
class AcceptOutcome:
    """What ``regress accept`` recorded: *rows* (history.ACCEPT_COLUMNS), where, and its closing line."""

    rows: list[dict[str, Any]]
    where: str
    message: str


def judge(
    suite: str,
    options: RegressOptions,
    filt: RunFilter,
    history: History,
    unknown: str = "",
) -> RegressResult:
    """The regress result of SUITE's runs in *history* that pass *filt*, with the suite's acceptances;
    UserError (*unknown*, then why) when the history has no run of SUITE at all."""
    from ycsb_runner.nightly.regress import regress
    from ycsb_runner.runs.history import select_runs

    every = history.runs()
    if missing := unknown_suite(suite, every):
        raise UserError(unknown + missing)
    runs = select_runs(every, filt)
    if options.on_host_change == "split" and not runs.empty:
        ident = identities(runs)
        runs = runs[ident == ident.iloc[-1]].reset_index(drop=True)
    metrics = history.metrics([str(r) for r in runs["run_id"]])
    out = regress(runs, metrics, suite, options, history.accepts(suite))
    with_evidence(out, runs)
    return out


def with_evidence(out: RegressResult, runs: pd.DataFrame) -> None:
    """Each flagged series' ``evidence`` (``nightly.evidence``), its run folders read through the model (each
    once, and each step's figures of a run computed once), found where the history recorded them
    (``folder``)."""
    from ycsb_runner.nightly import evidence
    from ycsb_runner.nightly.regress import ENVIRONMENT, IMPROVEMENT, REGRESSION
    from ycsb_runner.runs.history import SERIES_KEYS

    folders = dict(zip(runs["run_id"].astype(str), runs["folder"], strict=True)) if not runs.empty else {}
    loaded: dict[str, Any] = {}
    # a run's figures depend only on the row's step (the series of one step share them): each step's once
    figures: dict[tuple[str, tuple[str | None, ...]], dict[str, float] | None] = {}

    def read(run: str, row: dict[str, Any]) -> dict[str, float] | None:
        if run not in loaded:
            loaded[run] = evidence.open_run(folders.get(run))
        step = (run, tuple(str(row[k]) if k in row else None for k in evidence.STEP_KEYS))
        if step not in figures:
            figures[step] = evidence.folder_figures(loaded[run], row)
        return figures[step]

    if not out.table.empty:
        evidence.attach(
            out.table, out.series_values, (REGRESSION, ENVIRONMENT, IMPROVEMENT), read, SERIES_KEYS
        )


def evidence_lines(out: RegressResult) -> list[str]:
    """One line per flagged series: what else moved on its nights (the ``summary`` of
    ``evidence.series_evidence``)."""
    if out.table.empty or "evidence" not in out.table:
        return []
    lines = []
    for row in out.table.to_dict("records"):
        ev = row.get("evidence")
        if isinstance(ev, dict):
            lines.append(
                f"{row['mix']} t{row['threads']} {row['operation']} {row['metric']}: {ev['summary']}"
            )
    return lines


def identities(runs: pd.DataFrame) -> pd.Series:
    """Each run's host identity: "load generator HOST, server KIND VERSION" ("?": not recorded)."""

    def one(r: Any) -> str:
        host = str(r.get("client_host") or "") or "?"
        server = " ".join(str(r.get(k) or "") for k in ("server_kind", "server_version")).strip() or "?"
        return f"load generator {host}, server {server}"

    return runs.apply(one, axis=1) if not runs.empty else runs["run_id"].astype(str)


def host_lines(history: History, out: RegressResult) -> list[str]:
    """What the runs compared ran on, and where that changed; with ``--on-host-change mark`` every tested
    series whose nights span a change gets the note "host changed at RUN"."""
    if not out.runs_used:
        return []
    runs = history.runs()
    order = {r: i for i, r in enumerate(out.runs_used)}
    runs = runs[runs["run_id"].isin(order)].assign(_o=lambda d: d["run_id"].map(order)).sort_values("_o")
    if runs.empty:
        return []
    ident = identities(runs).tolist()
    ids = runs["run_id"].astype(str).tolist()
    changes = [(ids[i], ident[i - 1], ident[i]) for i in range(1, len(ids)) if ident[i] != ident[i - 1]]
    split = " (--on-host-change split: only its nights)" if out.options.on_host_change == "split" else ""
    lines = [f"ran on {ident[-1]}{split}"]
    for run, old, new in changes:
        lines.append(f"host changed at {run}: {old} -> {new}")
    if changes and out.options.on_host_change == "mark" and not out.table.empty:
        mark = "; ".join(f"host changed at {run}" for run, _, _ in changes)
        tested = out.table["verdict"] != "untested"
        out.table.loc[tested, "note"] = [
            f"{n}; {mark}" if isinstance(n, str) and n else mark for n in out.table.loc[tested, "note"]
        ]
    return lines


def unknown_suite(suite: str, runs: pd.DataFrame) -> str | None:
    """Why *suite* cannot be judged when the history has no run of it at all: a mistyped name (did you
    mean, from the suites it has runs of) rather than a history too short to judge; None when it has."""
    from ycsb_runner.prepare.suite import did_you_mean

    known = sorted({str(s) for s in runs["suite"]}) if not runs.empty else []
    if suite in known:
        return None
    has = f"; it has runs of {', '.join(known)}" if known else ""
    return f"no runs of suite {suite!r} in the history{did_you_mean(suite, known)}{has}"


def unsteady_nights(history: History, run_ids: list[str]) -> str | None:
    """The line saying which of the compared nights had non-stationary steps (history metric
    ``stationary`` = 0), or None."""
    from ycsb_runner.runs.history import STATIONARY

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


def change_lines(out: RegressResult) -> list[str]:
    """The lines after regress's table: one per open regression (the run it began at), per change event
    (with what the canaries said) and per acceptance in effect."""
    from ycsb_runner.nightly.regress import accepted_changes, open_changes

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
    return lines


def closing_line(out: RegressResult) -> str:
    """regress's last line: the decision, the options it was made with, and the exit code."""
    o = out.options
    return (
        f"{out.reason} ({f'newest {out.newest}; ' if out.newest else ''}alpha {o.alpha:g} after "
        f"{out.correction_text} correction, "
        f"min effect {o.min_effect_pct:g} %, --confirm {o.confirm}); exit {out.exit_code}"
    )


def plan_closing(out: RegressResult) -> tuple[str, int]:
    """``regress --plan``'s last line and exit code: what would let SUITE detect ``--min-effect`` (exit 0),
    or, when no series has nights enough to measure its noise, why not (exit 2)."""
    from ycsb_runner.nightly.regress import EXIT_UNDECIDED

    line = out.plan.get("line") if out.plan else ""
    if not line:
        return f"no plan: {out.reason} (too little history to measure the noise); exit {EXIT_UNDECIDED}", 2
    now = out.plan.get("detectable_pct")
    shown = (
        f"the most sensitive series detects {now:.1f} % today; "
        if now is not None and now > out.plan["min_effect_pct"]
        else ""
    )
    return f"plan for {out.suite} ({len(out.runs_used)} runs): {shown}{line}; exit 0", 0


def plan_table(out: RegressResult) -> pd.DataFrame:
    """``regress --plan``'s table: per series with a noise model, what would let it detect --min-effect."""
    from ycsb_runner.nightly.regress import PLAN_COLUMNS

    t = out.table
    return t.loc[t["detectable_pct"].notna(), PLAN_COLUMNS].reset_index(drop=True) if not t.empty else t


def run_regress(
    suite: str,
    options: RegressOptions | None = None,
    filt: RunFilter | None = None,
    *,
    results: Path | None = None,
    history_url: str | None = None,
    record: bool = True,
) -> RegressOutcome:
    """``ycsb-runner regress SUITE``: judge SUITE's newest nights in the history (*results*' history.sqlite
    or *history_url*) with *options*, among the runs that pass *filt* (tags, dates). *record*: raise and
    recover the history's alerts (``--plan`` judges without recording). UserError for options that make no
    sense or a suite the history has no run of."""
    from ycsb_runner.runs.history import RunFilter

    options = options or RegressOptions()
    try:
        options.check()
    except ValueError as e:
        raise UserError(str(e)) from None
    filt = filt or RunFilter()
    history = open_history(results, history_url)
    out = judge(suite, options, _of_suite(filt, suite), history)
    hosts = host_lines(history, out)
    alerts = track_alerts(history, out) if record else []
    return RegressOutcome(
        result=out,
        changes=change_lines(out) + alerts,
        canaries=[*hosts, *out.canary_lines],
        unsteady=unsteady_nights(history, out.runs_used),
        closing=closing_line(out),
        evidence=evidence_lines(out),
    )


def alert_of(suite: str, row: dict[str, Any], raised_run: str, at: str) -> Alert:
    """The alert of a flagged table row (or an acceptance row: a regression of unknown size)."""
    import math

    from ycsb_runner.runs.alerts import Alert, alert_id
    from ycsb_runner.runs.history import SERIES_KEYS, series_id

    key = series_id(row[k] for k in SERIES_KEYS)
    pct = row.get("change_pct")
    pct = None if pct is None or (isinstance(pct, float) and math.isnan(pct)) else round(float(pct), 2)
    verdict = str(row.get("verdict") or "regression")
    return Alert(
        alert_id=alert_id(suite, key, str(row["change_run"])),
        suite=suite,
        series=dict(zip(SERIES_KEYS, key, strict=True)),
        direction=verdict if verdict in ("regression", "improvement") else "regression",
        change_pct=pct,
        change_run=str(row["change_run"]),
        raised_run=raised_run,
        raised_at=at,
        baseline_run=str(row["baseline_from"]) if isinstance(row.get("baseline_from"), str) else None,
    )


def track_alerts(history: History, out: RegressResult) -> list[str]:
    """Record an alert for every flagged series of *out* (``alert_id`` set), mark recovered the open alerts
    of series that show no change now, and fill the table's ``triage`` column from the history. The lines
    to print: the alerts waiting for triage, or why they could not be recorded (a read-only history)."""
    from ycsb_runner.nightly.regress import NO_CHANGE
    from ycsb_runner.runs.history import SERIES_KEYS, series_id
    from ycsb_runner.runs.model import iso_utc

    table = out.table
    if table.empty or not out.newest:
        return []
    now = str(iso_utc(time.time()))
    rows = table.to_dict("records")
    raised = [alert_of(out.suite, r, out.newest, now) for r in rows if r.get("alert_id")]
    quiet = {series_id(r[k] for k in SERIES_KEYS) for r in rows if r["verdict"] == NO_CHANGE}
    try:
        history.record_alerts(raised)
        known = history.alerts(out.suite)
        for a in known:
            if a.open and a.series_key in quiet:
                history.mark_recovered(a.alert_id, out.newest)
    except UserError as err:
        return [f"alerts not recorded in the history: {err}"] if raised else []
    states = {a.alert_id: a.status for a in known}
    table["triage"] = [states.get(str(i), "") if i else "" for i in table["alert_id"]]
    waiting = table[table["triage"] == "untriaged"]
    if waiting.empty:
        return []
    lines = [
        f"{len(waiting)} alert(s) untriaged: ycsb-runner regress triage ALERT_ID --status STATE --why TEXT "
        "(or regress accept)"
    ]
    for r in waiting.head(8).to_dict("records"):
        pct = f" {r['change_pct']:+.1f} %" if r["change_pct"] == r["change_pct"] else ""
        lines.append(f"  {r['alert_id']}: {r['phase']} {r['mix']} {r['operation']} {r['metric']}{pct}")
    if len(waiting) > 8:
        lines.append(f"  and {len(waiting) - 8} more (regress -f json, or ycsb-runner alerts)")
    return lines


def _of_suite(filt: RunFilter, suite: str) -> RunFilter:
    return replace(filt, suite=suite)


def login_user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment nor the password database
        raise UserError("cannot tell who you are: give --by NAME") from None


def _follow_ups(
    history: History,
    rows: list[dict[str, Any]],
    again: Callable[[], RegressResult],
    operations: list[str] | None,
    series: int,
) -> list[dict[str, Any]]:
    """The acceptances recorded after *rows*: an accepted series leaves the correction's family, so a series
    of the same change that was just short of the threshold regresses on the next judgement (make test:
    UPDATE p99 at p = 0.0059 was "cannot tell" beside 7 regressions, a regression once they were accepted).
    Those of the same change runs are accepted too, until none is left (at most one round per *series*)."""
    from ycsb_runner.nightly.regress import accept_rows

    first = rows[0]
    changes = {str(r["change_run"]) for r in rows}
    added: list[dict[str, Any]] = []
    for _ in range(series):
        more = [
            r
            for r in accept_rows(
                again(),
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


def _accept_alerts(history: History, out: RegressResult, rows: list[dict[str, Any]]) -> None:
    """Mark ``accepted`` (who, when, why of the acceptance) the alert of every accepted series, raising it
    first when no regress recorded it yet; an alert already closed by triage keeps its state."""
    from ycsb_runner.runs.alerts import CLOSED_STATES

    track_alerts(history, out)
    known = {a.alert_id: a for a in history.alerts(out.suite)}
    first = rows[0]
    mine = [alert_of(out.suite, r, str(out.newest), str(r["accepted_at"])) for r in rows]
    history.record_alerts([a for a in mine if a.alert_id not in known])
    for a in {a.alert_id: a for a in mine}.values():
        if a.alert_id in known and known[a.alert_id].status in CLOSED_STATES:
            continue  # triaged invalid, fixed, ... already: that judgement stays (the precision counts it)
        history.triage(a.alert_id, "accepted", str(first["accepted_by"]), str(first["why"]))


def accept_regressions(
    suite: str,
    why: str,
    by: str | None = None,
    operations: list[str] | None = None,
    options: RegressOptions | None = None,
    filt: RunFilter | None = None,
    *,
    results: Path | None = None,
    history_url: str | None = None,
) -> AcceptOutcome:
    """``ycsb-runner regress accept SUITE --why TEXT``: record the regressions open now (as
    :func:`run_regress` judges them with *options* and *filt*) as the new normal, by *by* (default: the
    login user); UserError (exit 2) when nothing is open to accept."""
    from ycsb_runner.nightly.regress import accept_rows, open_regressions
    from ycsb_runner.runs.history import NOTE_CHARS, WHO_CHARS, RunFilter, check_text
    from ycsb_runner.runs.model import iso_utc

    reason = check_text(why.strip(), "--why", NOTE_CHARS)
    if not reason:
        raise UserError("--why is empty: say why the change is the new normal, e.g. --why 'new server build'")
    who = check_text((by or "").strip(), "--by", WHO_CHARS) or login_user()
    options = options or RegressOptions()
    try:
        options.check()
    except ValueError as e:
        raise UserError(str(e)) from None
    filt = _of_suite(filt or RunFilter(), suite)
    history = open_history(results, history_url)
    out = judge(suite, options, filt, history, unknown=f"nothing open to accept in {suite}: ")
    found = open_regressions(out.table)
    if found.empty:
        raise UserError(f"nothing open to accept in {suite}: {out.reason}", exit_code=2)
    rows = accept_rows(out, by=who, why=reason, at=str(iso_utc(time.time())), operations=operations)
    if not rows:
        ops = ", ".join(sorted(set(found["operation"].astype(str))))
        raise UserError(f"no open regression of --operation {', '.join(operations or [])}: open are {ops}")
    history.accept(rows)
    rows += _follow_ups(
        history, rows, lambda: judge(suite, options, filt, history), operations, len(out.table)
    )
    _accept_alerts(history, out, rows)
    runs = sorted({str(r["change_run"]) for r in rows})
    message = f"accepted {len(rows)} series of {suite} (changes since {', '.join(runs)}) by {who}: {reason}"
    return AcceptOutcome(rows=rows, where=history.where, message=message)


@dataclass
class AlertsOutcome:
    """What ``ycsb-runner alerts`` shows: the *alerts* (of the suite), the history's *precision* (from every
    alert of the suite, whatever the status filter) and *where*."""

    alerts: list[Alert]
    precision: Any  # alerts.Precision
    where: str


def triage_alert(
    alert_id: str,
    status: str,
    why: str | None = None,
    by: str | None = None,
    link: str | None = None,
    *,
    results: Path | None = None,
    history_url: str | None = None,
) -> tuple[Alert, str]:
    """``ycsb-runner regress triage ALERT_ID --status STATE``: set the alert's triage state (one of
    ``alerts.TRIAGE_STATES``) by *by* (default the login user; "" is refused), with *why* and *link*; the
    alert as stored and where. UserError for an unknown id, state or text that cannot be kept."""
    from ycsb_runner.runs.alerts import TRIAGE_STATES, check_state
    from ycsb_runner.runs.history import NOTE_CHARS, WHO_CHARS, check_text

    check_state(status, TRIAGE_STATES)
    reason = check_text((why or "").strip(), "--why", NOTE_CHARS) or None
    if by is not None and not by.strip():
        raise UserError("--by is empty: say who triaged the alert, e.g. --by alice (or leave --by out)")
    who = check_text(by.strip(), "--by", WHO_CHARS) if by is not None else login_user()
    url = check_link((link or "").strip())
    history = open_history(results, history_url)
    return history.triage(alert_id.strip(), status, who, reason, url), history.where


def list_alerts(
    suite: str | None = None,
    *,
    results: Path | None = None,
    history_url: str | None = None,
) -> AlertsOutcome:
    """``ycsb-runner alerts [SUITE]``: every alert of the history (of SUITE) and its precision."""
    from ycsb_runner.runs.alerts import precision

    history = open_history(results, history_url)
    found = history.alerts(suite)
    if suite is not None and not found and (missing := unknown_suite(suite, history.runs())):
        raise UserError(missing)
    return AlertsOutcome(found, precision(found), history.where)


LINK_CHARS = 500


def check_link(link: str | None) -> str | None:
    """*link* when it is an http(s) URL of one printable line (it becomes a link on the site); else a
    UserError."""
    from ycsb_runner.runs.history import check_text

    if not link:
        return None
    check_text(link, "--link", LINK_CHARS)
    if not link.startswith(("https://", "http://")) or any(c.isspace() for c in link):
        raise UserError(f"--link {link[:60]!r}: expected an http(s) URL, e.g. https://bugs.example.org/123")
    return link
