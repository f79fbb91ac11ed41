"""``setup``, ``suites``, ``render`` and ``bench``: from a suite to a result folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ycsb_runner.audit.registry import strategy_names
from ycsb_runner.bench import BenchOptions
from ycsb_runner.cli.groups import BENCH_TARGET
from ycsb_runner.cli.options import (
    ClientOpt,
    Format,
    FormatOpt,
    ScaleOpt,
    SetOpt,
    SuiteArg,
    TemplatesOpt,
    UrlOpt,
    emit,
    log,
    option,
    renderer,
)
from ycsb_runner.cli.running import run_and_show
from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    from ycsb_runner.analyse.analysis import RunAnalysis


suites_app = typer.Typer(help="Built-in suites.", invoke_without_command=True)


def setup(
    download_tarball: Annotated[
        bool,
        typer.Option(
            help="Download the YCSB 0.17.0 release tarball (needs GitHub access) instead of the Maven build."
        ),
    ] = False,
    server: Annotated[
        bool, typer.Option(help="Also build the embedded server (FerretDB) when no mongod.")
    ] = True,
    client: ClientOpt = None,
) -> None:
    """Install YCSB 0.17.0 (Maven Central) with the project's MongoDB binding, and FerretDB. Idempotent."""
    import shutil

    from ycsb_runner.install import ensure_ferretdb, ensure_ycsb, find_java
    from ycsb_runner.install.cds import ensure_archive
    from ycsb_runner.install.embedded import EmbeddedServer
    from ycsb_runner.install.ycsb import download_tarball as download

    java = find_java()
    if download_tarball:
        download(log=log)
        return
    inst = ensure_ycsb(log=log)
    log(
        f"YCSB: {inst.core_jar} + {inst.binding_jar} ({inst.binding_class}), driver {inst.driver_jar}; "
        f"Java {java.version}"
    )
    if server:
        if shutil.which("mongod"):
            log(f"embedded server: mongod at {shutil.which('mongod')}")
        else:
            log(f"embedded server: FerretDB at {ensure_ferretdb(log=log)}")
        ensure_archive(java, inst, lambda: EmbeddedServer(log=lambda _m: None), log=log)
    if client:  # load generators: this machine's YCSB (from the cache) copied there, Java checked
        from ycsb_runner.execute.clients import Client, install_ycsb, parse_clients, ssh_config_path

        config = ssh_config_path()
        for spec in parse_clients(client):
            log(install_ycsb(Client(spec, config), inst.classpath, java.path))


@suites_app.callback()
def suites_list(ctx: typer.Context, fmt: FormatOpt = Format.table) -> None:
    """List the built-in suites (``suites show NAME`` prints one)."""
    if ctx.invoked_subcommand:
        return
    import pandas as pd

    from ycsb_runner.prepare.suite import builtin_suites, load_suite

    rows = []
    for name in builtin_suites():
        s = load_suite(name)
        rows.append({"name": name, "study": s.study or "", "description": s.description})
    emit(pd.DataFrame(rows, columns=["name", "study", "description"]), fmt, "built-in suites")


@suites_app.command("show")
def suites_show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A built-in suite, or a suite file.")],
) -> None:
    """Print a suite file (a file that is not a suite is refused; control characters are shown escaped)."""
    from ycsb_runner.prepare.suite import suite_text
    from ycsb_runner.safe.text import terminal

    sys.stdout.write("\n".join(terminal(line) for line in suite_text(name).split("\n")))


def render(
    suite: SuiteArg,
    mongodb_url: UrlOpt = None,
    set_: SetOpt = None,
    scale: ScaleOpt = None,
    templates: TemplatesOpt = None,
    show_properties: Annotated[bool, typer.Option(help="Also print each workload properties file.")] = False,
) -> None:
    """Print every step and the exact command it will run (password masked), then the checks `bench` makes
    before it starts (exit 2 where bench would refuse, as `bench --dry-run`). No server needed."""
    opts = BenchOptions(suite=suite, url=mongodb_url, overrides=set_ or [], scale=scale, templates=templates)
    _dry_run(opts, show_properties=show_properties)


def _dry_run(opts: BenchOptions, *, show_properties: bool = False) -> None:
    """``bench --dry-run`` and ``render``: the plan on stdout, then the pre-flight's findings, with bench's
    exit code (2 where it would refuse to start)."""
    from ycsb_runner.bench import dry_run

    text, check = dry_run(opts, show_properties=show_properties)
    sys.stdout.write(text)
    check.tell(log)


