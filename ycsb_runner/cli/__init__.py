"""The ``ycsb-runner`` command: a thin layer over the library, one module per command group.

``run`` (setup, suites, render, bench), ``server``, ``analyse`` (table, compare, report), ``parse``,
``reference``, ``audit`` and ``history`` (runs, regress, history rebuild). The options they share are in
``options``; the option groups several commands take whole (bench and findmax's target, regress's options,
the run filter, where the history is) in ``groups``; how bench and findmax show a run in ``running``.
What a command answers is the library's (``bench.check_bench``, ``bench.dry_run``,
``analyse.compare_service``, ``nightly.regress_service``): a command parses, calls and prints.
``commands`` builds the Typer app.

``main`` is the one way out of the command: every exit is a documented code with at most one line (an
exception no command expected is one ``internal error`` line and exit 70, never Python's exit 1, which
``regress`` uses for "regression"). Ctrl-C, SIGTERM and SIGHUP: ``main`` puts its own handlers in place
before it imports anything, and the command stops with one ``interrupted`` line and 128 + the signal's
number (130, 143, 129). Two ways a signal was lost (issue 52): Typer turns a KeyboardInterrupt into a
silent exit 130, before any handler of ours prints, so ``main`` reads the signal from what it saw; and a
KeyboardInterrupt raised while importlib runs one of its weak-reference callbacks (``_get_module_lock``'s)
is dropped ("Exception ignored in ..."), after which the command went on, into a read of stdin that never
returned: ``main``'s ``sys.unraisablehook`` sees it dropped and raises it again a moment later
(``SIGALRM``), outside the callback. (A third: the kernel may give the signal to another thread, numpy's
OpenBLAS workers, which ends no read blocked in the main thread: ``parse``'s read of a pipe wakes every
0.1 s, ``ycsb_runner.parse.files._read_stream``.)
"""

from __future__ import annotations

# The module body imports only the built-ins sys and _signal (loaded before any module of ours): the console
# script imports this module before main() runs, and each module it loads is a moment a Ctrl-C finds no
# handler of ours (a traceback) or importlib's callbacks (dropped).
import _signal
import sys

STOP_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)
RETRY_S = 0.05  # a KeyboardInterrupt a callback dropped is raised again after this long
EX_SOFTWARE = 70  # sysexits.h: an exception no command expected (a bug)
EXIT_BROKEN_PIPE = 128 + 13  # stdout closed before the output was written (`| head`), as SIGPIPE would


class _Stop:
    """The stop signal a callback dropped (to raise again) and what the handlers raise (``errors.Interrupted``
    once loaded); the signal received and whether main is on its way out are ``errors.Stop``'s."""

    dropped: int | None = None
    interrupt: type[KeyboardInterrupt] = KeyboardInterrupt


def __getattr__(name: str) -> object:
    if name == "app":  # ``from ycsb_runner.cli import app``: the Typer app, built on first use
        from ycsb_runner.cli.commands import app

        return app
    raise AttributeError(name)


def _say(label: str, text: str = "") -> None:
    """*label* (console markup) and *text* as written: a message may hold brackets ([OVERALL], [/path])."""
    import contextlib

    from rich.markup import escape

    from ycsb_runner.present.console import err_console
    from ycsb_runner.safe.text import terminal

    safe = "\n".join(terminal(line) for line in text.split("\n"))  # no control sequence from data
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        err_console.print(label + escape(safe), soft_wrap=True)


def _show_warning(message: Warning | str, category: type[Warning], *_args: object, **_kw: object) -> None:
    """A library's warning (pymongo: "Unknown option ...") as one ``warning:`` line: no source path, no
    code line, credentials masked."""
    from ycsb_runner.safe.secrets import mask_url

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


def _on_stop(signum: int, _frame: object) -> None:
    """SIGINT, SIGTERM, SIGHUP: an ``Interrupted`` (a KeyboardInterrupt remembering the signal); on the way
    out, the process ends by the signal at once (a second Ctrl-C while it exits)."""
    from ycsb_runner.errors import Stop  # loaded before the handlers were put in place

    if Stop.leaving:
        _signal.signal(signum, _signal.SIG_DFL)
        _signal.raise_signal(signum)
        return
    if Stop.signum is None:
        Stop.signum = signum
    raise _Stop.interrupt(signum)


def _again(_signum: int, _frame: object) -> None:
    """SIGALRM after a dropped KeyboardInterrupt: raise it again (dropped again: the hook re-arms)."""
    from ycsb_runner.errors import Stop

    signum, _Stop.dropped = _Stop.dropped, None
    if signum is not None and not Stop.leaving:
        raise _Stop.interrupt(signum)


