"""``setup``, ``suites``, ``render`` and ``bench``: from a suite to a result folder."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ycsb_runner.audit.registry import strategy_names
from ycsb_runner.cli.options import (
    CanariesOpt,
    ClientOpt,
    Format,
    FormatOpt,
    HistoryUrlOpt,
    ResultsOpt,
    ScaleOpt,
    SetOpt,
    SuiteArg,
    TagOpt,
    TemplatesOpt,
    UrlOpt,
    emit,
    log,
    renderer,
)
from ycsb_runner.console import BenchProgress
from ycsb_runner.errors import RunFailed, RunInterrupted, UserError, interrupted_exit_code, signal_name

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.bench import BenchOptions, BenchOutcome

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
    from ycsb_runner.install.ycsb import download_tarball as download
    from ycsb_runner.server import EmbeddedServer

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

    from ycsb_runner.suite import builtin_suites, load_suite

    rows = []
    for name in builtin_suites():
        s = load_suite(name)
        rows.append({"name": name, "study": s.study or "", "description": s.description})
    emit(pd.DataFrame(rows, columns=["name", "study", "description"]), fmt, "built-in suites")


@suites_app.command("show")
def suites_show(name: Annotated[str, typer.Argument(metavar="NAME", help="A built-in suite.")]) -> None:
    """Print a suite file."""
    from ycsb_runner.suite import suite_path

    sys.stdout.write(suite_path(name).read_text())


def _preflight(suite: object, *, embedded: bool, audit: tuple[str | None, dict] | None = None) -> None:
    """The pre-flight checks a bench makes (``ycsb_runner.preflight``), shared by ``bench``, ``bench
    --dry-run`` and ``render``: each warning on stderr; the first error ends the command (exit 2)."""
    from ycsb_runner.preflight import audit_findings, preflight

    findings = preflight(suite, embedded=embedded)  # type: ignore[arg-type]
    if audit is not None and getattr(getattr(suite, "audit", None), "states", ()):
        findings += audit_findings(audit[0], audit[1], embedded=embedded)
    errors = [f for f in findings if f.level == "error"]
    for f in findings:
        if not errors or f is not errors[0]:  # the error that stops the command is printed once, by the CLI
            log(f"{f.level}: {f.message}")
    if errors:
        raise UserError(f"stopped before running: {errors[0].message}")


def _command_notice(suite: object, strategy: str | None, cli_options: dict) -> list[str]:
    """The lines that say which programs a run will execute (an audit strategy's ``programs``), and from
    where: a suite file someone handed you must not run programs unannounced."""
    audit = getattr(suite, "audit", None)
    name = strategy or (audit.strategy if audit is not None else None)
    if audit is None or not audit.states or not name:
        return []
    from ycsb_runner.audit import strategy_spec

    spec = strategy_spec(name)
    if spec.programs is None:
        return []
    lines = spec.programs({**audit.options, **cli_options})
    from_suite = [k for k in spec.program_keys if k in audit.options and k not in cli_options]
    where = f"suite file {getattr(suite, 'path', '')}" if from_suite else "--audit-option"
    head = f"notice: this run executes programs (audit strategy {name}, from the {where}):"
    return [head, *(f"  {line}" for line in lines)] if lines else [head + " none given"]


def _render_text(
    suite_name: str,
    url: str | None,
    overrides: list[str],
    scale: float | None,
    templates: Path | None,
    show_properties: bool,
    *,
    audit_strategy: str | None = None,
    audit_options: dict | None = None,
    results: Path | None = None,
    history_url: str | None = None,
) -> tuple[str, object]:
    """The plan as text (after the notice of the programs it runs), and the plan."""
    from ycsb_runner.bench import BenchOptions, prepare
    from ycsb_runner.install import locate_ycsb
    from ycsb_runner.install.ycsb import OWN_BINDING_CLASS
    from ycsb_runner.render import describe_plan, environment

    _, plan = prepare(
        BenchOptions(
            suite=suite_name,
            url=url,
            overrides=overrides,
            scale=scale,
            audit_strategy=audit_strategy,
            results=results,
            history_url=history_url,
        )
    )
    notice = _command_notice(plan.suite, audit_strategy, audit_options or {})
    try:
        inst = locate_ycsb()
        classpath, binding = inst.classpath, inst.binding_class
    except UserError:
        classpath, binding = ["<YCSB>/lib/*"], OWN_BINDING_CLASS
    text = "".join(f"# {line}\n" for line in notice) + describe_plan(
        plan,
        url=url or "mongodb://127.0.0.1:27017/ycsb",
        classpath=classpath,
        binding_class=binding,
        env=environment(templates),
        show_properties=show_properties,
    )
    return text, plan


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
    params = {"audit_strategy": None, "audit_option": None, "tag": None, "max_error_rate": 0.01}
    params |= {"run_id": None, "results": None, "history_url": None}
    _plan_and_preflight({**locals(), **params}, show_properties=show_properties)


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


def _stop_on_findings(plan: Any, url: str | None, strategy: str | None, options: dict) -> None:
    """The pre-flight checks of a bench (of its --dry-run, of render), stopping on what bench refuses."""
    _preflight(
        plan.suite,
        embedded=url is None,
        audit=(strategy or plan.suite.audit.strategy, {**plan.suite.audit.options, **options}),
    )


# The options bench and findmax share: each command parameter and the BenchOptions field it fills
_SHARED_OPTIONS = {
    "suite": "suite",
    "mongodb_url": "url",
    "set_": "overrides",
    "scale": "scale",
    "results": "results",
    "run_id": "run_id",
    "monitors": "monitors",
    "canaries": "canaries",
    "report": "report",
    "tag": "tags",
    "history_url": "history_url",
    "lock": "lock",
    "client": "clients",
}


def bench_options(params: Mapping[str, Any], **only_here: Any) -> BenchOptions:
    """The BenchOptions of a command that runs a bench (bench, findmax): the options they share from
    *params*, the command's parameters by name (its ``locals()``), and the fields *only_here* sets."""
    from ycsb_runner.bench import BenchOptions
    from ycsb_runner.history import check_tags, parse_tags

    shared = {name: params[param] for param, name in _SHARED_OPTIONS.items()}
    shared["overrides"] = shared["overrides"] or []
    shared["tags"] = check_tags(parse_tags(shared["tags"] or []))
    shared["clients"] = shared["clients"] or []
    return BenchOptions(**shared, **only_here)


def _plan_and_preflight(params: Mapping[str, Any], *, show_properties: bool = False) -> None:
    """``bench --dry-run`` and ``render``: the plan on stdout, then the same checks as a real bench, with
    the same exit code (2 where bench would refuse to start); *params*: bench's parameters by name."""
    from ycsb_runner.bench import BenchOptions, check_options

    url, audit_strategy = params["mongodb_url"], params["audit_strategy"]
    if params["tag"]:  # (history, and pandas with it, only for a bench given tags)
        from ycsb_runner.history import check_tags, parse_tags

        check_tags(parse_tags(params["tag"]))
    check_options(
        BenchOptions(
            suite=params["suite"], url=url, max_error_rate=params["max_error_rate"], run_id=params["run_id"]
        )
    )
    audit_options = _audit_options(params["audit_option"] or [])
    text, plan = _render_text(
        params["suite"],
        url,
        params["set_"] or [],
        params["scale"],
        params["templates"],
        show_properties,
        audit_strategy=audit_strategy,
        audit_options=audit_options,
        results=params["results"],
        history_url=params["history_url"],
    )
    sys.stdout.write(text)
    _stop_on_findings(plan, url, audit_strategy, audit_options)


DryRunOpt = Annotated[bool, typer.Option(help="Only print what would run (same as `render`).")]
AuditStrategyOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help=f"How to switch audit: {', '.join(strategy_names())}."),
]
AuditOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        metavar="KEY=VALUE",
        help='Strategy option (repeatable), e.g. on_cmd=\'["./audit.sh","on"]\'.',
    ),
]
RunIdOpt = Annotated[
    str | None, typer.Option(metavar="ID", help="Name the result folder (default: time and suite).")
]
MaxErrorRateOpt = Annotated[
    float, typer.Option(metavar="RATE", help="A phase with more failed operations fails.")
]
KeepGoingOpt = Annotated[bool, typer.Option(help="Continue with the next step after a failed one.")]
MonitorsOpt = Annotated[bool, typer.Option(help="Sample server and client metrics during runs.")]
ReportOpt = Annotated[bool, typer.Option(help="Write report.html and report.md into the run folder.")]
JvmArgOpt = Annotated[
    list[str] | None, typer.Option(metavar="ARG", help="Extra JVM argument, e.g. -Xmx4g (repeatable).")
]
LockOpt = Annotated[
    bool,
    typer.Option(help="Refuse to start while another bench runs against the same target (exit 2)."),
]


