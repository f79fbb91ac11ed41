"""Expand a suite into the ordered steps that will run, with a duration estimate.

Order of cells: for each mix, for each thread count. Within a cell the audit states and repetitions run
``blocked`` (all repetitions of ``off``, then of ``on``) or ``interleaved`` (off, on, then on, off, ...: an
A/B/B/A order that spreads drift over both arms). ``warmup_runs`` unmeasured runs start each cell.

Reload rule (``dataset.reload = "auto"``): a run whose mix inserts (insert > 0) adds keys after
``recordcount``, so the next run would see a different dataset and, if it inserts too, collide with the
keys already inserted. The dataset is therefore reloaded before any run that follows a run with inserts.
``always`` reloads before every measured run; ``never`` loads once.

Duration estimate: each load and run step at the throughput earlier runs of the suite measured for the same
step (phase, mix, threads, record count, target) against the same target (``MeasuredRates``, gathered by
``ycsb_runner.prepare.estimate``), else at an assumed rate that says so: the suite's ``estimated_throughput``
on a server of yours, at most ``EMBEDDED_OPS_S`` on the embedded server. The step's ``target`` bounds the
rate; ``maxexecutiontime`` caps a run step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ycsb_runner.prepare.suite import Mix, Suite

JVM_OVERHEAD_S = 3.0
# Assumed throughput on the embedded server until a run there measured the step: below what `quick` measured
# on it at 4 threads (4 Dec 2026, 2 shared cores: load 800-1,400 ops/s, workload A 1,200-1,700, C
# 3,700-4,800), so that a study's own estimated_throughput (100,000 ops/s for alibaba-audit) does not promise
# minutes for hours. Scans are the exception: FerretDB sorts the whole collection for each (workload E:
# 2 ops/s at 10,000 records).
EMBEDDED_OPS_S = 1000.0

# (phase "load" | "run", mix name ("load" for a load), threads, recordcount, target ops/s (0: unthrottled))
RateKey = tuple[str, str, int, int, int]


def rate_key(phase: str, mix: str, threads: int, recordcount: int, target: int | None) -> RateKey:
    """The key under which a measured step's throughput estimates a planned one."""
    return (phase, mix, int(threads), int(recordcount), int(target or 0))


@dataclass(frozen=True)
class MeasuredRates:
    """Throughput (ops/s, median over runs) per step key from earlier runs against the same target."""

    rates: Mapping[RateKey, float] = field(default_factory=dict)
    runs: int = 0  # how many earlier runs they come from
    embedded: bool = True  # the target is the embedded server (the assumed rate when a step is unknown)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe_duration(seconds: float) -> str:
    """``45 s``, ``3.2 min``, ``2.6 h``, ``12 days``; ``unbounded`` for a step with neither operationcount
    nor maxexecutiontime."""
    if seconds == float("inf"):
        return "unbounded"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.1f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"


@dataclass(frozen=True)
class Step:
    index: int
    kind: str  # "load" | "audit" | "warmup" | "run"
    threads: int
    mix: Mix | None = None
    audit: str | None = None  # "off" | "on" | None (not controlled)
    repetition: int | None = None
    reason: str = ""
    est_seconds: float = 0.0

    @property
    def label(self) -> str:
        parts = [f"{self.index:02d}", self.kind]
        if self.mix is not None:
            parts.append(self.mix.name)
        if self.kind in ("run", "warmup", "load"):
            parts.append(f"t{self.threads}")
        if self.audit is not None:
            parts.append(f"audit-{self.audit}")
        if self.repetition is not None:
            parts.append(f"r{self.repetition}")
        return "-".join(parts)

    @property
    def measured(self) -> bool:
        return self.kind in ("load", "run")


@dataclass(frozen=True)
class Plan:
    suite: Suite
    steps: tuple[Step, ...]
    estimate_source: str = ""  # where the step rates come from: "from 2 earlier runs", "unknown rate: ..."

    @property
    def est_seconds(self) -> float:
        return sum(s.est_seconds for s in self.steps)

    @property
    def estimate(self) -> str:
        """``3.2 min (from 2 earlier runs)``: the duration and where its rates come from."""
        return f"{describe_duration(self.est_seconds)} ({self.estimate_source})"

    def runs(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "run"]


def assumed_rate(suite: Suite, embedded: bool) -> float:
    """The throughput assumed for a step no earlier run measured (before any target bounds it)."""
    return min(suite.estimated_throughput, EMBEDDED_OPS_S) if embedded else suite.estimated_throughput


def _assumed_text(suite: Suite, embedded: bool) -> str:
    rate = assumed_rate(suite, embedded)
    if embedded:
        text = f"unknown rate: assuming {rate:,.0f} ops/s on the embedded server"
    else:
        text = f"unknown rate: assuming the suite's estimated_throughput, {rate:,.0f} ops/s"
    bounds = [t for t in (suite.run.target, suite.dataset.load_target) if t and t < rate]
    if bounds:
        text += f", at most the target {max(bounds):,} ops/s"
    return text


def estimate_run_seconds(suite: Suite, rate: float) -> float:
    """A run step at *rate* ops/s (bounded by the suite's target), capped at maxexecutiontime."""
    if suite.run.target:
        rate = min(rate, suite.run.target)
    seconds = float("inf")
    if suite.run.operationcount is not None:
        seconds = suite.run.operationcount / rate
    if suite.run.maxexecutiontime is not None:
        seconds = min(seconds, suite.run.maxexecutiontime)
    return seconds + JVM_OVERHEAD_S


