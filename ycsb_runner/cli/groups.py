"""Option groups: the options several commands share, declared once with the library's options they fill.

A command takes a group as one parameter (``@BENCH_TARGET.into("target")``, in the manner of sqlite-utils'
``output_options``): its ``--help`` lists the group's options in that place, and it receives what the group
makes of their values, the library's own options (a dict of ``BenchOptions`` fields, a ``RegressOptions``,
a ``RunFilter``, where the history is). Defaults are the library dataclasses' own.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ycsb_runner.bench import BenchOptions
from ycsb_runner.cli.options import (
    CanariesOpt,
    ClientOpt,
    HistoryUrlOpt,
    ResultsOpt,
    ScaleOpt,
    SetOpt,
    SinceOpt,
    SuiteArg,
    TagOpt,
    UntilOpt,
    UrlOpt,
    option,
)
from ycsb_runner.errors import UserError
from ycsb_runner.nightly.regress_options import DEFAULTS as REGRESS_DEFAULTS
from ycsb_runner.nightly.regress_options import RegressOptions

F = TypeVar("F", bound=Callable[..., Any])
REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class OptionGroup:
    """*options*: each parameter's Annotated type and default, in --help's order; *build*: their values (by
    parameter name) -> what the command receives."""

    options: dict[str, tuple[Any, Any]]
    build: Callable[..., Any]

    def into(self, name: str) -> Callable[[F], F]:
        """A decorator: the command's parameter *name* becomes this group's options."""

        def decorate(command: F) -> F:
            params: list[inspect.Parameter] = []
            for p in inspect.signature(command).parameters.values():
                if p.name == name:
                    params += [
                        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
                        for n, (kind, default) in self.options.items()
                    ]
                else:
                    kind = _evaluated(p.annotation, command)
                    params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=kind))

            def with_group(**values: Any) -> Any:
                mine = {n: values.pop(n) for n in self.options}
                return command(**values, **{name: self.build(**mine)})

            functools.update_wrapper(with_group, command, updated=())
            del with_group.__wrapped__  # (Typer reads the signature below, not the command's)
            with_group.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
            with_group.__annotations__ = {p.name: p.annotation for p in params}
            return with_group  # type: ignore[return-value]

        return decorate


def _evaluated(annotation: Any, command: Callable[..., Any]) -> Any:
    """A parameter's annotation as an object (the modules write them as text, PEP 563); another group's
    parameter (a type named only for the type checker) stays text until that group's decorator replaces it."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, getattr(command, "__globals__", {}))  # noqa: S307 - the module's own source
    except NameError:
        return annotation


# --- bench and findmax ------------------------------------------------------------------------------------
_BENCH = BenchOptions(suite="")

RunIdOpt = option(str | None, metavar="ID", help="Name the result folder (default: time and suite).")
MonitorsOpt = option(bool, help="Sample server and client metrics during runs.")
ReportOpt = option(bool, help="Write report.html and report.md into the run folder.")
LockOpt = option(bool, help="Refuse to start while another bench runs against the same target (exit 2).")


def _bench_fields(**given: Any) -> dict[str, Any]:
    """The BenchOptions fields the group fills: lists for options not given, tags checked (the history,
    and pandas with it, loads only for a bench given tags)."""
    fields = {**given, "overrides": given["overrides"] or [], "clients": given["clients"] or []}
    if given["tags"]:
        from ycsb_runner.runs.history import check_tags, parse_tags

        fields["tags"] = check_tags(parse_tags(given["tags"]))
    else:
        fields["tags"] = {}
    return fields


#: what bench and findmax run against, and where the run goes (BenchOptions fields, by name)
BENCH_TARGET = OptionGroup(
    {
        "suite": (SuiteArg, REQUIRED),
        "url": (UrlOpt, _BENCH.url),
        "overrides": (SetOpt, None),
        "scale": (ScaleOpt, _BENCH.scale),
        "results": (ResultsOpt, _BENCH.results),
        "run_id": (RunIdOpt, _BENCH.run_id),
        "monitors": (MonitorsOpt, _BENCH.monitors),
        "canaries": (CanariesOpt, _BENCH.canaries),
        "report": (ReportOpt, _BENCH.report),
        "tags": (TagOpt, None),
        "history_url": (HistoryUrlOpt, _BENCH.history_url),
        "lock": (LockOpt, _BENCH.lock),
        "clients": (ClientOpt, None),
    },
    _bench_fields,
)


