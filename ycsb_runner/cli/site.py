"""``site``: the run history as a static site (``ycsb_runner.site.build``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ycsb_runner.cli.groups import HISTORY, REGRESS, HistoryPlace
from ycsb_runner.cli.options import log

if TYPE_CHECKING:
    from ycsb_runner.nightly.regress_options import RegressOptions


@REGRESS.into("options")
@HISTORY.into("where")
def site_cmd(
    *,
    suites: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[SUITE]...", help="The suites to show (default: every suite of the history)."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="DIR", help="Write the site there (default: RESULTS/site)."),
    ] = None,
    options: RegressOptions,
    where: HistoryPlace,
) -> None:
    """Write the run history as a static site: an overview of every suite (newest night, regress's verdict
    and exit code, open and untriaged alerts), a page per suite (alert summaries per night a change began, a
    small chart of every series), a page per series (its whole trend, change points, alerts, canaries;
    click a point for its run's report) and a table of every alert. Reads from disk with no network:
    open DIR/index.html."""
    from ycsb_runner.site.build import build_site

    index = build_site(where.results, suites or None, out, where.url, options)
    log(f"site written: {index}")


def register(app: typer.Typer) -> None:
    app.command("site")(site_cmd)
