"""What every command shares: option definitions, the one ``--format`` type, and how a table is printed."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer

from ycsb_runner import config
from ycsb_runner.present.console import err_console
from ycsb_runner.present.output import (  # noqa: F401 - the commands read them here
    FORMATS,
    Format,
    check_format,
    emit,
    format_names,
    renderer,
)


def option(kind: Any, *names: str, **declared: Any) -> Any:
    """An option's type, ``Annotated[kind, typer.Option(*names, **declared)]``, declared in one call."""
    return Annotated[kind, typer.Option(*names, **declared)]


def argument(kind: Any, **declared: Any) -> Any:
    """An argument's type, ``Annotated[kind, typer.Argument(**declared)]``."""
    return Annotated[kind, typer.Argument(**declared)]


UrlOpt = option(
    str | None,
    "--mongodb-url",
    envvar="MONGODB_URL",
    show_envvar=True,
    metavar="URL",
    help="MongoDB connection URL. Prefer MONGODB_URL: an option is visible in the process list.",
)
# --- shell completion (``ycsb-runner --install-completion``): suites, run ids, --set keys -------------------
# A path (with a "/") completes nothing here, so that the shell falls back to file names.


def complete_suite(incomplete: str) -> list[str]:
    """The built-in suite names starting with *incomplete*."""
    if "/" in incomplete:
        return []
    from ycsb_runner.prepare.suite import builtin_suites

    return [name for name in builtin_suites() if name.startswith(incomplete)]


def complete_run(incomplete: str) -> list[str]:
    """The run ids (folders with a manifest) under the results folder starting with *incomplete*, newest
    first."""
    if "/" in incomplete:
        return []
    from ycsb_runner.paths import results_dir
    from ycsb_runner.runs.model import MANIFEST

    try:
        runs = [
            p for p in results_dir().iterdir() if p.name.startswith(incomplete) and (p / MANIFEST).is_file()
        ]
    except OSError:
        return []
    return sorted((p.name for p in runs), reverse=True)


def complete_setting(incomplete: str) -> list[str]:
    """``KEY=`` for every ``--set`` key starting with *incomplete* (the value is yours to type)."""
    if "=" in incomplete:
        return []
    from ycsb_runner.prepare.suite import setting_names

    return [f"{key}=" for key in setting_names() if key.startswith(incomplete)]


SetOpt = option(
    list[str] | None,
    "--set",
    metavar="KEY=VALUE",
    help="Override a suite setting, e.g. --set threads=8 --set size=4C8G (repeatable).",
    autocompletion=complete_setting,
)
ScaleOpt = option(
    float | None,
    "--scale",
    metavar="X",
    help="Multiply recordcount, operationcount and maxexecutiontime (e.g. 0.001).",
)
TemplatesOpt = option(
    Path | None,
    "--templates",
    metavar="DIR",
    help="A folder of your own Jinja2 templates, tried before the built-in ones.",
)
ClientOpt = option(
    list[str] | None,
    "--client",
    metavar="HOST",
    help="A load generator: local, host, user@host:port or an ssh alias (repeatable; default: the "
    "suite's [clients] hosts, else this machine).",
)
SuiteArg = argument(
    str, metavar="SUITE", help="A built-in suite name or a .toml file.", autocompletion=complete_suite
)
RunArg = argument(
    Path,
    metavar="RUN",
    help="A result folder (results/<run-id>/) or a run id as `ycsb-runner runs` lists it.",
    autocompletion=complete_run,
)


def run_folder(run: Path | str) -> Path:
    """The result folder *run* names: a folder path, else a run id under the results folder
    (``$YCSB_RUNNER_RESULTS`` or results/), else a run id of the history (its recorded folder)."""

    from ycsb_runner.errors import UserError
    from ycsb_runner.paths import results_dir

    path = Path(run)
    if path.is_dir():
        return path
    base = results_dir()
    name = str(run)
    if "/" not in name and (base / name).is_dir():
        return base / name
    try:
        from ycsb_runner.runs.history import open_history

        runs = open_history(base, config.current().history()).runs()
        hit = runs[runs["run_id"] == name]
        folder = Path(str(hit["folder"].iloc[0])) if not hit.empty and hit["folder"].iloc[0] else None
    except UserError:
        folder = None
    if folder is not None and folder.is_dir():
        return folder
    raise UserError(
        f"{name}: no such result folder or run id (looked in {base} and its history); "
        "`ycsb-runner runs` lists the run ids"
    )


