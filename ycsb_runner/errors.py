"""The one exception type the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix. ``str(err)`` is a single line that says what to do."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RunFailed(UserError):
    """A benchmark phase ran but its result cannot be trusted (the parser's verdict said failed)."""

    exit_code = 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: the run stops the clean way (YCSB and the server stopped, results kept)."""

    def __init__(self, signum: int = 2) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def signal_name(exc: BaseException) -> str:
    """SIGINT, SIGTERM or SIGHUP: the signal behind a KeyboardInterrupt (a bare one is Ctrl-C)."""
    import signal

    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def interrupted_exit_code(exc: BaseException) -> int:
    """The conventional exit status after a signal: 128 + its number (130 INT, 143 TERM, 129 HUP)."""
    import signal

    return 128 + int(getattr(exc, "signum", signal.SIGINT))