def estimate_load_seconds(suite: Suite, rate: float) -> float:
    """A load of recordcount records at *rate* ops/s (bounded by load_target)."""
    if suite.dataset.load_target:
        rate = min(rate, suite.dataset.load_target)
    return suite.dataset.recordcount / rate + JVM_OVERHEAD_S


def _arm_order(states: tuple[str, ...], repetitions: int, order: str) -> list[tuple[str | None, int]]:
    if not states:
        return [(None, r) for r in range(1, repetitions + 1)]
    if order == "blocked":
        return [(s, r) for s in states for r in range(1, repetitions + 1)]
    out: list[tuple[str | None, int]] = []
    for r in range(1, repetitions + 1):
        seq = states if r % 2 == 1 else tuple(reversed(states))
        out.extend((s, r) for s in seq)
    return out


def build_plan(suite: Suite, measured: MeasuredRates | None = None) -> Plan:
    """The suite's steps in order, each with its estimated duration (*measured*: earlier runs' rates; None:
    none known, against the embedded server)."""
    measured = measured or MeasuredRates()
    b = _PlanBuilder(suite, measured, assumed_rate(suite, measured.embedded))
    b.add("load", suite.dataset.load_threads, reason="initial load", est_seconds=b.load_s)
    for mix in suite.mixes:
        for threads in suite.run.threads:
            b.add_mix_threads(mix, threads)
    return Plan(suite=suite, steps=tuple(b.steps), estimate_source=_source_text(suite, measured, b.used))


class _PlanBuilder:
    """The steps of a plan as they are added, with what the next step depends on: the mix whose inserts
    changed the dataset since the last load, and the audit state last switched to."""

    def __init__(self, suite: Suite, measured: MeasuredRates, assumed: float) -> None:
        self.suite, self.measured, self.assumed = suite, measured, assumed
        self.used: set[bool] = set()  # True: a measured rate was used, False: the assumed one
        self.steps: list[Step] = []
        self.dirty_by: str | None = None  # the mix whose inserts changed the dataset since the last load
        self.current_audit: tuple | None = None  # (state, audited ops) last switched to
        self.load_s = estimate_load_seconds(suite, self.rate("load", "load", suite.dataset.load_threads))

    def rate(self, phase: str, mix: str, threads: int) -> float:
        suite = self.suite
        target = suite.dataset.load_target if phase == "load" else suite.run.target
        got = self.measured.rates.get(rate_key(phase, mix, threads, suite.dataset.recordcount, target))
        self.used.add(got is not None)
        return got if got is not None else self.assumed

    def run_s(self, mix: Mix, threads: int) -> float:
        return estimate_run_seconds(self.suite, self.rate("run", mix.name, threads))

    def add(self, kind: str, threads: int, **kw) -> None:
        self.steps.append(Step(index=len(self.steps) + 1, kind=kind, threads=threads, **kw))

    def add_mix_threads(self, mix: Mix, threads: int) -> None:
        """The warm-ups and measured runs of one (mix, threads), with the reloads and switches before each."""
        suite = self.suite
        arms = _arm_order(suite.audit.states, suite.repetitions, suite.order)
        for w in range(suite.warmup_runs):
            first_audit = arms[0][0]
            self.before_run(mix, first_audit)
            self.add(
                "warmup",
                threads,
                mix=mix,
                audit=first_audit,
                repetition=None,
                reason=f"warm-up {w + 1}/{suite.warmup_runs} (discarded)",
                est_seconds=self.run_s(mix, threads),
            )
            if mix.inserts:
                self.dirty_by = mix.name
        for audit, rep in arms:
            self.before_run(mix, audit)
            self.add(
                "run", threads, mix=mix, audit=audit, repetition=rep, est_seconds=self.run_s(mix, threads)
            )
            if mix.inserts:
                self.dirty_by = mix.name

    def before_run(self, mix: Mix, audit: str | None) -> None:
        """A reload when the dataset must be fresh, and an audit switch when the state changes."""
        suite = self.suite
        reload = suite.dataset.reload
        if reload == "always" and self.steps[-1].kind != "load":
            self.add(
                "load",
                suite.dataset.load_threads,
                reason="reload: dataset.reload = always",
                est_seconds=self.load_s,
            )
        elif reload == "auto" and self.dirty_by is not None:
            self.add(
                "load",
                suite.dataset.load_threads,
                reason=f"reload: the previous run ({self.dirty_by}) inserted records",
                est_seconds=self.load_s,
            )
        if self.steps[-1].kind == "load":
            self.dirty_by = None
        wanted = (audit, mix.audit_ops if audit == "on" else ())
        if audit is not None and wanted != self.current_audit:
            what = f"for {', '.join(mix.audit_ops) or '-'}" if audit == "on" else "(nothing audited)"
            self.add("audit", 0, mix=mix, audit=audit, reason=f"audit {audit} {what}", est_seconds=2.0)
            self.current_audit = wanted


def _source_text(suite: Suite, measured: MeasuredRates, used: set[bool]) -> str:
    """``from 2 earlier runs``, ``unknown rate: assuming 1,000 ops/s on the embedded server``, or both."""
    earlier = f"from {_plural(measured.runs, 'earlier run')}"
    if used == {True}:
        return earlier
    unknown = _assumed_text(suite, measured.embedded)
    return f"{earlier}; other steps: {unknown}" if True in used else unknown
