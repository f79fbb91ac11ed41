"""Compare a run with a published reference table, or two runs of the same suite (pyperf/esrally style).

The rows of a reference comparison come from ``means_reference`` or ``audit_reference``, as the study's
layout chooses (``ycsb_runner.analyse.analysis.RunAnalysis.reference``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ycsb_runner.analyse import stats
from ycsb_runner.analyse.analysed import Analysed, ReferenceComparison
from ycsb_runner.analyse.caveats import audit_caveat
from ycsb_runner.analyse.table import metric_in_mix
from ycsb_runner.errors import UserError
from ycsb_runner.reference import load_reference, select
from ycsb_runner.runs.metrics import METRICS, higher_is_better
from ycsb_runner.runs.model import NO_AUDIT, Manifest, RunResult
from ycsb_runner.studies import Study

REFERENCE_COLUMNS = [
    "mix",
    "size",
    "storage",
    "threads",
    "published_threads",
    "metric",
    "measured",
    "published",
    "unit",
    "ratio",
    "published_other",
    "published_text",
    "measured_n",
    "note",
]


COMPARE_COLUMNS = [
    "phase",
    "mix",
    "threads",
    "audit",
    "metric",
    "baseline",
    "contender",
    "change",
    "change_pct",
    "significant",
    "verdict",
    "direction",
    "p_value",
    "test",
    "n_baseline",
    "n_contender",
    "ci_low",
    "ci_high",
]


def missing_note(run: RunResult, mix: str) -> str:
    """Why a published mix has no measured figure: not in the run, or run and failed."""
    steps = run.steps
    if not steps.empty and "status" in steps:
        ran = steps[(steps["mix"] == mix) & steps["phase"].isin(["load", "run"])]
        if not ran.empty and not (ran["status"] == "completed").any():
            statuses = "/".join(dict.fromkeys(ran["status"].astype(str)))
            return f"mix ran and {statuses}: no completed step"
    return "mix not in this run"


def _ratio(measured: float, published: float) -> float:
    if measured != measured or published != published or published == 0:
        return math.nan
    return measured / published


def means_reference(
    run: RunResult, study: Study, size: str | None, storage: str | None, m: pd.DataFrame
) -> pd.DataFrame:
    """Measured per-mix means (client-side throughput, RAL, WAL; server CPU) of the run's step metrics *m*
    against the published ones."""
    ref = load_reference(study.reference or study.name)
    size = size or run.manifest.suite.scaling.get("size")
    if size is None and ref["size"].nunique() > 1:
        raise UserError(
            f"the run does not say its instance size: pass --size (the table has "
            f"{', '.join(ref['size'].unique())})"
        )
    ref = select(ref, size=size, storage=storage)
    m = m[m["audit"].isin([NO_AUDIT, "off"])]
    columns = {metric: cols[0] for metric, cols in study.reference_columns.items()}
    means = (
        m.groupby(["mix", "threads"], sort=False)
        .agg(n=("step", "size"), **{k: (k, "mean") for k in columns})
        .reset_index()
    )
    thread_keyed = "threads" in study.reference_keys
    studied = means[means["mix"].isin(set(ref["mix"]))]  # the measured mixes the table publishes
    run_threads = sorted(int(t) for t in studied["threads"].unique())
    if thread_keyed:
        check_threads(run_threads, sorted(int(t) for t in ref["threads"].unique()), study.name)
    rows = []
    for _, pub in ref.iterrows():
        mine = means[means["mix"] == pub["mix"]]
        if thread_keyed:
            mine = mine[mine["threads"] == int(pub["threads"])]  # by value, never by position
        got = mine.iloc[0] if not mine.empty else None
        missing = "" if got is not None else _missing_note(run, pub, means, run_threads, thread_keyed)
        for measured_col, pub_col in columns.items():
            published = _published_mean(pub, measured_col, pub_col)
            measured = float(got[measured_col]) if got is not None else math.nan
            note = missing
            if measured_col == "server_cpu_pct":
                note = note or "published: % of the instance; measured: % of this host's cores"
            rows.append(
                {
                    "mix": pub["mix"],
                    "size": pub["size"],
                    "storage": pub["storage"],
                    "threads": int(got["threads"]) if got is not None else math.nan,
                    "published_threads": int(pub["threads"]),
                    "metric": measured_col,
                    "measured": measured,
                    "published": published,
                    "unit": METRICS[measured_col].unit,
                    "ratio": _ratio(measured, published),
                    "published_other": "",
                    "published_text": pub["cpu_text"] if measured_col == "server_cpu_pct" else "",
                    "measured_n": int(got["n"]) if got is not None else 0,
                    "note": note,
                }
            )
    return pd.DataFrame(rows, columns=REFERENCE_COLUMNS)


def _published_mean(pub: pd.Series, measured_col: str, pub_col: str) -> float:
    """A published row's figure; a published CPU range counts as its middle."""
    published = float(pub[pub_col]) if pub[pub_col] == pub[pub_col] else math.nan
    if measured_col == "server_cpu_pct" and pub.get("cpu_low_pct") != pub.get("cpu_high_pct"):
        published = (float(pub["cpu_low_pct"]) + float(pub["cpu_high_pct"])) / 2
    return published


