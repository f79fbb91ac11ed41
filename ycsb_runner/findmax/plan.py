"""A suite shaped for a findmax search: one mix, one thread count, probes of ``probe_s`` seconds, the
bound's percentile measured and a steady-state window after ``warmup_s``; and how long the search may take."""

from __future__ import annotations

import dataclasses

from ycsb_runner.errors import UserError
from ycsb_runner.findmax import search as fm
from ycsb_runner.prepare.plan import JVM_OVERHEAD_S
from ycsb_runner.prepare.suite import INT_MAX, Suite, did_you_mean


def findmax_plan(suite: Suite, opts: fm.FindmaxOptions) -> tuple[Suite, fm.FindmaxOptions]:
    """The suite as findmax runs it (one mix, one thread count, probes of ``probe_s`` seconds, the bound's
    percentile measured, a steady-state window after ``warmup_s``) and the options with the mix and the
    thread count resolved; one-line errors for what cannot be searched."""
    opts.check()
    names = [m.name for m in suite.mixes]
    if opts.mix is None:
        if len(names) != 1:
            raise UserError(f"suite {suite.name} has mixes {', '.join(names)}: choose one with --mix")
        mix = suite.mixes[0]
    else:
        found = [m for m in suite.mixes if m.name == opts.mix]
        if not found:
            raise UserError(
                f"--mix {opts.mix}: suite {suite.name} has no such mix{did_you_mean(opts.mix, names)}; "
                f"its mixes: {', '.join(names)}"
            )
        mix = found[0]
    if suite.audit.states:
        raise UserError(
            f"suite {suite.name} switches audit logging: findmax probes one setting; --set audit=[] (or "
            "audit=off)"
        )
    if not suite.measurement.type.startswith("hdrhistogram"):
        raise UserError(
            f"findmax needs measurement.type = hdrhistogram (the steady-state window is cut from HDR "
            f"interval logs), not {suite.measurement.type}"
        )
    threads = int(opts.threads or max(suite.run.threads))
    percentiles = tuple(suite.measurement.percentiles)
    if opts.bound.statistic != "avg":
        wanted = float(opts.bound.statistic[1:])
        if wanted not in percentiles:
            percentiles = tuple(sorted({*percentiles, wanted}))
    warmup = suite.effective_warmup_s or round(fm.DEFAULT_WARMUP_SHARE * opts.probe_s, 3)
    if warmup >= opts.probe_s:
        raise UserError(
            f"warmup_s = {warmup:g} leaves nothing of a {opts.probe_s}-s probe: raise --probe-s or lower "
            "warmup_s"
        )
    suite = dataclasses.replace(
        suite,
        mixes=(mix,),
        run=dataclasses.replace(
            suite.run,
            threads=(threads,),
            maxexecutiontime=int(opts.probe_s),
            operationcount=INT_MAX,
            status_interval=1,  # a status line and an HDR interval each second: the window's resolution
        ),
        measurement=dataclasses.replace(suite.measurement, percentiles=percentiles),
        warmup_s=float(warmup) if suite.clients.warmup_s is None else suite.warmup_s,
        repetitions=1,
        warmup_runs=0,
    )
    return suite, dataclasses.replace(opts, mix=mix.name, threads=threads)


def estimated_seconds(load_seconds: float, opts: fm.FindmaxOptions) -> float:
    """An upper estimate: the load (as the plan estimated it) and every probe the search may run (each
    ends at ``probe_s``)."""
    return load_seconds + opts.max_probes * (opts.probe_s + JVM_OVERHEAD_S)