# a str checked against the registry when the command runs (a format registered after import is accepted)
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help=f"{format_names()}.",
        callback=check_format,
        autocompletion=lambda: list(FORMATS),
    ),
]
WideOpt = Annotated[
    bool, typer.Option("--wide", help="Show every column (one block per row when they do not fit).")
]
SaveOpt = Annotated[bool, typer.Option("--save", help="Also write the table as a CSV into the run folder.")]


_OPTION_AND_VALUE = re.compile(r"(?<!\S)(--[\w.-]+) (?=[^\s-])")
_EXIT_CODE = re.compile(r"(\S) (exit) (\d+)$", re.MULTILINE)
_GLUE = "\x00"


def wrap_message(msg: str, width: int) -> str:
    """*msg* folded at spaces to *width*, never between an option and its value (``--set threads=8``),
    inside a word, or inside a closing line's ``; exit 2`` (a reader and a script look for it on the last
    line); the lines after the first are indented by two spaces."""
    glued = _OPTION_AND_VALUE.sub(lambda m: m.group(1) + _GLUE, msg)
    glued = _EXIT_CODE.sub(lambda m: m.group(1) + _GLUE + m.group(2) + _GLUE + m.group(3), glued)
    lines = [
        textwrap.fill(
            line,
            width=max(20, width),
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        for line in glued.splitlines() or [""]
    ]
    return "\n".join(lines).replace(_GLUE, " ")


def log(msg: str) -> None:
    """Progress and notes go to stderr; stdout carries only the command's result (as written: a message
    may hold brackets, which the console would otherwise read as markup; control characters from data are
    shown escaped, ``safe.text.terminal``). A message is folded to the terminal's width, or to COLUMNS when
    it is set; piped without COLUMNS (cron, CI, ``2>&1 | tail -1``) each line stays whole: a script that
    keeps a closing line's last line gets all of it."""
    from rich.markup import escape

    from ycsb_runner.safe.text import terminal

    safe = "\n".join(terminal(line) for line in msg.split("\n"))
    folded = err_console.is_terminal or bool(os.environ.get("COLUMNS"))
    err_console.print(escape(wrap_message(safe, err_console.width) if folded else safe), soft_wrap=True)


HistoryUrlOpt = option(
    str | None,
    "--history-url",
    envvar=config.HISTORY_URL,
    show_envvar=True,
    metavar="URL",
    help="The run history: mongodb://HOST/DB (a database of its own, not the one under test) or an "
    "SQLite file (default: RESULTS/history.sqlite).",
)
ResultsOpt = option(
    Path | None, "--results", metavar="DIR", help="Where result folders go (default: results/)."
)
CanariesOpt = option(
    bool,
    help="Also measure what the database cannot change (the load generator's BasicDB capacity, the round "
    "trip to the server, this host's CPU steal and other processes' CPU), for regress.",
)
TagOpt = option(
    list[str] | None, "--tag", metavar="KEY=VALUE", help="A tag, e.g. --tag server=7.0.12 (repeatable)."
)
SinceOpt = option(str | None, "--since", metavar="DATE", help="Runs started on or after DATE (2026-12-01).")
UntilOpt = option(
    str | None, "--until", metavar="DATE", help="Runs started on or before DATE (or an ISO time)."
)
StatusOpt = option(
    str | None,
    "--status",
    metavar="STATUS",
    help="Only runs with this status: completed, failed, interrupted.",
)
#: ``runs --verdict``: the old name of ``--status`` (before result format 4), hidden and kept for one release
VerdictAliasOpt = option(
    str | None, "--verdict", metavar="STATUS", hidden=True, help="The old name of --status (deprecated)."
)
