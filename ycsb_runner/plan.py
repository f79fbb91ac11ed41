"""Expand a suite into the ordered steps that will run, with a duration estimate.

Order of cells: for each mix, for each thread count. Within a cell the audit states and repetitions run
``blocked`` (all repetitions of ``off``, then of ``on``) or ``interleaved`` (off, on, then on, off, ...: an
A/B/B/A order that spreads drift over both arms). ``warmup_runs`` unmeasured runs start each cell.

Reload rule (``dataset.reload = "auto"``): a run whose mix inserts (insert > 0) adds keys after
``recordcount``, so the next run would see a different dataset and, if it inserts too, collide with the
keys already inserted. The dataset is therefore reloaded before any run that follows a run with inserts.
``always`` reloads before every measured run; ``never`` loads once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ycsb_runner.suite import Mix, Suite

JVM_OVERHEAD_S = 3.0


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

    @property
    def est_seconds(self) -> float:
        return sum(s.est_seconds for s in self.steps)

    def runs(self) -> list[Step]:
        return [s for s in self.steps if s.kind == "run"]


def estimate_run_seconds(suite: Suite) -> float:
    rate = suite.estimated_throughput
    if suite.run.target:
        rate = min(rate, suite.run.target)
    seconds = float("inf")
    if suite.run.operationcount is not None:
        seconds = suite.run.operationcount / rate
    if suite.run.maxexecutiontime is not None:
        seconds = min(seconds, suite.run.maxexecutiontime)
    return seconds + JVM_OVERHEAD_S


def estimate_load_seconds(suite: Suite) -> float:
    rate = suite.estimated_throughput
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


def build_plan(suite: Suite) -> Plan:
    steps: list[Step] = []
    run_s = estimate_run_seconds(suite)
    load_s = estimate_load_seconds(suite)
    dirty_by: str | None = None  # the mix whose inserts changed the dataset since the last load
    current_audit: tuple | None = None  # (state, audited ops) last switched to

    def add(kind: str, threads: int, **kw) -> None:
        steps.append(Step(index=len(steps) + 1, kind=kind, threads=threads, **kw))

    add("load", suite.dataset.load_threads, reason="initial load", est_seconds=load_s)

    def before_run(mix: Mix, audit: str | None) -> None:
        nonlocal dirty_by, current_audit
        reload = suite.dataset.reload
        if reload == "always" and steps[-1].kind != "load":
            add(
                "load",
                suite.dataset.load_threads,
                reason="reload: dataset.reload = always",
                est_seconds=load_s,
            )
        elif reload == "auto" and dirty_by is not None:
            add(
                "load",
                suite.dataset.load_threads,
                reason=f"reload: the previous run ({dirty_by}) inserted records",
                est_seconds=load_s,
            )
        if steps[-1].kind == "load":
            dirty_by = None
        wanted = (audit, mix.audit_ops if audit == "on" else ())
        if audit is not None and wanted != current_audit:
            what = f"for {', '.join(mix.audit_ops) or '-'}" if audit == "on" else "(nothing audited)"
            add("audit", 0, mix=mix, audit=audit, reason=f"audit {audit} {what}", est_seconds=2.0)
            current_audit = wanted

    for mix in suite.mixes:
        for threads in suite.run.threads:
            arms = _arm_order(suite.audit.states, suite.repetitions, suite.order)
            for w in range(suite.warmup_runs):
                first_audit = arms[0][0]
                before_run(mix, first_audit)
                add(
                    "warmup",
                    threads,
                    mix=mix,
                    audit=first_audit,
                    repetition=None,
                    reason=f"warm-up {w + 1}/{suite.warmup_runs} (discarded)",
                    est_seconds=run_s,
                )
                if mix.inserts:
                    dirty_by = mix.name
            for audit, rep in arms:
                before_run(mix, audit)
                add("run", threads, mix=mix, audit=audit, repetition=rep, est_seconds=run_s)
                if mix.inserts:
                    dirty_by = mix.name
    return Plan(suite=suite, steps=tuple(steps))