def _missing_note(
    run: RunResult, pub: pd.Series, means: pd.DataFrame, run_threads: list[int], thread_keyed: bool
) -> str:
    """Why a published row has no measured counterpart: another thread count, or the mix did not run."""
    ran = (means["mix"] == pub["mix"]).any()
    if thread_keyed and ran:
        return f"not run at {int(pub['threads'])} threads (this run: {', '.join(map(str, run_threads))})"
    return missing_note(run, pub["mix"])


def _with_english(text: str) -> str:
    """The published remark in English, then the original: ``up 3 percentage points [上涨 3 个百分点]``."""
    from ycsb_runner.reference.english import english

    rendered = english(text)
    return text if rendered == text else f"{rendered} [{text}]"


def check_threads(run_threads: list[int], published_threads: list[int], study: str) -> None:
    """Measured rows meet published ones at the same thread count; a run that ran none of the published
    counts is refused with them (a scaled 8 and 16 are not the study's 100 and 200)."""
    if set(run_threads) & set(published_threads):
        return
    published = ", ".join(map(str, published_threads))
    fix = ",".join(map(str, published_threads))
    raise UserError(
        f"this run ran {', '.join(map(str, run_threads))} threads; {study} publishes {published} threads "
        f"only, and figures are compared at the same thread count: run with --set threads=[{fix}]"
    )


def _run_threads(run: RunResult) -> int | float:
    threads = run.manifest.suite.threads
    return int(threads[0]) if len(threads) == 1 else math.nan


def run_vs_study(run: RunResult, reference: pd.DataFrame | None = None) -> str:
    """What this run did next to what the study did: scale, records, threads, overrides (one line)."""
    suite = run.manifest.suite
    scale = suite.scaling.get("scale", 1.0) or 1.0
    overrides = list(suite.scaling.get("overrides") or [])
    threads = ", ".join(str(t) for t in suite.threads)
    mine = f"this run: {suite.recordcount:,} records, threads {threads}" if suite.recordcount else ""
    mine = mine or f"this run: threads {threads}"
    if scale != 1:
        mine += f", scale {scale:g}"
    if overrides:
        mine += f", --set {' '.join(overrides)}"
    if reference is not None and not reference.empty:
        pub_threads = ", ".join(str(int(t)) for t in sorted(reference["threads"].unique()))
        has_records = "records" in reference
        records = sorted(int(r) for r in reference["records"].dropna().unique()) if has_records else []
        pub = f"published: threads {pub_threads}"
        if records:
            pub = f"published: {', '.join(f'{r:,}' for r in records)} records, threads {pub_threads}"
        mine += f"; {pub}"
    if (scale != 1 or overrides) and reference is not None:
        why = f"scaled {scale:g}" if scale != 1 else "overridden"
        mine += f" ({why}: not comparable to the published figures)"
    return mine


def _in_mix(metric: str, mix: str) -> bool:
    """Whether a per-operation server figure concerns an operation of the mix (CPU always does)."""
    return metric_in_mix(metric, mix)


def _published_other(pub: pd.Series, metric: str, study: Study) -> str:
    """The published change in its other unit: ``+300 µs`` (the cell is +250 %), ``+15 % of the off value``
    (the cell is +3 pp); "" where the study gives none."""
    col, unit = study.reference_other_unit.get(metric, ("", ""))
    value = pub.get(col)
    if not col or value is None or value != value:
        return ""
    return f"{float(value):+,.0f} {unit}"


