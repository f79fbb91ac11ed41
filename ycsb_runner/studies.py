"""What ycsb-runner knows about each published study, in one registry keyed by a suite's ``study``.

A suite says which study it reproduces (``study = "tencent-mongodb44"``); a user's own suite may say so too.
The registry gives the table layout, the metrics the study reports and their direction, and the reference
table to compare with. Nothing else in the package looks at a suite's name. A suite without ``study`` is
``generic`` (or ``audit-ab`` when it switches audit logging: the off/on comparison needs that layout).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Metric:
    """A per-step figure the tables, compare and regress work on."""

    name: str  # the column of ``analyse.table.step_metrics``
    label: str
    unit: str
    higher_is_better: bool | None  # None: no better or worse (e.g. a rate that follows the mix)
    side: str = "client"  # "client" (YCSB) or "server" (serverStatus)


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("throughput_ops_s", "throughput", "ops/s", True),
        Metric("read_avg_us", "read avg latency", "µs", False),
        Metric("write_avg_us", "write avg latency", "µs", False),
        Metric("read_p99_us", "read p99 latency", "µs", False),
        Metric("write_p99_us", "write p99 latency", "µs", False),
        Metric("error_rate", "error rate", "", False),
        Metric("server_cpu_pct", "server CPU", "%", False, "server"),
        Metric("server_reads_avg_rt_us", "server reads avg RT", "µs", False, "server"),
        Metric("server_writes_avg_rt_us", "server writes avg RT", "µs", False, "server"),
        Metric("server_query_per_s", "server query/s", "ops/s", True, "server"),
        Metric("server_insert_per_s", "server insert/s", "ops/s", True, "server"),
        Metric("server_update_per_s", "server update/s", "ops/s", True, "server"),
        Metric("server_ops_per_s", "server ops/s", "ops/s", True, "server"),
    )
}
# Per-operation figures of the run history (``ycsb_runner.history``), one series per step cell and operation.
OPERATION_METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("avg_us", "average latency", "µs", False),
        Metric("p50_us", "p50 latency", "µs", False),
        Metric("p95_us", "p95 latency", "µs", False),
        Metric("p99_us", "p99 latency", "µs", False),
    )
}
# Per-run figures of the run history: one value per run (``findmax``: the found rate under its bound).
RUN_METRICS: dict[str, Metric] = {
    m.name: m for m in (Metric("findmax_ops_s", "max throughput under the latency bound", "ops/s", True),)
}
CLIENT_METRICS = tuple(n for n, m in METRICS.items() if m.side == "client")
SERVER_METRICS = tuple(n for n, m in METRICS.items() if m.side == "server")


def metric_label(name: str) -> str:
    """``read_avg_us`` -> ``read avg latency (µs)``: a figure's label and unit (the name when unknown)."""
    m = METRICS.get(name) or OPERATION_METRICS.get(name) or RUN_METRICS.get(name)
    if m is None:
        return name
    return f"{m.label} ({m.unit})" if m.unit else m.label


def higher_is_better(metric: str) -> bool | None:
    """The direction of a registered metric (None for one the registry does not know)."""
    m = METRICS.get(metric) or OPERATION_METRICS.get(metric) or RUN_METRICS.get(metric)
    return m.higher_is_better if m else None


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    layout: str  # "audit" (off vs on per mix), "tencent" (per-mix means), "generic"
    metrics: tuple[str, ...]  # what the study reports, in its order
    reference: str | None = None  # the published table (``ycsb_runner.reference``)
    reference_keys: tuple[str, ...] = ("mix",)  # how measured rows meet published ones
    # measured metric -> the reference table's column(s) for it
    reference_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)


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
            "audit",
            _AUDIT_METRICS,
            reference="alibaba-audit",
            reference_columns=_ALIBABA_COLUMNS,
        ),
        Study(
            "tencent-mongodb44",
            "Tencent Cloud MongoDB 4.4: throughput, latency and CPU per instance size and mix",
            "tencent",
            _TENCENT_METRICS,
            reference="tencent-mongodb44",
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study(
            "tencent-threads",
            "Tencent Cloud: throughput, latency and CPU at 100 and 200 threads",
            "tencent",
            _TENCENT_METRICS,
            reference="tencent-threads",
            reference_keys=("mix", "threads"),
            reference_columns=_TENCENT_COLUMNS,
        ),
        Study("audit-ab", "audit off vs on per mix", "audit", _AUDIT_METRICS),
        Study("generic", "per-mix results", "generic", CLIENT_METRICS + SERVER_METRICS),
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
