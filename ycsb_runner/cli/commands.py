"""The ``ycsb-runner`` Typer app: every command group registered (``ycsb_runner.cli.main`` runs it).

``run`` (setup, suites, render, bench), ``server``, ``analyse`` (table, compare, report), ``parse``,
``reference``, ``audit``, ``history`` (runs, regress, history rebuild) and ``site``; the options they share
are in ``options``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ycsb_runner._version import __version__
from ycsb_runner.cli import analyse, audit, clients, findmax, history, parse, reference, run, server, site
from ycsb_runner.cli.options import Format, FormatOpt, emit, renderer

app = typer.Typer(
    help="Run YCSB 0.17.0 benchmark studies against MongoDB: render, run, toggle audit, parse, compare.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion: suites, run ids and --set keys complete (options.complete_*)
    rich_markup_mode=None,  # plain help: wraps at the terminal width, never cuts an option name
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Run YCSB 0.17.0 benchmark studies against MongoDB: render, run, toggle audit, parse, compare."""


@app.command("version")
def version_cmd(fmt: FormatOpt = Format.table) -> None:
    """The version, the YCSB, binding, embedded server and Java a run would use, and where the cache and the
    results are (``--version``: the version alone)."""
    from dataclasses import asdict

    from ycsb_runner.install.inventory import inventory

    items = inventory()
    if renderer(fmt).terminal:  # one line each, paths whole (to copy), never folded into a table's cells
        width = max(len(i.what) for i in items)
        for i in items:
            typer.echo(f"{i.what:<{width}}  " + ", ".join(x for x in (i.version, i.where) if x))
        return
    import pandas as pd

    frame = pd.DataFrame([asdict(item) for item in items], columns=["what", "version", "where"])
    emit(frame, fmt, f"ycsb-runner {__version__}")


run.register(app)
app.add_typer(server.app, name="server")
analyse.register(app)
app.command("parse", help="Parse YCSB output files produced elsewhere.")(parse.parse_cmd)
app.add_typer(reference.app, name="reference")
app.add_typer(audit.app, name="audit")
history.register(app)
site.register(app)  # site
clients.register(app)  # probe-client
findmax.register(app)
