"""What a study layout and a comparison read of a run's analysis: the run, its per-step figures and its
off/on statistics. :class:`~ycsb_runner.analyse.analysis.RunAnalysis` is the one implementation; the
layouts and ``compare`` name this protocol instead, so that they sit below the analysis that calls them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pandas as pd

from ycsb_runner.model import RunResult

if TYPE_CHECKING:
    from ycsb_runner.analyse.compare import ReferenceComparison


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
