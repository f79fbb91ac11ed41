"""The run history as a static site: an overview of every suite, a page per suite (its alert summaries, a
small chart of each series), a page per series (its whole trend, drawn by Plotly) and a table of every alert.

Every page is a document of ``ycsb_runner.present.document`` written by the HTML renderer (``report.html``);
the chart script is written once into ``assets/`` and shared by the pages, so the site reads from disk with no
network (``file://``). The series' verdicts and each suite's decision are regress's own
(``nightly.regress_service.run_regress`` with its default options); the alerts and their triage come from the
history (``History.alerts``, issue 46) or, in a history without them, from the series regress flags tonight
(untriaged, or accepted).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pandas as pd

from ycsb_runner.errors import UserError
from ycsb_runner.present.document import Chart, Document, Facts, Links, Note, Section, Spark, Table
from ycsb_runner.runs import model
from ycsb_runner.runs.metrics import metric_label

if TYPE_CHECKING:
    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.nightly.regress_options import RegressOptions
    from ycsb_runner.nightly.regress_service import RegressOutcome
    from ycsb_runner.runs.history import History
    from ycsb_runner.runs.series import SeriesNights

SITE_DIR = "site"  # under the results folder, the default --out
ASSETS = "assets"
PLOTLY_JS = "plotly-basic.min.js"
SITE_JS = "site.js"


@dataclass
class SuitePages:
    """What the overview and the alerts page say of one suite."""

    suite: str
    page: str  # relative to the site's root
    outcome: RegressOutcome | None
    error: str = ""
    alerts: list[dict[str, Any]] = field(default_factory=list)
    series_pages: dict[tuple[str, ...], str] = field(default_factory=dict)  # series id -> page


def slug(parts: Iterable[Any]) -> str:
    """A file name for *parts* (a suite name, a series id): its readable characters and a short hash, so
    two names never share a file and no name leads out of its folder."""
    text = "\x1f".join(str(p) for p in parts)
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", text.replace("\x1f", "-")).strip("-")[:60]
    return f"{readable}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:8]}"


def _href(path: Path, start: Path) -> str:
    """A relative link from a page in *start* to *path*."""
    return quote(os.path.relpath(path, start).replace(os.sep, "/"))


def suite_alerts(
    history: History, suite: str, result: RegressResult, ended: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The alerts of *suite* (``alerts.Alert.record()``): those the history keeps (with their triage), and
    those of the series *result* flags or has accepted that it does not keep yet (untriaged, or accepted: a
    history judged before regress recorded alerts; raised when the night that raised it ended: *ended*)."""
    from ycsb_runner.runs.alerts import Alert, alert_id
    from ycsb_runner.runs.history import SERIES_KEYS, series_id

    found = {a.alert_id: a.record() for a in history.alerts(suite)}
    newest = result.newest or ""

    def add(
        key: tuple[str, ...], direction: str, change: Any, change_run: str, raised: str, **state: Any
    ) -> None:
        aid = alert_id(suite, key, change_run)
        if aid not in found:
            pct = float(change) if change is not None and pd.notna(change) else None
            series = dict(zip(SERIES_KEYS, key, strict=True))
            at = (ended or {}).get(raised, "")
            found[aid] = Alert(aid, suite, series, direction, pct, change_run, raised, at, **state).record()

    for r in result.table.to_dict("records"):
        if r["verdict"] in ("regression", "improvement") and r.get("change_run"):
            key = series_id(r[k] for k in SERIES_KEYS)
            add(key, r["verdict"], r.get("change_pct"), str(r["change_run"]), newest)
    for a in result.accepts.to_dict("records"):
        key = series_id(a[k] for k in SERIES_KEYS)
        state = {
            "status": "accepted",
            "status_by": a["accepted_by"],
            "status_at": a["accepted_at"],
            "why": a["why"],
        }
        add(key, "regression", None, str(a["change_run"]), str(a["accepted_at_run"]), **state)
    return list(found.values())


def is_open(alert: dict[str, Any]) -> bool:
    from ycsb_runner.runs.alerts import from_record

    return from_record(alert).open


