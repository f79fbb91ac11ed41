"""What ycsb-runner knows about each published study, in one registry keyed by a suite's ``study``, and the
table layouts the studies use, in a second registry.

A suite says which study it reproduces (``study = "tencent-mongodb44"``); a user's own suite may say so too.
The study registry gives the study's layout, the metrics it reports and the reference table to compare
with. A layout (a :class:`Layout` subclass) gives the study's table, its comparison with the published table,
the tables the report shows before it (and plots), and the columns a narrow terminal keeps. Nothing else in
the package looks at a suite's name or a layout's name. A suite without ``study`` is ``generic`` (or
``audit-ab`` when it switches audit logging: the off/on comparison needs that layout).

A new study in an existing layout is one :class:`Study` entry (plus its suite and reference data); a new
layout is one :class:`Layout` subclass, registered with :func:`register_layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

# the metric registry lives in ycsb_runner.metrics; re-exported for the modules that read it from here
from ycsb_runner.metrics import (  # noqa: F401
    CLIENT_METRICS,
    METRICS,
    OPERATION_METRICS,
    RUN_METRICS,
    SERVER_METRICS,
    Metric,
    higher_is_better,
    metric_label,
)

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.analyse.analysis import RunAnalysis


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    layout: str  # the name of a registered Layout: its table, reference comparison and report tables
    metrics: tuple[str, ...]  # what the study reports, in its order
    reference: str | None = None  # the published table (``ycsb_runner.reference``)
    reference_keys: tuple[str, ...] = ("mix",)  # how measured rows meet published ones
    # measured metric -> the reference table's column(s) for it
    reference_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # measured metric -> (reference column, unit) of the published figure in its other unit
    reference_other_unit: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def table_layout(self) -> Layout:
        return layout_named(self.layout)


@dataclass(frozen=True)
class StudyParts:
    """What a layout makes of one run (:meth:`Layout.parts`)."""

    table: pd.DataFrame
    statistics: pd.DataFrame | None
    report_tables: dict[str, Any]


class Layout:
    """How a study's runs are tabled, compared with its published table and shown.

    Subclass it, set ``name``, implement ``table`` (and ``reference`` when studies in the layout publish a
    table), register an instance with :func:`register_layout` and name it in a :class:`Study`'s ``layout``.
    Each method is given the run's :class:`~ycsb_runner.analyse.analysis.RunAnalysis` (``a.run``, its
    ``step_metrics`` and ``off_on`` statistics, each computed once). The analysis calls :meth:`parts` once
    per run (and ``reference`` once per published table) and keeps what they return. The analysis functions
    a layout calls are imported where they are used: the analysis modules read the metric registry
    (:mod:`ycsb_runner.metrics`), never this module."""

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

    def parts(self, a: RunAnalysis, study: Study) -> StudyParts:
        """Everything the layout makes of the run: its ``table``, ``statistics`` and ``report_tables``."""
        return StudyParts(self.table(a, study), self.statistics(a, study), self.report_tables(a, study))

    def table(self, a: RunAnalysis, study: Study) -> pd.DataFrame:
        raise NotImplementedError

    def reference(self, a: RunAnalysis, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        """Measured vs published rows (``ycsb_runner.analyse.compare.REFERENCE_COLUMNS``)."""
        from ycsb_runner.errors import UserError

        raise UserError(f"study {study.name} has no published table to compare with")

    def report_tables(self, a: RunAnalysis, study: Study) -> dict[str, Any]:
        """What the report shows (and plots) before the study table: ``overhead`` (audit on vs off in %),
        ``reference`` (measured vs published) and ``reference_note`` (which published figures)."""
        return {}

    def statistics(self, a: RunAnalysis, study: Study) -> pd.DataFrame | None:
        """The long-form statistics the report lists after the run's description (None: none)."""
        return None

    def figures(
        self, a: RunAnalysis, study: Study, tables: dict[str, Any]
    ) -> list[tuple[str, str, list[bytes]]]:
        """The layout's own report figures, after those of *tables* (``report_tables``: the audit overhead
        and measured/published plots): (file stem, caption, one PNG per panel)."""
        return []