# --- the history: runs, regress, regress accept -----------------------------------------------------------
@dataclass(frozen=True)
class HistoryPlace:
    """Where the history is: RESULTS/history.sqlite (*results*: default the results folder) or *url*."""

    results: Path | None
    url: str | None


HISTORY = OptionGroup(
    {"results": (ResultsOpt, None), "history_url": (HistoryUrlOpt, None)},
    lambda results, history_url: HistoryPlace(results, history_url),
)


def _filter(tags: list[str] | None, since: str | None, until: str | None) -> Any:
    from ycsb_runner.runs.history import RunFilter, parse_tags

    return RunFilter(tags=parse_tags(tags or []), since=since, until=until)


#: which runs of the history: a history.RunFilter (its suite and status are the command's)
RUN_FILTER = OptionGroup(
    {"tags": (TagOpt, None), "since": (SinceOpt, None), "until": (UntilOpt, None)},
    _filter,
)

MinEffectOpt = option(float, "--min-effect", metavar="PCT", help="Smallest change (in %) that counts.")
AlphaOpt = option(
    float,
    "--alpha",
    metavar="P",
    help="Significance level, after correction (0.01: about one false alarm per 100 nights in a series).",
)
CorrectionOpt = option(
    str, "--correction", metavar="NAME", help="holm (family-wise) or bh (Benjamini-Hochberg)."
)
WindowOpt = option(
    int,
    "--window",
    metavar="N",
    help="The longest run of newest nights tested together against the stable nights before.",
)
ConfirmOpt = option(
    int,
    "--confirm",
    metavar="N",
    help="Flag a change only once it shows on each of the last N nights (2: a single outlier night flags "
    "nothing; 1: tonight alone can fail the job).",
)
MetricOpt = option(
    list[str] | None,
    "--metric",
    metavar="NAME",
    help="throughput_ops_s, avg_us, p50_us, p95_us, p99_us, p999_us, max_us, findmax_ops_s, "
    "latency_distribution (regress: one test of each step's latency quantiles) (repeatable).",
)
IgnoreCanariesOpt = option(
    bool,
    "--ignore-canaries",
    help="Judge the database's series as if no canary had been measured (a change on nights whose load "
    "generator, round trip or host moved is then a regression like any other).",
)

HostChangeOpt = option(
    str,
    "--on-host-change",
    metavar="HOW",
    help="When the load generator (client host) or the server (kind, version) changed in the runs: mark "
    "(judge every night, note the run where it changed) or split (judge only the nights of the newest "
    "host and server).",
)


def _regress_options(**given: Any) -> RegressOptions:
    """The RegressOptions of regress and regress accept, checked (a one-line error for a bad value)."""
    metrics = tuple(given.pop("metrics") or REGRESS_DEFAULTS.metrics)
    canaries = not given.pop("ignore_canaries")
    opts = RegressOptions(**given, metrics=metrics, canaries=canaries)
    try:
        opts.check()
    except ValueError as e:
        raise UserError(str(e)) from None
    return opts


#: how regress judges (RegressOptions fields, by name; --ignore-canaries is canaries=False)
REGRESS = OptionGroup(
    {
        "min_effect_pct": (MinEffectOpt, REGRESS_DEFAULTS.min_effect_pct),
        "alpha": (AlphaOpt, REGRESS_DEFAULTS.alpha),
        "correction": (CorrectionOpt, REGRESS_DEFAULTS.correction),
        "window": (WindowOpt, REGRESS_DEFAULTS.window),
        "confirm": (ConfirmOpt, REGRESS_DEFAULTS.confirm),
        "metrics": (MetricOpt, None),
        "ignore_canaries": (IgnoreCanariesOpt, not REGRESS_DEFAULTS.canaries),
        "on_host_change": (HostChangeOpt, REGRESS_DEFAULTS.on_host_change),
    },
    _regress_options,
)
