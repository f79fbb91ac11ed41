"""``findmax``'s runner: load once, then one run step per probe, each at the target the search chooses.

The search itself is :mod:`ycsb_runner.findmax.search` (pure); this runner turns each probe's step into its
steady-state figures (the step's throughput and operations after ``warmup_s``, as every run step has them,
one client or several), judges it, and keeps the search in the manifest (``findmax``) after every probe.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from ycsb_runner.errors import RunFailed
from ycsb_runner.execute.runner import Runner
from ycsb_runner.findmax import search as fm
from ycsb_runner.prepare.plan import Step, estimate_run_seconds
from ycsb_runner.runs.model import ALL_CLIENTS, FindmaxRecord, Manifest, StepRecord, whole_steps


def probe_figures(operations: pd.DataFrame, column: str) -> tuple[dict[str, float], float]:
    """(operation -> *column*, error rate) of one step's operations rows: the measured operations (no
    CLEANUP, no intended or failed-outcome sections); error rate = failed / returned operations."""
    ops = whole_steps(operations)
    ops = ops[(ops.get("kind", "op") == "op") & (ops["operation"] != "CLEANUP")]
    if "intended" in ops:
        ops = ops[~ops["intended"].astype(str).str.lower().eq("true")]
    returns = pd.to_numeric(ops.get("returns"), errors="coerce") if "returns" in ops else None
    errors = pd.to_numeric(ops.get("errors"), errors="coerce") if "errors" in ops else None
    rate = 0.0
    if returns is not None and errors is not None and returns.fillna(0).sum() > 0:
        rate = float(errors.fillna(0).sum() / returns.fillna(0).sum())
    if "outcome" in ops:
        ops = ops[ops["outcome"].isna() | (ops["outcome"].astype(str).isin(["", "nan"]))]
    latencies: dict[str, float] = {}
    if column in ops:
        for _, row in ops.iterrows():
            v = pd.to_numeric(row[column], errors="coerce")
            if pd.notna(v) and (row.get("operations") or 0) > 0:
                op = str(row["operation"])
                latencies[op] = max(float(v), latencies.get(op, float("-inf")))
    return latencies, rate


def status_window_rate(status: pd.DataFrame, warmup_s: float, stop_s: float) -> float | None:
    """The ops/s of a step's steady-state window from YCSB's status lines (timeseries rows), summed over
    the clients: per client, from its first line at or after *warmup_s* to its last line at or before the
    stop (*stop_s*: maxexecutiontime). The lines fall on the status interval's ticks, the stop on one of
    them. After the stop YCSB waits for its threads, and a thread paced at one op a second first sleeps
    out its tick: that second may bring one more periodic line, and then the closing line, both with
    next to no operations, so neither counts (with them, 16 threads at -target 16 looked like 13 ops/s).
    None when no client has two lines in the window."""
    if (
        status is None
        or status.empty
        or not {"status_index", "time", "elapsed_s", "total_ops"} <= set(status)
    ):
        return None
    lines = status.drop_duplicates(["client", "status_index"]) if "client" in status else status
    total, seen = 0.0, False
    for _, one in lines.groupby("client") if "client" in lines else [(None, lines)]:
        one = one.sort_values("status_index").iloc[:-1]  # the closing line
        keep = (one["elapsed_s"] >= warmup_s) & (one["elapsed_s"] > 0) & (one["elapsed_s"] <= stop_s)
        one = one[keep].dropna(subset=["total_ops"])
        if len(one) < 2:
            continue
        times = pd.to_datetime(one["time"], utc=True)
        seconds = (times.iloc[-1] - times.iloc[0]).total_seconds()
        if seconds > 0:
            total += float(one["total_ops"].iloc[-1] - one["total_ops"].iloc[0]) / seconds
            seen = True
    return total if seen else None


def steady_latencies(logs: dict[str, list[Any]], warmup_s: float, statistic: str) -> dict[str, float]:
    """operation -> *statistic* (``p99``, ``p95`` or ``avg``, µs) of the step's HDR intervals after each
    client's warm-up, all clients' histograms added: the measured operations only (no CLEANUP, Intended-
    or -FAILED sections)."""
    from ycsb_runner.parse.merge import client_histograms, drop_warmup, merged_latencies

    lat = merged_latencies(client_histograms(drop_warmup(logs, warmup_s)), [95.0, 99.0])
    if lat.empty:
        return {}
    lat = lat[(lat["client"] == ALL_CLIENTS) & (lat["kind"] == "op") & (lat["section"] != "CLEANUP")]
    lat = lat[~lat["intended"].astype(bool) & lat["outcome"].fillna("").astype(str).isin(["", "nan"])]
    column = "mean_us" if statistic == "avg" else f"{statistic}_us"
    return {
        str(r["operation"]): float(r[column])
        for _, r in lat.iterrows()
        if r["operations"] > 0 and pd.notna(r[column])
    }


class FindmaxRunner(Runner):
    """A :class:`Runner` whose run steps are the search's probes (``plan`` holds the load step only)."""

    def __init__(self, *args: Any, findmax: fm.FindmaxOptions, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options = findmax
        self.base_suite = self.suite
        self.start = max(fm.start_rate(findmax, self.suite.estimated_throughput), int(findmax.threads or 1))
        self.probes: list[fm.Probe] = []
        self.done = False

    def _fill_manifest(self) -> Manifest:
        m = super()._fill_manifest()
        m.findmax = FindmaxRecord.from_json(fm.summary(self.options, self.probes, self.start, self.done))
        return m

    def _probe_step(self, target: int) -> Step:
        suite = self.base_suite
        mix = suite.mixes[0]
        n = len(self.probes) + 1
        return Step(
            index=len(self.records) + 1,
            kind="run",
            threads=int(self.options.threads or suite.run.threads[0]),
            mix=mix,
            repetition=n,
            reason=f"findmax probe {n}: target {target} ops/s",
            est_seconds=estimate_run_seconds(suite, float(target)),
        )

    def _reload_step(self) -> Step:
        ds = self.base_suite.dataset
        return Step(
            index=len(self.records) + 1,
            kind="load",
            threads=ds.load_threads,
            reason=f"reload: the previous probe ({self.base_suite.mixes[0].name}) inserted records",
            est_seconds=self.plan.steps[0].est_seconds,  # as the first load
        )

    def _use_suite(self, suite: Any) -> None:
        """The suite the next step runs with, for this runner and for the step executors' context."""
        self.suite = suite
        self.context.suite = suite

    def _judge(self, record: StepRecord, target: int) -> fm.Probe:
        parts = [
            df
            for df in self.frames.parts["operations"]
            if not df.empty and (df["step"] == record.label).any()
        ]
        ops = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["operation"])
        latencies, error_rate = probe_figures(ops, self.options.bound.column)
        from ycsb_runner.parse.merge import read_client_logs

        warmup = self.suite.effective_warmup_s
        status = [df for df in self.frames.parts["timeseries"] if (df["step"] == record.label).any()]
        achieved = (
            status_window_rate(pd.concat(status, ignore_index=True), warmup, self.suite.run.maxexecutiontime)
            if status
            else None
        )
        try:
            logs = read_client_logs(self.result.client_hdr_dirs(record.label), [])
            steady = steady_latencies(logs, warmup, self.options.bound.statistic)
        except (OSError, ValueError):  # a damaged log: the step's own figures (operations.csv)
            steady = {}
        latencies = steady or latencies
        probe = fm.judge_probe(
            record.label,
            target,
            achieved if achieved is not None else record.throughput_ops_s,
            latencies,
            error_rate,
            self.options.bound,
            self.options.max_error_rate,
        )
        record.figures.update(
            findmax_target_ops_s=target,
            findmax_passed=probe.passed,
            findmax_latency_us=probe.latency_us,
        )
        if probe.reasons:
            record.warnings.append("findmax probe failed: " + "; ".join(probe.reasons))
        return probe

    def _run_steps(self, private: Path) -> None:
        self.flush()
        try:
            for step in self.plan.steps:  # the load
                self._run_step(step, private)
            opts = self.options
            # YCSB paces each thread at target / threads ops/s and fails below about 0.5 op/s per thread
            floor = int(opts.threads or 1)
            while (
                target := fm.next_target(self.probes, self.start, opts.resolution_pct, opts.max_probes, floor)
            ) is not None:
                if self.probes and self.base_suite.mixes[0].inserts:
                    self._run_step(self._reload_step(), private)
                self._use_suite(
                    dataclasses.replace(
                        self.base_suite, run=dataclasses.replace(self.base_suite.run, target=target)
                    )
                )
                try:
                    record = self._run_step(self._probe_step(target), private)
                finally:
                    self._use_suite(self.base_suite)
                self.probes.append(self._judge(record, target))
                self.flush()
            self.done = True
            self.status = "completed"
        except RunFailed:
            raise
        except BaseException:
            if self.status == "running":
                self.status = "failed"
            raise
