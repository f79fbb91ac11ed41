"""The figures ycsb-runner computes per step, their labels, units and direction (better is higher or lower).

Every analysis (tables, compare, regress, history, plots) names a figure by its ``name`` here; the studies
(:mod:`ycsb_runner.studies`) say which of them each study reports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A per-step figure the tables, compare and regress work on."""

    name: str  # the column of ``analyse.table.step_metrics``
    label: str
    unit: str
    higher_is_better: bool | None  # None: no better or worse (e.g. a rate that follows the mix)
    side: str = "client"  # "client" (YCSB) or "server" (serverStatus)


def _by_name(*metrics: Metric) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


METRICS: dict[str, Metric] = _by_name(
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
# Per-operation figures of the run history (``ycsb_runner.runs.history``), one series per step cell
# and operation.
OPERATION_METRICS: dict[str, Metric] = _by_name(
    Metric("avg_us", "average latency", "µs", False),
    Metric("p50_us", "p50 latency", "µs", False),
    Metric("p95_us", "p95 latency", "µs", False),
    Metric("p99_us", "p99 latency", "µs", False),
    Metric("p999_us", "p99.9 latency", "µs", False),
    Metric("max_us", "max latency", "µs", False),
)
# The latency percentiles among them, and the maximum: the load generator's own stalls go into these whole
# (regress' canary rule: ``nightly.canary.attribution``'s ``tail``).
PERCENTILE_METRICS = frozenset(
    name for name in OPERATION_METRICS if (name[0] == "p" and name[1].isdigit()) or name == "max_us"
)
# Per-run figures of the run history: one value per run (``findmax``: the found rate under its bound).
RUN_METRICS: dict[str, Metric] = _by_name(
    Metric("findmax_ops_s", "max throughput under the latency bound", "ops/s", True)
)
# What the database cannot change, measured beside each nightly bench (``ycsb_runner.execute.canary``): the
# history's canary series (phase ``canary``), which regress reads to tell a slower machine from a slower
# database.
CANARY_METRICS: dict[str, Metric] = _by_name(
    Metric("canary_ops_s", "load generator capacity (YCSB BasicDB)", "ops/s", True),
    Metric("canary_rtt_us", "round trip to the server (ping)", "µs", False),
    Metric("canary_steal_pct", "host CPU steal", "%", False),
    Metric("canary_others_cpu_pct", "host CPU used by other processes", "%", False),
)
CLIENT_METRICS = tuple(n for n, m in METRICS.items() if m.side == "client")
SERVER_METRICS = tuple(n for n, m in METRICS.items() if m.side == "server")


# regress's distribution-level series per step cell and operation (``ycsb_runner.nightly.distribution``):
# not a figure of the history, a test over its latency quantiles; its values are the quantile that moved most
DISTRIBUTION_METRICS: dict[str, Metric] = _by_name(
    Metric("latency_distribution", "latency distribution (the quantile that moved most)", "µs", False)
)


def registered_metric(name: str) -> Metric | None:
    """The registered metric *name* (a step, operation or run figure), or None."""
    return (
        METRICS.get(name)
        or OPERATION_METRICS.get(name)
        or RUN_METRICS.get(name)
        or CANARY_METRICS.get(name)
        or DISTRIBUTION_METRICS.get(name)
    )


def metric_label(name: str) -> str:
    """``read_avg_us`` -> ``read avg latency (µs)``: a figure's label and unit (the name when unknown)."""
    m = registered_metric(name)
    if m is None:
        return name
    return f"{m.label} ({m.unit})" if m.unit else m.label


def higher_is_better(metric: str) -> bool | None:
    """The direction of a registered metric (None for one the registry does not know)."""
    m = registered_metric(metric)
    return m.higher_is_better if m else None