def audit_reference(
    run: RunResult, study: Study, size: str | None, storage: str | None, ab: pd.DataFrame
) -> pd.DataFrame:
    """The measured off -> on change of each server figure (*ab*: the run's ``audit_ab`` of the study's
    metrics, or more) against the published change."""
    ref = select(load_reference(study.reference or study.name), size=size, storage=storage)
    rows = []
    for _, pub in ref.iterrows():
        for metric, (pub_col, text_col, sig_col) in study.reference_columns.items():
            if not _in_mix(metric, pub["mix"]):
                continue
            hit = ab[(ab["mix"] == pub["mix"]) & (ab["metric"] == metric)]
            got = hit.iloc[0] if not hit.empty else None
            pct = metric != "server_cpu_pct"
            measured = (
                (float(got["change_pct"]) if pct else float(got["change"])) if got is not None else math.nan
            )
            published = float(pub[pub_col]) if pub[pub_col] == pub[pub_col] else math.nan
            if published != published and not bool(pub[sig_col]):
                published = 0.0  # the study says "no significant change"
            note = "change in percentage points (on − off)" if not pct else "change in % of the off value"
            if got is None:
                note = missing_note(run, pub["mix"])
            elif got["n_a"] == 0 and got["n_b"] == 0:
                note = "unavailable: the server does not report this figure"
            else:
                note += f"; measured verdict: {got['verdict']}"
            rows.append(
                {
                    "mix": pub["mix"],
                    "size": pub["size"],
                    "storage": pub["storage"],
                    "threads": _run_threads(run),
                    "published_threads": int(pub["threads"]),
                    "metric": metric,
                    "measured": measured,
                    "published": published,
                    "unit": "%" if pct else "pp",
                    "ratio": _ratio(measured, published),
                    "published_other": _published_other(pub, metric, study),
                    "published_text": _with_english(pub[text_col]),
                    "measured_n": int(got["n_a"] + got["n_b"]) if got is not None else 0,
                    "note": note,
                }
            )
    return pd.DataFrame(rows, columns=REFERENCE_COLUMNS)


def finish_reference(
    out: pd.DataFrame,
    run: RunResult,
    study: Study,
    size: str | None,
    storage: str | None,
    *,
    sized: bool,
    audited: bool,
) -> ReferenceComparison:
    """A reference comparison's common part: typed threads, the table's name, what the run did next to the
    study (*sized*: published rows are per the run's instance size) and the audit caveat (*audited*)."""
    out["threads"] = out["threads"].astype("Int64")
    size = size or (run.manifest.suite.scaling.get("size") if sized else None)
    return ReferenceComparison(
        out,
        study.reference or study.name,
        run_vs_study(run, select(load_reference(study.reference or study.name), size=size, storage=storage)),
        audit_caveat(run.manifest) if audited else "",
    )


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # a 1e308 figure: inf, not a warning
def compare_table(
    baseline: Analysed,
    contender: Analysed,
    *,
    alpha: float = stats.DEFAULT_ALPHA,
) -> pd.DataFrame:
    """Baseline vs contender per (phase, mix, threads, audit, metric) over repetitions (``stats.ab_table``).

    ``change`` = contender - baseline; ``significant`` is "yes", "no" or "n too small". Runs of different
    suites raise UserError.
    """
    base, cont = baseline.run, contender.run
    if base.suite_name != cont.suite_name:
        raise UserError(
            f"cannot compare runs of different suites: {base.root.name} ran {base.suite_name!r}, "
            f"{cont.root.name} ran {cont.suite_name!r}; compare two runs of the same suite"
        )
    frames = []
    for arm, analysis in (("baseline", baseline), ("contender", contender)):
        frames.append(analysis.step_metrics.assign(arm=arm))
    both = pd.concat(frames, ignore_index=True)
    metrics = [c for c in METRICS if c in both and both[c].notna().any()]
    if both.empty or not metrics:
        raise UserError("no completed measured steps to compare in these runs")
    ab = stats.ab_table(
        both,
        ["phase", "mix", "threads", "audit"],
        "arm",
        metrics,
        "baseline",
        "contender",
        alpha=alpha,
        higher_is_better={m: higher_is_better(m) for m in metrics},
    )
    ab = ab[(ab["n_a"] > 0) | (ab["n_b"] > 0)]
    ab = ab.rename(
        columns={"a_mean": "baseline", "b_mean": "contender", "n_a": "n_baseline", "n_b": "n_contender"}
    )
    ab["significant"] = ab["verdict"].map(
        lambda v: "n too small" if v == stats.N_TOO_SMALL else ("no" if v == stats.NOT_SIGNIFICANT else "yes")
    )
    order = ["load", *base.manifest.suite.mixes]
    ab = ab.assign(_o=ab["mix"].map(lambda x: order.index(x) if x in order else len(order)))
    ab = ab.sort_values(["_o", "threads", "audit"], kind="stable").drop(columns="_o")
    return ab[COMPARE_COLUMNS].reset_index(drop=True)


