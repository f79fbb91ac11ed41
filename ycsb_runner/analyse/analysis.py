"""One run's analysis, computed once: the per-step figures, the study's table, the off/on statistics and the
measured-vs-published rows of a run folder.

``table``, ``compare``, ``report``, ``bench`` and the history read a :class:`RunAnalysis` built from the
loaded :class:`~ycsb_runner.runs.model.RunResult`; none of them opens the folder again or derives a part anew.
Every part is computed once, when the analysis is built (the frames are shared: copy one before changing
it); only a comparison with a published table waits until it is asked for. What a part is for a given
study comes from its layout (:mod:`ycsb_runner.analyse.layouts`, one call per run: ``Layout.parts``); the
functions that compute them live in :mod:`ycsb_runner.analyse.table` and :mod:`ycsb_runner.analyse.compare`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ycsb_runner.analyse.analysed import ReferenceComparison
from ycsb_runner.analyse.compare import finish_reference
from ycsb_runner.analyse.layouts import Layout, ReportTables, layout_of
from ycsb_runner.analyse.table import StudyTable, audit_ab, step_metrics, unsteady_caption, unsteady_steps
from ycsb_runner.runs.metrics import METRICS
from ycsb_runner.runs.model import RunResult
from ycsb_runner.studies import Study, study_for_reference, study_of


class RunAnalysis:
    """The analysis of one loaded run folder (``RunAnalysis.of(path)`` loads it), computed when it is built:
    its parts are plain attributes, read as often as needed."""

    # a figure near the float limit (1e308, a hand-edited or damaged CSV) overflows to inf in a mean or a
    # ratio: shown as inf, without numpy's RuntimeWarning lines
    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def __init__(self, run: RunResult) -> None:
        suite = run.manifest.suite
        self.run = run
        self.study: Study = study_of(suite.study, suite.audit_states)
        self.layout: Layout = layout_of(self.study)
        self._references: dict[tuple[str, str | None, str | None], ReferenceComparison] = {}
        # one row per completed measured step (``analyse.table.step_metrics``): every table's input
        self.step_metrics: pd.DataFrame = step_metrics(run)
        # audit off vs on per (mix, threads, metric) of every registered metric (``analyse.table.audit_ab``);
        # empty when the run did not switch audit logging
        self.off_on: pd.DataFrame = audit_ab(self.step_metrics, tuple(METRICS))
        # (step, what its warnings say) for each non-stationary run step
        self.unsteady_steps: list[tuple[str, str]] = unsteady_steps(run.steps)
        parts = self.layout.parts(self, self.study)  # the layout's one call: every part it makes of the run
        # the per-mix table in the study's layout (its ``layout`` names the layout; its ``unsteady`` counts
        # the non-stationary steps, whose rows are flagged)
        self.table: StudyTable = self._flag_unsteady(parts.table)
        # the long-form statistics the report lists after the run's description
        self.statistics: pd.DataFrame | None = parts.statistics
        # what the report shows (and plots) before the study table (``Layout.report_tables``)
        self.report_tables: ReportTables = parts.report_tables

    @classmethod
    def of(cls, run: Path | str | RunResult | RunAnalysis) -> RunAnalysis:
        """The analysis of *run*: a folder is loaded (UserError when it is not a run folder), a loaded run
        analysed, an analysis returned as it is."""
        if isinstance(run, RunAnalysis):
            return run
        return cls(run if isinstance(run, RunResult) else RunResult.load(run))

    def failures(self) -> list[str]:
        """What of the run did not complete, one phrase each (empty for a completed run): its status when it
        is not ``completed``, and its steps whose status is not ``completed``."""
        out = []
        status = self.run.manifest.status
        if status != "completed":
            out.append(f"{self.run.root.name} is {status}")
        steps = self.run.steps
        if not steps.empty and "status" in steps:
            # a missing cell (a damaged steps.csv) reads as "-" (a text column keeps NaN through astype(str))
            done, step = (steps[c].fillna("-").astype(str) for c in ("status", "step"))
            bad = steps[done != "completed"]
            if not bad.empty:
                named = ", ".join(step[bad.index].head(3)) + (", ..." if len(bad) > 3 else "")
                statuses = "/".join(dict.fromkeys(done[bad.index]))
                out.append(f"{self.run.root.name}: {len(bad)} of {len(steps)} steps {statuses} ({named})")
        return out

    def unsteady_caption(self, who: str = "", where: str = "the table") -> str | None:
        """One line counting the run's non-stationary steps, pointing at *where* they are named (None when
        there are none)."""
        return unsteady_caption(self.run.steps, self.unsteady_steps, who, where)

    def _flag_unsteady(self, table: StudyTable) -> StudyTable:
        """*table* named by its layout, and its non-stationary steps counted and flagged in its rows."""
        unsteady = self.unsteady_caption(where="the not stationary column; the report's steps table") or ""
        out = table.frame
        if unsteady and not out.empty and "mix" in out:  # flag the rows too
            steps = self.run.steps.set_index("step")
            bad = set(steps.loc[[s for s, _ in self.unsteady_steps], "mix"])
            out.insert(1, "not stationary", out["mix"].map(lambda m: "yes" if m in bad else ""))
        return replace(table, layout=self.layout.name, unsteady=unsteady)

    def reference(
        self, name: str, size: str | None = None, storage: str | None = None
    ) -> ReferenceComparison:
        """Measured vs published (its ``frame``: one row per (mix, size, storage, threads, metric), ratio =
        measured / published, in the layout of the study that published *name*), with what the run did next
        to the study and the audit caveat beside it.

        Per-mix means (Tencent's tables): throughput, RAL, WAL (client-side means) and CPU. Off vs on
        (Alibaba's): the off->on change of each server figure (percent; CPU in percentage points) against the
        published change (0 where it says "no significant change"). ``size`` defaults to the size the run was
        made for (``--set size=...``) where the published rows are per size.
        """
        key = (name, size, storage)
        if key not in self._references:
            study = study_for_reference(name)
            layout = layout_of(study)
            out = layout.reference(self, study, size, storage)
            self._references[key] = finish_reference(
                out, self.run, study, size, storage, sized=layout.sized_reference, audited=layout.audited
            )
        return self._references[key]


def analysed(run: Path | str | RunResult | RunAnalysis) -> RunAnalysis:
    """``RunAnalysis.of`` a run folder that has its steps (one line when ``steps.csv`` is missing): what
    ``table``, ``compare`` and ``report`` analyse."""
    if isinstance(run, RunAnalysis):
        return run
    result = run if isinstance(run, RunResult) else RunResult.load(run)
    result.check_steps()
    return RunAnalysis.of(result)
