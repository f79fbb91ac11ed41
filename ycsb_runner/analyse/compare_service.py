"""``ycsb-runner compare`` as a service: what the command answers, for a Python user as for the command line.

``compare_runs`` compares two run folders (significance over repetitions; side by side without), or one with
a published reference table, and returns a ``CompareOutcome``: the table, the caveats every output carries
(a forced compare of runs made with different settings or of a failed run, the parameters that differ, an
unverified audit, non-stationary steps) and, with the gate (``fail_on_regression``), its exit code. Runs
made with different settings, or that did not complete, are refused (UserError) unless *force*. The
command only resolves run ids, prints and exits with the outcome's code (as ``nightly.regress_service``
does for ``regress``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from ycsb_runner.analyse import DEFAULT_ALPHA, check_alpha, check_min_effect
from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.runs.model import RunResult

#: the gate's smallest change (in %) that fails it (``compare --min-effect``)
DEFAULT_MIN_EFFECT_PCT = 5.0


@dataclass
class CompareOutcome:
    """A comparison: *table* (one row per phase, mix, threads, audit and metric; against a reference, one
    per mix and metric; with the gate, its ``p_adjusted`` too), its *title*, the *caveats* every output
    carries (keyed as *fields* for the data formats), *warnings* (the lines of a forced compare), and the
    gate's *exit_code* and *decision* line (0 and None without the gate). *name*: what ``--save`` calls its
    file (``compare_<name>.csv`` in the baseline's folder). *audit_unverified*: the compared runs' audit
    caveat ("" when verified or not audited); *run_vs_study*: against a reference, what the run did next to
    the study (also among the caveats)."""

    table: pd.DataFrame
    title: str
    name: str
    baseline: RunAnalysis
    contender: RunAnalysis | None = None
    reference: str | None = None
    caveats: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0
    decision: str | None = None
    audit_unverified: str = ""
    run_vs_study: str = ""

    @property
    def side_by_side(self) -> bool:
        """Two single runs: no repetitions on either side; differences shown, no significance claimed."""
        return self.contender is not None and side_by_side(self.table)

    @property
    def caption(self) -> str | None:
        """The caveats as the lines under a table (None when there are none)."""
        return "\n".join(self.caveats) or None

    def save(self) -> Path:
        """The table written into the baseline's run folder (never through a link that leads out of it)."""
        from ycsb_runner.safe.files import atomic_write_csv

        path = self.baseline.run.compare_path(self.name)
        atomic_write_csv(path, self.table, within=path.parent)
        return path


def side_by_side(df: pd.DataFrame) -> bool:
    """A compare of two single runs: no repetitions on either side, so no significance to claim."""
    return not df.empty and bool((df["n_baseline"] <= 1).all() and (df["n_contender"] <= 1).all())


def compare_runs(
    baseline: RunAnalysis | RunResult | str | PathLike[str],
    contender: RunAnalysis | RunResult | str | PathLike[str] | None = None,
    *,
    reference: str | None = None,
    size: str | None = None,
    storage: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    fail_on_regression: bool = False,
    min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT,
    force: bool = False,
) -> CompareOutcome:
    """``ycsb-runner compare``: *baseline* against *contender* (run folders, loaded runs or analyses), or
    against the published table *reference* (*size*, *storage* select its rows). UserError (one line) for
    runs made with different settings or that did not complete unless *force*, for runs of different suites,
    for a bad *alpha* or *min_effect_pct*. With *fail_on_regression* (two runs), the outcome's ``exit_code``
    is the gate's: 0 no regression, 1 a metric significantly worse by at least *min_effect_pct* percent
    (Holm-corrected at *alpha*), 2 nothing could be tested or a run did not complete."""
    try:  # regress's own checks: one meaning of --alpha and --min-effect
        check_alpha(alpha)
        check_min_effect(min_effect_pct)
    except ValueError as err:
        raise UserError(str(err)) from None
    if contender is not None and reference is not None:
        raise UserError("give either a contender run or a reference table, not both")
    if contender is None and reference is None:
        raise UserError("compare the baseline with what? give a contender run or a reference table")
    from ycsb_runner.analyse.analysis import analysed

    base = analysed(baseline)
    analyses = [("baseline", base)]
    if reference is not None:
        out = _against_reference(base, reference, size, storage)
    else:
        assert contender is not None
        cont = analysed(contender)
        analyses.append(("contender", cont))
        out = _against_run(base, cont, alpha, force)
    _add_caveats(out, analyses)
    if fail_on_regression and out.contender is not None:
        from ycsb_runner.analyse.compare import regression_gate

        statuses = {a.run.root.name: a.run.manifest.status for _, a in analyses}
        code, reason, out.table = regression_gate(
            out.table, alpha=alpha, min_effect_pct=min_effect_pct, statuses=statuses
        )
        out.exit_code, out.decision = code, reason
    return out


def _against_reference(
    base: RunAnalysis, reference: str, size: str | None, storage: str | None
) -> CompareOutcome:
    cmp = base.reference(reference, size=size, storage=storage)
    title = f"{base.run.root.name} vs published {reference}"
    out = CompareOutcome(cmp.frame, title, reference, base, reference=reference)
    out.run_vs_study, out.audit_unverified = cmp.run_vs_study, cmp.audit_unverified
    out.caveats += [cmp.run_vs_study] if cmp.run_vs_study else []
    return out


def setting_lines(baseline: RunAnalysis, contender: RunAnalysis, force: bool) -> list[str]:
    """The lines a compare of two runs must carry: UserError when their common steps ran with different
    settings (their parameter fingerprints differ: not comparable) unless *force*; then, and for the
    differences that leave the figures comparable (a step only one run has), what differs."""
    from ycsb_runner.analyse.compare import setting_differences

    settings, others = setting_differences(baseline.run.manifest, contender.run.manifest)
    names = f"{baseline.run.root.name} and {contender.run.root.name}"
    if settings and not force:
        raise UserError(
            f"{names} ran with different settings ({'; '.join(settings)}): their figures are not "
            "comparable; compare runs made with the same settings, or pass --force to compare them anyway"
        )
    lines = [f"DIFFERENT SETTINGS (--force): {'; '.join(settings)}"] if settings else []
    return lines + [f"parameters differ: {line}" for line in others]


def _against_run(base: RunAnalysis, cont: RunAnalysis, alpha: float, force: bool) -> CompareOutcome:
    from ycsb_runner.analyse.compare import compare_caveat, compare_table

    failed = base.failures() + cont.failures()
    if failed and not force:
        raise UserError(
            f"cannot compare: {'; '.join(failed)}: a run that did not complete is not comparable; compare "
            "completed runs, or pass --force to compare them anyway"
        )
    differ = setting_lines(base, cont, force)
    differ = ([f"FAILED RUN (--force): {'; '.join(failed)}"] if failed else []) + differ
    df = compare_table(base, cont, alpha=alpha)
    title = f"baseline {base.run.root.name} vs contender {cont.run.root.name}"
    if side_by_side(df):
        title += ": side by side (one run each: differences shown, no significance claimed)"
    out = CompareOutcome(df, title, cont.run.root.name, base, cont)
    out.audit_unverified = compare_caveat(base.run.manifest, cont.run.manifest, df)
    if differ:
        out.title += " [FAILED RUN]" if failed else ""
        out.title += " [DIFFERENT SETTINGS]" if any(d.startswith("DIFFERENT") for d in differ) else ""
        out.caveats += differ
        out.fields["settings_differ"] = "; ".join(differ)
        out.warnings += differ
    return out


def _unsteady(runs: list[tuple[str, RunAnalysis]]) -> str | None:
    """The caption line when a compared run (who, its analysis) has non-stationary steps."""
    lines = [c for who, a in runs if (c := a.unsteady_caption(f"{who} {a.run.root.name}: ", "its report"))]
    return ("compares non-stationary steps: " + " | ".join(lines)) if lines else None


def _add_caveats(out: CompareOutcome, analyses: list[tuple[str, RunAnalysis]]) -> None:
    """The non-stationary steps and an unverified audit, in the caveats, the title and the data fields."""
    unsteady = _unsteady(analyses)
    if unsteady:
        out.caveats.append(unsteady)
        out.fields["not_stationary"] = unsteady
    caveat = out.audit_unverified
    if caveat:
        out.title += " [UNVERIFIED AUDIT]"
        out.caveats.insert(0, caveat)
        out.fields["audit_unverified"] = caveat
    if out.caveats and out.reference is not None:
        out.fields["run_vs_study"] = out.run_vs_study