def precision(alerts: list[dict[str, Any]]) -> str:
    """The history's precision from its triage (``alerts.precision``), in words."""
    from ycsb_runner.runs.alerts import from_record
    from ycsb_runner.runs.alerts import precision as of

    p = of(from_record(a) for a in alerts)
    if p.triaged and p.median_h is None:  # triaged, but no alert knows when it was raised
        return f"of {p.triaged} triaged alerts, {p.invalid} invalid ({p.invalid_pct:.1f} %)"
    return p.line()


def _series_name(series: dict[str, Any]) -> str:
    return " ".join(str(series.get(k, "")) for k in ("phase", "mix", "threads", "operation", "metric"))


def _tags(t: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(t.items())) if isinstance(t, dict) and t else "no tags"


# --- the pages ---------------------------------------------------------------------------------------------


@dataclass
class Site:
    """The site being written: *out* its folder; each page is written as it is made (a year of 200 series
    never sits in memory as pages)."""

    out: Path

    def add(self, rel: str, doc: Document) -> None:
        from ycsb_runner.report.html import HTML
        from ycsb_runner.safe.files import atomic_write_bytes

        up = "../" * rel.count("/")
        charts = any(isinstance(b, Chart) for section in doc.sections for b in section.blocks)
        plotly = (f"{up}{ASSETS}/{PLOTLY_JS}",) if charts else ()  # 1.2 MB: only where a chart needs it
        doc.scripts = (*plotly, f"{up}{ASSETS}/{SITE_JS}")
        atomic_write_bytes(self.out / rel, HTML.page(doc).encode("utf-8"), within=self.out)


def _nav(depth: int) -> Links:
    up = "../" * depth
    return Links([("Overview", f"{up}index.html"), ("Alerts", f"{up}alerts.html")])


def _doc(title: str, sections: list[Section]) -> Document:
    return Document(title=title, heading=title, sections=sections, figure_dir="")


def build_site(
    results: Path | None = None,
    suites: list[str] | None = None,
    out: Path | None = None,
    history_url: str | None = None,
    options: RegressOptions | None = None,
) -> Path:
    """Write the site of the history (*results*' history.sqlite or *history_url*) for *suites* (default:
    every suite it has runs of) into *out* (default RESULTS/site/); returns the overview page's path.
    UserError for a suite the history has no run of, or an empty history."""
    from ycsb_runner.nightly.regress_service import run_regress, unknown_suite
    from ycsb_runner.paths import results_dir
    from ycsb_runner.runs.history import open_history

    results = results or results_dir()
    out = (out or results / SITE_DIR).resolve()
    history = open_history(results, history_url)
    runs = history.runs()
    known = sorted({str(s) for s in runs["suite"]}) if not runs.empty else []
    if not known:
        raise UserError(f"no runs in the history {history.where}: run ycsb-runner bench first")
    for s in suites or []:
        if missing := unknown_suite(s, runs):
            raise UserError(missing)
    folders = dict(zip(runs["run_id"].astype(str), runs["folder"].astype(str), strict=True))
    if out.is_dir() and any(out.iterdir()) and not (out / ASSETS / SITE_JS).is_file():
        raise UserError(
            f"{out} holds files that are not a site ycsb-runner wrote: give --out a new or empty folder"
        )
    site = Site(out)
    _write_assets(out)
    pages = []
    for suite in suites or known:
        page = SuitePages(suite, f"suites/{slug([suite])}.html", None)
        try:
            page.outcome = run_regress(suite, options, results=results, history_url=history_url)
        except UserError as e:
            page.error = str(e)
        if page.outcome is not None:
            result = page.outcome.result
            ended = dict(zip(runs["run_id"].astype(str), runs["ended_at"].astype(str), strict=True))
            page.alerts = suite_alerts(history, suite, result, ended)
            _series_pages(site, history, page, runs, folders)
        site.add(page.page, _suite_doc(page))
        pages.append(page)
    site.add("index.html", _overview_doc(pages, history.where))
    site.add("alerts.html", _alerts_doc(pages))
    return out / "index.html"


