"""The ``ycsb-runner`` command: a thin layer over the library (suite, plan, render, bench, parse, ...)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ycsb_runner import __version__
from ycsb_runner.console import BenchProgress, err_console, out_console
from ycsb_runner.errors import UserError, interrupted_exit_code, signal_name

app = typer.Typer(
    help="Run YCSB 0.17.0 benchmark studies against MongoDB: render, run, toggle audit, parse, compare.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
server_app = typer.Typer(
    help="The embedded local server (mongod if on PATH, else FerretDB).", no_args_is_help=True
)
suites_app = typer.Typer(help="Built-in suites.", invoke_without_command=True)
app.add_typer(server_app, name="server")
app.add_typer(suites_app, name="suites")

UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--mongodb-url",
        envvar="MONGODB_URL",
        show_envvar=True,
        help="MongoDB connection URL. Prefer MONGODB_URL: an option is visible in the process list.",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set", help="Override a suite setting, e.g. --set threads=8 --set size=4C8G (repeatable)."
    ),
]
ScaleOpt = Annotated[
    float | None,
    typer.Option("--scale", help="Multiply recordcount, operationcount and maxexecutiontime (e.g. 0.001)."),
]
TemplatesOpt = Annotated[
    Path | None,
    typer.Option(
        "--templates", help="A folder of your own Jinja2 templates, tried before the built-in ones."
    ),
]


class Stopped(UserError):
    """``bench`` stopped by Ctrl-C, SIGTERM or SIGHUP after the clean-up: exit 128 + the signal's number.
    (Click turns a KeyboardInterrupt into "Aborted!" and exit 1, so the command raises this instead.)"""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(
            f"{signal_name(exc)}: stopped YCSB (and the embedded server); finished steps are kept",
            exit_code=interrupted_exit_code(exc),
        )


def _log(msg: str) -> None:
    err_console.print(msg)


@app.command()
def version() -> None:
    """Print the version."""
    out_console.print(__version__)


@app.command()
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
) -> None:
    """Install YCSB 0.17.0 (Maven Central) with the project's MongoDB binding, and FerretDB. Idempotent."""
    import shutil

    from ycsb_runner.install import ensure_ferretdb, ensure_ycsb, find_java
    from ycsb_runner.install.ycsb import download_tarball as download

    java = find_java()
    if download_tarball:
        download(log=_log)
        return
    inst = ensure_ycsb(log=_log)
    _log(
        f"YCSB: {inst.core_jar} + {inst.binding_jar} ({inst.binding_class}), driver {inst.driver_jar}; "
        f"Java {java.version}"
    )
    if server:
        if shutil.which("mongod"):
            _log(f"embedded server: mongod at {shutil.which('mongod')}")
        else:
            _log(f"embedded server: FerretDB at {ensure_ferretdb(log=_log)}")


@server_app.command("start")
def server_start() -> None:
    """Start the embedded server; the last line of the output is its URL."""
    from ycsb_runner import server

    info = server.start(log=_log)
    _log(f"{info.version}, pid {info.pid}, data in {info.workdir}")
    print(info.url)


@server_app.command("stop")
def server_stop() -> None:
    """Stop the embedded server and remove its throwaway data."""
    from ycsb_runner import server

    info = server.stop()
    _log("stopped" if info else "no embedded server is running")


@server_app.command("status")
def server_status() -> None:
    """Say whether the embedded server runs (exit 1 when it does not)."""
    from ycsb_runner import server

    info = server.status(log=_log)
    if info is None:
        _log("no embedded server is running")
        raise typer.Exit(1)
    print(f"{info.kind} {info.version} pid {info.pid} {info.url}")


@suites_app.callback()
def suites_list(ctx: typer.Context) -> None:
    """List the built-in suites (``suites show NAME`` prints one)."""
    if ctx.invoked_subcommand:
        return
    from ycsb_runner.suite import builtin_suites, load_suite

    for name in builtin_suites():
        s = load_suite(name)
        out_console.print(f"[bold]{name:<20}[/bold] {s.description}")


@suites_app.command("show")
def suites_show(name: str) -> None:
    """Print a suite file."""
    from ycsb_runner.suite import suite_path

    sys.stdout.write(suite_path(name).read_text())


def _render_text(
    suite_name: str,
    url: str | None,
    overrides: list[str],
    scale: float | None,
    templates: Path | None,
    show_properties: bool,
) -> str:
    from ycsb_runner.bench import BenchOptions, prepare
    from ycsb_runner.install import locate_ycsb
    from ycsb_runner.install.ycsb import OWN_BINDING_CLASS
    from ycsb_runner.render import describe_plan, environment

    _, plan = prepare(BenchOptions(suite=suite_name, url=url, overrides=overrides, scale=scale))
    try:
        inst = locate_ycsb()
        classpath, binding = inst.classpath, inst.binding_class
    except UserError:
        classpath, binding = ["<YCSB>/lib/*"], OWN_BINDING_CLASS
    return describe_plan(
        plan,
        url=url or "mongodb://127.0.0.1:27017/ycsb",
        classpath=classpath,
        binding_class=binding,
        env=environment(templates),
        show_properties=show_properties,
    )


@app.command()
def render(
    suite: Annotated[str, typer.Argument(help="A built-in suite name or a .toml file.")],
    mongodb_url: UrlOpt = None,
    set_: SetOpt = None,
    scale: ScaleOpt = None,
    templates: TemplatesOpt = None,
    show_properties: Annotated[bool, typer.Option(help="Also print each workload properties file.")] = False,
) -> None:
    """Print every step and the exact command it will run (password masked). No server needed."""
    sys.stdout.write(_render_text(suite, mongodb_url, set_ or [], scale, templates, show_properties))