def bench(
    suite: SuiteArg,
    mongodb_url: UrlOpt = None,
    set_: SetOpt = None,
    scale: ScaleOpt = None,
    templates: TemplatesOpt = None,
    dry_run: DryRunOpt = False,
    audit_strategy: AuditStrategyOpt = None,
    audit_option: AuditOptionOpt = None,
    results: ResultsOpt = None,
    run_id: RunIdOpt = None,
    max_error_rate: MaxErrorRateOpt = 0.01,
    keep_going: KeepGoingOpt = False,
    monitors: MonitorsOpt = True,
    canaries: CanariesOpt = True,
    report: ReportOpt = True,
    jvm_arg: JvmArgOpt = None,
    tag: TagOpt = None,
    history_url: HistoryUrlOpt = None,
    lock: LockOpt = True,
    client: ClientOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run a suite against MONGODB_URL, or against the embedded server when none is given."""
    if dry_run:
        _plan_and_preflight(locals())
        return
    from ycsb_runner.bench import prepare, run_bench

    opts = bench_options(
        locals(),
        templates=templates,
        audit_strategy=audit_strategy,
        audit_options=_audit_options(audit_option or []),
        jvm_args=jvm_arg or [],
        max_error_rate=max_error_rate,
        keep_going=keep_going,
    )
    _, plan = prepare(opts)
    _stop_on_findings(plan, mongodb_url, audit_strategy, opts.audit_options)
    for line in _command_notice(plan.suite, audit_strategy, opts.audit_options):
        log(line)
    log(f"suite {plan.suite.name}: {len(plan.steps)} steps, estimated {plan.estimate}")
    run_and_show(
        [s.est_seconds for s in plan.steps],
        lambda progress: run_bench(opts, log=log, progress=progress),
        lambda run, error: _print_outcome(run, fmt, error=error),
    )


def run_and_show(
    step_seconds: list[float],
    start: Callable[[BenchProgress], BenchOutcome],
    show: Callable[[RunAnalysis | Path, str | None], None],
) -> None:
    """*start* a bench (bench, findmax) under a progress bar of one step per estimate in *step_seconds*, then
    *show* its results (with the error, as far as they go, when it failed) and log where they are."""
    try:
        with BenchProgress(len(step_seconds), step_seconds=step_seconds) as progress:
            outcome = start(progress)
    except KeyboardInterrupt as exc:  # before the run folder existed (Click would say "Aborted!", exit 1)
        raise RunInterrupted(
            f"{signal_name(exc)}: stopped before the run started", exit_code=interrupted_exit_code(exc)
        ) from None
    except RunFailed as err:
        if err.run_dir is not None:
            with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
                show(err.analysis or err.run_dir, str(err))
                log(f"results so far: {err.run_dir}")
        raise
    show(outcome.analysis or outcome.run_dir, None)
    if outcome.report:
        log(f"report: {outcome.report}")
    log(f"results: {outcome.run_dir}")


def _print_outcome(run: RunAnalysis | Path, fmt: Format, error: str | None = None) -> None:
    """The results table and, for study suites, the study's table; with --format json one summary. *run*:
    the run's analysis as the bench left it, or its folder when it could not be read back then."""
    from ycsb_runner.analyse.analysis import RunAnalysis
    from ycsb_runner.analyse.results import print_results, results_table
    from ycsb_runner.model import iso_utc

    try:
        analysis = RunAnalysis.of(run)
    except UserError as err:
        log(f"cannot show the results: {err}")
        return
    result = analysis.run
    run_dir = result.root
    if renderer(fmt).terminal:
        print_results(result)
        study = analysis.table
        if analysis.layout.own_table and not study.empty:
            from ycsb_runner.cli.analyse import emit_study_table

            emit_study_table(study, fmt, study.attrs.get("title", result.run_id))
        return
    ops = results_table(result)
    m = result.manifest
    extra = {
        "run_id": m.run_id,
        "run_dir": str(run_dir),
        "suite": m.suite.name,
        "status": m.status,
        "verdict": m.status,
        "error": error,
        "tags": m.tags,
        "fingerprint": m.fingerprint,
        "started_at": iso_utc(m.started_at),
        "ended_at": iso_utc(m.ended_at),
        "steps": {
            s.keys.step: {"verdict": s.verdict, "throughput_ops_s": s.throughput_ops_s}
            for s in m.steps
            if s.keys.phase in ("load", "run")
        },
    }
    emit(ops, fmt, f"results: {m.run_id}", extra=extra)


def register(app: typer.Typer) -> None:
    app.command()(setup)
    app.command()(render)
    app.command()(bench)
    app.add_typer(suites_app, name="suites")