def _write_assets(out: Path) -> None:
    """The scripts every page shares, written once (Plotly only when it is not there already)."""
    from ycsb_runner.report import html
    from ycsb_runner.safe.files import atomic_write_bytes

    out.mkdir(parents=True, exist_ok=True)
    plotly = plotly_script()
    target = out / ASSETS / PLOTLY_JS
    if not target.is_file() or target.read_bytes() != plotly:
        atomic_write_bytes(target, plotly, within=out)
    atomic_write_bytes(out / ASSETS / SITE_JS, html.SITE_JS.encode("utf-8"), within=out)


def plotly_script() -> bytes:
    """Plotly's minified basic bundle (vendored: ``ycsb_runner/site/vendor/README.md``), the one script every
    chart of the site loads."""
    from importlib.resources import files

    return files("ycsb_runner.site").joinpath("vendor", PLOTLY_JS).read_bytes()


def _decision_of(page: SuitePages) -> tuple[str, str]:
    if page.outcome is None:
        return page.error, "2"
    return page.outcome.decision, str(page.outcome.exit_code)


def _overview_doc(pages: list[SuitePages], where: str) -> Document:
    rows = []
    for p in pages:
        decision, code = _decision_of(p)
        table = p.outcome.result.table if p.outcome else pd.DataFrame()
        sensitive = table[table["detectable_pct"].notna()] if not table.empty else table
        best = sensitive.loc[sensitive["detectable_pct"].idxmin()] if not sensitive.empty else None
        rows.append(
            {
                "suite": p.suite,
                "_suite": p.page,
                "newest night": (p.outcome.result.newest if p.outcome else None) or "-",
                "verdict": decision,  # (the overview's column keeps its name)
                "exit code": code,
                "open alerts": sum(is_open(a) for a in p.alerts),
                "untriaged": sum(a["status"] == "untriaged" for a in p.alerts),
                "smallest detectable change (%)": float(best["detectable_pct"]) if best is not None else None,
                "most sensitive series": _series_name(best.to_dict()) if best is not None else "-",
            }
        )
    every = [a for p in pages for a in p.alerts]
    return _doc(
        "Nightly benchmark history",
        [
            Section(None, [_nav(0), Note(f"history: {where}")]),
            Section("Suites", [Table(pd.DataFrame(rows), links={"suite": "_suite"})]),
            Section("Triage", [Note(precision(every))]),
        ],
    )


def _alerts_frame(pages: list[SuitePages], depth: int) -> pd.DataFrame:
    up = "../" * depth
    rows = []
    for p in pages:
        for a in p.alerts:
            key = tuple(str(a["series"].get(k, "")) for k in _series_keys())
            rows.append(
                {
                    "alert_id": a["alert_id"],
                    "status": a["status"],
                    "suite": a["suite"],
                    "_suite": up + p.page,
                    "series": _series_name(a["series"]),
                    "_series": up + p.series_pages[key] if key in p.series_pages else "",
                    "metric": a["series"].get("metric", ""),
                    "direction": a["direction"],
                    "change (%)": a["change_pct"],
                    "change_run": a["change_run"],
                    "raised_run": a["raised_run"],
                    "by": a.get("status_by") or "",
                    "why": a.get("why") or "",
                    "link": a.get("link") or "",
                    "recovered_run": a.get("recovered_run") or "",
                }
            )
    columns = ["alert_id", "status", "suite", "_suite", "series", "_series", "metric", "direction"]
    return pd.DataFrame(
        rows, columns=columns + ["change (%)", "change_run", "raised_run", "by", "why", "link"]
    )


def _series_keys() -> list[str]:
    from ycsb_runner.runs.history import SERIES_KEYS

    return SERIES_KEYS


def _alerts_doc(pages: list[SuitePages]) -> Document:
    frame = _alerts_frame(pages, 0).sort_values("change_run", ascending=False, kind="stable")
    every = [a for p in pages for a in p.alerts]
    return _doc(
        "Alerts",
        [
            Section(None, [_nav(0), Links([("untriaged only", "#status=untriaged"), ("every alert", "#")])]),
            Section("Precision", [Note(precision(every))]),
            Section(
                f"Every alert ({len(frame)})",
                [
                    Table(
                        frame,
                        links={"suite": "_suite", "series": "_series"},
                        filters=("status", "suite", "metric"),
                    )
                    if not frame.empty
                    else Note("no alert raised", "aside")
                ],
            ),
        ],
    )


