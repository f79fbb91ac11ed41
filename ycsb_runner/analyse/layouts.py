"""The table layouts of the studies, in one registry: how a study's runs are tabled, compared with its
published table and shown.

A layout (a :class:`Layout` subclass) gives a study's table, its comparison with the published table, the
tables the report shows before it (and plots), and the columns a narrow terminal keeps. The study registry
(:mod:`ycsb_runner.studies`) names the layout of each study; :func:`layout_of` finds it. A new layout is one
:class:`Layout` subclass, registered with :func:`register_layout` under a name a study gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from ycsb_runner.analyse.analysed import Analysed
from ycsb_runner.analyse.compare import audit_reference, means_reference
from ycsb_runner.analyse.table import (
    StudyTable,
    audit_overhead,
    audit_table,
    generic_table,
    means_table,
    metric_rows,
    study_changes,
)
from ycsb_runner.errors import UserError
from ycsb_runner.reference import load_reference
from ycsb_runner.studies import GENERIC_LAYOUT, MEANS_LAYOUT, OFF_ON_LAYOUT, Study


@dataclass(frozen=True)
class ReportTables:
    """What the report shows (and plots) before the study table, each None when the layout makes none:
    *overhead*, audit on vs off per mix and metric (``analyse.table.audit_overhead``); *reference*, measured
    vs published (the frame of ``RunAnalysis.reference``); *reference_note*, which published figures the
    run is set against, or why none ("" when nothing to say)."""

    overhead: pd.DataFrame | None = None
    reference: pd.DataFrame | None = None
    reference_note: str = ""


@dataclass(frozen=True)
class StudyParts:
    """What a layout makes of one run (:meth:`Layout.parts`)."""

    table: StudyTable
    statistics: pd.DataFrame | None
    report_tables: ReportTables


class Layout:
    """How a study's runs are tabled, compared with its published table and shown.

    Subclass it, set ``name``, implement ``table`` (and ``reference`` when studies in the layout publish a
    table), register an instance with :func:`register_layout` and name it in a :class:`Study`'s ``layout``.
    Each method is given the run's analysis (:class:`~ycsb_runner.analyse.analysed.Analysed`: ``a.run``,
    its ``step_metrics`` and ``off_on`` statistics, each computed once). The analysis calls :meth:`parts` once
    per run (and ``reference`` once per published table) and keeps what they return."""

    name: ClassVar[str] = ""
    # the columns a narrow terminal keeps first (the rest are hidden and named under the table)
    priority: ClassVar[tuple[str, ...]] = ()
    # the table's cells are prose: a row that does not fit the terminal is shown as one block
    prose: ClassVar[bool] = False
    # the study's own table: saved as study_table.csv when a bench ends and shown under its results
    own_table: ClassVar[bool] = True
    # published rows are picked by the instance size the run was made for (``--set size=...``)
    sized_reference: ClassVar[bool] = True
    # the tables compare audit off with audit on: the run's audit caveat goes with them
    audited: ClassVar[bool] = False

    def parts(self, a: Analysed, study: Study) -> StudyParts:
        """Everything the layout makes of the run: its ``table``, ``statistics`` and ``report_tables``."""
        return StudyParts(self.table(a, study), self.statistics(a, study), self.report_tables(a, study))

    def table(self, a: Analysed, study: Study) -> StudyTable:
        """The study's per-mix table of the run: its frame, title, audit caveat and notes."""
        raise NotImplementedError

    def reference(self, a: Analysed, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        """Measured vs published rows (``ycsb_runner.analyse.compare.REFERENCE_COLUMNS``)."""
        raise UserError(f"study {study.name} has no published table to compare with")

    def report_tables(self, a: Analysed, study: Study) -> ReportTables:
        """What the report shows (and plots) before the study table: ``overhead`` (audit on vs off in %),
        ``reference`` (measured vs published) and ``reference_note`` (which published figures)."""
        return ReportTables()

    def statistics(self, a: Analysed, study: Study) -> pd.DataFrame | None:
        """The long-form statistics the report lists after the run's description (None: none)."""
        return None

    def compact(self, table: StudyTable) -> tuple[pd.DataFrame, list[str]]:
        """The table's frame for a terminal (``table``: without ``--wide``) and the lines to say under it
        (the table's ``notes`` that apply)."""
        return table.frame, list(table.notes)

    def figures(self, a: Analysed, study: Study, tables: ReportTables) -> list[tuple[str, str, list[bytes]]]:
        """The layout's own report figures, after those of *tables* (``report_tables``: the audit overhead
        and measured/published plots): (file stem, caption, one PNG per panel)."""
        return []


class MeansLayout(Layout):
    """Per-mix means over the repetitions of client-side throughput, read/write latency and server CPU, set
    against a table published per instance size (and thread count)."""

    name = MEANS_LAYOUT
    priority = ("mix", "throughput (ops/sec)", "RAL (µs)", "WAL (µs)", "CPU (%)", "threads", "n", "phase")

    def table(self, a: Analysed, study: Study) -> StudyTable:
        return means_table(a.run, a.step_metrics)

    def reference(self, a: Analysed, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        return means_reference(a.run, study, size, storage, a.step_metrics)

    def report_tables(self, a: Analysed, study: Study) -> ReportTables:
        """The published figures of the run's size (the smallest published when the run names none)."""
        if not study.reference:
            return ReportTables()
        note = ""
        size = None
        if not a.run.manifest.suite.scaling.get("size"):
            sizes = list(dict.fromkeys(load_reference(study.reference)["size"]))
            if len(sizes) > 1:
                size, note = sizes[0], f"the run names no instance size: published figures of {sizes[0]}"
        try:
            return ReportTables(reference=a.reference(study.reference, size=size).frame, reference_note=note)
        except UserError as err:
            return ReportTables(reference_note=str(err))


class OffOnLayout(Layout):
    """Audit off vs on per mix from the server-side figures (the change, its verdict), set against a
    published change."""

    name = OFF_ON_LAYOUT
    # the change of each figure (``compact``: the rest with ``--wide``, in CSV): throughput and CPU first
    priority = ("mix", "throughput (%)", "CpuUsage (pp)", "writes_avg_rt (%)", "reads_avg_rt (%)")
    sized_reference = False
    audited = True

    def table(self, a: Analysed, study: Study) -> StudyTable:
        return audit_table(a.run, study, a.step_metrics, a.off_on)

    def compact(self, table: StudyTable) -> tuple[pd.DataFrame, list[str]]:
        return study_changes(table)

    def reference(self, a: Analysed, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        return audit_reference(a.run, study, size, storage, a.off_on)

    def report_tables(self, a: Analysed, study: Study) -> ReportTables:
        return ReportTables(overhead=audit_overhead(a.run, study, a.off_on))

    def statistics(self, a: Analysed, study: Study) -> pd.DataFrame | None:
        return metric_rows(a.off_on, study.metrics)


class GenericLayout(Layout):
    """Every figure per phase, mix, threads and audit state: for suites that reproduce no study."""

    name = GENERIC_LAYOUT
    priority = ("mix", "throughput (ops/sec)", "error rate", "read p99 (µs)", "write p99 (µs)", "threads")
    own_table = False

    def table(self, a: Analysed, study: Study) -> StudyTable:
        return generic_table(a.run, a.step_metrics)


LAYOUTS: dict[str, Layout] = {}


def register_layout(layout: Layout) -> Layout:
    """Add *layout* to the registry under its ``name`` (a study names it in its ``layout``)."""
    if not layout.name:
        raise ValueError(f"{type(layout).__name__} has no name")
    LAYOUTS[layout.name] = layout
    return layout


def layout_named(name: str) -> Layout:
    """A registered layout (KeyError naming the known ones otherwise: a study names an unknown layout)."""
    try:
        return LAYOUTS[name]
    except KeyError:
        raise KeyError(f"unknown layout {name!r}: known layouts are {', '.join(LAYOUTS)}") from None


for _layout in (MeansLayout(), OffOnLayout(), GenericLayout()):
    register_layout(_layout)


def layout_of(study: Study) -> Layout:
    """The layout *study* names."""
    return layout_named(study.layout)