def _audit_options(items: list[str]) -> dict:
    options = {}
    for item in items:
        if "=" not in item:
            raise UserError(f"--audit-option {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        try:
            options[k] = json.loads(v)
        except ValueError:
            options[k] = v
    return options


DryRunOpt = option(bool, help="Only print what would run (same as `render`).")
AuditStrategyOpt = option(
    str | None, metavar="NAME", help=f"How to switch audit: {', '.join(strategy_names())}."
)
AuditOptionOpt = option(
    list[str] | None,
    metavar="KEY=VALUE",
    help='Strategy option (repeatable), e.g. on_cmd=\'["./audit.sh","on"]\'.',
)
MaxErrorRateOpt = option(float, metavar="RATE", help="A phase with more failed operations fails.")
KeepGoingOpt = option(bool, help="Continue with the next step after a failed one.")
JvmArgOpt = option(list[str] | None, metavar="ARG", help="Extra JVM argument, e.g. -Xmx4g (repeatable).")
OpenMetricsOpt = option(
    Path | None,
    "--openmetrics",
    metavar="FILE",
    help="Also write the run's figures there in the OpenMetrics text format (no timestamps: node_exporter's "
    "textfile collector reads it).",
)
_DEFAULT = BenchOptions(suite="")


@BENCH_TARGET.into("target")
def bench(
    target: dict[str, Any],
    templates: TemplatesOpt = None,
    dry_run: DryRunOpt = False,
    audit_strategy: AuditStrategyOpt = None,
    audit_option: AuditOptionOpt = None,
    max_error_rate: MaxErrorRateOpt = _DEFAULT.max_error_rate,
    keep_going: KeepGoingOpt = _DEFAULT.keep_going,
    jvm_arg: JvmArgOpt = None,
    openmetrics: OpenMetricsOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run a suite against MONGODB_URL, or against the embedded server when none is given."""
    from ycsb_runner.bench import check_bench, run_bench

    opts = BenchOptions(
        **target,
        templates=templates,
        audit_strategy=audit_strategy,
        audit_options=_audit_options(audit_option or []),
        jvm_args=jvm_arg or [],
        max_error_rate=max_error_rate,
        keep_going=keep_going,
    )
    if dry_run:
        _dry_run(opts)
        return
    check = check_bench(opts).told(log)
    log(f"suite {check.plan.suite.name}: {len(check.plan.steps)} steps, estimated {check.plan.estimate}")
    run_and_show(
        [s.est_seconds for s in check.plan.steps],
        lambda progress: run_bench(opts, log=log, progress=progress, checked=check),
        lambda run, error: _show_and_publish(run, fmt, error, openmetrics),
    )


def _show_and_publish(
    run: RunAnalysis | Path, fmt: Format, error: str | None, openmetrics: Path | None
) -> bool:
    """The outcome printed (what :func:`_print_outcome` returns); then the run's figures in OpenMetrics
    (--openmetrics) and the job summary (``$GITHUB_STEP_SUMMARY``): each a warning when it cannot be
    written, never a change of the exit code."""
    import os

    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.report import ci

    shown = _print_outcome(run, fmt, error=error)
    if openmetrics is None and not os.environ.get(ci.SUMMARY_ENV):
        return shown
    try:
        result = RunAnalysis.of(run).run
    except UserError:
        return shown
    if openmetrics is not None:
        from ycsb_runner.nightly.export import run_openmetrics
        from ycsb_runner.safe.files import atomic_write_text

        try:
            atomic_write_text(openmetrics, run_openmetrics(result))
            log(f"openmetrics: {openmetrics}")
        except UserError as err:
            log(f"warning: {err}")
    try:
        ci.append_summary(ci.bench_summary(result))
    except OSError as err:
        log(f"warning: the job summary was not written to ${ci.SUMMARY_ENV} ({err.strerror or err})")
    return shown


def _print_outcome(run: RunAnalysis | Path, fmt: Format, error: str | None = None) -> bool:
    """For study suites the study's table, then the results table and at most three lines (where the
    report is, the steps that need attention, the run id: True); with --format json one summary. *run*:
    the run's analysis as the bench left it, or its folder when it could not be read back then."""
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.analyse.results import print_results, results_table
    from ycsb_runner.runs.model import iso_utc

    try:
        analysis = RunAnalysis.of(run)
    except UserError as err:
        log(f"cannot show the results: {err}")
        return False
    result = analysis.run
    run_dir = result.root
    if renderer(fmt).terminal:  # the study's table, then the results table and at most three lines
        study = analysis.table
        if analysis.layout.own_table and not study.frame.empty:
            from ycsb_runner.cli.analyse import emit_study_table

            emit_study_table(study, fmt, study.title or result.run_id)
        print_results(result, footer=True)
        return True
    ops = results_table(result)
    m = result.manifest
    extra = {
        "run_id": m.run_id,
        "run_dir": str(run_dir),
        "suite": m.suite.name,
        "status": m.status,
        "verdict": m.status,  # status's old name, still written in this release (docs/reference/commands.md)
        "error": error,
        "tags": m.tags,
        "fingerprint": m.fingerprint,
        "started_at": iso_utc(m.started_at),
        "ended_at": iso_utc(m.ended_at),
        "steps": {
            s.keys.step: {"status": s.status, "verdict": s.status, "throughput_ops_s": s.throughput_ops_s}
            for s in m.steps
            if s.keys.phase in ("load", "run")
        },
    }
    emit(ops, fmt, f"results: {m.run_id}", extra=extra)
    return False


def register(app: typer.Typer) -> None:
    app.command()(setup)
    app.command()(render)
    app.command()(bench)
    app.add_typer(suites_app, name="suites")