def _suite_doc(page: SuitePages) -> Document:
    sections = [Section(None, [_nav(1)])]
    if page.outcome is None:
        sections.append(Section("Verdict", [Note(page.error, "warning"), Facts([("exit code", "2")])]))
        return _doc(f"Suite {page.suite}", sections)
    out = page.outcome
    result = out.result
    sections.append(
        Section(
            "Verdict",
            [
                Facts(
                    [
                        ("newest night", result.newest or "-"),
                        ("nights judged", str(len(result.runs_used))),
                        ("verdict", out.closing),
                        ("exit code", str(out.exit_code)),
                        ("open alerts", str(sum(is_open(a) for a in page.alerts))),
                        ("untriaged alerts", str(sum(a["status"] == "untriaged" for a in page.alerts))),
                    ]
                ),
                *[Note(line) for line in [*out.canaries, *out.changes]],
            ],
        )
    )
    frame = _alerts_frame([page], 1)
    events = {str(e["change_run"]): e for e in result.events}
    nights = sorted(set(frame["change_run"].astype(str)) | set(events), reverse=True)
    for night in nights:
        e = events.get(night)
        part = frame[frame["change_run"].astype(str) == night].drop(columns=["suite", "_suite"])
        said = (
            f"{'one change: ' if e['most'] else ''}{e['series']} of {e['of']} series "
            f"({', '.join(e['verdicts'])})"
            if e
            else f"{len(part)} alert(s)"
        )
        canaries = (
            "; ".join(e["canaries"])
            if e and e.get("canaries")
            else "the canaries did not move on these nights"
        )
        blocks: list[Any] = [Note(f"canaries: {canaries}")]
        if not part.empty:
            blocks.insert(0, Table(part.reset_index(drop=True), links={"series": "_series"}))
        elif e:
            blocks.insert(0, Note("; ".join(e["members"])))
        sections.append(Section(f"Changes that began at {night}: {said}", blocks))
    if not nights:
        sections.append(Section("Alerts", [Note("no alert raised in this suite", "aside")]))
    sparks = [
        Spark(
            _series_name(dict(zip(_series_keys(), key, strict=True))),
            "../" + rel,
            *_spark_values(result, key),
        )
        for key, rel in page.series_pages.items()
    ]
    sections.append(Section(f"Every series ({len(sparks)})", sparks))
    return _doc(f"Suite {page.suite}", sections)


def _spark_values(result: RegressResult, key: tuple[str, ...]) -> tuple[list[float | None], list[int], str]:
    from ycsb_runner.runs.history import series_id

    match = {series_id(k): k for k in result.series_values}
    judged = result.series_values[match[key]]
    values = judged.frame
    at = {str(r): i for i, r in enumerate(values["run_id"])}
    ys = values["value"].tolist()
    line: list[float | None] = [float(ys[at[r]]) if r in at else None for r in result.runs_used]
    pos = {r: i for i, r in enumerate(result.runs_used)}
    marks = [pos[str(values["run_id"].iloc[c])] for c in judged.change_points if 0 <= c < len(values)]
    verdicts = _verdicts(result)
    return line, marks, verdicts.get(key, "")


def _verdicts(result: RegressResult) -> dict[tuple[str, ...], str]:
    from ycsb_runner.runs.history import SERIES_KEYS, series_id

    if result.table.empty:
        return {}
    keys = result.table[SERIES_KEYS].itertuples(index=False, name=None)
    return {series_id(k): str(v) for k, v in zip(keys, result.table["verdict"], strict=True)}