def compare_caveat(baseline: Manifest, contender: Manifest, table: pd.DataFrame) -> str:
    """The audit caveats of two compared runs (their manifests), once each, when the :func:`compare_table`
    *table* has a row measured with audit logging switched ("" otherwise)."""
    if table.empty or not (table["audit"] != NO_AUDIT).any():
        return ""
    return "; ".join(dict.fromkeys(c for c in (audit_caveat(baseline), audit_caveat(contender)) if c))


def _cell_settings(manifest: Manifest) -> dict[tuple, dict[str, str]]:
    """(phase, mix, threads, audit) -> the YCSB properties its measured steps ran with (those of the
    fingerprint: no value that holds the run id, such as a path into the run folder)."""
    out: dict[tuple, dict[str, str]] = {}
    for s in manifest.steps:
        if s.keys.phase in ("load", "run"):
            cell = (s.keys.phase, s.keys.mix, s.keys.threads, s.keys.audit)
            props = {k: str(v) for k, v in s.properties.items() if manifest.run_id not in str(v)}
            out.setdefault(cell, {}).update(props)
    return out


def setting_differences(baseline: Manifest, contender: Manifest) -> tuple[list[str], list[str]]:
    """What makes two runs' parameter fingerprints differ: (the settings their common steps ran with
    differently, e.g. ``recordcount 2000 vs 600``: their figures are not comparable; what differs without
    changing a compared figure: steps only one run has, the number of repetitions). Pure."""
    if baseline.fingerprint == contender.fingerprint:
        return [], []
    base, cont = _cell_settings(baseline), _cell_settings(contender)
    common = [c for c in base if c in cont]
    settings: list[str] = []
    for key in dict.fromkeys(k for c in common for k in (*base[c], *cont[c])):
        pairs = [(base[c].get(key, "unset"), cont[c].get(key, "unset")) for c in common]
        differing = [(a, b) for a, b in pairs if a != b]
        if differing:  # the values of the steps where they differ, each side's once
            a, b = ("/".join(dict.fromkeys(side)) for side in zip(*differing, strict=True))
            settings.append(f"{key} {a} vs {b}")
    others: list[str] = []
    for who, mine, theirs in (("baseline", base, cont), ("contender", cont, base)):
        only = [f"{c[0]} {c[1]} t{c[2]}" + (f" audit {c[3]}" if c[3] != NO_AUDIT else "") for c in mine]
        only = [o for o, c in zip(only, mine, strict=True) if c not in theirs]
        if only:
            others.append(f"steps only in the {who}: {', '.join(only)}")
    if baseline.suite.repetitions != contender.suite.repetitions:
        others.append(f"repetitions {baseline.suite.repetitions} vs {contender.suite.repetitions}")
    return settings, others


def regression_gate(
    df: pd.DataFrame,
    *,
    alpha: float = stats.DEFAULT_ALPHA,
    min_effect_pct: float = 5.0,
    correction: str = "holm",
    statuses: dict[str, str] | None = None,
) -> tuple[int, str, pd.DataFrame]:
    """The ``compare --fail-on-regression`` decision over a :func:`compare_table` table.

    p-values of the tested rows are corrected together (``p_adjusted``, Holm by default); a row regresses
    when its corrected p is below *alpha*, its change is at least *min_effect_pct* percent and its direction
    is worse. Returns (exit code, one-line reason, the table with ``p_adjusted``): 0 no regression, 1 a
    regression, 2 nothing could be tested (every row ``n too small``) or a run did not complete
    (*statuses*: run folder name -> manifest status).
    """

    out = df.copy()
    tested = out["p_value"].astype(float).notna()
    out["p_adjusted"] = math.nan
    if tested.any():
        out.loc[tested, "p_adjusted"] = stats.adjust(
            out.loc[tested, "p_value"].astype(float).tolist(), correction
        )
    unfinished = {k: v for k, v in (statuses or {}).items() if v != "completed"}
    if unfinished:
        what = ", ".join(f"{k} is {v}" for k, v in unfinished.items())
        return 2, f"cannot judge: {what}; compare two completed runs", out
    if not tested.any():
        return (
            2,
            "nothing could be tested (every metric: n too small); run the suite with --set repetitions=3 or "
            "more, or use `ycsb-runner regress` over the history",
            out,
        )
    worse = out[
        tested
        & (out["p_adjusted"] < alpha)
        & (out["change_pct"].abs() >= min_effect_pct)
        & (out["direction"] == "worse")
    ]
    if not worse.empty:
        what = ", ".join(f"{r.mix} {r.metric} {r.change_pct:+.1f}%" for r in worse.itertuples())
        return 1, f"performance regressed: {what}", out
    return 0, f"no regression in {int(tested.sum())} tested metrics", out