class MeansLayout(Layout):
    """Per-mix means over the repetitions of client-side throughput, read/write latency and server CPU, set
    against a table published per instance size (and thread count)."""

    name = "means"
    priority = ("mix", "throughput (ops/sec)", "RAL (µs)", "WAL (µs)", "CPU (%)", "threads", "n", "phase")

    def table(self, a: RunAnalysis, study: Study) -> pd.DataFrame:
        from ycsb_runner.analyse.table import means_table

        return means_table(a.run, a.step_metrics)

    def reference(self, a: RunAnalysis, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        from ycsb_runner.analyse.compare import means_reference

        return means_reference(a.run, study, size, storage, a.step_metrics)

    def report_tables(self, a: RunAnalysis, study: Study) -> dict[str, Any]:
        """The published figures of the run's size (the smallest published when the run names none)."""
        from ycsb_runner.errors import UserError
        from ycsb_runner.reference import load_reference

        if not study.reference:
            return {}
        note = ""
        size = None
        if not a.run.manifest.suite.scaling.get("size"):
            sizes = list(dict.fromkeys(load_reference(study.reference)["size"]))
            if len(sizes) > 1:
                size, note = sizes[0], f"the run names no instance size: published figures of {sizes[0]}"
        try:
            return {"reference": a.reference(study.reference, size=size), "reference_note": note}
        except UserError as err:
            return {"reference_note": str(err)}


class OffOnLayout(Layout):
    """Audit off vs on per mix from the server-side figures (the change, its verdict), set against a
    published change."""

    name = "off-on"
    prose = True
    sized_reference = False
    audited = True

    def table(self, a: RunAnalysis, study: Study) -> pd.DataFrame:
        from ycsb_runner.analyse.table import audit_table

        return audit_table(a.run, study, a.step_metrics, a.off_on)

    def reference(self, a: RunAnalysis, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        from ycsb_runner.analyse.compare import audit_reference

        return audit_reference(a.run, study, size, storage, a.off_on)

    def report_tables(self, a: RunAnalysis, study: Study) -> dict[str, Any]:
        from ycsb_runner.analyse.table import audit_overhead

        return {"overhead": audit_overhead(a.run, study, a.off_on)}

    def statistics(self, a: RunAnalysis, study: Study) -> pd.DataFrame | None:
        from ycsb_runner.analyse.table import metric_rows

        return metric_rows(a.off_on, study.metrics)


class GenericLayout(Layout):
    """Every figure per phase, mix, threads and audit state: for suites that reproduce no study."""

    name = "generic"
    priority = ("mix", "throughput (ops/sec)", "error rate", "read p99 (µs)", "write p99 (µs)", "threads")
    own_table = False

    def table(self, a: RunAnalysis, study: Study) -> pd.DataFrame:
        from ycsb_runner.analyse.table import generic_table

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


_TENCENT_COLUMNS = {
    "throughput_ops_s": ("throughput_ops_s",),
    "read_avg_us": ("ral_us",),
    "write_avg_us": ("wal_us",),
    "server_cpu_pct": ("cpu_high_pct",),
}
_ALIBABA_COLUMNS = {
    "server_cpu_pct": ("cpu_change_pp", "cpu_change_text", "cpu_significant"),
    "server_writes_avg_rt_us": ("writes_avg_rt_change_pct", "rt_change_text", "rt_significant"),
    "server_reads_avg_rt_us": ("reads_avg_rt_change_pct", "rt_change_text", "rt_significant"),
    "server_query_per_s": ("query_change_pct", "opcounters_change_text", "opcounters_significant"),
    "server_insert_per_s": ("insert_change_pct", "opcounters_change_text", "opcounters_significant"),
    "server_update_per_s": ("update_change_pct", "opcounters_change_text", "opcounters_significant"),
}
# The published off->on change of each server figure in its other unit: (reference column, unit). The compare
# table's measured/published cells are in % of the off value (CPU: percentage points); this is the rest.
ALIBABA_OTHER_UNIT = {
    "server_cpu_pct": ("cpu_change_pct", "% of the off value"),
    "server_writes_avg_rt_us": ("writes_avg_rt_change_us", "µs"),
    "server_reads_avg_rt_us": ("reads_avg_rt_change_us", "µs"),
    "server_query_per_s": ("query_change_ops_s", "ops/s"),
    "server_insert_per_s": ("insert_change_ops_s", "ops/s"),
    "server_update_per_s": ("update_change_ops_s", "ops/s"),
}
_AUDIT_METRICS = (
    "server_cpu_pct",
    "server_writes_avg_rt_us",
    "server_reads_avg_rt_us",
    "server_query_per_s",
    "server_insert_per_s",
    "server_update_per_s",
    "throughput_ops_s",
)
_TENCENT_METRICS = ("throughput_ops_s", "read_avg_us", "write_avg_us", "server_cpu_pct")

STUDIES: dict[str, Study] = {
    s.name: s
    for s in (
        Study(
            "alibaba-audit",
            "Alibaba Cloud: the cost of audit logging (server CPU, response time, opcounters)",
            OffOnLayout.name,
            _AUDIT_METRICS,
            reference="alibaba-audit",
            reference_columns=_ALIBABA_COLUMNS,
            reference_other_unit=ALIBABA_OTHER_UNIT,
        ),
        Study(
            "tencent-mongodb44",
            "Tencent Cloud MongoDB 4.4: throughput, latency and CPU per instance size and mix",
            MeansLayout.name,
            _TENCENT_METRICS,
            reference="tencent-mongodb44",
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study(
            "tencent-threads",
            "Tencent Cloud: throughput, latency and CPU at 100 and 200 threads",
            MeansLayout.name,
            _TENCENT_METRICS,
            reference="tencent-threads",
            reference_keys=("mix", "threads"),
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study("audit-ab", "audit off vs on per mix", OffOnLayout.name, _AUDIT_METRICS),
        Study("generic", "per-mix results", GenericLayout.name, CLIENT_METRICS + SERVER_METRICS),
    )
}


def study_named(name: str) -> Study:
    """A registered study (UserError naming the known ones otherwise)."""
    from ycsb_runner.errors import UserError

    try:
        return STUDIES[name]
    except KeyError:
        raise UserError(f"unknown study {name!r}: known studies are {', '.join(STUDIES)}") from None


def study_of(study: str | None, audit_states: list[str] | tuple[str, ...] = ()) -> Study:
    """The study a suite (or a run's manifest) declares; ``audit-ab``/``generic`` when it declares none."""
    if study:
        return study_named(study)
    return STUDIES["audit-ab" if audit_states else "generic"]


def study_for_reference(reference: str) -> Study:
    """The study whose published table is *reference*."""
    from ycsb_runner.errors import UserError

    for s in STUDIES.values():
        if s.reference == reference:
            return s
    known = ", ".join(s.reference for s in STUDIES.values() if s.reference)
    raise UserError(f"unknown reference table {reference!r}: known tables are {known}")