def _series_pages(
    site: Site, history: History, page: SuitePages, runs: pd.DataFrame, folders: dict[str, str]
) -> None:
    """Add a page per series of *page*'s suite (and note where each is)."""
    from ycsb_runner.runs.history import CANARY, series_id

    assert page.outcome is not None
    result = page.outcome.result
    used = result.runs_used
    info = runs.set_index(runs["run_id"].astype(str)).loc[used]
    metrics = history.metrics(used)
    canaries = metrics[metrics["phase"] == CANARY] if not metrics.empty else metrics
    canary_traces = _canary_traces(canaries, info)
    rows = {}
    if not result.table.empty:
        from ycsb_runner.runs.history import SERIES_KEYS

        for r in result.table.to_dict("records"):
            rows[series_id(r[k] for k in SERIES_KEYS)] = r
    folder = site.out / "series" / slug([page.suite])
    every = _suite_runs(runs, page.suite)
    links = {r: _run_link(r, folders, folder) for r in every.index}  # one look at each run's folder
    others = _other_values(history, every[~every.index.isin(used)])
    identity = _identity_marks(every)
    for raw_key, values in result.series_values.items():
        key = series_id(raw_key)
        rel = f"series/{slug([page.suite])}/{slug(key)}.html"
        page.series_pages[key] = rel
        alerts = [a for a in page.alerts if tuple(str(a["series"].get(k, "")) for k in _series_keys()) == key]
        doc = _series_doc(page, key, values, rows.get(key, {}), info, links, alerts, canary_traces)
        _with_other_runs(doc, every, others.get(key, {}), links, identity)
        site.add(rel, doc)


def _suite_runs(runs: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The suite's runs oldest first (indexed by run id), each with its host identity (``ident``)."""
    from ycsb_runner.nightly.regress_service import identities

    mine = runs[runs["suite"].astype(str) == suite]
    mine = mine.assign(ident=identities(mine) if not mine.empty else "").sort_values(
        ["started_at", "run_id"], kind="stable"
    )
    return mine.set_index(mine["run_id"].astype(str))


def _other_values(history: History, others: pd.DataFrame) -> dict[tuple[str, ...], dict[str, float]]:
    """Per series: the night values (the median of a night's repetitions, as regress takes them) of the
    runs regress does not compare (another fingerprint, not completed, another host with split)."""
    from ycsb_runner.runs.history import CANARY, SERIES_KEYS, series_id

    if others.empty:
        return {}
    m = history.metrics(list(others.index))
    if m.empty:
        return {}
    m = m[m["phase"] != CANARY].assign(value=pd.to_numeric(m["value"], errors="coerce"))
    m = m[m["value"].notna() & (m["value"] >= 0)]
    nightly = m.groupby([*SERIES_KEYS, "run_id"], dropna=False)["value"].median()
    out: dict[tuple[str, ...], dict[str, float]] = {}
    for (*key, run), v in nightly.items():
        out.setdefault(series_id(key), {})[str(run)] = float(v)
    return out


def _identity_marks(every: pd.DataFrame) -> list[tuple[str, str]]:
    """(date, what changed) at each run of the suite whose parameters (fingerprint) or host identity differ
    from the run before it."""
    marks = []
    prev: tuple[str, str] | None = None
    for date, fp, ident in zip(every["started_at"], every["fingerprint"], every["ident"], strict=True):
        now = (str(fp), str(ident))
        if prev is not None and now != prev:
            said = [w for w, a, b in (("parameters", prev[0], now[0]), ("host", prev[1], now[1])) if a != b]
            marks.append((str(date), f"{' and '.join(said)} changed"))
        prev = now
    return marks


def _with_other_runs(
    doc: Document,
    every: pd.DataFrame,
    values: dict[str, float],
    links: dict[str, str],
    identity: list[tuple[str, str]],
) -> None:
    """The trend chart of *doc* (its first chart) with the suite's runs regress did not compare, grey (their
    *values*), and a dotted line where the parameters or the host changed: the whole year, not only the nights
    judged."""
    chart = next(b for section in doc.sections for b in section.blocks if isinstance(b, Chart))
    if values:
        runs = [r for r in every.index if r in values]
        dates = [str(every.at[r, "started_at"]) for r in runs]
        chart.traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "other parameters or host (not judged)",
                "x": dates,
                "y": [values[r] for r in runs],
                "customdata": [links.get(r, "") for r in runs],
                "text": [
                    [r, d, f"{values[r]:.6g}", f"{every.at[r, 'status']}; {every.at[r, 'ident']}"]
                    for r, d in zip(runs, dates, strict=True)
                ],
                "hovertemplate": "%{text}<extra></extra>",
                "marker": {"color": "#b0b0b0", "size": 5},
            }
        )
    layout = chart.layout
    for date, said in identity:
        line = {"color": "#7f7f7f", "dash": "dashdot", "width": 1}
        layout["shapes"].append(
            {"type": "line", "x0": date, "x1": date, "yref": "paper", "y0": 0, "y1": 1, "line": line}
        )
        layout.setdefault("annotations", []).append(
            {
                "x": date,
                "yref": "paper",
                "y": 1,
                "text": said,
                "showarrow": False,
                "textangle": -90,
                "xanchor": "right",
                "yanchor": "top",
                "font": {"size": 10, "color": "#7f7f7f"},
            }
        )


