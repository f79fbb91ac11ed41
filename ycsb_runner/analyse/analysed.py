"""What a study layout and a comparison read of a run's analysis: the run, its per-step figures and its
off/on statistics, and the reference comparison it hands back (:class:`ReferenceComparison`).
:class:`~ycsb_runner.analyse.analysis.RunAnalysis` is the one implementation; the layouts and ``compare``
name this protocol instead, so that they sit below the analysis that calls them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import pandas as pd

from ycsb_runner.runs.model import RunResult


@dataclass(frozen=True)
class ReferenceComparison:
    """A run measured against a published table: *frame* (``analyse.compare.REFERENCE_COLUMNS``, one row
    per mix, size, storage, threads and metric) and what goes with every output of it: *reference*, the
    published table's name; *run_vs_study*, what the run did next to the study (one line,
    ``analyse.compare.run_vs_study``); *audit_unverified*, the run's audit caveat when the study compares
    audit off with on ("" otherwise)."""

    frame: pd.DataFrame
    reference: str
    run_vs_study: str = ""
    audit_unverified: str = ""


class Analysed(Protocol):
    run: RunResult
    # one row per completed measured step (``analyse.table.step_metrics``)
    step_metrics: pd.DataFrame
    # audit off vs on per (mix, threads, metric) (``analyse.table.audit_ab``); empty without audit switching
    off_on: pd.DataFrame

    def reference(
        self, name: str, size: str | None = None, storage: str | None = None
    ) -> ReferenceComparison:
        """Measured vs published rows of the published table *name* (computed once per arguments)."""
        ...
