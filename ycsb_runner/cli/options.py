"""What every command shares: option definitions, the one ``--format`` type, and how a table is printed."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.table import Table

from ycsb_runner.console import err_console, out_console


class Format(StrEnum):
    """Every command that prints a table takes ``--format``; ``markdown`` where a table is shown."""

    table = "table"
    csv = "csv"
    json = "json"
    markdown = "markdown"


UrlOpt = Annotated[
    str | None,
    typer.Option(
        "--mongodb-url",
        envvar="MONGODB_URL",
        show_envvar=True,
        metavar="URL",
        help="MongoDB connection URL. Prefer MONGODB_URL: an option is visible in the process list.",
    ),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a suite setting, e.g. --set threads=8 --set size=4C8G (repeatable).",
    ),
]
ScaleOpt = Annotated[
    float | None,
    typer.Option(
        "--scale", metavar="X", help="Multiply recordcount, operationcount and maxexecutiontime (e.g. 0.001)."
    ),
]
TemplatesOpt = Annotated[
    Path | None,
    typer.Option(
        "--templates",
        metavar="DIR",
        help="A folder of your own Jinja2 templates, tried before the built-in ones.",
    ),
]
ClientOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--client",
        metavar="HOST",
        help="A load generator: local, host, user@host:port or an ssh alias (repeatable; default: the "
        "suite's [clients] hosts, else this machine).",
    ),
]
SuiteArg = Annotated[str, typer.Argument(metavar="SUITE", help="A built-in suite name or a .toml file.")]
RunArg = Annotated[Path, typer.Argument(metavar="RUN_DIR", help="A result folder, results/<run-id>/.")]
FormatOpt = Annotated[
    Format,
    typer.Option("--format", "-f", metavar="FORMAT", help="table, csv, json or markdown."),
]
SaveOpt = Annotated[bool, typer.Option("--save", help="Also write the table as a CSV into the run folder.")]


def log(msg: str) -> None:
    """Progress and notes go to stderr; stdout carries only the command's result."""
    err_console.print(msg)


def emit(df: pd.DataFrame, fmt: Format, title: str, extra: dict | None = None) -> None:
    """Print *df* as a rich table, CSV, JSON (``{"title", "rows", ...extra}``) or Markdown."""
    if fmt is Format.csv:
        typer.echo(df.to_csv(index=False), nl=False)
    elif fmt is Format.json:
        records = json.loads(df.to_json(orient="records", force_ascii=False))
        typer.echo(
            json.dumps({"title": title, **(extra or {}), "rows": records}, indent=2, ensure_ascii=False)
        )
    elif fmt is Format.markdown:
        from ycsb_runner.analyse.report import markdown_table

        typer.echo(f"## {title}\n\n{markdown_table(df)}", nl=False)
    else:
        from ycsb_runner.analyse.report import display_frame

        table = Table(title=title)
        shown = display_frame(df)
        for col in shown.columns:
            table.add_column(str(col), overflow="fold")
        for row in shown.itertuples(index=False):
            table.add_row(*[str(v) for v in row])
        out_console.print(table)