def _run_link(run_id: str, folders: dict[str, str], page_dir: Path) -> str:
    """A relative link from *page_dir* to the run's report (its folder when it has none yet)."""
    folder = Path(folders.get(run_id, ""))
    if not folders.get(run_id):
        return ""
    report = folder / model.REPORT_HTML
    return _href(report if report.is_file() else folder, page_dir)


def _series_doc(
    page: SuitePages,
    key: tuple[str, ...],
    judged: SeriesNights,
    row: dict[str, Any],
    info: pd.DataFrame,
    run_links: dict[str, str],
    alerts: list[dict[str, Any]],
    canary_traces: list[dict[str, Any]],
) -> Document:
    series = dict(zip(_series_keys(), key, strict=True))
    name = _series_name(series)
    label = metric_label(series["metric"])
    run_ids = [str(r) for r in info.index]
    dates = [str(d) for d in info["started_at"]]
    tags = [_tags(t) for t in info["tags"]]
    values = judged.frame
    at = {str(r): float(v) for r, v in zip(values["run_id"], values["value"], strict=True)}
    points = [i for i, r in enumerate(run_ids) if r in at]
    links = [run_links[r] for r in run_ids]
    trend = {
        "type": "scatter",
        "mode": "lines+markers",
        "name": label,
        "x": dates,
        "y": [at.get(r) for r in run_ids],
        "connectgaps": False,
        "customdata": links,
        "text": [
            [r, d, f"{at[r]:.6g} {label}" if r in at else "left out", t]
            for r, d, t in zip(run_ids, dates, tags, strict=True)
        ],
        "hovertemplate": "%{text}<extra></extra>",
        "marker": {"size": 5},
    }
    traces = [trend]
    shapes: list[dict[str, Any]] = []
    base = judged.baseline
    vr = [str(r) for r in values["run_id"]]
    if base[0] >= 0 and base[1] > base[0] and row.get("before_median") is not None:
        level = float(row["before_median"])
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"baseline (level {level:.6g})",
                "x": [dates[run_ids.index(vr[base[0]])], dates[run_ids.index(vr[base[1] - 1])]],
                "y": [level, level],
                "line": {"color": "#2ca02c", "dash": "dash", "width": 3},
                "hoverinfo": "skip",
            }
        )
    cps = [vr[c] for c in judged.change_points if 0 <= c < len(vr)]
    if row.get("change_run") and str(row["change_run"]) not in cps:  # where tonight's change began
        cps.append(str(row["change_run"]))
    if cps:
        traces.append(
            _marks("change point", cps, run_ids, dates, at, "#9467bd", "diamond", ["change point"] * len(cps))
        )
    accepted = [a for a in alerts if a["status"] == "accepted"]
    if accepted:
        runs_ = [a["change_run"] for a in accepted]
        texts = [f"accepted by {a['status_by']}: {a['why']}" for a in accepted]
        traces.append(_marks("accepted change", runs_, run_ids, dates, at, "#2ca02c", "star", texts))
    for a in alerts:
        shapes.append(_vline(dates, run_ids, a["change_run"], "#c82333" if is_open(a) else "#7f7f7f"))
    if alerts:
        traces.append(
            _marks(
                "alerts",
                [a["change_run"] for a in alerts],
                run_ids,
                dates,
                at,
                "#c82333",
                "triangle-down",
                [f"alert {a['alert_id']}: {a['direction']} {a['status']}" for a in alerts],
            )
        )
    layout = {
        "margin": {"t": 30, "r": 10, "l": 70, "b": 40},
        "xaxis": {"title": {"text": "night"}},
        "yaxis": {"title": {"text": label}},
        "shapes": [s for s in shapes if s],
        "legend": {"orientation": "h"},
        "hovermode": "closest",
    }
    left_out = [r for r in run_ids if r not in at]
    facts = [
        ("suite", page.suite),
        ("verdict", str(row.get("verdict", "-"))),
        ("change (%)", _num(row.get("change_pct"))),
        ("since", str(row.get("change_run") or "-")),
        ("smallest detectable change (%)", _num(row.get("detectable_pct"))),
        (
            "nights",
            f"{len(points)} of {len(run_ids)}"
            + (f"; left out: {', '.join(left_out[-10:])}" if left_out else ""),
        ),
        ("note", str(row.get("note") or "")),
    ]
    blocks: list[Any] = [
        _nav(2),
        Links([(f"Suite {page.suite}", f"../../{page.page}")]),
        Facts([(k, v) for k, v in facts if v]),
        Chart(f"{name}: every night (click a point: its run's report)", traces, layout),
    ]
    sections = [Section(None, blocks)]
    if alerts:
        part = _alerts_frame([page], 2)
        part = part[part["alert_id"].isin([a["alert_id"] for a in alerts])].drop(
            columns=["series", "_series"]
        )
        sections.append(Section("Alerts", [Table(part.reset_index(drop=True), links={"suite": "_suite"})]))
    if canary_traces:
        sections.append(
            Section(
                "Canaries of the same nights",
                [
                    Chart(
                        "what the database cannot change: the load generator and the host "
                        "(% of each one's median)",
                        canary_traces,
                        {"margin": {"t": 20, "r": 10, "l": 70, "b": 40}, "legend": {"orientation": "h"}},
                        height=260,
                    )
                ],
            )
        )
    return _doc(f"{page.suite}: {name}", sections)


