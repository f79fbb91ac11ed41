"""The ``ycsb-runner`` command: a thin layer over the library, one module per command group.

``run`` (setup, suites, render, bench), ``server``, ``analyse`` (table, compare, report), ``parse``,
``reference``, ``audit`` and ``history`` (runs, regress, history rebuild). The options they share are in
``options``; the option groups several commands take whole (bench and findmax's target, regress's options,
the run filter, where the history is) in ``groups``; how bench and findmax show a run in ``running``.
What a command answers is the library's (``bench.check_bench``, ``bench.dry_run``,
``analyse.regress_service``): a command parses, calls and prints. ``commands`` builds the Typer app.
``main`` imports it inside its own error handling, so that a Ctrl-C while the libraries load (pandas takes
about a second) is a one-line stop, not a traceback.
"""

from __future__ import annotations

# The module body imports only the built-in sys, so that a Ctrl-C as the command starts lands in main's own
# handling (a faster start-up moved the Ctrl-C test's 0.15 s from pandas' import to typing's, outside it).
import sys


def __getattr__(name: str) -> object:
    if name == "app":  # ``from ycsb_runner.cli import app``: the Typer app, built on first use
        from ycsb_runner.cli.commands import app

        return app
    raise AttributeError(name)


def _say(label: str, text: str = "") -> None:
    """*label* (console markup) and *text* as written: a message may hold brackets ([OVERALL], [/path])."""
    import contextlib

    from rich.markup import escape

    from ycsb_runner.console import err_console
    from ycsb_runner.textsafe import terminal

    safe = "\n".join(terminal(line) for line in text.split("\n"))  # no control sequence from data
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        err_console.print(label + escape(safe), soft_wrap=True)


def _show_warning(message: Warning | str, category: type[Warning], *_args: object, **_kw: object) -> None:
    """A library's warning (pymongo: "Unknown option ...") as one ``warning:`` line: no source path, no
    code line, credentials masked."""
    from ycsb_runner.secrets import mask_url

    text = " ".join(mask_url(str(message)).split())
    _say("[yellow]warning:[/yellow] ", text)


def _output_failed(err: OSError) -> bool:
    """True when *err* is the standard output failing (``> /dev/full``, a full disk): the files the tool
    writes go through ``store``, which names them in a UserError, so a bare full-disk error is the output."""
    import errno

    return err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO) and err.filename is None


def _output_error(err: OSError) -> str:
    """The one line for a failed standard output; what is still buffered is dropped (no second error when
    Python flushes it at exit)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return f"cannot write the output: {err.strerror or err}; free some space or send it elsewhere"


def main() -> None:
    try:
        import warnings

        warnings.showwarning = _show_warning
        from ycsb_runner.errors import RunInterrupted, UserError, interrupted_exit_code
    except KeyboardInterrupt:  # Ctrl-C while Python starts
        try:
            sys.stderr.write("interrupted: stopped before anything ran\n")
        except OSError:
            pass
        sys.exit(130)
    try:
        from ycsb_runner.cli.commands import app

        app()
    except RunInterrupted as err:
        _say("[bold red]interrupted[/bold red] by ", str(err))
        sys.exit(err.exit_code)
    except UserError as err:
        _say("[bold red]error:[/bold red] ", str(err))
        sys.exit(err.exit_code)
    except OSError as err:
        if not _output_failed(err):
            raise
        _say("[bold red]error:[/bold red] ", _output_error(err))
        sys.exit(2)
    except KeyboardInterrupt as exc:
        try:
            _say("[bold red]interrupted[/bold red]: stopped; finished work is kept")
        except KeyboardInterrupt:  # still loading the console's own modules
            pass
        sys.exit(interrupted_exit_code(exc))
