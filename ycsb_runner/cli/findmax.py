"""``findmax``: the highest -target rate that meets a latency bound (``ycsb_runner.findmax``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ycsb_runner.cli.groups import BENCH_TARGET
from ycsb_runner.cli.options import Format, FormatOpt, emit, log, option
from ycsb_runner.cli.running import run_and_show
from ycsb_runner.findmax.search import (
    DEFAULT_MAX_PROBES,
    DEFAULT_PROBE_S,
    DEFAULT_RESOLUTION_PCT,
    found_text,
    search_frame,
)

if TYPE_CHECKING:
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.findmax.search import FindmaxOptions

_LATENCY = "LATENCY"


MixOpt = option(str | None, metavar="MIX", help="The mix to probe (default: the suite's only one).")
P99Opt = option(str | None, metavar=_LATENCY, help="Bound: p99 latency at most this, e.g. 10ms.")
P95Opt = option(str | None, metavar=_LATENCY, help="Bound: p95 latency, e.g. 5ms.")
AvgOpt = option(str | None, metavar=_LATENCY, help="Bound: average latency, e.g. 800us.")
ProbeErrorRateOpt = option(float, metavar="RATE", help="A probe with more failed operations fails.")
ThreadsOpt = option(int | None, metavar="N", help="YCSB threads (default: the suite's most).")
ProbeSecondsOpt = option(int, metavar="S", help="Seconds per probe; warmup_s (default 1/5) is cut.")
MaxProbesOpt = option(int, metavar="N", help="Stop after N probes.")
ResolutionOpt = option(float, metavar="PCT", help="Stop when pass and fail are within PCT %.")
StartOpt = option(int | None, metavar="RATE", help="First target, ops/s (default: estimated_throughput / 4).")


@BENCH_TARGET.into("target")
def findmax(
    *,
    mix: MixOpt = None,
    p99: P99Opt = None,
    p95: P95Opt = None,
    avg: AvgOpt = None,
    max_error_rate: ProbeErrorRateOpt = 0.01,
    threads: ThreadsOpt = None,
    probe_s: ProbeSecondsOpt = DEFAULT_PROBE_S,
    max_probes: MaxProbesOpt = DEFAULT_MAX_PROBES,
    resolution: ResolutionOpt = DEFAULT_RESOLUTION_PCT,
    start: StartOpt = None,
    target: dict[str, Any],
    fmt: FormatOpt = Format.table,
) -> None:
    """The highest -target rate (ops/s) whose probes meet a latency bound.

    Loads once, then runs one probe per target: doubling while probes pass, then bisecting to
    the resolution. A probe passes when it achieves 97 % of its target, the bound holds after
    its warm-up (warmup_s), and its error rate is at most the maximum. With several --client,
    each target is split across them. It writes a run folder like bench, adds the found rate
    to the history (series findmax_ops_s, for regress) and draws the curve in the report.
    """
    from ycsb_runner.bench import BenchOptions, check_bench, run_findmax
    from ycsb_runner.findmax.search import FindmaxOptions, make_bound

    search = FindmaxOptions(
        mix=mix,
        bound=make_bound(p99=p99, p95=p95, avg=avg),
        max_error_rate=max_error_rate,
        threads=threads,
        probe_s=probe_s,
        max_probes=max_probes,
        resolution_pct=resolution,
        start=start,
    )
    opts = BenchOptions(**target, findmax=search)
    check = check_bench(opts)
    search, plan = check.findmax, check.plan
    log(_search_line(plan.suite.name, plan.steps[0].est_seconds, search))
    run_s = [search.probe_s + 3.0] * search.max_probes
    run_and_show(
        [plan.est_seconds, *run_s],
        lambda progress: run_findmax(opts, search, log=log, progress=progress, checked=check),
        lambda run, _error: _print_search(run, fmt),
    )


def _search_line(suite_name: str, load_seconds: float, search: FindmaxOptions) -> str:
    """What the search will do and about how long it takes (the load step's estimate, *load_seconds*, and
    every probe)."""
    from ycsb_runner.findmax.plan import estimated_seconds

    est = estimated_seconds(load_seconds, search)
    return (
        f"findmax {suite_name} {search.mix}: {search.bound.label}, {search.threads} threads, "
        f"probes of {search.probe_s} s (at most {search.max_probes}, about {est / 60:.0f} min)"
    )


def _print_search(run: RunAnalysis | Path, fmt: Format) -> None:
    """The search's probes and what it found; *run*: the run's analysis as the bench left it, or its folder
    when it could not be read back then."""
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.runs.model import FindmaxRecord, RunResult

    try:
        result = run.run if isinstance(run, RunAnalysis) else RunResult.load(run)
        m, run_dir = result.manifest, result.root
    except Exception as err:  # noqa: BLE001 - the error that stopped the run matters more
        log(f"cannot show the results: {err}")
        return
    search = (m.findmax or FindmaxRecord()).to_json()
    text = found_text(search)
    emit(
        search_frame(search),
        fmt,
        f"findmax {m.run_id}: {text}",
        extra={"run_id": m.run_id, "run_dir": str(run_dir), "status": m.status, "findmax": search},
        priority=("step", "target_ops_s", "achieved_ops_s", "latency_ms", "verdict", "why"),
        labels={"target_ops_s": "target", "achieved_ops_s": "achieved", "latency_ms": "latency ms"},
        whole=("why",),  # one line per probe: the constant columns go to the caption first
    )


def register(app: typer.Typer) -> None:
    app.command()(findmax)