def _num(v: Any) -> str:
    return f"{float(v):+.1f}" if v is not None and pd.notna(v) else ""


def _marks(
    name: str,
    at_runs: list[str],
    run_ids: list[str],
    dates: list[str],
    values: dict[str, float],
    color: str,
    symbol: str,
    texts: list[str],
) -> dict[str, Any]:
    keep = [(r, t) for r, t in zip(at_runs, texts, strict=True) if r in run_ids]
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [dates[run_ids.index(r)] for r, _ in keep],
        "y": [values.get(r) for r, _ in keep],
        "text": [[r, t] for r, t in keep],
        "hovertemplate": "%{text}<extra></extra>",
        "marker": {"color": color, "symbol": symbol, "size": 12},
    }


def _vline(dates: list[str], run_ids: list[str], run: str, color: str) -> dict[str, Any] | None:
    if run not in run_ids:
        return None
    x = dates[run_ids.index(run)]
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "line": {"color": color, "dash": "dot"},
    }


def _canary_traces(canaries: pd.DataFrame, info: pd.DataFrame) -> list[dict[str, Any]]:
    if canaries.empty:
        return []
    run_ids = [str(r) for r in info.index]
    dates = [str(d) for d in info["started_at"]]
    traces = []
    for (mix, metric), part in canaries.groupby(["mix", "metric"], sort=True):
        nightly = part.groupby("run_id")["value"].median()
        mid = float(nightly.median()) or 1.0
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{mix}: {metric_label(str(metric))}",
                "x": dates,
                "y": [100 * float(nightly[r]) / mid if r in nightly.index else None for r in run_ids],
                "connectgaps": False,
                "text": [[r, d] for r, d in zip(run_ids, dates, strict=True)],
                "hovertemplate": "%{text}: %{y:.0f} % of its median<extra></extra>",
            }
        )
    return traces
