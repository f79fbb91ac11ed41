"""What ycsb-runner knows about each published study, in one registry keyed by a suite's ``study``: its
title, the name of the table layout it uses, the metrics it reports and the published table to compare with.

A suite says which study it reproduces (``study = "tencent-mongodb44"``); a user's own suite may say so too.
A suite without ``study`` is ``generic`` (or ``audit-ab`` when it switches audit logging: the off/on
comparison needs that layout). This module is data: the layouts themselves (how a study's runs are tabled,
compared with the published table and shown) are classes in :mod:`ycsb_runner.analyse.layouts`, registered
under the names below. Nothing else in the package looks at a suite's name or a layout's name.

A new study in an existing layout is one :class:`Study` entry (plus its suite and reference data); a new
layout is one ``Layout`` subclass in :mod:`ycsb_runner.analyse.layouts`, named here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ycsb_runner.errors import UserError
from ycsb_runner.runs.metrics import CLIENT_METRICS, SERVER_METRICS

# the names of the table layouts (``ycsb_runner.analyse.layouts`` registers a class under each)
MEANS_LAYOUT = "means"  # per-mix means set against a table published per instance size
OFF_ON_LAYOUT = "off-on"  # audit off vs on per mix, set against a published change
GENERIC_LAYOUT = "generic"  # every figure per phase, mix, threads and audit state


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    layout: str  # the name of a registered layout (``analyse.layouts``): its table, comparison and report
    metrics: tuple[str, ...]  # what the study reports, in its order
    reference: str | None = None  # the published table (``ycsb_runner.reference``)
    reference_keys: tuple[str, ...] = ("mix",)  # how measured rows meet published ones
    # measured metric -> the reference table's column(s) for it
    reference_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # measured metric -> (reference column, unit) of the published figure in its other unit
    reference_other_unit: dict[str, tuple[str, str]] = field(default_factory=dict)


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
            OFF_ON_LAYOUT,
            _AUDIT_METRICS,
            reference="alibaba-audit",
            reference_columns=_ALIBABA_COLUMNS,
            reference_other_unit=ALIBABA_OTHER_UNIT,
        ),
        Study(
            "tencent-mongodb44",
            "Tencent Cloud MongoDB 4.4: throughput, latency and CPU per instance size and mix",
            MEANS_LAYOUT,
            _TENCENT_METRICS,
            reference="tencent-mongodb44",
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study(
            "tencent-threads",
            "Tencent Cloud: throughput, latency and CPU at 100 and 200 threads",
            MEANS_LAYOUT,
            _TENCENT_METRICS,
            reference="tencent-threads",
            reference_keys=("mix", "threads"),
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study("audit-ab", "audit off vs on per mix", OFF_ON_LAYOUT, _AUDIT_METRICS),
        Study("generic", "per-mix results", GENERIC_LAYOUT, CLIENT_METRICS + SERVER_METRICS),
    )
}


def study_named(name: str) -> Study:
    """A registered study (UserError naming the known ones otherwise)."""
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
    for s in STUDIES.values():
        if s.reference == reference:
            return s
    known = ", ".join(s.reference for s in STUDIES.values() if s.reference)
    raise UserError(f"unknown reference table {reference!r}: known tables are {known}")