@app.command()
def bench(
    suite: Annotated[str, typer.Argument(help="A built-in suite name or a .toml file.")],
    mongodb_url: UrlOpt = None,
    set_: SetOpt = None,
    scale: ScaleOpt = None,
    templates: TemplatesOpt = None,
    dry_run: Annotated[bool, typer.Option(help="Only print what would run (same as `render`).")] = False,
    audit_strategy: Annotated[
        str | None,
        typer.Option(help="How to switch audit: mongodb-runtime, restart, command, aliyun, tencent."),
    ] = None,
    audit_option: Annotated[
        list[str] | None,
        typer.Option(help='Strategy option KEY=VALUE (repeatable), e.g. on_cmd=\'["./audit.sh","on"]\'.'),
    ] = None,
    results: Annotated[Path | None, typer.Option(help="Where result folders go (default: results/).")] = None,
    max_error_rate: Annotated[float, typer.Option(help="A phase with more failed operations fails.")] = 0.01,
    keep_going: Annotated[bool, typer.Option(help="Continue with the next step after a failed one.")] = False,
    monitors: Annotated[bool, typer.Option(help="Sample server and client metrics during runs.")] = True,
    report: Annotated[bool, typer.Option(help="Write report.html and report.md into the run folder.")] = True,
    jvm_arg: Annotated[
        list[str] | None, typer.Option(help="Extra JVM argument, e.g. -Xmx4g (repeatable).")
    ] = None,
) -> None:
    """Run a suite against MONGODB_URL, or against the embedded server when none is given."""
    if dry_run:
        sys.stdout.write(_render_text(suite, mongodb_url, set_ or [], scale, templates, False))
        return
    from ycsb_runner.analyse.results import print_results
    from ycsb_runner.bench import BenchOptions, prepare, run_bench

    options = {}
    for item in audit_option or []:
        if "=" not in item:
            raise UserError(f"--audit-option {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        try:
            options[k] = json.loads(v)
        except ValueError:
            options[k] = v
    opts = BenchOptions(
        suite=suite,
        url=mongodb_url,
        overrides=set_ or [],
        scale=scale,
        templates=templates,
        results=results,
        audit_strategy=audit_strategy,
        audit_options=options,
        jvm_args=jvm_arg or [],
        max_error_rate=max_error_rate,
        keep_going=keep_going,
        monitors=monitors,
    )
    _, plan = prepare(opts)
    _log(f"suite {plan.suite.name}: {len(plan.steps)} steps, estimated {plan.est_seconds / 60:.1f} min")
    try:
        with BenchProgress(len(plan.steps)) as progress:
            outcome = run_bench(opts, log=_log, progress=progress)
    except (UserError, KeyboardInterrupt) as exc:
        run_dir = getattr(exc, "run_dir", None)
        if run_dir is not None:
            try:
                print_results(run_dir)
                if report and not isinstance(exc, KeyboardInterrupt):
                    from ycsb_runner.analyse.report import write_report

                    write_report(run_dir)
            except Exception:  # noqa: BLE001 - the error below matters more than the table
                pass
            with contextlib.suppress(OSError):  # a terminal that hung up (SIGHUP)
                _log(f"results so far: {run_dir}")
        if isinstance(exc, KeyboardInterrupt):
            raise Stopped(exc) from None
        raise
    print_results(outcome.run_dir.root)
    _print_study_table(outcome.run_dir.root)
    if report:
        from ycsb_runner.analyse.report import write_report

        html_path, _ = write_report(outcome.run_dir.root)
        _log(f"report: {html_path}")
    _log(f"results: {outcome.run_dir.root}")


def _print_study_table(run_dir: Path) -> None:
    """For study suites (audit off/on, Tencent tables): the table in the study's layout, also as CSV."""
    from ycsb_runner.analyse.table import study_table
    from ycsb_runner.cli_analyse import Format, emit
    from ycsb_runner.store import atomic_write_csv

    df = study_table(run_dir)
    if df.attrs.get("layout") in ("audit", "tencent") and not df.empty:
        atomic_write_csv(run_dir / "study_table.csv", df)
        emit(df, Format.table, df.attrs.get("title", run_dir.name))


def _mount_optional() -> None:
    """Commands contributed by other modules."""
    try:
        from ycsb_runner.cli_parse import parse_cmd

        app.command("parse", help="Parse YCSB output files produced elsewhere.")(parse_cmd)
    except ImportError:
        pass
    try:
        from ycsb_runner.cli_reference import app as reference_app

        app.add_typer(reference_app, name="reference")
    except ImportError:
        pass
    try:
        from ycsb_runner.cli_audit import app as audit_app

        app.add_typer(audit_app, name="audit")
    except ImportError:
        pass
    try:
        from ycsb_runner.cli_analyse import register

        register(app)
    except ImportError:
        pass


_mount_optional()


def main() -> None:
    try:
        app()
    except Stopped as err:
        with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
            err_console.print(f"[bold red]interrupted[/bold red] by {err}", soft_wrap=True)
        sys.exit(err.exit_code)
    except UserError as err:
        with contextlib.suppress(OSError):
            err_console.print(f"[bold red]error:[/bold red] {err}", soft_wrap=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt as exc:
        with contextlib.suppress(OSError):
            err_console.print("[bold red]interrupted[/bold red]: stopped; finished work is kept")
        sys.exit(interrupted_exit_code(exc))