def _dropped(unraisable: sys.UnraisableHookArgs, previous: object = sys.unraisablehook) -> None:
    """``sys.unraisablehook``: a KeyboardInterrupt raised inside a callback that cannot pass it on
    (importlib's module-lock ones) is raised again RETRY_S later; anything else as Python shows it."""
    from ycsb_runner.errors import Stop

    exc = unraisable.exc_value
    if not isinstance(exc, KeyboardInterrupt):
        previous(unraisable)  # type: ignore[operator]
    elif not Stop.leaving:
        _Stop.dropped = int(getattr(exc, "signum", _signal.SIGINT))
        _signal.signal(_signal.SIGALRM, _again)
        _signal.setitimer(_signal.ITIMER_REAL, RETRY_S)


def _catch_stop_signals() -> None:
    """Our handler for each stop signal the process does not ignore (``nohup``, a background job's SIGINT
    stay ignored), and the hook that sees a dropped KeyboardInterrupt; first thing, before any import. Not
    from another thread than the main one (a library caller's)."""
    from ycsb_runner.errors import Interrupted  # light: what the handlers raise, and their state

    _Stop.interrupt = Interrupted
    try:
        for sig in STOP_SIGNALS:
            if _signal.getsignal(sig) != _signal.SIG_IGN:
                _signal.signal(sig, _on_stop)
    except ValueError:  # not the main thread
        return
    sys.unraisablehook = _dropped


def _signal_in(exc: BaseException) -> int | None:
    """The signal behind *exc*: a KeyboardInterrupt itself, or one it was raised from or while handling
    (Typer's silent ``Exit(130)`` from a KeyboardInterrupt)."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, KeyboardInterrupt):
            return int(getattr(cur, "signum", _signal.SIGINT))
        cur = cur.__cause__ or cur.__context__
    return None


def _broken_pipe(exc: BaseException) -> bool:
    """Typer's exit 1 after a write to a closed stdout (EPIPE): exit 1 means "regression" to regress."""
    ctx = exc.__context__
    return isinstance(ctx, BrokenPipeError) or (isinstance(ctx, OSError) and ctx.errno == 32)


def _exit_code(exc: BaseException) -> int:
    """The exit code of the command that ended with *exc*, its one line printed."""
    from ycsb_runner.errors import RunInterrupted, Stop, UserError

    if isinstance(exc, RunInterrupted):  # bench's own line: what was kept
        _say("[bold red]interrupted[/bold red] by ", str(exc))
        return exc.exit_code
    signum = Stop.signum if Stop.signum is not None else _signal_in(exc)
    if signum is not None:
        import contextlib

        from ycsb_runner.errors import Interrupted, signal_name

        name = "" if signum == _signal.SIGINT else f" by {signal_name(Interrupted(signum))}"
        with contextlib.suppress(OSError):  # plain (no console to load): the line is out at once
            sys.stderr.write(f"interrupted{name}: stopped; finished work is kept\n")
            sys.stderr.flush()
        return 128 + signum
    if isinstance(exc, SystemExit):
        if exc.code == 1 and _broken_pipe(exc):
            return EXIT_BROKEN_PIPE
        return exc.code if isinstance(exc.code, int) else int(bool(exc.code))
    if isinstance(exc, UserError):
        _say("[bold red]error:[/bold red] ", str(exc))
        return exc.exit_code
    if isinstance(exc, OSError) and _output_failed(exc):
        _say("[bold red]error:[/bold red] ", _output_error(exc))
        return 2
    return _internal_error(exc)


def _internal_error(exc: BaseException) -> int:
    """An exception no command expected: one line (the traceback with YCSB_RUNNER_TRACEBACK=1), exit 70."""
    from ycsb_runner import config
    from ycsb_runner._version import __version__

    if config.current().traceback:
        import traceback

        traceback.print_exception(exc)
    said = " ".join(str(exc).split())
    what = (
        f"{type(exc).__name__}: {said[:200]}{'...' if len(said) > 200 else ''}"
        if said
        else type(exc).__name__
    )
    _say(
        "[bold red]internal error:[/bold red] ",
        f"{what} (a bug in ycsb-runner {__version__}: please report it with the command; "
        f"{config.TRACEBACK}=1 shows where)",
    )
    return EX_SOFTWARE


def main() -> None:
    """``ycsb-runner``: the command, every way out a documented exit code with at most one line."""
    try:
        _catch_stop_signals()
        import warnings

        warnings.showwarning = _show_warning
        from ycsb_runner.cli.commands import app

        app()
        code = 0
    except BaseException as exc:  # noqa: BLE001 - every way out: a code and at most one line
        _leave()
        code = _exit_code(exc)
    else:
        _leave()
        from ycsb_runner.errors import Stop

        if Stop.signum is not None:  # the command finished as the signal came: still a stop
            code = _exit_code(KeyboardInterrupt())
    sys.exit(code)


def _leave() -> None:
    """On the way out: no dropped KeyboardInterrupt raised again, a second signal ends the process."""
    from ycsb_runner.errors import Stop

    Stop.leaving = True
    _signal.setitimer(_signal.ITIMER_REAL, 0)
